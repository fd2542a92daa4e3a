"""Typed evidence records: every stored file reads into its record and writes back byte for byte."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from views.conftest import StoredRun, copy_suite, run_suite

from pytest_skill_eval.errors import EvidenceError
from pytest_skill_eval.evidence import records, store
from pytest_skill_eval.evidence.records import (
    ContextObservations,
    DefinitionRecord,
    FingerprintsRecord,
    GroupRecord,
    InvalidGroupRecord,
    ResultRecord,
    RunRecord,
    SelectionRecord,
    TranscriptRecord,
)


@pytest.fixture(scope="module")
def odd_run(pi_host: object, tmp_path_factory: pytest.TempPathFactory) -> StoredRun:
    """Evidence of the shapes a plain run does not write: a not-selected variant, an invalid
    variant (its skill is missing), a suite entry whose group file does not load, and
    context observations."""
    root = copy_suite(tmp_path_factory.mktemp("records") / "root")
    suite = json.loads((root / "suite.json").read_text())
    broken = json.loads((root / "groups" / "release-notes-body.json").read_text())
    broken["id"] = "missing-skill"
    broken["variants"]["candidate"]["skills"] = ["skills/does-not-exist"]
    (root / "groups" / "missing-skill.json").write_text(json.dumps(broken))
    body = json.loads((root / "groups" / "release-notes-body.json").read_text())
    body["expectations"].append({"id": "sees-skill", "kind": "context-text", "variant": "candidate",
                                 "expect": "contains", "value": "release-notes"})
    (root / "groups" / "release-notes-body.json").write_text(json.dumps(body))
    (root / "groups" / "unloadable.json").write_text('{"schema_version": 1, "kind": "group"}')
    suite["groups"] += ["groups/missing-skill.json", "groups/unloadable.json"]
    (root / "suite.json").write_text(json.dumps(suite))
    return run_suite(root, "--skill-eval", "suite.json", "--skill-eval-variant", "candidate")


_WHERE = {"result.json": ".", "group.json": "groups/*", "definition.json": "groups/*", "run.json": "groups/*/*",
          "transcript.json": "groups/*/*", "context-observations.json": "groups/*/*", "fingerprints.json": "groups/*/*",
          "selection.json": "."}


def _files(run: StoredRun, name: str) -> list[Path]:
    return sorted(run.result_dir.glob(f"{_WHERE[name]}/{name}"))


@pytest.mark.parametrize("which", ["stored_run", "odd_run"])
def test_every_stored_record_round_trips_byte_for_byte(which: str, request: pytest.FixtureRequest) -> None:
    run: StoredRun = request.getfixturevalue(which)
    seen: dict[str, int] = {}
    for name, read in (
        ("run.json", lambda data, p: records.parse(RunRecord, data, p)),
        ("group.json", records.parse_group),
        ("result.json", lambda data, p: records.parse(ResultRecord, data, p)),
        ("definition.json", lambda data, p: records.parse(DefinitionRecord, data, p)),
        ("transcript.json", lambda data, p: records.parse(TranscriptRecord, data, p)),
        ("context-observations.json", lambda data, p: records.parse(ContextObservations, data, p)),
        ("fingerprints.json", lambda data, p: records.parse(FingerprintsRecord, data, p)),
        ("selection.json", lambda data, p: records.parse(SelectionRecord, data, p)),
    ):
        for path in _files(run, name):
            stored = path.read_bytes()
            record = read(json.loads(stored), path)
            assert store.dump_json(record.to_json()) == stored, path
            seen[type(record).__name__] = seen.get(type(record).__name__, 0) + 1
    assert seen.get("TranscriptRecord", 0) >= 3, seen
    assert seen.get("FingerprintsRecord", 0) >= 1 and seen.get("SelectionRecord", 0) == 1, seen
    if which == "odd_run":
        assert seen.get("InvalidGroupRecord") == 1 and seen.get("ContextObservations") == 1, seen


def test_records_carry_the_states_and_blocks_the_run_reached(odd_run: StoredRun) -> None:
    runs = {p.parent.parent.name + "/" + p.parent.name: records.parse(RunRecord, json.loads(p.read_text()), p)
            for p in _files(odd_run, "run.json")}
    not_selected = runs["002-release-notes-body/baseline"]
    assert (not_selected.state, not_selected.paths, not_selected.source, not_selected.ran) == (
        "not-selected", None, None, None)
    complete = runs["002-release-notes-body/candidate"]
    assert complete.state == "complete" and complete.ran is not None and complete.source is not None
    assert complete.ran.mode == "rpc" and complete.ran.model.provider == "scripted"
    assert (complete.ran.usage.total_tokens or 0) > 0 and complete.ran.usage.cost is None, "unpriced: no cost"
    invalid = runs["004-missing-skill/candidate"]
    assert invalid.state == "invalid" and invalid.ran is None and invalid.reason
    groups = [records.parse_group(json.loads(p.read_text()), p) for p in _files(odd_run, "group.json")]
    (unloadable,) = [g for g in groups if isinstance(g, InvalidGroupRecord)]
    assert unloadable.ref == "groups/unloadable.json" and unloadable.definition_errors
    assert all(isinstance(g, GroupRecord) for g in groups if g is not unloadable)


@pytest.mark.parametrize(
    ("kind", "data", "message"),
    [
        (RunRecord, "complete", "/: expected a run record object, found \"complete\""),
        (RunRecord, [], "/: expected a run record object, found an empty array"),
        (RunRecord, {"variant": "baseline", "group": "g", "state": "done", "reason": None, "paths": {}},
         '/state: expected one of "complete", "invalid", "infrastructure-failed", "cancelled", "not-selected", '
         'found "done"'),
        (RunRecord, {"variant": "baseline", "group": "g", "state": "complete", "reason": None, "paths": {},
                     "host": {}},
         '/mode: expected one of "json", "rpc", found no "mode" field (required with "host")'),
        (RunRecord, {"variant": "baseline", "group": "g", "state": "complete", "reason": None,
                     "paths": {"workspace": "/w"}},
         '/paths: expected an empty object or an object with "workspace", "skills", "target_file" and "context", '
         "found an object"),
        (GroupRecord, {"id": "g", "position": 1, "state": "complete", "grade_state": "graded",
                       "variants": {"baseline": {"state": "complete", "reason": None}}},
         '/variants/candidate: expected an object, found no "candidate" field'),
        (ResultRecord, {"result_id": "x", "state": "complete", "groups": []},
         '/result_id: expected a string, found "x"'),
    ],
    ids=["string", "array", "state", "ran-without-mode", "partial-paths", "group-variant", "result-id"],
)
def test_a_damaged_file_is_named_with_pointer_expected_and_found(kind: type, data: Any, message: str) -> None:
    with pytest.raises(EvidenceError) as raised:
        records.parse(kind, data, Path("r/groups/001-g/baseline/run.json"))
    assert f"r/groups/001-g/baseline/run.json: {message}" in str(raised.value).splitlines()


def test_a_group_file_of_either_shape_is_checked_as_that_shape() -> None:
    with pytest.raises(EvidenceError, match=r'g\.json: /ref: expected a string, found no "ref" field'):
        records.parse_group({"id": None, "position": 1, "state": "invalid", "grade_state": None,
                             "variants": {n: {"state": "invalid", "reason": "x"} for n in ("baseline", "candidate")},
                             "definition_errors": []}, "g.json")
