"""The two primitives every reader of a stored result goes through, on the real file system.

``evidence.safe_io`` (open and list without following) and ``evidence.layout.path_problem``
(the one parser of paths a result names), and ``jsonbounds``; no pi host needed.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from pytest_skill_eval import jsonbounds
from pytest_skill_eval.errors import EvidenceError, EvidenceRefusedError, JSONBoundsError
from pytest_skill_eval.evidence import layout, safe_io


@pytest.mark.parametrize(("key", "found"), [
    ("/etc/passwd", "an absolute path"),
    ("workspace//tmp/x", "an empty name"),
    ("workspace/", "an empty name"),
    ("workspace/../../x", "a '..' name"),
    ("..", "a '..' name"),
    (".", "a '.' name"),
    ("workspace/./x", "a '.' name"),
    ("", "an empty path"),
    ("a\x00b", "a NUL byte"),
    ("x" * 256, "more than 255 bytes"),
    ("/".join(["x"] * 2100), "bytes (at most 4096)"),
    ("\udc80", "a lone surrogate"),
    (None, "found null"),
    (3, "found int"),
])
def test_the_path_parser_refuses_what_could_leave_a_directory(key: object, found: str) -> None:
    problem = layout.path_problem(key)
    assert problem is not None and found in problem, problem
    with pytest.raises(EvidenceError, match=r"^groups/x/run\.json: /snapshot/files/k: expected a relative path"):
        layout.parse_path(key, "groups/x/run.json", "/snapshot/files/k")


@pytest.mark.parametrize("key", ["workspace/CHANGE.md", "a/b/c", "..\\..\\x", "C:\\x", "é/ñ", "x" * 255, ".hidden", "a..b"])
def test_the_path_parser_takes_every_name_posix_can_hold(key: str) -> None:
    assert layout.path_problem(key) is None
    assert layout.parse_path(key, "f", "/p") == tuple(key.split("/"))


def test_a_group_dir_in_a_record_is_one_name() -> None:
    assert layout.path_problem("a/b", single=True) is not None
    problems = layout.record_path_problems("evidence-result", {"groups": [{"dir": "../x"}, {"dir": None}]})
    assert [p.pointer for p in problems] == ["/groups/0/dir"]


def test_inside_refuses_a_link_that_leads_out(tmp_path: Path) -> None:
    dest = tmp_path / "dest"
    dest.mkdir()
    (dest / "link").symlink_to(tmp_path)
    assert layout.inside(dest, ("a", "b")) == dest / "a" / "b"
    with pytest.raises(EvidenceError, match="would land outside"):
        layout.inside(dest, ("link", "evil.pth"))


@pytest.fixture
def result(tmp_path: Path) -> Path:
    root = tmp_path / "result"
    (root / "groups" / "001-g" / "candidate").mkdir(parents=True)
    (root / "groups" / "001-g" / "candidate" / "run.json").write_text("{}")
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "secret").write_text("secret")
    return root


def test_a_link_anywhere_below_the_root_is_refused_and_named(result: Path) -> None:
    outside = result.parent / "outside"
    (result / "groups" / "001-g" / "baseline").symlink_to(outside)
    with pytest.raises(EvidenceRefusedError, match=r"^groups/001-g/baseline: expected a directory, found a symbolic link"):
        safe_io.read_bytes(result / "groups" / "001-g" / "baseline" / "secret", result)
    (result / "groups" / "001-g" / "candidate" / "stderr.txt").symlink_to(outside / "secret")
    with pytest.raises(EvidenceRefusedError, match="stderr.txt: expected a regular file, found a symbolic link"):
        safe_io.read_bytes(result / "groups" / "001-g" / "candidate" / "stderr.txt", result)
    assert safe_io.entry_kind(result / "groups" / "001-g" / "baseline", result) == safe_io.SYMLINK
    assert safe_io.read_bytes(result / "groups" / "001-g" / "candidate" / "run.json", result) == b"{}"


def test_special_files_are_named_without_being_opened(result: Path) -> None:
    run_dir = result / "groups" / "001-g" / "candidate"
    os.mkfifo(run_dir / "events.jsonl")
    with pytest.raises(EvidenceRefusedError, match=r"events\.jsonl: expected a regular file, found a FIFO"):
        safe_io.read_bytes(run_dir / "events.jsonl", result)
    (run_dir / "workspace").write_text("")
    with pytest.raises(EvidenceRefusedError, match="workspace: expected a directory, found a regular file"):
        safe_io.list_dir(run_dir / "workspace", result)
    assert safe_io.list_dir(run_dir / "absent", result) == []


def test_size_and_hard_links_are_bounded(result: Path) -> None:
    run = result / "groups" / "001-g" / "candidate" / "run.json"
    with pytest.raises(EvidenceRefusedError, match="at most 1 bytes, found 2 bytes"):
        safe_io.read_bytes(run, result, limit=1)
    linked = run.with_name("final-response.txt")
    os.link(result.parent / "outside" / "secret", linked)
    with pytest.raises(EvidenceRefusedError, match="found a file with 2 hard links"):
        safe_io.read_bytes(linked, result)
    assert safe_io.read_bytes(linked, result, single_link=False) == b"secret"


def test_a_symlinked_group_or_trial_is_a_located_error(result: Path) -> None:
    (result / "groups" / "002-h").symlink_to(result.parent / "outside")
    with pytest.raises(EvidenceError, match="groups/002-h: expected a group directory, found a symbolic link"):
        layout.group_dirs(result)
    (result / "groups" / "002-h").unlink()
    trials = result / "groups" / "001-g" / "trials"
    trials.mkdir()
    (trials / "001").symlink_to(result.parent / "outside")
    with pytest.raises(EvidenceError, match="trials/001: expected a trial directory, found a symbolic link"):
        layout.trial_dirs(result / "groups" / "001-g")


def test_json_is_bounded_with_a_located_error(result: Path) -> None:
    path = result / "groups" / "001-g" / "candidate" / "run.json"
    path.write_text("[" * 100_000 + "]" * 100_000)
    with pytest.raises(EvidenceError, match=r"^groups/001-g/candidate/run\.json: /: cannot read evidence file .*"
                                            r"expected JSON this reader can take, found nesting too deep to parse"):
        safe_io.read_json(path, result)
    path.write_text('{"a": ' + "[" * 300 + "]" * 300 + "}")
    with pytest.raises(EvidenceError, match=r"run\.json: /a(/0)+: cannot read .* found nesting too deep to read"):
        safe_io.read_json(path, result)
    with pytest.raises(JSONBoundsError, match="over the 4-byte limit"):
        jsonbounds.loads("[1, 2]", limit=4)


def test_a_pi_record_nested_past_the_parser_is_a_record_not_a_crash() -> None:
    from pytest_skill_eval.host.protocol import parse_record

    record = parse_record(0, b'{"type": "message_end", "x": ' + b"[" * 100_000 + b"]" * 100_000 + b"}")
    assert record.data is None and record.error is not None and "nesting too deep" in record.error


def test_definitions_and_scripts_over_the_bound_or_special_are_refused_unread(tmp_path: Path) -> None:
    from pytest_skill_eval.definitions.document import read_document
    from pytest_skill_eval.errors import DefinitionError, ScriptError
    from pytest_skill_eval.scripted.format import load_script

    huge = tmp_path / "huge.json"
    with open(huge, "wb") as handle:
        handle.truncate(jsonbounds.MAX_BYTES + 1)  # sparse: never read
    with pytest.raises(DefinitionError, match="over the 67108864-byte limit"):
        read_document(huge)
    with pytest.raises(ScriptError, match="over the 67108864-byte limit"):
        load_script(huge)
    fifo = tmp_path / "script.json"
    os.mkfifo(fifo)
    with pytest.raises(ScriptError, match="not a regular file"):
        load_script(fifo)
    deep = tmp_path / "deep.json"
    deep.write_text('{"turns": ' + "[" * 100_000 + "]" * 100_000 + "}")
    with pytest.raises(ScriptError, match="nesting too deep to parse"):
        load_script(deep)
    with pytest.raises(DefinitionError, match="nesting too deep to parse"):
        read_document(deep)


def test_a_tree_file_with_other_links_is_shown_only_with_the_bytes_its_manifest_records(result: Path) -> None:
    import hashlib
    import json

    from pytest_skill_eval.evidence.reader import load_tree

    tree = result / "groups" / "001-g" / "candidate" / "workspace"
    tree.mkdir()
    (tree / "own.md").write_text("own")
    os.link(result.parent / "outside" / "secret", tree / "linked.md")
    assert set(load_tree(tree, result)) == {"own.md"}  # no digest to check it against: left out
    assert set(load_tree(tree)) == {"own.md", "linked.md"}  # the evaluator's own tree while it runs
    manifest = tree.with_name("workspace.manifest.json")
    manifest.write_text(json.dumps({"files": {"linked.md": {"size": 6, "sha256": "0" * 64}}}))
    lied = load_tree(tree, result)
    with pytest.raises(OSError, match="does not hold the bytes its manifest records"):
        lied["linked.md"]
    manifest.write_text(json.dumps({"files": {"linked.md": {"size": 6, "sha256": hashlib.sha256(b"secret").hexdigest()}}}))
    assert load_tree(tree, result)["linked.md"] == b"secret"  # the bytes the result recorded: nothing new learnt
