"""Real evidence for view, regrade and check tests.

The evidence comes from running a copy of ``tests/views/suite`` (the quickstart suite
plus a group built to produce grade errors, a blocked read, a failed read and an
awkward file name) through the real pi host and the scripted stand-in, once per test
session. Snapshots normalise what differs between runs: the result id, temp paths,
durations, token counts and regrade timestamps.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

import pytest

SUITE = Path(__file__).parent / "suite"
SNAPSHOTS = Path(__file__).parent / "snapshots"
UPDATE_ENV = "SKILL_EVAL_UPDATE_SNAPSHOTS"


@dataclass(frozen=True)
class StoredRun:
    """A definition root after one real run, and the result it produced."""

    root: Path
    result_id: str
    returncode: int
    output: str

    @property
    def result_dir(self) -> Path:
        return self.root / ".skill-eval" / "runs" / self.result_id


def copy_suite(dest: Path) -> Path:
    """A fresh, writable copy of the test suite's definition root."""
    shutil.copytree(SUITE, dest)
    return dest


def run_suite(root: Path, *args: str) -> StoredRun:
    """Run ``pytest --skill-eval ...`` in *root* as a user would, in a subprocess."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "PYTHONBREAKPOINT"))}
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *(args or ("--skill-eval", "suite.json"))],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    runs = sorted(p for p in (root / ".skill-eval" / "runs").iterdir() if p.is_dir()) if (root / ".skill-eval" / "runs").is_dir() else []
    assert len(runs) == 1, f"expected one result, found {runs}\n{proc.stdout}\n{proc.stderr}"
    return StoredRun(root, runs[0].name, proc.returncode, proc.stdout + proc.stderr)


def copy_result(run: StoredRun, dest: Path) -> Path:
    """Copy the stored result directory to *dest* (which must not exist)."""
    shutil.copytree(run.result_dir, dest)
    return dest


def normalise(text: str, run: StoredRun, *extra: tuple[str, str]) -> str:
    """Replace what differs between runs with stable placeholders."""
    for old, new in extra:
        text = text.replace(old, new)
    text = text.replace(str(run.result_dir), "<RESULT>")
    text = text.replace(str(run.root), "<ROOT>")
    text = text.replace(run.result_id, "<RESULT-ID>")
    text = re.sub(re.escape(tempfile.gettempdir()) + r"/skill-eval-[A-Za-z0-9_]+(/run-\d+-\d+-[A-Za-z0-9_]+)?", "<SCRATCH>", text)
    text = re.sub(r"(duration +)\d+\.\d+ s", r"\1<SECONDS> s", text)
    # token counts follow the scratch paths' length; cache, reasoning and cost do not
    text = re.sub(r"tokens \d+( \(\d+ of \d+ messages? did not report\))? \(input \d+, output \d+,",
                  r"tokens <TOKENS>\1 (input <N>, output <N>,", text)
    text = re.sub(r"grade-regraded-\d{14}(-\d+)?", "grade-regraded-<STAMP>", text)
    return text


def assert_snapshot(name: str, text: str) -> None:
    """Compare *text* with ``snapshots/<name>.txt``; ``SKILL_EVAL_UPDATE_SNAPSHOTS=1`` rewrites it."""
    path = SNAPSHOTS / f"{name}.txt"
    if os.environ.get(UPDATE_ENV) == "1" or not path.exists():
        if not path.exists() and os.environ.get(UPDATE_ENV) != "1":
            pytest.fail(f"snapshot {path} is missing; run with {UPDATE_ENV}=1 to create it")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        return
    expected = path.read_text(encoding="utf-8")
    assert text == expected, f"view differs from {path} (run with {UPDATE_ENV}=1 to accept)"
