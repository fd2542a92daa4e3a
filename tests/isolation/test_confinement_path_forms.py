"""The kernel alone holds every path-form attack of tests/reliability (issue 27).

The same group as ``tests/reliability/test_guard_path_forms.py`` (every path form pi's
read, write and edit accept, both variants), run with the path guard switched off by the
test-only hook and the confinement ``required``: nothing outside a variant's own roots is
read or written, and each refusal is the tool error pi reported (evidence, not a crash).

The one access the kernel cannot refuse is a read of the variant's own agent dir: pi itself
reads ``auth.json`` and ``models.json`` there, and the kernel cannot tell pi's read from the
model's. Writes there are refused (pi only makes its lock directories). The guard is the
line for that read (docs/security.md).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from reliability.test_guard_path_forms import SECRET, SKILL, attack_rows, tool_arguments

from pytest_skill_eval.host.confinement import GUARD_OFF_ENV, GUARD_OFF_VALUE

pytestmark = pytest.mark.pi

#: rows whose target is the variant's own private agent dir: pi's own files (see above)
AGENT_DIR_ROWS = {"agent-auth", "agent-auth-file-url"}
#: rows whose target exists outside every granted root: the kernel's own refusal is expected
KERNEL_REFUSED = {"absolute-outside", "etc-passwd", "proc-environ", "file-abs-outside", "symlink-out",
                  "file-etc-passwd", "file-proc-environ", "file-fixture-poison"}


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def _refused(text: str) -> bool:
    return "EACCES" in text or "EPERM" in text or "ermission denied" in text


def _expected_ok(tool: str, label: str, allowed: set[str], own_counterpart: bool) -> bool:
    if label in AGENT_DIR_ROWS:
        return tool == "read"
    if label == "file-counterpart-workspace" and own_counterpart:
        return True  # the candidate's "counterpart" path is its own workspace
    return tool in allowed


def test_with_the_guard_off_the_kernel_contains_every_path_form(pytester: pytest.Pytester, pi_host: object,
                                                                tmp_path_factory: pytest.TempPathFactory,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    root = pytester.path
    outside = tmp_path_factory.mktemp("outside")
    scratch = tmp_path_factory.mktemp("scratch")
    rows = attack_rows(root, outside)
    _write(root / "skills" / "target" / "SKILL.md", SKILL)
    fixture = root / "fixtures" / "ws"
    _write(fixture / "sub" / "keep.txt", "keep")
    calls: list[tuple[str, str, set[str]]] = []
    steps: list[dict[str, Any]] = []
    for tool in ("read", "write", "edit"):
        for i, (label, path, allowed) in enumerate(rows):
            name = f"poison-{tool}-{i}.txt"
            _write(fixture / name, "seed inside")
            _write(outside / name, f"seed {SECRET}")
            calls.append((tool, label, allowed))
            steps.append({"tool_calls": [{"name": tool, "arguments": tool_arguments(tool, path.replace("{N}", name))}]})
    steps.append({"text": "done"})
    fixture_before = {str(p.relative_to(fixture)): p.read_bytes() for p in fixture.rglob("*") if p.is_file()}
    _write(root / "ext" / "links.mjs", "import fs from 'node:fs';\n"
           "export default function (pi) {\n  pi.on('session_start', async () => {\n"
           f"  fs.symlinkSync({json.dumps(str(outside))}, 'link');\n"
           f"  fs.symlinkSync({json.dumps(str(outside))}, 'r\\u2019');\n"
           f"  fs.symlinkSync({json.dumps(str(outside / 'nothing-here.txt'))}, 'dangling');\n"
           "});\n"
           "  pi.on('agent_end', async () => { fs.rmSync('dangling', { force: true }); });\n"
           "}\n")
    variant = {"source": {"kind": "working-tree"}, "skills": ["skills/target"], "target": 0, "context": []}
    group = {"schema_version": 1, "kind": "group", "id": "forms", "type": "body", "input": {"prompt": "Go."},
             "fixture": "fixtures/ws", "tools": ["read", "write", "edit"],
             "variants": {"baseline": variant, "candidate": variant}, "review_questions": [], "expectations": [],
             "model": {"model": "scripted/forms"},
             "runtime": {"host": "pi", "session": False, "extensions": [{"entry": "ext/links.mjs", "resources": ["ext"]}],
                         "environment": {"literal": {}, "inherit": []}}}
    _write(root / "groups" / "forms.json", json.dumps(group))
    _write(root / "groups" / "scripts" / "forms.json", json.dumps({"schema": "skill-eval-script/1", "turns": [{"steps": steps}]}))
    _write(root / "auth.json", json.dumps({"unused": {"type": "api_key", "key": "auth-json-secret-0815"}}))
    monkeypatch.setenv("TMPDIR", str(scratch))
    monkeypatch.setenv(GUARD_OFF_ENV, GUARD_OFF_VALUE)
    result = pytester.runpytest_subprocess("--skill-eval", "groups/forms.json", "-p", "no:cacheprovider",
                                           "--skill-eval-auth", "auth.json", "--skill-eval-confinement", "required")
    result.assert_outcomes(passed=1)
    (res,) = (p for p in (root / ".skill-eval" / "runs").iterdir() if p.is_dir())
    gdir = res / "groups" / "001-forms"
    for variant_name in ("baseline", "candidate"):
        vdir = gdir / variant_name
        run = json.loads((vdir / "run.json").read_text())
        assert run["state"] == "complete", "refused attempts are evidence, never crashes"
        assert run["confinement"]["mechanism"] == "landlock"
        assert run["confinement"]["guard"] == "off (test-only hook)", "the evidence says the kernel stood alone"
        assert not any("guard.mjs" in a for a in run["argv"])
        recorded = json.loads((vdir / "transcript.json").read_text())["turns"][0]["tool_calls"]
        assert len(recorded) == len(calls)
        own = variant_name == "candidate"
        # an escape must fail; an allowed call may fail only as it would anyway (a name the
        # fixture does not hold), never by a refusal
        wrong = [(f"{tool}:{label}", c["is_error"], c["result_text"][:120])
                 for (tool, label, allowed), c in zip(calls, recorded, strict=True)
                 if (not c["is_error"] and not _expected_ok(tool, label, allowed, own))
                 or (_expected_ok(tool, label, allowed, own) and _refused(c["result_text"]))]
        assert wrong == [], "failed exactly the calls that escape:\n" + "\n".join(map(str, wrong))
        assert not any(c["blocked"] for c in recorded), "no guard ran: every refusal is the kernel's"
        for (tool, label, _), c in zip(calls, recorded, strict=True):
            if label in KERNEL_REFUSED and tool != "edit":
                assert _refused(c["result_text"]), (tool, label, c["result_text"])
        events = (vdir / "events.jsonl").read_text()
        assert SECRET not in events
        assert "PI_CODING_AGENT_DIR=" not in events, "/proc/self/environ was read"
        initial = vdir / "workspace-initial"
        assert {str(p.relative_to(initial)): p.read_bytes() for p in initial.rglob("*") if p.is_file()} == fixture_before
    assert {str(p.relative_to(fixture)): p.read_bytes() for p in fixture.rglob("*") if p.is_file()} == fixture_before
    assert (root / "skills" / "target" / "SKILL.md").read_text() == SKILL
    assert sorted(p.name for p in (root / "skills" / "target").iterdir()) == ["SKILL.md"]
    poisoned = [p for base in (outside, scratch, root) for p in base.rglob("*")
                if p.is_file() and ".skill-eval" not in p.parts and p.read_bytes().startswith(b"POISON")]
    assert poisoned == [], "nothing outside a workspace was written"
    assert all(p.read_text() == f"seed {SECRET}" for p in outside.glob("poison-*"))
