"""The scripted stand-in driving the real pi host (JSON mode) end to end, offline."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from pytest_skill_eval.host.launch import PINNED_SETTINGS
from pytest_skill_eval.scripted import PROVIDER, ScriptedModelServer

pytestmark = pytest.mark.pi

SETTINGS = PINNED_SETTINGS

READ_ON_MATCH = {
    "description": "Read the skill when its description mentions the demo task.",
    "turns": [{
        "rules": [{
            "when": {"skill_description_contains": "the demo task"},
            "steps": [
                {"text": "Loading the skill.", "tool_calls": [
                    {"name": "read", "arguments": {"path": "{{skill_matching:the demo task.location}}"}},
                ]},
                {"text": "Done with the demo task."},
            ],
        }],
        "steps": [{"text": "No listed skill applies."}],
    }],
}

DELIVERED = {
    "description": "Body group: the skill arrives through /skill:<name>; then a second turn.",
    "turns": [
        {"steps": [
            {"text": "Got {{delivered.name}} from {{delivered.location}}.", "tool_calls": [
                {"name": "read", "arguments": {"path": "{{delivered.dir}}/notes.md"}},
            ]},
            {"text": "Notes read."},
        ]},
        {"steps": [
            {"tool_calls": [{"name": "read", "arguments": {"path": "{{cwd}}/input.txt"}}]},
            {"text": "Input read."},
        ]},
    ],
}

SKILL_BODY = "# Demo\nWrite result.json with the answer.\n"


@dataclass(frozen=True, slots=True)
class PiRun:
    returncode: int
    events: list[dict[str, Any]]
    stderr: str

    def messages(self, role: str) -> list[dict[str, Any]]:
        return [
            e["message"] for e in self.events
            if e["type"] == "message_end" and e["message"]["role"] == role
        ]

    def tool_starts(self) -> list[tuple[str, dict[str, Any]]]:
        return [(e["toolName"], e["args"]) for e in self.events if e["type"] == "tool_execution_start"]

    def assistant_texts(self) -> list[str]:
        return [
            "".join(block["text"] for block in m["content"] if block["type"] == "text")
            for m in self.messages("assistant")
        ]


@pytest.fixture
def server() -> Iterator[ScriptedModelServer]:
    with ScriptedModelServer(keep_bodies=True) as running:
        yield running


def write_script(directory: Path, name: str, body: dict[str, Any]) -> Path:
    path = directory / f"{name}.json"
    path.write_text(json.dumps({"schema": "skill-eval-script/1", **body}))
    return path


def make_skill(root: Path, description: str) -> Path:
    skill = root / "demo-skill"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text(f"---\nname: demo-skill\ndescription: {description}\n---\n{SKILL_BODY}")
    (skill / "notes.md").write_text("Notes: the answer is 42.\n")
    return skill


def run_pi(
    pi_host: Any, server: ScriptedModelServer, tmp_path: Path, model: str, skill: Path, *prompts: str
) -> PiRun:
    """One JSON-mode pi run in a private home, agent dir and workspace under ``tmp_path``."""
    home, agent_dir, workspace = tmp_path / "home", tmp_path / "agent", tmp_path / "workspace"
    for directory in (home, agent_dir, workspace):
        directory.mkdir(exist_ok=True)
    (workspace / "input.txt").write_text("input for the second turn\n")
    (agent_dir / "models.json").write_text(
        json.dumps({"providers": {PROVIDER: server.provider_config([model])}})
    )
    (agent_dir / "settings.json").write_text(json.dumps(SETTINGS))
    argv = [
        str(pi_host.node), str(pi_host.cli), "--mode", "json", "--offline", "--no-session",
        "--no-extensions", "--no-skills", "--skill", str(skill), "--no-context-files",
        "--no-prompt-templates", "--no-themes", "--tools", "read",
        "--provider", PROVIDER, "--model", model, *prompts,
    ]
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home),
        "PI_CODING_AGENT_DIR": str(agent_dir),
        "PI_OFFLINE": "1",
        "PI_TELEMETRY": "0",
    }
    done = subprocess.run(
        argv, stdin=subprocess.DEVNULL, capture_output=True, cwd=workspace, env=env, timeout=60
    )
    # JSON lines are split on LF bytes only: strings may hold U+2028.
    lines = [line for line in done.stdout.split(b"\n") if line.strip()]
    return PiRun(done.returncode, [json.loads(line) for line in lines], done.stderr.decode())


@pytest.mark.parametrize(
    ("description", "reads_skill"),
    [
        ("Produce result.json for the demo task. Use when asked to run the demo task.", True),
        ("Summarise release notes. Use when asked about a changelog.", False),
    ],
    ids=["description-matches", "description-differs"],
)
def test_description_rule_decides_whether_pi_reads_the_skill(
    pi_host: Any, server: ScriptedModelServer, tmp_path: Path, description: str, reads_skill: bool
) -> None:
    tmp_path = tmp_path.resolve()
    skill = make_skill(tmp_path / "skills", description)
    server.register("read-on-match", write_script(tmp_path, "read-on-match", READ_ON_MATCH))

    run = run_pi(pi_host, server, tmp_path, "read-on-match", skill, "Please run the demo task.")

    assert run.returncode == 0, run.stderr
    served = [(r.status, r.reply and (r.reply.turn, r.reply.step, r.reply.rule)) for r in server.requests()]
    if reads_skill:
        assert run.tool_starts() == [("read", {"path": str(skill / "SKILL.md")})]
        (result,) = run.messages("toolResult")
        assert result["isError"] is False
        assert SKILL_BODY in result["content"][0]["text"]
        assert run.assistant_texts() == ["Loading the skill.", "Done with the demo task."]
        assert served == [(200, (1, 0, 0)), (200, (1, 1, 0))]
    else:
        assert run.tool_starts() == []
        assert run.assistant_texts() == ["No listed skill applies."]
        assert served == [(200, (1, 0, None))]
    assert [m["stopReason"] for m in run.messages("assistant")][-1] == "stop"


def test_skill_prompt_delivers_the_skill_and_placeholders_resolve(
    pi_host: Any, server: ScriptedModelServer, tmp_path: Path
) -> None:
    tmp_path = tmp_path.resolve()
    skill = make_skill(tmp_path / "skills", "Produce result.json for the demo task.")
    server.register("delivered", write_script(tmp_path, "delivered", DELIVERED))

    run = run_pi(
        pi_host, server, tmp_path, "delivered", skill, "/skill:demo-skill go", "And the input?"
    )

    assert run.returncode == 0, run.stderr
    assert run.tool_starts() == [
        ("read", {"path": str(skill / "notes.md")}),
        ("read", {"path": str(tmp_path / "workspace" / "input.txt")}),
    ]
    assert [m["content"][0]["text"] for m in run.messages("toolResult")] == [
        "Notes: the answer is 42.\n", "input for the second turn\n",
    ]
    assert run.assistant_texts() == [
        f"Got demo-skill from {skill / 'SKILL.md'}.", "Notes read.", "", "Input read.",
    ]
    first_user_message = server.requests()[0].body["messages"][1]["content"][0]["text"]
    assert first_user_message.startswith(f'<skill name="demo-skill" location="{skill / "SKILL.md"}">')
    assert [(r.reply.turn, r.reply.step) for r in server.requests() if r.reply] == [
        (1, 0), (1, 1), (2, 0), (2, 1),
    ]


@pytest.mark.parametrize(
    ("fault", "error"),
    [
        ("http-500", '500: {"message":"[scripted stand-in] scripted fault http-500"'),
        ("malformed", "malformed server-sent event JSON"),
        ("disconnect", "other side closed"),
        ("no-finish-reason", "Stream ended without finish_reason"),
    ],
)
def test_faults_reach_pi_as_provider_errors(
    pi_host: Any, server: ScriptedModelServer, tmp_path: Path, fault: str, error: str
) -> None:
    tmp_path = tmp_path.resolve()
    skill = make_skill(tmp_path / "skills", "Produce result.json for the demo task.")
    server.register(fault, write_script(tmp_path, fault, {"turns": [{"steps": [{"fault": fault}]}]}))

    run = run_pi(pi_host, server, tmp_path, fault, skill, "hi")

    assert run.returncode == 0, run.stderr  # JSON mode exits 0 on provider errors
    (assistant,) = run.messages("assistant")
    assert assistant["stopReason"] == "error"
    assert error in assistant["errorMessage"]
    assert len(server.requests()) == 1  # retries are off: one fault, one request
