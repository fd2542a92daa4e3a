"""The plugin tests' definition root: the quickstart suite plus the groups in ``helpers``."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from pytest_skill_eval.host.install import CACHE_ENV

from .helpers import GROUPS, HOST_CACHE, QUICKSTART, suite, write_json


@pytest.fixture
def project(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The quickstart definition root with extra groups and suites, as the pytester directory.

    pytester moves HOME; the inner runs keep using the one managed host install.
    """
    monkeypatch.setenv(CACHE_ENV, str(HOST_CACHE))
    shutil.copytree(QUICKSTART, pytester.path, dirs_exist_ok=True,
                    ignore=shutil.ignore_patterns(".skill-eval", ".pytest_cache", "pytest.ini", "__pycache__"))
    for group_id, group in GROUPS.items():
        write_json(pytester.path / "groups" / f"{group_id}.json", group)
    write_json(pytester.path / "policy.json", suite("policy", [
        "groups/improves.json", "groups/regresses.json", "groups/stays-failing.json"]))
    write_json(pytester.path / "errors.json", suite("errors", [
        "groups/missing-script.json", "groups/grade-error.json", "groups/improves.json"]))
    return pytester.path
