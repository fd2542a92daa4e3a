"""``-n 2``: groups run in parallel worker processes into one shared result."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from .helpers import junit_cases, junit_details, only_result, read_json, suite, write_json

pytestmark = pytest.mark.pi


def test_workers_share_one_result_id_and_only_the_controller_summarises(
    project: Path, pytester: pytest.Pytester, pi_host: Any
) -> None:
    write_json(project / "all.json", suite("all", [
        "groups/release-notes-activation.json", "groups/release-notes-body.json",
        "groups/improves.json", "groups/regresses.json", "groups/stays-failing.json",
    ]))
    result = pytester.runpytest_subprocess("--skill-eval", "all.json", "-n", "2", "-v", "--junitxml=report.xml")
    result.assert_outcomes(passed=3, failed=2)
    result_dir = only_result(project)
    groups = sorted(p.name for p in (result_dir / "groups").iterdir())
    assert groups == ["001-release-notes-activation", "002-release-notes-body", "003-improves", "004-regresses",
                      "005-stays-failing"]
    assert all((result_dir / "groups" / g / "group.json").exists() for g in groups)
    assert list(result_dir.parent.glob("*/result.json")) == [result_dir / "result.json"]
    summary = read_json(result_dir / "result.json")
    assert summary["result_id"] == result_dir.name
    assert [g["id"] for g in summary["groups"]] == ["release-notes-activation", "release-notes-body", "improves",
                                                     "regresses", "stays-failing"]
    # both workers ran groups
    workers = {line.split("]")[0] + "]" for line in result.outlines if line.startswith("[gw")}
    assert workers == {"[gw0]", "[gw1]"}
    # the controller prints the table and writes JUnit entries for every group; workers stay silent
    assert summary["state"] == "complete"
    result.stdout.fnmatch_lines(["*= skill-eval =*", f"result {result_dir.name} (complete): {result_dir}"])
    result.stdout.no_fnmatch_line("*skill-eval: * preparing*")
    cases = junit_cases(project / "report.xml")
    assert len(cases) == 5
    details = junit_details(project / "report.xml")
    assert details["all.json::regresses"]["skill_eval.result_id"] == result_dir.name
    assert "skill_eval.entry.comparison:says-magic" in details["all.json::stays-failing"]
    assert len([d for d in details.values() if "skill_eval.entry.grade" in d]) == 5
