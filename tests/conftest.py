"""Shared fixtures: the real pi host (installed once per test session)."""

from __future__ import annotations

import os

import pytest

from pytest_skill_eval.host.install import CACHE_ENV, HostInstallation, cache_dir, resolve_host


def pytest_configure(config: pytest.Config) -> None:
    # pytester moves HOME into each test's directory; pin the cache first so every inner
    # run shares the one managed host install instead of installing it again.
    os.environ.setdefault(CACHE_ENV, str(cache_dir()))
    # the inner runs would append their summaries to the CI job's own page
    os.environ.pop("GITHUB_STEP_SUMMARY", None)


@pytest.fixture(scope="session")
def pi_host() -> HostInstallation:
    """The managed pi host (installs it on first use); ``.node`` and ``.cli`` are Paths."""
    return resolve_host(install_if_missing=True)
