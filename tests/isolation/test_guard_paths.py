"""The guard's path resolver, unit-tested with node against pi's own resolution functions."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from pytest_skill_eval.host.install import HostInstallation
from pytest_skill_eval.host.launch import bundled_extension

pytestmark = pytest.mark.pi


def test_guard_resolves_every_path_form_exactly_as_pi_and_refuses_what_escapes(pi_host: HostInstallation) -> None:
    path_utils = Path(pi_host.node).parent.parent / "@earendil-works" / "pi-coding-agent" / "dist" / "core" / "tools" / "path-utils.js"
    assert path_utils.is_file(), "pinned pi host without its path-utils module"
    script = Path(__file__).parent / "node" / "guard_paths_test.mjs"
    proc = subprocess.run([str(pi_host.node), str(script), str(bundled_extension("guard-paths.mjs")), str(path_utils)],
                          check=False, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("ok "), proc.stdout
