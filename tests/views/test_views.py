"""``skill-eval view``: snapshots of every selector over real evidence, target resolution, errors."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from pytest_skill_eval.commands.view import render, select_group_index
from pytest_skill_eval.errors import EvidenceError, SelectionError
from pytest_skill_eval.grading.results import ComparisonResult, ExpectationResult, GradeError, GroupGrade
from pytest_skill_eval.observation import ToolCall, Turn
from pytest_skill_eval.render.views import RegradeShown, render_grade, render_tool_call, render_turn
from pytest_skill_eval.safe_text import escape_path

from .conftest import StoredRun, assert_snapshot, copy_result, normalise

VIEW_CASES: dict[str, dict[str, Any]] = {
    "complete": {},
    "baseline": {"variant": "baseline"},
    "candidate": {"variant": "candidate"},
    "group-by-id": {"group": "release-notes-body"},
    "group-by-position": {"group": "2"},
    "group-variant": {"group": "3", "variant": "candidate"},
}


@pytest.mark.pi
@pytest.mark.parametrize("name", VIEW_CASES)
def test_view_snapshot(stored_run: StoredRun, name: str) -> None:
    text = render(stored_run.result_id, stored_run.root, **VIEW_CASES[name])
    assert_snapshot(f"view-{name}", normalise(text, stored_run))


@pytest.mark.pi
def test_view_shows_grade_before_run_evidence(stored_run: StoredRun) -> None:
    text = render(stored_run.result_id, stored_run.root, group="release-notes-body")
    assert text.index("grade     graded") < text.index("-- baseline [complete]") < text.index("-- candidate [complete]")
    assert text.splitlines()[0] == f"result    {stored_run.result_dir}"


@pytest.mark.pi
def test_view_leaves_out_transport_noise(stored_run: StoredRun) -> None:
    text = render(stored_run.result_id, stored_run.root)
    for noise in ('"type":', "agent_start", "message_update", "--mode", "PI_CODING_AGENT_DIR"):
        assert noise not in text


@pytest.mark.pi
@pytest.mark.parametrize(
    ("variant", "kept", "dropped"),
    [
        ("baseline", "expectation baseline-no-path:", "expectation candidate-no-value:"),
        ("candidate", "expectation candidate-no-value:", "expectation baseline-no-path:"),
    ],
)
def test_variant_view_keeps_own_and_shared_errors(stored_run: StoredRun, variant: str, kept: str, dropped: str) -> None:
    text = render(stored_run.result_id, stored_run.root, group="release-notes-errors", variant=variant)
    assert kept in text
    assert dropped not in text
    assert "comparison says-something:" in text  # comparison errors belong to both variants
    other = "candidate" if variant == "baseline" else "baseline"
    assert f"-- {other}" not in text
    assert f"({other} " not in text  # no expectation of the other variant


@pytest.mark.pi
def test_awkward_workspace_path_is_escaped(stored_run: StoredRun) -> None:
    text = render(stored_run.result_id, stored_run.root, group="3", variant="candidate")
    assert "added    groups/003-release-notes-errors/candidate/workspace/odd\\\\name\\twith\\nbreaks.md\n" in text


@pytest.mark.pi
def test_result_path_with_control_characters_is_escaped(stored_run: StoredRun, tmp_path: Path) -> None:
    odd = copy_result(stored_run, tmp_path / "back\\slash\ttab\rcr\nlf")
    first = render(str(odd), tmp_path).splitlines()[0]
    assert first == f"result    {tmp_path}/back\\\\slash\\ttab\\rcr\\nlf"


# -------------------------------------------------------------------- target resolution


@pytest.fixture
def two_results(stored_run: StoredRun, tmp_path: Path) -> tuple[Path, Path, Path]:
    """A cwd holding the stored result under its id and, at ``./<id>``, a one-group copy."""
    cwd = tmp_path / "cwd"
    stored = copy_result(stored_run, cwd / ".skill-eval" / "runs" / stored_run.result_id)
    local = copy_result(stored_run, cwd / stored_run.result_id)
    for extra in ("002-release-notes-body", "003-release-notes-errors"):
        shutil.rmtree(local / "groups" / extra)
    return cwd, stored, local


@pytest.mark.pi
def test_bare_target_is_a_result_id_before_a_path(stored_run: StoredRun, two_results: tuple[Path, Path, Path]) -> None:
    cwd, stored, _local = two_results
    assert render(stored_run.result_id, cwd).splitlines()[0] == f"result    {stored}"


@pytest.mark.pi
@pytest.mark.parametrize("prefix", ["./", "ABS"])
def test_path_like_target_is_only_a_path(stored_run: StoredRun, two_results: tuple[Path, Path, Path], prefix: str) -> None:
    cwd, _stored, local = two_results
    target = str(local) if prefix == "ABS" else f"./{stored_run.result_id}"
    text = render(target, cwd)
    assert text.splitlines()[0] == f"result    {local}"
    assert "== group 1 release-notes-activation" in text


@pytest.mark.pi
def test_bare_target_falls_back_to_a_path(stored_run: StoredRun, tmp_path: Path) -> None:
    copy_result(stored_run, tmp_path / "kept-result")
    assert render("kept-result", tmp_path).splitlines()[0] == f"result    {tmp_path / 'kept-result'}"


def test_missing_target_names_every_place_tried(tmp_path: Path) -> None:
    with pytest.raises(EvidenceError) as info:
        render("20260101000000-deadbeef", tmp_path)
    message = str(info.value)
    assert str(tmp_path / ".skill-eval" / "runs" / "20260101000000-deadbeef") in message
    assert f"or a directory {tmp_path / '20260101000000-deadbeef'}" in message


def test_missing_path_like_target_is_not_tried_as_an_id(tmp_path: Path) -> None:
    with pytest.raises(EvidenceError) as info:
        render("./nowhere", tmp_path)
    assert ".skill-eval" not in str(info.value)
    assert str(tmp_path / "nowhere") in str(info.value)


def test_directory_that_is_not_a_result(tmp_path: Path) -> None:
    (tmp_path / "plain").mkdir()
    with pytest.raises(EvidenceError, match="neither result.json nor groups/"):
        render("plain", tmp_path)


# -------------------------------------------------------------------- selector errors


@pytest.mark.pi
@pytest.mark.parametrize(
    ("group", "variant", "message"),
    [
        ("no-such-group", None, 'matches no group of .*: expected one of "release-notes-activation", "release-notes-body", "release-notes-errors" or one of the positions 1, 2, 3'),
        ("4", None, "--group 4 is out of range: .* has one of the positions 1, 2, 3"),
        ("0", None, "--group 0 is out of range"),
        (None, "both", '--variant expects one of "baseline", "candidate", found "both"'),
    ],
)
def test_bad_selectors(stored_run: StoredRun, group: str | None, variant: str | None, message: str) -> None:
    with pytest.raises(SelectionError, match=message):
        render(stored_run.result_id, stored_run.root, group=group, variant=variant)


@pytest.mark.pi
def test_group_selector_on_a_direct_group_result(stored_run: StoredRun, tmp_path: Path) -> None:
    result = copy_result(stored_run, tmp_path / "direct")
    for extra in ("002-release-notes-body", "003-release-notes-errors"):
        shutil.rmtree(result / "groups" / extra)
    group_file = result / "groups" / "001-release-notes-activation" / "group.json"
    data = json.loads(group_file.read_text())
    assert render(str(result), tmp_path, group="1")  # no "suite" field recorded: treated as a suite result
    data["suite"] = None
    group_file.write_text(json.dumps(data))
    assert "== group 1 release-notes-activation" in render(str(result), tmp_path)
    with pytest.raises(SelectionError, match="direct group definition: drop --group"):
        render(str(result), tmp_path, group="1")


@pytest.mark.pi
def test_partial_result_renders_what_exists(stored_run: StoredRun, tmp_path: Path) -> None:
    result = copy_result(stored_run, tmp_path / "partial")
    (result / "result.json").unlink()
    body = result / "groups" / "002-release-notes-body"
    (body / "grade.json").unlink()
    (body / "group.json").unlink()
    shutil.rmtree(body / "candidate")
    text = render(str(result), tmp_path, group="2")
    assert "state     unknown (no result.json: the batch summary was never written)" in text
    assert "== group 2 release-notes-body [unknown: no group.json]" in text
    assert "grade     none (no grade.json: the group was not graded)" in text
    assert "-- candidate [no run.json: this variant was not persisted]" in text
    assert "-- baseline [complete]" in text


@pytest.mark.pi
def test_cli_view_prints_the_same_text(stored_run: StoredRun) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "pytest_skill_eval", "view", stored_run.result_id, "--group", "2", "--variant", "candidate"],
        cwd=stored_run.root,
        capture_output=True,
        text=True,
        check=True,
    )
    assert proc.stdout == render(stored_run.result_id, stored_run.root, group="2", variant="candidate")


def test_cli_view_error_exit(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "pytest_skill_eval", "view", "missing-id"], cwd=tmp_path, capture_output=True, text=True
    )
    assert proc.returncode == 2
    assert proc.stderr.startswith("skill-eval: error: no stored result 'missing-id'")


# -------------------------------------------------------------------- pure parts


@pytest.mark.parametrize(
    ("raw", "cell"),
    [
        ("plain/path.md", "plain/path.md"),
        ("tab\there", "tab\\there"),
        ("cr\rlf\n", "cr\\rlf\\n"),
        ("back\\slash", "back\\\\slash"),
        # the backslash is escaped first, so a literal "\t" text stays distinguishable from a tab
        ("literal\\t", "literal\\\\t"),
        ("both\\\t", "both\\\\\\t"),
    ],
)
def test_escape_path(raw: str, cell: str) -> None:
    assert escape_path(raw) == cell


@pytest.mark.parametrize(
    ("dir_names", "selector", "index"),
    [
        (["001-a", "002-b", "010-c"], "b", 1),
        (["001-a", "002-b", "010-c"], "10", 2),
        (["002-b", "003-c"], "2", 0),
        (["001-a"], "1", 0),
        (["001-a-b", "002-a"], "a", 1),
    ],
)
def test_select_group_index(dir_names: list[str], selector: str, index: int) -> None:
    assert select_group_index(dir_names, selector) == index


def test_select_group_index_on_an_empty_result() -> None:
    with pytest.raises(SelectionError, match="holds no groups"):
        select_group_index([], "1")


def test_select_group_index_counts_recorded_positions_not_directories() -> None:
    # a run that selected suite group 2 records only 002-b: position 1 names nothing
    with pytest.raises(SelectionError, match="--group 1 is out of range: the result has position 2"):
        select_group_index(["002-b"], "1")


def _call(name: str, arguments: dict[str, object], result_text: str | None, *, is_error: bool = False,
          blocked: bool = False) -> ToolCall:
    return ToolCall(1, "c1", name, arguments, result_text, is_error, blocked, 3)


@pytest.mark.parametrize(
    ("call", "text"),
    [
        (_call("read", {"path": "a"}, "x"), 'read {"path":"a"} -> ok'),
        (_call("read", {"path": "a"}, "ENOENT\nmore", is_error=True), 'read {"path":"a"} -> error: ENOENT'),
        (_call("read", {}, "blocked: x", is_error=True, blocked=True), "read {} -> blocked: blocked: x"),
        (_call("write", {"b": 1, "a": "é"}, None), 'write {"a":"é","b":1} -> no result'),
        (_call("write", {"c": "x" * 300}, ""), 'write {"c":"' + "x" * 194 + "… (+108 chars) -> ok"),
    ],
)
def test_render_tool_call(call: ToolCall, text: str) -> None:
    assert render_tool_call(call) == text


def test_render_grade_variant_filter_keeps_unowned_errors() -> None:
    grade = GroupGrade("g", "grade-error", errors=(
        GradeError("expectation", "b1", "baseline", "mb"),
        GradeError("expectation", "c1", "candidate", "mc"),
        GradeError("expectation", "x", None, "mx"),
        GradeError("group", "g", "baseline", "mg"),
        GradeError("system", None, None, "ms"),
    ))
    text = "\n".join(render_grade(grade, "candidate"))
    assert [m for m in ("mb", "mc", "mx", "mg", "ms") if f": {m}" in text] == ["mc", "mx", "mg", "ms"]
    assert "\n".join(render_grade(grade, None)).count("    expectation ") == 3


def test_render_grade_lines_of_a_regrade_with_expectations_and_comparisons() -> None:
    # Fast and host-free: the group view's grade block line by line (docs/usage.md, "skill-eval view").
    grade = GroupGrade("g", "graded", expectations=(
        ExpectationResult("e1", "file", "candidate", "fail", "a\nb", "c", ("turn 1",), "bad"),
        ExpectationResult("e2", "file", "baseline", "pass", "x", "y"),
    ), comparisons=(
        ComparisonResult("c1", "e2", "e1", "pass-to-fail"),
        ComparisonResult("c2", None, "e1", "not-comparable", "no baseline"),
    ))
    shown: RegradeShown = {"file": "regrades/x.json", "time": "2026-12-03T10:00:00Z", "original_state": None}
    assert render_grade(grade, "candidate", shown) == [
        "grade     graded (regraded 2026-12-03T10:00:00Z by skill-eval regrade; the run's own grade.json: none)",
        "  file       regrades/x.json",
        "  expectations",
        "    fail        e1 (candidate file)",
        "      expected   a\\nb",
        "      observed   c",
        "      location   turn 1",
        "      error      bad",
        "  comparisons",
        "    c1: pass-to-fail (e2 -> e1)",
        "    c2: not-comparable (- -> e1)",
        "      reason     no baseline",
        "  grade errors: none",
    ]
    assert render_grade(None) == ["grade     none (no grade.json: the group was not graded)"]
    assert render_grade(GroupGrade("g", "graded")) == [
        "grade     graded", "  expectations: none", "  comparisons: none", "  grade errors: none"]


def test_render_turn_lines() -> None:
    # Fast and host-free: a turn's block, multi-line values aligned, stop reason and error shown.
    turn = Turn(2, "do\nit", "do\nit /skill", "done", (_call("read", {"path": "a"}, "x"),), "length", "boom\nx", False)
    assert render_turn(turn) == [
        "  turn 2 (not settled)",
        "    prompt     do",
        "               it",
        "    sent       do",
        "               it /skill",
        '    tool       read {"path":"a"} -> ok',
        "    response   done",
        "    stopped    length",
        "    error      boom\\nx",
    ]
    assert render_turn(Turn(1, "p", "p", "r", stop_reason="stop")) == ["  turn 1", "    prompt     p", "    response   r"]
