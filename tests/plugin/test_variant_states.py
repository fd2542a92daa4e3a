"""Variant-local problems stay local; group states follow the spec's run states.

Spec: "Variant-local invalidity or infrastructure failure preserves evidence and does not
stop safe queued work. Shared fixture failure invalidates the group." Group states are
``complete``, ``partially-complete``, ``invalid`` and ``cancelled``.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from .helpers import (
    AFTER,
    BEFORE,
    description_group,
    only_result,
    read_json,
    reads_skill,
    write_json,
)


def _git(root: Path, *args: str) -> None:
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@example.invalid", *args], cwd=root, check=True,
                   capture_output=True)


@pytest.mark.pi
def test_bad_baseline_ref_invalidates_only_the_baseline(project: Path, pytester: pytest.Pytester) -> None:
    _git(project, "init", "-q")
    _git(project, "add", "-A")
    _git(project, "commit", "-q", "-m", "skills")
    group = description_group("bad-ref", BEFORE, AFTER, reads_skill())
    group["variants"]["baseline"]["source"] = {"kind": "git", "ref": "no-such-ref"}
    write_json(project / "groups" / "bad-ref.json", group)
    result = pytester.runpytest("--skill-eval", "groups/bad-ref.json")
    result.assert_outcomes(errors=1)
    gdir = only_result(project) / "groups" / "001-bad-ref"
    record = read_json(gdir / "group.json")
    assert record["variants"]["baseline"]["state"] == "invalid"
    assert "no-such-ref" in record["variants"]["baseline"]["reason"]
    assert record["variants"]["candidate"] == {"state": "complete", "reason": None}, "the safe variant runs"
    assert record["state"] == "partially-complete"
    check = record["revision_check"]
    assert check["state"] == "not-checkable"
    assert "baseline" in check["reason"] and "no-such-ref" in check["reason"]
    grade = read_json(gdir / "grade.json")
    statuses = {e["id"]: e["status"] for e in grade["expectations"]}
    assert statuses == {"baseline-reads-skill": "not-graded", "candidate-reads-skill": "pass"}
    assert [c["transition"] for c in grade["comparisons"]] == ["not-comparable"]
    assert (gdir / "candidate" / "transcript.json").is_file()


@pytest.mark.pi
def test_description_revision_rule_is_recorded_when_checked(project: Path, pytester: pytest.Pytester) -> None:
    pytester.runpytest("--skill-eval", "groups/improves.json").assert_outcomes(passed=1)
    record = read_json(only_result(project) / "groups" / "001-improves" / "group.json")
    assert record["revision_check"] == {"state": "passed", "reason": None}
