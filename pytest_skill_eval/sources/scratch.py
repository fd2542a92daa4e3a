"""Private scratch for running variants: one 0700 root, per-run directories owned by a pid.

Scratch holds the subject's workspace, its agent directory and the copy of the
``--skill-eval-auth`` file, so it must live no longer than the run. Each run directory is
named ``run-<pid>-<create time in ms>-<random>`` after the evaluator process that owns it;
:func:`sweep_stale` removes every directory whose owner is gone (its pid is dead, or the
pid now belongs to a younger process), so scratch a SIGKILLed evaluator left behind is
removed by the next run or session. Directories of live evaluators (concurrent xdist
workers) are never touched.
"""

from __future__ import annotations

import os
import re
import shutil
import stat
import tempfile
from pathlib import Path

import psutil

from pytest_skill_eval.errors import SkillEvalError

_RUN_DIR = re.compile(r"^run-(\d+)-(\d+)-")
#: slack when comparing a recorded process create time with the live one (ms)
_CREATE_TIME_SLACK_MS = 1000


def scratch_root() -> Path:
    """``<system temp dir>/skill-eval-<uid>``: created 0700, refused if not private."""
    uid = os.getuid() if hasattr(os, "getuid") else 0
    root = Path(tempfile.gettempdir()) / f"skill-eval-{uid}"
    try:
        root.mkdir(mode=0o700)
    except FileExistsError:
        pass
    info = os.lstat(root)
    if not stat.S_ISDIR(info.st_mode) or (hasattr(os, "getuid") and info.st_uid != os.getuid()):
        raise SkillEvalError(f"scratch root {root} is not a directory owned by this user")
    if stat.S_IMODE(info.st_mode) != 0o700:
        os.chmod(root, 0o700)
    return root


def _create_time_ms(pid: int) -> int | None:
    try:
        return int(psutil.Process(pid).create_time() * 1000)
    except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess):
        return None


def _owner_alive(pid: int, created_ms: int) -> bool:
    now = _create_time_ms(pid)
    return now is not None and abs(now - created_ms) <= _CREATE_TIME_SLACK_MS


def sweep_stale(root: Path | None = None) -> list[Path]:
    """Remove run directories whose owning evaluator is gone; returns what was removed."""
    root = root or scratch_root()
    removed: list[Path] = []
    try:
        entries = list(root.iterdir())
    except FileNotFoundError:
        return removed
    for entry in entries:
        match = _RUN_DIR.match(entry.name)
        if not match or not entry.is_dir() or entry.is_symlink():
            continue
        if not _owner_alive(int(match.group(1)), int(match.group(2))):
            shutil.rmtree(entry, ignore_errors=True)
            removed.append(entry)
    return removed


def new_run_dir() -> Path:
    """A fresh private (0700) run directory owned by this process; stale ones are swept first."""
    root = scratch_root()
    sweep_stale(root)
    pid = os.getpid()
    created = _create_time_ms(pid) or 0
    return Path(tempfile.mkdtemp(prefix=f"run-{pid}-{created}-", dir=root))
