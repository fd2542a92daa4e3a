"""Links inside a stored result are never followed, by any of the six commands.

Each case swaps one entry of a real result for a symbolic link (or a hard link) to
something outside it that holds a secret; no command may put the secret in its output,
report, merged result or rerun, and each command that reads the entry names it.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from .cases import Case, case
from .hostile import BODY, COMMANDS, Scene, replace_with_link

pytestmark = pytest.mark.pi


@case("final-response-to-a-file-outside", "final-response.txt", "view report")
def _final_response(scene: Scene) -> None:
    replace_with_link(scene.body / "candidate" / "final-response.txt", scene.outside / "secret.txt")


@case("workspace-to-a-directory-outside", "candidate/workspace", "view report")
def _workspace(scene: Scene) -> None:
    replace_with_link(scene.body / "candidate" / "workspace", scene.outside / "secret-dir")


def _copy_outside(scene: Scene, source: Path, name: str) -> Path:
    """A copy of *source* outside the result, with the secret planted in every final response."""
    copy = scene.outside / name
    shutil.copytree(source, copy, symlinks=True)
    for found in copy.rglob("final-response.txt"):
        found.write_text(scene.secret)
    return copy


@case("group-directory-to-a-copy-outside", f"groups/{BODY}", "view list report regrade rerun merge")
def _group(scene: Scene) -> None:
    replace_with_link(scene.body, _copy_outside(scene, scene.body, "group-copy"))


@case("groups-to-a-copy-outside", "groups", "view list report regrade rerun merge")
def _groups(scene: Scene) -> None:
    replace_with_link(scene.target / "groups", _copy_outside(scene, scene.target / "groups", "groups-copy"))


@case("variant-directory-to-a-copy-outside", "candidate", "view report regrade rerun merge")
def _variant(scene: Scene) -> None:
    replace_with_link(scene.body / "candidate", _copy_outside(scene, scene.body / "candidate", "variant-copy"))


@case("run-record-to-a-file-outside", "candidate/run.json", "view report regrade rerun merge")
def _run_json(scene: Scene) -> None:
    replace_with_link(scene.body / "candidate" / "run.json", scene.outside / "secret.json")


@case("object-to-a-file-outside", "objects/", "rerun merge")
def _object(scene: Scene) -> None:
    import json

    run = json.loads((scene.body / "baseline" / "run.json").read_text())
    digest = run["snapshot"]["files"]["workspace/CHANGE.md"]["sha256"]
    replace_with_link(scene.target / "objects" / digest[:2] / digest, scene.outside / "secret.txt")


# variants the issue does not name


@case("result-root-is-a-link", "is a symbolic link", "view report regrade rerun merge")
def _root(scene: Scene) -> None:
    real = scene.base / "elsewhere"
    shutil.move(scene.target, real)
    for found in real.rglob("final-response.txt"):
        found.write_text(scene.secret)
    scene.target.symlink_to(real)


@case("final-response-hard-linked-to-a-file-outside", "hard link", "report merge")
def _hard_link(scene: Scene) -> None:
    path = scene.body / "candidate" / "final-response.txt"
    path.unlink()
    os.link(scene.outside / "secret.txt", path)


@case("workspace-file-hard-linked-to-a-file-outside", "workspace", "merge")
def _hard_link_in_tree(scene: Scene) -> None:
    path = scene.body / "candidate" / "workspace" / "CHANGE.md"
    path.unlink()
    os.link(scene.outside / "secret.txt", path)


@case("dangling-link-as-grade", "grade.json", "view report")
def _dangling(scene: Scene) -> None:
    replace_with_link(scene.body / "grade.json", scene.outside / "no-such-file")


CASES: list[Case] = [_final_response, _workspace, _group, _groups, _variant, _run_json, _object, _root, _hard_link,
                     _hard_link_in_tree, _dangling]


@pytest.mark.parametrize("command", COMMANDS)
@pytest.mark.parametrize("hostile", CASES, ids=lambda c: c.id)
def test_no_command_follows_a_link_in_a_result(scene: Scene, hostile: Case, command: str) -> None:
    hostile.check(scene, command)
