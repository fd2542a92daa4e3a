"""The network namespace with the real pi host (issue 27): only the model's endpoint is reachable.

A declared extension bundle (trusted code, as the spec allows) and a child it starts try
another loopback port, a non-loopback address, UDP, DNS and an HTTP request elsewhere: each
is refused, nothing reaches the listeners on this side, the bundle writes what it saw into
the workspace (ordinary evidence) and the run completes. pi's own provider client reaches a
provider named by host through the relay's CONNECT proxy, the way a real provider is reached.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import socket
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from pytest_skill_eval.engine.confine import netns_unavailable
from pytest_skill_eval.scripted.server import ScriptedModelServer

from .test_confinement_network import Listener

pytestmark = [pytest.mark.pi, pytest.mark.skipif(bool(netns_unavailable()) and not os.environ.get("CI"),
                                                  reason=f"no network namespace here: {netns_unavailable()}")]

PROBE = """import fs from 'node:fs';
import net from 'node:net';
import dgram from 'node:dgram';
import dns from 'node:dns/promises';
const P = __PATHS__;
// the model's own port, which Landlock's port rule allows: only the namespace refuses it elsewhere
const models = JSON.parse(fs.readFileSync(process.env.PI_CODING_AGENT_DIR + '/models.json', 'utf8'));
const modelPort = Number(new URL(models.providers.scripted.baseUrl).port);
const connect = (port, host) => new Promise((done) => {
  const s = net.connect({ port, host, timeout: 3000 });
  s.on('connect', () => { s.destroy(); done('ok'); });
  s.on('timeout', () => { s.destroy(); done('timeout'); });
  s.on('error', (e) => done(e.code || String(e)));
});
const udp = (port, host) => new Promise((done) => {
  const s = dgram.createSocket('udp4');
  s.send('x', port, host, (e) => { s.close(); done(e ? e.code : 'sent'); });
});
const lookup = (name) => dns.lookup(name).then(() => 'resolved', (e) => 'failed');
const get = (url) => fetch(url, { signal: AbortSignal.timeout(5000) }).then((r) => `status ${r.status}`,
  (e) => 'failed');
export const probe = async () => ({
  'other-port': await connect(P.otherPort, '127.0.0.1'),
  'non-loopback': await connect(modelPort, '192.0.2.1'),
  'udp-loopback': await udp(P.udpPort, '127.0.0.1'),
  'udp-remote': await udp(53, '192.0.2.1'),
  'dns': await lookup('example.com'),
  'fetch-other-port': await get(`http://127.0.0.1:${P.otherPort}/`),
  'fetch-remote': await get('https://example.com/'),
});
"""
EXTENSION = """import fs from 'node:fs';
import cp from 'node:child_process';
import { probe } from './probe.mjs';
export default function (pi) {
  pi.on('before_agent_start', async () => {
    const report = await probe();
    const child = cp.spawnSync(process.execPath, ['--input-type=module', '-e',
      `import { probe } from ${JSON.stringify(new URL('./probe.mjs', import.meta.url).href)};
       process.stdout.write(JSON.stringify(await probe()));`], { encoding: 'utf8', timeout: 60000 });
    report.child = child.stdout ? JSON.parse(child.stdout) : { error: String(child.error || child.stderr) };
    fs.writeFileSync('network-report.json', JSON.stringify(report));
  });
}
"""
REFUSED = {"other-port": "EACCES", "non-loopback": "ENETUNREACH", "udp-loopback": "sent",
           "udp-remote": "ENETUNREACH", "dns": "failed", "fetch-other-port": "failed", "fetch-remote": "failed"}


def _group(gid: str, model: str, runtime: dict[str, Any]) -> dict[str, Any]:
    variant: dict[str, Any] = {"source": {"kind": "working-tree"}, "skills": [], "target": None, "context": []}
    return {"schema_version": 1, "kind": "group", "id": gid, "type": "body", "input": {"prompt": "Go."},
            "fixture": None, "tools": ["read"], "variants": {"baseline": variant, "candidate": variant},
            "review_questions": [], "expectations": [], "model": {"model": model},
            "runtime": {"host": "pi", "session": False, "extensions": [], "environment": {"literal": {}, "inherit": []},
                        **runtime}}


def _write(path: Path, value: Any) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(value if isinstance(value, str) else json.dumps(value), encoding="utf-8")
    return path


def _variant_dirs(root: Path) -> list[Path]:
    (res,) = (p for p in (root / ".skill-eval" / "runs").iterdir() if p.is_dir())
    gdir = next((res / "groups").iterdir())
    return [gdir / "baseline", gdir / "candidate"]


def _port(url: str) -> int:
    port = urlsplit(url).port
    assert port is not None
    return port


def _pipe(src: socket.socket, dst: socket.socket) -> None:
    try:
        while data := src.recv(65536):
            dst.sendall(data)
        dst.shutdown(socket.SHUT_WR)
    except OSError:
        pass


@contextlib.contextmanager
def _by_name(port: int) -> Iterator[tuple[str, int]]:
    """This machine by a host name other than ``localhost``, and a port there that leads to
    127.0.0.1:*port*: the name itself where it resolves to loopback, else a forwarder on the
    address it resolves to."""
    name = socket.gethostname()
    try:
        address = socket.gethostbyname(name)
    except OSError:
        pytest.skip(f"this machine's name {name!r} does not resolve")
    if name == "localhost" or address.startswith("127."):
        yield name, port
        return
    listener = socket.create_server((address, 0))

    def forward() -> None:
        while True:
            try:
                conn, _ = listener.accept()
            except OSError:
                return
            upstream = socket.create_connection(("127.0.0.1", port))
            for a, b in ((conn, upstream), (upstream, conn)):
                threading.Thread(target=_pipe, args=(a, b), daemon=True).start()

    threading.Thread(target=forward, daemon=True).start()
    try:
        yield name, listener.getsockname()[1]
    finally:
        listener.close()


def test_an_extension_and_its_child_reach_only_the_model(pytester: pytest.Pytester, pi_host: object) -> None:
    root = pytester.path
    other = Listener()
    try:
        group = _group("net", "scripted/net", {"extensions": [{"entry": "ext/net.mjs", "resources": ["ext"]}]})
        _write(root / "groups" / "net.json", group)
        _write(root / "groups" / "scripts" / "net.json",
               {"schema": "skill-eval-script/1", "turns": [{"steps": [{"text": "done"}]}]})
        paths = {"otherPort": other.port, "udpPort": other.udp_port}
        _write(root / "ext" / "probe.mjs", PROBE.replace("__PATHS__", json.dumps(paths)))
        _write(root / "ext" / "net.mjs", EXTENSION)
        result = pytester.runpytest_subprocess("--skill-eval", "groups/net.json", "-p", "no:cacheprovider",
                                               "--skill-eval-confinement", "required")
        result.assert_outcomes(passed=1)
        visits, datagrams = other.visits, other.datagrams()
    finally:
        other.close()
    assert visits == 0 and datagrams == 0, "nothing reached the other port, by TCP or UDP"
    for vdir in _variant_dirs(root):
        run = json.loads((vdir / "run.json").read_text())
        assert run["state"] == "complete", "a refused connection is evidence, not a crash"
        confinement = run["confinement"]
        assert confinement["network"]["mechanism"] == "namespace"
        (endpoint,) = confinement["rules"]["connect"]
        assert endpoint == {"role": "model", "host": "127.0.0.1", "port": endpoint["port"], "via": "bridge"}
        report = json.loads((vdir / "workspace" / "network-report.json").read_text())
        assert report == {**REFUSED, "child": REFUSED}


def test_a_provider_named_by_host_is_reached_through_the_connect_proxy(
        pytester: pytest.Pytester, pi_host: object, monkeypatch: pytest.MonkeyPatch) -> None:
    """pi's Anthropic client, its undici dispatcher honouring the proxy variables the wrapper
    sets: this machine's name is a host name to the policy (not a loopback endpoint), so it
    goes through the relay's CONNECT proxy, which resolves it on the evaluator's side, as it
    would a provider's host."""
    root = pytester.path
    key = "sk-ant-api03-skill-eval-" + secrets.token_hex(8)
    monkeypatch.setenv("ANTHROPIC_API_KEY", key)
    with ScriptedModelServer() as server, _by_name(_port(server.base_url)) as (name, port):
        _write(root / "script.json", {"schema": "skill-eval-script/1", "turns": [{"steps": [{"text": "done"}]}]})
        server.register("claude-sonnet-4-5", root / "script.json")
        base = server.base_url_for("anthropic-messages").replace(f"127.0.0.1:{_port(server.base_url)}", f"{name}:{port}")
        _write(root / "models.json", {"providers": {"anthropic": {"baseUrl": base}}})
        group = _group("byhost", "anthropic/claude-sonnet-4-5",
                       {"environment": {"literal": {}, "inherit": ["ANTHROPIC_API_KEY"]}})
        _write(root / "groups" / "byhost.json", group)
        result = pytester.runpytest_subprocess("--skill-eval", "groups/byhost.json", "-p", "no:cacheprovider",
                                               "--skill-eval-confinement", "required", "--skill-eval-models=models.json")
        result.assert_outcomes(passed=1)
        assert len(server.requests()) == 2, "each variant's request reached the server through the proxy"
    for vdir in _variant_dirs(root):
        run = json.loads((vdir / "run.json").read_text())
        assert run["state"] == "complete", run.get("reason")
        assert run["confinement"]["rules"]["connect"] == [
            {"role": "model", "host": name, "port": port, "via": "connect-proxy"}]

