"""A hostile-corpus harness: real results made by running the quickstart suite, tampered with,
and every command that reads a stored result run against them as a real subprocess.

``make_shards`` runs the quickstart suite once as shards 1/2 and 2/2 (real pi, the scripted
model over real HTTP): two real results that together hold the whole suite, so ``merge``
has inputs and every other command has a result with objects, turns and workspaces.

``Scene`` is one test's copy: ``work/`` (the definition root and cwd, with the two results
under ``.skill-eval/runs``) and ``outside/`` (a secret file and directory that no command
may ever read into its output, and where a write must never land). ``Scene.command`` runs
``skill-eval <command>`` against the tampered result with a timeout and checks what every
answer must hold: no traceback, no hang, no secret in the output or in anything written,
nothing written outside the command's destination.
"""

from __future__ import annotations

import hashlib
import json
import os
import secrets
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

QUICKSTART = Path(__file__).resolve().parents[2] / "example_suites" / "quickstart"

#: the group the tampering aims at (shard 2 holds it: multi-turn, workspace changes, objects)
BODY = "002-release-notes-body"
ACTIVATION = "001-release-notes-activation"

COMMANDS = ("view", "list", "report", "regrade", "rerun", "merge")

#: a command that takes longer than this is a hang (a run of one group takes ~2 s)
TIMEOUT = 120


def cli(cwd: Path, *args: str, timeout: float = TIMEOUT) -> subprocess.CompletedProcess[str]:
    """``skill-eval <args>`` as a real subprocess in *cwd*; a hang fails the test."""
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    env.pop("GITHUB_STEP_SUMMARY", None)
    try:
        return subprocess.run([sys.executable, "-m", "pytest_skill_eval", *args], cwd=cwd, capture_output=True,
                              text=True, errors="replace", timeout=timeout, env=env, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired as exc:
        raise AssertionError(f"skill-eval {' '.join(args)} hung for {timeout} s") from exc


@dataclass(frozen=True)
class Shards:
    """The two pristine shard results (never tampered with: each test copies them)."""

    root: Path
    holding: dict[str, Path]  # group dir name -> the result directory that holds it


def make_shards(base: Path) -> Shards:
    root = base / "quickstart"
    shutil.copytree(QUICKSTART, root, ignore=shutil.ignore_patterns(".skill-eval"))
    for k in (1, 2):
        proc = cli(root, "run", "suite.json", "--shard", f"{k}/2", timeout=600)
        assert proc.returncode == 0, proc.stdout + proc.stderr
    runs = root / ".skill-eval" / "runs"
    holding = {g.name: r for r in runs.iterdir() if r.is_dir() for g in (r / "groups").iterdir()}
    assert set(holding) == {ACTIVATION, BODY}, holding
    return Shards(root, holding)


def _listing(root: Path) -> dict[str, tuple[int, str]]:
    """Every entry under *root* (links not followed): kind and content digest."""
    found: dict[str, tuple[int, str]] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            path = Path(dirpath) / name
            st = path.lstat()
            digest = ""
            if path.is_file() and not path.is_symlink():
                digest = hashlib.sha256(path.read_bytes()).hexdigest()
            found[str(path.relative_to(root))] = (st.st_mode, digest)
    return found


@dataclass
class Scene:
    """One test's world: a working copy of both shard results and an outside it must not touch."""

    base: Path
    shards: Shards
    secret: str = field(default_factory=lambda: f"OUTSIDE-SECRET-{secrets.token_hex(8)}")

    def __post_init__(self) -> None:
        self.work = self.base / "work"
        self.outside = self.base / "outside"
        runs = self.work / ".skill-eval" / "runs"
        runs.mkdir(parents=True)
        shutil.copytree(self.shards.root, self.work, dirs_exist_ok=True, ignore=shutil.ignore_patterns(".skill-eval"))
        self.results = {}
        for group, result in self.shards.holding.items():
            self.results[group] = runs / result.name
            shutil.copytree(result, runs / result.name, symlinks=True)
        self.outside.mkdir()
        (self.outside / "secret.txt").write_text(self.secret + "\n")
        (self.outside / "secret.json").write_text(json.dumps({"token": self.secret}) + "\n")
        (self.outside / "secret-dir").mkdir()
        (self.outside / "secret-dir" / "key.md").write_text(self.secret + "\n")
        self.evil = self.outside / "evil.pth"

    @property
    def target(self) -> Path:
        """The result every tampering aims at (the one holding the body group)."""
        return self.results[BODY]

    @property
    def other(self) -> Path:
        return self.results[ACTIVATION]

    @property
    def body(self) -> Path:
        return self.target / "groups" / BODY

    def command(self, name: str) -> subprocess.CompletedProcess[str]:
        """Run *name* against the tampered result and check what every answer must hold."""
        before = _listing(self.outside)
        runs_before = set((self.work / ".skill-eval" / "runs").iterdir())
        merged = self.base / "merged"
        extra = self.base / "report.html"
        if name == "list":
            proc = cli(self.work, "list")
        elif name == "merge":
            proc = cli(self.work, "merge", str(self.other), str(self.target), "-o", str(merged))
        elif name == "report":
            proc = cli(self.work, "report", str(self.target), "-o", str(extra))
        elif name == "rerun":
            proc = cli(self.work, "rerun", str(self.target))
        else:
            proc = cli(self.work, name, str(self.target))
        out = proc.stdout + proc.stderr
        assert "Traceback" not in out, out
        assert proc.returncode in (0, 1, 2, 4), (proc.returncode, out)
        assert self.secret not in out, out
        assert not self.evil.exists(), f"skill-eval {name} wrote outside its destination: {self.evil}"
        assert _listing(self.outside) == before, f"skill-eval {name} changed {self.outside}"
        written = [p for p in (self.work / ".skill-eval" / "runs").iterdir() if p not in runs_before]
        written += [merged, extra, self.target / "report.html"]
        for where in written:
            for path in _files(where):
                assert self.secret.encode() not in path.read_bytes(), f"{name} copied the secret into {path}"
        return proc


def _files(root: Path) -> Iterator[Path]:
    if root.is_file() and not root.is_symlink():
        yield root
        return
    for dirpath, _dirnames, filenames in os.walk(root):
        for name in filenames:
            path = Path(dirpath) / name
            if path.is_file() and not path.is_symlink():
                yield path


def replace_with_link(path: Path, target: Path) -> None:
    """Swap the file or directory *path* for a symbolic link to *target*."""
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    elif path.exists() or path.is_symlink():
        path.unlink()
    path.symlink_to(target)


def edit_json(path: Path, change: Callable[[Any], Any]) -> None:
    data = json.loads(path.read_text())
    result = change(data)
    path.write_text(json.dumps(data if result is None else result, indent=2))
