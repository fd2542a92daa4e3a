"""Host-free: the Markdown summary appended to ``GITHUB_STEP_SUMMARY``."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

from policy.test_policy_table import verdict

from pytest_skill_eval.evidence.records import ResultRecord
from pytest_skill_eval.services.step_summary import STEP_SUMMARY_ENV, append_step_summary, result_usage, step_summary
from pytest_skill_eval.usage import Usage, VariantUsage


def _usage(cost: float | None, tokens: int | None) -> VariantUsage:
    part = Usage(tokens, 0, 0, 0, tokens, cost, None, 1, 0 if tokens else 1, 0 if cost else 1)
    return VariantUsage(part, part, 2)


def test_summary_names_groups_transitions_cost_and_where_the_evidence_is(tmp_path: Path) -> None:
    result_dir = tmp_path / ".skill-eval" / "runs" / "r1"
    improves = dataclasses.replace(verdict("complete", "complete", "fail-to-pass", "candidate"), usage=_usage(0.125, 50))
    regresses = dataclasses.replace(verdict("complete", "complete", "pass-to-fail", "candidate"), usage=_usage(0.25, 150))
    rows = [("suite.json::improves", "passed", improves),
            ("suite.json::regresses", "failed", regresses),
            ("suite.json::broken|pipe", "error", None)]
    text = step_summary(rows, result_id="r1", state="complete", result_dir=result_dir, rootdir=tmp_path,
                        html_report=tmp_path / "report.html")
    lines = text.splitlines()
    assert lines[0] == "## skill-eval result `r1` (complete)"
    assert "3 groups: 1 passed, 1 failed, 1 error" in lines
    assert any(line.startswith("| 3 | `suite.json::regresses` | failed | complete | complete | 300 | $0.5000 | ")
               for line in lines)
    assert "|  | `suite.json::broken\\|pipe` | error | - | - | unavailable | unavailable | - |" in lines
    assert "**Transitions:** fail-to-pass, pass-to-fail" in lines
    assert ("**Cost:** $0.7500 for 400 tokens over 4 pi runs (as pi reports it; unavailable: pi reported none)"
            in lines)
    assert "- evidence: `.skill-eval/runs/r1` (view it with `skill-eval view r1`)" in lines
    assert "- HTML report: `report.html`" in lines


def test_appends_only_when_the_variable_is_set(tmp_path: Path) -> None:
    assert append_step_summary({}, "x\n") is None
    target = tmp_path / "summary.md"
    target.write_text("earlier step\n", encoding="utf-8")
    assert append_step_summary({STEP_SUMMARY_ENV: str(target)}, "ours\n") == target
    assert target.read_text(encoding="utf-8") == "earlier step\nours\n"


def test_usage_is_result_json_s_and_without_one_the_groups_sum(tmp_path: Path) -> None:
    rows = [("suite.json::g", "passed", dataclasses.replace(verdict("complete", "complete", "fail-to-pass", "candidate"),
                                                           usage=_usage(1.0, 10)))]
    assert result_usage(tmp_path, rows) == _usage(1.0, 10), "no result.json: the verdicts' sum"
    (tmp_path / "result.json").write_text("not json", encoding="utf-8")
    assert result_usage(tmp_path, rows) == _usage(1.0, 10), "an unreadable result.json: the same"
    stored = ResultRecord("20260101000000-0123abcd", "complete", (), usage=_usage(None, None))
    (tmp_path / "result.json").write_text(json.dumps(stored.to_json()), encoding="utf-8")
    assert result_usage(tmp_path, rows) == _usage(None, None)
    text = step_summary([], result_id="r", state="complete", result_dir=tmp_path, rootdir=tmp_path, html_report=None)
    assert "**Cost:** unavailable for unavailable tokens over 2 pi runs" in text
