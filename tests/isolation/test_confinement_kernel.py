"""The Landlock wrapper against the real kernel (issue 27): what it grants holds, nothing else.

Each test runs a small program through ``host/landlock.py`` exactly as the engine starts pi
(``python -I -S landlock.py RULES PROGRAM ...``), with the rules a variant's policy renders,
and looks at what the kernel let it do. Skipped only where the kernel has no Landlock, and
never when ``CI`` is set (CI runs on a kernel that has it).
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from pytest_skill_eval.host import landlock
from pytest_skill_eval.host.confinement import Endpoint, VariantRoots, derive

ABI = landlock.abi_version()
if ABI < 4 and not os.environ.get("CI"):
    pytest.skip(f"this kernel has Landlock ABI {ABI}; the network rules need 4", allow_module_level=True)

WRAPPER = str(Path(landlock.__file__).resolve())
#: the base interpreter itself (its prefix stands in for the pi install): a venv's launcher
#: would read pyvenv.cfg outside the rules
PYTHON = os.path.realpath(sys.executable)


def _roots(tmp: Path) -> VariantRoots:
    for d in ("workspace", "skill", "agent", "host-extensions", "home/tmp"):
        (tmp / d).mkdir(parents=True, exist_ok=True)
    return VariantRoots(workspace=str(tmp / "workspace"), skills=(str(tmp / "skill"),), contexts=(), bundles=None,
                        agent_dir=str(tmp / "agent"), host_extensions=str(tmp / "host-extensions"),
                        temp=str(tmp / "home" / "tmp"), session=None,
                        host_install=(os.path.realpath(sys.base_prefix),))


def _confined(tmp: Path, code: str, port: int = 9, abi: int = ABI) -> subprocess.CompletedProcess[str]:
    rules = derive(_roots(tmp), Endpoint("model", "127.0.0.1", port)).rules(abi)
    # the rules travel in a file, as the engine passes them
    rules_file = tmp / "host-extensions" / "confinement.rules"
    rules_file.write_text(landlock.render_rules(rules))
    return subprocess.run([PYTHON, "-I", "-S", WRAPPER, str(rules_file), PYTHON, "-I", "-S", "-c", code],
                          capture_output=True, text=True, timeout=60, cwd=tmp / "workspace")


PROBE = """
import os, sys, json
def attempt(what, fn):
    try:
        fn(); return 'ok'
    except OSError as e:
        return e.strerror
def read(p): open(p).read()
def write(p): open(p, 'w').write('POISON')
print(json.dumps({k: attempt(k, f) for k, f in [
    ('read-workspace', lambda: read('inside.txt')),
    ('write-workspace', lambda: write('made.txt')),
    ('read-skill', lambda: read(sys.argv[1] + '/skill/SKILL.md')),
    ('write-skill', lambda: write(sys.argv[1] + '/skill/SKILL.md')),
    ('read-canary', lambda: read(sys.argv[1] + '/../outside/canary.txt')),
    ('write-outside', lambda: write(sys.argv[1] + '/../outside/new.txt')),
    ('read-passwd', lambda: read('/etc/passwd')),
    ('read-environ', lambda: read('/proc/self/environ')),
    ('write-temp', lambda: write(sys.argv[1] + '/home/tmp/t.txt')),
    ('write-home', lambda: write(sys.argv[1] + '/home/h.txt')),
    ('read-dev-null', lambda: read('/dev/null')),
]}))
"""


def _layout(tmp: Path) -> Path:
    base = tmp / "base"
    _roots(base)
    (base / "workspace" / "inside.txt").write_text("inside")
    (base / "skill" / "SKILL.md").write_text("skill")
    (tmp / "outside").mkdir()
    (tmp / "outside" / "canary.txt").write_text("CANARY-SECRET")
    return base


def test_the_kernel_allows_exactly_what_the_policy_grants(tmp_path: Path) -> None:
    base = _layout(tmp_path)
    code = PROBE.replace("sys.argv[1]", repr(str(base)))
    proc = _confined(base, code)
    assert proc.returncode == 0, proc.stderr
    got = json.loads(proc.stdout)
    assert got == {
        "read-workspace": "ok", "write-workspace": "ok", "read-skill": "ok", "write-skill": "Permission denied",
        "read-canary": "Permission denied", "write-outside": "Permission denied", "read-passwd": "Permission denied",
        "read-environ": "Permission denied", "write-temp": "ok", "write-home": "Permission denied",
        "read-dev-null": "ok",
    }
    assert not (tmp_path / "outside" / "new.txt").exists()
    assert (base / "skill" / "SKILL.md").read_text() == "skill"


def test_every_child_inherits_the_confinement(tmp_path: Path) -> None:
    base = _layout(tmp_path)
    canary = tmp_path / "outside" / "canary.txt"
    child = f"import subprocess; print(subprocess.run(['/bin/cat', {str(canary)!r}], capture_output=True, text=True).stderr)"
    proc = _confined(base, child)
    assert "Permission denied" in proc.stdout, (proc.stdout, proc.stderr)
    grandchild = f"import os; os.system('/bin/sh -c \"echo POISON > {tmp_path}/outside/sh.txt\"')"
    _confined(base, grandchild)
    assert not (tmp_path / "outside" / "sh.txt").exists()


def test_only_the_models_port_can_be_reached(tmp_path: Path) -> None:
    base = _layout(tmp_path)
    model, other = socket.socket(), socket.socket()
    try:
        for s in (model, other):
            s.bind(("127.0.0.1", 0))
            s.listen(4)
            s.settimeout(0.5)
        mport, oport = model.getsockname()[1], other.getsockname()[1]
        code = ("import socket, json\nout = {}\n"
                f"for name, port in (('model', {mport}), ('other', {oport})):\n"
                "    s = socket.socket()\n"
                "    try:\n        s.connect(('127.0.0.1', port)); out[name] = 'ok'\n"
                "    except OSError as e:\n        out[name] = e.strerror\n"
                "    s.close()\n"
                "b = socket.socket()\n"
                "try:\n    b.bind(('127.0.0.1', 0)); b.listen(1); out['listen'] = 'ok'\n"
                "except OSError as e:\n    out['listen'] = e.strerror\n"
                "print(json.dumps(out))\n")
        proc = _confined(base, code, port=mport)
        assert json.loads(proc.stdout) == {"model": "ok", "other": "Permission denied", "listen": "Permission denied"}, proc.stderr
        with pytest.raises(TimeoutError):
            other.accept()  # the refused connection never reached the listener
    finally:
        model.close()
        other.close()


def test_signals_to_processes_outside_the_domain_are_refused(tmp_path: Path) -> None:
    if ABI < 6:
        pytest.skip("signal scoping needs Landlock ABI 6")
    base = _layout(tmp_path)
    code = f"import os\ntry:\n    os.kill({os.getpid()}, 0); print('ok')\nexcept OSError as e:\n    print(e.strerror)"
    assert _confined(base, code).stdout.strip() == "Operation not permitted"


def test_a_missing_required_root_stops_before_the_program_runs(tmp_path: Path) -> None:
    base = _layout(tmp_path)
    rules = derive(_roots(base), Endpoint("model", "127.0.0.1", 9)).rules(ABI)
    rules["paths"].append([landlock.READ_FILE, str(tmp_path / "no-such-dir"), False])
    rules_file = tmp_path / "rules"
    rules_file.write_text(landlock.render_rules(rules))
    proc = subprocess.run([PYTHON, "-I", "-S", WRAPPER, str(rules_file), "/bin/echo", "RAN"],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == landlock.EXIT_CONFINE_FAILED
    assert "RAN" not in proc.stdout
    assert proc.stderr.startswith(landlock.FAILURE_PREFIX) and "no-such-dir" in proc.stderr


def test_a_bad_rules_argument_is_a_located_failure_not_a_traceback(tmp_path: Path) -> None:
    bad = tmp_path / "bad.rules"
    bad.write_text("handled 1 0 0\nallow everything\n")
    for rules in (str(bad), str(tmp_path / "absent.rules")):
        proc = subprocess.run([PYTHON, "-I", "-S", WRAPPER, rules, "/bin/echo", "RAN"],
                              capture_output=True, text=True, timeout=60)
        assert proc.returncode == landlock.EXIT_CONFINE_FAILED and "RAN" not in proc.stdout
        assert proc.stderr.startswith(landlock.FAILURE_PREFIX) and "Traceback" not in proc.stderr

