"""The network half of issue 27: pi's only way out is the relay to the allowed endpoints.

Pure parts first (the policy's bridges and proxy pairs, the CONNECT check, the modes),
then the wrapper against the real kernel with a small Python program in pi's place: the
bridged endpoint answers; another loopback port, a non-loopback address, UDP and DNS never
leave the namespace, for the program and for a child it starts; the CONNECT proxy relays
only to the pairs it allows; the relay dies with the program, also when it is killed.
Skipped only where this machine cannot make the namespace, and never when ``CI`` is set.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest

from pytest_skill_eval.engine.confine import confine_variant, netns_unavailable, warn_once
from pytest_skill_eval.errors import HostError
from pytest_skill_eval.host import landlock
from pytest_skill_eval.host.confinement import Endpoint, Settings, VariantRoots, derive, model_endpoints
from pytest_skill_eval.host.netns import connect_target, parse_plan
from pytest_skill_eval.host.process import kill_process_tree

WRAPPER = str(Path(landlock.__file__).resolve())
PYTHON = os.path.realpath(sys.executable)
ROOTS = VariantRoots(workspace="/s/w", skills=(), contexts=(), bundles=None, agent_dir="/s/a",
                     host_extensions="/s/h", temp="/s/t", session=None, host_install=("/cache/pi",))
LOCAL = Endpoint("model", "127.0.0.1", 4711)
REMOTE = Endpoint("model", "LLM.internal", 8443)
BUILTIN = Endpoint("model", "anthropic provider", 443, exact=False)

needs_netns = pytest.mark.skipif(bool(netns_unavailable()) and not os.environ.get("CI"),
                                 reason=f"no network namespace here: {netns_unavailable()}")


# -- the policy ------------------------------------------------------------------


def test_loopback_endpoints_are_bridged_and_the_rest_go_through_the_proxy() -> None:
    policy = derive(ROOTS, [LOCAL, REMOTE, BUILTIN, Endpoint("model", "localhost", 4711)],
                    allow_net=[("::1", 5432), ("db.internal", 5432)])
    rules = policy.rules(6, "namespace")
    assert rules["netns"] is True and rules["connect"] == []  # the wrapper fills in the relay's ports
    assert rules["bridges"] == [(4711, "127.0.0.1", 4711), (5432, "::1", 5432)]
    assert rules["proxy"] == [("*", 443), ("db.internal", 5432), ("llm.internal", 8443)]
    assert landlock.parse_rules(landlock.render_rules(rules)) == {**rules, "bridges": [
        (4711, "127.0.0.1", 4711), (5432, "::1", 5432)], "proxy": rules["proxy"]}
    record = policy.to_json({}, "namespace")["connect"]
    assert record[0] == {"role": "model", "host": "127.0.0.1", "port": 4711, "via": "bridge"}
    assert record[2] == {"role": "model", "host": "any host (anthropic provider)", "port": 443, "via": "connect-proxy"}
    # the Landlock fallback keeps its port rules
    assert derive(ROOTS, [LOCAL, REMOTE]).rules(6)["connect"] == [4711, 8443]


def test_a_built_in_provider_is_any_host_on_443_and_says_so() -> None:
    assert model_endpoints("anthropic", {}) == (BUILTIN,)
    assert model_endpoints(None, {})[0].exact is False


def test_a_host_with_white_space_never_reaches_the_rules_file() -> None:
    with pytest.raises(ValueError, match="white space"):
        landlock.render_rules({"handled_fs": 1, "netns": True, "proxy": [("a b", 443)]})


@pytest.mark.parametrize(("head", "expected"), [
    (b"CONNECT api.example:443 HTTP/1.1\r\nHost: api.example:443", ("api.example", 443, False)),
    (b"CONNECT API.Example.:443 HTTP/1.1", ("api.example", 443, False)),
    (b"CONNECT [::1]:8443 HTTP/1.1", ("::1", 8443, False)),
    (b"CONNECT anywhere.example:443 HTTP/1.0", ("anywhere.example", 443, True)),
    (b"CONNECT api.example:444 HTTP/1.1", "api.example:444 is not an allowed endpoint"),
    (b"CONNECT evil.example:8443 HTTP/1.1", "evil.example:8443 is not an allowed endpoint"),
    (b"GET http://api.example/ HTTP/1.1", "not a CONNECT request"),
    (b"CONNECT api.example HTTP/1.1", "expected host:port"),
    (b"CONNECT api.example:0 HTTP/1.1", "expected host:port"),
    (b"\xff\xfe", "not a CONNECT request"),
])
def test_the_proxy_grants_only_its_pairs(head: bytes, expected: object) -> None:
    allowed = {("api.example", 443), ("::1", 8443), ("*", 443)}
    got = connect_target(head, allowed)
    if isinstance(expected, str):
        assert isinstance(got, str) and got.startswith(expected)
    else:
        assert got == expected
    assert isinstance(connect_target(b"CONNECT anywhere.example:443 HTTP/1.1", {("api.example", 443)}), str)


def test_relay_plans_parse_and_refuse_the_unknown() -> None:
    assert parse_plan("bridge ::1 4711") == ("bridge", ("::1", 4711))
    assert parse_plan("proxy a.example:443 *:443") == ("proxy", {("a.example", 443), ("*", 443)})
    with pytest.raises(ValueError):
        parse_plan("forward everything")


# -- the modes -------------------------------------------------------------------


def test_required_refuses_when_the_namespace_cannot_be_made(tmp_path: Path) -> None:
    with pytest.raises(HostError, match="network namespace \\(unshare: Operation not permitted\\)"):
        confine_variant(Settings("required"), ROOTS, LOCAL, tmp_path, abi=7, netns_gap="unshare: Operation not permitted")


def test_auto_falls_back_to_port_rules_with_one_warning_and_says_so(tmp_path: Path) -> None:
    warn_once.cache_clear()
    with pytest.warns(RuntimeWarning, match="partial.*network namespace \\(no userns\\)") as caught:
        first = confine_variant(Settings("auto"), ROOTS, [LOCAL, REMOTE], tmp_path / "b", abi=7, netns_gap="no userns")
        confine_variant(Settings("auto"), ROOTS, [LOCAL, REMOTE], tmp_path / "c", abi=7, netns_gap="no userns")
    assert len([w for w in caught if "network namespace" in str(w.message)]) == 1
    assert first.record["network"]["mechanism"] == "landlock-ports"
    assert "any host" in first.record["network"]["detail"]
    assert "via" not in first.record["rules"]["connect"][0]
    rules = landlock.parse_rules((tmp_path / "b" / "host-extensions" / "confinement.rules").read_text())
    assert "netns" not in rules and rules["connect"] == [4711, 8443]


def test_with_the_namespace_even_an_old_landlock_confines_the_network(tmp_path: Path) -> None:
    warn_once.cache_clear()
    with pytest.warns(RuntimeWarning, match="partial.*signal and abstract-socket scoping"):
        confined = confine_variant(Settings("required"), ROOTS, [LOCAL, REMOTE], tmp_path, abi=3, netns_gap="")
    assert confined.record["network"]["mechanism"] == "namespace"
    assert not [g for g in confined.record["not_enforced"] if g.startswith("network")]
    assert [c["via"] for c in confined.record["rules"]["connect"]] == ["bridge", "connect-proxy"]
    rules = landlock.parse_rules((tmp_path / "host-extensions" / "confinement.rules").read_text())
    assert rules["netns"] and rules["bridges"] == [(4711, "127.0.0.1", 4711)] and rules["proxy"] == [("llm.internal", 8443)]


# -- the real kernel -------------------------------------------------------------


class Listener:
    """A TCP echo server and a UDP socket on this side's 127.0.0.1 that note every visitor."""

    def __init__(self) -> None:
        self.tcp = socket.create_server(("127.0.0.1", 0))
        self.udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.udp.bind(("127.0.0.1", 0))
        self.udp.settimeout(0.3)
        self.port, self.udp_port = self.tcp.getsockname()[1], self.udp.getsockname()[1]
        self.visits = 0
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.tcp.accept()
            except OSError:
                return
            self.visits += 1
            with conn:
                conn.sendall(b"echo:" + conn.recv(64))

    def datagrams(self) -> int:
        try:
            self.udp.recv(64)
        except TimeoutError:
            return 0
        return 1

    def close(self) -> None:
        self.tcp.close()
        self.udp.close()


@pytest.fixture
def model() -> Iterator[Listener]:
    listener = Listener()
    yield listener
    listener.close()


@pytest.fixture
def other() -> Iterator[Listener]:
    listener = Listener()
    yield listener
    listener.close()


PROBE = r"""
import json, os, socket, subprocess, sys
MODEL, OTHER, UDP, PROXY_TARGET = (int(a) for a in sys.argv[1:5])
def tcp(host, port, family=socket.AF_INET):
    try:
        with socket.create_connection((host, port), timeout=3) as s:
            s.sendall(b'hi'); return s.recv(64).decode()
    except OSError as e:
        return e.strerror
def udp(host, port):
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            s.sendto(b'x', (host, port)); return 'sent'
    except OSError as e:
        return e.strerror
def dns(name):
    try:
        socket.getaddrinfo(name, 443); return 'resolved'
    except OSError as e:
        return 'failed'
def proxy(target):
    p = int(os.environ['HTTPS_PROXY'].rsplit(':', 1)[1])
    with socket.create_connection(('127.0.0.1', p), timeout=3) as s:
        s.sendall(f'CONNECT {target} HTTP/1.1\r\nHost: {target}\r\n\r\n'.encode())
        head = s.recv(4096).decode().split('\r\n')[0]
        if ' 200 ' not in head:
            return head
        s.sendall(b'hi'); return s.recv(64).decode()
out = {
    'model': tcp('127.0.0.1', MODEL), 'model-v6': tcp('::1', MODEL),
    'other-port': tcp('127.0.0.1', OTHER), 'non-loopback': tcp('192.0.2.1', MODEL),
    'udp-loopback': udp('127.0.0.1', UDP), 'udp-remote': udp('192.0.2.1', 53), 'dns': dns('example.com'),
    'proxy-allowed': proxy(f'localhost:{PROXY_TARGET}'), 'proxy-other-port': proxy(f'localhost:{MODEL}'),
    'proxy-other-host': proxy(f'example.com:{PROXY_TARGET}'), 'proxy-wildcard-loopback': proxy(f'127.0.0.1:{OTHER}'),
    'no-proxy': os.environ['NO_PROXY'], 'uid': os.getuid(),
}
if len(sys.argv) == 5:
    child = subprocess.run([sys.executable, '-I', '-S', __file__, *sys.argv[1:], 'child'], capture_output=True, text=True)
    out['child'] = json.loads(child.stdout) if child.stdout else child.stderr[-500:]
    out['relay'] = [int(p) for p in open(f'/proc/self/task/{os.getpid()}/children').read().split()]
print(json.dumps(out))
"""


def _rules(tmp: Path, model: Listener, proxy_port: int, wildcard_port: int = 9) -> Path:
    """A variant's rules with the namespace: the model bridged, ``localhost:proxy_port`` by
    proxy, and any host on *wildcard_port* (as for a built-in provider's 443)."""
    roots = VariantRoots(workspace=str(tmp), skills=(), contexts=(), bundles=None, agent_dir=str(tmp),
                         host_extensions=str(tmp), temp=str(tmp), session=None,
                         host_install=(os.path.realpath(sys.base_prefix), str(tmp)))
    rules = derive(roots, Endpoint("model", "127.0.0.1", model.port)).rules(landlock.abi_version(), "namespace")
    rules["proxy"] = [("localhost", proxy_port), ("*", wildcard_port)]  # a host by name, as a provider's
    rules["paths"].append([landlock.READ_FILE | landlock.READ_DIR, "/proc", False])  # the probe finds the relay
    rules_file = tmp / "confinement.rules"
    rules_file.write_text(landlock.render_rules(rules))
    return rules_file


@needs_netns
def test_only_the_allowed_endpoints_are_reachable_for_pi_and_its_children(tmp_path: Path, model: Listener,
                                                                          other: Listener) -> None:
    target = Listener()
    try:
        probe = tmp_path / "probe.py"
        probe.write_text(PROBE)
        argv = [PYTHON, "-I", "-S", WRAPPER, str(_rules(tmp_path, model, target.port, other.port)), PYTHON, "-I", "-S", str(probe),
                str(model.port), str(other.port), str(other.udp_port), str(target.port)]
        done = subprocess.run(argv, capture_output=True, text=True, timeout=60, start_new_session=True,
                              env={"HTTPS_PROXY": "http://evil.example:3128", "NO_PROXY": "*", "PATH": "/usr/bin"})
        assert done.returncode == 0, done.stderr
        report = json.loads(done.stdout)
        seen_by_target, seen_by_other, udp = target.visits, other.visits, other.datagrams()
    finally:
        target.close()
    expected = {
        "model": "echo:hi", "model-v6": "echo:hi",
        "other-port": "Permission denied",  # Landlock's port rule answers first; the namespace holds behind it
        "non-loopback": "Network is unreachable", "udp-loopback": "sent", "udp-remote": "Network is unreachable",
        "dns": "failed", "proxy-allowed": "echo:hi", "proxy-other-port": "HTTP/1.1 403 Forbidden",
        "proxy-other-host": "HTTP/1.1 403 Forbidden",
        # any host on a port (a built-in provider's 443) means a public one: never this machine
        "proxy-wildcard-loopback": "HTTP/1.1 502 Bad Gateway",
        "no-proxy": "127.0.0.1,localhost,::1", "uid": os.getuid(),
    }
    assert {k: v for k, v in report.items() if k not in ("child", "relay")} == expected
    assert report["child"] == expected  # a child pi starts is in the same namespace
    assert seen_by_other == 0 and udp == 0, "nothing reached the other port, by TCP or UDP"
    assert seen_by_target == 2 and model.visits == 4  # per process: one by the proxy, two by the bridges
    (relay,) = report["relay"]
    _assert_gone(relay)


def _assert_gone(pid: int) -> None:
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        try:
            if psutil.Process(pid).status() == psutil.STATUS_ZOMBIE:
                return
        except psutil.NoSuchProcess:
            return
        time.sleep(0.05)
    pytest.fail(f"the relay {pid} outlived the run: {psutil.Process(pid).status()} {open(f'/proc/{pid}/status').read()[:400]}")


@needs_netns
def test_the_relay_dies_when_the_run_is_killed(tmp_path: Path, model: Listener) -> None:
    code = "import os, time; print(open(f'/proc/self/task/{os.getpid()}/children').read(), flush=True); time.sleep(60)"
    argv = [PYTHON, "-I", "-S", WRAPPER, str(_rules(tmp_path, model, 9)), PYTHON, "-I", "-S", "-c", code]
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, text=True, start_new_session=True)
    try:
        assert proc.stdout is not None
        (relay,) = (int(p) for p in proc.stdout.readline().split())
        assert psutil.Process(relay).status() != psutil.STATUS_ZOMBIE
        kill_process_tree(proc.pid, grace=2)
        proc.wait(5)
        _assert_gone(relay)
    finally:
        proc.kill()
        proc.wait()


@needs_netns
def test_a_namespace_that_cannot_be_made_never_starts_the_program(tmp_path: Path) -> None:
    """A failure before exec is exit 126 and one line, as every other wrapper failure."""
    rules = tmp_path / "confinement.rules"
    # two bridges on one port: the second cannot bind inside the namespace
    rules.write_text(f"handled 1 0 0\npath 1 0 {tmp_path}\nnetns\nbridge 4711 1 127.0.0.1\nbridge 4711 2 127.0.0.1\n")
    done = subprocess.run([PYTHON, "-I", "-S", WRAPPER, str(rules), PYTHON, "-c", "print('ran')"],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == landlock.EXIT_CONFINE_FAILED and "ran" not in done.stdout
    assert done.stderr.startswith(landlock.FAILURE_PREFIX + " network namespace:")


def test_nothing_beside_the_wrapper_shadows_a_standard_module() -> None:
    """The wrapper imports netns with its own directory first on ``sys.path``, for that one
    import: a module there named like a standard one would replace it in the wrapper."""
    beside = {p.stem for p in Path(WRAPPER).parent.glob("*.py")}
    assert not beside & sys.stdlib_module_names
