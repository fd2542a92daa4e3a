"""The outcome policy as a table: every fail-on value × every variant state × outcomes.

The expected outcomes are written out from docs/usage.md ("Outcomes" and the
``--skill-eval-fail-on`` table) and the spec (excluded variants are ``not-selected``,
never failed; invalid, infrastructure-failed, cancelled runs and grade errors are errors,
never passes). Each case builds ``group.json``/``grade.json`` documents shaped as grading
persists them (a variant that is not ``complete`` has ``not-graded`` expectations and
``not-comparable`` comparisons) and judges them host-free.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from pytest_skill_eval import policy
from pytest_skill_eval.errors import EvidenceError, MalformedGradeError
from pytest_skill_eval.evidence.reader import parse_grade
from pytest_skill_eval.evidence.records import parse_group
from pytest_skill_eval.grading.results import ExpectationResult
from pytest_skill_eval.policy import (
    FAIL_ON_CHOICES,
    FailOn,
    Verdict,
    count_words,
    parse_fail_on,
)
from pytest_skill_eval.summary_table import summary_table
from pytest_skill_eval.usage import Usage, VariantUsage


def judge(group: dict[str, Any], grade: dict[str, Any], **options: Any) -> Verdict:
    """:func:`policy.judge` on the records the documents are, read as the session reads them."""
    return policy.judge(parse_group(group, "group.json"), parse_grade(grade, "grade.json"), **options)


STATES = ("complete", "not-selected", "invalid", "infrastructure-failed", "cancelled")
ERROR_STATES = ("invalid", "infrastructure-failed", "cancelled")
POLICIES: tuple[FailOn, ...] = ("candidate", "regression", "any", "never")

#: Outcome shapes: (baseline statuses, candidate statuses) of the paired expectations
#: ``b-*``/``c-*`` (compared pairwise as ``cmp-*``), plus unpaired ``b-solo``/``c-solo``.
SHAPES: dict[str, dict[str, Any]] = {
    "pass-to-pass": {"pairs": [("pass", "pass")]},
    "fail-to-pass": {"pairs": [("fail", "pass")]},
    "pass-to-fail": {"pairs": [("pass", "fail")]},
    "fail-to-fail": {"pairs": [("fail", "fail")]},
    "candidate-fails-outside-comparisons": {"solo": {"baseline": "pass", "candidate": "fail"}},
    "baseline-fails-outside-comparisons": {"solo": {"baseline": "fail", "candidate": "pass"}},
    "everything-passes-no-comparisons": {"solo": {"baseline": "pass", "candidate": "pass"}},
    "fail-to-pass-and-candidate-fails-alone": {"pairs": [("fail", "pass")], "solo": {"candidate": "fail"}},
    "group-grade-error": {"pairs": [("pass", "pass")], "grade_error": True},
}

P, F, E = "passed", "failed", "error"
#: (baseline state, candidate state) -> shape -> outcome per policy in POLICIES order.
EXPECTED: dict[tuple[str, str], dict[str, tuple[str, str, str, str]]] = {
    ("complete", "complete"): {
        "pass-to-pass": (P, P, P, P),
        "fail-to-pass": (P, P, F, P),
        "pass-to-fail": (F, F, F, P),
        "fail-to-fail": (F, P, F, P),
        "candidate-fails-outside-comparisons": (F, P, F, P),
        "baseline-fails-outside-comparisons": (P, P, F, P),
        "everything-passes-no-comparisons": (P, P, P, P),
        "fail-to-pass-and-candidate-fails-alone": (F, P, F, P),
        "group-grade-error": (E, E, E, E),
    },
    # The baseline was excluded: its expectations are not graded, comparisons not comparable.
    ("not-selected", "complete"): {
        "pass-to-pass": (P, P, P, P),
        "fail-to-pass": (P, P, P, P),
        "pass-to-fail": (F, P, F, P),
        "fail-to-fail": (F, P, F, P),
        "candidate-fails-outside-comparisons": (F, P, F, P),
        "baseline-fails-outside-comparisons": (P, P, P, P),
        "everything-passes-no-comparisons": (P, P, P, P),
        "fail-to-pass-and-candidate-fails-alone": (F, P, F, P),
        "group-grade-error": (E, E, E, E),
    },
    ("complete", "not-selected"): {
        "pass-to-pass": (P, P, P, P),
        "fail-to-pass": (P, P, F, P),
        "pass-to-fail": (P, P, P, P),
        "fail-to-fail": (P, P, F, P),
        "candidate-fails-outside-comparisons": (P, P, P, P),
        "baseline-fails-outside-comparisons": (P, P, F, P),
        "everything-passes-no-comparisons": (P, P, P, P),
        "fail-to-pass-and-candidate-fails-alone": (P, P, F, P),
        "group-grade-error": (E, E, E, E),
    },
}


def documents(baseline: str, candidate: str, shape: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """``group.json`` and ``grade.json`` as the engine and grading persist them."""
    states = {"baseline": baseline, "candidate": candidate}
    reasons = {"not-selected": "excluded by --skill-eval-variant", "invalid": "skill path does not exist",
               "infrastructure-failed": "pi exited with code 1", "cancelled": "interrupted"}

    def status(variant: str, wanted: str) -> str:
        return wanted if states[variant] == "complete" else "not-graded"

    def exp(eid: str, variant: str, wanted: str) -> dict[str, Any]:
        s = status(variant, wanted)
        return {"id": eid, "kind": "response-text", "variant": variant, "status": s,
                "expected": f"{eid} expected", "observed": f"{eid} observed {s}",
                "locations": [f"final response of turn 1 ({eid})"], "error": None}

    expectations: list[dict[str, Any]] = []
    comparisons: list[dict[str, Any]] = []
    for n, (b, c) in enumerate(shape.get("pairs", [])):
        eb, ec = exp(f"b-{n}", "baseline", b), exp(f"c-{n}", "candidate", c)
        expectations += [eb, ec]
        graded = "not-graded" not in (eb["status"], ec["status"])
        comparisons.append({
            "id": f"cmp-{n}", "baseline": eb["id"], "candidate": ec["id"],
            "transition": f"{b}-to-{c}" if graded else "not-comparable",
            "reason": None if graded else "a side was not graded",
        })
    for variant, wanted in shape.get("solo", {}).items():
        expectations.append(exp(f"{variant[0]}-solo", variant, wanted))
    errors = [{"scope": "group", "owner": "g", "variant": None, "message": "two comparisons share an id"}] \
        if shape.get("grade_error") else []
    grade = {"group_id": "g", "state": "grade-error" if errors else "graded",
             "expectations": expectations, "comparisons": comparisons, "errors": errors}
    group = {
        "id": "g", "position": 3, "path": "suite/g.json", "suite": None, "type": "body",
        "state": "complete" if baseline == candidate == "complete" else "partially-complete",
        "grade_state": grade["state"], "grade_file": "grade.json",
        "variants": {v: {"state": s, "reason": None if s == "complete" else reasons[s]} for v, s in states.items()},
        "revision_check": None, "review_questions": [], "publication_errors": [],
    }
    return group, grade


def verdict(baseline: str, candidate: str, shape: str, fail_on: FailOn) -> Verdict:
    group, grade = documents(baseline, candidate, SHAPES[shape])
    return judge(group, grade, group_dir="/runs/r1/groups/003-g", fail_on=fail_on, result_id="r1")


def expected_outcome(baseline: str, candidate: str, shape: str, fail_on: str) -> str:
    if baseline in ERROR_STATES or candidate in ERROR_STATES:
        return E  # errors are errors under every policy, whatever the other variant did
    return EXPECTED[(baseline, candidate)][shape][POLICIES.index(fail_on)]


def expected_failing(v: Verdict, fail_on: str) -> set[str]:
    """The entries that fail under *fail_on*, straight from the docs' table (independent of policy.py)."""
    graded = {e.id: e for e in v.expectations}
    if fail_on == "never":
        return set()
    if fail_on == "regression":
        regressions = [c for c in v.comparisons if c.transition == "pass-to-fail"]
        return {f"comparison:{c.id}" for c in regressions} | {f"expectation:{c.candidate}" for c in regressions}
    comparisons = {f"comparison:{c.id}" for c in v.comparisons if c.transition in ("pass-to-fail", "fail-to-fail")}
    sides = ("candidate",) if fail_on == "candidate" else ("baseline", "candidate")
    return comparisons | {f"expectation:{i}" for i, e in graded.items() if e.status == "fail" and e.variant in sides}


CASES = [
    pytest.param(b, c, shape, fail_on, id=f"{b}-{c}-{shape}-{fail_on}")
    for b in STATES for c in STATES if not (b == c == "not-selected")
    for shape in SHAPES for fail_on in POLICIES
]


def test_the_table_covers_every_policy() -> None:
    assert set(POLICIES) == set(FAIL_ON_CHOICES)


@pytest.mark.parametrize(("baseline", "candidate", "shape", "fail_on"), CASES)
def test_outcome_table(baseline: str, candidate: str, shape: str, fail_on: FailOn) -> None:
    v = verdict(baseline, candidate, shape, fail_on)
    want = expected_outcome(baseline, candidate, shape, fail_on)
    assert v.outcome == want

    entries = {e.name: e for e in v.entries()}
    failed_entries = {name for name, e in entries.items() if e.outcome == "failed"}
    assert failed_entries == expected_failing(v, fail_on)
    for entry in entries.values():
        assert isinstance(entry.message, str) and entry.message and isinstance(entry.word, str) and entry.word
        assert dict(entry.properties)["skill_eval.result_id"] == "r1" and dict(entry.properties)["skill_eval.group"] == "g"
    reasons = {f"comparison:{x.id}" if x in v.comparisons else f"expectation:{x.id}" for x in v.failing}
    # An entry fails exactly when it is one of the reasons the item fails: the JUnit
    # report never disagrees with the exit code.
    assert failed_entries == reasons
    if want == P:
        assert not failed_entries and not any(e.outcome == "error" for e in entries.values())
    if want == F:
        assert failed_entries
        text = v.failure_text()
        for reason in reasons:
            assert reason.split(":", 1)[1] in text
    if want == E:
        assert any(e.outcome == "error" for e in entries.values())

    # Variant entries: complete passes, not-selected is skipped, error states are errors.
    for name, state in (("baseline", baseline), ("candidate", candidate)):
        entry = entries[f"variant:{name}"]
        assert entry.word == state
        assert entry.outcome == {"complete": "passed", "not-selected": "skipped"}.get(state, "error")
        assert dict(entry.properties)["skill_eval.state"] == state
        assert dict(entry.properties)["skill_eval.evidence"] == f"/runs/r1/groups/003-g/{name}"
    # A not-selected variant is never a reason.
    for item in v.failing:
        if isinstance(item, ExpectationResult):
            variant = v.variant(item.variant)
            assert variant is not None and variant.state == "complete"


@pytest.mark.parametrize("fail_on", POLICIES)
def test_a_failing_candidate_expectation_outside_comparisons(fail_on: FailOn) -> None:
    v = verdict("complete", "complete", "candidate-fails-outside-comparisons", fail_on)
    fails = fail_on in ("candidate", "any")
    assert v.outcome == (F if fails else P)
    assert [x.id for x in v.failing] == (["c-solo"] if fails else [])
    entry = {e.name: e for e in v.entries()}["expectation:c-solo"]
    assert entry.outcome == ("failed" if fails else "reported")
    assert entry.word == ("fail" if fails else "fail (reported only)")


def test_judge_reads_every_field_of_the_documents() -> None:
    group, grade = documents("complete", "complete", SHAPES["pass-to-fail"])
    grade["expectations"][1]["error"] = "boom"
    v = judge(group, grade, group_dir="/g", fail_on="regression", result_id="r9")
    assert isinstance(v, Verdict)
    assert (v.result_id, v.group_id, v.position, v.group_state, v.grade_state, v.group_dir, v.fail_on) == (
        "r9", "g", 3, "complete", "graded", "/g", "regression")
    assert [(s.name, s.state, s.reason, s.run_dir) for s in v.variants] == [
        ("baseline", "complete", None, "/g/baseline"), ("candidate", "complete", None, "/g/candidate")]
    assert [(e.id, e.kind, e.variant, e.status, e.expected, e.observed, e.locations, e.error)
            for e in v.expectations] == [
        ("b-0", "response-text", "baseline", "pass", "b-0 expected", "b-0 observed pass",
         ("final response of turn 1 (b-0)",), None),
        ("c-0", "response-text", "candidate", "fail", "c-0 expected", "c-0 observed fail",
         ("final response of turn 1 (c-0)",), "boom"),
    ]
    assert [(c.id, c.baseline, c.candidate, c.transition, c.reason) for c in v.comparisons] == [
        ("cmp-0", "b-0", "c-0", "pass-to-fail", None)]
    assert v.grade_errors == ()


def test_documents_that_are_not_records_never_reach_the_policy() -> None:
    """The policy judges records; a sparse or misshapen document is refused while it is read."""
    with pytest.raises(EvidenceError, match='group.json: /state: expected one of .*, found no "state" field'):
        judge({"id": "g", "variants": {}}, {"group_id": "g", "state": "graded"}, group_dir="/g", fail_on="candidate",
              result_id="r")
    group, _grade = documents("complete", "complete", SHAPES["pass-to-pass"])
    with pytest.raises(MalformedGradeError, match='grade.json: /expectations/0/expected: expected a string, found no "expected" field'):
        judge(group, {"group_id": "g", "state": "graded", "expectations": [{"id": "e", "kind": "path", "variant": "candidate",
                                                                             "status": "fail", "observed": ""}]},
              group_dir="/g", fail_on="candidate", result_id="r")
    group["variants"]["candidate"]["state"] = "running"
    with pytest.raises(EvidenceError, match='/variants/candidate/state: expected one of .*, found "running"'):
        judge(group, _grade, group_dir="/g", fail_on="candidate", result_id="r")


def test_grade_state_grade_error_alone_is_an_error() -> None:
    group, grade = documents("complete", "complete", SHAPES["pass-to-pass"])
    grade["state"] = "grade-error"
    for fail_on in POLICIES:
        v = judge(group, grade, group_dir="/g", fail_on=fail_on, result_id="r")
        assert v.outcome == E and v.error
        assert v.words() == "grade-error"
        assert {e.name: e for e in v.entries()}["grade"].outcome == "error"
        assert {e.name: e for e in v.entries()}["grade"].message == "grade-error"


# -- words ---------------------------------------------------------------------------

@pytest.mark.parametrize(("baseline", "candidate", "shape", "words"), [
    ("complete", "complete", "fail-to-pass", "fail-to-pass"),
    ("complete", "complete", "everything-passes-no-comparisons", "baseline 1/1 pass, candidate 1/1 pass"),
    ("complete", "complete", "candidate-fails-outside-comparisons", "baseline 1/1 pass, candidate 0/1 pass"),
    ("complete", "not-selected", "pass-to-pass", "baseline 1/1 pass, candidate not-selected"),
    ("not-selected", "complete", "fail-to-pass", "baseline not-selected, candidate 1/1 pass"),
    ("invalid", "complete", "pass-to-pass", "invalid"),
    ("invalid", "cancelled", "pass-to-pass", "invalid, cancelled"),
    ("infrastructure-failed", "infrastructure-failed", "pass-to-pass", "infrastructure-failed"),
    ("complete", "cancelled", "group-grade-error", "cancelled, grade-error"),
    ("complete", "complete", "group-grade-error", "grade-error"),
])
def test_status_words(baseline: str, candidate: str, shape: str, words: str) -> None:
    assert verdict(baseline, candidate, shape, "candidate").words() == words


def test_status_words_count_several_comparisons() -> None:
    shape = {"pairs": [("fail", "pass"), ("fail", "pass"), ("pass", "pass")]}
    group, grade = documents("complete", "complete", shape)
    v = judge(group, grade, group_dir="/g", fail_on="candidate", result_id="r")
    assert v.words() == "2 fail-to-pass, pass-to-pass"


# -- reports ---------------------------------------------------------------------------

def test_properties_name_every_state_expectation_and_comparison() -> None:
    v = verdict("complete", "complete", "pass-to-fail", "regression")
    assert v.properties() == [
        ("skill_eval.status", "pass-to-fail"),
        ("skill_eval.result_id", "r1"),
        ("skill_eval.position", "3"),
        ("skill_eval.fail_on", "regression"),
        ("skill_eval.group_state", "complete"),
        ("skill_eval.grade_state", "graded"),
        ("skill_eval.evidence", "/runs/r1/groups/003-g"),
        ("skill_eval.variant.baseline", "complete"),
        ("skill_eval.variant.baseline.evidence", "/runs/r1/groups/003-g/baseline"),
        ("skill_eval.variant.candidate", "complete"),
        ("skill_eval.variant.candidate.evidence", "/runs/r1/groups/003-g/candidate"),
        ("skill_eval.expectation.b-0", "baseline pass"),
        ("skill_eval.expectation.c-0", "candidate fail"),
        ("skill_eval.comparison.cmp-0", "pass-to-fail"),
    ]


def test_detail_lines_one_per_variant_expectation_and_comparison() -> None:
    v = verdict("complete", "invalid", "pass-to-pass", "candidate")
    assert v.detail_lines(indent="> ") == [
        "> baseline   complete",
        "> candidate  invalid (skill path does not exist)",
        "> baseline   pass        b-0 (response-text)",
        "> candidate  not-graded  c-0 (response-text)",
        "> comparison cmp-0: not-comparable",
    ]
    assert v.detail_lines(reasons=False)[1] == "  candidate  invalid"
    assert v.summary_text(reasons=False).splitlines() == [
        "  evidence: /runs/r1/groups/003-g", *v.detail_lines(reasons=False)]


def test_error_text_names_each_broken_variant_and_grade_error() -> None:
    v = verdict("infrastructure-failed", "complete", "group-grade-error", "candidate")
    lines = v.error_text().splitlines()
    assert lines[0] == "group g: infrastructure-failed, grade-error"
    assert "  baseline: infrastructure-failed: pi exited with code 1" in lines
    assert "      evidence: /runs/r1/groups/003-g/baseline" in lines
    assert "  grade-error (group g): two comparisons share an id" in lines
    assert not any(line.startswith("  candidate:") for line in lines)
    assert lines[-len(v.summary_text(reasons=False).splitlines()):] == v.summary_text(reasons=False).splitlines()


def test_error_text_without_reason_or_owner() -> None:
    group, grade = documents("cancelled", "complete", SHAPES["pass-to-pass"])
    group["variants"]["baseline"]["reason"] = None
    grade["errors"] = [{"scope": "system", "owner": None, "message": "grading raised KeyError"}]
    v = judge(group, grade, group_dir="/g", fail_on="candidate", result_id="r")
    assert "  baseline: cancelled: no reason recorded" in v.error_text().splitlines()
    assert "  grade-error (system): grading raised KeyError" in v.error_text().splitlines()
    entries = {e.name: e for e in v.entries()}
    assert entries["grade"].message == "grade-error (system): grading raised KeyError"
    assert entries["variant:baseline"].message == "baseline cancelled: no reason recorded\nevidence: /g/baseline"


def test_failure_text_explains_each_failing_expectation_once() -> None:
    v = verdict("complete", "complete", "fail-to-fail", "candidate")
    text = v.failure_text()
    # the headline (pytest's short summary) names the failed candidate check; then the group line
    assert text.splitlines()[0] == "failed c-0 (response-text): c-0 observed fail"
    assert text.splitlines()[1].startswith("group g: fail-to-fail")
    assert "--skill-eval-fail-on=candidate" in text.splitlines()[1]
    assert text.count("c-0 (response-text): fail") == 1  # shown under its comparison, not again
    assert "[baseline] b-0 (response-text): fail" in text
    assert "expected: c-0 expected" in text and "observed: c-0 observed fail" in text
    assert "evidence: /runs/r1/groups/003-g/candidate (final response of turn 1 (c-0))" in text
    assert text.endswith(v.summary_text())


def test_entries_of_a_regression_verdict() -> None:
    v = verdict("complete", "complete", "fail-to-fail", "regression")
    entries = {e.name: e for e in v.entries()}
    assert list(entries) == ["variant:baseline", "variant:candidate", "expectation:b-0", "expectation:c-0",
                             "comparison:cmp-0", "grade"]
    cmp = entries["comparison:cmp-0"]
    assert (cmp.outcome, cmp.word) == ("reported", "fail-to-fail (reported only)")
    assert cmp.message.startswith("reported only: fail-to-fail does not fail the group under "
                                  "--skill-eval-fail-on=regression\ncomparison cmp-0: fail-to-fail")
    assert dict(cmp.properties) == {
        "skill_eval.result_id": "r1", "skill_eval.group": "g", "skill_eval.transition": "fail-to-fail",
        "skill_eval.baseline": "b-0", "skill_eval.candidate": "c-0", "skill_eval.evidence": "/runs/r1/groups/003-g"}
    exp = entries["expectation:c-0"]
    assert (exp.outcome, exp.word) == ("reported", "fail (reported only)")
    assert exp.message.startswith("fail, reported only: it does not fail the group under --skill-eval-fail-on=regression")
    assert dict(exp.properties) == {
        "skill_eval.result_id": "r1", "skill_eval.group": "g", "skill_eval.variant": "candidate",
        "skill_eval.kind": "response-text", "skill_eval.status": "fail", "skill_eval.expected": "c-0 expected",
        "skill_eval.observed": "c-0 observed fail", "skill_eval.evidence": "/runs/r1/groups/003-g/candidate"}
    grade = entries["grade"]
    assert (grade.outcome, grade.word, grade.message) == ("passed", "graded", "graded: /runs/r1/groups/003-g/grade.json")
    assert dict(grade.properties)["skill_eval.grade_state"] == "graded"


def test_entries_of_passing_and_not_comparable_comparisons() -> None:
    v = verdict("complete", "complete", "fail-to-pass", "candidate")
    cmp = {e.name: e for e in v.entries()}["comparison:cmp-0"]
    assert (cmp.outcome, cmp.word) == ("passed", "fail-to-pass")
    assert cmp.message.splitlines()[0] == "comparison cmp-0: fail-to-pass"
    assert "[baseline] b-0 (response-text): fail" in cmp.message
    assert "[candidate] c-0 (response-text): pass" in cmp.message
    nc = {e.name: e for e in verdict("complete", "not-selected", "pass-to-pass", "candidate").entries()}
    assert (nc["comparison:cmp-0"].outcome, nc["comparison:cmp-0"].word) == ("skipped", "not-comparable")
    assert nc["comparison:cmp-0"].message.splitlines()[0] == "comparison cmp-0: not-comparable (a side was not graded)"
    assert (nc["expectation:c-0"].outcome, nc["expectation:c-0"].word) == ("skipped", "not-graded")
    assert nc["expectation:c-0"].message == "not-graded: c-0 observed not-graded"
    assert nc["variant:candidate"].message == "candidate not-selected: excluded by --skill-eval-variant"
    assert nc["expectation:b-0"].outcome == "passed" and nc["expectation:b-0"].word == "pass"


def test_a_grade_error_expectation_is_an_error_entry() -> None:
    group, grade = documents("complete", "complete", SHAPES["pass-to-pass"])
    grade["expectations"][1].update(status="grade-error", error="pointer is not valid")
    grade["errors"] = [{"scope": "expectation", "owner": "c-0", "variant": "candidate", "message": "pointer is not valid"}]
    v = judge(group, grade, group_dir="/g", fail_on="never", result_id="r")
    entries = {e.name: e for e in v.entries()}
    assert (entries["expectation:c-0"].outcome, entries["expectation:c-0"].word) == ("error", "grade-error")
    assert "error: pointer is not valid" in entries["expectation:c-0"].message
    assert dict(entries["expectation:c-0"].properties)["skill_eval.status"] == "grade-error"
    assert entries["grade"].message == "grade-error (expectation c-0): pointer is not valid"
    assert v.outcome == E


def test_not_selected_entry_without_reason_says_why() -> None:
    group, grade = documents("complete", "not-selected", SHAPES["pass-to-pass"])
    group["variants"]["candidate"]["reason"] = None
    v = judge(group, grade, group_dir="/g", fail_on="candidate", result_id="r")
    entry = {e.name: e for e in v.entries()}["variant:candidate"]
    assert (entry.outcome, entry.message) == ("skipped", "candidate not-selected: excluded by --skill-eval-variant")


# -- the terminal summary -------------------------------------------------------------

def test_summary_table_has_one_row_per_group_and_counts_transitions() -> None:
    # tokens and cost per group and in total; a cost only some messages reported says so
    usage = VariantUsage(Usage(100, 10, 0, 0, 110, 0.0125, 0, 1), Usage(200, 20, 0, 0, 220, None, 0, 2, 0, 2), 2)
    first = dataclasses.replace(verdict("complete", "complete", "fail-to-pass", "candidate"), usage=usage)
    group, grade = documents("complete", "not-selected", SHAPES["everything-passes-no-comparisons"])
    group["position"] = 12
    second = judge(group, grade, group_dir="/g2", fail_on="candidate", result_id="r1")
    third = verdict("complete", "complete", "pass-to-fail", "candidate")
    lines = summary_table([
        ("suite.json::first", "passed", first),
        ("suite.json::second-group", "passed", second),
        ("suite.json::third", "failed", third),
        ("suite.json::broken", "error", None),
    ])
    partial = "$0.0125 (2 of 3 messages did not report)"
    assert lines == [
        "#   group                     outcome  baseline  candidate     tokens       cost" + " " * 38 + "comparisons",
        f"3   suite.json::first         passed   complete  complete      330          {partial}  cmp-0: fail-to-pass",
        "12  suite.json::second-group  passed   complete  not-selected  unavailable  unavailable" + " " * 31 + "-",
        "3   suite.json::third         failed   complete  complete      unavailable  unavailable" + " " * 31
        + "cmp-0: pass-to-fail",
        "    suite.json::broken        error    -         -             -            -" + " " * 41 + "-",
        f"    total                                                      330          {partial}",
        "transitions: fail-to-pass, pass-to-fail",
    ]


def test_summary_table_without_comparisons_has_no_transitions_line() -> None:
    v = verdict("complete", "complete", "everything-passes-no-comparisons", "candidate")
    group, grade = documents("not-selected", "complete", SHAPES["everything-passes-no-comparisons"])
    group["position"] = 1
    v2 = judge(group, grade, group_dir="/x", fail_on="candidate", result_id="r")
    lines = summary_table([("a::g", "passed", v), ("a::x", "passed", v2)])
    assert lines == [
        "#  group  outcome  baseline      candidate  tokens       cost         comparisons",
        "3  a::g   passed   complete      complete   unavailable  unavailable  -",
        "1  a::x   passed   not-selected  complete   unavailable  unavailable  -",
        "   total                                    unavailable  unavailable",
    ]
    several = summary_table([("a::g", "passed", verdict("complete", "complete", "fail-to-pass", "any"))] * 2)
    assert several[-1] == "transitions: 2 fail-to-pass"


def test_count_words_keeps_first_appearance_order() -> None:
    assert count_words(["b", "a", "b", "c", "b"]) == "3 b, a, c"
    assert count_words([]) == ""


@pytest.mark.parametrize("value", POLICIES)
def test_parse_fail_on_accepts_each_policy(value: str) -> None:
    assert parse_fail_on(value) == value


def test_parse_fail_on_names_the_valid_policies() -> None:
    with pytest.raises(ValueError) as info:
        parse_fail_on("Candidate", source="skill_eval_fail_on")
    assert str(info.value) == ("skill_eval_fail_on: 'Candidate' is not a valid policy. "
                               "Valid policies: candidate, regression, any, never")
    with pytest.raises(ValueError, match=r"^--skill-eval-fail-on: ''"):
        parse_fail_on("")


# -- details a reader relies on ------------------------------------------------------------

def test_summary_table_rows_after_a_missing_verdict_and_with_several_comparisons() -> None:
    group, grade = documents("complete", "complete", {"pairs": [("fail", "pass"), ("pass", "pass")]})
    record = parse_group(group, "group.json")
    # a record built in code may name one variant only; the table shows "-" for the other
    one_variant = dataclasses.replace(record, variants={"baseline": record.variants["baseline"]})
    two = policy.judge(one_variant, parse_grade(grade, "grade.json"), group_dir="/g", fail_on="candidate", result_id="r")
    assert summary_table([("a::broken", "error", None), ("a::two", "passed", two)]) == [
        "#  group      outcome  baseline  candidate  tokens       cost         comparisons",
        "   a::broken  error    -         -          -            -            -",
        "3  a::two     passed   complete  -          unavailable  unavailable  cmp-0: fail-to-pass, cmp-1: pass-to-pass",
        "   total                                    unavailable  unavailable",
        "transitions: fail-to-pass, pass-to-pass",
    ]


def test_explain_lists_locations_and_the_error_after_the_evidence() -> None:
    group, grade = documents("complete", "complete", SHAPES["pass-to-fail"])
    grade["expectations"][1].update(locations=["one", "two"], error="boom")
    grade["expectations"][0].update(locations=[])
    v = judge(group, grade, group_dir="/g", fail_on="candidate", result_id="r")
    entries = {e.name: e for e in v.entries()}
    assert entries["expectation:c-0"].message == (
        "[candidate] c-0 (response-text): fail\n    expected: c-0 expected\n    observed: c-0 observed fail\n"
        "    evidence: /g/candidate (one; two)\n    error: boom")
    assert entries["expectation:b-0"].message == (
        "[baseline] b-0 (response-text): pass\n    expected: b-0 expected\n    observed: b-0 observed pass\n"
        "    evidence: /g/baseline")
    assert entries["comparison:cmp-0"].message.splitlines() == [
        "comparison cmp-0: pass-to-fail",
        "  [baseline] b-0 (response-text): pass", "      expected: b-0 expected", "      observed: b-0 observed pass",
        "      evidence: /g/baseline",
        "  [candidate] c-0 (response-text): fail", "      expected: c-0 expected", "      observed: c-0 observed fail",
        "      evidence: /g/candidate (one; two)", "      error: boom",
    ]
    text = v.failure_text().splitlines()
    assert text[0] == "failed c-0 (response-text): c-0 observed fail"
    assert text[1:5] == ["group g: pass-to-fail (--skill-eval-fail-on=candidate)", "  comparison cmp-0: pass-to-fail",
                        "    [baseline] b-0 (response-text): pass", "        expected: b-0 expected"]
    assert "    [candidate] c-0 (response-text): fail" in text


def test_failure_text_explains_a_failing_expectation_outside_comparisons_and_shows_reasons() -> None:
    group, grade = documents("complete", "complete", SHAPES["candidate-fails-outside-comparisons"])
    group["variants"]["baseline"]["reason"] = "kept for the record"
    v = judge(group, grade, group_dir="/g", fail_on="candidate", result_id="r")
    lines = v.failure_text().splitlines()
    assert lines[0] == "failed c-solo (response-text): c-solo observed fail"
    assert lines[2:6] == ["  [candidate] c-solo (response-text): fail", "      expected: c-solo expected",
                          "      observed: c-solo observed fail", "      evidence: /g/candidate (final response of turn 1 (c-solo))"]
    # a complete variant's reason is not shown; the failure text shows reasons of the others
    assert "  baseline   complete" in lines
    broken = verdict("complete", "invalid", "pass-to-pass", "candidate")
    assert "  candidate  invalid (skill path does not exist)" in broken.summary_text().splitlines()


def test_an_expectation_of_an_unknown_variant_points_at_the_group() -> None:
    group, grade = documents("complete", "complete", SHAPES["pass-to-pass"])
    grade["expectations"].append({"id": "x", "kind": "path", "variant": "third", "status": "pass",
                                  "expected": "e", "observed": "o", "locations": []})
    v = judge(group, grade, group_dir="/g", fail_on="candidate", result_id="r")
    entry = {e.name: e for e in v.entries()}["expectation:x"]
    assert dict(entry.properties)["skill_eval.evidence"] == "/g"
    assert entry.message.endswith("evidence: /g")
    assert v.variant("third") is None and v.variant("baseline") is not None


def test_comparison_sides_are_found_by_id() -> None:
    shape = {"pairs": [("pass", "fail"), ("fail", "pass")], "solo": {"baseline": "pass"}}
    group, grade = documents("complete", "complete", shape)
    grade["comparisons"].append({"id": "half", "baseline": None, "candidate": "c-1", "transition": "not-comparable",
                                 "reason": "no baseline side"})
    v = judge(group, grade, group_dir="/g", fail_on="candidate", result_id="r")
    entries = {e.name: e for e in v.entries()}
    second = entries["comparison:cmp-1"].message.splitlines()
    assert [line for line in second if line.startswith("  [")] == [
        "  [baseline] b-1 (response-text): fail", "  [candidate] c-1 (response-text): pass"]
    half = entries["comparison:half"]
    assert [line for line in half.message.splitlines() if line.startswith("  [")] == [
        "  [candidate] c-1 (response-text): pass"]
    assert dict(half.properties)["skill_eval.baseline"] == "" and dict(half.properties)["skill_eval.candidate"] == "c-1"
    grade["comparisons"].append({"id": "other-half", "baseline": "b-0", "candidate": None, "transition": "not-comparable"})
    other = {e.name: e for e in judge(group, grade, group_dir="/g", fail_on="candidate", result_id="r").entries()}
    assert dict(other["comparison:other-half"].properties)["skill_eval.candidate"] == ""
    assert (half.outcome, half.word) == ("skipped", "not-comparable")
    assert dict(entries["comparison:cmp-0"].properties)["skill_eval.baseline"] == "b-0"
    text = v.failure_text().splitlines()
    failing = [line for line in text[: text.index("  evidence: /g")] if line.startswith(("  comparison", "    ["))]
    assert failing == ["  comparison cmp-0: pass-to-fail", "    [baseline] b-0 (response-text): pass",
                       "    [candidate] c-0 (response-text): fail"]


def test_several_grade_errors_are_one_entry_per_line() -> None:
    group, grade = documents("complete", "complete", SHAPES["pass-to-pass"])
    grade["errors"] = [{"scope": "comparison", "owner": "cmp-0", "message": "one"},
                       {"scope": "system", "owner": None, "message": "two"}]
    v = judge(group, grade, group_dir="/g", fail_on="candidate", result_id="r")
    entry = {e.name: e for e in v.entries()}["grade"]
    assert (entry.outcome, entry.word) == ("error", "grade-error")
    assert entry.message == "grade-error (comparison cmp-0): one\ngrade-error (system): two"
    assert dict(entry.properties) == {"skill_eval.result_id": "r", "skill_eval.group": "g",
                                      "skill_eval.grade_state": "graded", "skill_eval.evidence": "/g"}
    variant = {e.name: e for e in v.entries()}["variant:baseline"]
    assert (variant.outcome, variant.word, variant.message) == ("passed", "complete", "baseline complete")
    assert dict(variant.properties) == {"skill_eval.result_id": "r", "skill_eval.group": "g",
                                        "skill_eval.state": "complete", "skill_eval.evidence": "/g/baseline"}
