"""Every path a stored result names goes through one parser: no key writes or reads outside.

The snapshot keys of ``run.json`` are where ``skill-eval rerun`` materialises the inputs a
variant got: an absolute or ``..`` key used to write attacker-chosen bytes anywhere the
user can write (a ``.pth`` file: code execution). Each case plants such a key (with an
object that really holds the bytes, so only the path stops it) or another path a result
names, and every command must refuse it, located, or answer without writing outside.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from .cases import Case, case
from .hostile import COMMANDS, Scene, edit_json

pytestmark = pytest.mark.pi

PAYLOAD = b"import os; os.system('echo pwned')\n"


def _object(scene: Scene, data: bytes = PAYLOAD) -> str:
    digest = hashlib.sha256(data).hexdigest()
    path = scene.target / "objects" / digest[:2] / digest
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return digest


def _plant(scene: Scene, key: str) -> None:
    """Add *key* to the snapshot of both variants' run.json, naming a real object."""
    digest = _object(scene)
    for variant in ("baseline", "candidate"):
        edit_json(scene.body / variant / "run.json",
                  lambda run: run["snapshot"]["files"].__setitem__(key, {"sha256": digest, "mode": "644"}))


def _up(scene: Scene) -> str:
    return "/".join([".."] * 30) + str(scene.evil)


@case("absolute-key-after-the-prefix", "/snapshot/files/workspace~1~1", "view report regrade rerun")
def _double_slash(scene: Scene) -> None:
    _plant(scene, "workspace/" + str(scene.evil))


@case("traversal-key", "a '..' name", "view report regrade rerun")
def _traversal(scene: Scene) -> None:
    _plant(scene, "workspace/" + _up(scene))


@case("absolute-key", "an absolute path", "view report regrade rerun")
def _absolute(scene: Scene) -> None:
    _plant(scene, str(scene.evil))


@case("traversal-in-a-manifest-key", "workspace.manifest.json", "view report")
def _manifest(scene: Scene) -> None:
    def change(manifest: dict[str, Any]) -> None:
        manifest["files"]["../" * 12 + "outside/secret.txt"] = {"size": 10, "sha256": "0" * 64}
    edit_json(scene.body / "candidate" / "workspace.manifest.json", change)


@case("group-directory-in-result-json-leaves-groups", "/groups/0/dir", "view list report merge")
def _result_dir(scene: Scene) -> None:
    edit_json(scene.target / "result.json", lambda r: r["groups"][0].__setitem__("dir", "../../../../outside"))


# variants the issue does not name


@case("dot-key", "a '.' name", "view report regrade rerun")
def _dot(scene: Scene) -> None:
    _plant(scene, "workspace/./evil.pth")


@case("nul-in-a-key", "NUL", "view report regrade rerun")
def _nul(scene: Scene) -> None:
    _plant(scene, "workspace/evil\u0000.pth")


@case("empty-key", "an empty path", "view report regrade rerun")
def _empty(scene: Scene) -> None:
    _plant(scene, "")


@case("overlong-name", "more than 255 bytes", "view report regrade rerun")
def _long(scene: Scene) -> None:
    _plant(scene, "workspace/" + "x" * 300)


@case("backslash-key-is-one-name-inside", "", "")
def _backslash(scene: Scene) -> None:
    # a backslash is an ordinary character of a POSIX name: the key is accepted and lands
    # as one file named "..\\..\\...\\evil.pth" inside the rerun's own workspace
    _plant(scene, "workspace/" + "..\\" * 30 + "evil.pth")


@case("recorded-source-root-outside", "", "")
def _source_root(scene: Scene) -> None:
    # the report re-reads a differing skill from the recorded source when its bytes still
    # match the recorded fingerprint: a hostile result records both, for a file outside
    skill = scene.outside / "src" / "skills" / "release-notes" / "SKILL.md"
    skill.parent.mkdir(parents=True)
    skill.write_text(scene.secret + "\n")
    digest = hashlib.sha256(skill.read_bytes()).hexdigest()
    edit_json(scene.body / "candidate" / "run.json",
              lambda run: run["source"].__setitem__("root", str(scene.outside / "src")))

    def fingerprints(record: dict[str, Any]) -> None:
        for files in record["before"].values():
            files["SKILL.md"] = digest
    edit_json(scene.body / "candidate" / "fingerprints.json", fingerprints)


CASES = [_source_root, _double_slash, _traversal, _absolute, _manifest, _result_dir, _dot, _nul, _empty, _long, _backslash]


@pytest.mark.parametrize("command", COMMANDS)
@pytest.mark.parametrize("hostile", CASES, ids=lambda c: c.id)
def test_no_path_from_a_result_leaves_it(scene: Scene, hostile: Case, command: str) -> None:
    hostile.check(scene, command)
    assert not list(Path(scene.base).rglob("evil.pth")), "a key wrote outside the rerun's workspace"


def test_a_backslash_key_is_materialised_inside_the_rerun(scene: Scene) -> None:
    """The correct answer for a Windows-style key: the file the rerun's fixture gets is
    named literally, inside its workspace (the candidate's workspace evidence shows it)."""
    name = "..\\..\\evil.pth"
    _plant(scene, "workspace/" + name)
    proc = scene.command("rerun")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    new = [p for p in (scene.work / ".skill-eval" / "runs").iterdir() if not p.name.startswith(".")
           and p.name not in {r.name for r in scene.results.values()}]
    assert len(new) == 1
    stored = json.loads(next(new[0].glob("groups/*/baseline/run.json")).read_text())
    assert stored["snapshot"]["files"]["workspace/" + name]["sha256"] == hashlib.sha256(PAYLOAD).hexdigest()
    assert (next(new[0].glob("groups/*/baseline/workspace-initial")) / name).read_bytes() == PAYLOAD
