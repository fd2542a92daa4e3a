"""Shared fixtures: the real pi host (installed once per test session), and one real run of
``tests/views/suite`` that the view tests and the evidence record tests share."""

from __future__ import annotations

import importlib
import os
import pkgutil
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import psutil
import pytest

import pytest_skill_eval
from pytest_skill_eval.host.install import CACHE_ENV, HostInstallation, cache_dir, resolve_host

if TYPE_CHECKING:
    from views.conftest import StoredRun


def pytest_configure(config: pytest.Config) -> None:
    # pytester moves HOME into each test's directory; pin the cache first so every inner
    # run shares the one managed host install instead of installing it again.
    os.environ.setdefault(CACHE_ENV, str(cache_dir()))
    # every pi run of the suite is confined by the kernel (issue 27): CI, and any machine whose
    # kernel can, runs the inner runs with 'required', so a run that could not be confined fails
    # (Landlock for files, and the private network namespace, which rules the network)
    from pytest_skill_eval.engine.confine import netns_unavailable
    from pytest_skill_eval.host.landlock import abi_version

    if os.environ.get("CI") or (abi_version() >= 1 and not netns_unavailable()):
        os.environ.setdefault("SKILL_EVAL_CONFINEMENT", "required")
    # the inner runs would append their summaries to the CI job's own page
    os.environ.pop("GITHUB_STEP_SUMMARY", None)
    # pytester's in-process runs restore sys.modules afterwards, dropping every module the
    # inner run imported first; the next inner run then imports a second copy of it while
    # modules loaded earlier keep the first, so isinstance checks and class-keyed tables
    # disagree between copies (a test passed alone and failed after another). Importing the
    # whole package here puts every module in the snapshot, so there is only ever one copy.
    for module in pkgutil.walk_packages(pytest_skill_eval.__path__, "pytest_skill_eval."):
        if module.name != "pytest_skill_eval.__main__":
            importlib.import_module(module.name)


@pytest.fixture(scope="session")
def pi_host() -> HostInstallation:
    """The managed pi host (installs it on first use); ``.node`` and ``.cli`` are Paths."""
    return resolve_host(install_if_missing=True)


def _processes_in(scratch: Path) -> list[psutil.Process]:
    found = []
    for proc in psutil.process_iter():
        try:
            if proc.cwd().startswith(str(scratch)):
                found.append(proc)
        except (psutil.NoSuchProcess, psutil.AccessDenied, FileNotFoundError):
            continue
    return found


@pytest.fixture
def processes_in() -> Callable[[Path], list[psutil.Process]]:
    """Every live process whose working directory is under a scratch directory: the pi
    processes of the runs there (each variant runs pi in its own workspace)."""
    return _processes_in


@pytest.fixture(scope="session")
def stored_run(pi_host: object, tmp_path_factory: pytest.TempPathFactory) -> StoredRun:
    """The whole ``tests/views/suite`` run once; tests must not write into it (copy it first).

    Here rather than in tests/views/conftest.py (which holds the helpers) because
    tests/evidence/test_records.py reads it too, and a session fixture defined in two
    conftests would run the suite twice."""
    from views.conftest import copy_suite, run_suite

    run = run_suite(copy_suite(tmp_path_factory.mktemp("views") / "root"))
    # The errors group is a pytest error by design; the other two pass. The pre-run check
    # warns of the errors group's malformed expectations before anything runs.
    assert run.returncode == 1, run.output
    assert "2 passed, 3 warnings, 1 error" in run.output, run.output
    return run
