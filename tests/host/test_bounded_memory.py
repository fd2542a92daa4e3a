"""What an evaluator process keeps while it runs: bounded, never the whole stream (issue 18).

The driver with a sink keeps one slim form per record (the streamed deltas, ``turn_end``
and ``agent_end`` only by type), ``events.jsonl`` is written incrementally with exactly the
bytes the whole-list redaction gives, and the session's scripted stand-in keeps a window of
requests. No wall-clock assertions: counts and sizes of what is retained.
"""

from __future__ import annotations

import json
import os
import random
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest

from pytest_skill_eval.engine.events import EventsFile
from pytest_skill_eval.host.driver import SLIM_TYPES, Safeguards, retained, run_json
from pytest_skill_eval.host.install import HostInstallation
from pytest_skill_eval.host.launch import LaunchPlan
from pytest_skill_eval.host.models import REQUEST_HISTORY
from pytest_skill_eval.host.protocol import Record, build_turn, parse_record
from pytest_skill_eval.redaction import EventLines, Redactor, redact_events
from pytest_skill_eval.scripted.pacing import Latency
from pytest_skill_eval.scripted.replies import PlannedToolCall, Reply, ReplyUsage
from pytest_skill_eval.scripted.server import RequestRecord, ScriptedModelServer
from pytest_skill_eval.scripted.wires import Api

SECRET = "TOKENVALUE-0123456789"
DELTAS = 3000


def _update(kind: str, index: int, delta: Any = None) -> dict[str, Any]:
    event: dict[str, Any] = {"type": kind, "contentIndex": index}
    if delta is not None:
        event["delta"] = delta
    return {"type": "message_update", "assistantMessageEvent": event}


def _stream(rng: random.Random) -> list[tuple[dict[str, Any] | None, str]]:
    """A random host stream: blocks of text/thinking/toolcall deltas (a secret split across
    them), blocks left open, closing records, malformed lines, other records."""
    out: list[dict[str, Any] | str] = []
    for _ in range(rng.randint(1, 6)):
        out.append({"type": "message_start", "message": {"role": "assistant"}})
        for _ in range(rng.randint(0, 3)):
            family, index = rng.choice(["text", "thinking", "toolcall"]), rng.randint(0, 2)
            if rng.random() < 0.8:
                out.append(_update(f"{family}_start", index))
            text = f"a {SECRET} b" if rng.random() < 0.6 else "plain words"
            cut = sorted(rng.sample(range(1, len(text)), rng.randint(1, 4)))
            for lo, hi in zip([0, *cut], [*cut, len(text)], strict=True):
                out.append(_update(f"{family}_delta", index, text[lo:hi]))
            if rng.random() < 0.2:
                out.append(_update(f"{family}_delta", index, 7))  # not a string: never opens a block
            if rng.random() < 0.7:
                out.append(_update(f"{family}_end", index))
            if rng.random() < 0.2:
                out.append(f"not json {SECRET}")
            if rng.random() < 0.3:
                out.append({"type": "tool_execution_start", "toolCallId": "c", "toolName": "read", "args": {"p": SECRET}})
        if rng.random() < 0.8:
            out.append({"type": rng.choice(["message_end", "turn_end", "agent_end"]),
                        "message": {"role": "assistant", "content": [{"type": "text", "text": SECRET}]}})
    return [(item, json.dumps(item, ensure_ascii=False)) if isinstance(item, dict) else (None, item) for item in out]


@pytest.mark.parametrize("seed", range(40))
@pytest.mark.parametrize("secrets", [[SECRET], []])
def test_incremental_event_lines_equal_the_whole_list_redaction(seed: int, secrets: list[str]) -> None:
    records = _stream(random.Random(seed))
    redactor = Redactor.of(secrets)
    whole, total = redact_events(redactor, records)
    lines = EventLines(redactor)
    got: list[str] = []
    held: list[int] = []
    for data, raw in records:
        got += lines.feed(data, raw)
        held.append(len(lines._pending))
    got += lines.finish()
    assert got == whole and lines.count == total
    assert not lines._pending and not lines._open
    if not secrets:
        assert max(held) == 0, "nothing to redact: every line is final at once"


def test_events_file_appears_whole_on_commit_and_leaves_nothing_when_discarded(tmp_path: Path) -> None:
    records = _stream(random.Random(7))
    redactor = Redactor.of([SECRET])
    scratch, run_dir = tmp_path / "scratch", tmp_path / "run"
    scratch.mkdir()
    run_dir.mkdir()
    sink = EventsFile(scratch, run_dir, redactor)
    for i, (_data, raw) in enumerate(records):
        sink(parse_record(i, raw.encode()))
    assert list(run_dir.iterdir()) == [], "the evidence directory holds no part of the file before the run ends"
    n = sink.commit()
    whole, total = redact_events(redactor, [(parse_record(i, raw.encode()).data, raw) for i, (_d, raw) in enumerate(records)])
    assert (run_dir / "events.jsonl").read_text(encoding="utf-8") == "".join(line + "\n" for line in whole)
    assert n == total and SECRET not in (run_dir / "events.jsonl").read_text(encoding="utf-8")
    assert [p.name for p in run_dir.iterdir()] == ["events.jsonl"]
    assert list(scratch.iterdir()) == []
    other = tmp_path / "other"
    other.mkdir()
    unfinished = EventsFile(scratch, other, redactor)
    unfinished(parse_record(0, b'{"type":"agent_start"}'))
    unfinished.discard()
    assert list(other.iterdir()) == [] and list(scratch.iterdir()) == []


def test_events_file_reaches_evidence_on_another_file_system_whole(tmp_path: Path) -> None:
    shm = Path("/dev/shm")
    if not shm.is_dir() or os.stat(shm).st_dev == os.stat(tmp_path).st_dev:
        pytest.skip("needs a second file system (/dev/shm) to move across")
    with tempfile.TemporaryDirectory(dir=shm) as other:
        sink = EventsFile(Path(other), tmp_path, Redactor.of([]))
        for i in range(3):
            sink(parse_record(i, b'{"type":"agent_start"}'))
        sink.commit()
        assert list(Path(other).iterdir()) == [], "the scratch copy is removed after the copy"
    assert [p.name for p in tmp_path.iterdir()] == ["events.jsonl"]
    assert (tmp_path / "events.jsonl").read_bytes() == b'{"type":"agent_start"}\n' * 3


def test_a_failed_write_is_raised_by_commit_not_on_the_reader_thread(tmp_path: Path) -> None:
    sink = EventsFile(tmp_path, tmp_path / "run", Redactor.of([]))
    sink._file.close()  # every later write fails
    sink(parse_record(0, b'{"type":"agent_start"}'))  # must not raise
    assert sink.error is not None
    with pytest.raises(ValueError):
        sink.commit()
    assert list(tmp_path.iterdir()) == []


def test_retained_forms_keep_what_grading_reads_and_share_the_slim_ones() -> None:
    end = parse_record(5, json.dumps({"type": "message_end", "message": {"role": "assistant", "stopReason": "stop",
                                      "content": [{"type": "text", "text": "hi"}]}}).encode())
    kept = retained(end)
    assert kept.data == end.data and kept.raw == ""
    bad = parse_record(6, b"not json")
    assert retained(bad) is bad
    slims = [retained(parse_record(i, json.dumps(_update("text_delta", 0, "x" * 1000)).encode())) for i in range(3)]
    assert all(s.raw == "" and s.data == {"type": "message_update"} for s in slims)
    assert slims[0].data is slims[1].data, "one shared object per slim type, not one per record"
    assert SLIM_TYPES >= {"message_update", "turn_end", "agent_end"}


def _json_plan(tmp_path: Path, pi_host: HostInstallation) -> LaunchPlan:
    """A host that streams a long response in DELTAS deltas, pi's JSON-mode way."""
    body = f"""
const out = (o) => process.stdout.write(JSON.stringify(o) + '\\n');
out({{type: 'agent_start'}});
out({{type: 'message_start', message: {{role: 'assistant'}}}});
out({{type: 'message_update', assistantMessageEvent: {{type: 'text_start', contentIndex: 0}}}});
for (let i = 0; i < {DELTAS}; i++) out({{type: 'message_update', assistantMessageEvent: {{type: 'text_delta', contentIndex: 0, delta: 'word ' + i + ' '}}}});
out({{type: 'message_update', assistantMessageEvent: {{type: 'text_end', contentIndex: 0}}}});
out({{type: 'message_end', message: {{role: 'assistant', stopReason: 'stop', content: [{{type: 'text', text: 'the answer'}}]}}}});
out({{type: 'turn_end', message: {{role: 'assistant'}}, toolResults: []}});
out({{type: 'agent_end', messages: [{{role: 'assistant', content: 'x'.repeat(10000)}}]}});
out({{type: 'agent_settled'}});
"""
    tmp_path.mkdir(exist_ok=True)
    cli = tmp_path / "fake-pi.mjs"
    cli.write_text(body)
    host = HostInstallation(node=pi_host.node, cli=cli, version="1.6.0", managed=False)
    for d in ("ws", "agent", "home"):
        (tmp_path / d).mkdir()
    return LaunchPlan(host=host, mode="json", workspace=tmp_path / "ws", agent_dir=tmp_path / "agent", home=tmp_path / "home",
                      skills=(), extensions=(), tools=("read",), provider="p", model="m", thinking=None, session_dir=None,
                      prompts=("go",))


def test_a_run_with_a_sink_retains_one_slim_form_per_delta(tmp_path: Path, pi_host: HostInstallation) -> None:
    seen: list[Record] = []
    run = run_json(_json_plan(tmp_path, pi_host), Safeguards(stall_seconds=30), sink=seen.append)
    assert run.outcome == "complete", run.failure
    assert len(seen) == len(run.records) == DELTAS + 8
    assert all(r.raw for r in seen), "the sink gets every record whole"
    assert all(r.raw == "" for r in run.records), "the run keeps no second, textual copy"
    slim = [r for r in run.records if r.type in SLIM_TYPES]
    assert len(slim) == DELTAS + 4 and len({id(r.data) for r in slim}) == 3
    retained_bytes = sum(sys.getsizeof(r) for r in run.records)
    assert retained_bytes < sum(len(r.raw) for r in seen), "what is kept is smaller than the stream"
    turn = build_turn(run.spans[0], run.records)
    assert turn.response == "the answer" and turn.stop_reason == "stop"
    without = run_json(_json_plan(tmp_path / "again", pi_host), Safeguards(stall_seconds=30))
    assert [r.raw for r in without.records] == [r.raw for r in seen], "without a sink every record is kept as it was"


def test_the_stand_in_keeps_a_window_of_requests() -> None:
    server = ScriptedModelServer(history=3)
    for i in range(50):
        server._record(RequestRecord(f"m{i}", 200, None, None, {"body": i}))
    assert [r.model for r in server.requests()] == ["m47", "m48", "m49"]
    assert all(r.body is None for r in server.requests())
    unbounded = ScriptedModelServer()
    for i in range(50):
        unbounded._record(RequestRecord(f"m{i}", 200, None, None, None))
    assert len(unbounded.requests()) == 50, "a test's own server keeps every request"
    assert 0 < REQUEST_HISTORY <= 64


@pytest.mark.parametrize("api", ["openai-completions", "anthropic-messages", "openai-responses"])
@pytest.mark.parametrize("latency", [Latency(), Latency(0.5, 40.0), Latency(None, 7.0)])
def test_the_stand_in_paces_a_lazily_built_stream_as_the_whole_list(api: Api, latency: Latency) -> None:
    from collections.abc import Iterator

    from pytest_skill_eval.scripted.handler import _paced
    from pytest_skill_eval.scripted.pacing import schedule
    from pytest_skill_eval.scripted.wires import WIRES

    wire = WIRES[api]
    call = PlannedToolCall("call-1", "write", json.dumps({"path": "a.txt", "content": "y" * 300}))
    reply = Reply(1, 1, "scripted", None, None, "x" * 1000 + " done", (call,), None, ReplyUsage(10, 20))
    whole = list(wire.stream_records(reply, "m", "resp_1"))
    expected = list(zip(whole, schedule([wire.output_chars(r) for r in whole], latency), strict=True))
    assert list(_paced(wire, wire.stream_records(reply, "m", "resp_1"), latency)) == expected
    if api == "openai-completions":  # pi's own wire: a 2 MB reply is never built whole
        assert isinstance(wire.stream_records(reply, "m", "id"), Iterator)
