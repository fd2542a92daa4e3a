"""Errors a newcomer can act on: where the definition root is, and what to name."""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

import pytest

from .helpers import (
    AFTER,
    BEFORE,
    description_group,
    only_result,
    read_json,
    reads_skill,
    suite,
    write_json,
)

ARGS = ("-p", "no:cacheprovider")


def _git(root: Path, *args: str) -> None:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com"}
    subprocess.run(["git", *args], cwd=root, check=True, capture_output=True, env=env)


@pytest.mark.pi
def test_path_under_an_ancestor_says_to_run_from_there(pytester: pytest.Pytester, project: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    # the definitions live in evals/, the skills at the repository top: run from evals/ by mistake
    evals = project / "evals"
    write_json(evals / "groups" / "improves.json", description_group("improves", BEFORE, AFTER, reads_skill()))
    (evals / "groups" / "scripts").mkdir()
    (project / "scripts" / "release-notes-activation.json").rename(evals / "groups" / "scripts" / "release-notes-activation.json")
    _git(project, "init", "-q")
    _git(project, "add", ".")
    _git(project, "commit", "-qm", "defs")
    monkeypatch.chdir(evals)
    result = pytester.runpytest_subprocess("--skill-eval", "groups/improves.json", "-W", "default", *ARGS)
    result.assert_outcomes(errors=1)
    run = read_json(only_result(evals) / "groups" / "001-improves" / "candidate" / "run.json")
    reason = run["reason"]
    assert f"release-notes: not found under the definition root {evals} (the current directory)" in reason
    assert f"it exists under {project}: run from there" in reason
    assert "commit" not in reason and not re.search(r"\b[0-9a-f]{12,40}\b", reason)


def test_directory_of_group_files_without_a_suite(pytester: pytest.Pytester, project: Path) -> None:
    result = pytester.runpytest_subprocess("--skill-eval", "groups", *ARGS)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    err = result.stderr.str()
    assert "--skill-eval groups: a directory contributes the suite files inside it, and groups holds none" in err
    assert "found 7 group definitions (groups/grade-error.json, groups/improves.json" in err
    assert "name a group file (--skill-eval groups/grade-error.json) or a suite that lists them" in err


def test_directory_without_any_definition(pytester: pytest.Pytester, project: Path) -> None:
    (project / "empty" / "sub").mkdir(parents=True)
    (project / "empty" / "sub" / "data.json").write_text(json.dumps({"not": "a definition"}))
    result = pytester.runpytest_subprocess("--skill-eval", "empty", *ARGS)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "--skill-eval empty: found no suite or group definition in it" in result.stderr.str()


def test_directory_with_a_suite_still_collects(pytester: pytest.Pytester, project: Path) -> None:
    write_json(project / "evals" / "one.json", suite("one", ["../groups/improves.json"]))
    result = pytester.runpytest_subprocess("--skill-eval", "evals", "--collect-only", "-q", *ARGS)
    assert result.ret == pytest.ExitCode.OK, result.stdout.str() + result.stderr.str()
