"""A private network namespace for pi, and the relay that is its only way out.

Standard library only, and its C modules at that (``_socket``, ``select``, ``_thread``:
``socket.py`` alone would double the wrapper's start-up, see docs/performance.md). The
Landlock wrapper (:mod:`pytest_skill_eval.host.landlock`) imports it from beside itself,
before pi starts, when its rules say ``netns``. :func:`enter` then, in the wrapper's own
(single-threaded) process:

1. forks the **relay**, which stays in the evaluator's network namespace;
2. unshares a user and a network namespace (``CLONE_NEWUSER | CLONE_NEWNET``), maps the
   caller's uid and gid onto themselves and brings ``lo`` up: the namespace has no other
   interface, no route, no DNS server;
3. binds the listeners inside the namespace: ``127.0.0.1:PORT`` (and ``[::1]:PORT``) for
   each **bridge** (a loopback endpoint such as the scripted model: same port outside) and
   one ``127.0.0.1`` port for the **CONNECT proxy** (every other endpoint, by host name);
4. empties the capability bounding set (pi keeps no capability in its namespace, even
   when the evaluator runs as root), hands the listening sockets to the relay over a
   socket pair (``SCM_RIGHTS``), closes its own copies and returns the proxy variables
   pi's environment gets.

A socket belongs to the namespace it was made in: the relay accepts connections made
inside pi's namespace and connects, from the evaluator's namespace, only to the endpoint
the rules name: a bridge to its one target, the proxy to the ``host:port`` pairs the
rules allow (``*`` as host: any public host on that port, for a built-in provider whose
host the evaluator does not know). Every other CONNECT gets ``403``. The relay holds no
file, listens on nothing in the evaluator's namespace and ends with pi (it watches pi's
pidfd), and the evaluator's reaping of pi's process tree covers it too. Everything pi or
a child of it sends elsewhere, TCP to another address, UDP, DNS, never leaves the
namespace.
"""

from __future__ import annotations

import _socket as sk
import _thread
import os
import select
import struct
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    Socket = sk.socket

CLONE_NEWUSER, CLONE_NEWNET = 0x10000000, 0x40000000
PR_CAPBSET_DROP = 24
SIOCGIFFLAGS, SIOCSIFFLAGS, IFF_UP = 0x8913, 0x8914, 0x1
#: the largest CONNECT request head the proxy reads
HEAD_LIMIT = 8192
#: how long the relay waits for an upstream connection, seconds
CONNECT_TIMEOUT = 30.0
#: loopback names a bridge serves (and pi's NO_PROXY lists)
LOOPBACK = ("127.0.0.1", "localhost", "::1")
#: the most listening sockets one wrapper hands over
MAX_FDS = 64


class _NamespaceError(Exception):
    """The namespace could not be made (the message says which step and why).

    Private, and outside errors.py, as landlock's own: the module runs in the wrapper with
    the standard library only; :func:`enter` raises :class:`RuntimeError` to its caller."""


def _libc() -> Any:
    import ctypes

    return ctypes.CDLL(None, use_errno=True)


def _unshare() -> None:
    import ctypes

    uid, gid = os.getuid(), os.getgid()
    libc = _libc()
    if libc.unshare(ctypes.c_int(CLONE_NEWUSER | CLONE_NEWNET)) != 0:
        err = ctypes.get_errno()
        raise _NamespaceError(f"unshare(CLONE_NEWUSER|CLONE_NEWNET): {os.strerror(err)} (errno {err}); "
                             "unprivileged user namespaces are disabled (kernel.unprivileged_userns_clone, "
                             "kernel.apparmor_restrict_unprivileged_userns or user.max_user_namespaces)")
    try:
        for name, text in (("setgroups", "deny"), ("uid_map", f"{uid} {uid} 1"), ("gid_map", f"{gid} {gid} 1")):
            with open(f"/proc/self/{name}", "w", encoding="ascii") as f:
                f.write(text)
    except OSError as exc:
        raise _NamespaceError(f"mapping the user into the namespace: {exc.strerror}") from None


def _loopback_up() -> None:
    import fcntl

    s = sk.socket(sk.AF_INET, sk.SOCK_DGRAM)
    try:
        got = fcntl.ioctl(s.fileno(), SIOCGIFFLAGS, struct.pack("16sH22x", b"lo", 0))
        flags = struct.unpack("16sH22x", got)[1]
        fcntl.ioctl(s.fileno(), SIOCSIFFLAGS, struct.pack("16sH22x", b"lo", flags | IFF_UP))
    except OSError as exc:
        raise _NamespaceError(f"bringing lo up: {exc.strerror}") from None
    finally:
        s.close()


def _drop_capabilities() -> None:
    """Empty the bounding set: pi keeps no capability in its namespace even when the
    evaluator runs as root (uid 0 maps onto itself and would otherwise keep them all)."""
    import ctypes

    libc = _libc()
    for cap in range(64):
        if libc.prctl(ctypes.c_int(PR_CAPBSET_DROP), ctypes.c_ulong(cap), 0, 0, 0) != 0:
            err = ctypes.get_errno()
            if err == 22:  # EINVAL: past the last capability this kernel knows
                return
            raise _NamespaceError(f"dropping capability {cap}: {os.strerror(err)}")


def _listen(family: int, host: str, port: int) -> Socket:
    s = sk.socket(family, sk.SOCK_STREAM)
    try:
        if family == sk.AF_INET6:
            s.setsockopt(sk.IPPROTO_IPV6, sk.IPV6_V6ONLY, 1)
        s.bind((host, port))
        s.listen(64)
    except OSError:
        s.close()
        raise
    return s


def enter(bridges: list[tuple[int, str, int]], allowed: list[tuple[str, int]]) -> tuple[dict[str, str], list[int]]:
    """Move the calling process into a fresh namespace whose only way out is the relay.

    *bridges*: ``(port, host, target_port)``: ``127.0.0.1:port`` inside relays to
    ``host:target_port`` outside. *allowed*: the CONNECT proxy's ``(host, port)`` pairs
    (none: no proxy). Returns the environment pi gets (the proxy's address, or the proxy
    variables emptied) and the ports inside the namespace pi may connect to;
    :class:`RuntimeError` saying which step failed and why.
    """
    try:
        return _enter(bridges, allowed)
    except _NamespaceError as exc:
        raise RuntimeError(str(exc)) from None


def _enter(bridges: list[tuple[int, str, int]], allowed: list[tuple[str, int]]) -> tuple[dict[str, str], list[int]]:
    parent, child = sk.socketpair(sk.AF_UNIX, sk.SOCK_STREAM)
    pid = os.fork()
    if pid == 0:  # the relay: stays in this namespace
        code = 0
        try:
            parent.close()
            _relay_process(child, os.getppid())
        except BaseException:  # noqa: BLE001 - the relay never returns into the wrapper
            code = 1
        os._exit(code)
    child.close()
    try:
        _unshare()
        _loopback_up()
        listeners: list[Socket] = []
        lines: list[str] = []
        for port, host, target in bridges:
            listeners.append(_listen(sk.AF_INET, "127.0.0.1", port))
            lines.append(f"bridge {host} {target}")
            try:
                listeners.append(_listen(sk.AF_INET6, "::1", port))
                lines.append(f"bridge {host} {target}")
            except OSError:
                pass  # no IPv6 on lo: localhost resolves to 127.0.0.1 as well
        env = {}
        ports = [p for p, _, _ in bridges]
        if allowed:
            proxy = _listen(sk.AF_INET, "127.0.0.1", 0)
            listeners.append(proxy)
            lines.append("proxy " + " ".join(f"{h}:{p}" for h, p in allowed))
            address = f"http://127.0.0.1:{proxy.getsockname()[1]}"
            ports.append(proxy.getsockname()[1])
        else:
            address = ""
        if len(listeners) > MAX_FDS:
            raise _NamespaceError(f"{len(listeners)} listeners, at most {MAX_FDS}")
        for name in ("HTTPS_PROXY", "HTTP_PROXY", "https_proxy", "http_proxy"):
            env[name] = address
        for name in ("ALL_PROXY", "all_proxy"):
            env[name] = ""
        env["NO_PROXY"] = env["no_proxy"] = ",".join(LOOPBACK)
        _drop_capabilities()
        fds = [s.fileno() for s in listeners]
        parent.sendmsg(["\n".join(lines).encode()],
                       [(sk.SOL_SOCKET, sk.SCM_RIGHTS, struct.pack(f"{len(fds)}i", *fds))])
        for s in listeners:
            s.close()
        if parent.recv(1) != b"k":
            raise _NamespaceError("the relay did not start")
    except OSError as exc:
        raise _NamespaceError(f"setting up the namespace's listeners: {exc.strerror or exc}") from None
    finally:
        parent.close()
    return env, ports


# -- the relay (outside the namespace) ----------------------------------------


def _relay_process(channel: Socket, wrapper: int) -> None:
    # pi's end is watched through a pidfd, not PR_SET_PDEATHSIG: Landlock's signal scope
    # (ABI 6) keeps the confined pi from signalling the relay, its parent-death signal too
    try:
        watch: int | None = os.pidfd_open(wrapper)
    except (OSError, AttributeError):
        watch = None  # Linux < 5.3: the relay looks at its parent twice a second instead
    if os.getppid() != wrapper:  # the wrapper is already gone (and its pid may be reused)
        return
    devnull = os.open("/dev/null", os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(devnull, fd)
    os.close(devnull)
    msg, ancillary, _flags, _addr = channel.recvmsg(65536, sk.CMSG_SPACE(MAX_FDS * 4))
    fds: list[int] = []
    for level, kind, data in ancillary:
        if level == sk.SOL_SOCKET and kind == sk.SCM_RIGHTS:
            fds += struct.unpack(f"{len(data) // 4}i", data[: len(data) - len(data) % 4])
    if not fds:  # the wrapper failed before it handed anything over
        return
    channel.sendall(b"k")
    channel.close()
    listeners = [sk.socket(fileno=fd) for fd in fds]
    plans = msg.decode().split("\n") if msg else []
    serve(list(zip(listeners, plans, strict=True)), watch, wrapper)


def serve(pairs: list[tuple[Socket, str]], watch: int | None, parent: int) -> None:
    """Accept on every listener until pi ends (*watch*, its pidfd, turns readable; without
    one, until this process's parent is no longer *parent*); a ``bridge HOST PORT`` plan
    relays to that one endpoint, a ``proxy HOST:PORT ...`` plan serves CONNECT for the pairs
    it names. Each connection is served by a thread of its own."""
    poller = select.poll()
    by_fd: dict[int, tuple[Socket, str]] = {}
    for listener, plan in pairs:
        by_fd[listener.fileno()] = (listener, plan)
        poller.register(listener.fileno(), select.POLLIN)
    if watch is not None:
        poller.register(watch, select.POLLIN)
    while True:
        events = poller.poll(None if watch is not None else 500)
        if watch is None and os.getppid() != parent:
            return
        for fd, _ in events:
            if fd == watch:  # pi has ended
                return
            listener, plan = by_fd[fd]
            try:
                conn_fd, _addr = listener._accept()  # type: ignore[attr-defined]  # _socket has no accept()
            except OSError:
                continue
            _thread.start_new_thread(_serve_one, (sk.socket(fileno=conn_fd), plan))


def parse_plan(plan: str) -> tuple[str, Any]:
    """``("bridge", (host, port))`` or ``("proxy", {(host, port), ...})`` from one plan line."""
    kind, _, rest = plan.partition(" ")
    if kind == "bridge":
        host, port = rest.rsplit(" ", 1)
        return "bridge", (host, int(port))
    if kind == "proxy":
        return "proxy", {split_host_port(item) for item in rest.split(" ") if item}
    raise ValueError(f"unknown relay plan {plan[:40]!r}")


def split_host_port(text: str) -> tuple[str, int]:
    """``host:port`` or ``[v6]:port`` → ``(host, port)``; :class:`ValueError` otherwise."""
    host, sep, port = text.rpartition(":")
    if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise ValueError(f"expected host:port, found {text[:80]!r}")
    return host.strip("[]").lower().rstrip("."), int(port)


def connect_target(head: bytes, allowed: set[tuple[str, int]]) -> tuple[str, int, bool] | str:
    """The endpoint a CONNECT request *head* asks for if *allowed* grants it, else why not.

    The third item is True when only a ``*`` pair grants it: the relay then connects to
    public addresses only (a built-in provider is on the internet, never on this machine's
    loopback or in a private or link-local network)."""
    line = head.split(b"\r\n", 1)[0].decode("latin-1")
    parts = line.split(" ")
    if len(parts) != 3 or parts[0] != "CONNECT" or not parts[2].startswith("HTTP/1."):
        return f"not a CONNECT request: {line[:80]!r}"
    try:
        host, port = split_host_port(parts[1])
    except ValueError as exc:
        return str(exc)
    if (host, port) in allowed:
        return host, port, False
    if ("*", port) in allowed:
        return host, port, True
    return f"{host}:{port} is not an allowed endpoint"


def connect(host: str, port: int, public_only: bool = False, timeout: float = CONNECT_TIMEOUT) -> Socket:
    """A TCP connection to *host*:*port* (resolved here, outside pi's namespace; an address
    literal without ``getaddrinfo``, whose first call loads the resolver's libraries);
    *public_only*: to a globally routable address only."""
    last: OSError = OSError(f"{host} resolves to no address")
    for family in (sk.AF_INET, sk.AF_INET6):
        try:
            sk.inet_pton(family, host)
        except OSError:
            continue
        candidates: list[tuple[int, int, int, str, Any]] = [(family, sk.SOCK_STREAM, 0, "", (host, port))]
        break
    else:
        candidates = list(sk.getaddrinfo(host, port, 0, sk.SOCK_STREAM))
    if public_only:
        import ipaddress

        candidates = [c for c in candidates if ipaddress.ip_address(c[4][0]).is_global]
        last = OSError(f"{host} resolves to no public address")
    for family, kind, proto, _name, address in candidates:
        s = sk.socket(family, kind, proto)
        try:
            s.settimeout(timeout)
            s.connect(address)
        except OSError as exc:
            s.close()
            last = exc
            continue
        return s
    raise last


FORBIDDEN = b"HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
BAD_GATEWAY = b"HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"


def _serve_one(conn: Socket, plan: str) -> None:
    upstream = None
    try:
        kind, what = parse_plan(plan)
        rest = b""
        if kind == "bridge":
            upstream = connect(*what)
        else:
            head = b""
            conn.settimeout(CONNECT_TIMEOUT)
            while b"\r\n\r\n" not in head:
                data = conn.recv(HEAD_LIMIT)
                if not data or len(head) + len(data) > HEAD_LIMIT:
                    return
                head += data
            head, _, rest = head.partition(b"\r\n\r\n")
            target = connect_target(head, what)
            if isinstance(target, str):
                conn.sendall(FORBIDDEN)
                return
            try:
                upstream = connect(*target)
            except OSError:
                conn.sendall(BAD_GATEWAY)
                return
            conn.sendall(b"HTTP/1.1 200 Connection Established\r\n\r\n")
        conn.settimeout(None)
        upstream.settimeout(None)
        if rest:
            upstream.sendall(rest)
        _pump(conn, upstream)
    except (OSError, ValueError):
        pass
    finally:
        conn.close()
        if upstream is not None:
            upstream.close()


def _pump(a: Socket, b: Socket) -> None:
    """Copy both ways until both sides have ended (an end is passed on as a half-close)."""
    poller = select.poll()
    by_fd = {a.fileno(): (a, b), b.fileno(): (b, a)}
    for fd in by_fd:
        poller.register(fd, select.POLLIN)
    while by_fd:
        for fd, _ in poller.poll():
            src, dst = by_fd[fd]
            data = src.recv(65536)
            if data:
                dst.sendall(data)
                continue
            poller.unregister(fd)
            del by_fd[fd]
            try:
                dst.shutdown(sk.SHUT_WR)
            except OSError:
                pass


def probe() -> str:
    """Empty when this process can make the namespace (it then lives in one), else why not."""
    try:
        _unshare()
        _loopback_up()
        _listen(sk.AF_INET, "127.0.0.1", 0).close()
    except _NamespaceError as exc:
        return str(exc)
    except OSError as exc:
        return f"binding inside the namespace: {exc.strerror}"
    return ""


if __name__ == "__main__":  # ``netns.py --probe``: the evaluator's one check per process
    reason = probe() if sys.platform.startswith("linux") else f"no network namespaces on {sys.platform}"
    sys.stdout.write(reason)
    sys.exit(1 if reason else 0)
