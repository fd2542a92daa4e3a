"""Host resolution against real processes: the version floor and missing npm."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from pytest_skill_eval.errors import HostError
from pytest_skill_eval.host import install


def test_refuses_a_host_older_than_the_floor(tmp_path: Path, pi_host: install.HostInstallation) -> None:
    old = tmp_path / "pi.js"
    old.write_text('console.log("0.73.2")\n')
    with pytest.raises(HostError, match=r"pi 0\.73\.2 at .* is older than the supported floor 1\.6\.0; run `skill-eval host install`"):
        install.probe_version(pi_host.node, old)


def test_explicit_prefix_is_used_and_reports_its_version(pi_host: install.HostInstallation) -> None:
    prefix = pi_host.cli.parents[2]
    found = install.resolve_host(prefix)
    assert found.cli == pi_host.cli and found.version == pi_host.version and not found.managed


def test_explicit_location_that_holds_no_pi(tmp_path: Path) -> None:
    with pytest.raises(HostError, match="pi host not found at .*: expected an npm prefix containing node_modules/.bin/pi"):
        install.from_explicit(tmp_path)


def test_missing_npm_gives_one_clear_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(install.CACHE_ENV, str(tmp_path / "cache"))
    monkeypatch.delenv(install.HOST_ENV, raising=False)
    monkeypatch.delenv(install.NO_INSTALL_ENV, raising=False)
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    with pytest.raises(HostError, match="npm and node are not on PATH. Install Node.js .* or point --skill-eval-host"):
        install.resolve_host(progress=lambda _m: None)


def test_no_install_says_how_to_install(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(install.CACHE_ENV, str(tmp_path / "cache"))
    monkeypatch.delenv(install.HOST_ENV, raising=False)
    with pytest.raises(HostError, match="the pi host is not installed .*; run `skill-eval host install`"):
        install.resolve_host(install_if_missing=False)


def test_managed_prefix_is_keyed_by_the_lock_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(install.CACHE_ENV, str(tmp_path))
    prefix = install.managed_prefix()
    assert prefix.parent == tmp_path / "host"
    assert prefix.name.startswith(f"pi-{install.pinned_version()}-")
    assert os.path.basename(prefix) == prefix.name
