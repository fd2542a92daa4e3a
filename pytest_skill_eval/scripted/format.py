"""The scripted model's script format: frozen dataclasses, validation and loading.

A script is a JSON file (``"schema": "skill-eval-script/1"``) that says, turn by turn,
what the stand-in model answers: text, tool calls or a transport fault, optionally chosen
by conditions on what pi sent (system prompt, listed skills, messages, tool results).
The format is documented for users in ``docs/scripted-model.md``; its structure is the
JSON Schema ``schemas/script.schema.json``, checked by the same translation that checks
definitions, so a script problem reads like a definition problem.

Everything here is pure except :func:`load_script`.
"""

from __future__ import annotations

import json
import os
import re
import stat
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, TypeAlias, get_args

from pytest_skill_eval import jsonbounds, jsonpointer, schemas
from pytest_skill_eval.errors import JSONBoundsError, Problem, ScriptError
from pytest_skill_eval.scripted.pacing import Latency

SCHEMA = "skill-eval-script/1"
"""The only accepted value of a script's ``schema`` key."""

Fault = Literal["http-500", "stall", "malformed", "disconnect", "no-finish-reason", "rate-limit", "overloaded"]
FAULTS: tuple[Fault, ...] = get_args(Fault)


# --------------------------------------------------------------------------- conditions


@dataclass(frozen=True, slots=True)
class SystemPromptContains:
    """The system prompt contains ``text``."""

    text: str


@dataclass(frozen=True, slots=True)
class SkillDescriptionContains:
    """Some skill in ``<available_skills>`` has a description containing ``text``."""

    text: str


@dataclass(frozen=True, slots=True)
class SkillListed:
    """A skill named ``name`` is listed in ``<available_skills>``."""

    name: str


@dataclass(frozen=True, slots=True)
class UserMessageContains:
    """The current turn's user message contains ``text``."""

    text: str


@dataclass(frozen=True, slots=True)
class ConversationContains:
    """Some user or tool message so far contains ``text``."""

    text: str


@dataclass(frozen=True, slots=True)
class LastToolResultContains:
    """Some tool result answering the latest assistant message contains ``text``."""

    text: str


@dataclass(frozen=True, slots=True)
class AllOf:
    """Every condition holds."""

    conditions: tuple[Condition, ...]


@dataclass(frozen=True, slots=True)
class AnyOf:
    """At least one condition holds."""

    conditions: tuple[Condition, ...]


@dataclass(frozen=True, slots=True)
class Not:
    """The condition does not hold."""

    condition: Condition


Condition: TypeAlias = (
    SystemPromptContains
    | SkillDescriptionContains
    | SkillListed
    | UserMessageContains
    | ConversationContains
    | LastToolResultContains
    | AllOf
    | AnyOf
    | Not
)


# ----------------------------------------------------------------------------- script


@dataclass(frozen=True, slots=True)
class ToolCallTemplate:
    """A tool call as written in the script; ``arguments`` is JSON object text."""

    name: str
    arguments: str


@dataclass(frozen=True, slots=True)
class ExtraUsage:
    """Token counts a step adds to the deterministic usage: cache reads and writes, reasoning.

    Every wire reports them in its own fields so that pi shows ``cacheRead``, ``cacheWrite``
    and ``reasoning`` with these values (``reasoning`` is a part of ``output``).
    """

    cache_read: int = 0
    cache_write: int = 0
    reasoning: int = 0


@dataclass(frozen=True, slots=True)
class MessageStep:
    """One assistant message: text, tool calls (parallel when several), or both."""

    text: str | None
    tool_calls: tuple[ToolCallTemplate, ...]
    pointer: str
    usage: ExtraUsage = ExtraUsage()
    #: seconds the server waits before the reply's first byte (a slow first token); None: not set here
    first_token_delay: float | None = None
    #: output tokens per second the reply is streamed at; None: not set here
    tokens_per_second: float | None = None
    #: ``"usage": false``: the reply's stream carries no usage, as from a provider that sends none
    reports_usage: bool = True


@dataclass(frozen=True, slots=True)
class FaultStep:
    """One model request answered with a transport fault instead of a message."""

    fault: Fault
    pointer: str


Step: TypeAlias = MessageStep | FaultStep


@dataclass(frozen=True, slots=True)
class Choice:
    """One weighted alternative of a rule: its steps, chosen with probability weight / total."""

    weight: float
    steps: tuple[Step, ...]
    pointer: str


@dataclass(frozen=True, slots=True)
class ScriptRule:
    """Steps used for a turn when ``when`` holds (first matching rule wins).

    A rule has either ``steps`` or weighted ``choices`` (``choose`` in the script); which
    alternative answers is drawn once per turn by a generator seeded with the run's seed
    and the arm (group, variant, trial) the request comes from, so a seed reproduces it.
    """

    when: Condition
    steps: tuple[Step, ...]
    pointer: str
    choices: tuple[Choice, ...] = ()


@dataclass(frozen=True, slots=True)
class ScriptTurn:
    """How the stand-in answers one user message: rules, then the default steps."""

    rules: tuple[ScriptRule, ...]
    steps: tuple[Step, ...]
    pointer: str


@dataclass(frozen=True, slots=True)
class Script:
    """A validated script; ``source`` names the file it came from."""

    source: str
    description: str
    turns: tuple[ScriptTurn, ...]
    #: the script's default latency (top-level ``latency``), under each step's own settings
    latency: Latency = Latency()
    #: US dollars per million tokens (``input``, ``output``, ``cacheRead``, ``cacheWrite``) that
    #: the model's ``models.json`` entry gives pi; none: rates 0, so pi's cost is unavailable
    pricing: Mapping[str, float] | None = None



# ------------------------------------------------------------------------ placeholders

PLACEHOLDER = re.compile(r"\{\{(.*?)\}\}", re.DOTALL)
_ATTRIBUTES = ("location", "dir", "name")
PLACEHOLDER_FORMS = (
    "{{cwd}}, {{skill:<name>.location|dir|name}}, "
    "{{skill_matching:<text>.location|dir|name}} or {{delivered.location|dir|name}}"
)


@dataclass(frozen=True, slots=True)
class Placeholder:
    """A parsed ``{{…}}``: what it names (``key`` for skills) and which attribute."""

    kind: Literal["cwd", "skill", "skill_matching", "delivered"]
    key: str
    attribute: str


def parse_placeholder(expr: str) -> Placeholder | None:
    """The placeholder *expr* (the text between the braces) names, or ``None``."""
    if expr == "cwd":
        return Placeholder("cwd", "", "")
    if expr.startswith("delivered."):
        attribute = expr.removeprefix("delivered.")
        return Placeholder("delivered", "", attribute) if attribute in _ATTRIBUTES else None
    for kind in ("skill", "skill_matching"):
        prefix = kind + ":"
        if expr.startswith(prefix):
            key, _, attribute = expr.removeprefix(prefix).rpartition(".")
            if key and attribute in _ATTRIBUTES:
                return Placeholder(kind, key, attribute)
    return None


# -------------------------------------------------------------------------- validation

_TEXT_CONDITIONS: dict[str, Callable[[str], Condition]] = {
    "system_prompt_contains": SystemPromptContains,
    "skill_description_contains": SkillDescriptionContains,
    "skill_listed": SkillListed,
    "user_message_contains": UserMessageContains,
    "conversation_contains": ConversationContains,
    "last_tool_result_contains": LastToolResultContains,
}


def _strings(value: Any, pointer: str) -> Iterator[tuple[str, str]]:
    if isinstance(value, str):
        yield pointer, value
    elif isinstance(value, list):
        for i, item in enumerate(value):
            yield from _strings(item, f"{pointer}/{i}")
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _strings(item, jsonpointer.child(pointer, key))


def _placeholder_problems(data: Any) -> Iterator[Problem]:
    """Unknown ``{{…}}`` in step texts and tool-call arguments (wherever those are well typed)."""
    turns = data.get("turns") if isinstance(data, dict) else None
    for t, turn in enumerate(turns if isinstance(turns, list) else ()):
        if not isinstance(turn, dict):
            continue
        groups = [(f"/turns/{t}/steps", turn.get("steps"))]
        rules = turn.get("rules")
        for r, rule in enumerate(rules if isinstance(rules, list) else ()):
            if isinstance(rule, dict):
                groups.append((f"/turns/{t}/rules/{r}/steps", rule.get("steps")))
                choices = rule.get("choose")
                for c, choice in enumerate(choices if isinstance(choices, list) else ()):
                    if isinstance(choice, dict):
                        groups.append((f"/turns/{t}/rules/{r}/choose/{c}/steps", choice.get("steps")))
        for pointer, steps in groups:
            for s, step in enumerate(steps if isinstance(steps, list) else ()):
                if not isinstance(step, dict):
                    continue
                where = f"{pointer}/{s}"
                values: list[tuple[str, Any]] = [(f"{where}/text", step.get("text"))]
                calls = step.get("tool_calls")
                for c, call in enumerate(calls if isinstance(calls, list) else ()):
                    if isinstance(call, dict) and isinstance(call.get("arguments"), dict):
                        values.append((f"{where}/tool_calls/{c}/arguments", call["arguments"]))
                for base, value in values:
                    for at, text in _strings(value, base):
                        for match in PLACEHOLDER.finditer(text):
                            if parse_placeholder(match.group(1)) is None:
                                yield Problem(at, f"expected placeholders {PLACEHOLDER_FORMS}, found {match.group(0)}")


def _condition(raw: dict[str, Any]) -> Condition:
    ((key, argument),) = raw.items()
    if key in _TEXT_CONDITIONS:
        return _TEXT_CONDITIONS[key](argument)
    if key == "all":
        return AllOf(tuple(_condition(item) for item in argument))
    if key == "any":
        return AnyOf(tuple(_condition(item) for item in argument))
    return Not(_condition(argument))


def _step(raw: dict[str, Any], pointer: str) -> Step:
    if "fault" in raw:
        return FaultStep(raw["fault"], pointer)
    calls = tuple(
        ToolCallTemplate(call["name"], json.dumps(call.get("arguments", {}), ensure_ascii=False))
        for call in raw.get("tool_calls", ())
    )
    usage = raw.get("usage", {})
    reports = usage is not False
    usage = usage if isinstance(usage, dict) else {}
    extra = ExtraUsage(usage.get("cache_read", 0), usage.get("cache_write", 0), usage.get("reasoning", 0))
    return MessageStep(raw.get("text"), calls, pointer, extra, _seconds(raw.get("first_token_delay")),
                       _seconds(raw.get("tokens_per_second")), reports)


def _seconds(value: Any) -> float | None:
    return None if value is None else float(value)


def _steps(raw: list[dict[str, Any]], pointer: str) -> tuple[Step, ...]:
    return tuple(_step(step, f"{pointer}/{i}") for i, step in enumerate(raw))


def _rule(raw: dict[str, Any], pointer: str) -> ScriptRule:
    choices = tuple(
        Choice(float(choice["weight"]), _steps(choice["steps"], f"{pointer}/choose/{c}/steps"), f"{pointer}/choose/{c}")
        for c, choice in enumerate(raw.get("choose", ()))
    )
    return ScriptRule(_condition(raw["when"]), _steps(raw.get("steps", []), f"{pointer}/steps"), pointer, choices)


def _turn(raw: dict[str, Any], pointer: str) -> ScriptTurn:
    rules = tuple(_rule(rule, f"{pointer}/rules/{r}") for r, rule in enumerate(raw.get("rules", ())))
    return ScriptTurn(rules, _steps(raw.get("steps", []), f"{pointer}/steps"), pointer)


def parse_script(data: Any, source: str) -> Script:
    """Validate decoded script JSON; raise one :class:`ScriptError` listing every problem.

    ``source`` names the file in messages, which read ``<source>: <pointer>: expected
    …, found …``, one line per problem, in pointer order.
    """
    problems = [*schemas.problems("script", data), *_placeholder_problems(data)]
    if problems:
        ordered = sorted(dict.fromkeys(problems), key=Problem.sort_key)
        raise ScriptError("\n".join(p.render(source) for p in ordered))
    turns = tuple(_turn(turn, f"/turns/{t}") for t, turn in enumerate(data["turns"]))
    latency = data.get("latency", {})
    pricing = data.get("pricing")
    rates = ({key: float(pricing.get(key, 0)) for key in ("input", "output", "cacheRead", "cacheWrite")}
             if pricing is not None else None)
    return Script(source, data.get("description", ""), turns,
                  Latency(_seconds(latency.get("first_token_delay")), _seconds(latency.get("tokens_per_second"))),
                  rates)


def load_script(path: Path) -> Script:
    """Read, decode and validate a script file (the only I/O in this module)."""
    source = str(path)
    try:
        info = os.stat(path)
        if not stat.S_ISREG(info.st_mode):  # a FIFO or device is never opened: it could block forever
            raise OSError(f"not a regular file (mode {stat.filemode(info.st_mode)})")
        jsonbounds.check_size(info.st_size)
        text = Path(path).read_text(encoding="utf-8")
    except JSONBoundsError as error:
        raise ScriptError(f"{source}: /: expected a JSON document this reader can take, found {error.reason}") from None
    except (OSError, UnicodeDecodeError) as error:
        reason = error.strerror if isinstance(error, OSError) and error.strerror else str(error)
        raise ScriptError(
            f"{source}: /: expected a readable UTF-8 script file, found {reason}"
        ) from error
    try:
        data = jsonbounds.loads(text)
    except JSONBoundsError as error:
        raise ScriptError(f"{source}: {error.pointer or '/'}: expected JSON this reader can take, found {error.reason}") from None
    except json.JSONDecodeError as error:
        raise ScriptError(
            f"{source}: /: expected a JSON document, found invalid JSON at line "
            f"{error.lineno} column {error.colno}: {error.msg}"
        ) from error
    return parse_script(data, source)
