"""What the kernel lets one variant's pi process touch: roots by role, rights, the model's port.

Pure: a :class:`Policy` is derived from the variant's own paths (workspace, declared
skills, context and bundles, private agent dir, HOME, temp and session directories), the
pi and node install, the model's endpoint and what the user granted on the command line;
it renders the rules the Landlock wrapper applies (:meth:`Policy.rules`) and the record
``run.json`` keeps (:meth:`Policy.to_json`). Nothing here touches the filesystem or the
kernel: the caller passes canonical paths and the kernel's ABI version.

Rights by access:

    read        read files, list directories                    skills, context, agent dir
    read-exec   read and execute                                pi and node install, system
    read-lock   read, and make and remove directories (pi's locks) the agent dir
    write       everything inside but device nodes and ioctls    workspace, temp, session
    append      write to one existing file (no create, no truncate) the tool gate's log
    device      read and write one device file                  /dev/null
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal
from urllib.parse import urlsplit

from pytest_skill_eval.host import landlock as ll

Access = Literal["read", "read-exec", "read-lock", "write", "append", "device"]
Mode = Literal["auto", "required", "off"]
#: how the network is confined: a private namespace whose only way out is the relay
#: (:mod:`pytest_skill_eval.host.netns`), Landlock's TCP port rules alone, or nothing
Network = Literal["namespace", "landlock-ports", "none"]
MODES: tuple[Mode, ...] = ("auto", "required", "off")

READ = ll.READ_FILE | ll.READ_DIR
RIGHTS: dict[Access, int] = {
    "read": READ,
    "read-exec": READ | ll.EXECUTE,
    "read-lock": READ | ll.MAKE_DIR | ll.REMOVE_DIR,
    "write": (1 << 16) - 1 & ~(ll.MAKE_CHAR | ll.MAKE_BLOCK | ll.IOCTL_DEV),
    "append": ll.WRITE_FILE,
    "device": ll.READ_FILE | ll.WRITE_FILE,
}

#: Where node and the C library live, and what node reads to start and speak TLS: the
#: dynamic loader's cache, certificates, name resolution, the time zone. Optional: a
#: system has some of them. Nothing under HOME, /root, /home, /tmp, /proc or /sys.
SYSTEM_EXEC = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/opt/homebrew")
SYSTEM_READ = (
    "/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d",
    "/etc/ssl", "/etc/ca-certificates", "/etc/pki", "/etc/ca-certificates.conf",
    "/etc/resolv.conf", "/etc/hosts", "/etc/nsswitch.conf", "/etc/gai.conf", "/etc/host.conf",
    "/etc/localtime", "/etc/services", "/etc/protocols",
)
SYSTEM_DEVICES = ("/dev/null", "/dev/zero", "/dev/urandom", "/dev/random", "/dev/full")

#: TCP port of a provider endpoint whose URL names none
DEFAULT_PORTS = {"https": 443, "http": 80}
#: the Landlock ABI that rules TCP connections (Linux 6.7); filesystem rules need ABI 1 (5.13)
NET_ABI, SCOPE_ABI = 4, 6


@dataclass(frozen=True, slots=True)
class Grant:
    """One root and what the variant may do beneath it."""

    role: str
    path: str
    access: Access
    optional: bool = False


@dataclass(frozen=True, slots=True)
class Endpoint:
    """A TCP endpoint the variant may connect to.

    ``exact`` False: *host* only describes the endpoint (a built-in provider whose host
    the evaluator does not know); any host on *port* is then allowed, and recorded so.
    """

    role: str
    host: str
    port: int
    exact: bool = True

    @property
    def loopback(self) -> bool:
        """Served on this machine's loopback: bridged to the same port inside the namespace."""
        if not self.exact:
            return False
        if self.host.lower() == "localhost":
            return True
        try:
            return ipaddress.ip_address(self.host).is_loopback
        except ValueError:
            return False

    def to_json(self, network: Network) -> dict[str, Any]:
        out: dict[str, Any] = {"role": self.role, "host": self.host if self.exact else f"any host ({self.host})",
                               "port": self.port}
        if network == "namespace":
            out["via"] = "bridge" if self.loopback else "connect-proxy"
        return out


@dataclass(frozen=True, slots=True)
class VariantRoots:
    """The canonical paths of one variant, as the engine prepared them."""

    workspace: str
    skills: tuple[str, ...]
    contexts: tuple[str, ...]
    bundles: str | None
    agent_dir: str
    host_extensions: str
    temp: str
    session: str | None
    host_install: tuple[str, ...]
    #: files our own extensions append to (the tool gate's and the observer's logs)
    logs: tuple[str, ...] = ()
    compile_cache: str | None = None


@dataclass(frozen=True, slots=True)
class Policy:
    grants: tuple[Grant, ...]
    endpoints: tuple[Endpoint, ...]

    def rules(self, abi: int, network: Network = "landlock-ports") -> dict[str, Any]:
        """The wrapper's input for a kernel of Landlock ABI *abi* (rights it lacks left out).

        *network* ``namespace``: each loopback endpoint is bridged to the same port inside
        the namespace, every other one goes through the relay's CONNECT proxy, and the
        Landlock port rules name only the relay's ports (the wrapper fills them in).
        """
        handled = ll.fs_rights(abi)
        rules: dict[str, Any] = {
            "handled_fs": handled,
            "handled_net": (ll.BIND_TCP | ll.CONNECT_TCP) if abi >= NET_ABI else 0,
            "scoped": (ll.SCOPE_ABSTRACT_UNIX | ll.SCOPE_SIGNAL) if abi >= SCOPE_ABI else 0,
            "paths": [[RIGHTS[g.access] & handled, g.path, g.optional] for g in self.grants],
            "connect": sorted({e.port for e in self.endpoints}) if abi >= NET_ABI else [],
        }
        if network == "namespace":
            bridged: dict[int, str] = {}
            for e in self.endpoints:
                if e.loopback:
                    bridged.setdefault(e.port, e.host)
            # as the relay compares them: lower case, without a trailing dot
            proxied = {(e.host.lower().rstrip(".") if e.exact else "*", e.port) for e in self.endpoints
                       if not e.loopback and e.host.rstrip(".")}
            rules.update(netns=True, connect=[], bridges=[(port, host, port) for port, host in sorted(bridged.items())],
                         proxy=sorted(proxied))
        return rules

    def to_json(self, names: Mapping[str, str], network: Network = "landlock-ports") -> dict[str, Any]:
        """The effective rules as ``run.json`` shows them: each root by role, its path shown
        relative to the first of *names* (a directory → a placeholder) that contains it."""
        return {
            "paths": [{"role": g.role, "access": g.access, "path": shown(g.path, names)} for g in self.grants],
            "connect": [e.to_json(network) for e in self.endpoints],
        }


def shown(path: str, names: Mapping[str, str]) -> str:
    """*path* with the longest directory of *names* that contains it replaced by its name."""
    best = ""
    for directory in names:
        if (path == directory or path.startswith(directory.rstrip("/") + "/")) and len(directory) > len(best):
            best = directory
    if not best:
        return path
    rest = path[len(best):].lstrip("/")
    return f"{names[best]}/{rest}" if rest else names[best]


def parse_host_port(text: str) -> tuple[str, int]:
    """``HOST:PORT`` (``[v6]:PORT`` too) from the command line, or :class:`ValueError`."""
    host, sep, port = text.rpartition(":")
    if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise ValueError(f"expected HOST:PORT with a port from 1 to 65535, found {text!r}")
    return host.strip("[]"), int(port)


def model_endpoints(provider: str | None, providers: Mapping[str, Any]) -> tuple[Endpoint, ...]:
    """Where the variant's model may be served: a configured ``baseUrl``, else the provider's HTTPS port.

    pi's built-in providers speak HTTPS on 443; a provider of ``models.json`` (the scripted
    stand-in, a user's custom provider) names its ``baseUrl``. A group that names no model
    leaves the choice to pi, which may take any provider it has a credential for: every
    configured ``baseUrl`` and 443.
    """
    if provider is None:
        configured = [_endpoint(entry["baseUrl"]) for entry in providers.values()
                      if isinstance(entry, Mapping) and isinstance(entry.get("baseUrl"), str) and entry["baseUrl"]]
        return (*configured, Endpoint("model", "pi's built-in providers", 443, exact=False))
    entry = providers.get(provider)
    base = entry.get("baseUrl") if isinstance(entry, Mapping) else None
    if isinstance(base, str) and base:
        return (_endpoint(base),)
    return (Endpoint("model", f"{provider} provider", 443, exact=False),)


def _endpoint(base_url: str) -> Endpoint:
    url = urlsplit(base_url)
    try:
        port = url.port
    except ValueError:  # a port out of range: pi cannot reach it either
        port = None
    return Endpoint("model", url.hostname or "", port or DEFAULT_PORTS.get(url.scheme, 443))


def derive(roots: VariantRoots, model: Endpoint | Sequence[Endpoint], *, allow_read: Sequence[str] = (),
           allow_net: Iterable[tuple[str, int]] = ()) -> Policy:
    """The variant's policy: its own roots, the host, the system files node needs, the model."""
    grants: list[Grant] = [Grant("workspace", roots.workspace, "write"), Grant("temp", roots.temp, "write")]
    if roots.session is not None:
        grants.append(Grant("session", roots.session, "write"))
    grants += [Grant("skill", p, "read") for p in roots.skills]
    grants += [Grant("context", p, "read") for p in roots.contexts]
    if roots.bundles is not None:
        grants.append(Grant("bundles", roots.bundles, "read"))
    # pi locks settings.json and auth.json with lock directories beside them
    grants += [Grant("agent-dir", roots.agent_dir, "read-lock"), Grant("host-extensions", roots.host_extensions, "read")]
    grants += [Grant("extension-log", p, "append") for p in roots.logs]
    grants += [Grant("host", p, "read-exec") for p in roots.host_install]
    if roots.compile_cache is not None:
        # read-only: a confined run may use the code cache but never write code others load
        grants.append(Grant("compile-cache", roots.compile_cache, "read", optional=True))
    grants += [Grant("system", p, "read-exec", optional=True) for p in SYSTEM_EXEC]
    grants += [Grant("system", p, "read", optional=True) for p in SYSTEM_READ]
    grants += [Grant("device", p, "device", optional=True) for p in SYSTEM_DEVICES]
    grants += [Grant("user-allow-read", p, "read") for p in allow_read]
    models = [model] if isinstance(model, Endpoint) else list(model)
    endpoints = [*models, *(Endpoint("user-allow-net", h, p) for h, p in allow_net)]
    return Policy(tuple(grants), tuple(endpoints))


def missing(abi: int) -> list[str]:
    """What a kernel of Landlock ABI *abi* cannot enforce of a policy (empty: everything)."""
    if abi <= 0:
        return ["filesystem rules (Landlock, Linux >= 5.13)", "network rules (Landlock ABI 4, Linux >= 6.7)"]
    gaps = []
    if abi < NET_ABI:
        gaps.append(f"network rules (Landlock ABI {NET_ABI}, Linux >= 6.7; this kernel has ABI {abi})")
    if abi < SCOPE_ABI:
        gaps.append(f"signal and abstract-socket scoping (Landlock ABI {SCOPE_ABI}, Linux >= 6.12; this kernel has ABI {abi})")
    return gaps


@dataclass(frozen=True, slots=True)
class Settings:
    """What the user chose: ``--skill-eval-confinement``, ``--skill-eval-allow-read/-net``.

    ``guard`` is False only through the test harness's hook (see :data:`GUARD_OFF_ENV`):
    the kernel then stands alone, which is how the tests prove it holds.
    """

    mode: Mode = "auto"
    allow_read: tuple[str, ...] = ()
    allow_net: tuple[tuple[str, int], ...] = ()
    guard: bool = True


#: The test-only hook that leaves the path guard out of a run. It is read from the
#: evaluator's own environment (never from a definition: every SKILL_EVAL_* name is
#: reserved there) and only with the exact value :data:`GUARD_OFF_VALUE`; the run records it.
GUARD_OFF_ENV = "SKILL_EVAL_TEST_ONLY_GUARD_OFF"
GUARD_OFF_VALUE = "kernel-alone"


def unavailable_hint(platform: str) -> str:
    """What to do when this machine has no kernel confinement."""
    if platform.startswith("linux"):
        return ("enable Landlock: Linux >= 6.7 (>= 6.12 for signal scoping) with 'landlock' in the "
                "kernel's LSM list (CONFIG_SECURITY_LANDLOCK=y, boot parameter lsm=...,landlock; "
                "/sys/kernel/security/lsm lists the active ones)")
    return (f"kernel confinement is implemented with Linux Landlock; on {platform} there is none "
            "(run on Linux, or pass --skill-eval-confinement off to run with the guard alone)")
