"""Lexical and canonical containment: the pure rules, then real symlink and traversal attacks."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from pytest_skill_eval.definitions.loading import load_group, load_suite
from pytest_skill_eval.errors import DefinitionError, PathEscapeError
from pytest_skill_eval.paths import check_relative, contain_path, normalize_relative, resolve_within

from .support import apply_edits, spec_doc, write_json

# --------------------------------------------------------------------------- lexical


@pytest.mark.parametrize(
    ("text", "base", "normal"),
    [
        ("skills/target", "", "skills/target"),
        ("a", "", "a"),
        ("./a", "", "a"),
        ("a/./b", "", "a/b"),
        ("a/../b", "", "b"),
        ("a/b/..", "", "a"),
        ("..a/b..", "", "..a/b.."),  # dots inside names are ordinary characters
        ("...", "", "..."),
        ("with space/ü.md", "", "with space/ü.md"),
        ("ab:c", "", "ab:c"),  # a colon after two or more characters is no drive
        ("../shared/g.json", ".skill-eval/my-skill", ".skill-eval/shared/g.json"),
        ("../../g.json", ".skill-eval/my-skill", "g.json"),
        ("groups/a.json", "suites", "suites/groups/a.json"),
    ],
)
def test_contained_paths_are_accepted_and_normalized(text: str, base: str, normal: str) -> None:
    assert check_relative(text, base) is None
    assert normalize_relative(text, base) == normal


@pytest.mark.parametrize(
    ("text", "base", "message"),
    [
        ("", "", 'expected a non-empty relative path, found ""'),
        ("/etc/passwd", "", 'expected a relative path, found absolute path "/etc/passwd"'),
        ("//server/share", "", 'expected a relative path, found absolute path "//server/share"'),
        ("C:/x", "", 'expected a relative path, found drive-qualified path "C:/x"'),
        ("c:x", "", 'expected a relative path, found drive-qualified path "c:x"'),
        ("a\\b", "", 'expected a path with "/" separators, found "a\\\\b" with a backslash'),
        ("..\\x", "", 'expected a path with "/" separators, found "..\\\\x" with a backslash'),
        ("a//b", "", 'expected a path without empty segments, found "a//b"'),
        ("a/", "", 'expected a path without empty segments, found "a/"'),
        ("a\x00b", "", 'expected a path without NUL characters, found "a\\u0000b"'),
        ("a\ud800", "", 'expected a path of valid Unicode text, found "a\\ud800" with a lone surrogate'),
        (".", "", 'expected a path below the definition root, found "." naming the root itself'),
        ("a/..", "", 'expected a path below the definition root, found "a/.." naming the root itself'),
        ("..", "", 'expected a path inside the definition root, found ".." leaving it through ".."'),
        ("../x", "", 'expected a path inside the definition root, found "../x" leaving it through ".."'),
        ("a/../../x", "", 'expected a path inside the definition root, found "a/../../x" leaving it through ".."'),
        ("../../../x", ".skill-eval/s", 'expected a path inside the definition root, found "../../../x" leaving it through ".."'),
        ("../..", ".skill-eval/s", 'expected a path below the definition root, found "../.." naming the root itself'),
    ],
)
def test_uncontained_paths_are_rejected_with_a_reason(text: str, base: str, message: str) -> None:
    assert check_relative(text, base) == message
    with pytest.raises(PathEscapeError, match="^expected "):
        normalize_relative(text, base)


# --------------------------------------------------------------------------- canonical


@pytest.fixture
def root(tmp_path: Path) -> Path:
    (tmp_path / "root").mkdir()
    return tmp_path / "root"


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    (tmp_path / "outside" / "skill").mkdir(parents=True)
    (tmp_path / "outside" / "skill" / "SKILL.md").write_text("---\nname: evil\n---\n")
    (tmp_path / "outside" / "secret.txt").write_text("secret")
    return tmp_path / "outside"


def test_resolve_within_returns_the_canonical_path(root: Path) -> None:
    (root / "skills" / "real").mkdir(parents=True)
    (root / "skills" / "alias").symlink_to("real")
    assert resolve_within(root, "skills/alias") == (root / "skills" / "real").resolve()
    # Existence is not required.
    assert resolve_within(root, "not/yet/there") == root.resolve() / "not/yet/there"


def test_resolve_within_rejects_a_symlink_out_of_the_root(root: Path, outside: Path) -> None:
    (root / "skills").mkdir()
    (root / "skills" / "target").symlink_to(outside / "skill")
    with pytest.raises(PathEscapeError) as caught:
        resolve_within(root, "skills/target/SKILL.md")
    assert str(caught.value) == (
        f'expected a path inside the definition root {root.resolve()}, found "skills/target/SKILL.md" '
        f"resolving to {(outside / 'skill' / 'SKILL.md').resolve()}"
    )


def test_resolve_within_rejects_lexical_escape_before_touching_the_disk(root: Path) -> None:
    with pytest.raises(PathEscapeError, match='leaving it through ".."'):
        resolve_within(root, "../outside")


def test_contain_path_rejects_a_link_to_the_root_itself(root: Path) -> None:
    (root / "everything").symlink_to(root)
    with pytest.raises(PathEscapeError, match="resolving to the root itself"):
        contain_path(root, root / "everything", shown="everything")


def test_contain_path_follows_dangling_links(root: Path, outside: Path) -> None:
    (root / "dangling").symlink_to(outside / "not-there-yet")
    with pytest.raises(PathEscapeError, match="resolving to"):
        contain_path(root, root / "dangling")


def test_contain_path_accepts_a_root_reached_through_a_link(tmp_path: Path, root: Path) -> None:
    (tmp_path / "link-to-root").symlink_to(root)
    (root / "a.json").write_text("{}")
    assert contain_path(tmp_path / "link-to-root", tmp_path / "link-to-root" / "a.json") == (root / "a.json").resolve()


# --------------------------------------------------------------------------- attacks on the loader


def _load_error(path: Path, root: Path) -> str:
    with pytest.raises(DefinitionError) as caught:
        (load_suite if path.name.startswith("suite") else load_group)(path, root)
    return str(caught.value)


def test_symlinked_skill_directory_pointing_outside_is_rejected(root: Path, outside: Path) -> None:
    (root / "skills").mkdir()
    (root / "skills" / "target").symlink_to(outside / "skill")
    path = write_json(root / "g.json", spec_doc("common"))
    assert _load_error(path, root) == (
        f"{path}: /variants/candidate/skills/0: expected a path inside the definition root {root.resolve()}, "
        f'found "skills/target" resolving to {(outside / "skill").resolve()}'
    )


def test_symlinked_parent_directory_pointing_outside_is_rejected(root: Path, outside: Path) -> None:
    (root / "skills").symlink_to(outside)
    path = write_json(root / "g.json", apply_edits(spec_doc("common"), {"/variants/candidate/skills/0": "skills/skill"}))
    assert "/variants/candidate/skills/0: expected a path inside the definition root" in _load_error(path, root)


def test_git_sourced_paths_are_not_checked_against_the_working_tree(root: Path, outside: Path) -> None:
    """A Git commit supplies these paths; the working tree's link is irrelevant (snapshots check Git entries)."""
    (root / "skills").mkdir()
    (root / "skills" / "target").symlink_to(outside / "skill")
    doc = apply_edits(
        spec_doc("description"),
        {"/variants/candidate/source": {"kind": "git", "ref": "HEAD"}},
    )
    assert load_group(write_json(root / "g.json", doc), root).candidate.skills == ("skills/target",)


def test_context_file_linking_outside_is_rejected(root: Path, outside: Path) -> None:
    (root / "context").mkdir()
    (root / "context" / "contract.md").symlink_to(outside / "secret.txt")
    doc = apply_edits(spec_doc("body"), {"/variants/baseline/source": {"kind": "working-tree"}})
    error = _load_error(write_json(root / "g.json", doc), root)
    # Both variants now read the same working-tree link.
    assert error.count('found "context/contract.md" resolving to') == 2
    assert "/variants/baseline/context/0:" in error and "/variants/candidate/context/0:" in error


def test_fixture_linking_outside_is_rejected(root: Path, outside: Path) -> None:
    (root / "fixtures").mkdir()
    (root / "fixtures" / "task").symlink_to(outside)
    error = _load_error(write_json(root / "g.json", spec_doc("body")), root)
    assert error.endswith(f'/fixture: expected a path inside the definition root {root.resolve()}, found "fixtures/task" resolving to {outside.resolve()}')


def test_dangling_fixture_link_pointing_outside_is_rejected(root: Path, outside: Path) -> None:
    (root / "fixtures").mkdir()
    (root / "fixtures" / "task").symlink_to(outside / "later")
    assert "/fixture: expected a path inside the definition root" in _load_error(write_json(root / "g.json", spec_doc("body")), root)


def test_bundle_entry_and_resources_linking_outside_are_rejected(root: Path, outside: Path) -> None:
    (root / "extensions").symlink_to(outside)
    error = _load_error(write_json(root / "g.json", spec_doc("runtime")), root)
    assert "/runtime/extensions/0/entry: expected a path inside the definition root" in error
    assert "/runtime/extensions/0/resources/0: expected a path inside the definition root" in error


def test_links_that_stay_inside_the_root_are_fine(root: Path) -> None:
    (root / "skills" / "v2").mkdir(parents=True)
    (root / "skills" / "target").symlink_to("v2")
    (root / "fixtures").mkdir()
    (root / "fixtures" / "task").symlink_to("../skills")
    assert load_group(write_json(root / "g.json", spec_doc("body")), root).fixture == "fixtures/task"


def test_symlink_loop_does_not_crash_the_loader(root: Path) -> None:
    (root / "skills").mkdir()
    (root / "skills" / "target").symlink_to("target")
    group = load_group(write_json(root / "g.json", spec_doc("common")), root)
    assert group.candidate.skills == ("skills/target",)


def test_definition_file_that_links_outside_is_rejected(root: Path, outside: Path) -> None:
    write_json(outside / "g.json", spec_doc("body"))
    (root / "g.json").symlink_to(outside / "g.json")
    assert _load_error(root / "g.json", root) == (
        f"{root / 'g.json'}: /: expected a path inside the definition root {root.resolve()}, "
        f"found {root / 'g.json'} resolving to {(outside / 'g.json').resolve()}"
    )


def test_definition_file_outside_the_root_is_rejected(root: Path, outside: Path) -> None:
    path = write_json(outside / "g.json", spec_doc("body"))
    assert "/: expected a path inside the definition root" in _load_error(path, root)


def test_definition_file_linking_inside_the_root_is_fine(root: Path) -> None:
    write_json(root / "real.json", spec_doc("body"))
    (root / "alias.json").symlink_to("real.json")
    assert load_group(root / "alias.json", root).id == "retained-artifact-behavior"


def test_suite_group_reference_leaving_the_root_is_rejected(root: Path, tmp_path: Path) -> None:
    write_json(tmp_path / "x.json", spec_doc("body"))  # it exists, and still may not be used
    path = write_json(root / "suite.json", {"schema_version": 1, "kind": "suite", "id": "s", "groups": ["../x.json"]})
    assert _load_error(path, root) == (
        f'{path}: /groups/0: expected a path inside the definition root, found "../x.json" leaving it through ".."'
    )


def test_suite_in_a_subdirectory_may_climb_while_staying_inside(root: Path) -> None:
    write_json(root / "g.json", spec_doc("body"))
    path = write_json(root / "suites" / "suite.json", {"schema_version": 1, "kind": "suite", "id": "s", "groups": ["../g.json"]})
    assert load_suite(path, root).groups[0].path == root / "g.json"


def test_suite_group_reference_linking_outside_is_rejected(root: Path, outside: Path) -> None:
    write_json(outside / "g.json", spec_doc("body"))
    (root / "groups").mkdir()
    (root / "groups" / "g.json").symlink_to(outside / "g.json")
    path = write_json(root / "suite.json", {"schema_version": 1, "kind": "suite", "id": "s", "groups": ["groups/g.json"]})
    assert _load_error(path, root) == (
        f"{path}: /groups/0: expected a path inside the definition root {root.resolve()}, "
        f'found "groups/g.json" resolving to {(outside / "g.json").resolve()}'
    )


def test_suite_group_directory_linking_outside_is_rejected(root: Path, outside: Path) -> None:
    write_json(outside / "g.json", spec_doc("body"))
    (root / "groups").symlink_to(outside)
    path = write_json(root / "suite.json", {"schema_version": 1, "kind": "suite", "id": "s", "groups": ["groups/g.json"]})
    assert "/groups/0: expected a path inside the definition root" in _load_error(path, root)


def test_suite_loaded_through_a_linked_root_resolves_groups(tmp_path: Path, root: Path) -> None:
    write_json(root / "groups" / "g.json", spec_doc("body"))
    write_json(root / "suite.json", {"schema_version": 1, "kind": "suite", "id": "s", "groups": ["groups/g.json"]})
    (tmp_path / "link").symlink_to(root)
    suite = load_suite(tmp_path / "link" / "suite.json", tmp_path / "link")
    assert suite.groups[0].path == tmp_path / "link" / "groups" / "g.json"


@pytest.mark.skipif(os.geteuid() == 0, reason="root can read unreadable files")
def test_unreadable_definition_is_a_definition_error(root: Path) -> None:
    path = write_json(root / "g.json", spec_doc("body"))
    path.chmod(0)
    try:
        assert "expected a readable file, found an OS error: Permission denied" in _load_error(path, root)
    finally:
        path.chmod(0o644)


# ------------------------------------------------------------ absolute paths: the relative form


def test_an_absolute_path_inside_the_root_is_told_its_relative_form(root: Path) -> None:
    absolute = str(root / "skills" / "target")
    path = write_json(root / "g.json", apply_edits(spec_doc("common"), {"/variants/candidate/skills/0": absolute}))
    assert _load_error(path, root) == (
        f'{path}: /variants/candidate/skills/0: expected a relative path, found absolute path "{absolute}"; '
        'relative to the definition root that is "skills/target"')

