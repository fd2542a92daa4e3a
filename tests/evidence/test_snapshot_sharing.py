"""Evidence snapshots store what changed: unchanged files are hard-linked between evidence
trees (never into the live workspace), and a later write to the workspace, in place or
not, can never change an earlier snapshot."""

from __future__ import annotations

import hashlib
import json
import os
import time
from pathlib import Path

import pytest

from pytest_skill_eval import observation
from pytest_skill_eval.evidence import layout, records, store
from pytest_skill_eval.evidence.reader import load_observation, load_tree
from pytest_skill_eval.evidence.run_records import ManifestEntry
from pytest_skill_eval.grading.workspace import changed_files
from pytest_skill_eval.observation import FileTree
from pytest_skill_eval.redaction import Redactor


def _settle() -> None:
    # the file system clock must move past the workspace's last change for a signature to be trusted
    time.sleep(0.02)


@pytest.fixture
def live(tmp_path: Path) -> Path:
    ws = tmp_path / "scratch" / "workspace"
    (ws / "sub").mkdir(parents=True)
    (ws / "keep.txt").write_bytes(b"kept")
    (ws / "sub" / "edit.txt").write_bytes(b"version-1")
    os.symlink("keep.txt", ws / "link")
    _settle()
    return ws


def _ino(path: Path) -> int:
    return os.lstat(path).st_ino


def test_an_unchanged_file_is_linked_to_the_earlier_snapshot_never_to_the_workspace(live: Path, tmp_path: Path) -> None:
    cache = store.SnapshotCache()
    ev = tmp_path / "ev"
    first = store.copy_tree_atomic(live, ev / "a", cache=cache)
    second = store.copy_tree_atomic(live, ev / "b", cache=cache)
    assert first.linked == 0 and second.linked == 2
    assert _ino(ev / "a" / "keep.txt") == _ino(ev / "b" / "keep.txt")
    assert _ino(ev / "a" / "keep.txt") != _ino(live / "keep.txt")
    assert _ino(ev / "b" / "sub" / "edit.txt") != _ino(live / "sub" / "edit.txt")
    assert os.readlink(ev / "b" / "link") == "keep.txt"
    assert first.files == second.files
    assert second.files["sub/edit.txt"] == ManifestEntry(9, hashlib.sha256(b"version-1").hexdigest())


@pytest.mark.parametrize("change", ["in-place", "truncate", "append", "chmod", "replace", "same-size-same-mtime"])
def test_a_later_write_to_the_workspace_never_changes_an_earlier_snapshot(live: Path, tmp_path: Path, change: str) -> None:
    cache = store.SnapshotCache()
    ev = tmp_path / "ev"
    store.copy_tree_atomic(live, ev / "initial", cache=cache)
    store.copy_tree_atomic(live, ev / "turn1", cache=cache)  # linked to initial
    target = live / "sub" / "edit.txt"
    before = os.stat(target)
    if change == "in-place":
        with open(target, "r+b") as handle:  # what pi's write and edit tools do: same inode
            handle.write(b"VERSION-2")
    elif change == "truncate":
        os.truncate(target, 3)
    elif change == "append":
        with open(target, "ab") as handle:
            handle.write(b"+more")
    elif change == "chmod":
        os.chmod(target, 0o600)
    elif change == "replace":
        tmp = live / "sub" / ".tmp"
        tmp.write_bytes(b"version-2")
        os.replace(tmp, target)
    else:
        # same size, mtime put back: only ctime tells
        with open(target, "r+b") as handle:
            handle.write(b"VERSION-1")
        os.utime(target, ns=(before.st_atime_ns, before.st_mtime_ns))
    after = store.copy_tree_atomic(live, ev / "turn2", cache=cache)
    for earlier in ("initial", "turn1"):
        assert (ev / earlier / "sub" / "edit.txt").read_bytes() == b"version-1"
        assert os.stat(ev / earlier / "sub" / "edit.txt").st_mode == before.st_mode
    assert (ev / "turn2" / "sub" / "edit.txt").read_bytes() == target.read_bytes()
    assert os.stat(ev / "turn2" / "sub" / "edit.txt").st_mode == os.stat(target).st_mode
    assert _ino(ev / "turn2" / "sub" / "edit.txt") != _ino(ev / "turn1" / "sub" / "edit.txt")
    assert _ino(ev / "turn2" / "keep.txt") == _ino(ev / "turn1" / "keep.txt")
    assert after.files["sub/edit.txt"].size == len(target.read_bytes())


def test_a_file_changed_in_the_same_clock_tick_is_read_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ws = tmp_path / "s" / "workspace"
    ws.mkdir(parents=True)
    (ws / "f").write_bytes(b"one")
    cache = store.SnapshotCache()
    # a clock that never moves past the file's change: no signature may be trusted
    monkeypatch.setattr(store, "_fs_now", lambda directory: 0)
    store.copy_tree_atomic(ws, tmp_path / "ev" / "a", cache=cache)
    assert not cache.by_source
    with open(ws / "f", "r+b") as handle:
        handle.write(b"two")
    store.copy_tree_atomic(ws, tmp_path / "ev" / "b", cache=cache)
    assert (tmp_path / "ev" / "b" / "f").read_bytes() == b"two"
    assert (tmp_path / "ev" / "a" / "f").read_bytes() == b"one"


def test_a_large_file_is_streamed_and_shared_and_an_in_place_change_is_seen(tmp_path: Path,
                                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    ws = tmp_path / "s" / "workspace"
    ws.mkdir(parents=True)
    big = os.urandom(3 * 1024 * 1024 + 17)  # larger than one read: copied as it is read
    (ws / "big.bin").write_bytes(big)
    cache = store.SnapshotCache()
    monkeypatch.setattr(store, "_fs_now", lambda directory: 0)  # never trusted by signature
    a = store.copy_tree_atomic(ws, tmp_path / "ev" / "a", cache=cache)
    b = store.copy_tree_atomic(ws, tmp_path / "ev" / "b", cache=cache)  # same content: linked
    assert (a.linked, b.linked) == (0, 1)
    assert _ino(tmp_path / "ev" / "a" / "big.bin") == _ino(tmp_path / "ev" / "b" / "big.bin")
    assert a.files["big.bin"] == ManifestEntry(len(big), hashlib.sha256(big).hexdigest())
    with open(ws / "big.bin", "r+b") as handle:
        handle.seek(2 * 1024 * 1024)
        handle.write(b"X")
    c = store.copy_tree_atomic(ws, tmp_path / "ev" / "c", cache=cache)
    assert c.linked == 0
    assert (tmp_path / "ev" / "a" / "big.bin").read_bytes() == big
    assert (tmp_path / "ev" / "c" / "big.bin").read_bytes() == (ws / "big.bin").read_bytes() != big
    assert not [p for p in (tmp_path / "ev").rglob(".skill-eval-link-*")]


def test_a_moved_or_replaced_evidence_file_is_never_linked(live: Path, tmp_path: Path) -> None:
    cache = store.SnapshotCache()
    ev = tmp_path / "ev"
    store.copy_tree_atomic(live, ev / "a", cache=cache)
    (ev / "a").rename(tmp_path / "moved")  # as a rerun moves an attempt's evidence away
    (ev / "a").mkdir()
    (ev / "a" / "keep.txt").write_bytes(b"something else")
    (ev / "a" / "sub").mkdir()
    (ev / "a" / "sub" / "edit.txt").write_bytes(b"something else")
    taken = store.copy_tree_atomic(live, ev / "b", cache=cache)
    assert taken.linked == 0
    assert (ev / "b" / "keep.txt").read_bytes() == b"kept"
    assert (ev / "b" / "sub" / "edit.txt").read_bytes() == b"version-1"


def test_redacted_files_are_shared_with_their_counts_and_digests_of_the_stored_bytes(tmp_path: Path) -> None:
    ws = tmp_path / "s" / "workspace"
    ws.mkdir(parents=True)
    (ws / "secret.txt").write_bytes(b"token=hunter2-secret-value")
    _settle()
    redactor = Redactor.of(["hunter2-secret-value"])
    cache = store.SnapshotCache()
    a = store.copy_tree_atomic(ws, tmp_path / "ev" / "a", redactor.data, cache, redactor.secrets)
    b = store.copy_tree_atomic(ws, tmp_path / "ev" / "b", redactor.data, cache, redactor.secrets)
    plain = store.copy_tree_atomic(ws, tmp_path / "ev" / "plain", None, cache, None)
    assert a.counts == b.counts == {"secret.txt": 1}
    assert b.linked == 1 and plain.linked == 0  # another transform never shares a stored file
    stored = (tmp_path / "ev" / "b" / "secret.txt").read_bytes()
    assert b"hunter2" not in stored
    assert b.files["secret.txt"].sha256 == hashlib.sha256(stored).hexdigest()
    assert (tmp_path / "ev" / "plain" / "secret.txt").read_bytes() == b"token=hunter2-secret-value"


def test_a_fresh_copy_keeps_modes_times_and_leaves_special_files_out(tmp_path: Path) -> None:
    ws = tmp_path / "s" / "workspace"
    ws.mkdir(parents=True)
    (ws / "run.sh").write_bytes(b"#!/bin/sh\n")
    os.chmod(ws / "run.sh", 0o751)
    os.utime(ws / "run.sh", ns=(1_000_000_000, 2_000_000_000))
    os.mkfifo(ws / "pipe")
    taken = store.copy_tree_atomic(ws, tmp_path / "ev" / "w")
    st = os.stat(tmp_path / "ev" / "w" / "run.sh")
    assert (st.st_mode & 0o777, st.st_mtime_ns) == (0o751, 2_000_000_000)
    assert sorted(p.name for p in (tmp_path / "ev" / "w").iterdir()) == ["run.sh"]
    assert list(taken.files) == ["run.sh"]


def _stored_run(tmp_path: Path, *, manifests: bool) -> Path:
    """A run directory as the engine stores one, with or without the snapshot manifests."""
    run_dir = tmp_path / "run"
    ws = tmp_path / "s" / "workspace"
    ws.mkdir(parents=True)
    cache = store.SnapshotCache()

    def write(name: str, data: bytes) -> None:
        (ws / name).write_bytes(data)
        os.utime(ws / name, ns=(1_000_000_000, 1_000_000_000))  # long before any manifest

    write("a.json", b'{"v": 1}')
    write("b.txt", b"b")

    def snap(rel: str) -> None:
        taken = store.copy_tree_atomic(ws, run_dir / rel, cache=cache)
        if manifests:
            record = records.ManifestRecord({k: records.ManifestEntry(v.size, v.sha256) for k, v in taken.files.items()})
            store.write_atomic(layout.manifest_file(run_dir / rel), record.to_bytes())

    snap("workspace-initial")
    write("a.json", b'{"v": 2}')
    snap("turns/1/workspace")
    write("c.txt", b"c")
    snap("workspace")
    store.write_json(run_dir / "run.json", records.RunRecord(variant="baseline", group="g", state="complete",
                                                              reason=None).to_json())
    return run_dir


@pytest.mark.parametrize("manifests", [True, False], ids=["with-manifests", "stored-before-manifests"])
def test_grading_compares_trees_without_reading_their_files(tmp_path: Path, manifests: bool,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    run_dir = _stored_run(tmp_path, manifests=manifests)
    if manifests:
        listed = json.loads((run_dir / "workspace.manifest.json").read_text())
        assert sorted(listed["files"]) == ["a.json", "b.txt", "c.txt"]
    obs = load_observation(run_dir)
    assert isinstance(obs.final_files, FileTree)
    if manifests:
        # the tree lists itself, the manifests give the digests: no file is opened
        monkeypatch.setattr(observation, "open", lambda *a, **k: pytest.fail(f"opened {a[0]}"), raising=False)
    assert changed_files(obs.initial_files, obs.final_files) == {"a.json": "modified", "c.txt": "added"}
    assert changed_files(obs.initial_files, obs.turn_files[1]) == {"a.json": "modified"}
    monkeypatch.undo()
    assert obs.turn_files[1]["a.json"] == b'{"v": 2}'
    assert "missing" not in obs.final_files


@pytest.mark.parametrize("text", ["{not json", '{"files": {"a.json": {"size": -1, "sha256": "x"}}}', "[]"])
def test_a_manifest_that_is_not_one_falls_back_to_the_tree(tmp_path: Path, text: str) -> None:
    run_dir = _stored_run(tmp_path, manifests=True)
    (run_dir / "workspace.manifest.json").write_text(text)
    tree = load_tree(run_dir / "workspace")
    assert sorted(tree) == ["a.json", "b.txt", "c.txt"]
    assert tree["c.txt"] == b"c"
    assert tree.digest("c.txt") == hashlib.sha256(b"c").hexdigest()


def test_a_manifest_the_quick_check_refuses_but_the_schema_accepts_is_used(tmp_path: Path) -> None:
    run_dir = _stored_run(tmp_path, manifests=True)
    data = json.loads((run_dir / "workspace.manifest.json").read_text())
    data["files"]["c.txt"]["size"] = 1.0  # an integer to JSON Schema, not to the quick check
    data["files"]["c.txt"]["sha256"] = "0" * 64  # proves the digest comes from the manifest
    (run_dir / "workspace.manifest.json").write_text(json.dumps(data))
    assert load_tree(run_dir / "workspace").digest("c.txt") == "0" * 64


def test_a_stored_tree_edited_by_hand_is_graded_as_it_is_now(tmp_path: Path) -> None:
    """The tree lists itself; a manifest digest counts only for a file untouched since."""
    run_dir = _stored_run(tmp_path, manifests=True)
    (run_dir / "workspace" / "c.txt").unlink()
    # replaced, not written in place: b.txt is a hard link shared with workspace-initial/
    (run_dir / "workspace" / "b.new").write_bytes(b"B")  # same size, newer mtime than the manifest
    os.replace(run_dir / "workspace" / "b.new", run_dir / "workspace" / "b.txt")
    obs = load_observation(run_dir)
    assert changed_files(obs.initial_files, obs.final_files) == {"a.json": "modified", "b.txt": "modified"}


# --- with the real host -------------------------------------------------------------------


@pytest.mark.pi
def test_pi_writing_in_place_never_changes_an_earlier_linked_snapshot(pytester: pytest.Pytester, pi_host: object) -> None:
    """Turn 1 leaves out.txt alone (its turn snapshot is linked to workspace-initial); turn 2
    has pi's edit tool rewrite it and turn 3 its write tool: every earlier snapshot keeps
    the bytes it had, and grading reads each turn's own."""
    from isolation.test_isolation import SKILL, _group, _run, _script, _variant, _write

    _write(pytester.path / "skills" / "target" / "SKILL.md", SKILL.format(name="target", description="Target skill."))
    _write(pytester.path / "fixtures" / "ws" / "out.txt", "version-1\n")
    _write(pytester.path / "fixtures" / "ws" / "keep" / "kept.txt", "kept\n")
    expected = {1: "version-1\n", 2: "VERSION-2\n", 3: "version-3, longer than before\n"}
    expectations: list[dict[str, object]] = [
        {"id": f"{v}-turn-{t}", "kind": "file-text", "variant": v, "path": "out.txt", "turn": t,
         "expect": "equals", "value": text}
        for v in ("baseline", "candidate") for t, text in expected.items()
    ]
    expectations += [{"id": f"{v}-turn-1-unchanged", "kind": "changed-paths", "variant": v, "turn": 1,
                      "expect": "equals", "paths": []} for v in ("baseline", "candidate")]
    group = _group("inplace", prompts=["One.", "Two.", "Three."], tools=["read", "write", "edit"], fixture="fixtures/ws",
                   baseline=_variant(["skills/target"], 0), candidate=_variant(["skills/target"], 0),
                   expectations=expectations)
    script = _script(
        [{"text": "nothing to do"}],
        [{"tool_calls": [{"name": "edit", "arguments": {"path": "out.txt",
                                                         "edits": [{"oldText": "version-1", "newText": "VERSION-2"}]}}]},
         {"text": "edited"}],
        [{"tool_calls": [{"name": "write", "arguments": {"path": "out.txt", "content": expected[3]}}]},
         {"text": "written"}],
    )
    result, gdir = _run(pytester, group, script)
    result.assert_outcomes(passed=1)
    grade = json.loads((gdir / "grade.json").read_text())
    assert {e["id"]: e["status"] for e in grade["expectations"]} == {e["id"]: "pass" for e in expectations}
    for v in ("baseline", "candidate"):
        run_dir = gdir / v
        assert (run_dir / "workspace-initial" / "out.txt").read_text() == "version-1\n"
        for t, text in expected.items():
            assert (run_dir / "turns" / str(t) / "workspace" / "out.txt").read_text() == text
        assert (run_dir / "workspace" / "out.txt").read_text() == expected[3]
        # the untouched file is stored once for the whole group; out.txt shares only while unchanged
        kept = {_ino(p / "keep" / "kept.txt") for p in [run_dir / "workspace-initial", run_dir / "workspace",
                                                       *[run_dir / "turns" / str(t) / "workspace" for t in expected]]}
        assert len(kept) == 1
        assert _ino(run_dir / "turns" / "1" / "workspace" / "out.txt") == _ino(run_dir / "workspace-initial" / "out.txt")
        assert _ino(run_dir / "turns" / "2" / "workspace" / "out.txt") != _ino(run_dir / "turns" / "1" / "workspace" / "out.txt")
        manifest = json.loads((run_dir / "turns" / "2" / "workspace.manifest.json").read_text())
        assert manifest["files"]["out.txt"] == {"size": 10, "sha256": hashlib.sha256(b"VERSION-2\n").hexdigest()}
    assert _ino(gdir / "baseline" / "workspace-initial" / "out.txt") == _ino(gdir / "candidate" / "workspace-initial" / "out.txt")


@pytest.mark.parametrize("files", [{}, {"a": (1, "0" * 64), 'q"\\ \u00e9/b': (0, "f" * 64)}])
def test_a_manifest_is_the_json_of_its_record_one_line_per_file(files: dict[str, tuple[int, str]]) -> None:
    record = records.ManifestRecord({k: records.ManifestEntry(*v) for k, v in files.items()})
    text = record.to_bytes().decode("utf-8")
    assert json.loads(text) == record.to_json()
    assert records.parse(records.ManifestRecord, json.loads(text), "m") == record
    assert len(text.splitlines()) == (3 if not files else 4 + len(files))
