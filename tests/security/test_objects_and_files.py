"""Objects are verified against their digest before use; special files are never opened.

A stored object whose bytes do not hash to its name is refused (located) by ``rerun``,
which would materialise it, and ``merge``, which would copy it. A FIFO, socket, device or
directory where a file is expected, or a file where a directory is expected, is named
without being opened: nothing blocks, nothing reads a device.
"""

from __future__ import annotations

import json
import os
import socket
import stat

import pytest

from .cases import Case, case
from .hostile import COMMANDS, Scene

pytestmark = pytest.mark.pi


def _fixture_object(scene: Scene) -> str:
    run = json.loads((scene.body / "baseline" / "run.json").read_text())
    digest: str = run["snapshot"]["files"]["workspace/CHANGE.md"]["sha256"]
    return digest


def _replace(path: os.PathLike[str] | str) -> None:
    if os.path.isdir(path) and not os.path.islink(path):
        import shutil

        shutil.rmtree(path)
    elif os.path.lexists(path):
        os.unlink(path)


@case("object-with-wrong-bytes", "does not hold the content its name says", "rerun merge")
def _wrong_digest(scene: Scene) -> None:
    digest = _fixture_object(scene)
    path = scene.target / "objects" / digest[:2] / digest
    os.chmod(path, 0o644)
    path.write_bytes(b"import os; os.system('echo pwned')\n")


@case("object-missing", "no such file", "rerun")
def _missing(scene: Scene) -> None:
    digest = _fixture_object(scene)
    os.unlink(scene.target / "objects" / digest[:2] / digest)


@case("events-as-a-fifo", "events.jsonl", "view report merge")
def _fifo_events(scene: Scene) -> None:
    path = scene.body / "candidate" / "events.jsonl"
    _replace(path)
    os.mkfifo(path)


@case("run-record-as-a-fifo", "run.json", "view report regrade rerun merge")
def _fifo_run(scene: Scene) -> None:
    path = scene.body / "candidate" / "run.json"
    _replace(path)
    os.mkfifo(path)


@case("object-as-a-fifo", "objects/", "rerun merge")
def _fifo_object(scene: Scene) -> None:
    digest = _fixture_object(scene)
    path = scene.target / "objects" / digest[:2] / digest
    _replace(path)
    os.mkfifo(path)


# variants the issue does not name


@case("stderr-as-a-socket", "stderr.txt", "view report merge")
def _socket(scene: Scene) -> None:
    path = scene.body / "candidate" / "stderr.txt"
    _replace(path)
    # a socket's path must be short: bind in its directory
    here = os.getcwd()
    os.chdir(path.parent)
    try:
        with socket.socket(socket.AF_UNIX) as sock:
            sock.bind(path.name)
    finally:
        os.chdir(here)


@case("final-response-as-a-character-device", "final-response.txt", "view report merge")
def _device(scene: Scene) -> None:
    path = scene.body / "candidate" / "final-response.txt"
    _replace(path)
    try:
        os.mknod(path, stat.S_IFCHR | 0o644, os.makedev(1, 5))  # what /dev/zero is: endless bytes
    except PermissionError:
        pytest.skip("creating a device file needs CAP_MKNOD")


@case("run-record-as-a-directory", "run.json", "view report regrade rerun")
def _directory(scene: Scene) -> None:
    path = scene.body / "candidate" / "run.json"
    _replace(path)
    path.mkdir()


@case("workspace-as-a-file", "workspace", "view report")
def _file_for_dir(scene: Scene) -> None:
    path = scene.body / "candidate" / "workspace"
    _replace(path)
    path.write_text("not a directory\n")


@case("group-directory-as-a-fifo", "groups/", "view list report regrade rerun merge")
def _group_fifo(scene: Scene) -> None:
    _replace(scene.body)
    os.mkfifo(scene.body)


CASES: list[Case] = [_wrong_digest, _missing, _fifo_events, _fifo_run, _fifo_object, _socket, _device, _directory,
                     _file_for_dir, _group_fifo]


@pytest.mark.parametrize("command", COMMANDS)
@pytest.mark.parametrize("hostile", CASES, ids=lambda c: c.id)
def test_objects_are_verified_and_special_files_never_opened(scene: Scene, hostile: Case, command: str) -> None:
    hostile.check(scene, command)
