"""Every path form pi's read/write/edit accept, through the real host: the guard decides
on exactly the file the tool would open (issue 11, part 1).

One group, both variants, one scripted run each: every row is tried with read, write
and edit. Blocked calls must be recorded as evidence (the run still completes and is
graded); nothing outside the workspace may be read or written; the shared fixture, the
definition root and the counterpart variant's initial workspace must stay untouched.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.pi

SKILL = "---\nname: target\ndescription: Target.\n---\nBody.\n"
SECRET = "OUTSIDE-SECRET-4711"


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def _rows(root: Path, outside: Path) -> list[tuple[str, str, set[str]]]:
    """(label, path with {N} for a per-call file name, tools that must be allowed)."""
    all3, none, read = {"read", "write", "edit"}, set[str](), {"read"}
    ws = "{{cwd}}"
    return [
        ("relative", "{N}", all3),
        ("dot-relative", "./{N}", all3),
        ("inner-dotdot", "sub/../{N}", all3),
        ("dotdot-escape", "../{N}", none),
        ("deep-dotdot", "../../../../../../../../tmp/{N}", none),
        ("absolute-inside", f"{ws}/{{N}}", all3),
        ("absolute-outside", f"{outside}/{{N}}", none),
        ("etc-passwd", "/etc/passwd", none),
        ("proc-environ", "/proc/self/environ", none),
        ("at-relative", "@{N}", all3),
        ("at-escape", "@../{N}", none),
        ("at-absolute", f"@{outside}/{{N}}", none),
        ("at-at", "@@{N}", all3),  # one "@" is stripped: a file named "@..." inside
        ("tilde", "~", none),
        ("tilde-slash", "~/{N}", none),
        ("tilde-user", "~root/{N}", all3),  # not expanded by pi: a directory "~root" inside
        ("file-abs-inside", f"file://{ws}/{{N}}", all3),
        ("file-abs-outside", f"file://{outside}/{{N}}", none),
        ("file-etc-passwd", "file:///etc/passwd", none),
        ("file-proc-environ", "file:///proc/self/environ", none),
        ("file-localhost-inside", f"file://localhost{ws}/{{N}}", all3),
        ("file-localhost-outside", f"file://localhost{outside}/{{N}}", none),
        ("file-pct-dotdot", f"file://{ws}/%2e%2e/{{N}}", none),
        ("file-pct-dotdot-upper", f"file://{ws}/sub/%2E%2E/%2E%2E/{{N}}", none),
        ("file-pct-slash", f"file://{ws}/..%2F{{N}}", none),
        ("file-pct-inside", f"file://{ws}/%7BN%7D-{{N}}", all3),
        ("file-other-host", "file://otherhost/etc/passwd", none),
        ("file-fixture-poison", f"file://{root}/fixtures/ws/{{N}}", none),
        ("file-definition-root", f"file://{root}/skills/target/{{N}}", none),
        ("file-counterpart-base", f"file://{ws}/../../candidate/{{N}}", none),
        # baseline's counterpart workspace; for candidate the same path is its own workspace
        ("file-counterpart-workspace", f"file://{ws}/../../candidate/workspace/{{N}}", none),
        ("file-shared-fixture", f"file://{ws}/../../fixture/{{N}}", none),
        ("nbsp-inside", "sub\u00a0dir/{N}", all3),
        ("ideographic-space-dotdot", "\u3000../{N}", all3),  # becomes " ..": a directory inside
        ("symlink-out", "link/{N}", none),
        ("symlink-out-file-url", f"file://{ws}/link/{{N}}", none),
        ("dangling-symlink", "dangling", none),
        ("curly-variant-link", "r'/{N}", {"write", "edit"}),  # read would fall back to "r\u2019", a link out
        ("agent-auth", f"{ws}/../agent/auth.json", none),
        ("agent-auth-file-url", f"file://{ws}/../agent/auth.json", none),
        ("guard-config", f"{ws}/../host-extensions/guard.mjs", none),
        ("guard-config-file-url", f"file://{ws}/../host-extensions/guard.mjs", none),
        ("guard-resolver", f"{ws}/../host-extensions/guard-paths.mjs", none),
        ("declared-skill", "{{skill:target.location}}", read),
        ("declared-skill-file-url", "file://{{skill:target.location}}", read),
    ]


def _arguments(tool: str, path: str) -> dict[str, Any]:
    if tool == "read":
        return {"path": path}
    if tool == "write":
        return {"path": path, "content": "POISON"}
    return {"path": path, "edits": [{"oldText": "seed", "newText": "POISON"}]}


def test_every_path_form_is_decided_on_the_file_the_tool_opens(pytester: pytest.Pytester, pi_host: object,
                                                               tmp_path_factory: pytest.TempPathFactory,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    root = pytester.path
    outside = tmp_path_factory.mktemp("outside")
    scratch = tmp_path_factory.mktemp("scratch")
    rows = _rows(root, outside)
    _write(root / "skills" / "target" / "SKILL.md", SKILL)
    fixture = root / "fixtures" / "ws"
    _write(fixture / "sub" / "keep.txt", "keep")
    calls: list[tuple[str, bool]] = []  # (tool:label, allowed), in call order
    steps: list[dict[str, Any]] = []
    for tool in ("read", "write", "edit"):
        for i, (label, path, allowed) in enumerate(rows):
            name = f"poison-{tool}-{i}.txt"
            # every file a read or edit may target exists on both sides, holding "seed"
            _write(fixture / name, "seed inside")
            _write(outside / name, f"seed {SECRET}")
            calls.append((f"{tool}:{label}", tool in allowed))
            steps.append({"tool_calls": [{"name": tool, "arguments": _arguments(tool, path.replace("{N}", name))}]})
    steps.append({"text": "done"})
    fixture_before = {str(p.relative_to(fixture)): p.read_bytes() for p in fixture.rglob("*") if p.is_file()}
    # a fixture cannot carry escaping symlinks, so trusted extension code plants them
    _write(root / "ext" / "links.mjs", "import fs from 'node:fs';\n"
           "export default function (pi) {\n  pi.on('session_start', async () => {\n"
           f"  fs.symlinkSync({json.dumps(str(outside))}, 'link');\n"
           f"  fs.symlinkSync({json.dumps(str(outside))}, 'r\\u2019');\n"
           f"  fs.symlinkSync({json.dumps(str(outside / 'nothing-here.txt'))}, 'dangling');\n"
           "});\n"
           # evidence copies the final workspace; a dangling link there is not this test's subject
           "  pi.on('agent_end', async () => { fs.rmSync('dangling', { force: true }); });\n"
           "}\n")
    variant = {"source": {"kind": "working-tree"}, "skills": ["skills/target"], "target": 0, "context": []}
    group = {"schema_version": 1, "kind": "group", "id": "forms", "type": "body", "input": {"prompt": "Go."},
             "fixture": "fixtures/ws", "tools": ["read", "write", "edit"],
             "variants": {"baseline": variant, "candidate": variant}, "review_questions": [],
             "expectations": [{"id": "no-secret", "kind": "tool-call", "variant": "candidate", "tool": "read",
                               "argumentContains": ["environ"], "expect": "failed"}],
             "model": {"model": "scripted/forms"},
             "runtime": {"host": "pi", "session": False, "extensions": [{"entry": "ext/links.mjs", "resources": ["ext"]}],
                         "environment": {"literal": {}, "inherit": []}}}
    _write(root / "groups" / "forms.json", json.dumps(group))
    _write(root / "groups" / "scripts" / "forms.json", json.dumps({"schema": "skill-eval-script/1", "turns": [{"steps": steps}]}))
    _write(root / "auth.json", json.dumps({"unused": {"type": "api_key", "key": "auth-json-secret-0815"}}))
    monkeypatch.setenv("TMPDIR", str(scratch))
    result = pytester.runpytest_subprocess("--skill-eval", "groups/forms.json", "-p", "no:cacheprovider",
                                           "--skill-eval-auth", "auth.json")
    result.assert_outcomes(passed=1)
    (res,) = (p for p in (root / ".skill-eval" / "runs").iterdir() if p.is_dir())
    gdir = res / "groups" / "001-forms"
    for variant_name in ("baseline", "candidate"):
        vdir = gdir / variant_name
        assert json.loads((vdir / "run.json").read_text())["state"] == "complete", "blocked attempts are evidence, never crashes"
        recorded = json.loads((vdir / "transcript.json").read_text())["turns"][0]["tool_calls"]
        assert len(recorded) == len(calls)
        own = variant_name == "candidate"
        expected = [(label, not (allowed or (own and label.endswith(":file-counterpart-workspace")))) for label, allowed in calls]
        got = [(label, c["blocked"]) for (label, _), c in zip(calls, recorded, strict=True)]
        assert [g for g, e in zip(got, expected, strict=True) if g != e] == [], "blocked exactly the rows that escape"
        for (label, blocked), c in zip(expected, recorded, strict=True):
            if blocked:
                assert c["result_text"].startswith("skill-eval guard blocked"), (label, c["result_text"])
        events = (vdir / "events.jsonl").read_text()
        assert SECRET not in events
        assert "PI_CODING_AGENT_DIR=" not in events, "/proc/self/environ was read"
        assert '"readRoots"' not in events, "the guard's own configuration was read"
        # the initial workspace is the untouched fixture, for both variants
        initial = vdir / "workspace-initial"
        assert {str(p.relative_to(initial)): p.read_bytes() for p in initial.rglob("*") if p.is_file()} == fixture_before
        # the variant's final workspace holds only what its own allowed calls made
        final_poison = [p for p in (vdir / "workspace").rglob("*") if p.is_file() and p.read_bytes().startswith(b"POISON")]
        assert final_poison and all("poison-write-" in p.name or "poison-edit-" in p.name for p in final_poison)
    assert {str(p.relative_to(fixture)): p.read_bytes() for p in fixture.rglob("*") if p.is_file()} == fixture_before
    assert (root / "skills" / "target" / "SKILL.md").read_text() == SKILL
    assert sorted(p.name for p in (root / "skills" / "target").iterdir()) == ["SKILL.md"]
    poisoned = [p for base in (outside, scratch, root) for p in base.rglob("*")
                if p.is_file() and ".skill-eval" not in p.parts and p.read_bytes().startswith(b"POISON")]
    assert poisoned == [], "nothing outside a workspace was written"
    assert all(p.read_text() == f"seed {SECRET}" for p in outside.glob("poison-*"))


#: the attack corpus, reused with the guard switched off (tests/isolation/test_confinement_attacks.py)
attack_rows = _rows
tool_arguments = _arguments
