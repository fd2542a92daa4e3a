"""Private scratch: 0700 root, per-run directories swept once their owner is gone."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

import psutil
import pytest

from pytest_skill_eval.sources import scratch


@pytest.fixture
def tmp_root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    # scratch resolves its root through the tempfile module; patch that module's default directory
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    return tmp_path / f"skill-eval-{os.getuid()}"


def test_root_and_run_dirs_are_private_and_named_after_the_owner(tmp_root: Path) -> None:
    run = scratch.new_run_dir()
    assert run.parent == tmp_root
    assert oct(tmp_root.stat().st_mode & 0o777) == "0o700" and oct(run.stat().st_mode & 0o777) == "0o700"
    created = int(psutil.Process().create_time() * 1000)
    assert run.name.startswith(f"run-{os.getpid()}-{created}-")


def test_sweep_removes_dead_owners_and_reused_pids_but_keeps_live_ones(tmp_root: Path) -> None:
    live = scratch.new_run_dir()
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    dead = tmp_root / f"run-{child.pid}-1-abc"
    reused = tmp_root / f"run-{os.getpid()}-1000-abc"  # our pid, but a process created in 1970
    unrelated = tmp_root / "not-a-run-dir"
    for d in (dead, reused, unrelated):
        (d / "agent").mkdir(parents=True)
        (d / "agent" / "auth.json").write_text("{}")
    removed = scratch.sweep_stale(tmp_root)
    assert sorted(removed) == sorted([dead, reused])
    assert live.exists() and unrelated.exists() and not dead.exists() and not reused.exists()


def test_a_widened_root_is_made_private_again(tmp_root: Path) -> None:
    tmp_root.mkdir(mode=0o755)
    os.chmod(tmp_root, 0o755)
    scratch.scratch_root()
    assert oct(tmp_root.stat().st_mode & 0o777) == "0o700"
