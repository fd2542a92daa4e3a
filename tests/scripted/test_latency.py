"""Emulated latency of the stand-in: the pacing schedule (pure), the script settings, and the
server's own timestamps of what it sent, over HTTP and with the real pi host on every wire.

No test here asserts how long it took: each checks the times the server recorded
(``RequestRecord.received_at`` / ``sent_at``) against the schedule it had to keep.
"""

from __future__ import annotations

import http.client
import json
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from pytest_skill_eval.errors import ScriptError
from pytest_skill_eval.scripted import anthropic_messages, chat_completions, openai_responses
from pytest_skill_eval.scripted.format import parse_script
from pytest_skill_eval.scripted.pacing import CHARS_PER_TOKEN, Latency, model_seconds, schedule
from pytest_skill_eval.scripted.replies import plan_reply
from pytest_skill_eval.scripted.server import APIS, Api, RequestRecord, ScriptedModelServer
from pytest_skill_eval.scripted.wires import WIRES

from .test_with_pi import make_skill, run_pi, write_script

TEXT = "The quick brown fox jumps over the lazy dog; " * 2  # 90 characters: four 24-character pieces


# --------------------------------------------------------------------- the schedule


def test_without_latency_everything_is_due_at_once() -> None:
    assert schedule([0, 24, 24, 0], Latency()) == (0.0, 0.0, 0.0, 0.0)
    assert Latency().is_immediate and not Latency(0.5).is_immediate and not Latency(None, 10).is_immediate


def test_the_first_record_waits_for_the_first_token_and_the_rest_follow_the_rate() -> None:
    # 8 characters = 2 tokens per piece at 4 tokens/s: token k is due k/4 s after the first
    due = schedule([0, 8, 8, 0, 8, 0], Latency(1.5, 4))
    assert due == (1.5, 1.5 + 1 / 4, 1.5 + 3 / 4, 1.5 + 3 / 4, 1.5 + 5 / 4, 1.5 + 5 / 4)
    assert list(due) == sorted(due)


def test_a_rate_alone_streams_from_the_start_and_a_delay_alone_sends_everything_after_it() -> None:
    assert schedule([4, 4], Latency(None, 2)) == (0.0, 0.5)
    assert schedule([4, 400], Latency(2.0)) == (2.0, 2.0)


def test_model_seconds_is_when_the_last_token_is_due() -> None:
    assert model_seconds(0, Latency(1.5, 50)) == 1.5
    assert model_seconds(101 * CHARS_PER_TOKEN, Latency(1.5, 50)) == pytest.approx(1.5 + 100 / 50)
    assert model_seconds(400, Latency()) == 0.0


def test_settings_fall_back_one_by_one() -> None:
    step, script, server = Latency(None, 80), Latency(0.7, 20), Latency(3.0, 5)
    assert step.over(script).over(server) == Latency(0.7, 80)
    assert Latency().over(server) == server
    assert Latency(0.0).over(server) == Latency(0.0, 5)  # an explicit 0 is a setting, not "unset"


def test_an_hour_is_the_longest_first_token_delay() -> None:
    assert Latency(3600).first_token_delay == 3600
    with pytest.raises(ValueError, match=r"expected 0 to 3600 seconds, found 3600\.5"):
        Latency(3600.5)


@pytest.mark.parametrize("bad", [Latency, lambda: Latency(-1), lambda: Latency(4000), lambda: Latency(None, 0)])
def test_out_of_range_settings_are_refused(bad: Any) -> None:
    if bad is Latency:
        return  # the default is fine
    with pytest.raises(ValueError, match="expected"):
        bad()


# ------------------------------------------------------------ output characters per wire


def _reply(text: str = TEXT, calls: bool = True) -> Any:
    steps: list[dict[str, Any]] = [{"text": text}]
    if calls:
        steps = [{"text": text, "tool_calls": [{"name": "read", "arguments": {"path": "/w/a.txt"}}]}]
    script = parse_script({"schema": "skill-eval-script/1", "turns": [{"steps": steps}]}, "s.json")
    return plan_reply(script, {"model": "m", "messages": [{"role": "user", "content": "hi"}]})


def test_every_wire_counts_the_same_output_characters() -> None:
    reply = _reply()
    expected = len(reply.text) + sum(len(c.name) + len(c.arguments) for c in reply.tool_calls)
    chat = sum(chat_completions.output_chars(r) for r in chat_completions.stream_records(reply, "m", "id"))
    anthropic = sum(anthropic_messages.output_chars(r) for r in anthropic_messages.stream_records(reply, "m", "id"))
    responses = sum(openai_responses.output_chars(r) for r in openai_responses.stream_records(reply, "m", "resp_1"))
    assert chat == anthropic == responses == expected


def test_envelope_records_carry_no_output() -> None:
    reply = _reply(calls=False)
    chunks = list(chat_completions.stream_records(reply, "m", "id"))
    assert chunks[-1] == chat_completions.DONE
    assert chat_completions.output_chars(chunks[0]) == 0 and chat_completions.output_chars(chunks[-2]) == 0
    records = anthropic_messages.stream_records(reply, "m", "id")
    assert anthropic_messages.output_chars(records[0]) == 0  # message_start
    assert openai_responses.output_chars(openai_responses.stream_records(reply, "m", "resp_1")[-1]) == 0
    assert anthropic_messages.output_chars(b"event: x\ndata: {oops\n\n") == 0


# --------------------------------------------------------------------- script settings


def _script(**top: Any) -> dict[str, Any]:
    return {"schema": "skill-eval-script/1", **top}


def test_step_settings_override_the_scripts_default() -> None:
    script = parse_script(_script(latency={"first_token_delay": 1.5, "tokens_per_second": 40}, turns=[
        {"steps": [{"text": "a", "tokens_per_second": 90}]}]), "s.json")
    reply = plan_reply(script, {"model": "m", "messages": [{"role": "user", "content": "hi"}]})
    assert reply.latency == Latency(1.5, 90)
    exhausted = plan_reply(script, {"model": "m", "messages": [
        {"role": "user", "content": "hi"}, {"role": "assistant", "content": "a"}, {"role": "user", "content": "x"}]})
    assert exhausted.outcome == "exhausted" and exhausted.latency == Latency(1.5, 40)


def test_a_fault_is_never_delayed() -> None:
    script = parse_script(_script(latency={"first_token_delay": 2}, turns=[{"steps": [{"fault": "http-500"}]}]),
                          "s.json")
    assert plan_reply(script, {"model": "m", "messages": [{"role": "user", "content": "hi"}]}).latency == Latency()


@pytest.mark.parametrize(("data", "expected"), [
    (_script(latency={}, turns=[{"steps": [{"text": "a"}]}]),
     "s.json: /latency: expected a latency object with \"first_token_delay\", \"tokens_per_second\" or both"),
    (_script(latency={"first_token": 1}, turns=[{"steps": [{"text": "a"}]}]), "s.json: /latency/first_token:"),
    (_script(turns=[{"steps": [{"text": "a", "tokens_per_second": 0}]}]),
     "s.json: /turns/0/steps/0/tokens_per_second: expected output tokens per second, a number above 0, found 0"),
    (_script(latency={"first_token_delay": -1}, turns=[{"steps": [{"text": "a"}]}]),
     "s.json: /latency/first_token_delay: expected seconds before the reply's first byte, from 0 to 3600"),
    (_script(turns=[{"steps": [{"fault": "stall", "tokens_per_second": 5}]}]), "s.json: /turns/0/steps/0:"),
], ids=["empty", "unknown-key", "zero-rate", "negative-delay", "fault-with-rate"])
def test_bad_latency_settings_name_the_pointer(data: dict[str, Any], expected: str) -> None:
    with pytest.raises(ScriptError) as raised:
        parse_script(data, "s.json")
    assert expected in str(raised.value)


# ------------------------------------------------------------------------- over HTTP


_REQUESTS: dict[Api, tuple[str, dict[str, Any]]] = {
    "openai-completions": ("/v1/chat/completions", {"messages": [{"role": "user", "content": "hi"}]}),
    "anthropic-messages": ("/v1/messages", {"messages": [{"role": "user", "content": "hi"}], "max_tokens": 9}),
    "openai-responses": ("/v1/responses", {"input": [{"role": "user", "content": "hi"}]}),
}


def _post(server: ScriptedModelServer, api: Api, model: str, stream: bool = True) -> tuple[int, bytes]:
    path, body = _REQUESTS[api]
    parts = urlsplit(server.base_url)
    conn = http.client.HTTPConnection(parts.hostname or "", parts.port, timeout=30)
    conn.request("POST", path, json.dumps({**body, "model": model, "stream": stream}),
                 {"Content-Type": "application/json"})
    response = conn.getresponse()
    data = response.read()
    conn.close()
    return response.status, data


def _output_per_record(api: Api, record: RequestRecord) -> list[int]:
    """The output characters of each record the server sent for *record*'s reply (recomputed, pure)."""
    assert record.reply is not None
    reply, model = record.reply, record.model or ""
    wire = WIRES[api]
    return [wire.output_chars(r) for r in wire.stream_records(reply, model, "resp_x")]


def _assert_paced(api: Api, record: RequestRecord, latency: Latency) -> None:
    """Every record left no earlier than it was due, in order (the server's own clock)."""
    due = schedule(_output_per_record(api, record), latency)
    assert len(record.sent_at) == len(due)  # chat completions: + the [DONE] record, due with the last
    sent = [at - record.received_at for at in record.sent_at]
    assert sent == sorted(sent)
    for at, expected in zip(sent, due, strict=True):
        assert at >= expected - 1e-3
    assert due[-1] - due[0] > 0.1  # the schedule really spread the stream out


@pytest.fixture
def paced(tmp_path: Path) -> Iterator[ScriptedModelServer]:
    write_script(tmp_path, "slow", {"turns": [{"steps": [{"text": TEXT}]}]})
    write_script(tmp_path, "own", {"latency": {"tokens_per_second": 200},
                                   "turns": [{"steps": [{"text": TEXT, "first_token_delay": 0}]}]})
    with ScriptedModelServer(latency=Latency(0.2, 60)) as running:
        for name in ("slow", "own"):
            running.register(name, tmp_path / f"{name}.json")
        yield running


@pytest.mark.parametrize("api", APIS)
def test_the_server_default_paces_every_wire(paced: ScriptedModelServer, api: Api) -> None:
    status, data = _post(paced, api, "slow")
    assert status == 200 and TEXT[:24].encode() in data
    (record,) = paced.requests()
    _assert_paced(api, record, Latency(0.2, 60))


def test_the_scripts_settings_win_over_the_servers(paced: ScriptedModelServer) -> None:
    _post(paced, "openai-completions", "own")
    (record,) = paced.requests()
    assert record.reply is not None and record.reply.latency.over(paced.latency) == Latency(0.0, 200)
    _assert_paced("openai-completions", record, Latency(0.0, 200))


def test_a_whole_reply_comes_when_its_last_token_is_due(paced: ScriptedModelServer) -> None:
    status, _ = _post(paced, "openai-completions", "slow", stream=False)
    assert status == 200
    (whole,) = paced.requests()
    (sent,) = whole.sent_at
    assert sent - whole.received_at >= model_seconds(len(TEXT), Latency(0.2, 60)) - 1e-3


def test_a_fault_comes_at_once(tmp_path: Path) -> None:
    write_script(tmp_path, "fault", {"turns": [{"steps": [{"fault": "http-500"}]}]})
    with ScriptedModelServer(latency=Latency(60)) as server:
        server.register("fault", tmp_path / "fault.json")
        status, _ = _post(server, "openai-completions", "fault")
    (fault,) = server.requests()
    assert status == 500 and fault.sent_at[0] - fault.received_at < 60  # not after the 60 s first token


def test_stopping_ends_a_paced_reply(tmp_path: Path) -> None:
    write_script(tmp_path, "slow", {"turns": [{"steps": [{"text": TEXT}]}]})
    server = ScriptedModelServer(latency=Latency(600, 1)).start()
    server.register("slow", tmp_path / "slow.json")
    outcome: list[Any] = []

    def ask() -> None:
        try:
            outcome.append(_post(server, "openai-completions", "slow"))
        except (OSError, http.client.HTTPException) as error:
            outcome.append(error)

    asking = threading.Thread(target=ask)
    asking.start()
    while not server.requests():
        threading.Event().wait(0.01)
    server.stop()
    asking.join(10)
    assert not asking.is_alive() and outcome and not isinstance(outcome[0], tuple)
    assert server.requests()[0].sent_at == []


# ------------------------------------------------------------------ with the real pi host


@pytest.mark.pi
@pytest.mark.parametrize("api", APIS)
def test_pi_receives_a_paced_reply_on_every_wire(pi_host: Any, tmp_path: Path, api: Api) -> None:
    """pi on each wire: a tool call, then text; the server's clock shows both replies paced."""
    tmp_path = tmp_path.resolve()
    skill = make_skill(tmp_path / "skills", "Produce result.json for the demo task.")
    script = write_script(tmp_path, "paced", {
        "latency": {"first_token_delay": 0.3, "tokens_per_second": 50},
        "turns": [{"steps": [
            {"tool_calls": [{"name": "read", "arguments": {"path": "{{cwd}}/input.txt"}}]},
            {"text": TEXT, "first_token_delay": 0.1},
        ]}],
    })
    with ScriptedModelServer(api=api, latency=Latency(5.0, 1)) as server:  # the script's settings win
        server.register("paced", script)
        run = run_pi(pi_host, server, tmp_path, "paced", skill, "Read the input.")
        records = server.requests()

    assert run.returncode == 0, run.stderr
    assert run.assistant_texts()[-1] == TEXT
    assert [(r.api, r.status) for r in records] == [(api, 200), (api, 200)]
    call, text = records
    _assert_paced(api, call, Latency(0.3, 50))
    _assert_paced(api, text, Latency(0.1, 50))
    # the order of events: pi sent the tool result only after the last record of the call
    assert text.received_at > call.sent_at[-1]
