"""The RPC driver against misbehaving hosts.

A real pi never sends these byte sequences on purpose, so each case runs a small node
program (a real subprocess on the same node 22) that speaks the RPC protocol badly in
one specific way. Everything else about the driver is tested against real pi elsewhere.
"""

from __future__ import annotations

import json
from pathlib import Path

import psutil
import pytest

from pytest_skill_eval.host.driver import Safeguards, run_rpc
from pytest_skill_eval.host.install import HostInstallation
from pytest_skill_eval.host.launch import LaunchPlan

PRELUDE = """
import readline from 'node:readline';
const out = (o) => process.stdout.write(JSON.stringify(o) + '\\n');
const rl = readline.createInterface({ input: process.stdin });
rl.on('line', (line) => {
  const cmd = JSON.parse(line);
  if (cmd.type === 'get_commands') return out({ id: cmd.id, type: 'response', command: 'get_commands', success: true, data: { commands: [] } });
  onPrompt(cmd);
});
"""

CASES = {
    "response-without-id": (
        "function onPrompt(cmd) { out({ type: 'response', command: 'parse', success: false, error: 'Failed to parse command: x' }); }",
        "protocol fault: response without id: Failed to parse command: x",
    ),
    "malformed-output": (
        "function onPrompt(cmd) { process.stdout.write('this is not json\\n'); }",
        "malformed host output at record 1: not JSON: Expecting value",
    ),
    "prompt-rejected": (
        "function onPrompt(cmd) { out({ id: cmd.id, type: 'response', command: 'prompt', success: false, error: 'Agent is already processing.' }); }",
        "turn 1: prompt rejected by the host: Agent is already processing.",
    ),
    "exits-mid-turn": (
        "function onPrompt(cmd) { out({ id: cmd.id, type: 'response', command: 'prompt', success: true, data: { disposition: 'started' } });"
        " out({ type: 'agent_start' }); process.exit(3); }",
        "the host exited before the turn settled",
    ),
}


def _plan(tmp_path: Path, pi_host: HostInstallation, body: str) -> LaunchPlan:
    cli = tmp_path / "fake-pi.mjs"
    cli.write_text(PRELUDE + body + "\n")
    host = HostInstallation(node=pi_host.node, cli=cli, version="1.6.0", managed=False)
    for d in ("ws", "agent", "home"):
        (tmp_path / d).mkdir()
    return LaunchPlan(host=host, mode="rpc", workspace=tmp_path / "ws", agent_dir=tmp_path / "agent", home=tmp_path / "home",
                      skills=(), extensions=(), tools=("read",), provider="p", model="m", thinking=None, session_dir=None,
                      prompts=("first", "second"))


@pytest.mark.parametrize("case", sorted(CASES))
def test_protocol_faults_fail_the_run_and_keep_what_was_seen(tmp_path: Path, pi_host: HostInstallation, case: str) -> None:
    body, reason = CASES[case]
    run = run_rpc(_plan(tmp_path, pi_host, body), ["first", "second"], Safeguards(stall_seconds=30))
    assert run.outcome == "infrastructure-failed"
    assert run.failure is not None and run.failure.startswith(reason)
    assert [s.settled for s in run.spans] == [False], "the unfinished turn is kept as partial evidence"
    assert json.loads(run.records[0].raw)["command"] == "get_commands"
    assert run.pid is not None, "the host was started"
    assert not psutil.pid_exists(run.pid) or psutil.Process(run.pid).status() == psutil.STATUS_ZOMBIE


def test_stalled_host_is_reaped(tmp_path: Path, pi_host: HostInstallation) -> None:
    plan = _plan(tmp_path, pi_host, "function onPrompt(cmd) { /* never answers */ }")
    run = run_rpc(plan, ["first", "second"], Safeguards(stall_seconds=1))
    assert run.outcome == "infrastructure-failed"
    assert run.failure == "no progress from the host for 1 s (stalled subject)"
    assert run.pid is not None, "the host was started"
    assert not psutil.pid_exists(run.pid)


def test_an_unfinished_turn_records_the_message_actually_sent(tmp_path: Path, pi_host: HostInstallation) -> None:
    # Body groups deliver the skill on turn one by rewriting the first message after
    # get_commands; a turn cut short must record that message, not the bare prompt.
    body, _ = CASES["exits-mid-turn"]
    sent = ["first", "second"]

    def deliver(commands: list[dict[str, object]]) -> str | None:
        sent[0] = "/skill:demo first"
        return None

    run = run_rpc(_plan(tmp_path, pi_host, body), sent, Safeguards(stall_seconds=30), before_first_turn=deliver)
    assert run.outcome == "infrastructure-failed"
    (span,) = run.spans
    assert (span.prompt, span.sent, span.settled) == ("first", "/skill:demo first", False)
    # the span starts where the turn's prompt does, as a settled turn's would
    assert json.loads(run.records[span.start].raw)["command"] == "prompt"
