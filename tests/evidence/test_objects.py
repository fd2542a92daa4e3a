"""The result's content-addressed store: one object per content, safe under concurrent writers."""

from __future__ import annotations

import hashlib
import multiprocessing
import os
import threading
from pathlib import Path

import pytest

from pytest_skill_eval.errors import EvidenceError
from pytest_skill_eval.evidence import objects
from pytest_skill_eval.redaction import Redactor


def test_an_object_is_named_by_the_sha256_of_its_bytes(tmp_path: Path) -> None:
    digest = objects.put(tmp_path, b"hello\n")
    assert digest == hashlib.sha256(b"hello\n").hexdigest()
    path = tmp_path / "objects" / digest[:2] / digest
    assert path.read_bytes() == b"hello\n"
    assert objects.read(tmp_path, digest) == b"hello\n"
    assert objects.put(tmp_path, b"hello\n") == digest
    assert [p.name for p in (tmp_path / "objects").rglob("*") if p.is_file()] == [digest]


def test_a_changed_object_is_refused_when_read(tmp_path: Path) -> None:
    digest = objects.put(tmp_path, b"original")
    path = objects.object_path(tmp_path, digest)
    os.chmod(path, 0o644)
    path.write_bytes(b"tampered")
    with pytest.raises(EvidenceError, match="does not hold the content its name says"):
        objects.read(tmp_path, digest)


@pytest.mark.parametrize("name", ["../etc", "ABC", "0" * 63, "g" * 64])
def test_an_object_name_must_be_a_sha256(tmp_path: Path, name: str) -> None:
    with pytest.raises(EvidenceError, match="expected a sha256 object name"):
        objects.object_path(tmp_path, name)


def test_concurrent_writers_of_the_same_content_all_succeed(tmp_path: Path) -> None:
    data = os.urandom(1 << 20)
    barrier = threading.Barrier(8)
    digests: list[str] = []
    errors: list[BaseException] = []

    def write() -> None:
        try:
            barrier.wait()
            digests.append(objects.put(tmp_path, data))
        except BaseException as exc:  # noqa: BLE001 - any failure fails the test below
            errors.append(exc)

    threads = [threading.Thread(target=write) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert len(set(digests)) == 1
    files = [p for p in (tmp_path / "objects").rglob("*") if p.is_file()]
    assert [p.name for p in files] == [digests[0]], "one object, no temporary file left behind"
    assert files[0].read_bytes() == data


def _put_many(result_dir: str, worker: int) -> None:
    for n in range(50):
        objects.put(Path(result_dir), f"shared object {(n + worker) % 50}".encode())


def test_concurrent_processes_share_one_object_per_content(tmp_path: Path) -> None:
    with multiprocessing.get_context("spawn").Pool(4) as pool:
        pool.starmap(_put_many, [(str(tmp_path), n) for n in range(4)])
    files = sorted(p for p in (tmp_path / "objects").rglob("*") if p.is_file())
    assert len(files) == 50
    assert all(hashlib.sha256(p.read_bytes()).hexdigest() == p.name for p in files)


def test_a_tree_is_stored_by_path_with_modes_and_materialised_back(tmp_path: Path) -> None:
    base, result = tmp_path / "base", tmp_path / "result"
    (base / "resources" / "skills" / "0" / "s" / "scripts").mkdir(parents=True)
    (base / "resources" / "skills" / "0" / "s" / "SKILL.md").write_text("skill\n")
    tool = base / "resources" / "skills" / "0" / "s" / "scripts" / "run.sh"
    tool.write_text("#!/bin/sh\n")
    tool.chmod(0o755)
    (base / "resources" / "skills" / "0" / "s" / "link").symlink_to("SKILL.md")
    files, counts = objects.store_tree(result, base, "resources")
    assert sorted(files) == ["resources/skills/0/s/SKILL.md", "resources/skills/0/s/scripts/run.sh"]
    assert files["resources/skills/0/s/scripts/run.sh"][1] == "755"
    assert counts == {}
    dest = tmp_path / "again"
    assert objects.materialise(result, files, "resources/skills/0/s", dest) == 2
    assert (dest / "SKILL.md").read_text() == "skill\n"
    assert os.stat(dest / "scripts" / "run.sh").st_mode & 0o777 == 0o755
    assert objects.materialise(result, files, "resources/skills/0/s/SKILL.md", tmp_path / "one.md") == 1
    assert objects.materialise(result, files, "resources/skills/0/other", tmp_path / "none") == 0


def test_a_secret_in_an_input_is_stored_as_the_marker(tmp_path: Path) -> None:
    base, result = tmp_path / "base", tmp_path / "result"
    (base / "workspace").mkdir(parents=True)
    secret = "sk-live-0123456789abcdefghij"
    (base / "workspace" / "notes.txt").write_text(f"key={secret}\n")
    files, counts = objects.store_tree(result, base, "workspace", Redactor.of([secret]).data)
    assert counts == {"workspace/notes.txt": 1}
    stored = objects.read(result, files["workspace/notes.txt"][0])
    assert secret.encode() not in stored and b"redacted" in stored


def test_a_temporary_object_a_killed_writer_left_is_swept(tmp_path: Path) -> None:
    from pytest_skill_eval.evidence.layout import sweep_staging

    digest = objects.put(tmp_path, b"kept")
    left = objects.object_path(tmp_path, digest).parent / f".{digest[:8]}.abcd1234.tmp"
    left.write_bytes(b"partial")
    assert sweep_staging(tmp_path) == [left]
    assert objects.read(tmp_path, digest) == b"kept"
