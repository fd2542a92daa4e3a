"""Faults while a group is published or the session finishes, through the real pi host.

Spec (execution and evidence, persistence and states): "Thrown grading or recoverable
grade/group publication failure becomes explicit ``grade-error`` fallback evidence. If a
run or required fallback cannot be preserved, queued work stops and no completed summary
is published." Failures are injected by putting a directory where a file must go, so the
real atomic write fails as it would on a real tree.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from .helpers import only_result, read_json, suite, write_json

pytestmark = pytest.mark.pi

SKILL_EVAL = Path(sys.executable).parent / "skill-eval"

BLOCK = """
    from pytest_skill_eval.plugin.session import SESSION_KEY

    def pytest_runtest_setup(item):
        if item.name == "improves":
            gdir = item.config.stash[SESSION_KEY].result_dir / "groups" / "001-improves"
            for name in {names!r}:
                (gdir / name).mkdir(parents=True)
"""


def _two_groups(project: Path) -> None:
    write_json(project / "pair.json", suite("pair", ["groups/improves.json", "groups/regresses.json"]))


def _every_json_parses(result_dir: Path) -> None:
    for path in result_dir.rglob("*.json"):
        if path.is_file() and "workspace" not in path.parts:
            json.loads(path.read_text(encoding="utf-8"))


def test_unwritable_grade_becomes_grade_error_fallback_and_queued_work_goes_on(project: Path, pytester: pytest.Pytester) -> None:
    _two_groups(project)
    pytester.makeconftest(BLOCK.format(names=["grade.json"]))
    result = pytester.runpytest("--skill-eval", "pair.json", "-p", "no:cacheprovider")
    result.assert_outcomes(errors=1, failed=1)
    result.stdout.fnmatch_lines(["*grade.json could not be written*grade-fallback.json*"])
    gdir = only_result(project) / "groups" / "001-improves"
    fallback = read_json(gdir / "grade-fallback.json")
    assert fallback["state"] == "grade-error"
    assert [e["scope"] for e in fallback["errors"]] == ["system"]
    assert fallback["errors"][0]["message"].startswith("grade.json could not be written: [Errno 21] Is a directory")
    # the grade itself is kept in the fallback; only its state says it was not published
    assert [c["transition"] for c in fallback["comparisons"]] == ["fail-to-pass"]
    group = read_json(gdir / "group.json")
    assert group["grade_state"] == "grade-error"
    assert group["grade_file"] == "grade-fallback.json"
    assert group["state"] == "complete", "a grade-error leaves the runs as observed"
    # recoverable: the queued group ran, and the batch summary was published
    assert (only_result(project) / "groups" / "002-regresses" / "grade.json").is_file()
    summary = read_json(only_result(project) / "result.json")
    assert [(g["id"], g["grade_state"]) for g in summary["groups"]] == [("improves", "grade-error"), ("regresses", "graded")]
    assert summary["groups"][0]["comparisons"] == {"reads-skill": "fail-to-pass"}
    _every_json_parses(only_result(project))


def test_unwritable_group_record_becomes_grade_error_fallback(project: Path, pytester: pytest.Pytester) -> None:
    _two_groups(project)
    pytester.makeconftest(BLOCK.format(names=["group.json"]))
    result = pytester.runpytest("--skill-eval", "pair.json", "-p", "no:cacheprovider")
    result.assert_outcomes(errors=1, failed=1)
    result.stdout.fnmatch_lines(["*group.json could not be written*group-fallback.json*"])
    gdir = only_result(project) / "groups" / "001-improves"
    record = read_json(gdir / "group-fallback.json")
    assert record["id"] == "improves" and record["grade_state"] == "grade-error"
    assert record["publication_errors"][0].startswith("group.json could not be written: ")
    fallback = read_json(gdir / record["grade_file"])
    assert fallback["state"] == "grade-error"
    summary = read_json(only_result(project) / "result.json")
    assert [(g["id"], g["grade_state"]) for g in summary["groups"]] == [("improves", "grade-error"), ("regresses", "graded")]
    _every_json_parses(only_result(project))
    # view reads the record and the grade the fallback names (grade.json was written first)
    from pytest_skill_eval.commands.view import render

    shown = render(str(only_result(project)), project, group="001")
    assert "group.json could not be written" in shown, shown


def test_fallback_that_cannot_be_written_stops_queued_work(project: Path, pytester: pytest.Pytester) -> None:
    _two_groups(project)
    pytester.makeconftest(BLOCK.format(names=["grade.json", "grade-fallback.json"]))
    result = pytester.runpytest("--skill-eval", "pair.json", "-p", "no:cacheprovider")
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["*skill-eval: no result.json written: evidence could not be persisted*"])
    assert not (only_result(project) / "result.json").exists()
    assert not (only_result(project) / "groups" / "002-regresses").exists()


def test_trials_publish_their_grades_aggregate_and_record_as_fallbacks_too(project: Path, pytester: pytest.Pytester) -> None:
    _two_groups(project)
    pytester.makeconftest(BLOCK.format(names=["aggregate.json", "trials/002/grade.json"]))
    result = pytester.runpytest("--skill-eval", "pair.json", "--skill-eval-trials=3", "-p", "no:cacheprovider")
    result.assert_outcomes(errors=1, failed=1)
    result.stdout.fnmatch_lines(["*aggregate.json could not be written*aggregate-fallback.json*"])
    gdir = only_result(project) / "groups" / "001-improves"
    trial = read_json(gdir / "trials" / "002" / "grade-fallback.json")
    assert trial["state"] == "grade-error"
    assert trial["errors"][-1]["message"].startswith("grade.json could not be written: [Errno 21] Is a directory")
    assert (gdir / "trials" / "001" / "grade.json").is_file() and (gdir / "trials" / "003" / "grade.json").is_file()
    combined = read_json(gdir / "aggregate-fallback.json")
    assert combined["state"] == "grade-error" and combined["trials"] == {"planned": 3, "ran": 3}
    assert combined["errors"][-1]["message"].startswith("aggregate.json could not be written: [Errno 21] Is a directory")
    group = read_json(gdir / "group.json")
    assert (group["grade_file"], group["grade_state"]) == ("aggregate-fallback.json", "grade-error")
    assert group["publication_errors"][0].startswith("aggregate.json could not be written: ")
    # recoverable: the queued group ran its trials, and the batch summary was published
    assert (only_result(project) / "groups" / "002-regresses" / "aggregate.json").is_file()
    summary = read_json(only_result(project) / "result.json")
    assert [(g["id"], g["grade_state"]) for g in summary["groups"]] == [("improves", "grade-error"), ("regresses", "graded")]
    _every_json_parses(only_result(project))
    from pytest_skill_eval.commands.view import render

    shown = render(str(only_result(project)), project, group="001", trial=2)
    assert "grade.json could not be written" in shown and "aggregate.json could not be written" in shown


# ----------------------------------------------------------------------------- Ctrl-C while finishing

INTERRUPT_AT = """
    import os, signal
    import pytest

    @pytest.hookimpl({when})
    def {hook}(*args, **kwargs):
        os.kill(os.getpid(), signal.SIGINT)
"""


@pytest.mark.parametrize(
    ("hook", "when", "state"),
    [
        # before the batch summary is written: the batch is recorded as cancelled
        ("pytest_sessionfinish", "tryfirst=True", "cancelled"),
        # after it (the summary table is being printed): it stays as recorded
        ("pytest_terminal_summary", "trylast=True", "complete"),
        ("pytest_unconfigure", "tryfirst=True", "complete"),
    ],
)
def test_ctrl_c_during_session_finish_ends_as_a_cancelled_run(project: Path, pytester: pytest.Pytester, hook: str,
                                                               when: str, state: str) -> None:
    pytester.makeconftest(INTERRUPT_AT.format(hook=hook, when=when))
    proc = subprocess.run([sys.executable, "-m", "pytest", "--skill-eval", "groups/improves.json", "-p", "no:cacheprovider"],
                          cwd=project, capture_output=True, text=True, timeout=300, check=False)
    out = proc.stdout + proc.stderr
    assert proc.returncode == pytest.ExitCode.INTERRUPTED, out
    assert "Traceback" not in out, out
    assert "KeyboardInterrupt" in out
    assert read_json(only_result(project) / "result.json")["state"] == state


def test_skill_eval_run_interrupted_while_finishing_exits_as_cancelled(project: Path) -> None:
    (project / "conftest.py").write_text(
        "import os, signal\n\ndef pytest_sessionfinish(session):\n    os.kill(os.getpid(), signal.SIGINT)\n")
    done = subprocess.run([str(SKILL_EVAL), "run", "groups/improves.json"], cwd=project, env=dict(os.environ),
                          capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "Traceback" not in done.stdout + done.stderr


# ----------------------------------------------------------------------------- a full disk


@pytest.fixture
def small_disk(project: Path) -> Any:
    """``.skill-eval/runs`` on a 256 KiB tmpfs (needs root and mount rights, else skipped)."""
    runs = project / ".skill-eval" / "runs"
    runs.mkdir(parents=True)
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=256k", "tmpfs", str(runs)],
                             capture_output=True, text=True, check=False)
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a small tmpfs here: {mounted.stderr.strip()}")
    try:
        yield runs
    finally:
        subprocess.run(["umount", "-l", str(runs)], check=False)


def test_a_full_disk_is_reported_once_with_the_directory_and_free_space(project: Path, small_disk: Path) -> None:
    fixture = project / "fixtures" / "big"
    for i in range(200):
        write_json(fixture / f"file-{i:03d}.json", {"padding": "x" * 4000})
    group = read_json(project / "groups" / "improves.json")
    write_json(project / "groups" / "big.json", dict(group, id="big", fixture="fixtures/big"))
    proc = subprocess.run([sys.executable, "-m", "pytest", "--skill-eval", "groups/big.json", "-p", "no:cacheprovider"],
                          cwd=project, capture_output=True, text=True, timeout=300, check=False)
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0, out
    assert "Traceback" not in out
    lines = [line for line in out.splitlines() if "No space left on device" in line or "no space left" in line]
    assert lines, out
    # named once in the item's error (and pytest's short summary of it), not per file; the
    # stop reason and the unpublished-summary line point at the error instead of repeating it
    assert len(re.findall(r"file-\d{3}\.json", out)) <= 2, out
    assert len(out) < 6000, out
    assert any("free" in line and str(small_disk) in line for line in lines), out
