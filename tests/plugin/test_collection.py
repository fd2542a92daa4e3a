"""Collection and selection: declared paths, node ids, -k, -m, group and variant selectors.

Nothing here runs a subject: ``--collect-only`` must not start a host or a model server.
"""

from __future__ import annotations

import shutil
import stat
from pathlib import Path

import psutil
import pytest

from .helpers import GROUPS, suite, write_json

QUICKSTART_IDS = ["suite.json::release-notes-activation", "suite.json::release-notes-body"]


def collected(result: pytest.RunResult) -> list[str]:
    return [line for line in result.outlines if "::" in line and not line.startswith(" ")]


def test_declared_suite_collects_one_item_per_group(project: Path, pytester: pytest.Pytester) -> None:
    result = pytester.runpytest("--skill-eval", "suite.json", "--collect-only", "-q")
    assert collected(result) == QUICKSTART_IDS
    assert result.ret == pytest.ExitCode.OK


def test_ini_paths_make_plain_pytest_collect_them(project: Path, pytester: pytest.Pytester) -> None:
    pytester.makeini("[pytest]\nskill_eval_paths = suite.json\n")
    result = pytester.runpytest("--collect-only", "-q")
    assert collected(result) == QUICKSTART_IDS


def test_option_replaces_ini_paths(project: Path, pytester: pytest.Pytester) -> None:
    pytester.makeini("[pytest]\nskill_eval_paths = suite.json\n")
    result = pytester.runpytest("--skill-eval", "policy.json", "--collect-only", "-q")
    assert collected(result) == ["policy.json::improves", "policy.json::regresses", "policy.json::stays-failing"]


def test_option_without_arguments_ignores_testpaths(project: Path, pytester: pytest.Pytester) -> None:
    pytester.makeini("[pytest]\ntestpaths = tests\n")
    pytester.makepyfile(**{"tests/test_ordinary": "def test_ordinary():\n    pass\n"})
    only_suite = pytester.runpytest("--skill-eval", "suite.json", "--collect-only", "-q")
    assert collected(only_suite) == QUICKSTART_IDS
    ordinary = pytester.runpytest("--collect-only", "-q")
    assert collected(ordinary) == ["tests/test_ordinary.py::test_ordinary"]
    both = pytester.runpytest("--skill-eval", "suite.json", "tests", "--collect-only", "-q")
    assert sorted(collected(both)) == sorted(["tests/test_ordinary.py::test_ordinary", *QUICKSTART_IDS])


def test_ini_paths_join_testpaths_but_not_explicit_arguments(project: Path, pytester: pytest.Pytester) -> None:
    pytester.makeini("[pytest]\ntestpaths = tests\nskill_eval_paths = suite.json\n")
    pytester.makepyfile(**{"tests/test_ordinary": "def test_ordinary():\n    pass\n"})
    plain = pytester.runpytest("--collect-only", "-q")
    assert sorted(collected(plain)) == sorted(["tests/test_ordinary.py::test_ordinary", *QUICKSTART_IDS])
    explicit = pytester.runpytest("tests/test_ordinary.py", "--collect-only", "-q")
    assert collected(explicit) == ["tests/test_ordinary.py::test_ordinary"]


def test_node_id_selects_one_group(project: Path, pytester: pytest.Pytester) -> None:
    result = pytester.runpytest("--skill-eval", "suite.json", "suite.json::release-notes-body", "--collect-only", "-q")
    assert collected(result) == ["suite.json::release-notes-body"]
    pytester.makeini("[pytest]\nskill_eval_paths = suite.json\n")
    via_ini = pytester.runpytest("suite.json::release-notes-activation", "--collect-only", "-q")
    assert collected(via_ini) == ["suite.json::release-notes-activation"]


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["-k", "body"], ["suite.json::release-notes-body"]),
        (["-k", "not body"], ["suite.json::release-notes-activation"]),
        (["-m", "skill_eval_body"], ["suite.json::release-notes-body"]),
        (["-m", "skill_eval_description"], ["suite.json::release-notes-activation"]),
        (["-m", "skill_eval"], QUICKSTART_IDS),
        (["--skill-eval-group", "2"], ["suite.json::release-notes-body"]),
        (["--skill-eval-group", "release-notes-activation"], ["suite.json::release-notes-activation"]),
    ],
)
def test_selection(project: Path, pytester: pytest.Pytester, args: list[str], expected: list[str]) -> None:
    result = pytester.runpytest("--skill-eval", "suite.json", *args, "--collect-only", "-q")
    assert collected(result) == expected


def test_deselecting_every_group_is_exit_5(project: Path, pytester: pytest.Pytester) -> None:
    result = pytester.runpytest("--skill-eval", "suite.json", "-m", "not skill_eval")
    assert result.ret == pytest.ExitCode.NO_TESTS_COLLECTED


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--skill-eval", "suite.json", "--skill-eval-group", "9"],
         "*--skill-eval-group 9 is out of range: suite \"quickstart\" has a position from 1 to 2*"),
        (["--skill-eval", "suite.json", "--skill-eval-group", "nope"],
         ('*--skill-eval-group "nope" matches no group of suite "quickstart": expected one of '
          '"release-notes-activation", "release-notes-body" or a position from 1 to 2*')),
        (["--skill-eval", "groups/improves.json", "--skill-eval-group", "1"],
         ("*--skill-eval-group selects a group of a suite; *improves.json is a group definition: "
          "drop --skill-eval-group, or run a suite that lists it*")),
        (["--skill-eval", "suite.json", "--skill-eval", "policy.json", "--skill-eval-group", "1"],
         ("*--skill-eval-group selects a group of one suite, but the run declares *: declare one suite file, "
          "or select across suites with -k <group-id>*")),
        (["--skill-eval-group", "1"], "*--skill-eval-group needs a suite or group: add --skill-eval PATH*"),
        (["--skill-eval-variant", "candidate"], "*--skill-eval-variant needs a suite or group*"),
        (["--skill-eval", "missing.json"], "*--skill-eval missing.json: no such file or directory*"),
        (["--skill-eval", "scripts/release-notes-body.json"],
         "*--skill-eval scripts/release-notes-body.json: not a suite or group definition*"),
    ],
)
def test_usage_errors(project: Path, pytester: pytest.Pytester, args: list[str], message: str) -> None:
    result = pytester.runpytest(*args, "--collect-only")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([message])


def test_a_group_file_with_a_json_syntax_error_gets_the_located_error_check_gives(
        project: Path, pytester: pytest.Pytester) -> None:
    from pytest_skill_eval.services.check import check_path

    broken = project / "groups" / "broken.json"
    broken.write_text('{\n  "schema_version": 1,\n  "kind": "group",\n  "id": "x",\n}\n')
    result = pytester.runpytest("--skill-eval", "groups/broken.json", "--collect-only")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    located = (f"{broken}: /: expected JSON, found invalid JSON at line 5 column 1: "
               "Expecting property name enclosed in double quotes")
    result.stderr.fnmatch_lines([f"*--skill-eval groups/broken.json: not a suite or group definition: {located}"])
    report, ok = check_path(Path("groups/broken.json"), project)
    assert not ok and f"  error {located}" in report.splitlines()
    # a file that is JSON but not a definition still says what a definition declares
    (project / "groups" / "data.json").write_text('{"a": 1}')
    result = pytester.runpytest("--skill-eval", "groups/data.json", "--collect-only")
    result.stderr.fnmatch_lines(['*--skill-eval groups/data.json: not a suite or group definition (expected a JSON '
                                 'object with "schema_version" and "kind": "suite" or "group")'])


def test_invalid_fail_on_in_ini_is_a_usage_error(project: Path, pytester: pytest.Pytester) -> None:
    pytester.makeini("[pytest]\nskill_eval_fail_on = sometimes\n")
    result = pytester.runpytest("--skill-eval", "suite.json", "--collect-only")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*skill_eval_fail_on: 'sometimes' is not a valid policy. Valid policies: "
                                 + "candidate, regression, any, never*"])


def test_hidden_suite_directory_and_unrelated_json(project: Path, pytester: pytest.Pytester) -> None:
    hidden = project / ".skill-eval" / "release-notes"
    hidden.mkdir(parents=True)
    write_json(hidden / "suite.json", suite("hidden", ["../../groups/improves.json"]))
    write_json(hidden / "notes.json", {"kind": "notes", "schema_version": 1})  # not a definition
    write_json(hidden / "lone-group.json", GROUPS["regresses"])  # groups are collected through suites
    # the evidence tree is never collected, even when it holds definition-like files
    write_json(project / ".skill-eval" / "runs" / "old" / "suite.json", suite("stale", ["x.json"]))
    by_file = pytester.runpytest("--skill-eval", ".skill-eval/release-notes/suite.json", "--collect-only", "-q")
    assert collected(by_file) == [".skill-eval/release-notes/suite.json::improves"]
    by_dir = pytester.runpytest("--skill-eval", ".skill-eval", "--collect-only", "-q")
    assert collected(by_dir) == [".skill-eval/release-notes/suite.json::improves"]
    assert by_dir.ret == pytest.ExitCode.OK


def test_declared_directory_collects_only_suites(project: Path, pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_ordinary="def test_ordinary():\n    pass\n")
    result = pytester.runpytest("--skill-eval", ".", "--collect-only", "-q")
    ids = collected(result)
    assert ids == [
        "errors.json::missing-script", "errors.json::grade-error", "errors.json::improves",
        "policy.json::improves", "policy.json::regresses", "policy.json::stays-failing",
        *QUICKSTART_IDS,
    ]


def test_group_file_positions_continue_across_definitions(project: Path, pytester: pytest.Pytester) -> None:
    result = pytester.runpytest("--skill-eval", "suite.json", "--skill-eval", "groups/improves.json",
                                "--collect-only", "-v")
    result.stdout.fnmatch_lines(["suite.json::release-notes-activation", "    position 1, *",
                                 "suite.json::release-notes-body", "    position 2, *",
                                 "groups/improves.json::improves", "    position 3, *"])


def test_broken_group_is_an_error_of_its_entry_only(project: Path, pytester: pytest.Pytester) -> None:
    broken = dict(GROUPS["improves"], id="broken")
    del broken["tools"]
    write_json(project / "groups" / "broken.json", broken)
    write_json(project / "mixed.json", suite("mixed", ["groups/broken.json", "groups/improves.json"]))
    listing = pytester.runpytest("--skill-eval", "mixed.json", "--collect-only", "-q")
    assert collected(listing) == ["mixed.json::groups/broken.json", "mixed.json::improves"]
    result = pytester.runpytest("--skill-eval", "mixed.json", "-k", "broken")
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["*groups/broken.json: /tools: expected*"])
    result.stdout.no_fnmatch_line("*Traceback*")


def test_broken_suite_is_a_collection_error_without_traceback(project: Path, pytester: pytest.Pytester) -> None:
    write_json(project / "bad-suite.json", {"schema_version": 1, "kind": "suite", "id": "bad", "groups": []})
    result = pytester.runpytest("--skill-eval", "bad-suite.json")
    assert result.ret == pytest.ExitCode.INTERRUPTED
    result.stdout.fnmatch_lines(["*bad-suite.json: /groups: *"])
    result.stdout.no_fnmatch_line("*Traceback*")


def _fake_host(root: Path) -> tuple[Path, Path]:
    """A 'pi' that records being started (resolving a host runs it to read the version)."""
    marker = root / "host-started"
    cli = root / "fake-pi"
    cli.write_text(f"#!/bin/sh\ntouch {marker}\necho 1.6.0\n", encoding="utf-8")
    cli.chmod(cli.stat().st_mode | stat.S_IXUSR)
    return cli, marker


def _listening_ports() -> set[int]:
    return {c.laddr.port for c in psutil.Process().net_connections(kind="tcp") if c.status == psutil.CONN_LISTEN}


def test_collect_only_shows_variants_and_starts_nothing(project: Path, pytester: pytest.Pytester) -> None:
    cli, marker = _fake_host(project)
    before = _listening_ports()
    result = pytester.runpytest("--skill-eval", "suite.json", "--skill-eval-variant", "candidate",
                                "--skill-eval-host", str(cli), "--collect-only", "-v")
    assert result.ret == pytest.ExitCode.OK
    result.stdout.fnmatch_lines([
        "*<SkillEvalFile suite.json>",
        "*<SkillEvalItem release-notes-activation description: baseline (not-selected), candidate>",
        "*<SkillEvalItem release-notes-body body: baseline (not-selected), candidate>",
        "*skill-eval plan*",
        "2 group(s) × 1 variant(s) × 1 trial(s) = 2 pi run(s); models: scripted/release-notes-activation, "
        "scripted/release-notes-body",
        "suite.json::release-notes-body",
        "    position 2, body group, 2 turn(s), model scripted/release-notes-body, tools: read, write, edit",
        "    baseline   not-selected: *",
        "    candidate  selected: 1 skill(s) from the working tree, target skills/release-notes",
    ])
    assert not marker.exists(), "collecting started the pi host"
    assert _listening_ports() == before, "collecting started a model server"
    assert not (project / ".skill-eval").exists(), "collecting wrote evidence"
    host_processes = [p for p in psutil.Process().children(recursive=True) if str(cli) in " ".join(p.cmdline())]
    assert host_processes == [], "collecting left a host process running"


def test_collection_ignores_json_outside_declared_paths(project: Path, pytester: pytest.Pytester) -> None:
    # a definition that is not declared stays an ordinary file: pytest finds nothing to run in it
    result = pytester.runpytest("--skill-eval", "suite.json", "policy.json", "--collect-only", "-q")
    assert "policy.json::improves" not in collected(result)
    result.stderr.fnmatch_lines(["ERROR: not found: *policy.json"])


def test_a_repeated_group_id_is_one_broken_item_worded_as_the_loader_words_it(project: Path, pytester: pytest.Pytester) -> None:
    """Collection and ``load_suite_groups`` refuse a repeated id in the same words, and only
    the later entry is refused: the first still collects and runs."""
    shutil.copy(project / "groups" / "improves.json", project / "groups" / "improves-again.json")
    write_json(project / "twice.json", suite("twice", ["groups/improves.json", "groups/improves-again.json"]))
    result = pytester.runpytest("--skill-eval", "twice.json", "--collect-only", "-q")
    assert collected(result) == ["twice.json::improves", "twice.json::groups/improves-again.json"]
    run = pytester.runpytest("--skill-eval", "twice.json", "-k", "improves-again", "-p", "no:cacheprovider")
    run.stdout.fnmatch_lines(['*twice.json: /groups/1: expected a group whose id no earlier group uses, found id "improves"'
                              ' again (first in "groups/improves.json" at /groups/0)*'])


def test_collect_only_counts_the_pi_runs_trials_will_make(project: Path, pytester: pytest.Pytester) -> None:
    result = pytester.runpytest("--skill-eval", "suite.json", "--skill-eval-trials", "5", "--collect-only", "-v")
    assert result.ret == pytest.ExitCode.OK
    result.stdout.fnmatch_lines(["2 group(s) × 2 variant(s) × 5 trial(s) = 20 pi run(s); models: *"])
