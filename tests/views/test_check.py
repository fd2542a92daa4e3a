"""``skill-eval check``: definitions checked without running anything."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from pytest_skill_eval.services.check import Finding, GroupReport, check_path, render_report

from .conftest import assert_snapshot, copy_suite


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return copy_suite(tmp_path / "root")


def _edit(path: Path, change: Any) -> None:
    data = json.loads(path.read_text())
    change(data)
    path.write_text(json.dumps(data, indent=2))


def test_valid_group(root: Path) -> None:
    report, ok = check_path(Path("groups/release-notes-body.json"), root)
    assert ok, report
    assert report.startswith("check groups/release-notes-body.json: group release-notes-body\n")
    assert "  ok    model scripted/release-notes-body  script scripts/release-notes-body.json parses (2 turns)\n" in report
    assert "  ok    fixture                            fixtures/change\n" in report
    assert report.endswith("\nno problems found\n")


def test_suite_lists_what_would_become_grade_errors(root: Path) -> None:
    report, ok = check_path(Path("suite.json"), root)
    assert not ok
    assert_snapshot("check-suite", report.replace(str(root), "<ROOT>"))


def test_absolute_path(root: Path) -> None:
    report, ok = check_path(root / "groups" / "release-notes-activation.json", root)
    assert ok, report
    assert report.startswith("check groups/release-notes-activation.json: group release-notes-activation\n")


@pytest.mark.parametrize(
    ("text", "message", "count"),
    [
        ("{ not json", "expected JSON, found invalid JSON at line 1", "1 problem"),
        # every missing required field is its own problem, and the summary counts each
        ('{"schema_version": 1, "kind": "group"}', '/id: expected', "8 problems"),
        ('{"schema_version": 1, "kind": "other"}', '/kind: expected one of "group", "suite"', "1 problem"),
    ],
)
def test_definition_that_does_not_load(root: Path, text: str, message: str, count: str) -> None:
    (root / "broken.json").write_text(text)
    report, ok = check_path(Path("broken.json"), root)
    assert not ok
    assert report.startswith("check broken.json: does not load\n  error ")
    assert message in report
    assert report.count("\n  error ") == int(count.split()[0])
    assert report.endswith(f"\n{count} found\n")


def test_missing_definition(root: Path) -> None:
    report, ok = check_path(Path("nothere.json"), root)
    assert not ok
    assert "expected a readable file" in report


def test_suite_with_one_broken_group_still_checks_the_others(root: Path) -> None:
    (root / "groups" / "release-notes-body.json").write_text('{"schema_version": 1, "kind": "group", "id": "Bad"}')
    report, ok = check_path(Path("suite.json"), root)
    assert not ok
    assert "\ngroup 2 groups/release-notes-body.json\n  error " in report
    assert "group 1 release-notes-activation (groups/release-notes-activation.json)\n  ok " in report
    assert "group 3 release-notes-errors (groups/release-notes-errors.json)" in report


def test_suite_with_duplicate_group_ids(root: Path) -> None:
    _edit(root / "groups" / "release-notes-errors.json", lambda d: d.update(id="release-notes-body"))
    report, ok = check_path(Path("suite.json"), root)
    assert not ok
    assert 'found id "release-notes-body" again' in report


def test_missing_and_malformed_scripts(root: Path) -> None:
    (root / "scripts" / "release-notes-body.json").unlink()
    report, ok = check_path(Path("groups/release-notes-body.json"), root)
    assert not ok
    assert "  error model scripted/release-notes-body  /model/model: no script for model 'scripted/release-notes-body': looked for " in report

    (root / "scripts" / "release-notes-body.json").write_text('{"schema": "skill-eval-script/1", "turns": "no"}')
    report, ok = check_path(Path("groups/release-notes-body.json"), root)
    assert not ok
    assert "script scripts/release-notes-body.json does not parse: " in report
    assert "/turns" in report


def test_missing_working_tree_paths(root: Path) -> None:
    (root / "skills" / "release-notes" / "SKILL.md").unlink()
    _edit(
        root / "groups" / "release-notes-body.json",
        lambda d: (d.update(fixture="fixtures/gone"), d["variants"]["baseline"].update(context=["context/none.md"])),
    )
    report, ok = check_path(Path("groups/release-notes-body.json"), root)
    assert not ok
    assert "  error fixture" in report and "fixtures/gone: not found under the definition root" in report
    assert "  error baseline context 0" in report and "context/none.md: not found" in report
    assert "  error candidate skill 0" in report and "skill 'skills/release-notes' (index 0) has no SKILL.md" in report
    assert report.endswith("\n3 problems found\n")


def test_provider_pi_resolves_itself_is_not_checked(root: Path) -> None:
    _edit(root / "groups" / "release-notes-body.json", lambda d: d.update(model={"model": "some-oauth-provider/some-model"}))
    report, ok = check_path(Path("groups/release-notes-body.json"), root)
    assert ok, report
    assert "  skip  model some-oauth-provider/some-model" in report
    assert "not checked: pi resolves provider some-oauth-provider at run time" in report


def test_cli_exit_codes(root: Path) -> None:
    def check(target: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "pytest_skill_eval", "check", target], cwd=root, capture_output=True, text=True
        )

    good, bad = check("groups/release-notes-body.json"), check("suite.json")
    assert (good.returncode, bad.returncode) == (0, 1)
    assert good.stdout.endswith("no problems found\n")
    assert bad.stdout.endswith("3 problems found\n")


def test_render_report_is_pure() -> None:
    report, ok = render_report(
        "g.json",
        "group g",
        [GroupReport("group g", (Finding(True, "a", "fine"), Finding(None, "longer", "not checked"), Finding(False, "b", "broken")))],
    )
    assert not ok
    assert report == (
        "check g.json: group g\n"
        "\n"
        "group g\n"
        "  ok    a       fine\n"
        "  skip  longer  not checked\n"
        "  error b       broken\n"
        "\n"
        "1 problem found\n"
    )


def test_check_prints_the_plan_a_run_would_start(root: Path) -> None:
    report, _ok = check_path(Path("suite.json"), root)
    assert report.splitlines()[1] == (
        "plan: 3 group(s) × 2 variant(s) × 1 trial(s) = 6 pi run(s); models: scripted/release-notes-activation, "
        "scripted/release-notes-body, scripted/release-notes-errors")
    _edit(root / "groups" / "release-notes-body.json", lambda d: d.pop("model"))
    report, _ok = check_path(Path("suite.json"), root, variants=1, trials=5)
    assert report.splitlines()[1] == (
        "plan: 3 group(s) × 1 variant(s) × 5 trial(s) = 15 pi run(s); models: pi's default, "
        "scripted/release-notes-activation, scripted/release-notes-errors")
    (root / "groups" / "release-notes-body.json").write_text('{"schema_version": 1, "kind": "group", "id": "Bad"}')
    report, _ok = check_path(Path("suite.json"), root)
    assert report.splitlines()[1].endswith("= 4 pi run(s); models: scripted/release-notes-activation, "
                                           "scripted/release-notes-errors (1 group(s) that do not load are not counted)")


def test_check_plan_is_the_collect_only_plan_line(root: Path) -> None:
    """``skill-eval check --variant … --skill-eval-trials N`` and ``pytest --collect-only -v`` with
    the same selection print the same plan line (one function makes both)."""
    check = subprocess.run([sys.executable, "-m", "pytest_skill_eval", "check", "suite.json", "--variant", "candidate",
                            "--skill-eval-trials", "3"], cwd=root, capture_output=True, text=True, check=False)
    plan = check.stdout.splitlines()[1].removeprefix("plan: ")
    assert plan.startswith("3 group(s) × 1 variant(s) × 3 trial(s) = 9 pi run(s); models: "), check.stdout
    collect = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "--skill-eval", "suite.json",
                              "--skill-eval-variant", "candidate", "--skill-eval-trials", "3", "--collect-only", "-v"],
                             cwd=root, capture_output=True, text=True, check=False)
    assert plan in collect.stdout.splitlines(), collect.stdout
    bad = subprocess.run([sys.executable, "-m", "pytest_skill_eval", "check", "suite.json", "--skill-eval-trials", "0"],
                         cwd=root, capture_output=True, text=True, check=False)
    assert bad.returncode != 0 and "at least 1" in bad.stderr
