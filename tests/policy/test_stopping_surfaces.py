"""--skill-eval-stop around the pure core: the engine hook's counts, the stored record, the policy and the views.

The record is read back through its schema like every stored file, and a hostile
``stopping.json`` (wrong shapes, more trials than planned, a link, control characters) is a
located error or neutralised text, never a traceback or a terminal escape.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from pytest_skill_eval.decision.sequential import Look
from pytest_skill_eval.decision.stopping import StopRule
from pytest_skill_eval.engine.stop_hook import StopWatch, trial_counts
from pytest_skill_eval.errors import EvidenceError
from pytest_skill_eval.evidence.layout import STOPPING_FILE
from pytest_skill_eval.evidence.stop_records import (
    ComparisonLooks,
    StopCheckRecord,
    StoppingRecord,
    parse_stopping,
    read_stopping,
    stopping_text,
)
from pytest_skill_eval.grading.aggregate import ComparisonRate, ExpectationRate, Trial, TrialGrade
from pytest_skill_eval.grading.results import ComparisonResult, ExpectationResult, GroupGrade
from pytest_skill_eval.policy import VariantState, judge_trials
from pytest_skill_eval.render.views import render_stopping

BOTH = frozenset({"baseline", "candidate"})


def trial(number: int, baseline: str, candidate: str) -> Trial:
    """One trial whose baseline and candidate expectation ended *baseline* and *candidate* (pass, fail, not-graded)."""
    def result(eid: str, variant: str, status: str) -> ExpectationResult:
        return ExpectationResult(eid, "skill-read", variant, status, "", "")  # type: ignore[arg-type]
    known = {"pass", "fail"}
    transition = f"{baseline}-to-{candidate}" if {baseline, candidate} <= known else "not-comparable"
    grade = GroupGrade("g", "graded", (result("b", "baseline", baseline), result("c", "candidate", candidate)),
                       (ComparisonResult("cmp", "b", "c", transition),))  # type: ignore[arg-type]
    return Trial(number, grade, {"baseline": "complete", "candidate": "complete"})


def test_the_hook_counts_the_trials_and_pairs_them_per_comparison() -> None:
    trials = [trial(1, "fail", "pass"), trial(2, "pass", "fail"), trial(3, "pass", "pass"), trial(4, "not-graded", "pass")]
    expectations, comparisons = trial_counts(trials, StopRule("curtail"), BOTH)
    assert [(e.id, e.passes, e.graded, e.judged) for e in expectations] == [("b", 2, 3, False), ("c", 3, 4, True)]
    (c,) = comparisons
    assert (c.baseline_passes, c.baseline_graded, c.candidate_passes, c.candidate_graded) == (2, 3, 3, 4)
    assert c.pairs == (1, -1, 0, None) and c.judged is False
    # a variant that was not selected has nothing that can change: neither its expectations nor the comparison count
    only, none = trial_counts(trials, StopRule("curtail", fail_on="regression"), frozenset({"candidate"}))
    assert [e.id for e in only] == ["c"] and none == []


def test_the_watch_stops_on_a_failed_candidate_and_records_every_check() -> None:
    watch = StopWatch(StopRule("curtail"), 10, BOTH)
    assert not watch.after_trial([trial(1, "fail", "pass")])
    assert watch.after_trial([trial(1, "fail", "pass"), trial(2, "fail", "fail")])
    record = watch.record()
    assert record is not None and record.stopped and (record.ran, record.planned, record.saved) == (2, 10, 8)
    assert [c.trial for c in record.checks] == [1, 2]
    assert record.checks[0].reason == "expectation c is not decided yet"
    assert parse_stopping(json.loads(json.dumps(record.to_json())), "stopping.json") == record
    off = StopWatch(StopRule("off"), 10, BOTH)
    assert not off.after_trial([trial(1, "fail", "fail")]) and off.record() is None


def test_the_watch_goes_on_while_a_selected_variant_completed_in_no_trial() -> None:
    invalid = Trial(1, trial(1, "fail", "fail").grade, {"baseline": "infrastructure-failed", "candidate": "complete"})
    watch = StopWatch(StopRule("curtail"), 10, BOTH)
    assert not watch.after_trial([invalid])
    assert watch.checks[-1].reason == "variant baseline has completed in no trial yet"
    # not selected: nothing of it can change
    only = StopWatch(StopRule("curtail"), 10, frozenset({"candidate"}))
    assert only.after_trial([Trial(1, invalid.grade, {"baseline": "not-selected", "candidate": "complete"})])


def look(decision: str, higher: int = 9, lower: int = 0) -> Look:
    return Look(3, 12, 20, higher, lower, 8, 0.004, 0.011, decision)  # type: ignore[arg-type]


def record(decision: str, cid: str = "cmp", reason: str = "comparison cmp: candidate worse") -> StoppingRecord:
    return StoppingRecord("sequential", 20, 12, True, reason, "regression", 1.0, 0.05,
                          (StopCheckRecord(12, True, reason),), (ComparisonLooks(cid, (look(decision),)),))


def trial_verdict(stopping: StoppingRecord | None, baseline: tuple[int, int], candidate: tuple[int, int]) -> object:
    (bp, bg), (cp, cg) = baseline, candidate
    aggregate = TrialGrade("g", 20, 12, "graded", (
        ExpectationRate("b", "skill-read", "baseline", bp, bg - bp, 0, 0),
        ExpectationRate("c", "skill-read", "candidate", cp, cg - cp, 0, 0)),
        (ComparisonRate("cmp", "b", "c", bp, bg, cp, cg, False),), (), {})
    variants = (VariantState("baseline", "complete", None, "/g"), VariantState("candidate", "complete", None, "/g"))
    return judge_trials(variants, aggregate, group_id="g", position=1, group_state="complete", group_dir="/g",
                        fail_on="regression", pass_rate=1.0, alpha=0.05, result_id="r", stopping=stopping)


def test_under_the_sequential_design_its_decision_is_the_regression_verdict() -> None:
    # Fisher's p of 6/12 -> 5/12 is far above alpha, yet the design decided worse: the item fails
    worse = trial_verdict(record("worse"), (6, 12), (5, 12))
    assert worse.outcome == "failed"  # type: ignore[attr-defined]
    assert "candidate worse by the sequential design" in worse.headline()  # type: ignore[attr-defined]
    # Fisher's p of 12/12 -> 3/12 is below alpha, but the design did not decide worse
    futile = trial_verdict(record("futile"), (12, 12), (3, 12))
    assert futile.outcome == "passed"  # type: ignore[attr-defined]
    plain = trial_verdict(None, (12, 12), (3, 12))
    assert plain.outcome == "failed"  # type: ignore[attr-defined]
    assert "12 of 20 trials, stopped by sequential" in worse.words()  # type: ignore[attr-defined]
    assert ("skill_eval.stopping", stopping_text(record("worse"))) in worse.properties()  # type: ignore[attr-defined]
    assert any(line.startswith("  stopping   stopped after 12 of 20 trials (sequential)")
               for line in worse.detail_lines())  # type: ignore[attr-defined]


def test_the_texts_say_why_it_stopped_or_that_it_ran_every_trial() -> None:
    assert stopping_text(record("worse")) == "stopped after 12 of 20 trials (sequential): comparison cmp: candidate worse"
    ran = StoppingRecord("curtail", 4, 4, False, "ran every planned trial", "candidate", 1.0, 0.05,
                         (StopCheckRecord(3, False, "expectation c is not decided yet"),
                          StopCheckRecord(4, False, "ran every planned trial")))
    assert stopping_text(ran) == "ran all 4 trials (curtail: no earlier stop; last open: expectation c is not decided yet)"


def test_views_neutralise_hostile_text_in_a_stored_record() -> None:
    hostile = record("worse", cid="c\x1b[31mred\u202e", reason="why\x1b]0;title\x07\nnext")
    lines = render_stopping(hostile)
    assert not any("\x1b" in line or "\u202e" in line or "\n" in line for line in lines)
    assert lines[0].startswith("stopping  stopped after 12 of 20 trials (sequential): why")
    assert "look 3 after 12 of 20 trials: 9 higher, 0 lower, S = 9, boundary |S| >= 8" in lines[2]
    verdict = trial_verdict(hostile, (6, 12), (5, 12))
    assert not any("\x1b" in line for line in verdict.detail_lines())  # type: ignore[attr-defined]


@pytest.mark.parametrize(("change", "expected"), [
    (lambda d: d.update(mode="sometimes"), "/mode"),
    (lambda d: d.update(ran="12"), "/ran: expected"),
    (lambda d: d["comparisons"][0]["looks"][0].update(decision="maybe"), "/comparisons/0/looks/0/decision"),
    (lambda d: d.pop("checks"), "checks"),
    (lambda d: d.update(ran=21), "/ran: expected at most the planned 20 trials, found 21"),
])
def test_a_misshapen_stored_record_is_a_located_error(tmp_path: Path, change: object, expected: str) -> None:
    data = record("worse").to_json()
    change(data)  # type: ignore[operator]
    (tmp_path / STOPPING_FILE).write_text(json.dumps(data))
    with pytest.raises(EvidenceError, match="stopping.json") as caught:
        read_stopping(tmp_path, tmp_path)
    assert expected in str(caught.value)


def test_a_linked_or_special_stored_record_is_refused_and_an_absent_one_is_none(tmp_path: Path) -> None:
    assert read_stopping(tmp_path, tmp_path) is None
    elsewhere = tmp_path / "elsewhere.json"
    elsewhere.write_text(json.dumps(record("worse").to_json()))
    (tmp_path / "group").mkdir()
    (tmp_path / "group" / STOPPING_FILE).symlink_to(elsewhere)
    with pytest.raises(EvidenceError):
        read_stopping(tmp_path / "group", tmp_path)
    (tmp_path / "fifo").mkdir()
    os.mkfifo(tmp_path / "fifo" / STOPPING_FILE)
    with pytest.raises(EvidenceError):
        read_stopping(tmp_path / "fifo", tmp_path)
