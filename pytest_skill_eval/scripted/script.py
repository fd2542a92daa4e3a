"""Scripts for the scripted stand-in model: data format, validation and reply planning.

A script is a JSON file (``"schema": "skill-eval-script/1"``) that says, turn by turn,
what the stand-in model answers: text, tool calls or a transport fault, optionally chosen
by conditions on what pi sent (system prompt, listed skills, messages, tool results).
The format is documented for users in ``docs/scripted-model.md``.

Everything here is pure except :func:`load_script`: :func:`parse_script` turns decoded
JSON into frozen dataclasses (or raises one :class:`ScriptError` listing every problem),
:func:`read_conversation` extracts what the conditions and placeholders need from an
OpenAI chat-completions request body, and :func:`plan_reply` decides the reply.
"""

from __future__ import annotations

import json
import posixpath
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Literal, TypeAlias, get_args

from ..errors import Problem, ScriptError

__all__ = [
    "FAULTS",
    "SCHEMA",
    "STAND_IN_TAG",
    "AllOf",
    "AnyOf",
    "Condition",
    "Conversation",
    "ConversationContains",
    "DeliveredSkill",
    "Fault",
    "FaultStep",
    "LastToolResultContains",
    "ListedSkill",
    "MessageStep",
    "Not",
    "Outcome",
    "PlannedToolCall",
    "Reply",
    "Rule",
    "Script",
    "SkillDescriptionContains",
    "SkillListed",
    "Step",
    "SystemPromptContains",
    "ToolCallTemplate",
    "Turn",
    "Usage",
    "UserMessageContains",
    "holds",
    "load_script",
    "parse_script",
    "plan_reply",
    "read_conversation",
]

SCHEMA = "skill-eval-script/1"
"""The only accepted value of a script's ``schema`` key."""

STAND_IN_TAG = "[scripted stand-in]"
"""Prefix of every text the server makes up itself, so it is never mistaken for a model's."""

Fault = Literal["http-500", "stall", "malformed", "disconnect", "no-finish-reason"]
FAULTS: tuple[Fault, ...] = get_args(Fault)

Outcome = Literal["scripted", "fault", "exhausted", "unresolved"]


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
class MessageStep:
    """One assistant message: text, tool calls (parallel when several), or both."""

    text: str | None
    tool_calls: tuple[ToolCallTemplate, ...]
    pointer: str


@dataclass(frozen=True, slots=True)
class FaultStep:
    """One model request answered with a transport fault instead of a message."""

    fault: Fault
    pointer: str


Step: TypeAlias = MessageStep | FaultStep


@dataclass(frozen=True, slots=True)
class Rule:
    """Steps used for a turn when ``when`` holds (first matching rule wins)."""

    when: Condition
    steps: tuple[Step, ...]
    pointer: str


@dataclass(frozen=True, slots=True)
class Turn:
    """How the stand-in answers one user message: rules, then the default steps."""

    rules: tuple[Rule, ...]
    steps: tuple[Step, ...]
    pointer: str


@dataclass(frozen=True, slots=True)
class Script:
    """A validated script; ``source`` names the file it came from."""

    source: str
    description: str
    turns: tuple[Turn, ...]


# ----------------------------------------------------------------------- conversation


@dataclass(frozen=True, slots=True)
class ListedSkill:
    """A skill as pi lists it in the system prompt (values XML-unescaped)."""

    name: str
    description: str
    location: str

    @property
    def dir(self) -> str:
        return posixpath.dirname(self.location)


@dataclass(frozen=True, slots=True)
class DeliveredSkill:
    """A ``<skill name=… location=…>`` block pi expanded ``/skill:<name>`` into."""

    name: str
    location: str

    @property
    def dir(self) -> str:
        return posixpath.dirname(self.location)


@dataclass(frozen=True, slots=True)
class Conversation:
    """What conditions and placeholders can see of one chat-completions request.

    ``turn`` counts user messages (1 for the first); ``step`` counts assistant messages
    after the last user message (0 for the first model request of a turn).
    """

    system_prompt: str
    user_messages: tuple[str, ...]
    tool_results: tuple[str, ...]
    latest_tool_results: tuple[str, ...]
    skills: tuple[ListedSkill, ...]
    delivered: tuple[DeliveredSkill, ...]
    cwd: str | None
    turn: int
    step: int

    @property
    def current_user_message(self) -> str:
        return self.user_messages[-1] if self.user_messages else ""


# ------------------------------------------------------------------------------ reply


@dataclass(frozen=True, slots=True)
class PlannedToolCall:
    """A tool call ready for the wire; ``arguments`` is JSON object text."""

    id: str
    name: str
    arguments: str


@dataclass(frozen=True, slots=True)
class Usage:
    """Deterministic token counts reported in the stream's final usage chunk."""

    prompt_tokens: int
    completion_tokens: int

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


@dataclass(frozen=True, slots=True)
class Reply:
    """What the stand-in answers to one request, and why.

    ``outcome`` is ``scripted`` (a message step), ``fault`` (a fault step),
    ``exhausted`` (no step left; a plain text stop) or ``unresolved`` (a placeholder
    could not be resolved; a plain text stop that says which). ``source`` is the JSON
    pointer of the step used, ``rule`` the index of the matched rule (``None`` when the
    turn's default steps applied or no turn applied).
    """

    turn: int
    step: int
    outcome: Outcome
    source: str | None
    rule: int | None
    text: str
    tool_calls: tuple[PlannedToolCall, ...]
    fault: Fault | None
    usage: Usage

    @property
    def finish_reason(self) -> Literal["tool_calls", "stop"]:
        return "tool_calls" if self.tool_calls else "stop"


# ------------------------------------------------------------------------ placeholders

_PLACEHOLDER = re.compile(r"\{\{(.*?)\}\}", re.DOTALL)
_ATTRIBUTES = ("location", "dir", "name")
_PLACEHOLDER_FORMS = (
    "{{cwd}}, {{skill:<name>.location|dir|name}}, "
    "{{skill_matching:<text>.location|dir|name}} or {{delivered.location|dir|name}}"
)


@dataclass(frozen=True, slots=True)
class _Placeholder:
    kind: Literal["cwd", "skill", "skill_matching", "delivered"]
    key: str
    attribute: str


def _parse_placeholder(expr: str) -> _Placeholder | None:
    if expr == "cwd":
        return _Placeholder("cwd", "", "")
    if expr.startswith("delivered."):
        attribute = expr.removeprefix("delivered.")
        return _Placeholder("delivered", "", attribute) if attribute in _ATTRIBUTES else None
    for kind in ("skill", "skill_matching"):
        prefix = kind + ":"
        if expr.startswith(prefix):
            key, _, attribute = expr.removeprefix(prefix).rpartition(".")
            if key and attribute in _ATTRIBUTES:
                return _Placeholder(kind, key, attribute)  # type: ignore[arg-type]
    return None


class _Unresolved(Exception):
    def __init__(self, expr: str, pointer: str, reason: str) -> None:
        super().__init__(f"cannot resolve {{{{{expr}}}}} at {pointer}: {reason}")


def _resolve(placeholder: _Placeholder, conversation: Conversation) -> str | None:
    """The placeholder's value, or None with the reason left to the caller."""
    if placeholder.kind == "cwd":
        return conversation.cwd
    if placeholder.kind == "delivered":
        found: ListedSkill | DeliveredSkill | None = (
            conversation.delivered[-1] if conversation.delivered else None
        )
    elif placeholder.kind == "skill":
        found = next((s for s in conversation.skills if s.name == placeholder.key), None)
    else:
        found = next(
            (s for s in conversation.skills if placeholder.key in s.description), None
        )
    if found is None:
        return None
    return str(getattr(found, placeholder.attribute))


def _unresolved_reason(placeholder: _Placeholder) -> str:
    if placeholder.kind == "cwd":
        return "the system prompt has no <cwd> section"
    if placeholder.kind == "delivered":
        return (
            "no user message so far holds a <skill name=… location=…> block "
            "(pi writes one when the prompt starts with /skill:<name>)"
        )
    if placeholder.kind == "skill":
        return f"no skill named {json.dumps(placeholder.key)} is listed in <available_skills>"
    return (
        f"no skill in <available_skills> has a description containing "
        f"{json.dumps(placeholder.key)}"
    )


def _substitute(text: str, pointer: str, conversation: Conversation) -> str:
    def replace(match: re.Match[str]) -> str:
        expr = match.group(1)
        placeholder = _parse_placeholder(expr)
        if placeholder is None:  # parse_script rejects these; kept total for safety
            raise _Unresolved(expr, pointer, f"expected {_PLACEHOLDER_FORMS}")
        value = _resolve(placeholder, conversation)
        if value is None:
            raise _Unresolved(expr, pointer, _unresolved_reason(placeholder))
        return value

    return _PLACEHOLDER.sub(replace, text)


def _substitute_json(value: Any, pointer: str, conversation: Conversation) -> Any:
    if isinstance(value, str):
        return _substitute(value, pointer, conversation)
    if isinstance(value, list):
        return [
            _substitute_json(item, f"{pointer}/{i}", conversation)
            for i, item in enumerate(value)
        ]
    if isinstance(value, dict):
        return {
            key: _substitute_json(item, f"{pointer}/{_escape(key)}", conversation)
            for key, item in value.items()
        }
    return value


# --------------------------------------------------------------------------- planning


def plan_reply(script: Script, request_body: Mapping[str, Any]) -> Reply:
    """Decide the stand-in's reply to one chat-completions request.

    Never raises for odd request bodies: whatever cannot be answered from the script
    becomes a text reply tagged with :data:`STAND_IN_TAG` that says why.
    """
    conversation = read_conversation(request_body)
    turn, step = conversation.turn, conversation.step
    # Deterministic, and proportional to what pi sent: enough for usage plumbing tests.
    prompt_tokens = len(json.dumps(request_body, separators=(",", ":"))) // 4
    base = Reply(
        turn=turn, step=step, outcome="exhausted", source=None, rule=None, text="",
        tool_calls=(), fault=None, usage=Usage(prompt_tokens, 0),
    )

    def text_stop(text: str, **changes: Any) -> Reply:
        return replace(base, text=text, usage=Usage(prompt_tokens, len(text) // 4), **changes)

    if turn == 0:
        return text_stop(f"{STAND_IN_TAG} The request has no user message to answer.")
    if turn > len(script.turns):
        return text_stop(
            f"{STAND_IN_TAG} Script exhausted: {script.source} has {len(script.turns)} "
            f"turn(s) and this is user message {turn}."
        )
    rule, steps, steps_pointer = _select_steps(script.turns[turn - 1], conversation)
    if step >= len(steps):
        return text_stop(
            f"{STAND_IN_TAG} Script exhausted: {script.source} has no step "
            f"{steps_pointer}/{step} ({len(steps)} step(s) there).",
            rule=rule,
        )
    chosen = steps[step]
    if isinstance(chosen, FaultStep):
        return replace(base, outcome="fault", source=chosen.pointer, rule=rule, fault=chosen.fault)
    try:
        text = _substitute(chosen.text or "", f"{chosen.pointer}/text", conversation)
        calls = tuple(
            PlannedToolCall(
                id=f"call_{turn}_{step}_{index}",
                name=call.name,
                arguments=json.dumps(
                    _substitute_json(
                        json.loads(call.arguments),
                        f"{chosen.pointer}/tool_calls/{index}/arguments",
                        conversation,
                    ),
                    ensure_ascii=False,
                ),
            )
            for index, call in enumerate(chosen.tool_calls)
        )
    except _Unresolved as problem:
        return text_stop(
            f"{STAND_IN_TAG} Script {script.source}: {problem}.",
            outcome="unresolved", source=chosen.pointer, rule=rule,
        )
    completion = text + "".join(call.name + call.arguments for call in calls)
    return replace(
        base, outcome="scripted", source=chosen.pointer, rule=rule, text=text,
        tool_calls=calls, usage=Usage(prompt_tokens, len(completion) // 4),
    )


def _select_steps(
    turn: Turn, conversation: Conversation
) -> tuple[int | None, tuple[Step, ...], str]:
    for index, rule in enumerate(turn.rules):
        if holds(rule.when, conversation):
            return index, rule.steps, f"{rule.pointer}/steps"
    return None, turn.steps, f"{turn.pointer}/steps"


def holds(condition: Condition, conversation: Conversation) -> bool:
    """Whether ``condition`` holds for ``conversation`` (substring tests are case-sensitive)."""
    match condition:
        case SystemPromptContains(text):
            return text in conversation.system_prompt
        case SkillDescriptionContains(text):
            return any(text in skill.description for skill in conversation.skills)
        case SkillListed(name):
            return any(skill.name == name for skill in conversation.skills)
        case UserMessageContains(text):
            return text in conversation.current_user_message
        case ConversationContains(text):
            return any(text in m for m in conversation.user_messages + conversation.tool_results)
        case LastToolResultContains(text):
            return any(text in result for result in conversation.latest_tool_results)
        case AllOf(conditions):
            return all(holds(c, conversation) for c in conditions)
        case AnyOf(conditions):
            return any(holds(c, conversation) for c in conditions)
        case Not(inner):
            return not holds(inner, conversation)
    raise TypeError(f"not a condition: {condition!r}")


# ----------------------------------------------------------------------- request view

_SKILL_ENTRY = re.compile(
    r"<skill>\s*<name>(.*?)</name>\s*<description>(.*?)</description>\s*"
    r"<location>(.*?)</location>\s*</skill>",
    re.DOTALL,
)
_AVAILABLE_SKILLS = re.compile(r"<available_skills>(.*?)</available_skills>", re.DOTALL)
# pi renders the section as "<cwd>\n<path>\n</cwd>" without escaping; custom sections may
# follow it, so the last single-line match is the one pi wrote.
_CWD = re.compile(r"^<cwd>\n([^\n]*)\n</cwd>$", re.MULTILINE)
# pi does not escape the attributes of the expanded block; the location runs to '">' at
# the end of the line.
_DELIVERED = re.compile(r'^<skill name="([^"\n]*)" location="([^\n]*)">$', re.MULTILINE)
_XML_ENTITIES = {"&amp;": "&", "&lt;": "<", "&gt;": ">", "&quot;": '"', "&apos;": "'"}
_XML_ENTITY = re.compile("|".join(_XML_ENTITIES))


def _unescape_xml(text: str) -> str:
    # Exactly the five entities pi's escapeXml produces, in one pass (so "&amp;lt;" → "&lt;").
    return _XML_ENTITY.sub(lambda m: _XML_ENTITIES[m.group(0)], text)


def _content_text(content: Any) -> str:
    """The text of an OpenAI message ``content`` (a string, null, or a list of parts)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            part["text"]
            for part in content
            if isinstance(part, dict) and isinstance(part.get("text"), str)
        )
    return ""


def read_conversation(request_body: Mapping[str, Any]) -> Conversation:
    """Extract prompt, messages, listed and delivered skills, cwd, turn and step."""
    raw_messages = request_body.get("messages")
    if not isinstance(raw_messages, list):
        raw_messages = []
    messages = [m for m in raw_messages if isinstance(m, dict)]
    system_parts: list[str] = []
    user_messages: list[str] = []
    tool_results: list[str] = []
    latest_tool_results: list[str] = []
    step = 0
    for message in messages:
        role = message.get("role")
        text = _content_text(message.get("content"))
        if role in ("system", "developer"):
            system_parts.append(text)
        elif role == "user":
            user_messages.append(text)
            step = 0
            latest_tool_results = []
        elif role == "assistant":
            step += 1
            latest_tool_results = []
        elif role == "tool":
            tool_results.append(text)
            latest_tool_results.append(text)
    system_prompt = "\n\n".join(system_parts)
    skills: list[ListedSkill] = []
    for block in _AVAILABLE_SKILLS.findall(system_prompt):
        skills.extend(
            ListedSkill(*(_unescape_xml(value) for value in entry))
            for entry in _SKILL_ENTRY.findall(block)
        )
    cwd_matches = _CWD.findall(system_prompt)
    delivered = tuple(
        DeliveredSkill(name, location)
        for message in user_messages
        for name, location in _DELIVERED.findall(message)
    )
    return Conversation(
        system_prompt=system_prompt,
        user_messages=tuple(user_messages),
        tool_results=tuple(tool_results),
        latest_tool_results=tuple(latest_tool_results),
        skills=tuple(skills),
        delivered=delivered,
        cwd=cwd_matches[-1].replace("\\", "/") if cwd_matches else None,
        turn=len(user_messages),
        step=step,
    )


# ------------------------------------------------------------------------- validation

_CONDITION_KEYS = (
    "system_prompt_contains",
    "skill_description_contains",
    "skill_listed",
    "user_message_contains",
    "conversation_contains",
    "last_tool_result_contains",
    "all",
    "any",
    "not",
)
_TEXT_CONDITIONS: dict[str, Callable[[str], Condition]] = {
    "system_prompt_contains": SystemPromptContains,
    "skill_description_contains": SkillDescriptionContains,
    "skill_listed": SkillListed,
    "user_message_contains": UserMessageContains,
    "conversation_contains": ConversationContains,
    "last_tool_result_contains": LastToolResultContains,
}


def _escape(key: str) -> str:
    return key.replace("~", "~0").replace("/", "~1")


def _quoted(names: Sequence[str]) -> str:
    return ", ".join(json.dumps(name) for name in names)


def _describe(value: Any) -> str:
    """A short, human description of a JSON value for "found ..." messages."""
    if value is None or isinstance(value, bool):
        return json.dumps(value)
    if isinstance(value, (int, float)):
        return f"the number {json.dumps(value)}"
    if isinstance(value, str):
        shown = json.dumps(value, ensure_ascii=False)
        return f"the string {shown if len(shown) <= 60 else shown[:57] + '…'}"
    if isinstance(value, list):
        return f"an array of {len(value)} item(s)" if value else "an empty array"
    if isinstance(value, dict):
        return f"an object with keys {_quoted(list(value))}" if value else "an empty object"
    return repr(value)


class _Checker:
    """Collects every problem of one script instead of stopping at the first."""

    def __init__(self) -> None:
        self.problems: list[Problem] = []

    def fail(self, pointer: str, expected: str, found: str) -> None:
        self.problems.append(Problem(pointer, f"expected {expected}, found {found}"))

    def object(
        self, value: Any, pointer: str, required: Sequence[str], optional: Sequence[str]
    ) -> dict[str, Any] | None:
        """Check ``value`` is an object with the required keys and no unknown ones."""
        if not isinstance(value, dict):
            self.fail(pointer, "an object", _describe(value))
            return None
        for key in required:
            if key not in value:
                self.fail(pointer, f"a {json.dumps(key)} key", _describe(value))
        allowed = (*required, *optional)
        for key in value:
            if key not in allowed:
                self.fail(
                    f"{pointer}/{_escape(key)}",
                    f"only the keys {_quoted(allowed)}",
                    f"unknown key {json.dumps(key)}",
                )
        return value

    def string(self, value: Any, pointer: str, *, non_empty: bool = False) -> str | None:
        if not isinstance(value, str) or (non_empty and not value):
            self.fail(pointer, "a non-empty string" if non_empty else "a string", _describe(value))
            return None
        return value

    def array(self, value: Any, pointer: str, *, non_empty: bool, of: str) -> list[Any]:
        if not isinstance(value, list) or (non_empty and not value):
            article = "a non-empty" if non_empty else "an"
            self.fail(pointer, f"{article} array of {of}", _describe(value))
            return []
        return value

    def placeholders(self, value: Any, pointer: str) -> None:
        """Check every ``{{…}}`` in every string of ``value`` (recursively) is known."""
        for where, text in _strings(value, pointer):
            for match in _PLACEHOLDER.finditer(text):
                if _parse_placeholder(match.group(1)) is None:
                    self.fail(where, f"placeholders {_PLACEHOLDER_FORMS}", match.group(0))


def _strings(value: Any, pointer: str) -> Iterator[tuple[str, str]]:
    if isinstance(value, str):
        yield pointer, value
    elif isinstance(value, list):
        for i, item in enumerate(value):
            yield from _strings(item, f"{pointer}/{i}")
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _strings(item, f"{pointer}/{_escape(key)}")


def _check_condition(check: _Checker, value: Any, pointer: str) -> Condition | None:
    expected = f"an object with exactly one of the keys {_quoted(_CONDITION_KEYS)}"
    if not isinstance(value, dict) or len(value) != 1:
        check.fail(pointer, expected, _describe(value))
        return None
    ((key, argument),) = value.items()
    inner = f"{pointer}/{_escape(key)}"
    if key in _TEXT_CONDITIONS:
        text = check.string(argument, inner, non_empty=True)
        return None if text is None else _TEXT_CONDITIONS[key](text)
    if key in ("all", "any"):
        items = check.array(argument, inner, non_empty=True, of="conditions")
        parts = [_check_condition(check, item, f"{inner}/{i}") for i, item in enumerate(items)]
        if not items or any(part is None for part in parts):
            return None
        conditions = tuple(p for p in parts if p is not None)
        return AllOf(conditions) if key == "all" else AnyOf(conditions)
    if key == "not":
        negated = _check_condition(check, argument, inner)
        return None if negated is None else Not(negated)
    check.fail(pointer, expected, f"unknown key {json.dumps(key)}")
    return None


def _check_step(check: _Checker, value: Any, pointer: str) -> Step | None:
    if isinstance(value, dict) and "fault" in value:
        if len(value) > 1:
            others = _quoted([k for k in value if k != "fault"])
            check.fail(pointer, '"fault" alone', f'"fault" together with {others}')
            return None
        fault = value["fault"]
        if fault not in FAULTS:
            check.fail(f"{pointer}/fault", f"one of {_quoted(FAULTS)}", _describe(fault))
            return None
        return FaultStep(fault, pointer)
    step = check.object(value, pointer, (), ("text", "tool_calls"))
    if step is None:
        return None
    if "text" not in step and "tool_calls" not in step:
        check.fail(pointer, 'a "text" key, a "tool_calls" key or a "fault" key', _describe(step))
        return None
    problems_before = len(check.problems)
    text = None
    if "text" in step:
        text = check.string(step["text"], f"{pointer}/text")
        check.placeholders(text, f"{pointer}/text")
    calls: list[ToolCallTemplate] = []
    if "tool_calls" in step:
        items = check.array(
            step["tool_calls"], f"{pointer}/tool_calls", non_empty=True, of="tool calls"
        )
        for i, item in enumerate(items):
            call = _check_tool_call(check, item, f"{pointer}/tool_calls/{i}")
            if call is not None:
                calls.append(call)
    if len(check.problems) > problems_before:
        return None
    return MessageStep(text, tuple(calls), pointer)


def _check_tool_call(check: _Checker, value: Any, pointer: str) -> ToolCallTemplate | None:
    call = check.object(value, pointer, ("name",), ("arguments",))
    if call is None:
        return None
    name = None
    if "name" in call:  # a missing name is already reported by object()
        name = check.string(call["name"], f"{pointer}/name", non_empty=True)
    arguments = call.get("arguments", {})
    if not isinstance(arguments, dict):
        check.fail(f"{pointer}/arguments", "an object", _describe(arguments))
        return None
    check.placeholders(arguments, f"{pointer}/arguments")
    if name is None:
        return None
    return ToolCallTemplate(name, json.dumps(arguments, ensure_ascii=False))


def _check_steps(check: _Checker, value: Any, pointer: str, *, non_empty: bool) -> tuple[Step, ...]:
    items = check.array(value, pointer, non_empty=non_empty, of="steps")
    steps = [_check_step(check, item, f"{pointer}/{i}") for i, item in enumerate(items)]
    return tuple(s for s in steps if s is not None)


def _check_turn(check: _Checker, value: Any, pointer: str) -> Turn | None:
    turn = check.object(value, pointer, (), ("comment", "rules", "steps"))
    if turn is None:
        return None
    if "comment" in turn:
        check.string(turn["comment"], f"{pointer}/comment")
    rules: list[Rule] = []
    if "rules" in turn:
        items = check.array(turn["rules"], f"{pointer}/rules", non_empty=True, of="rules")
        for i, item in enumerate(items):
            rule = _check_rule(check, item, f"{pointer}/rules/{i}")
            if rule is not None:
                rules.append(rule)
    steps: tuple[Step, ...] = ()
    if "steps" in turn:
        steps = _check_steps(check, turn["steps"], f"{pointer}/steps", non_empty=False)
    if "rules" not in turn and "steps" not in turn:
        check.fail(pointer, 'a "rules" key, a "steps" key or both', _describe(turn))
    return Turn(tuple(rules), steps, pointer)


def _check_rule(check: _Checker, value: Any, pointer: str) -> Rule | None:
    rule = check.object(value, pointer, ("when", "steps"), ("comment",))
    if rule is None:
        return None
    if "comment" in rule:
        check.string(rule["comment"], f"{pointer}/comment")
    when = _check_condition(check, rule["when"], f"{pointer}/when") if "when" in rule else None
    steps: tuple[Step, ...] = ()
    if "steps" in rule:
        steps = _check_steps(check, rule["steps"], f"{pointer}/steps", non_empty=True)
    return None if when is None else Rule(when, steps, pointer)


def parse_script(data: Any, source: str) -> Script:
    """Validate decoded script JSON; raise one :class:`ScriptError` listing every problem.

    ``source`` names the file in messages, which read ``<source>: <pointer>: expected
    …, found …``, one line per problem, in document order.
    """
    check = _Checker()
    root = check.object(data, "", ("schema", "turns"), ("description",))
    description = ""
    turns: list[Turn] = []
    if root is not None:
        if "schema" in root and root["schema"] != SCHEMA:
            check.fail("/schema", json.dumps(SCHEMA), _describe(root["schema"]))
        if "description" in root:
            description = check.string(root["description"], "/description") or ""
        if "turns" in root:
            items = check.array(root["turns"], "/turns", non_empty=True, of="turns")
            for i, item in enumerate(items):
                turn = _check_turn(check, item, f"/turns/{i}")
                if turn is not None:
                    turns.append(turn)
    if check.problems:
        raise ScriptError("\n".join(p.render(source) for p in check.problems))
    return Script(source, description, tuple(turns))


def load_script(path: Path) -> Script:
    """Read, decode and validate a script file (the only I/O in this module)."""
    source = str(path)
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        reason = error.strerror if isinstance(error, OSError) and error.strerror else str(error)
        raise ScriptError(
            f"{source}: /: expected a readable UTF-8 script file, found {reason}"
        ) from error
    try:
        data = json.loads(text)
    except json.JSONDecodeError as error:
        raise ScriptError(
            f"{source}: /: expected a JSON document, found invalid JSON at line "
            f"{error.lineno} column {error.colno}: {error.msg}"
        ) from error
    return parse_script(data, source)
