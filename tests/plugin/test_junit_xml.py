"""Real runs through the pi host: the JUnit XML validates against the xunit2 and xunit1 schemas,
counts what the terminal counts, and names hidden directories and evidence paths readably."""

from __future__ import annotations

from pathlib import Path
from typing import Any
from xml.etree import ElementTree

import pytest
from junit_xml.validate import schema_errors

from .helpers import junit_cases, junit_details, only_result, suite, verdict_of, write_json

pytestmark = pytest.mark.pi


@pytest.fixture(autouse=True)
def _host(pi_host: Any) -> None:
    """Install the managed host once, before any inner run needs it."""


@pytest.fixture
def mixed(project: Path) -> str:
    """A suite in a hidden directory whose groups pass, fail, and error (a run and a grade)."""
    write_json(project / ".skill-eval" / "mixed" / "suite.json", suite("mixed", [
        "../../groups/improves.json", "../../groups/regresses.json",
        "../../groups/missing-script.json", "../../groups/grade-error.json"]))
    return ".skill-eval/mixed/suite.json"


@pytest.mark.parametrize("family", ["xunit2", "xunit1"])
def test_junit_xml_is_valid_and_counts_what_the_terminal_counts(project: Path, pytester: pytest.Pytester,
                                                                 mixed: str, family: str) -> None:
    result = pytester.runpytest("--skill-eval", mixed, "--junitxml=report.xml", "-o", f"junit_family={family}")
    result.assert_outcomes(passed=1, failed=1, errors=2)
    xml = project / "report.xml"
    assert schema_errors(xml, family) == []
    first, details = ElementTree.parse(xml).getroot().findall("testsuite")
    # the counts of the first suite are the terminal's: one testcase per group
    assert (first.get("tests"), first.get("failures"), first.get("errors"), first.get("skipped")) == ("4", "1", "2", "0")
    cases = junit_cases(xml)
    assert {k: verdict_of(tc) for k, tc in cases.items()} == {
        "skill-eval.mixed.suite.json::improves": "passed",
        "skill-eval.mixed.suite.json::regresses": "failure",
        "skill-eval.mixed.suite.json::missing-script": "error",
        "skill-eval.mixed.suite.json::grade-error": "error",
    }
    if family == "xunit1":
        assert {tc.get("file") for tc in cases.values()} == {mixed}
    # the details count nothing; their entries say which part failed
    assert details.get("name") == "skill-eval details"
    assert (details.get("tests"), details.get("failures"), details.get("errors")) == ("0", "0", "0")
    blocks = junit_details(xml)
    nodeid = f"{mixed}::regresses"
    assert list(blocks) == [f"{mixed}::{g}" for g in ("improves", "regresses", "missing-script", "grade-error")]
    assert blocks[nodeid]["skill_eval.entry.comparison:reads-skill"] == "failed: pass-to-fail"
    assert blocks[f"{mixed}::improves"]["skill_eval.entry.expectation:baseline-reads-skill"] == "reported: fail (reported only)"
    assert blocks[f"{mixed}::missing-script"]["skill_eval.entry.variant:baseline"] == "error: invalid"
    # evidence paths are relative to the rootdir
    group_dir = only_result(project) / "groups" / "002-regresses"
    assert blocks[nodeid]["skill_eval.evidence"] == group_dir.relative_to(project).as_posix()
    assert blocks[nodeid]["skill_eval.variant.candidate.evidence"] == (group_dir / "candidate").relative_to(project).as_posix()
    assert not [v for b in blocks.values() for k, v in b.items() if k.endswith("evidence") and v.startswith("/")]


def test_github_step_summary_gets_the_batch(project: Path, pytester: pytest.Pytester,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    target = project / "step-summary.md"
    target.write_text("## an earlier step\n", encoding="utf-8")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(target))
    result = pytester.runpytest("--skill-eval", "policy.json", "-k", "improves or regresses",
                                "--skill-eval-html=report.html")
    result.assert_outcomes(passed=1, failed=1, deselected=1)
    result_dir = only_result(project)
    text = target.read_text(encoding="utf-8")
    assert text.startswith("## an earlier step\n")  # appended, never replaced
    lines = text.splitlines()
    assert f"## skill-eval result `{result_dir.name}` (complete)" in lines
    assert "2 groups: 1 passed, 1 failed" in lines
    improves = next(line for line in lines if line.startswith("| 1 | `policy.json::improves` | "))
    assert improves.startswith("| 1 | `policy.json::improves` | passed | complete | complete | ")
    assert improves.endswith(" | unavailable | reads-skill: fail-to-pass |"), "the scripted model has no pricing"
    assert "**Transitions:** fail-to-pass, pass-to-fail" in lines
    assert any(line.startswith("**Cost:** unavailable for ")
               and line.endswith(" tokens over 4 pi runs (as pi reports it; unavailable: pi reported none)")
               for line in lines)
    assert f"- evidence: `{result_dir.relative_to(project).as_posix()}` (view it with `skill-eval view {result_dir.name}`)" in lines
    assert "- HTML report: `report.html`" in lines


def test_no_step_summary_without_the_variable(project: Path, pytester: pytest.Pytester,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    pytester.runpytest("--skill-eval", "policy.json", "-k", "improves").assert_outcomes(passed=1, deselected=2)
    assert not list(project.glob("*.md"))
