"""The record codec: stored key order and shapes from the dataclass fields, located errors on
read, and the one redacting writer."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import ClassVar

import pytest

from pytest_skill_eval import codec
from pytest_skill_eval.errors import EvidenceError, MalformedGradeError
from pytest_skill_eval.evidence import records, store
from pytest_skill_eval.grading.aggregate import ComparisonRate, ExpectationRate, TrialGrade
from pytest_skill_eval.grading.results import ComparisonResult, ExpectationResult, GradeError, GroupGrade
from pytest_skill_eval.observation import ContextRequest, ToolCall, Turn
from pytest_skill_eval.redaction import MARKER, Redactor
from pytest_skill_eval.stats import Interval
from pytest_skill_eval.usage import Usage, VariantUsage


@pytest.fixture(autouse=True)
def _fresh_codec_caches(monkeypatch: pytest.MonkeyPatch) -> None:
    """Plan every record and make every field reader anew in each test: the codec keeps them
    per class and per type for the process, and a mutation run forks each mutant from a
    process that has already run these tests (docs/testing.md)."""
    monkeypatch.setattr(codec, "_PLANS", {})
    monkeypatch.setattr(codec, "_CONVS", {})


SECRET = "s3cr3t-Value-42"

USAGE = Usage(10, 2, 0, 0, 12, 0.5, None, 1, 0, 0)
RAN = records.HostRunRecord(
    registered_tools=(("read", "bash"),), context_files=("AGENTS.md",), host={"pi": "1.6.0"}, mode="rpc",
    model=records.ModelRecord("p", "m", None, "p/m", ({"provider": "p", "model": "m"},)), argv=("pi", "--mode"),
    env={"HOME": "/h"}, tools=("read",), registered_skills={"a": {"path": "x"}}, registered_context=(),
    returncode=0, started_at=1.0, ended_at=2.5, turn_times=((1.0, None),), usage=USAGE, fingerprints_changed=(),
    provider_timeout_s=30.0)
FULL_RUN = records.RunRecord(
    variant="candidate", group="g", state="complete", reason=None,
    paths=records.RunPaths("/w", ("/s",), None, ()), runtime={"host": "pi"},
    source=records.SourceRecord("git", "HEAD", "abc", "/r"), ran=RAN, redactions={"z.txt": 1, "a.txt": 2},
    attempts=(records.AttemptRecord(1, "infrastructure-failed", "boom", "candidate-attempts/1"),),
    snapshot=records.SnapshotRecord({"b": records.StoredFile("0" * 64, "644"), "a": records.StoredFile("1" * 64, "600")}),
    confinement={"mechanism": "landlock"})


def test_a_run_record_stores_its_keys_in_field_order_with_the_host_part_inline() -> None:
    stored = FULL_RUN.to_json()
    assert list(stored) == [
        "variant", "group", "state", "reason", "paths", "runtime", "source",
        "registered_tools", "context_files", "host", "mode", "model", "argv", "env", "tools", "registered_skills",
        "registered_context", "returncode", "started_at", "ended_at", "turn_times", "usage", "fingerprints_changed",
        "provider_timeout_s", "redactions", "attempts", "snapshot", "confinement"]
    assert list(stored["redactions"]) == ["a.txt", "z.txt"]  # sorted, as declared
    assert list(stored["snapshot"]["files"]) == ["a", "b"]
    assert "script" not in stored["snapshot"]  # omitted when None
    assert stored["registered_tools"] == [["read", "bash"]] and stored["turn_times"] == [[1.0, None]]
    assert list(stored["usage"])[2:5] == ["cacheRead", "cacheWrite", "totalTokens"]  # renamed keys
    assert records.RunRecord.from_json(json.loads(json.dumps(stored))) == FULL_RUN


def test_a_run_that_never_started_stores_only_what_it_has() -> None:
    run = records.RunRecord(variant="baseline", group="g", state="not-selected", reason="excluded")
    assert run.to_json() == {"variant": "baseline", "group": "g", "state": "not-selected", "reason": "excluded",
                             "paths": {}}
    assert records.RunRecord.from_json(run.to_json()) == run  # {} reads back as None, no host part


def test_a_declared_order_writes_properties_and_reads_them_not() -> None:
    usage = VariantUsage(USAGE, Usage(), 2)
    stored = usage.to_json()
    assert list(stored) == ["baseline", "candidate", "total", "runs"]
    assert stored["total"] == (USAGE + Usage()).to_json()
    assert VariantUsage.from_json(stored) == usage


def test_older_usage_is_read_leniently_as_declared() -> None:
    assert Usage.from_json({"input": 10.0, "output": 2, "totalTokens": 12, "cost": 0}) == Usage(
        10, 2, None, None, 12, 0.0, None, 0, 0, 0)


def test_a_tool_call_takes_its_turn_from_the_enclosing_turn() -> None:
    turn = records.TranscriptTurn(
        Turn(2, "p", "p", "r", (ToolCall(2, "c1", "read", {"path": "a"}, "ok", False, False, 7),), "stop", None, True),
        USAGE, None, None, (3, None))
    stored = turn.to_json()
    assert list(stored)[:8] == ["index", "prompt", "sent", "response", "stop_reason", "error", "settled", "tool_calls"]
    assert "turn" not in stored["tool_calls"][0]
    assert records.TranscriptTurn.from_json(stored) == turn
    assert records.TranscriptTurn.from_json(stored).turn.tool_calls[0].turn == 2


def test_a_whole_document_record_is_its_array() -> None:
    observations = records.ContextObservations((ContextRequest(1, 1, "sys", "ctx"),))
    assert observations.to_json() == [{"turn": 1, "request": 1, "system_prompt": "sys", "provider_context": "ctx"}]
    assert records.ContextObservations.from_json(observations.to_json()) == observations


@pytest.mark.parametrize(("data", "message"), [
    ({"variant": "baseline", "group": "g", "state": "complete", "reason": None, "paths": {"workspace": "/w"}},
     "run.json: paths/skills: expected an array of strings, found nothing"),
    ({"variant": "baseline", "state": "complete", "reason": None, "paths": {}},
     "run.json: group: expected a string, found nothing"),
    ({"variant": "baseline", "group": "g", "state": "complete", "reason": None, "paths": {}, "source": "git"},
     'run.json: source: expected an object or null, found string "git"'),
    ([], "run.json: document: expected an object, found array []"),
])
def test_a_record_that_cannot_be_built_is_a_located_error(data: object, message: str) -> None:
    with pytest.raises(EvidenceError) as info:
        codec.from_json(records.RunRecord, data, "run.json")
    assert str(info.value) == message


def test_an_evidence_record_keeps_a_value_its_schema_let_through() -> None:
    """Evidence records are checked by their schema first: the codec keeps what it let through
    (a group.json's ``grade_state`` may be null), as the hand-written readers did."""
    data = {"id": "g", "position": 1, "path": "g.json", "suite": None, "type": "body", "state": "complete",
            "grade_state": None, "variants": {"baseline": {"state": "complete", "reason": None},
                                              "candidate": {"state": "complete", "reason": None}},
            "review_questions": []}
    assert records.parse(records.GroupRecord, data, "group.json").grade_state is None


@pytest.mark.parametrize(("data", "message"), [
    ({"group_id": "g", "state": "graded", "expectations": [{"id": "e"}]},
     "grade.json: expectations/0/kind: expected a string, found nothing"),
    ({"group_id": "g", "state": "graded", "errors": [{"scope": "system", "owner": None, "variant": None,
                                                      "message": 3}]},
     "grade.json: errors/0/message: expected a string, found number 3"),
])
def test_a_grade_names_the_place_and_its_file(data: object, message: str) -> None:
    with pytest.raises(MalformedGradeError) as info:
        codec.from_json(GroupGrade, data, "grade.json")
    assert str(info.value) == message


def test_a_declared_order_must_name_every_stored_field() -> None:
    @dataclass(frozen=True)
    class Partial:
        STORED: ClassVar[codec.Layout] = codec.Layout(order=("a",))
        a: int
        b: int

    with pytest.raises(TypeError, match="STORED order leaves out b"):
        codec.to_json(Partial(1, 2))


GRADE = GroupGrade("g", "grade-error",
                   (ExpectationResult("e", "path", "candidate", "fail", f"file holds {SECRET}", "it does not",
                                      (f"final workspace {SECRET}.txt",), None),),
                   (ComparisonResult("c", "b", "e", "pass-to-fail", None),),
                   (GradeError("system", None, None, f"boom: {SECRET}"),))


@pytest.mark.parametrize("record", [
    GRADE,
    TrialGrade("g", 2, 2, "graded", (ExpectationRate(f"e-{SECRET}", "path", "candidate", 1, 1, 0, 0),),
               (ComparisonRate("c", "b", SECRET, 1, 2, 1, 2, False, f"why {SECRET}"),),
               (GradeError("group", None, None, SECRET),), {"baseline": {"complete": 2}}),
    FULL_RUN,
])
def test_redacting_a_record_is_redacting_its_stored_form(record: object) -> None:
    """What the engine did with a JSON round-trip, :meth:`Redactor.record` does in place."""
    redactor = Redactor.of([SECRET, "/w"])
    clean, n = redactor.record(record)
    expected, m = redactor.json(record.to_json())  # type: ignore[attr-defined]
    assert clean.to_json() == expected and n == m > 0  # type: ignore[attr-defined]
    assert type(record).from_json(expected) == clean  # type: ignore[attr-defined]


def test_a_record_without_secrets_is_kept_as_it_is() -> None:
    assert Redactor.of(["nowhere-to-be-found"]).record(GRADE) == (GRADE, 0)
    assert Redactor.of([]).record(GRADE)[0] is GRADE


def test_the_writer_redacts_counts_and_writes_atomically(tmp_path: Path) -> None:
    path = tmp_path / "grade.json"
    n = store.write_record(path, GRADE, Redactor.of([SECRET]))
    assert n == 3
    text = path.read_text(encoding="utf-8")
    assert SECRET not in text and text.count(MARKER) == 3
    assert path.read_bytes() == store.dump_json(Redactor.of([SECRET]).json(GRADE.to_json())[0])
    assert [p.name for p in tmp_path.iterdir()] == ["grade.json"]  # no temporary file left
    assert oct(path.stat().st_mode & 0o777) == "0o600"
    assert store.write_record(tmp_path / "plain.json", GRADE) == 0
    assert SECRET in (tmp_path / "plain.json").read_text(encoding="utf-8")


@dataclass(frozen=True)
class Counted:
    """Two fields stored together under ``trials``, between the others (as ``aggregate.json``'s counts)."""

    STORED: ClassVar[codec.Layout] = codec.Layout(order=("id", "planned", "ran", "state"), name="counted",
                                                  error=MalformedGradeError, strict=True)
    id: str
    state: str
    planned: int = field(metadata=codec.meta(within="trials"))
    ran: int = field(metadata=codec.meta(within="trials", key="done"))


def test_fields_within_a_nested_object_are_stored_there_in_order() -> None:
    stored = codec.to_json(Counted("g", "graded", 3, 2))
    assert json.dumps(stored) == '{"id": "g", "trials": {"planned": 3, "done": 2}, "state": "graded"}'
    assert codec.from_json(Counted, stored) == Counted("g", "graded", 3, 2)
    assert codec.stored_keys(Counted) == ("id", "trials", "state")
    assert codec.stored_keys(Counted, within="trials") == ("planned", "done")


@pytest.mark.parametrize(("data", "message"), [
    ({"id": "g", "trials": {"planned": 3}, "state": "graded"}, "trials/done: expected an integer, found nothing"),
    ({"id": "g", "state": "graded"}, "trials/planned: expected an integer, found nothing"),
    ({"id": "g", "trials": [3, 2], "state": "graded"}, "trials: expected an object, found array [3,2]"),
    ({"id": "g", "trials": {"planned": "3", "done": 2}, "state": "graded"},
     'trials/planned: expected an integer, found string "3"'),
])
def test_a_nested_object_is_read_where_it_is_wrong(data: object, message: str) -> None:
    with pytest.raises(MalformedGradeError) as info:
        codec.from_json(Counted, data, "c.json")
    assert str(info.value) == f"c.json: {message}"


@dataclass(frozen=True)
class Span:
    STORED: ClassVar[codec.Layout] = codec.Layout(array=True)
    low: float
    high: float


@dataclass(frozen=True)
class Spanned:
    STORED: ClassVar[codec.Layout] = codec.Layout(error=MalformedGradeError, strict=True)
    span: Span | None
    spans: tuple[Span, ...] = ()


def test_an_array_record_is_stored_as_its_fields_values() -> None:
    stored = codec.to_json(Spanned(Span(0.25, 1.0), (Span(0, 0.5),)))
    assert stored == {"span": [0.25, 1.0], "spans": [[0, 0.5]]}
    assert codec.from_json(Spanned, stored) == Spanned(Span(0.25, 1.0), (Span(0, 0.5),))
    assert codec.from_json(Spanned, {"span": None}) == Spanned(None)
    assert codec.to_json(Interval(0.1, 0.9)) == [0.1, 0.9]  # how every stored interval is written
    assert codec.from_json(Interval, [0, 1]) == Interval(0, 1)


@pytest.mark.parametrize(("data", "message"), [
    ({"span": [0.1]}, "span: expected an array of 2 items or null, found array [0.1]"),
    ({"span": [0.1, 0.2, 0.3]}, "span: expected an array of 2 items or null, found array [0.1,0.2,0.3]"),
    ({"span": [0.1, "x"]}, 'span/1: expected a number, found string "x"'),
    ({"span": {"low": 0.1, "high": 0.2}}, "span: expected an array of 2 items or null, found object"),
    ({"span": None, "spans": [[1, 2], [3]]}, "spans/1: expected an array of 2 items, found array [3]"),
    ({"span": None, "spans": [[1, 2], "1-2"]}, 'spans/1: expected an array of 2 items, found string "1-2"'),
    ({"span": None, "spans": {"low": 1}}, 'spans: expected an array of arrays, found object {"low":1}'),
])
def test_an_array_record_of_the_wrong_shape_is_a_located_error(data: object, message: str) -> None:
    with pytest.raises(MalformedGradeError) as info:
        codec.from_json(Spanned, data, "s.json")
    assert str(info.value).startswith(f"s.json: {message}")

