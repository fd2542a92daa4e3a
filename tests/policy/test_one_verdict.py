"""One verdict and one grade reader for N >= 1 trials (issue 31 §1).

A single run is judged over its ``grade.json`` and a run with trials over its
``aggregate.json``, by the same :class:`~pytest_skill_eval.policy.Verdict` type through the
same :func:`~pytest_skill_eval.policy.judge`; which document is read is the group record's
choice, never the file's.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from pytest_skill_eval import policy
from pytest_skill_eval.errors import EvidenceError, MalformedGradeError
from pytest_skill_eval.evidence.reader import parse_grade, read_group_grade
from pytest_skill_eval.evidence.records import parse_group
from pytest_skill_eval.grading.aggregate import Trial, TrialGrade, aggregate
from pytest_skill_eval.grading.results import GroupGrade

EXPECTATIONS: list[dict[str, Any]] = [
    {"id": "b", "kind": "response-text", "variant": "baseline", "status": "fail", "expected": "b expected",
     "observed": "b observed", "locations": [], "error": None},
    {"id": "c", "kind": "response-text", "variant": "candidate", "status": "pass", "expected": "c expected",
     "observed": "c observed", "locations": [], "error": None},
]
GRADE: dict[str, Any] = {"group_id": "g", "state": "graded", "expectations": EXPECTATIONS, "errors": [],
                         "comparisons": [{"id": "cmp", "baseline": "b", "candidate": "c",
                                          "transition": "fail-to-pass", "reason": None}]}


def group_record(trials: int | None) -> dict[str, Any]:
    record: dict[str, Any] = {
        "id": "g", "position": 2, "path": "suite/g.json", "suite": None, "type": "body", "state": "complete",
        "grade_state": "graded", "grade_file": "grade.json" if trials is None else "aggregate.json",
        "variants": {"baseline": {"state": "complete", "reason": None}, "candidate": {"state": "complete", "reason": None}},
        "revision_check": None, "review_questions": [], "publication_errors": [],
    }
    if trials is not None:
        record["trials"] = {"planned": trials, "ran": trials}
    return record


def trials_of(grade: GroupGrade, n: int) -> TrialGrade:
    return aggregate("g", n, [Trial(k, grade, {"baseline": "complete", "candidate": "complete"}) for k in range(1, n + 1)])


def test_judge_reads_either_grade_document_into_the_one_verdict_type() -> None:
    grade = parse_grade(GRADE, "grade.json")
    once = policy.judge(parse_group(group_record(None), "group.json"), grade, group_dir="/g", fail_on="candidate",
                        result_id="r")
    over = policy.judge(parse_group(group_record(3), "group.json"), trials_of(grade, 3), group_dir="/g",
                        fail_on="candidate", result_id="r", pass_rate=0.5, alpha=0.01)
    assert type(once) is type(over) is policy.Verdict
    assert once.aggregate is None and once.comparisons == grade.comparisons
    assert once.words() == "fail-to-pass" and once.variants[0].run_dir == "/g/baseline"
    # over trials: the aggregate's rates, each variant's evidence in every trial, the thresholds kept
    assert over.aggregate == trials_of(grade, 3) and over.comparisons == () and over.expectations == ()
    assert over.words() == "fail-to-pass (3 trials)" and over.variants[0].run_dir == "/g/trials/*/baseline"
    assert (over.pass_rate, over.alpha, over.grade_state) == (0.5, 0.01, "graded")
    assert over == policy.judge_trials(over.variants, trials_of(grade, 3), group_id="g", position=2,
                                       group_state="complete", group_dir="/g", fail_on="candidate", pass_rate=0.5,
                                       alpha=0.01, result_id="r")
    # the rows both share come from one code path: the same row shape, each its own words
    assert once.summary_row() == ("2", "complete", "complete", "cmp: fail-to-pass")
    assert over.summary_row() == ("2", "complete", "complete", "cmp: fail-to-pass")
    assert once.transitions() == over.transitions() == ["fail-to-pass"]
    assert once.outcome == over.outcome == "passed"


def test_a_single_run_reports_the_spec_rows_and_trials_add_their_counts() -> None:
    grade = parse_grade(GRADE, "grade.json")
    once = policy.judge(parse_group(group_record(None), "group.json"), grade, group_dir="/g", fail_on="candidate",
                        result_id="r")
    over = policy.judge(parse_group(group_record(4), "group.json"), trials_of(grade, 4), group_dir="/g",
                        fail_on="candidate", result_id="r")
    single_names = [name for name, _ in once.properties()]
    assert "skill_eval.trials" not in single_names and "skill_eval.variant.baseline.evidence" in single_names
    props = dict(over.properties())
    assert props["skill_eval.trials"] == "4/4" and props["skill_eval.variant.baseline.trials"] == "4 complete"
    assert props["skill_eval.status"] == "fail-to-pass (4 trials)"
    assert "skill_eval.variant.baseline.evidence" not in props


def write(path: Path, data: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data), encoding="utf-8")


def test_read_group_grade_reads_the_document_the_record_names(tmp_path: Path) -> None:
    grade = parse_grade(GRADE, "grade.json")
    write(tmp_path / "once" / "grade.json", GRADE)
    write(tmp_path / "over" / "aggregate.json", trials_of(grade, 2).to_json())
    assert read_group_grade(tmp_path / "once", parse_group(group_record(None), "group.json")) == grade
    assert read_group_grade(tmp_path / "over", parse_group(group_record(2), "group.json")) == trials_of(grade, 2)


def test_the_record_not_the_file_decides_what_a_grade_document_must_be(tmp_path: Path) -> None:
    """A stored result is untrusted: an aggregate where the record names a single run's grade
    (and a grade where it names an aggregate) is a located error, never read as the other."""
    grade = parse_grade(GRADE, "grade.json")
    write(tmp_path / "once" / "grade.json", trials_of(grade, 2).to_json())
    with pytest.raises(MalformedGradeError, match=r"once/grade\.json"):
        read_group_grade(tmp_path / "once", parse_group(group_record(None), "group.json"))
    write(tmp_path / "over" / "aggregate.json", GRADE)
    with pytest.raises(EvidenceError, match=r"over/aggregate\.json"):
        read_group_grade(tmp_path / "over", parse_group(group_record(2), "group.json"))
    # a record with trials never falls back to a grade.json beside the missing aggregate
    write(tmp_path / "none" / "grade.json", GRADE)
    with pytest.raises(EvidenceError, match=r"none/aggregate\.json"):
        read_group_grade(tmp_path / "none", parse_group(group_record(2), "group.json"))


def mixed_trials() -> TrialGrade:
    """Two trials: the candidate passes its check in the first and fails it in the second."""
    fails = copy.deepcopy(GRADE)
    fails["expectations"][1]["status"] = "fail"
    fails["comparisons"][0]["transition"] = "fail-to-fail"
    runs = {"baseline": "complete", "candidate": "complete"}
    return aggregate("g", 2, [Trial(1, parse_grade(GRADE, "grade.json"), runs), Trial(2, parse_grade(fails, "grade.json"), runs)])


def test_a_verdict_over_trials_says_everything_from_its_rates() -> None:
    v = policy.judge(parse_group(group_record(2), "group.json"), mixed_trials(), group_dir="/g", fail_on="candidate",
                     result_id="r")
    assert v.outcome == "failed" and v.words() == "0/2 -> 1/2 (p=1) (2 trials)"
    assert v.summary_row() == ("2", "complete", "complete", "cmp: 0/2 -> 1/2 (p=1)")
    details = ["trials     2 of 2 ran", "baseline   complete [2 complete]", "candidate  complete [2 complete]",
               "baseline   0/2 (0 %, 95 % CI 0-66 %) b (response-text)",
               "candidate  1/2 (50 %, 95 % CI 9-91 %) [flaky] c (response-text)", "comparison cmp: 0/2 -> 1/2 (p=1)"]
    assert v.detail_lines(indent="", reasons=False) == details
    assert v.failure_text().splitlines() == [
        "failed c (response-text): passed 1/2, below 100 %",
        "group g: 0/2 -> 1/2 (p=1) (2 trials) (--skill-eval-fail-on=candidate, --skill-eval-pass-rate=1, "
        "--skill-eval-alpha=0.05)",
        "  evidence: /g", *("  " + line for line in details)]
    assert v.properties() == [
        ("skill_eval.status", "0/2 -> 1/2 (p=1) (2 trials)"), ("skill_eval.result_id", "r"),
        ("skill_eval.position", "2"), ("skill_eval.fail_on", "candidate"), ("skill_eval.pass_rate", "1"),
        ("skill_eval.alpha", "0.05"), ("skill_eval.trials", "2/2"), ("skill_eval.group_state", "complete"),
        ("skill_eval.grade_state", "graded"), ("skill_eval.evidence", "/g"),
        ("skill_eval.variant.baseline", "complete"), ("skill_eval.variant.baseline.trials", "2 complete"),
        ("skill_eval.variant.candidate", "complete"), ("skill_eval.variant.candidate.trials", "2 complete"),
        ("skill_eval.expectation.b", "baseline 0/2 (0 %, 95 % CI 0-66 %)"),
        ("skill_eval.expectation.c", "candidate 1/2 (50 %, 95 % CI 9-91 %) [flaky]"),
        ("skill_eval.comparison.cmp", "0/2 -> 1/2 (p=1)"), ("skill_eval.comparison.cmp.p_value", "1")]
    assert [(e.name, e.outcome, e.word) for e in v.entries()] == [
        ("variant:baseline", "passed", "complete"), ("variant:candidate", "passed", "complete"),
        ("expectation:b", "passed", "0/2"), ("expectation:c", "failed", "1/2"),
        ("comparison:cmp", "passed", "0/2 -> 1/2 (p=1)"), ("grade", "passed", "graded")]
    assert v.entries()[-1].message == "graded: /g/aggregate.json"


def test_a_verdict_over_trials_with_a_grade_error_is_an_error_that_names_it() -> None:
    broken = copy.deepcopy(GRADE)
    broken["state"] = "grade-error"
    broken["errors"] = [{"scope": "group", "owner": "g", "variant": None, "message": "boom"}]
    a = aggregate("g", 2, [Trial(1, parse_grade(broken, "grade.json"), {"baseline": "complete", "candidate": "complete"})])
    v = policy.judge(parse_group(group_record(2), "group.json"), a, group_dir="/g", fail_on="candidate", result_id="r")
    assert v.outcome == "error" and v.grade_state == "grade-error"
    assert v.error_text().splitlines()[:4] == ["group g: grade-error (1 of 2 trials)", "  grade-error (group g): boom",
                                               "  evidence: /g", "  trials     1 of 2 ran"]
    grade = v.entries()[-1]
    assert (grade.name, grade.outcome, grade.message) == ("grade", "error", v.error_text())


def test_without_comparisons_each_side_counts_its_passes_of_its_graded_checks() -> None:
    """The same words for a single run (each check once) and over trials (each trial)."""
    alone = {**copy.deepcopy(GRADE), "comparisons": []}
    once = policy.judge(parse_group(group_record(None), "group.json"), parse_grade(alone, "grade.json"),
                        group_dir="/g", fail_on="candidate", result_id="r")
    assert once.words() == "baseline 0/1 pass, candidate 1/1 pass"
    fails = copy.deepcopy(alone)
    fails["expectations"][1]["status"] = "fail"
    runs = {"baseline": "complete", "candidate": "complete"}
    trials = aggregate("g", 3, [Trial(1, parse_grade(alone, "grade.json"), runs), Trial(2, parse_grade(fails, "grade.json"), runs)])
    over = policy.judge(parse_group(group_record(3), "group.json"), trials, group_dir="/g", fail_on="never", result_id="r")
    assert over.words() == "baseline 0/2 pass, candidate 1/2 pass (2 of 3 trials)"
