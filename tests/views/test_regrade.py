"""``skill-eval regrade``: byte-for-byte reproduction, edited definitions, the stored copy."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from pytest_skill_eval.commands.regrade import regrade
from pytest_skill_eval.errors import DefinitionError, EvidenceError
from pytest_skill_eval.grading.results import ComparisonResult, ExpectationResult, GradeError, GroupGrade
from pytest_skill_eval.render.regrade import describe_changes

from .conftest import StoredRun, assert_snapshot, copy_result, copy_suite, normalise, run_suite

pytestmark = pytest.mark.pi

FIXED = datetime(2026, 7, 20, 17, 32, 9, tzinfo=UTC)


def _clock() -> datetime:
    return FIXED


def _grades(result: Path) -> dict[str, bytes]:
    return {p.relative_to(result).as_posix(): p.read_bytes() for p in sorted(result.glob("groups/*/grade*.json"))}


@pytest.fixture(scope="module")
def body_run_once(pi_host: object, tmp_path_factory: pytest.TempPathFactory) -> StoredRun:
    run = run_suite(
        copy_suite(tmp_path_factory.mktemp("regrade") / "root"),
        "--skill-eval", "suite.json", "--skill-eval-group", "release-notes-body",
    )
    assert run.returncode == 0, run.output
    return run


@pytest.fixture
def body_run(body_run_once: StoredRun) -> Iterator[StoredRun]:
    """A real run of the body group alone; each test may edit its definition.

    The definition file is restored and regraded grades are removed afterwards, so
    the one run serves every test of this module.
    """
    group_file = body_run_once.root / "groups" / "release-notes-body.json"
    original = group_file.read_bytes()
    try:
        yield body_run_once
    finally:
        group_file.write_bytes(original)
        for path in body_run_once.result_dir.glob("groups/*/grade-regraded-*.json"):
            path.unlink()


def test_regrade_of_untouched_evidence_reproduces_grade_json(stored_run: StoredRun, tmp_path: Path) -> None:
    result = copy_result(stored_run, tmp_path / "copy")
    before = _grades(result)
    # run from the definition root: the current definition files are read from there
    summary = regrade(str(result), stored_run.root, now=_clock)[0]
    after = _grades(result)
    for group in ("001-release-notes-activation", "002-release-notes-body", "003-release-notes-errors"):
        original = f"groups/{group}/grade.json"
        assert after[original] == before[original]  # never touched
        assert after[f"groups/{group}/grade-regraded-20260720173209.json"] == before[original]
    assert "regraded  3 of 3 groups, 0 differ from grade.json" in summary
    assert_snapshot("regrade-untouched", normalise(summary + "\n", stored_run, (str(result), "<COPY>")))


def test_regrade_of_a_result_stored_before_manifests_reproduces_grade_json(stored_run: StoredRun,
                                                                         tmp_path: Path) -> None:
    result = copy_result(stored_run, tmp_path / "copy")
    manifests = list(result.rglob("*.manifest.json"))
    assert manifests  # this version writes one beside every snapshotted tree
    for path in manifests:
        path.unlink()
    before = _grades(result)
    summary = regrade(str(result), tmp_path, now=_clock)[0]
    after = _grades(result)
    for group in ("001-release-notes-activation", "002-release-notes-body", "003-release-notes-errors"):
        assert after[f"groups/{group}/grade-regraded-20260720173209.json"] == before[f"groups/{group}/grade.json"]
    assert "regraded  3 of 3 groups, 0 differ from grade.json" in summary


def test_regrade_never_overwrites_an_earlier_regrade(stored_run: StoredRun, tmp_path: Path) -> None:
    result = copy_result(stored_run, tmp_path / "copy")
    regrade(str(result), tmp_path, now=_clock)
    second = regrade(str(result), tmp_path, now=_clock)[0]
    assert "grade-regraded-20260720173209-2.json" in second
    assert len(list(result.glob("groups/001-*/grade-regraded-*.json"))) == 2


def test_regrade_after_an_edited_expectation(body_run: StoredRun) -> None:
    group_file = body_run.root / "groups" / "release-notes-body.json"
    definition = json.loads(group_file.read_text())
    status = next(e for e in definition["expectations"] if e["id"] == "candidate-status")
    status["value"] = "done"
    base = next(e for e in definition["expectations"] if e["id"] == "baseline-result")
    base["expect"] = "absent"
    cand = next(e for e in definition["expectations"] if e["id"] == "candidate-result")
    cand["expect"] = "absent"
    group_file.write_text(json.dumps(definition, indent=2))
    gdir = next(body_run.result_dir.glob("groups/*-release-notes-body"))
    stored = (gdir / "grade.json").read_bytes()

    summary = regrade(body_run.result_id, body_run.root, now=_clock)[0]

    assert (gdir / "grade.json").read_bytes() == stored
    new = json.loads((gdir / "grade-regraded-20260720173209.json").read_text())
    statuses = {e["id"]: e["status"] for e in new["expectations"]}
    assert statuses["candidate-status"] == "fail"
    assert statuses["baseline-result"] == "pass"
    assert new["comparisons"][0]["transition"] == "pass-to-fail"
    assert_snapshot("regrade-edited", normalise(summary + "\n", body_run))


def test_regrade_uses_the_stored_definition_when_the_file_is_gone(body_run: StoredRun) -> None:
    (body_run.root / "groups" / "release-notes-body.json").unlink()
    summary = regrade(body_run.result_id, body_run.root, now=_clock)[0]
    gdir = next(body_run.result_dir.glob("groups/*-release-notes-body"))
    assert (gdir / "grade-regraded-20260720173209.json").read_bytes() == (gdir / "grade.json").read_bytes()
    assert "stored copy in definition.json" in summary
    assert "identical to grade.json" in summary


def test_regrade_refuses_a_definition_that_no_longer_loads(body_run: StoredRun) -> None:
    (body_run.root / "groups" / "release-notes-body.json").write_text("{ not json")
    with pytest.raises(DefinitionError, match="invalid JSON"):
        regrade(body_run.result_id, body_run.root, now=_clock)
    assert not list(body_run.result_dir.glob("groups/*/grade-regraded-*.json"))  # nothing half-written


def test_regrade_refuses_a_definition_of_another_group(body_run: StoredRun) -> None:
    group_file = body_run.root / "groups" / "release-notes-body.json"
    definition = json.loads(group_file.read_text())
    definition["id"] = "renamed"
    group_file.write_text(json.dumps(definition))
    with pytest.raises(EvidenceError, match="now declares group 'renamed', but this result holds group 'release-notes-body'"):
        regrade(body_run.result_id, body_run.root, now=_clock)


def test_regrade_of_a_missing_result(tmp_path: Path) -> None:
    with pytest.raises(EvidenceError, match="no stored result"):
        regrade("20260101000000-deadbeef", tmp_path)


def test_describe_changes() -> None:
    def exp(eid: str, status: str, observed: str = "o") -> ExpectationResult:
        return ExpectationResult(eid, "path", "candidate", status, "e", observed)  # type: ignore[arg-type]

    stored = GroupGrade("g", "graded", expectations=(exp("a", "pass"), exp("b", "fail"), exp("gone", "pass")),
                        comparisons=(ComparisonResult("c", "a", "b", "fail-to-pass"),))
    new = GroupGrade("g", "grade-error", expectations=(exp("a", "fail"), exp("b", "fail", "x"), exp("new", "grade-error")),
                     comparisons=(ComparisonResult("c", "a", "b", "fail-to-fail"),),
                     errors=(GradeError("expectation", "new", "candidate", "m"),))
    assert describe_changes(stored, new) == [
        "grade state: graded -> grade-error",
        "expectation a: pass -> fail",
        "expectation b: still fail, wording or locations changed",
        "expectation new: new, grade-error",
        "expectation gone: removed (was pass)",
        "comparison c: fail-to-pass -> fail-to-fail",
        "grade errors: 0 -> 1",
    ]
    same_but_reordered = GroupGrade("g", "graded", expectations=stored.expectations[::-1], comparisons=stored.comparisons)
    assert describe_changes(stored, same_but_reordered) == ["same verdicts; the file differs only in order or formatting"]
    assert describe_changes(stored, stored) == []


def test_regrade_command_exits_non_zero_on_a_grade_error(stored_run: StoredRun, tmp_path: Path) -> None:
    import subprocess
    import sys

    result = copy_result(stored_run, tmp_path / "copy")
    ok = subprocess.run([sys.executable, "-m", "pytest_skill_eval", "regrade", str(result)], capture_output=True, text=True)
    # the stored suite holds a group whose expectations are malformed on purpose
    assert ok.returncode == 1, ok.stdout + ok.stderr
    assert "grade-error" in ok.stdout


def test_a_result_cannot_choose_the_definition_regrade_loads(stored_run: StoredRun, tmp_path: Path) -> None:
    """definition.json's path and run.json's source.root are the result's word, not the user's:
    a definition outside the roots regrade trusts (the result's own root, the current directory)
    is never read; the stored copy is graded instead, and the summary says why."""
    result = copy_result(stored_run, tmp_path / "copy")
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    secret = outside / "group.json"
    secret.write_text('{"schema_version": "S3CRET-never-read", "kind": "group"}')  # a problem would quote it
    gdir = result / "groups" / "001-release-notes-activation"
    definition = json.loads((gdir / "definition.json").read_text())
    definition["path"] = str(secret)
    (gdir / "definition.json").write_text(json.dumps(definition))
    for variant in ("baseline", "candidate"):
        run = json.loads((gdir / variant / "run.json").read_text())
        run["source"]["root"] = str(outside)
        (gdir / variant / "run.json").write_text(json.dumps(run))
    before = _grades(result)
    summary = regrade(str(result), tmp_path / "copy", now=_clock)[0]
    assert "S3CRET" not in summary
    assert f"stored copy in definition.json ({secret} is outside the definition roots regrade trusts" in summary
    after = _grades(result)
    regraded = "groups/001-release-notes-activation/grade-regraded-20260720173209.json"
    assert after[regraded] == before["groups/001-release-notes-activation/grade.json"]
