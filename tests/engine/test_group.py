"""The group state engine/group.py derives from its variants' run states (spec, persistence and states).

Group states are ``complete``, ``partially-complete``, ``invalid`` and ``cancelled``;
tests/plugin/test_variant_states.py reaches them through real runs.
"""

from __future__ import annotations

import pytest

from pytest_skill_eval.engine.group import group_state


@pytest.mark.parametrize(
    ("states", "expected"),
    [
        (["complete", "complete"], "complete"),
        (["complete", "not-selected"], "complete"),
        (["complete", "invalid"], "partially-complete"),
        (["infrastructure-failed", "complete"], "partially-complete"),
        # no selected run completed: nothing of the group is complete, partially or not
        (["infrastructure-failed", "infrastructure-failed"], "invalid"),
        (["infrastructure-failed", "not-selected"], "invalid"),
        (["invalid", "infrastructure-failed"], "invalid"),
        (["invalid", "invalid"], "invalid"),
        (["complete", "cancelled"], "cancelled"),
        (["infrastructure-failed", "cancelled"], "cancelled"),
    ],
)
def test_group_state(states: list[str], expected: str) -> None:
    assert group_state(states) == expected
