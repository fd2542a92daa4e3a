"""Finding, listing and reading stored results: ``latest``, id prefixes, ``skill-eval list``,
regrades in the view, hidden staging directories, escaped cells, and evidence files that
parse but are not what the readers expect. Every result is a copy of a real run."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import pytest

from pytest_skill_eval.commands.regrade import regrade
from pytest_skill_eval.commands.view import list_results, render
from pytest_skill_eval.errors import EvidenceError
from pytest_skill_eval.grading.results import ExpectationResult, GroupGrade
from pytest_skill_eval.render.views import render_grade

from .conftest import StoredRun, copy_result

OLD, MIDDLE, NEW = "20260101000000-aaaa1111", "20260101000001-aaaa2222", "20260202000000-bbbb3333"


def _cli(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "pytest_skill_eval", *args], cwd=cwd, capture_output=True, text=True,
                          check=False)


@pytest.fixture
def runs(stored_run: StoredRun, tmp_path: Path) -> Path:
    """A definition root holding the stored result under three ids (and nothing else)."""
    cwd = tmp_path / "cwd"
    for result_id in (OLD, MIDDLE, NEW):
        copy_result(stored_run, cwd / ".skill-eval" / "runs" / result_id)
    (cwd / ".skill-eval" / "runs" / ".gitignore").write_text("*\n")
    return cwd


def _result(cwd: Path, result_id: str) -> Path:
    return cwd / ".skill-eval" / "runs" / result_id


# -------------------------------------------------------------------- cells


def test_expectation_cells_are_one_line_and_not_escaped_twice() -> None:
    """Grading writes the subject's paths as path cells and its excerpts as JSON strings; the
    view neutralises each cell onto one line and leaves backslashes as they are (issue 30)."""
    grade = GroupGrade("g", "graded", expectations=(ExpectationResult(
        id="odd", kind="path", variant="candidate", status="fail",
        expected="odd\\\\name\twith\nbreaks.md exists in the final workspace",
        observed='odd\\\\name\twith\nbreaks.md does not exist; it reads "a\\nb"',
        locations=("workspace odd\\\\name\twith\nbreaks.md\r",),
        error="bad\tpath\\\\x",
    ),))
    lines = render_grade(grade)
    assert "      expected   odd\\\\name\\twith\\nbreaks.md exists in the final workspace" in lines
    assert '      observed   odd\\\\name\\twith\\nbreaks.md does not exist; it reads "a\\nb"' in lines
    assert "      location   workspace odd\\\\name\\twith\\nbreaks.md\\r" in lines
    assert "      error      bad\\tpath\\\\x" in lines
    assert not any("\t" in line or "\r" in line for line in lines)


@pytest.mark.pi
def test_subject_text_cannot_reach_the_terminal_raw(stored_run: StoredRun, tmp_path: Path) -> None:
    result = copy_result(stored_run, tmp_path / "copy")
    transcript = result / "groups" / "002-release-notes-body" / "candidate" / "transcript.json"
    data = json.loads(transcript.read_text())
    data["turns"][1]["response"] = "done\x1b[2J\x1b]0;owned\x07\u202e\x9b"
    transcript.write_text(json.dumps(data))
    text = render(str(result), tmp_path, group="2", variant="candidate")
    assert "response   done\\u001b[2J\\u001b]0;owned\\u0007\\u202e\\u009b" in text
    assert not any(ord(c) < 0x20 and c not in "\n" or 0x7F <= ord(c) <= 0x9F or c == "\u202e" for c in text)


# -------------------------------------------------------------------- latest and prefixes


@pytest.mark.pi
def test_latest_is_the_newest_stored_result(runs: Path) -> None:
    hidden = _result(runs, ".20270101000000-cccc4444.tmp")  # a killed run's staging: never "latest"
    shutil.copytree(_result(runs, NEW), hidden)
    assert render("latest", runs).splitlines()[0] == f"result    {_result(runs, NEW)}"


@pytest.mark.pi
def test_latest_within_one_second_is_the_last_written(runs: Path) -> None:
    shutil.rmtree(_result(runs, NEW))
    os.utime(_result(runs, OLD), (2_000_000_000, 2_000_000_000))
    os.utime(_result(runs, MIDDLE), (1_000_000_000, 1_000_000_000))
    # the ids name the same second only in their first 14 digits; here they differ, so the id wins
    assert render("latest", runs).splitlines()[0] == f"result    {_result(runs, MIDDLE)}"
    same = _result(runs, "20260101000001-0000ffff")
    shutil.copytree(_result(runs, OLD), same)
    os.utime(same, (3_000_000_000, 3_000_000_000))
    assert render("latest", runs).splitlines()[0] == f"result    {same}"


def test_latest_without_results(tmp_path: Path) -> None:
    with pytest.raises(EvidenceError, match=r"no stored results in .*\.skill-eval/runs"):
        render("latest", tmp_path)


@pytest.mark.pi
def test_an_unambiguous_prefix_names_one_result(runs: Path) -> None:
    assert render("202602", runs).splitlines()[0] == f"result    {_result(runs, NEW)}"
    assert render("20260101000001", runs).splitlines()[0] == f"result    {_result(runs, MIDDLE)}"


@pytest.mark.pi
def test_an_ambiguous_prefix_lists_the_candidates(runs: Path) -> None:
    with pytest.raises(EvidenceError) as info:
        render("20260101", runs)
    message = str(info.value)
    assert "result id prefix '20260101' is ambiguous" in message
    assert f"{OLD}, {MIDDLE}" in message
    assert NEW not in message
    proc = _cli(runs, "view", "2026")
    assert proc.returncode == 2
    assert proc.stderr.startswith("skill-eval: error: result id prefix '2026' is ambiguous")
    assert f"{OLD}, {MIDDLE}, {NEW}" in proc.stderr
    assert "Traceback" not in proc.stderr


@pytest.mark.pi
def test_an_exact_id_and_then_a_path_come_before_a_prefix(runs: Path) -> None:
    # "2026" is a prefix of every stored id, but a directory ./2026 is a path target first
    local = copy_result_from(runs, NEW, runs / "2026")
    assert render("2026", runs).splitlines()[0] == f"result    {local}"


def copy_result_from(cwd: Path, result_id: str, dest: Path) -> Path:
    shutil.copytree(_result(cwd, result_id), dest)
    return dest


@pytest.mark.pi
def test_a_prefix_that_matches_nothing(runs: Path) -> None:
    with pytest.raises(EvidenceError, match="no stored result '1999'"):
        render("1999", runs)


# -------------------------------------------------------------------- list


@pytest.mark.pi
def test_list_shows_every_stored_result(runs: Path) -> None:
    shutil.copytree(_result(runs, NEW), _result(runs, ".20270101000000-cccc4444.tmp"))
    (_result(runs, MIDDLE) / "result.json").unlink()
    proc = _cli(runs, "list")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0] == f"results in {runs / '.skill-eval' / 'runs'} (oldest first)"
    header, *rows = lines[1:]
    assert header.split() == ["id", "time", "(UTC)", "state", "groups", "transitions"]
    assert [row.split()[0] for row in rows] == [OLD, MIDDLE, NEW]
    old = rows[0].split(None, 5)
    assert old[:5] == [OLD, "2026-01-01", "00:00:00", "complete", "3"]
    assert old[5] == "2 fail-to-pass, not-comparable"
    assert rows[1].split(None, 4)[3] == "unknown"  # no result.json: the batch summary was never written
    assert "cccc4444" not in proc.stdout


def test_list_without_results(tmp_path: Path) -> None:
    proc = _cli(tmp_path, "list")
    assert proc.returncode == 0
    assert proc.stdout == f"no stored results in {tmp_path / '.skill-eval' / 'runs'}\n"


@pytest.mark.pi
def test_list_reads_the_newest_grade(runs: Path) -> None:
    _break_candidate_result(_result(runs, NEW))
    regrade("latest", runs, now=lambda: datetime(2026, 7, 20, 17, 32, 9, tzinfo=UTC))  # regrade takes latest too
    row = next(line for line in list_results(runs).splitlines() if line.startswith(NEW))
    assert row.endswith("fail-to-pass, fail-to-fail, not-comparable (regraded)"), row


# -------------------------------------------------------------------- regrade in the view


def _break_candidate_result(result: Path) -> None:
    """Remove the file the candidate wrote, so a regrade fails its expectations."""
    body = result / "groups" / "002-release-notes-body" / "candidate"
    for where in (body / "workspace", body / "turns" / "2" / "workspace"):
        (where / "result.json").unlink()


@pytest.mark.pi
def test_view_after_regrade_shows_the_newest_grade_and_says_so(stored_run: StoredRun, tmp_path: Path) -> None:
    result = copy_result(stored_run, tmp_path / "copy")
    regrade(str(result), tmp_path, now=lambda: datetime(2026, 7, 20, 17, 32, 9, tzinfo=UTC))
    _break_candidate_result(result)
    regrade(str(result), tmp_path, now=lambda: datetime(2026, 7, 20, 18, 0, 0, tzinfo=UTC))
    text = render(str(result), tmp_path, group="2")
    assert "grade     graded (regraded 2026-07-20 18:00:00 UTC by skill-eval regrade; the run's own grade.json: graded)" in text
    assert "  file       groups/002-release-notes-body/grade-regraded-20260720180000.json" in text
    assert "    fail        candidate-result (candidate path)" in text
    assert "    result-exists: fail-to-fail (baseline-result -> candidate-result)" in text
    # every group was regraded: each shows its newest regrade
    assert "grade     graded (regraded 2026-07-20 18:00:00 UTC" in render(str(result), tmp_path, group="1")


@pytest.mark.pi
def test_view_without_regrade_names_no_regrade(stored_run: StoredRun) -> None:
    assert "regrade" not in render(stored_run.result_id, stored_run.root, group="2").split("review questions")[0]


# -------------------------------------------------------------------- hidden staging directories


@pytest.mark.pi
def test_hidden_staging_directories_are_ignored(stored_run: StoredRun, tmp_path: Path) -> None:
    result = copy_result(stored_run, tmp_path / "copy")
    body = result / "groups" / "002-release-notes-body"
    shutil.copytree(body, result / "groups" / ".002-release-notes-body.k1ll3d")
    shutil.copytree(body, result / "groups" / ".004-leftover")
    shutil.copytree(body / "candidate" / "workspace", body / "candidate" / ".workspace.abc123")
    (body / "candidate" / "turns" / ".3").mkdir()
    (body / ".grade-regraded-20990101000000.json.x1.tmp").write_text("[]")
    text = render(str(result), tmp_path)
    assert text.count("== group ") == 3
    assert ".workspace.abc123" not in text and ".004" not in text and "k1ll3d" not in text and ".tmp" not in text
    summary, _errored = regrade(str(result), tmp_path, now=lambda: datetime(2026, 7, 20, 17, 32, 9, tzinfo=UTC))
    assert "regraded  3 of 3 groups" in summary
    assert not list((result / "groups").glob(".*/grade-regraded-*.json"))


# -------------------------------------------------------------------- evidence that is not what the readers expect

BODY = "groups/002-release-notes-body"
CORRUPTIONS = {
    "grade-array": (f"{BODY}/grade.json", [], f"{BODY}/grade.json: /: expected a grade object, found an empty array"),
    "run-string": (f"{BODY}/candidate/run.json", "x", f'{BODY}/candidate/run.json: /: expected a run record object, found "x"'),
    "group-missing-fields": (f"{BODY}/group.json", {"id": "release-notes-body"},
                             f'{BODY}/group.json: /state: expected one of "complete", "partially-complete", "invalid", '
                             f'"cancelled", found no "state" field'),
    "group-array": (f"{BODY}/group.json", [1], f"{BODY}/group.json: /: expected a group record object, found an array"),
    "transcript-turns": (f"{BODY}/candidate/transcript.json", {"turns": 5},
                         f"{BODY}/candidate/transcript.json: /turns: expected an array, found 5"),
    "grade-items": (f"{BODY}/grade.json", {"state": "graded", "expectations": [1, {"id": "x"}], "comparisons": {}, "errors": []},
                    f"{BODY}/grade.json: /expectations/0: expected an object, found 1"),
    "run-fields": (f"{BODY}/candidate/run.json",
                   {"variant": "candidate", "state": "complete", "source": "x", "model": [], "started_at": "a",
                    "ended_at": 2, "usage": [], "registered_skills": {"prompt": [7]}},
                   f'{BODY}/candidate/run.json: /source: expected an object, found "x"'),
    "result-array": ("result.json", [], "result.json: /: expected a result record object, found an empty array"),
    "definition-array": (f"{BODY}/definition.json", [], None),
}


def _corrupt(stored_run: StoredRun, tmp_path: Path, case: str) -> Path:
    result = copy_result(stored_run, tmp_path / "copy")
    rel, value, _message = CORRUPTIONS[case]
    (result / rel).write_text(json.dumps(value))
    return result


@pytest.mark.pi
@pytest.mark.parametrize("case", [c for c, (_r, _v, m) in CORRUPTIONS.items() if m])
def test_view_names_the_file_that_is_not_what_it_expects_and_shows_the_rest(stored_run: StoredRun, tmp_path: Path,
                                                                             case: str) -> None:
    result = _corrupt(stored_run, tmp_path, case)
    proc = _cli(tmp_path, "view", str(result))
    assert "Traceback" not in proc.stderr, proc.stderr
    message = CORRUPTIONS[case][2]
    assert f"problem    {message}" in proc.stdout, proc.stdout
    assert proc.returncode == 1
    assert "skill-eval: error: some evidence files are not what the view expects (each is named above as problem)" \
        in proc.stderr
    if case == "grade-array":
        assert "grade     unknown (grade.json is not what the view expects)" in proc.stdout
        assert "no grade.json" not in proc.stdout.split("== group 2 ")[1].split("== group 3")[0]
    # the rest of the result is still shown
    for group in ("== group 1 release-notes-activation", "== group 3 release-notes-errors"):
        assert group in proc.stdout
    assert "-- baseline [complete]" in proc.stdout.split("== group 2 ")[1].split("== group 3")[0] or case == "group-array"


@pytest.mark.pi
def test_a_run_json_with_wrong_fields_is_named_field_by_field_and_the_transcript_still_shows(
        stored_run: StoredRun, tmp_path: Path) -> None:
    """A run.json that is not a run record is left out whole (no half-trusted fields), with
    every field that is wrong named; the variant's other files are still shown."""
    result = _corrupt(stored_run, tmp_path, "run-fields")
    text = render(str(result), tmp_path, group="2", variant="candidate")
    candidate = text.split("-- candidate [unknown]")[1]
    assert f"problem    {BODY}/candidate/run.json: /model: expected an object, found an empty array" in text
    assert f'problem    {BODY}/candidate/run.json: /started_at: expected a number, found "a"' in text
    assert f'problem    {BODY}/candidate/run.json: /group: expected a string, found no "group" field' in text
    assert "  turn 2" in candidate  # the transcript is still shown
    assert "  source     " not in candidate.split("  turn 1")[0]


@pytest.mark.pi
@pytest.mark.parametrize("case", ["grade-array", "grade-items", "run-string", "transcript-turns", "definition-array"])
def test_regrade_names_the_file_and_regrades_the_other_groups(stored_run: StoredRun, tmp_path: Path, case: str) -> None:
    result = _corrupt(stored_run, tmp_path, case)
    proc = _cli(tmp_path, "regrade", str(result))
    assert "Traceback" not in proc.stderr, proc.stderr
    assert proc.returncode == 1  # the errors group is a grade-error anyway; a problem alone also exits 1
    rel = CORRUPTIONS[case][0]
    assert f"  problem    {rel}: " in proc.stdout, proc.stdout
    for group in ("001-release-notes-activation", "003-release-notes-errors"):
        assert list((result / "groups" / group).glob("grade-regraded-*.json")), proc.stdout
    regraded = list((result / BODY).glob("grade-regraded-*.json"))
    if case in ("grade-array", "grade-items"):
        # the evidence is intact, only the stored grade is not comparable: the new grade is still written
        assert len(regraded) == 1
        assert "not compared with grade.json" in proc.stdout
    elif case in ("run-string", "transcript-turns"):
        # grading cannot read the run: a grade-error that names the file, as a run would record it
        grade = json.loads(regraded[0].read_text())
        assert grade["state"] == "grade-error"
        assert rel.rsplit("/", 1)[1] in grade["errors"][0]["message"]
        assert "AttributeError" not in grade["errors"][0]["message"] and "TypeError" not in grade["errors"][0]["message"]
    else:
        assert regraded == []
        assert "== group 2 release-notes-body: not regraded" in proc.stdout


@pytest.mark.pi
def test_regrade_of_a_group_whose_file_is_not_json_still_regrades_the_others(stored_run: StoredRun, tmp_path: Path) -> None:
    result = copy_result(stored_run, tmp_path / "copy")
    (result / BODY / "definition.json").write_text("{not json")
    summary, errored = regrade(str(result), tmp_path, now=lambda: datetime(2026, 7, 20, 17, 32, 9, tzinfo=UTC))
    assert errored
    assert "== group 2 release-notes-body: not regraded" in summary
    assert f"cannot read evidence file {result / BODY / 'definition.json'}" in summary
    assert "regraded  2 of 3 groups" in summary
