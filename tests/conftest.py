"""Shared fixtures: the real pi host (installed once per test session)."""

from __future__ import annotations

import pytest

from pytest_skill_eval.host.install import HostInstallation, resolve_host


@pytest.fixture(scope="session")
def pi_host() -> HostInstallation:
    """The managed pi host (installs it on first use); ``.node`` and ``.cli`` are Paths."""
    return resolve_host(install_if_missing=True)
