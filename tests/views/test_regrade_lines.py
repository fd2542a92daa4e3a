"""The ``skill-eval regrade`` summary and its change lines, fast and host-free (the real
regrade runs are in test_regrade.py, which needs pi to make the result it regrades)."""

from __future__ import annotations

from pytest_skill_eval.grading.results import (
    ComparisonResult,
    ExpectationResult,
    ExpectationStatus,
    GradeError,
    GroupGrade,
)
from pytest_skill_eval.render.regrade import GroupRegrade, describe_changes, render_regrade


def _exp(ident: str, status: ExpectationStatus, observed: str = "o") -> ExpectationResult:
    return ExpectationResult(ident, "file", "candidate", status, "x", observed)


STORED = GroupGrade("g", "graded", expectations=(
    _exp("a", "pass"), _exp("b", "pass"), _exp("c", "fail"), _exp("gone", "pass"),
), comparisons=(
    ComparisonResult("k1", "a", "b", "pass-to-pass"),
    ComparisonResult("k2", "a", "c", "pass-to-fail"),
    ComparisonResult("kgone", "a", "b", "fail-to-fail"),
))
NEW = GroupGrade("g", "grade-error", expectations=(
    _exp("a", "pass"), _exp("b", "fail"), _exp("c", "fail", "p"), _exp("n", "not-graded"),
), comparisons=(
    ComparisonResult("k1", "a", "b", "pass-to-pass"),
    ComparisonResult("k2", "a", "c", "fail-to-fail"),
    ComparisonResult("knew", None, "b", "not-comparable", "r"),
), errors=(GradeError("comparison", "knew", None, "bad\nthing"), GradeError("system", None, None, "sys")))


def test_describe_changes_names_every_change_in_order() -> None:
    assert describe_changes(STORED, NEW) == [
        "grade state: graded -> grade-error",
        "expectation b: pass -> fail",
        "expectation c: still fail, wording or locations changed",
        "expectation n: new, not-graded",
        "expectation gone: removed (was pass)",
        "comparison k2: pass-to-fail -> fail-to-fail",
        "comparison knew: new, not-comparable",
        "comparison kgone: removed (was fail-to-fail)",
        "grade errors: 0 -> 2",
    ]
    assert describe_changes(STORED, STORED) == []
    reordered = GroupGrade("g", "graded", expectations=tuple(reversed(STORED.expectations)),
                           comparisons=STORED.comparisons)
    assert describe_changes(STORED, reordered) == ["same verdicts; the file differs only in order or formatting"]


def test_render_regrade_lines_for_every_kind_of_group() -> None:
    groups = [
        GroupRegrade("000-first", "first", "suite.json#/groups/0", "groups/000-first/regrades/r.json", STORED, NEW,
                     False, problems=("groups/000-first/x.json: expected y, found z",)),
        GroupRegrade("001-second", "second", "suite.json#/groups/1", None, None, None, False,
                     skipped="no definition", problems=("p1",)),
        GroupRegrade("012-t", "t", "s.json", "agg.json", None, None, True, aggregate_state="graded",
                     trial_lines=("trial 1: same",)),
        GroupRegrade("013-t2", "t2\nx", "s.json", None, None, None, False, aggregate_state="grade-error",
                     problems=("p2",)),
        GroupRegrade("014-u", "u", "s.json", "f.json", None, NEW, False, stored_unusable=True),
        GroupRegrade("015-v", "v", "s.json", "f.json", None, STORED, False),
        GroupRegrade("016-w", "w", "s.json", "f.json", STORED, STORED, True),
        # a tab in a text cell and a newline in a comparison id stay on one line; no file written
        GroupRegrade("017-a-b", "x\ty", "s.json", None, None,
                     GroupGrade("g", "graded", comparisons=(ComparisonResult("k\n1", None, None, "not-comparable"),)), False),
    ]
    comparisons_new = ["  comparison k1: pass-to-pass", "  comparison k2: fail-to-fail",
                       "  comparison knew: not-comparable", "  grade error comparison knew: bad\\nthing",
                       "  grade error system: sys"]
    comparisons_stored = ["  comparison k1: pass-to-pass", "  comparison k2: pass-to-fail",
                          "  comparison kgone: fail-to-fail"]
    assert render_regrade("/r/result", groups).split("\n") == [
        "result    /r/result",
        "regraded  7 of 8 groups, 5 differ from grade.json",
        "",
        "== group 0 first: grade-error, differs from grade.json",
        "  problem    groups/000-first/x.json: expected y, found z",
        "  definition suite.json#/groups/0",
        "  wrote      groups/000-first/regrades/r.json",
        *comparisons_new,
        *(f"  changed    {line}" for line in describe_changes(STORED, NEW)),
        "",
        "== group 1 second: not regraded (no definition)",
        "  problem    p1",
        "",
        "== group 12 t: graded, identical to aggregate.json",
        "  definition s.json",
        "  wrote      agg.json",
        "  trial 1: same",
        "",
        "== group 13 t2\\nx: grade-error, differs from aggregate.json",
        "  problem    p2",
        "  definition s.json",
        "  wrote      ",
        "",
        "== group 14 u: grade-error, not compared with grade.json (it is not what regrade expects)",
        "  definition s.json",
        "  wrote      f.json",
        *comparisons_new,
        "",
        "== group 15 v: graded, new grade (there was no grade.json to compare with)",
        "  definition s.json",
        "  wrote      f.json",
        *comparisons_stored,
        "",
        "== group 16 w: graded, identical to grade.json",
        "  definition s.json",
        "  wrote      f.json",
        *comparisons_stored,
        "",
        "== group 17 x\\ty: graded, new grade (there was no grade.json to compare with)",
        "  definition s.json",
        "  wrote      ",
        "  comparison k\\n1: not-comparable",
    ]
