"""``--skill-eval-confinement`` and ``--skill-eval-allow-read/-net``: checked once, from the
user's command line, ini or (tightening only) environment (issue 27)."""

from __future__ import annotations

import json
import socket

import pytest

GROUP = {"schema_version": 1, "kind": "group", "id": "g", "type": "body", "input": {"prompt": "Go."},
         "fixture": None, "tools": ["read"], "review_questions": [], "expectations": [],
         "variants": {"baseline": {"source": {"kind": "working-tree"}, "skills": [], "target": None, "context": []},
                      "candidate": {"source": {"kind": "working-tree"}, "skills": [], "target": None, "context": []}},
         "model": {"model": "scripted/g"}}


def _project(pytester: pytest.Pytester, extension: str | None = None) -> None:
    group = dict(GROUP)
    if extension is not None:
        (pytester.path / "ext").mkdir()
        (pytester.path / "ext" / "probe.mjs").write_text(extension)
        group["runtime"] = {"host": "pi", "session": False, "extensions": [{"entry": "ext/probe.mjs", "resources": ["ext"]}],
                            "environment": {"literal": {}, "inherit": []}}
    (pytester.path / "groups" / "scripts").mkdir(parents=True)
    (pytester.path / "groups" / "g.json").write_text(json.dumps(group))
    (pytester.path / "groups" / "scripts" / "g.json").write_text(
        json.dumps({"schema": "skill-eval-script/1", "turns": [{"steps": [{"text": "done"}]}]}))


@pytest.mark.parametrize(("args", "ini", "env", "message"), [
    (["--skill-eval-confinement", "sometimes"], "", None, "invalid choice: 'sometimes'"),
    ([], "skill_eval_confinement = sometimes", None, "skill_eval_confinement expects one of auto, required, off, found 'sometimes'"),
    ([], "", "off", "SKILL_EVAL_CONFINEMENT expects auto or required, found 'off'"),
    (["--skill-eval-allow-net", "example.com"], "", None, "--skill-eval-allow-net expected HOST:PORT"),
    (["--skill-eval-allow-net", "h:70000"], "", None, "--skill-eval-allow-net expected HOST:PORT"),
    (["--skill-eval-allow-read", "no/such/dir"], "", None, "--skill-eval-allow-read expects an existing path, found 'no/such/dir'"),
])
def test_a_bad_confinement_setting_is_a_usage_error(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch,
                                                    args: list[str], ini: str, env: str | None, message: str) -> None:
    _project(pytester)
    if ini:
        pytester.makeini(f"[pytest]\n{ini}\n")
    if env is not None:
        monkeypatch.setenv("SKILL_EVAL_CONFINEMENT", env)
    result = pytester.runpytest_subprocess("--skill-eval", "groups/g.json", "-p", "no:cacheprovider", *args)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert message in result.stderr.str()
    assert not (pytester.path / ".skill-eval" / "runs").exists() or not list((pytester.path / ".skill-eval" / "runs").iterdir())


@pytest.mark.pi
def test_the_user_widens_access_from_the_command_line_only(pytester: pytest.Pytester, pi_host: object,
                                                           tmp_path_factory: pytest.TempPathFactory) -> None:
    granted = tmp_path_factory.mktemp("granted")
    (granted / "data.txt").write_text("GRANTED")
    denied = tmp_path_factory.mktemp("denied")
    (denied / "data.txt").write_text("DENIED")
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(4)
    port = listener.getsockname()[1]
    probe = ("import fs from 'node:fs';\nimport net from 'node:net';\n"
             "const attempt = (fn) => { try { return fn(); } catch (e) { return e.code; } };\n"
             "const connect = (port) => new Promise((done) => { const s = net.connect(port, '127.0.0.1');\n"
             "  s.on('connect', () => { s.destroy(); done('ok'); }); s.on('error', (e) => done(e.code)); });\n"
             "export default function (pi) { pi.on('session_start', async () => {\n"
             f"  fs.writeFileSync('probe.json', JSON.stringify({{granted: attempt(() => fs.readFileSync({json.dumps(str(granted / 'data.txt'))}, 'utf8')),\n"
             f"    denied: attempt(() => fs.readFileSync({json.dumps(str(denied / 'data.txt'))}, 'utf8')),\n"
             f"    port: await connect({port})}}));\n"
             "}); }\n")
    _project(pytester, probe)
    try:
        result = pytester.runpytest_subprocess("--skill-eval", "groups/g.json", "-p", "no:cacheprovider",
                                               "--skill-eval-confinement", "required",
                                               f"--skill-eval-allow-read={granted}",
                                               "--skill-eval-allow-net", f"localhost:{port}")
    finally:
        listener.close()
    result.assert_outcomes(passed=1)
    (res,) = (p for p in (pytester.path / ".skill-eval" / "runs").iterdir() if p.is_dir())
    vdir = next((res / "groups").iterdir()) / "candidate"
    assert json.loads((vdir / "workspace" / "probe.json").read_text()) == {"granted": "GRANTED", "denied": "EACCES", "port": "ok"}
    rules = json.loads((vdir / "run.json").read_text())["confinement"]["rules"]
    assert {"role": "user-allow-read", "access": "read", "path": str(granted.resolve())} in rules["paths"]
    assert {"role": "user-allow-net", "host": "localhost", "port": port, "via": "bridge"} in rules["connect"]
