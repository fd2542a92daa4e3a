"""Record real pi event streams for the host-free protocol tests (run by hand, not by pytest).

    .venv/bin/python tests/host/streams/record.py

Runs a small suite through the real pi host and the scripted stand-in (tests/views/suite
plus groups that make the provider fail in each way the stand-in can, and one that
stalls until the harness aborts it), then stores each candidate run's ``events.jsonl``
(pi's stdout records, verbatim) and its ``transcript.json`` (the turns the evaluator
built, with their record spans) here as ``<group>.events.jsonl`` and
``<group>.transcript.json``. Re-record after a pi upgrade and review the diff.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
SUITE = HERE.parents[1] / "views" / "suite"

#: group id -> the script's turns (an empty step list stands for a plain text reply)
FAULTS: dict[str, list[dict[str, Any]]] = {
    "tool-then-http-500": [{"steps": [
        {"text": "Let me look first.", "tool_calls": [{"name": "read", "arguments": {"path": "CHANGE.md"}}]},
        {"fault": "http-500"},
    ]}],
    "disconnect": [{"steps": [{"fault": "disconnect"}]}],
    "malformed": [{"steps": [{"fault": "malformed"}]}],
    "no-finish-reason": [{"steps": [{"fault": "no-finish-reason"}]}],
    "stall": [{"steps": [{"tool_calls": [{"name": "read", "arguments": {"path": "CHANGE.md"}}]}, {"fault": "stall"}]}],
    "parallel-calls-then-exhausted": [{"steps": [
        {"tool_calls": [{"name": "read", "arguments": {"path": "CHANGE.md"}},
                        {"name": "read", "arguments": {"path": "missing.md"}}]},
        {"text": "Two reads, one failed."},
    ]}, {"steps": []}],
}


def group(gid: str, turns: int) -> dict[str, object]:
    variant = {"source": {"kind": "working-tree"}, "skills": ["skills/release-notes"], "target": 0, "context": []}
    payload: dict[str, object] = {"prompt": "Look at CHANGE.md."} if turns == 1 else {
        "turns": [f"Turn {n + 1}: look at CHANGE.md." for n in range(turns)]}
    return {
        "schema_version": 1, "kind": "group", "id": gid, "type": "body", "input": payload,
        "fixture": "fixtures/change", "tools": ["read", "write"],
        "variants": {"baseline": variant, "candidate": variant},
        "expectations": [{"id": "says", "kind": "response-text", "variant": "candidate", "expect": "contains", "value": "x"}],
        "review_questions": ["What did pi emit?"],
        "model": {"model": f"scripted/{gid}"},
    }


def main() -> int:
    work = Path(tempfile.mkdtemp(prefix="record-streams-"))
    suite = work / "suite"
    shutil.copytree(SUITE, suite)
    spec = json.loads((suite / "suite.json").read_text())
    for gid, turns in FAULTS.items():
        (suite / "groups" / f"{gid}.json").write_text(json.dumps(group(gid, len(turns)), indent=2))
        turns = [t if t["steps"] else {"steps": [{"text": "Second turn."}]} for t in turns]
        script = {"schema": "skill-eval-script/1", "description": f"protocol stream: {gid}", "turns": turns}
        (suite / "scripts" / f"{gid}.json").write_text(json.dumps(script, indent=2))
        spec["groups"].append(f"groups/{gid}.json")
    (suite / "suite.json").write_text(json.dumps(spec, indent=2))
    subprocess.run([sys.executable, "-m", "pytest", "--skill-eval", "suite.json", "-p", "no:cacheprovider",
                    "--skill-eval-variant", "candidate", "--skill-eval-stall-timeout", "3", "-q"],
                   cwd=suite, check=False)
    runs = sorted((suite / ".skill-eval" / "runs").glob("*/groups/*/candidate"))
    for run in runs:
        gid = run.parent.name.split("-", 1)[1]
        shutil.copyfile(run / "events.jsonl", HERE / f"{gid}.events.jsonl")
        transcript = json.loads((run / "transcript.json").read_text())
        for turn in transcript["turns"]:
            turn.pop("started_at", None)
            turn.pop("ended_at", None)
        (HERE / f"{gid}.transcript.json").write_text(json.dumps(transcript, indent=2, ensure_ascii=False) + "\n")
        print("recorded", gid)
    shutil.rmtree(work)
    return 0


if __name__ == "__main__":
    sys.exit(main())
