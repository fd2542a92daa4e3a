"""The workspace content digest of no-progress detection, on a real tree."""

from __future__ import annotations

import os
import time
from pathlib import Path

from pytest_skill_eval.host.treedigest import TreeDigest


def _tree(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    (root / "sub").mkdir(parents=True)
    (root / "a.txt").write_text("one")
    (root / "sub" / "b.txt").write_text("two")
    return root


def test_rewriting_identical_bytes_leaves_the_digest_unchanged(tmp_path: Path) -> None:
    root = _tree(tmp_path)
    digest = TreeDigest(root)
    before = digest()
    time.sleep(0.01)
    (root / "a.txt").write_text("one")  # new mtime and ctime, same content
    os.utime(root / "sub" / "b.txt", ns=(1, 1))
    assert digest() == before
    assert TreeDigest(root)() == before, "a fresh digest agrees with the cached one"


def test_every_content_change_changes_the_digest(tmp_path: Path) -> None:
    root = _tree(tmp_path)
    digest = TreeDigest(root)
    seen = {digest()}
    (root / "a.txt").write_text("One")  # same size, other bytes
    seen.add(digest())
    (root / "sub" / "new").write_text("")  # an empty file
    seen.add(digest())
    (root / "empty-dir").mkdir()
    seen.add(digest())
    os.chmod(root / "a.txt", 0o600)
    seen.add(digest())
    (root / "link").symlink_to("a.txt")
    seen.add(digest())
    (root / "link").unlink()
    (root / "link").symlink_to("sub/b.txt")
    seen.add(digest())
    (root / "sub" / "b.txt").rename(root / "sub" / "c.txt")
    seen.add(digest())
    assert len(seen) == 8


def test_special_files_and_links_are_never_opened_or_followed(tmp_path: Path) -> None:
    root = _tree(tmp_path)
    outside = tmp_path / "outside.txt"
    outside.write_text("secret")
    os.mkfifo(root / "pipe")  # opening it for reading would block for ever
    (root / "out").symlink_to(outside)
    (root / "loop").symlink_to(root)
    digest = TreeDigest(root)
    before = digest()
    outside.write_text("changed")  # outside the workspace: not its content
    assert digest() == before


def test_an_unreadable_file_counts_by_its_metadata(tmp_path: Path) -> None:
    root = _tree(tmp_path)
    os.chmod(root / "a.txt", 0)
    digest = TreeDigest(root)
    assert digest() == digest()
    os.chmod(root / "a.txt", 0o644)


def test_what_cannot_be_seen_is_never_taken_for_unchanged(tmp_path: Path) -> None:
    root = _tree(tmp_path)
    # a directory chain deeper than PATH_MAX: its bottom cannot be reached by path
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
    try:
        for _ in range(25):
            os.mkdir("d" * 200, dir_fd=fd)
            child = os.open("d" * 200, os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
            os.close(fd)
            fd = child
        with open(os.open("deep.txt", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fd), "w") as f:
            f.write("x")
    finally:
        os.close(fd)
    digest = TreeDigest(root)
    assert digest() != digest(), "a digest that missed part of the tree matches no other"
