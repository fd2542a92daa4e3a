"""Every JSON file a stored result holds is read within bounds: a located error, never a
``RecursionError`` trace, a memory blow-up or a hang.

Deep documents (deeper than Python's parser can go, and deep enough to pass it but break
what reads the value after it), documents over the size bound (sparse files: no disk is
spent), truncated files, and a deep stored script that ``rerun`` hands to the scripted model.
"""

from __future__ import annotations

import hashlib
import json

import pytest

from pytest_skill_eval import jsonbounds
from pytest_skill_eval.errors import JSONBoundsError

from .cases import Case, case
from .hostile import COMMANDS, Scene, edit_json

pytestmark = pytest.mark.pi

TOO_DEEP_TO_PARSE = "[" * 200_000 + "]" * 200_000
#: parses (under Python's recursion limit) but is deeper than the bound
DEEP = json.dumps({"variant": "candidate", "x": json.loads("[" * 600 + "]" * 600)})


@case("run-record-too-deep-to-parse", "candidate/run.json", "view report regrade rerun")
def _deep_run(scene: Scene) -> None:
    (scene.body / "candidate" / "run.json").write_text(TOO_DEEP_TO_PARSE)


@case("result-record-too-deep-to-parse", "result.json", "view list report rerun merge")
def _deep_result(scene: Scene) -> None:
    (scene.target / "result.json").write_text(TOO_DEEP_TO_PARSE)


@case("transcript-deeper-than-the-bound", "nesting too deep", "view report regrade")
def _deep_transcript(scene: Scene) -> None:
    (scene.body / "candidate" / "transcript.json").write_text(DEEP)


@case("definition-too-deep", "definition.json", "view report regrade rerun")
def _deep_definition(scene: Scene) -> None:
    (scene.body / "definition.json").write_text(TOO_DEEP_TO_PARSE)


@case("grade-over-the-size-bound", "grade.json", "view list report")
def _huge_grade(scene: Scene) -> None:
    path = scene.body / "grade.json"
    with open(path, "r+b") as handle:
        handle.truncate(jsonbounds.MAX_BYTES + 1)  # sparse: no disk, and never read


@case("run-record-truncated", "candidate/run.json", "view report regrade rerun")
def _truncated(scene: Scene) -> None:
    path = scene.body / "candidate" / "run.json"
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])


# variants the issue does not name


@case("deep-line-in-events", "", "")
def _deep_event(scene: Scene) -> None:
    # the report reads assistant steps from events.jsonl: a deep line is skipped, not a trace
    with open(scene.body / "candidate" / "events.jsonl", "a") as events:
        events.write('{"type": "message_end", "message": ' + "[" * 100_000 + "]" * 100_000 + "}\n")


@case("group-record-not-utf8", "group.json", "view report")
def _latin1(scene: Scene) -> None:
    (scene.body / "group.json").write_bytes(b'{"id": "caf\xe9"}')


@case("stored-script-too-deep", "nesting too deep", "rerun")
def _deep_script(scene: Scene) -> None:
    data = TOO_DEEP_TO_PARSE.encode()
    digest = hashlib.sha256(data).hexdigest()
    path = scene.target / "objects" / digest[:2] / digest
    path.parent.mkdir(exist_ok=True)
    path.write_bytes(data)
    for variant in ("baseline", "candidate"):
        edit_json(scene.body / variant / "run.json", lambda run: run["snapshot"]["script"].__setitem__("sha256", digest))


CASES: list[Case] = [_deep_run, _deep_result, _deep_transcript, _deep_definition, _huge_grade, _truncated,
                     _deep_event, _latin1, _deep_script]


@pytest.mark.parametrize("command", COMMANDS)
@pytest.mark.parametrize("hostile", CASES, ids=lambda c: c.id)
def test_every_json_reader_is_bounded(scene: Scene, hostile: Case, command: str) -> None:
    hostile.check(scene, command)


def test_the_bound_sits_above_what_the_tool_writes() -> None:
    """A document at the depth bound reads; one level more is refused, located."""
    at_bound = "[" * (jsonbounds.MAX_DEPTH - 1) + "{}" + "]" * (jsonbounds.MAX_DEPTH - 1)
    assert jsonbounds.loads(at_bound) is not None
    with pytest.raises(JSONBoundsError) as raised:
        jsonbounds.loads("[" + at_bound + "]")
    assert raised.value.pointer == "/0" * jsonbounds.MAX_DEPTH
