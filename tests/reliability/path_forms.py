"""The path-form attack corpus and its project, shared by the guard's test
(tests/reliability/test_guard_path_forms.py) and the kernel's (tests/isolation/test_confinement_path_forms.py).

One group, both variants, one scripted run each: every row is tried with read, write and
edit; trusted extension code plants the links a fixture cannot carry. The two tests differ
only in which line holds (the guard, or the kernel with the guard switched off) and so in
what a refusal looks like; what must never happen is checked here once.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

SKILL = "---\nname: target\ndescription: Target.\n---\nBody.\n"
SECRET = "OUTSIDE-SECRET-4711"


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def files(tree: Path) -> dict[str, bytes]:
    """Every regular file below *tree*, by relative path."""
    return {str(p.relative_to(tree)): p.read_bytes() for p in tree.rglob("*") if p.is_file()}


def attack_rows(root: Path, outside: Path) -> list[tuple[str, str, set[str]]]:
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


def tool_arguments(tool: str, path: str) -> dict[str, Any]:
    if tool == "read":
        return {"path": path}
    if tool == "write":
        return {"path": path, "content": "POISON"}
    return {"path": path, "edits": [{"oldText": "seed", "newText": "POISON"}]}


@dataclass(frozen=True)
class PathFormProject:
    root: Path
    outside: Path
    scratch: Path
    fixture: Path
    #: (tool, row label, tools the row allows), in call order
    calls: list[tuple[str, str, set[str]]]
    fixture_before: dict[str, bytes]


def plant(root: Path, outside: Path, scratch: Path, expectations: list[dict[str, Any]]) -> PathFormProject:
    """Write the skill, the fixture, a seed file per call inside and outside, the extension
    that plants the links, the group, its script and an auth file with a secret."""
    write(root / "skills" / "target" / "SKILL.md", SKILL)
    fixture = root / "fixtures" / "ws"
    write(fixture / "sub" / "keep.txt", "keep")
    calls: list[tuple[str, str, set[str]]] = []
    steps: list[dict[str, Any]] = []
    for tool in ("read", "write", "edit"):
        for i, (label, path, allowed) in enumerate(attack_rows(root, outside)):
            name = f"poison-{tool}-{i}.txt"
            # every file a read or edit may target exists on both sides, holding "seed"
            write(fixture / name, "seed inside")
            write(outside / name, f"seed {SECRET}")
            calls.append((tool, label, allowed))
            steps.append({"tool_calls": [{"name": tool, "arguments": tool_arguments(tool, path.replace("{N}", name))}]})
    steps.append({"text": "done"})
    fixture_before = files(fixture)
    # a fixture cannot carry escaping symlinks, so trusted extension code plants them
    write(root / "ext" / "links.mjs", "import fs from 'node:fs';\n"
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
             "expectations": expectations, "model": {"model": "scripted/forms"},
             "runtime": {"host": "pi", "session": False, "extensions": [{"entry": "ext/links.mjs", "resources": ["ext"]}],
                         "environment": {"literal": {}, "inherit": []}}}
    write(root / "groups" / "forms.json", json.dumps(group))
    write(root / "groups" / "scripts" / "forms.json", json.dumps({"schema": "skill-eval-script/1", "turns": [{"steps": steps}]}))
    write(root / "auth.json", json.dumps({"unused": {"type": "api_key", "key": "auth-json-secret-0815"}}))
    return PathFormProject(root, outside, scratch, fixture, calls, fixture_before)


def assert_variant_contained(project: PathFormProject, vdir: Path) -> None:
    """What holds for each variant whichever line refused: no secret in its events, its own
    environment unread, its initial workspace the untouched fixture."""
    events = (vdir / "events.jsonl").read_text()
    assert SECRET not in events
    assert "PI_CODING_AGENT_DIR=" not in events, "/proc/self/environ was read"
    assert files(vdir / "workspace-initial") == project.fixture_before


def assert_nothing_escaped(project: PathFormProject) -> None:
    """The shared fixture, the definition root and everything outside stay as they were."""
    assert files(project.fixture) == project.fixture_before
    assert (project.root / "skills" / "target" / "SKILL.md").read_text() == SKILL
    assert sorted(p.name for p in (project.root / "skills" / "target").iterdir()) == ["SKILL.md"]
    poisoned = [p for base in (project.outside, project.scratch, project.root) for p in base.rglob("*")
                if p.is_file() and ".skill-eval" not in p.parts and p.read_bytes().startswith(b"POISON")]
    assert poisoned == [], "nothing outside a workspace was written"
    assert all(p.read_text() == f"seed {SECRET}" for p in project.outside.glob("poison-*"))
