"""Kinds judged on what the subject did turn by turn: reads, responses, tool calls, context.

skill-read, resource-read, response-text, tool-call and context-text each have an
expected sentence (``expected_<kind>``) and a judge (``judge_<kind>``). Context requests
are matched by their one-based ``turn`` number.
"""

from __future__ import annotations

import json
import posixpath

from pytest_skill_eval.definitions.model import Group
from pytest_skill_eval.errors import UnanswerableError
from pytest_skill_eval.grading.checks import ContextText, ResourceRead, ResponseText, SkillRead, ToolCallCheck
from pytest_skill_eval.grading.jsonvalue import show
from pytest_skill_eval.grading.judging import (
    TEXT_VERBS,
    JudgeVerdict,
    call_location,
    judge_text,
    observed_turn,
    plural,
    read_calls,
    scope_text,
    scoped_turns,
    selected_turn_number,
)
from pytest_skill_eval.observation import ContextRequest, RunObservation, ToolCall

# --- skill-read -----------------------------------------------------------------------


def _target_name(check: SkillRead, group: Group) -> str:
    variant = group.variant(check.variant)
    target = variant.target
    if target is not None and 0 <= target < len(variant.skills):
        return f"the target skill {variant.skills[target]}"
    return "the target skill"


def expected_skill_read(check: SkillRead, group: Group) -> str:
    subject = _target_name(check, group)
    return {
        "never": f"{subject} is never read",
        "on-turn": f"{subject} is first read on turn {check.turn}",
        "by-turn": f"{subject} is first read on or before turn {check.turn}",
        "not-before-turn": f"{subject} is not read before turn {check.turn}",
    }[check.expect]


def judge_skill_read(check: SkillRead, obs: RunObservation, group: Group) -> JudgeVerdict:
    if obs.target_file is None:
        raise UnanswerableError("the run recorded no target file, but the variant declares a target skill")
    if check.turn is not None:
        observed_turn(obs, check.turn)
    target = posixpath.normpath(obs.target_file)
    reads = read_calls(list(enumerate(obs.turns, 1)), target, obs.workspace_root)
    if not reads:
        observed = f"the target was not read in {plural(len(obs.turns), 'turn')}"
        return JudgeVerdict(check.expect in ("never", "not-before-turn"), observed)
    first_turn, call = reads[0]
    turn = check.turn or 0
    passed = {
        "never": False,
        "on-turn": first_turn == turn,
        "by-turn": first_turn <= turn,
        "not-before-turn": first_turn >= turn,
    }[check.expect]
    return JudgeVerdict(passed, f"the target was first read on turn {first_turn}", (call_location(first_turn, call),))


# --- resource-read --------------------------------------------------------------------


def _resource_name(check: ResourceRead, group: Group) -> str:
    variant = group.variant(check.variant)
    if check.resource == "workspace":
        return f"workspace file {check.path}"
    items = variant.skills if check.resource == "skill" else variant.context
    noun = "skill" if check.resource == "skill" else "context item"
    assert check.index is not None
    item = f"{noun} {check.index} ({items[check.index]})"
    return item if check.path == "." else f"file {check.path} of {item}"


def expected_resource_read(check: ResourceRead, group: Group) -> str:
    verb = "is read" if check.expect == "read" else "is not read"
    return f"{_resource_name(check, group)} {verb}{scope_text(check.turn) or ' on any turn'}"


def _resource_root(check: ResourceRead, obs: RunObservation) -> str:
    if check.resource == "workspace":
        return obs.workspace_root
    roots = obs.skill_roots if check.resource == "skill" else obs.context_roots
    assert check.index is not None
    if check.index >= len(roots):
        raise UnanswerableError(
            f"{check.resource} index {check.index} has no root: the run recorded "
            f"{plural(len(roots), check.resource + ' root')}"
        )
    return roots[check.index]


def judge_resource_read(check: ResourceRead, obs: RunObservation, group: Group) -> JudgeVerdict:
    target = posixpath.normpath(posixpath.join(_resource_root(check, obs), check.path))
    reads = read_calls(scoped_turns(obs, check.turn), target, obs.workspace_root)
    scope = scope_text(check.turn)
    if reads and check.turn is not None:
        observed = f"read {plural(len(reads), 'time')}{scope}"
    elif reads:
        observed = f"read {plural(len(reads), 'time')}, first on turn {reads[0][0]}"
    else:
        observed = f"not read{scope}"
    passed = bool(reads) == (check.expect == "read")
    return JudgeVerdict(passed, observed, tuple(call_location(n, call) for n, call in reads))



# --- response-text --------------------------------------------------------------------


def expected_response_text(check: ResponseText, group: Group) -> str:
    turn = f"turn {check.turn}" if check.turn is not None else "the final turn"
    return f"the final response of {turn} {TEXT_VERBS[check.expect]} {show(check.value)}"


def judge_response_text(check: ResponseText, obs: RunObservation, group: Group) -> JudgeVerdict:
    number = selected_turn_number(obs, check)
    text = obs.turns[number - 1].response
    passed, observed = judge_text(check.expect, text, check.value, f"the final response of turn {number}")
    return JudgeVerdict(passed, observed, (f"final response of turn {number}",))


# --- tool-call ------------------------------------------------------------------------


def arguments_text(call: ToolCall) -> str:
    """A call's arguments as the compact JSON text that argument filters search."""
    return json.dumps(call.arguments, separators=(",", ":"), sort_keys=True, ensure_ascii=False)


def _call_failed(call: ToolCall) -> bool:
    # A call the guard blocked was still made; from the subject's side it failed.
    return call.is_error or call.blocked


def expected_tool_call(check: ToolCallCheck, group: Group) -> str:
    filters = []
    if check.contains:
        filters.append("arguments containing " + ", ".join(show(v) for v in check.contains))
    if check.not_contains:
        filters.append("arguments not containing " + ", ".join(show(v) for v in check.not_contains))
    call = f"call to {check.tool}" + (" with " + " and ".join(filters) if filters else "")
    scope = scope_text(check.turn)
    return {
        "called": f"a {call} is made{scope}",
        "succeeded": f"a {call} succeeds{scope}",
        "failed": f"a {call} fails{scope}",
        "not-called": f"no {call} is made{scope}",
    }[check.expect]


def judge_tool_call(check: ToolCallCheck, obs: RunObservation, group: Group) -> JudgeVerdict:
    named = [(n, c) for n, turn in scoped_turns(obs, check.turn) for c in turn.tool_calls if c.name == check.tool]
    matching = []
    for number, call in named:
        text = arguments_text(call)
        if all(v in text for v in check.contains) and not any(v in text for v in check.not_contains):
            matching.append((number, call))
    scope = scope_text(check.turn)
    failed = [(n, c) for n, c in matching if _call_failed(c)]
    succeeded = [(n, c) for n, c in matching if not _call_failed(c)]
    if not named:
        observed = f"no call to {check.tool}{scope}"
    elif not matching:
        observed = (
            f"no matching call to {check.tool}{scope}; "
            f"{plural(len(named), 'call')} did not match the argument filters"
        )
    else:
        blocked = sum(1 for _, c in failed if c.blocked)
        observed = (
            f"{plural(len(matching), 'matching call')} to {check.tool}{scope}: {len(succeeded)} succeeded, "
            f"{len(failed)} failed" + (f" ({blocked} blocked by the guard)" if blocked else "")
        )
    passed = {
        "called": bool(matching),
        "succeeded": bool(succeeded),
        "failed": bool(failed),
        "not-called": not matching,
    }[check.expect]
    return JudgeVerdict(passed, observed, tuple(call_location(n, c) for n, c in matching))


# --- context-text ---------------------------------------------------------------------

_SURFACE_NOUNS = {"system-prompt": "system prompt", "provider-context": "provider context"}


def expected_context_text(check: ContextText, group: Group) -> str:
    request = f"model request {check.request}" if isinstance(check.request, int) else f"{check.request} model request"
    turn = f"turn {check.turn}" if check.turn is not None else "the final turn"
    surface = _SURFACE_NOUNS[check.surface]
    return f"the {surface} of the {request} on {turn} {TEXT_VERBS[check.expect]} {show(check.value)}"


def _select_request(requests: list[ContextRequest], selector: str | int) -> ContextRequest | None:
    if selector == "first":
        return requests[0]
    if selector == "last":
        return requests[-1]
    return next((r for r in requests if r.request == selector), None)


def judge_context_text(check: ContextText, obs: RunObservation, group: Group) -> JudgeVerdict:
    if not obs.context_requests:
        raise UnanswerableError("the context observer recorded nothing for this run")
    number = selected_turn_number(obs, check)
    requests = sorted((r for r in obs.context_requests if r.turn == number), key=lambda r: r.request)
    if not requests:
        raise UnanswerableError(f"the context observer recorded no model request on turn {number}")
    request = _select_request(requests, check.request)
    if request is None:
        # The subject decides how many requests a turn takes, so a request it never made is
        # a behavioural fact (fail), not a grading problem.
        made = plural(len(requests), "model request")
        return JudgeVerdict(False, f"turn {number} made {made}; request {check.request} was never made")
    text = request.system_prompt if check.surface == "system-prompt" else request.provider_context
    subject = f"the {_SURFACE_NOUNS[check.surface]} of model request {request.request} on turn {number}"
    passed, observed = judge_text(check.expect, text, check.value, subject)
    return JudgeVerdict(passed, observed, (f"context request {request.request} of turn {number} ({check.surface})",))

