"""What each variant sees, and nothing else: real pi, real git, real files."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any, cast

import pytest

pytestmark = pytest.mark.pi

SKILL = "---\nname: {name}\ndescription: {description}\n---\n# {name}\n\nBody of {name}.\n"


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def _variant(skills: list[str], target: int | None, context: list[str] | None = None, source: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"source": source or {"kind": "working-tree"}, "skills": skills, "target": target, "context": context or []}


def _group(gid: str, *, type_: str = "body", prompts: list[str], tools: list[str], baseline: dict[str, Any], candidate: dict[str, Any],
           expectations: list[dict[str, Any]] | None = None, fixture: str | None = None, runtime: dict[str, Any] | None = None) -> dict[str, Any]:
    doc: dict[str, Any] = {
        "schema_version": 1, "kind": "group", "id": gid, "type": type_,
        "input": {"turns": prompts} if len(prompts) > 1 else {"prompt": prompts[0]},
        "fixture": fixture, "tools": tools, "variants": {"baseline": baseline, "candidate": candidate},
        "expectations": expectations or [], "review_questions": [], "model": {"model": f"scripted/{gid}"},
    }
    if runtime is not None:
        doc["runtime"] = runtime
    return doc


def _script(*turn_steps: list[dict[str, Any]]) -> dict[str, Any]:
    return {"schema": "skill-eval-script/1", "turns": [{"steps": steps} for steps in turn_steps]}


def _run(pytester: pytest.Pytester, group: dict[str, Any], script: dict[str, Any], *args: str) -> tuple[pytest.RunResult, Path]:
    _write(pytester.path / "groups" / f"{group['id']}.json", json.dumps(group))
    _write(pytester.path / "groups" / "scripts" / f"{group['id']}.json", json.dumps(script))
    result = pytester.runpytest_subprocess("--skill-eval", f"groups/{group['id']}.json", "-p", "no:cacheprovider", *args)
    runs = [p for p in (pytester.path / ".skill-eval" / "runs").iterdir() if p.is_dir()]
    assert len(runs) == 1
    return result, next((runs[0] / "groups").iterdir())


def _run_json(group_dir: Path, variant: str) -> dict[str, Any]:
    return cast(dict[str, Any], json.loads((group_dir / variant / "run.json").read_text()))


def _transcript(group_dir: Path, variant: str) -> list[dict[str, Any]]:
    return cast(list[dict[str, Any]], json.loads((group_dir / variant / "transcript.json").read_text())["turns"])


@pytest.fixture
def root(pytester: pytest.Pytester, pi_host: object) -> pytest.Pytester:
    _write(pytester.path / "skills" / "target" / "SKILL.md", SKILL.format(name="target", description="Target skill."))
    _write(pytester.path / "skills" / "support" / "SKILL.md", SKILL.format(name="support", description="Support skill."))
    return pytester


def test_workspace_and_ancestor_ambient_files_never_reach_the_subject(root: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    marker = root.path / "extension-ran"
    fixture = root.path / "fixtures" / "ws"
    _write(fixture / ".pi" / "extensions" / "marker.mjs",
           f"import fs from 'node:fs';\nexport default function (pi) {{ fs.writeFileSync({json.dumps(str(marker))}, 'ran'); }}\n")
    _write(fixture / ".pi" / "settings.json", json.dumps({"retry": {"enabled": True}}))
    _write(fixture / ".pi" / "skills" / "ambient" / "SKILL.md", SKILL.format(name="ambient", description="Ambient workspace skill."))
    _write(fixture / ".agents" / "skills" / "ambient2" / "SKILL.md", SKILL.format(name="ambient2", description="Ambient agents skill."))
    _write(fixture / "AGENTS.md", "WORKSPACE-AGENTS-MARKER\n")
    _write(fixture / ".pi" / "SYSTEM.md", "WORKSPACE-SYSTEM-MARKER\n")
    ancestor = root.path / "tmp-with-agents"
    _write(ancestor / "AGENTS.md", "ANCESTOR-AGENTS-MARKER\n")
    _write(ancestor / "CLAUDE.md", "ANCESTOR-CLAUDE-MARKER\n")
    monkeypatch.setenv("TMPDIR", str(ancestor))  # every subject's workspace lives below this AGENTS.md
    _write(root.path / "context" / "contract.md", "DECLARED-CONTEXT-MARKER\n")
    group = _group(
        "ambient", prompts=["Do the task."], tools=["read"], fixture="fixtures/ws",
        baseline=_variant([], None), candidate=_variant(["skills/target"], 0, ["context/contract.md"]),
        expectations=[
            {"id": "declared-context-present", "kind": "context-text", "variant": "candidate", "expect": "contains", "value": "DECLARED-CONTEXT-MARKER"},
            *[{"id": f"{v}-no-{m.lower()}", "kind": "context-text", "variant": v, "expect": "not-contains", "value": f"{m}-MARKER"}
              for m in ("WORKSPACE-AGENTS", "ANCESTOR-AGENTS", "ANCESTOR-CLAUDE", "WORKSPACE-SYSTEM") for v in ("baseline", "candidate")],
        ],
    )
    result, gdir = _run(root, group, _script([{"text": "ok"}]))
    result.assert_outcomes(passed=1)
    assert not marker.exists(), "a workspace .pi/extensions file ran"
    for variant in ("baseline", "candidate"):
        events = (gdir / variant / "events.jsonl").read_text()
        for m in ("WORKSPACE-AGENTS", "ANCESTOR-AGENTS", "ANCESTOR-CLAUDE", "WORKSPACE-SYSTEM"):
            assert f"{m}-MARKER" not in events
        names = [s["name"] for s in _run_json(gdir, variant)["registered_skills"]["prompt"]]
        assert "ambient" not in names and "ambient2" not in names
    assert [s["name"] for s in _run_json(gdir, "baseline")["registered_skills"]["prompt"]] == []
    assert [s["name"] for s in _run_json(gdir, "candidate")["registered_skills"]["prompt"]] == ["target"]
    assert _run_json(gdir, "baseline")["registered_context"] == []
    (declared,) = _run_json(gdir, "candidate")["registered_context"]
    assert declared.endswith("/resources/context/0/contract.md")
    observations = json.loads((gdir / "candidate" / "context-observations.json").read_text())
    assert "<project_instructions" in observations[0]["system_prompt"]


def test_no_context_observation_artifacts_without_context_checks(root: pytest.Pytester) -> None:
    group = _group("plain", prompts=["Hi."], tools=["read"], baseline=_variant([], None), candidate=_variant(["skills/target"], 0),
                   type_="description")
    result, gdir = _run(root, group, _script([{"text": "ok"}]))
    result.assert_outcomes(passed=1)
    assert not list(gdir.rglob("context-observations.json"))


def test_guard_blocks_reads_and_writes_outside_allowed_roots_including_symlinks(root: pytest.Pytester, tmp_path_factory: pytest.TempPathFactory) -> None:
    outside = tmp_path_factory.mktemp("outside")
    (outside / "secret.txt").write_text("OUTSIDE-CONTENT")
    fixture = root.path / "fixtures" / "ws"
    _write(fixture / "inside.txt", "INSIDE")
    # a fixture cannot carry an escaping symlink (see the next test), so trusted extension
    # code plants one in the workspace before the model runs
    _write(root.path / "ext" / "link.mjs",
           "import fs from 'node:fs';\n"
           f"export default function (pi) {{ pi.on('session_start', async () => {{ fs.symlinkSync({json.dumps(str(outside))}, 'link'); }}); }}\n")
    calls = [
        {"name": "read", "arguments": {"path": str(outside / "secret.txt")}},
        {"name": "read", "arguments": {"path": "link/secret.txt"}},
        {"name": "read", "arguments": {"path": "../../../../../../../../etc/hostname"}},
        {"name": "write", "arguments": {"path": str(outside / "written.txt"), "content": "x"}},
        {"name": "write", "arguments": {"path": "link/written.txt", "content": "x"}},
        {"name": "edit", "arguments": {"path": "{{skill:target.location}}", "edits": [{"oldText": "Body", "newText": "Hacked"}]}},
        {"name": "read", "arguments": {"path": "inside.txt"}},
        {"name": "read", "arguments": {"path": "{{skill:target.location}}"}},
        {"name": "write", "arguments": {"path": "out.txt", "content": "fine"}},
    ]
    group = _group("guarded", prompts=["Go."], tools=["read", "write", "edit"], fixture="fixtures/ws",
                   baseline=_variant(["skills/target"], 0), candidate=_variant(["skills/target"], 0),
                   runtime={"host": "pi", "session": False, "extensions": [{"entry": "ext/link.mjs", "resources": ["ext"]}],
                            "environment": {"literal": {}, "inherit": []}},
                   expectations=[{"id": "no-read-outside", "kind": "tool-call", "variant": "candidate", "tool": "read",
                                  "argumentContains": ["secret"], "expect": "failed"}])
    result, gdir = _run(root, group, _script([{"tool_calls": [c] } for c in calls] + [{"text": "done"}]), "--skill-eval-variant", "candidate")
    result.assert_outcomes(passed=1)
    assert not (outside / "written.txt").exists()
    assert "OUTSIDE-CONTENT" not in (gdir / "candidate" / "events.jsonl").read_text()
    tool_calls = _transcript(gdir, "candidate")[0]["tool_calls"]
    assert [c["blocked"] for c in tool_calls] == [True] * 6 + [False] * 3
    assert all(c["result_text"].startswith("skill-eval guard blocked") for c in tool_calls[:6])
    assert (gdir / "candidate" / "workspace" / "out.txt").read_text() == "fine"
    assert _run_json(gdir, "candidate")["state"] == "complete"
    assert _run_json(gdir, "baseline")["state"] == "not-selected"


def test_fixture_with_an_escaping_symlink_is_invalid(root: pytest.Pytester, tmp_path_factory: pytest.TempPathFactory) -> None:
    outside = tmp_path_factory.mktemp("outside")
    fixture = root.path / "fixtures" / "ws"
    fixture.mkdir(parents=True)
    (fixture / "link").symlink_to(outside, target_is_directory=True)
    group = _group("bad-fixture", prompts=["Go."], tools=["read"], fixture="fixtures/ws",
                   baseline=_variant(["skills/target"], 0), candidate=_variant(["skills/target"], 0))
    result, gdir = _run(root, group, _script([{"text": "ok"}]))
    result.assert_outcomes(errors=1)
    assert json.loads((gdir / "group.json").read_text())["state"] == "invalid"
    for variant in ("baseline", "candidate"):
        assert _run_json(gdir, variant)["reason"] == "fixture 'fixtures/ws': fixtures/ws: link is a symlink that leaves the snapshot"


def test_resource_changed_during_the_run_makes_the_variant_invalid(root: pytest.Pytester) -> None:
    # the kernel refuses the tampering write (tests/isolation/test_confinement_attacks.py); the
    # fingerprint check is the line behind it, proven here with the confinement switched off
    _write(root.path / "ext" / "tamper.mjs",
           "import fs from 'node:fs';\nimport path from 'node:path';\n"
           "export default function (pi) { pi.on('before_agent_start', async (event) => {\n"
           "  for (const s of event.systemPromptOptions.skills) fs.appendFileSync(s.filePath, '\\nTAMPERED');\n"
           "}); }\n")
    group = _group("tamper", prompts=["Go."], tools=["read"], type_="description",
                   baseline=_variant([], None), candidate=_variant(["skills/target"], 0),
                   runtime={"host": "pi", "session": False, "extensions": [{"entry": "ext/tamper.mjs", "resources": ["ext"]}],
                            "environment": {"literal": {}, "inherit": []}})
    result, gdir = _run(root, group, _script([{"text": "ok"}]), "--skill-eval-confinement", "off")
    result.assert_outcomes(errors=1)
    run = _run_json(gdir, "candidate")
    assert run["state"] == "invalid"
    assert run["reason"].startswith("declared resources changed during the run: ")
    assert "skills/0/target" in run["reason"]
    assert "TAMPERED" not in (root.path / "skills" / "target" / "SKILL.md").read_text()


def test_inherited_secret_never_lands_in_evidence(root: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    secret = "s3cr3t-value-that-must-not-leak-4711"
    monkeypatch.setenv("EVAL_TEST_SECRET", secret)
    _write(root.path / "ext" / "leak.mjs",
           "import fs from 'node:fs';\n"
           "export default function (pi) { pi.on('before_agent_start', async (event, ctx) => {\n"
           "  console.error('leaking ' + process.env.EVAL_TEST_SECRET);\n"
           "  fs.writeFileSync('leak.txt', process.env.EVAL_TEST_SECRET);\n"
           "}); }\n")
    group = _group("secret", prompts=["Go."], tools=["read"], type_="description",
                   baseline=_variant([], None), candidate=_variant(["skills/target"], 0),
                   runtime={"host": "pi", "session": False, "extensions": [{"entry": "ext/leak.mjs", "resources": ["ext"]}],
                            "environment": {"literal": {"PROBE_MODE": "on"}, "inherit": ["EVAL_TEST_SECRET"]}})
    result, gdir = _run(root, group, _script([{"tool_calls": [{"name": "read", "arguments": {"path": "leak.txt"}}]}, {"text": "ok"}]))
    result.assert_outcomes(passed=1)
    evidence_root = root.path / ".skill-eval"
    leaks = [p for p in evidence_root.rglob("*") if p.is_file() and secret.encode() in p.read_bytes()]
    assert leaks == []
    assert "leaking <redacted>" in (gdir / "candidate" / "stderr.txt").read_text()
    env = _run_json(gdir, "candidate")["env"]
    assert env["PROBE_MODE"] == "on" and env["EVAL_TEST_SECRET"] == "<inherited, not recorded>"
    assert secret not in result.stdout.str() + result.stderr.str()


def test_missing_inherited_variable_makes_the_variant_invalid(root: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("EVAL_TEST_UNSET", raising=False)
    group = _group("missing-env", prompts=["Go."], tools=["read"], type_="description",
                   baseline=_variant([], None), candidate=_variant(["skills/target"], 0),
                   runtime={"host": "pi", "session": False, "extensions": [],
                            "environment": {"literal": {}, "inherit": ["EVAL_TEST_UNSET"]}})
    result, gdir = _run(root, group, _script([{"text": "ok"}]))
    result.assert_outcomes(errors=1)
    assert _run_json(gdir, "baseline")["reason"] == "inherited environment variable(s) not set: EVAL_TEST_UNSET"


def test_git_ref_variant_sees_the_committed_skill_not_the_working_tree(root: pytest.Pytester) -> None:
    def git(*args: str) -> str:
        return subprocess.run(["git", *args], cwd=root.path, check=True, capture_output=True, text=True).stdout.strip()

    git("init", "-q")
    git("-c", "user.email=t@example.com", "-c", "user.name=t", "add", "skills")
    git("-c", "user.email=t@example.com", "-c", "user.name=t", "commit", "-qm", "skills")
    git("tag", "before-change")
    commit = git("rev-parse", "HEAD")
    _write(root.path / "skills" / "target" / "SKILL.md", SKILL.format(name="target", description="Changed in the working tree."))
    group = _group("git-ref", prompts=["Go."], tools=["read"], type_="description",
                   baseline=_variant(["skills/target"], 0, source={"kind": "git", "ref": "before-change"}),
                   candidate=_variant(["skills/target"], 0))
    result, gdir = _run(root, group, _script([{"text": "ok"}]))
    result.assert_outcomes(passed=1)
    baseline, candidate = _run_json(gdir, "baseline"), _run_json(gdir, "candidate")
    assert baseline["source"] == {"kind": "git", "ref": "before-change", "commit": commit, "root": str(root.path)}
    assert [s["description"] for s in baseline["registered_skills"]["prompt"]] == ["Target skill."]
    assert [s["description"] for s in candidate["registered_skills"]["prompt"]] == ["Changed in the working tree."]


def test_description_revision_that_changes_the_body_is_invalid(root: pytest.Pytester) -> None:
    _write(root.path / "skills-old" / "target" / "SKILL.md", SKILL.format(name="target", description="Old.") + "extra body line\n")
    group = _group("revision", prompts=["Go."], tools=["read"], type_="description",
                   baseline=_variant(["skills-old/target"], 0), candidate=_variant(["skills/target"], 0))
    result, gdir = _run(root, group, _script([{"text": "ok"}]))
    result.assert_outcomes(errors=1)
    assert "(SKILL.md body differs)" in _run_json(gdir, "candidate")["reason"]


def test_body_target_colliding_with_another_skill_name_is_invalid(root: pytest.Pytester) -> None:
    # pi keeps the first skill of a name; the target (second) would resolve to the other file
    _write(root.path / "skills" / "impostor" / "SKILL.md", SKILL.format(name="target", description="Impostor."))
    group = _group("collision", prompts=["Go."], tools=["read"], baseline=_variant([], None),
                   candidate=_variant(["skills/impostor", "skills/target"], 1))
    result, gdir = _run(root, group, _script([{"text": "ok"}]))
    result.assert_outcomes(errors=1)
    run = _run_json(gdir, "candidate")
    assert run["state"] == "invalid"
    assert run["reason"].startswith("the host registered no skill command for the target ")
    assert "skills/1/target/SKILL.md" in run["reason"]
    assert _run_json(gdir, "baseline")["state"] == "complete"


def test_session_directory_is_isolated_and_kept_in_evidence(root: pytest.Pytester) -> None:
    group = _group("session", prompts=["One.", "Two."], tools=["read"], baseline=_variant([], None),
                   candidate=_variant(["skills/target"], 0),
                   runtime={"host": "pi", "session": True, "extensions": [], "environment": {"literal": {}, "inherit": []}})
    result, gdir = _run(root, group, _script([{"text": "one"}], [{"text": "two"}]))
    result.assert_outcomes(passed=1)
    for variant in ("baseline", "candidate"):
        (session_file,) = (gdir / variant / "session").glob("*.jsonl")
        entries = [json.loads(line) for line in session_file.read_text().splitlines()]
        assert entries[0]["type"] == "session"
        assert "--session-dir" in _run_json(gdir, variant)["argv"]


def test_user_models_and_auth_file_reach_the_host_but_never_the_evidence(root: pytest.Pytester) -> None:
    from pytest_skill_eval.scripted.server import ScriptedModelServer

    _write(root.path / "local-script.json", json.dumps(_script([{"text": "answered by a custom provider"}])))
    auth_secret = "auth-file-secret-value-0815"
    _write(root.path / "auth.json", json.dumps({"local": {"type": "api_key", "key": auth_secret}}))
    with ScriptedModelServer() as server:
        server.register("local-model", root.path / "local-script.json")
        provider = server.provider_config(["local-model"])
        provider.pop("apiKey", None)  # the key must come from the auth file
        _write(root.path / "my-models.json", json.dumps({"providers": {"local": provider}}))
        group = _group("custom", prompts=["Go."], tools=["read"], type_="description",
                       baseline=_variant([], None), candidate=_variant(["skills/target"], 0),
                       expectations=[{"id": "answer", "kind": "response-text", "variant": "candidate", "expect": "equals",
                                      "value": "answered by a custom provider"}])
        group["model"] = {"model": "local/local-model"}
        _write(root.path / "groups" / "custom.json", json.dumps(group))
        result = root.runpytest_subprocess("--skill-eval", "groups/custom.json", "-p", "no:cacheprovider",
                                           "--skill-eval-models", "my-models.json", "--skill-eval-auth", "auth.json")
        result.assert_outcomes(passed=1)
        assert len(server.requests()) == 2
    leaks = [p for p in (root.path / ".skill-eval").rglob("*") if p.is_file() and auth_secret.encode() in p.read_bytes()]
    assert leaks == []


def test_missing_piflow_host_is_an_infrastructure_failure_naming_the_command(root: pytest.Pytester,
                                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SKILL_EVAL_PIFLOW", raising=False)
    group = _group("piflow", prompts=["Go."], tools=["read"], type_="description",
                   baseline=_variant([], None), candidate=_variant(["skills/target"], 0),
                   runtime={"host": "piflow", "session": False, "extensions": [], "environment": {"literal": {}, "inherit": []}})
    result, gdir = _run(root, group, _script([{"text": "ok"}]))
    result.assert_outcomes(errors=1)
    run = _run_json(gdir, "candidate")
    assert run["state"] == "infrastructure-failed"
    assert run["reason"].startswith("host 'piflow' is not installed: looked for the command `piflow` on PATH")
    assert run["runtime"]["host"] == "piflow"


def test_piflow_host_maps_to_the_configured_command(root: pytest.Pytester, monkeypatch: pytest.MonkeyPatch,
                                                    pi_host: Any) -> None:
    # any pi-compatible CLI can stand behind the piflow name; here the managed pi itself
    monkeypatch.setenv("SKILL_EVAL_PIFLOW", str(pi_host.cli.parents[2]))
    group = _group("piflow-ok", prompts=["Go."], tools=["read"], type_="description",
                   baseline=_variant([], None), candidate=_variant(["skills/target"], 0),
                   runtime={"host": "piflow", "session": False, "extensions": [], "environment": {"literal": {}, "inherit": []}})
    result, gdir = _run(root, group, _script([{"text": "ok"}]))
    result.assert_outcomes(passed=1)
    run = _run_json(gdir, "candidate")
    assert run["runtime"]["host"] == "piflow" and run["host"]["managed"] is False
