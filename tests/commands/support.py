"""Building blocks of the ``skill-eval init`` tests: a real skill in a real Git repository."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

#: A real public skill (anthropics/skills, Apache-2.0; see skills/NOTICE.md), copied unmodified.
BRAND = Path(__file__).parent / "skills" / "brand-guidelines"
SKILL_EVAL = Path(sys.executable).parent / "skill-eval"
SUITE = ".skill-eval/brand-guidelines/suite.json"
WRITTEN = [
    ".skill-eval/brand-guidelines/suite.json",
    ".skill-eval/brand-guidelines/groups/description.json",
    ".skill-eval/brand-guidelines/groups/body.json",
    ".skill-eval/brand-guidelines/scripts/brand-guidelines-description.json",
    ".skill-eval/brand-guidelines/scripts/brand-guidelines-body.json",
    ".skill-eval/brand-guidelines/README.md",
]


def git(root: Path, *args: str) -> str:
    done = subprocess.run(["git", "-c", "user.name=Skill Author", "-c", "user.email=author@example.invalid",
                           "-c", "init.defaultBranch=main", *args],
                          cwd=root, capture_output=True, text=True, check=True)
    return done.stdout


def skill_repo(root: Path, *, commit: bool = True) -> Path:
    """*root* as a Git repository holding the real skill at skills/brand-guidelines (committed)."""
    root.mkdir(parents=True, exist_ok=True)
    git(root, "init", "-q")
    shutil.copytree(BRAND, root / "skills" / "brand-guidelines")
    (root / "README.md").write_text("# My skills\n")
    if commit:
        git(root, "add", "-A")
        git(root, "commit", "-q", "-m", "Add the brand-guidelines skill")
    return root


def skill_eval(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """The installed console script, as a user runs it."""
    return subprocess.run([str(SKILL_EVAL), *args], cwd=cwd, env=dict(os.environ), capture_output=True, text=True,
                          timeout=600, check=False)


def tree(root: Path) -> dict[str, bytes]:
    """Every file under *root* except Git's own, with its bytes."""
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file() and ".git" not in p.relative_to(root).parts}
