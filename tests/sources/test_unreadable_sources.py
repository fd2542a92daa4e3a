"""Declared sources the file system or Git will not hand over: a located SourceError, never a crash.

A path longer than the file system opens (ENAMETOOLONG), a symlink loop in the working tree
(pathlib raises RuntimeError, not OSError) or in a commit (the link chain was followed by
recursion until RecursionError), and a commit whose tree nests deeper than Python's
recursion limit each crashed ``check`` with a traceback or stopped a run as if evidence
could not be written. Real files, real Git repositories.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from pytest_skill_eval.errors import SourceError
from pytest_skill_eval.services.check import check_path
from pytest_skill_eval.sources.snapshots import GitSource, copy_working_tree

SKILL = "---\nname: s\ndescription: S.\n---\nBody.\n"


def git(root: Path, *args: str) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com"}
    return subprocess.run(["git", *args], cwd=root, check=True, capture_output=True, text=True, env=env).stdout.strip()


def _skill(root: Path, name: str = "s") -> Path:
    skill = root / "skills" / name
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text(SKILL)
    return skill


def test_a_working_tree_path_longer_than_the_file_system_opens(tmp_path: Path) -> None:
    rel = "/".join(["a" * 200] * 25)
    with pytest.raises(SourceError, match=r"^a{100}… \(5024 bytes\): cannot be read from the working tree: File name too long$"):
        copy_working_tree(tmp_path, rel, tmp_path / "out")


@pytest.mark.parametrize("where", ["declared", "inside"])
def test_a_working_tree_symlink_loop(tmp_path: Path, where: str) -> None:
    skill = _skill(tmp_path)
    if where == "declared":
        (tmp_path / "skills" / "x").symlink_to("y")
        (tmp_path / "skills" / "y").symlink_to("x")
        rel = "skills/x"
    else:
        (skill / "l1").symlink_to("l2")
        (skill / "l2").symlink_to("l1")
        rel = "skills/s"
    with pytest.raises(SourceError, match=rf"^{rel}: cannot be read from the working tree: Symlink loop from "):
        copy_working_tree(tmp_path, rel, tmp_path / "out")


def _commit(root: Path) -> None:
    git(root, "add", "-A")
    git(root, "commit", "-qm", "c")


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    git(tmp_path, "init", "-q", "-b", "main")
    return tmp_path


@pytest.mark.parametrize("links", [{"l1": "l2", "l2": "l1"}, {"self": "self"}])
def test_a_git_symlink_loop(repo: Path, links: dict[str, str]) -> None:
    skill = _skill(repo)
    for name, target in links.items():
        (skill / name).symlink_to(target)
    _commit(repo)
    with pytest.raises(SourceError, match=r"^skills/s: skills/s/\w+ is a symlink loop"):
        GitSource(repo, "HEAD").copy("skills/s", repo / "out")


@pytest.mark.parametrize(("length", "ok"), [(40, True), (41, False)])
def test_a_git_symlink_chain_is_followed_as_far_as_the_kernel_would(repo: Path, length: int, ok: bool) -> None:
    skill = _skill(repo)
    (skill / "end.md").write_text("the end")
    for i in range(length):
        (skill / f"l{i}").symlink_to(f"l{i + 1}" if i + 1 < length else "end.md")
    _commit(repo)
    if ok:
        GitSource(repo, "HEAD").copy("skills/s", repo / "out")
        assert (repo / "out" / "l0").read_text() == "the end"
    else:
        with pytest.raises(SourceError, match="a chain of more than 40 links"):
            GitSource(repo, "HEAD").copy("skills/s", repo / "out")


def test_a_git_tree_nested_deeper_than_python_recurses(repo: Path) -> None:
    skill = _skill(repo)
    fd = os.open(skill, os.O_RDONLY)
    try:
        for _ in range(1100):  # one level at a time: pathlib's mkdir(parents=True) recurses itself
            os.mkdir("d", dir_fd=fd)
            inner = os.open("d", os.O_RDONLY, dir_fd=fd)
            os.close(fd)
            fd = inner
        with open(os.open("f.md", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fd), "w") as f:
            f.write("deep")
    finally:
        os.close(fd)
    try:
        with pytest.raises(SourceError, match="^skills/s: cannot be read from the working tree: it nests directories "
                                              "deeper than a snapshot follows$"):
            copy_working_tree(repo, "skills/s", repo / "tree-out")
        assert not (repo / "tree-out").exists()  # what was copied so far is removed, however deep
        _commit(repo)
        with pytest.raises(SourceError, match="^skills/s: nests directories deeper than a snapshot follows$"):
            GitSource(repo, "HEAD").copy("skills/s", repo / "out")
        assert not (repo / "out").exists()
    finally:
        # shutil.rmtree recurses per level too: pytest could not clean this temporary directory
        subprocess.run(["rm", "-rf", str(skill / "d")], check=True)


def test_a_git_path_longer_than_the_file_system_takes(repo: Path) -> None:
    """A commit can hold a path no checkout can write (17 names of 255 bytes): built with plumbing."""
    def mktree(*lines: str) -> str:
        return subprocess.run(["git", "mktree"], cwd=repo, input="\n".join(lines) + "\n", check=True,
                              capture_output=True, text=True).stdout.strip()

    blob = subprocess.run(["git", "hash-object", "-w", "--stdin"], cwd=repo, input=SKILL, check=True,
                          capture_output=True, text=True).stdout.strip()
    tree = mktree(f"100644 blob {blob}\tf.md")
    for _ in range(17):
        tree = mktree(f"040000 tree {tree}\t{'n' * 255}")
    skill = mktree(f"100644 blob {blob}\tSKILL.md", f"040000 tree {tree}\tdeep")
    skills = mktree(f"040000 tree {skill}\ts")
    top = mktree(f"040000 tree {skills}\tskills")
    commit = git(repo, "commit-tree", top, "-m", "long")
    with pytest.raises(SourceError, match=r"^skills/s: holds a path longer than the file system takes \(File name too long\)$"):
        GitSource(repo, commit).copy("skills/s", repo / "out")
    assert not (repo / "out").exists()


def test_check_reports_each_one_located(repo: Path) -> None:
    """Today: a RuntimeError or RecursionError traceback out of ``skill-eval check``."""
    skill = _skill(repo)
    (skill / "l1").symlink_to("l2")
    (skill / "l2").symlink_to("l1")
    _commit(repo)
    variant = {"source": {"kind": "git", "ref": "HEAD"}, "skills": ["skills/s"], "target": 0, "context": []}
    group = {"schema_version": 1, "kind": "group", "id": "g", "type": "description", "input": {"prompt": "Hi."},
             "fixture": None, "tools": [], "expectations": [], "review_questions": [], "model": {"model": "scripted/g"},
             "variants": {"baseline": variant, "candidate": {**variant, "source": {"kind": "working-tree"}}}}
    (repo / "g.json").write_text(json.dumps(group))
    report, ok = check_path(Path("g.json"), repo)
    assert not ok
    lines = [line for line in report.splitlines() if "skill 0" in line]
    assert len(lines) == 2 and all(line.lstrip().startswith("error") for line in lines)
    assert "/variants/baseline/skills/0: skills/s: skills/s/l1 is a symlink loop" in lines[0]
    assert "/variants/candidate/skills/0: skills/s: cannot be read from the working tree: Symlink loop" in lines[1]
