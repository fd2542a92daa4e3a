"""Weighted alternatives: a rule's ``choose``, drawn by a generator seeded per arm and turn."""

from __future__ import annotations

from typing import Any

import pytest

from pytest_skill_eval.errors import ScriptError
from pytest_skill_eval.scripted.format import parse_script
from pytest_skill_eval.scripted.handler import arm_of
from pytest_skill_eval.scripted.replies import Arm, plan_reply

from .test_script import assistant_calls, request, tool, user

CHOOSE: dict[str, Any] = {
    "schema": "skill-eval-script/1",
    "turns": [{
        "rules": [{
            "when": {"user_message_contains": "go"},
            "choose": [
                {"weight": 3, "steps": [{"tool_calls": [{"name": "read", "arguments": {"path": "a"}}]},
                                        {"text": "read it"}]},
                {"weight": 7, "steps": [{"text": "skipped it"}]},
            ],
        }],
        "steps": [{"text": "default"}],
    }],
}


def first_reply(arm: Arm) -> str:
    reply = plan_reply(parse_script(CHOOSE, "s.json"), request(user("go")), arm=arm)
    return reply.source or ""


def test_the_same_arm_and_seed_always_draw_the_same_alternative() -> None:
    arm = Arm("seed-1", "g", "candidate", 4)
    assert len({first_reply(arm) for _ in range(5)}) == 1


def test_the_draws_follow_the_weights_over_many_trials() -> None:
    picks = [first_reply(Arm("seed-1", "g", "candidate", trial)) for trial in range(1, 401)]
    read = sum(p.startswith("/turns/0/rules/0/choose/0/") for p in picks)
    assert 0.22 < read / len(picks) < 0.38  # weight 3 of 10
    assert {p.rsplit("/steps/", 1)[0] for p in picks} == {"/turns/0/rules/0/choose/0", "/turns/0/rules/0/choose/1"}


def test_another_seed_or_arm_changes_some_draws() -> None:
    one = [first_reply(Arm("seed-1", "g", "candidate", t)) for t in range(1, 41)]
    two = [first_reply(Arm("seed-2", "g", "candidate", t)) for t in range(1, 41)]
    other_variant = [first_reply(Arm("seed-1", "g", "baseline", t)) for t in range(1, 41)]
    assert one != two and one != other_variant


def test_a_multi_step_alternative_stays_whole_within_its_turn() -> None:
    parsed = parse_script(CHOOSE, "s.json")
    for trial in range(1, 60):
        arm = Arm("s", "g", "candidate", trial)
        first = plan_reply(parsed, request(user("go")), arm=arm)
        if first.source == "/turns/0/rules/0/choose/0/steps/0":
            second = plan_reply(parsed, request(user("go"), assistant_calls("read"), tool("x")), arm=arm)
            assert second.source == "/turns/0/rules/0/choose/0/steps/1" and second.text == "read it"
            return
    pytest.fail("no trial drew the read alternative")


@pytest.mark.parametrize(("choose", "message"), [
    ([{"weight": 0, "steps": [{"text": "x"}]}], "/turns/0/rules/0/choose/0/weight: expected a weight greater than 0, found 0"),
    ([{"weight": 1}], '/turns/0/rules/0/choose/0/steps: expected a non-empty array of steps, found no "steps" field'),
    ([], "/turns/0/rules/0/choose: expected a non-empty array of weighted alternatives, found an empty array"),
])
def test_malformed_alternatives_are_located_errors(choose: list[Any], message: str) -> None:
    data = {"schema": "skill-eval-script/1", "turns": [{"rules": [{"when": {"skill_listed": "x"}, "choose": choose}]}]}
    with pytest.raises(ScriptError) as caught:
        parse_script(data, "s.json")
    assert f"s.json: {message}" in str(caught.value).splitlines()


def test_a_rule_with_both_steps_and_choose_is_an_error() -> None:
    data = {"schema": "skill-eval-script/1", "turns": [{"rules": [{"when": {"skill_listed": "x"}, "steps": [{"text": "a"}],
                                                                     "choose": [{"weight": 1, "steps": [{"text": "b"}]}]}]}]}
    with pytest.raises(ScriptError, match=r"s\.json: /turns/0/rules/0"):
        parse_script(data, "s.json")


def test_the_arm_header_names_group_variant_and_trial() -> None:
    assert arm_of("release-notes/candidate/3", "s") == Arm("s", "release-notes", "candidate", 3)
    assert arm_of("a/b/c/baseline/12", "s") == Arm("s", "a/b/c", "baseline", 12)
    assert arm_of(None, "s") == Arm("s") == arm_of("no-trial/x", "s") == arm_of("g/v/x", "s")
