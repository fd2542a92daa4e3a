"""How the HTML report diffs one file, exactly (fast and host-free): the change, the lines
and the note for unchanged, added, removed, binary, huge and long files."""

from __future__ import annotations

from pytest_skill_eval.render.diffs import DIFF_MAX_BYTES, DIFF_MAX_LINES, DiffLine, FileDiff, diff_files


def test_unchanged_and_line_ending_only_changes() -> None:
    assert diff_files("a", b"x\n", b"x\n") == FileDiff("a", "unchanged")
    assert diff_files("a", b"x\n", b"x") == FileDiff("a", "modified", (), "only line endings or a final newline differ")


def test_added_and_removed_files_diff_against_nothing() -> None:
    assert diff_files("a", None, b"x\n") == FileDiff("a", "added", (DiffLine("hunk", "@@ -0,0 +1 @@"), DiffLine("add", "x")))
    assert diff_files("a", b"x\n", None) == FileDiff("a", "removed", (DiffLine("hunk", "@@ -1 +0,0 @@"), DiffLine("del", "x")))


def test_three_lines_of_context() -> None:
    before = b"".join(b"%d\n" % i for i in range(10))
    diff = diff_files("a", before, before.replace(b"5\n", b"five\n"))
    assert diff.lines == (DiffLine("hunk", "@@ -3,7 +3,7 @@"), *(DiffLine("ctx", s) for s in "234"),
                          DiffLine("del", "5"), DiffLine("add", "five"), *(DiffLine("ctx", s) for s in "678"))


def test_binary_files_are_named_with_their_sizes() -> None:
    assert diff_files("b", b"\xff", b"xy") == FileDiff("b", "modified", note="binary file, not diffed (1 -> 2 bytes)")


def test_files_over_the_size_limit_are_not_diffed() -> None:
    assert diff_files("a", b"a" * DIFF_MAX_BYTES, None).note is None
    big = b"a" * (DIFF_MAX_BYTES + 1)
    assert diff_files("a", big, None) == FileDiff("a", "removed", note=f"not diffed: larger than 512 KiB ({len(big)} -> - bytes)")
    assert diff_files("a", None, big) == FileDiff("a", "added", note=f"not diffed: larger than 512 KiB (- -> {len(big)} bytes)")


def test_a_diff_of_exactly_the_line_limit_is_not_cut() -> None:
    diff = diff_files("a", None, b"x\n" * (DIFF_MAX_LINES - 1))  # a hunk line and one line per added line
    assert len(diff.lines) == DIFF_MAX_LINES
    assert diff.note is None
