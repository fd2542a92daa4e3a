"""``skill-eval check`` checks what a run would check, without starting a host.

Sources are resolved by the code a run uses (working-tree snapshot rules, exact Git
commits), expectation shapes and enum values suggest the closest valid value, and each
non-scripted provider is checked for a credential. Real files and real Git repositories.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from pytest_skill_eval.services.check import check_path

from .conftest import copy_suite

BODY = Path("groups/release-notes-body.json")


def git(root: Path, *args: str) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com"}
    return subprocess.run(["git", *args], cwd=root, check=True, capture_output=True, text=True, env=env).stdout.strip()


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return copy_suite(tmp_path / "root")


def _edit(path: Path, change: Any) -> None:
    data = json.loads(path.read_text())
    change(data)
    path.write_text(json.dumps(data, indent=2))


def _lines(report: str, mark: str) -> list[str]:
    return [line for line in report.splitlines() if line.startswith(f"  {mark} ")]


# -- sources, exactly as a run snapshots them ------------------------------------------------


def test_fixture_symlink_leaving_the_snapshot_is_a_problem_as_in_a_run(root: Path) -> None:
    (root / "outside.md").write_text("not part of the fixture")
    (root / "fixtures" / "change" / "link.md").symlink_to(root / "outside.md")
    report, ok = check_path(BODY, root)
    assert not ok, report
    (line,) = [line for line in _lines(report, "error") if "fixture" in line]
    assert "/fixture" in line
    assert "link.md is a symlink that leaves the snapshot" in line


def test_fixture_symlink_to_a_directory_is_a_problem_as_in_a_run(root: Path) -> None:
    (root / "fixtures" / "change" / "sub").mkdir()
    (root / "fixtures" / "change" / "alias").symlink_to(root / "fixtures" / "change" / "sub")
    report, ok = check_path(BODY, root)
    assert not ok, report
    assert "alias is a symlink to a directory (unsupported)" in report


def test_skill_symlink_leaving_the_snapshot_is_a_problem(root: Path) -> None:
    (root / "elsewhere.md").write_text("x")
    (root / "skills" / "release-notes" / "extra.md").symlink_to(root / "elsewhere.md")
    report, ok = check_path(BODY, root)
    assert not ok, report
    (line,) = [line for line in _lines(report, "error") if "candidate skill 0" in line]
    assert "/variants/candidate/skills/0" in line and "extra.md is a symlink that leaves the snapshot" in line


def test_git_ref_is_resolved_and_paths_are_checked_in_the_commit(root: Path) -> None:
    git(root, "init", "-q")
    git(root, "add", ".")
    git(root, "commit", "-qm", "v1")
    git(root, "tag", "v1")
    commit = git(root, "rev-parse", "HEAD")
    _edit(root / BODY, lambda d: d["variants"]["baseline"].update(source={"kind": "git", "ref": "v1"}))
    report, ok = check_path(BODY, root)
    assert ok, report
    (line,) = [line for line in _lines(report, "ok") if "baseline source" in line]
    assert f"git ref v1 resolves to commit {commit[:12]}" in line
    assert "  ok    baseline skill 0" in report

    _edit(root / BODY, lambda d: d["variants"]["baseline"].update(skills=["skills/not-in-v1"]))
    report, ok = check_path(BODY, root)
    assert not ok
    (line,) = [line for line in _lines(report, "error") if "baseline skill 0" in line]
    assert "/variants/baseline/skills/0" in line and "skills/not-in-v1: not found in commit" in line


def test_git_ref_that_does_not_resolve(root: Path) -> None:
    git(root, "init", "-q")
    git(root, "add", ".")
    git(root, "commit", "-qm", "v1")
    _edit(root / BODY, lambda d: d["variants"]["baseline"].update(source={"kind": "git", "ref": "no-such-tag"}))
    report, ok = check_path(BODY, root)
    assert not ok
    (line,) = [line for line in _lines(report, "error") if "baseline source" in line]
    assert "/variants/baseline/source/ref" in line and "ref 'no-such-tag' does not resolve to a commit" in line


def test_git_source_outside_a_repository(root: Path) -> None:
    _edit(root / BODY, lambda d: d["variants"]["baseline"].update(source={"kind": "git", "ref": "v1"}))
    report, ok = check_path(BODY, root)
    assert not ok
    assert "is not inside a Git repository" in report


def test_missing_inherited_variable_is_a_problem(root: Path) -> None:
    _edit(root / BODY, lambda d: d.update(runtime={"host": "pi", "session": False, "extensions": [],
                                                    "environment": {"literal": {}, "inherit": ["MY_SERVICE_TOKEN"]}}))
    report, ok = check_path(BODY, root, env={})
    assert not ok
    (line,) = [line for line in _lines(report, "error") if "MY_SERVICE_TOKEN" in line]
    assert "/runtime/environment/inherit/0" in line and "not set" in line
    report, ok = check_path(BODY, root, env={"MY_SERVICE_TOKEN": "s3cr3t-value-42x"})
    assert ok, report
    assert "s3cr3t-value-42x" not in report


def test_path_missing_under_the_definition_root_but_present_under_an_ancestor(root: Path) -> None:
    sub = root / "evals"
    sub.mkdir()
    (root / "suite.json").rename(sub / "suite.json")
    (root / "groups").rename(sub / "groups")
    (root / "scripts").rename(sub / "scripts")
    git(root, "init", "-q")
    report, ok = check_path(BODY, sub)
    assert not ok
    (line,) = [line for line in _lines(report, "error") if "candidate skill 0" in line]
    assert f"not found under the definition root {sub} (the current directory)" in line
    assert f"it exists under {root}: run from there" in line
    assert "commit" not in report


# -- did you mean ---------------------------------------------------------------------------


def test_expectation_enum_values_and_fields_suggest_the_closest(root: Path) -> None:
    def change(d: dict[str, Any]) -> None:
        d["expectations"][0]["expect"] = "exist"
        d["expectations"][2]["surface"] = "system_prompt"
        d["expectations"][4]["argumentContain"] = ["CHANGE.md"]

    _edit(root / BODY, change)
    report, ok = check_path(BODY, root)
    assert not ok
    assert '/expectations/0/expect: expected one of "exists", "absent", found "exist" (did you mean "exists"?)' in report
    assert '/expectations/2/surface: expected no such field on a json expectation' in report
    assert '/expectations/4/argumentContain: expected no such field on a tool-call expectation' in report
    assert '(did you mean "argumentContains"?)' in report


def test_expectation_kind_typo_is_a_load_error_with_a_suggestion(root: Path) -> None:
    _edit(root / BODY, lambda d: d["expectations"][1].update(kind="paht"))
    report, ok = check_path(BODY, root)
    assert not ok
    assert 'found "paht" (did you mean "path"?)' in report


def test_definition_enum_values_suggest_the_closest(root: Path) -> None:
    _edit(root / BODY, lambda d: d.update(type="bodyy"))
    report, ok = check_path(BODY, root)
    assert not ok
    assert '/type: expected one of "description", "body", found "bodyy" (did you mean "body"?)' in report


# -- models and credentials -----------------------------------------------------------------


def test_non_scripted_provider_without_a_credential(root: Path) -> None:
    _edit(root / BODY, lambda d: d.update(model={"model": "anthropic/claude-sonnet-4-5"}))
    report, ok = check_path(BODY, root, env={"ANTHROPIC_API_KEY": "sk-ant-not-inherited-0123"})
    assert not ok
    (line,) = [line for line in _lines(report, "error") if "model anthropic/claude-sonnet-4-5" in line]
    assert "/model/model" in line
    assert "provider anthropic gets no credential" in line
    assert "runtime.environment.inherit" in line and "ANTHROPIC_API_KEY" in line and "--skill-eval-auth" in line
    assert "sk-ant-not-inherited-0123" not in report


def test_non_scripted_provider_with_an_inherited_key(root: Path) -> None:
    _edit(root / BODY, lambda d: d.update(
        model={"model": "anthropic/claude-sonnet-4-5"},
        runtime={"host": "pi", "session": False, "extensions": [],
                 "environment": {"literal": {}, "inherit": ["ANTHROPIC_API_KEY"]}}))
    report, ok = check_path(BODY, root, env={"ANTHROPIC_API_KEY": "sk-ant-inherited-value-0123"})
    assert ok, report
    (line,) = [line for line in _lines(report, "ok") if "model anthropic/claude-sonnet-4-5" in line]
    assert "credential from inherited ANTHROPIC_API_KEY" in line
    assert "sk-ant-inherited-value-0123" not in report


def test_non_scripted_provider_with_an_auth_file(root: Path, tmp_path: Path) -> None:
    auth = tmp_path / "auth.json"
    auth.write_text(json.dumps({"anthropic": {"type": "api_key", "key": "sk-ant-from-auth-file-0123"}}))
    _edit(root / BODY, lambda d: d.update(model={"model": "anthropic/claude-sonnet-4-5"}))
    report, ok = check_path(BODY, root, env={}, auth_file=auth)
    assert ok, report
    assert "credential from --skill-eval-auth" in report
    assert "sk-ant-from-auth-file-0123" not in report


def test_custom_provider_from_models_file(root: Path, tmp_path: Path) -> None:
    models = tmp_path / "models.json"
    models.write_text(json.dumps({"providers": {
        "local": {"baseUrl": "http://127.0.0.1:9/v1", "api": "openai-completions", "apiKey": "$LOCAL_KEY", "models": []},
        "open": {"baseUrl": "http://127.0.0.1:9/v1", "api": "openai-completions", "apiKey": "literal-key", "models": []}}}))
    _edit(root / BODY, lambda d: d.update(model={"model": "local/m"}))
    report, ok = check_path(BODY, root, env={"LOCAL_KEY": "x" * 20}, user_models=models)
    assert not ok
    assert "provider local gets no credential" in report and "LOCAL_KEY" in report
    _edit(root / BODY, lambda d: d.update(model={"model": "open/m"}))
    report, ok = check_path(BODY, root, env={}, user_models=models)
    assert ok, report


def test_omitted_model_says_it_means_the_hosts_default(root: Path) -> None:
    _edit(root / BODY, lambda d: d.pop("model"))
    report, ok = check_path(BODY, root, env={})
    assert not ok
    (line,) = [line for line in _lines(report, "error") if "model (omitted)" in line]
    assert "pi's own default" in line and "not the scripted stand-in" in line
    assert "no provider gets a credential" in line

    _edit(root / BODY, lambda d: d.update(runtime={"host": "pi", "session": False, "extensions": [],
                                                    "environment": {"literal": {}, "inherit": ["OPENAI_API_KEY"]}}))
    report, ok = check_path(BODY, root, env={"OPENAI_API_KEY": "sk-openai-inherited-0123"})
    assert ok, report
    (line,) = [line for line in _lines(report, "ok") if "model (omitted)" in line]
    assert "pi's own default" in line and "openai" in line


def test_cli_passes_auth_and_models_files(root: Path, tmp_path: Path) -> None:
    auth = tmp_path / "auth.json"
    auth.write_text(json.dumps({"anthropic": {"type": "api_key", "key": "sk-ant-from-auth-file-0123"}}))
    _edit(root / BODY, lambda d: d.update(model={"model": "anthropic/claude-sonnet-4-5"}))

    def check(*extra: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "pytest_skill_eval", "check", str(BODY), *extra],
                              cwd=root, capture_output=True, text=True, env={"PATH": os.environ["PATH"]}, check=False)

    assert check().returncode == 1
    good = check("--skill-eval-auth", str(auth))
    assert good.returncode == 0, good.stdout + good.stderr
