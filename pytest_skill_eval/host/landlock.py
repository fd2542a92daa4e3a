"""Landlock through raw system calls: probing the kernel, and the exec wrapper that confines pi.

This module owns the Linux Landlock interface and nothing else. It imports only the
standard library (``ctypes``, ``os``, ``sys``), because it also runs as a script
before pi starts::

    python -I -S .../host/landlock.py RULES <argv of pi ...>

(``RULES``: the path of a file holding the rules in the line format of :func:`render_rules`;
JSON would cost the wrapper more than a third of its start-up time, see docs/performance.md.)

The wrapper builds one Landlock ruleset from the rules, sets ``no_new_privs``, restricts
itself and ``execv``s pi: the domain is inherited by pi and by every child pi starts and
cannot be lifted. Nothing runs between fork and exec in the evaluator (no ``preexec_fn``:
the plugin starts pi from several threads with ``--skill-eval-jobs``). Which roots get which
rights is decided in :mod:`pytest_skill_eval.host.confinement` (pure); this module applies
what it is given. When the rules ask for a network namespace (``netns``), the wrapper first
enters one through :mod:`pytest_skill_eval.host.netns` (loaded by path, standard library
only) and pi's environment gets the namespace's proxy address.

A rule whose path does not exist is skipped when the rule is optional (``/lib64`` on a
system without it) and is an error otherwise. Any failure before ``execv`` exits with
status :data:`EXIT_CONFINE_FAILED` and one line on stderr starting with
:data:`FAILURE_PREFIX`: pi never runs unconfined by accident.
"""

from __future__ import annotations

import ctypes
import os
import sys

#: ``typing`` costs the wrapper ~5 ms of a ~12 ms start: imported for the type checker only
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

#: x86_64, aarch64 and every other architecture use the same numbers (new syscalls are unified).
SYS_CREATE_RULESET, SYS_ADD_RULE, SYS_RESTRICT_SELF = 444, 445, 446
CREATE_RULESET_VERSION = 1
RULE_PATH_BENEATH, RULE_NET_PORT = 1, 2
PR_SET_NO_NEW_PRIVS = 38

# filesystem rights (ABI 1 unless noted)
EXECUTE, WRITE_FILE, READ_FILE, READ_DIR = 1 << 0, 1 << 1, 1 << 2, 1 << 3
REMOVE_DIR, REMOVE_FILE, MAKE_CHAR, MAKE_DIR = 1 << 4, 1 << 5, 1 << 6, 1 << 7
MAKE_REG, MAKE_SOCK, MAKE_FIFO, MAKE_BLOCK, MAKE_SYM = 1 << 8, 1 << 9, 1 << 10, 1 << 11, 1 << 12
REFER, TRUNCATE, IOCTL_DEV = 1 << 13, 1 << 14, 1 << 15  # ABI 2, 3, 5
# network rights (ABI 4) and scopes (ABI 6)
BIND_TCP, CONNECT_TCP = 1 << 0, 1 << 1
SCOPE_ABSTRACT_UNIX, SCOPE_SIGNAL = 1 << 0, 1 << 1

#: the filesystem rights each ABI version knows (a right the kernel does not know is left out)
FS_BY_ABI = {1: (1 << 13) - 1, 2: (1 << 14) - 1, 3: (1 << 15) - 1, 4: (1 << 15) - 1, 5: (1 << 16) - 1}
#: rights that make sense on a file (a rule on a regular file may carry only these)
FILE_RIGHTS = EXECUTE | WRITE_FILE | READ_FILE | TRUNCATE | IOCTL_DEV

EXIT_CONFINE_FAILED = 126
FAILURE_PREFIX = "skill-eval confinement failed:"


class _PathBeneath(ctypes.Structure):
    _pack_ = 1
    _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


class _NetPort(ctypes.Structure):
    _fields_ = [("allowed_access", ctypes.c_uint64), ("port", ctypes.c_uint64)]


class _RulesetAttr(ctypes.Structure):
    _fields_ = [("handled_access_fs", ctypes.c_uint64), ("handled_access_net", ctypes.c_uint64),
                ("scoped", ctypes.c_uint64)]


def _libc() -> Any:
    return ctypes.CDLL(None, use_errno=True)


def abi_version() -> int:
    """The kernel's Landlock ABI version; 0 when Landlock is missing, disabled or not Linux."""
    if not sys.platform.startswith("linux"):
        return 0
    try:
        libc = _libc()
        libc.syscall.restype = ctypes.c_long
        version = int(libc.syscall(ctypes.c_long(SYS_CREATE_RULESET), None, ctypes.c_size_t(0),
                                   ctypes.c_uint32(CREATE_RULESET_VERSION)))
    except (OSError, AttributeError):
        return 0
    return max(version, 0)


def fs_rights(abi: int) -> int:
    """Every filesystem right ABI *abi* can handle."""
    return FS_BY_ABI.get(min(abi, 5), 0) if abi > 0 else 0


class _ConfineError(Exception):
    """The ruleset could not be built or applied (the message says which step and why).

    Private to this module, and outside errors.py, on purpose: the wrapper runs as a script
    with the standard library only and turns it into exit status :data:`EXIT_CONFINE_FAILED`."""


def _check(result: int, what: str) -> int:
    if result < 0:
        err = ctypes.get_errno()
        raise _ConfineError(f"{what}: {os.strerror(err)} (errno {err})")
    return result


def restrict(rules: dict[str, Any]) -> None:
    """Confine the calling thread (and everything it later executes) by *rules*.

    *rules*: ``handled_fs``, ``handled_net``, ``scoped`` (bit masks the kernel's ABI knows),
    ``paths`` (a list of ``[rights, path, optional]``) and ``connect`` (TCP ports).
    """
    libc = _libc()
    libc.syscall.restype = ctypes.c_long
    attr = _RulesetAttr(int(rules["handled_fs"]), int(rules.get("handled_net", 0)), int(rules.get("scoped", 0)))
    size = ctypes.sizeof(_RulesetAttr) if attr.scoped else (16 if attr.handled_access_net else 8)
    fd = _check(libc.syscall(ctypes.c_long(SYS_CREATE_RULESET), ctypes.byref(attr), ctypes.c_size_t(size),
                             ctypes.c_uint32(0)), "landlock_create_ruleset")
    for rights, path, optional in rules.get("paths", ()):
        try:
            parent = os.open(path, os.O_PATH | os.O_CLOEXEC)
        except OSError as exc:
            if optional:
                continue
            raise _ConfineError(f"cannot open {path}: {exc.strerror}") from None
        try:
            allowed = int(rights) & attr.handled_access_fs
            if not os.path.isdir(f"/proc/self/fd/{parent}"):
                allowed &= FILE_RIGHTS
            if allowed:
                rule = _PathBeneath(allowed, parent)
                _check(libc.syscall(ctypes.c_long(SYS_ADD_RULE), ctypes.c_int(fd), ctypes.c_int(RULE_PATH_BENEATH),
                                    ctypes.byref(rule), ctypes.c_uint32(0)), f"landlock_add_rule {path}")
        finally:
            os.close(parent)
    for port in rules.get("connect", ()) if attr.handled_access_net else ():
        net = _NetPort(CONNECT_TCP, int(port))
        _check(libc.syscall(ctypes.c_long(SYS_ADD_RULE), ctypes.c_int(fd), ctypes.c_int(RULE_NET_PORT),
                            ctypes.byref(net), ctypes.c_uint32(0)), f"landlock_add_rule tcp port {port}")
    _check(libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "prctl(PR_SET_NO_NEW_PRIVS)")
    _check(libc.syscall(ctypes.c_long(SYS_RESTRICT_SELF), ctypes.c_int(fd), ctypes.c_uint32(0)),
           "landlock_restrict_self")
    os.close(fd)


def render_rules(rules: dict[str, Any]) -> str:
    """*rules* (as :func:`restrict` takes them) in the wrapper's line format.

    ``handled FS NET SCOPED``, then ``path RIGHTS OPTIONAL PATH`` and ``connect PORT`` lines,
    fields separated by one space, the path last (it may hold spaces, never a line break).
    With ``netns`` (a private network namespace, :mod:`netns`): ``netns``, then
    ``bridge PORT TARGET_PORT HOST`` and ``proxy PORT HOST`` lines (the ``connect`` ports are
    then replaced by the relay's ports inside the namespace).
    """
    lines = [f"handled {int(rules['handled_fs'])} {int(rules.get('handled_net', 0))} {int(rules.get('scoped', 0))}"]
    for rights, path, optional in rules.get("paths", ()):
        if "\n" in path or "\r" in path or not path:
            raise ValueError(f"a confined root must be a non-empty path without line breaks, found {path!r}")
        lines.append(f"path {int(rights)} {int(bool(optional))} {path}")
    lines += [f"connect {int(port)}" for port in rules.get("connect", ())]
    if rules.get("netns"):
        lines.append("netns")
        for port, host, target in rules.get("bridges", ()):
            lines.append(f"bridge {int(port)} {int(target)} {_host(host)}")
        lines += [f"proxy {int(port)} {_host(host)}" for host, port in rules.get("proxy", ())]
    return "\n".join(lines) + "\n"


def _host(host: str) -> str:
    if not host or any(c.isspace() for c in host):
        raise ValueError(f"an endpoint's host must be a non-empty name without white space, found {host!r}")
    return host


def parse_rules(text: str) -> dict[str, Any]:
    """The rules a :func:`render_rules` text holds; :class:`ValueError` for anything else."""
    rules: dict[str, Any] = {"paths": [], "connect": []}
    for number, line in enumerate(text.split("\n"), start=1):
        if not line:
            continue
        kind, _, rest = line.partition(" ")
        if kind == "handled":
            fs, net, scoped = (int(v) for v in rest.split(" "))
            rules.update(handled_fs=fs, handled_net=net, scoped=scoped)
        elif kind == "path":
            rights, optional, path = rest.split(" ", 2)
            rules["paths"].append([int(rights), path, optional == "1"])
        elif kind == "connect":
            rules["connect"].append(int(rest))
        elif kind == "netns":
            rules["netns"] = True
        elif kind == "bridge":
            port, target, host = rest.split(" ", 2)
            rules.setdefault("bridges", []).append((int(port), host, int(target)))
        elif kind == "proxy":
            port, host = rest.split(" ", 1)
            rules.setdefault("proxy", []).append((host, int(port)))
        else:
            raise ValueError(f"rules line {number}: expected handled, path, connect, netns, bridge or proxy, "
                             f"found {line[:40]!r}")
    if "handled_fs" not in rules:
        raise ValueError("rules: no 'handled' line")
    return rules


def _load_netns() -> Any:
    """The sibling :mod:`netns` module (the wrapper runs isolated: its directory is not on
    ``sys.path``). Found through the path for this one import, which costs nothing more
    (``importlib.util`` would cost the wrapper ~3 ms of imports); nothing else this process
    imports is named like a module beside it."""
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    try:
        import netns  # type: ignore[import-not-found]
    finally:
        del sys.path[0]
    return netns


def main(argv: list[str]) -> int:
    """The wrapper: ``landlock.py RULES PROGRAM [ARGS...]``; never returns on success."""
    if len(argv) < 3:
        sys.stderr.write(f"{FAILURE_PREFIX} usage: landlock.py RULES PROGRAM [ARGS...]\n")
        return EXIT_CONFINE_FAILED
    try:
        with open(argv[1], encoding="utf-8") as f:
            rules = parse_rules(f.read())
        env: dict[str, str] = dict(os.environ)
        if rules.get("netns"):
            netns = _load_netns()
            try:
                extra, ports = netns.enter(rules.get("bridges", []), rules.get("proxy", []))
            except RuntimeError as exc:
                raise _ConfineError(f"network namespace: {exc}") from None
            env.update(extra)
            # inside the namespace pi may reach the relay's listeners and nothing else
            rules["connect"] = ports
        restrict(rules)
        os.execve(argv[2], argv[2:], env)
    except (_ConfineError, OSError, ValueError, KeyError, TypeError) as exc:
        sys.stderr.write(f"{FAILURE_PREFIX} {exc}\n")
    return EXIT_CONFINE_FAILED


if __name__ == "__main__":
    sys.exit(main(sys.argv))
