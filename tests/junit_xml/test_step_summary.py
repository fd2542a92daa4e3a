"""Host-free: the Markdown summary appended to ``GITHUB_STEP_SUMMARY``."""

from __future__ import annotations

import json
from pathlib import Path

from policy.test_policy_table import verdict

from pytest_skill_eval.plugin.step_summary import STEP_SUMMARY_ENV, append_step_summary, run_usage, step_summary


def _run(path: Path, cost: float, tokens: float) -> None:
    path.mkdir(parents=True)
    (path / "run.json").write_text(json.dumps({"usage": {"cost": cost, "totalTokens": tokens}}), encoding="utf-8")


def test_summary_names_groups_transitions_cost_and_where_the_evidence_is(tmp_path: Path) -> None:
    result_dir = tmp_path / ".skill-eval" / "runs" / "r1"
    _run(result_dir / "groups" / "001-g" / "baseline", 0.25, 100)
    _run(result_dir / "groups" / "001-g" / "candidate", 0.5, 300)
    rows = [("suite.json::improves", "passed", verdict("complete", "complete", "fail-to-pass", "candidate")),
            ("suite.json::regresses", "failed", verdict("complete", "complete", "pass-to-fail", "candidate")),
            ("suite.json::broken|pipe", "error", None)]
    text = step_summary(rows, result_id="r1", state="complete", result_dir=result_dir, rootdir=tmp_path,
                        html_report=tmp_path / "report.html")
    lines = text.splitlines()
    assert lines[0] == "## skill-eval result `r1` (complete)"
    assert "3 groups: 1 passed, 1 failed, 1 error" in lines
    assert any(line.startswith("| 3 | `suite.json::regresses` | failed | complete | complete | ") for line in lines)
    assert "|  | `suite.json::broken\\|pipe` | error | - | - | - |" in lines
    assert "**Transitions:** fail-to-pass, pass-to-fail" in lines
    assert "**Cost:** $0.7500 for 400 tokens over 2 runs (as pi reports it)" in lines
    assert "- evidence: `.skill-eval/runs/r1` (view it with `skill-eval view r1`)" in lines
    assert "- HTML report: `report.html`" in lines


def test_appends_only_when_the_variable_is_set(tmp_path: Path) -> None:
    assert append_step_summary({}, "x\n") is None
    target = tmp_path / "summary.md"
    target.write_text("earlier step\n", encoding="utf-8")
    assert append_step_summary({STEP_SUMMARY_ENV: str(target)}, "ours\n") == target
    assert target.read_text(encoding="utf-8") == "earlier step\nours\n"


def test_usage_ignores_unreadable_run_records(tmp_path: Path) -> None:
    _run(tmp_path / "groups" / "001-g" / "trials" / "1" / "candidate", 1.0, 10)
    (tmp_path / "groups" / "001-g" / "run.json").write_text("not json", encoding="utf-8")
    assert run_usage(tmp_path) == (1.0, 10.0, 1)
