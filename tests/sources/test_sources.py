"""Snapshots from the working tree and from exact Git commits, on real repositories."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from pytest_skill_eval.errors import SourceError
from pytest_skill_eval.sources.snapshots import GitSource, copy_working_tree


def git(root: Path, *args: str) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com"}
    return subprocess.run(["git", *args], cwd=root, check=True, capture_output=True, text=True, env=env).stdout.strip()


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    (root / "skills" / "a" / "refs").mkdir(parents=True)
    (root / "skills" / "a" / "SKILL.md").write_text("---\nname: a\ndescription: A.\n---\nv1\n")
    (root / "skills" / "a" / "refs" / "guide.md").write_text("guide")
    git(root, "init", "-q")
    git(root, "add", ".")
    git(root, "commit", "-qm", "v1")
    git(root, "tag", "v1")
    return root


def test_git_source_materialises_the_commit_not_the_working_tree(repo: Path, tmp_path: Path) -> None:
    (repo / "skills" / "a" / "SKILL.md").write_text("changed in the working tree")
    source = GitSource(repo, "v1")
    source.copy("skills/a", tmp_path / "out")
    assert (tmp_path / "out" / "SKILL.md").read_text().endswith("v1\n")
    assert (tmp_path / "out" / "refs" / "guide.md").read_text() == "guide"
    identity = source.identity(repo)
    assert identity.ref == "v1" and identity.commit == git(repo, "rev-parse", "HEAD")


def test_git_source_resolves_paths_relative_to_a_definition_root_below_the_repo_top(repo: Path, tmp_path: Path) -> None:
    sub = repo / "evals"
    (sub / "skills" / "b").mkdir(parents=True)
    (sub / "skills" / "b" / "SKILL.md").write_text("b")
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "b")
    GitSource(sub, "HEAD").copy("skills/b", tmp_path / "b")
    assert (tmp_path / "b" / "SKILL.md").read_text() == "b"


def test_unknown_ref_and_missing_path_are_clear_errors(repo: Path, tmp_path: Path) -> None:
    with pytest.raises(SourceError, match=r"git source: ref 'no-such-ref' does not resolve to a commit"):
        GitSource(repo, "no-such-ref")
    with pytest.raises(SourceError, match=r"skills/zz: not found in commit [0-9a-f]{12} \(ref 'v1'\)"):
        GitSource(repo, "v1").copy("skills/zz", tmp_path / "x")


def test_not_a_repository(tmp_path: Path) -> None:
    with pytest.raises(SourceError, match="is not inside a Git repository"):
        GitSource(tmp_path, "HEAD")


def test_git_symlink_inside_the_snapshot_is_copied_and_one_leaving_it_is_refused(repo: Path, tmp_path: Path) -> None:
    (repo / "skills" / "a" / "alias.md").symlink_to("refs/guide.md")
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "inner link")
    GitSource(repo, "HEAD").copy("skills/a", tmp_path / "ok")
    assert (tmp_path / "ok" / "alias.md").read_text() == "guide"
    assert not (tmp_path / "ok" / "alias.md").is_symlink()
    (repo / "skills" / "a" / "escape.md").symlink_to("../../outside.md")
    (repo / "outside.md").write_text("secret")
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "escaping link")
    with pytest.raises(SourceError, match="skills/a: skills/a/escape.md is a symlink that leaves the snapshot"):
        GitSource(repo, "HEAD").copy("skills/a", tmp_path / "bad")


def test_git_submodule_entry_is_refused(repo: Path, tmp_path: Path) -> None:
    sha = git(repo, "rev-parse", "HEAD")
    git(repo, "update-index", "--add", "--cacheinfo", f"160000,{sha},skills/a/vendored")
    git(repo, "commit", "-qm", "submodule")
    with pytest.raises(SourceError, match="skills/a/vendored is a submodule \\(unsupported Git entry\\)"):
        GitSource(repo, "HEAD").copy("skills/a", tmp_path / "sub")


def test_working_tree_refuses_escapes_and_special_files(tmp_path: Path) -> None:
    root = tmp_path / "root"
    (root / "skills" / "a").mkdir(parents=True)
    (root / "skills" / "a" / "SKILL.md").write_text("a")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "x.md").write_text("x")
    (root / "skills" / "linked").symlink_to(outside, target_is_directory=True)
    with pytest.raises(SourceError, match="skills/linked: resolves outside the definition root"):
        copy_working_tree(root, "skills/linked", tmp_path / "o1")
    (root / "skills" / "a" / "out.md").symlink_to(outside / "x.md")
    with pytest.raises(SourceError, match="skills/a: out.md is a symlink that leaves the snapshot"):
        copy_working_tree(root, "skills/a", tmp_path / "o2")
    (root / "skills" / "a" / "out.md").unlink()
    os.mkfifo(root / "skills" / "a" / "pipe")
    with pytest.raises(SourceError, match="skills/a: pipe is not a regular file or directory"):
        copy_working_tree(root, "skills/a", tmp_path / "o3")
    with pytest.raises(SourceError, match="skills/none: not found under the definition root"):
        copy_working_tree(root, "skills/none", tmp_path / "o4")
