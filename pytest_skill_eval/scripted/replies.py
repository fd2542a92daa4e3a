"""How the scripted model answers one request: the pure planning of a reply.

:func:`plan_reply` reads the request (:mod:`.conversation`), picks the script turn and
step, evaluates rule conditions (:func:`holds`), resolves placeholders, and returns a
:class:`Reply`; the server only puts it on the wire.
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any, Literal

from pytest_skill_eval.jsonpointer import child
from pytest_skill_eval.scripted.conversation import (
    Conversation,
    DeliveredSkill,
    ListedSkill,
    read_conversation,
)
from pytest_skill_eval.scripted.format import (
    PLACEHOLDER,
    PLACEHOLDER_FORMS,
    AllOf,
    AnyOf,
    Condition,
    ConversationContains,
    Fault,
    FaultStep,
    LastToolResultContains,
    Not,
    Placeholder,
    Script,
    ScriptTurn,
    SkillDescriptionContains,
    SkillListed,
    Step,
    SystemPromptContains,
    UserMessageContains,
    parse_placeholder,
)
from pytest_skill_eval.scripted.pacing import Latency


@dataclass(frozen=True, slots=True)
class Arm:
    """Where a request comes from, for the seeded choice between a rule's weighted alternatives:
    the run's seed, and the group, variant and trial whose pi process sent it."""

    seed: str
    group: str = ""
    variant: str = ""
    trial: int = 1

    def generator(self, turn: int, rule_pointer: str) -> random.Random:
        """The generator for one rule on one turn: the same arm, turn and rule draw the same
        alternative on every request of that turn, so a multi-step alternative stays whole."""
        return random.Random(f"{self.seed}|{self.group}|{self.variant}|{self.trial}|{turn}|{rule_pointer}")


STAND_IN_TAG = "[scripted stand-in]"
"""Prefix of every text the server makes up itself, so it is never mistaken for a model's."""

RETRY_AFTER_SECONDS = 20
"""The ``retry-after`` header (in seconds) of the ``rate-limit`` fault, on every wire."""

Outcome = Literal["scripted", "fault", "exhausted", "unresolved"]


# ------------------------------------------------------------------------------ reply


@dataclass(frozen=True, slots=True)
class PlannedToolCall:
    """A tool call ready for the wire; ``arguments`` is JSON object text."""

    id: str
    name: str
    arguments: str


@dataclass(frozen=True, slots=True)
class ReplyUsage:
    """Deterministic token counts reported in the stream's final usage chunk.

    ``prompt_tokens`` are the uncached input tokens; ``cache_read`` and ``cache_write`` come
    on top of them (each wire adds them up as its API does); ``completion_tokens`` include
    the ``reasoning`` tokens, as every provider counts them.
    """

    prompt_tokens: int
    completion_tokens: int
    cache_read: int = 0
    cache_write: int = 0
    reasoning: int = 0

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens + self.cache_read + self.cache_write


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
    usage: ReplyUsage
    #: the emulated latency of a message reply: the step's settings over the script's
    #: ``latency`` (the server fills what is still unset); faults are never delayed
    latency: Latency = Latency()
    #: False for a step with ``"usage": false``: the stream carries no usage at all
    reports_usage: bool = True

    @property
    def finish_reason(self) -> Literal["tool_calls", "stop"]:
        return "tool_calls" if self.tool_calls else "stop"


# ------------------------------------------------------------------------ placeholders


class _UnresolvedPlaceholderError(Exception):
    def __init__(self, expr: str, pointer: str, reason: str) -> None:
        super().__init__(f"cannot resolve {{{{{expr}}}}} at {pointer}: {reason}")


def _resolve(placeholder: Placeholder, conversation: Conversation) -> str | None:
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


def _unresolved_reason(placeholder: Placeholder) -> str:
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
        placeholder = parse_placeholder(expr)
        if placeholder is None:  # parse_script rejects these; kept total for safety
            raise _UnresolvedPlaceholderError(expr, pointer, f"expected {PLACEHOLDER_FORMS}")
        value = _resolve(placeholder, conversation)
        if value is None:
            raise _UnresolvedPlaceholderError(expr, pointer, _unresolved_reason(placeholder))
        return value

    return PLACEHOLDER.sub(replace, text)


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
            key: _substitute_json(item, child(pointer, key), conversation)
            for key, item in value.items()
        }
    return value


# --------------------------------------------------------------------------- planning


def plan_reply(
    script: Script, request_body: Mapping[str, Any], conversation: Conversation | None = None, *,
    arm: Arm | None = None,
) -> Reply:
    """Decide the stand-in's reply to one request.

    *arm* names where the request comes from, for the seeded draw between a rule's weighted
    alternatives. *conversation* is what the request's wire format says (default: a chat-completions
    body read by :func:`read_conversation`). Never raises for odd request bodies: whatever
    cannot be answered from the script becomes a text reply tagged with
    :data:`STAND_IN_TAG` that says why.
    """
    if conversation is None:
        conversation = read_conversation(request_body)
    turn, step = conversation.turn, conversation.step
    # Deterministic, and proportional to what pi sent: enough for usage plumbing tests.
    prompt_tokens = len(json.dumps(request_body, separators=(",", ":"))) // 4
    base = Reply(
        turn=turn, step=step, outcome="exhausted", source=None, rule=None, text="",
        tool_calls=(), fault=None, usage=ReplyUsage(prompt_tokens, 0),
    )

    def text_stop(text: str, **changes: Any) -> Reply:
        return replace(base, text=text, usage=ReplyUsage(prompt_tokens, len(text) // 4), latency=script.latency,
                       **changes)

    if turn == 0:
        return text_stop(f"{STAND_IN_TAG} The request has no user message to answer.")
    if turn > len(script.turns):
        return text_stop(
            f"{STAND_IN_TAG} Script exhausted: {script.source} has {len(script.turns)} "
            f"turn(s) and this is user message {turn}."
        )
    rule, steps, steps_pointer = _select_steps(script.turns[turn - 1], conversation, arm or Arm(""), turn)
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
    except _UnresolvedPlaceholderError as problem:
        return text_stop(
            f"{STAND_IN_TAG} Script {script.source}: {problem}.",
            outcome="unresolved", source=chosen.pointer, rule=rule,
        )
    completion = text + "".join(call.name + call.arguments for call in calls)
    extra = chosen.usage
    usage = ReplyUsage(prompt_tokens, len(completion) // 4 + extra.reasoning, extra.cache_read, extra.cache_write,
                  extra.reasoning)
    return replace(
        base, outcome="scripted", source=chosen.pointer, rule=rule, text=text, tool_calls=calls, usage=usage,
        latency=Latency(chosen.first_token_delay, chosen.tokens_per_second).over(script.latency),
        reports_usage=chosen.reports_usage,
    )


def _select_steps(
    turn: ScriptTurn, conversation: Conversation, arm: Arm, turn_number: int
) -> tuple[int | None, tuple[Step, ...], str]:
    for index, rule in enumerate(turn.rules):
        if holds(rule.when, conversation):
            if rule.choices:
                choice = arm.generator(turn_number, rule.pointer).choices(
                    rule.choices, weights=[c.weight for c in rule.choices])[0]
                return index, choice.steps, f"{choice.pointer}/steps"
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


