"""Finding, checking and installing the pi host.

Resolution order: an explicit location (option, ini or ``SKILL_EVAL_HOST``), then the
managed install in the per-user cache. A missing managed install is created on first use
from the ``package.json`` + ``package-lock.json`` shipped in this package (pi pinned,
together with the npm package ``node@22``, because pi 1.x cannot run on node 20).
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from pytest_skill_eval.errors import HostError

#: Oldest pi version whose RPC protocol we drive (``agent_settled``, dispositions, trust gate).
SUPPORTED_FLOOR = (1, 6, 0)
HOST_ENV = "SKILL_EVAL_HOST"
CACHE_ENV = "SKILL_EVAL_CACHE"
NO_INSTALL_ENV = "SKILL_EVAL_NO_INSTALL"

Progress = Callable[[str], None]


@dataclass(frozen=True, slots=True)
class HostInstallation:
    """A runnable pi: ``[node, cli, ...]`` is the argv prefix."""

    node: Path
    cli: Path
    version: str
    managed: bool

    @property
    def bin_dir(self) -> Path:
        return self.node.parent

    def argv(self, *args: str) -> list[str]:
        return [str(self.node), str(self.cli), *args]

    def to_json(self) -> dict[str, object]:
        return {"node": str(self.node), "cli": str(self.cli), "version": self.version, "managed": self.managed}


def cache_dir() -> Path:
    """Per-user cache directory (``SKILL_EVAL_CACHE`` overrides it)."""
    explicit = os.environ.get(CACHE_ENV)
    if explicit:
        return Path(explicit).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "pytest-skill-eval"


def _lock_files() -> tuple[bytes, bytes]:
    pkg = resources.files("pytest_skill_eval.host")
    return (pkg / "package.json").read_bytes(), (pkg / "package-lock.json").read_bytes()


def pinned_version() -> str:
    """The pi version the shipped lock file pins."""
    manifest = json.loads(_lock_files()[0])
    return str(manifest["dependencies"]["@earendil-works/pi-coding-agent"])


def managed_prefix() -> Path:
    """Install directory of the managed host; keyed by the lock file so upgrades never mix."""
    digest = hashlib.sha256(b"".join(_lock_files())).hexdigest()[:12]
    return cache_dir() / "host" / f"pi-{pinned_version()}-{digest}"


def parse_version(text: str) -> tuple[int, int, int]:
    match = re.search(r"(\d+)\.(\d+)\.(\d+)", text)
    if not match:
        raise HostError(f"cannot read a pi version from {text.strip()!r}")
    return (int(match[1]), int(match[2]), int(match[3]))


def probe_version(node: Path, cli: Path) -> str:
    """Run ``pi --version`` and refuse hosts older than the supported floor."""
    try:
        proc = subprocess.run(
            [str(node), str(cli), "--version"],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=120,
            env={"PATH": f"{node.parent}{os.pathsep}{os.environ.get('PATH', '')}", "PI_OFFLINE": "1", "HOME": tempfile.gettempdir()},
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise HostError(f"cannot run the pi host {cli} with {node}: {exc}") from None
    text = (proc.stdout or proc.stderr).strip()
    if proc.returncode != 0:
        raise HostError(f"the pi host {cli} failed to report its version (exit {proc.returncode}): {text[-500:]}")
    return check_floor(text, cli)


def check_floor(version_text: str, cli: Path) -> str:
    """Refuse hosts older than the supported floor; return the normalised version."""
    version = parse_version(version_text)
    if version < SUPPORTED_FLOOR:
        floor = ".".join(map(str, SUPPORTED_FLOOR))
        raise HostError(
            f"pi {'.'.join(map(str, version))} at {cli} is older than the supported floor {floor}; "
            f"run `skill-eval host install` to get pi {pinned_version()}, or point --skill-eval-host at a newer pi"
        )
    return ".".join(map(str, version))


def managed_version(prefix: Path) -> str:
    """The managed host's version, read from its package manifest.

    The managed prefix is keyed by the lock file and was probed when it was installed,
    so reading the manifest spares every pytest process (and xdist worker) a node start.
    """
    manifest = prefix / "node_modules" / "@earendil-works" / "pi-coding-agent" / "package.json"
    try:
        version = str(json.loads(manifest.read_text(encoding="utf-8"))["version"])
    except (OSError, ValueError, KeyError) as exc:
        raise HostError(f"the managed pi host at {prefix} is damaged ({exc}); run `skill-eval host install --force`") from None
    return check_floor(version, manifest)


def _installation_in(prefix: Path) -> tuple[Path, Path] | None:
    bin_dir = prefix / "node_modules" / ".bin"
    node, cli = bin_dir / "node", bin_dir / "pi"
    return (node, cli) if node.exists() and cli.exists() else None


def from_explicit(location: str | os.PathLike[str]) -> HostInstallation:
    """A host the user pointed at: an npm prefix holding pi (and node 22), or the ``pi`` CLI."""
    path = Path(location).expanduser().resolve()
    found = _installation_in(path)
    if found:
        node, cli = found
    elif path.is_file():
        cli = path
        sibling = path.parent / "node"
        which = shutil.which("node")
        node = sibling if sibling.exists() else Path(which) if which else Path("node")
    else:
        raise HostError(
            f"pi host not found at {path}: expected an npm prefix containing node_modules/.bin/pi, or the pi CLI file"
        )
    return HostInstallation(node=node, cli=cli, version=probe_version(node, cli), managed=False)


def install_managed(progress: Progress | None = None, *, force: bool = False) -> HostInstallation:
    """Install the pinned host into the cache; safe when several processes race to do it."""
    say = progress or (lambda _msg: None)
    prefix = managed_prefix()
    prefix.parent.mkdir(parents=True, exist_ok=True)
    with open(prefix.parent / ".install.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # another worker may be installing; wait for it
        if force and prefix.exists():
            shutil.rmtree(prefix)
        found = _installation_in(prefix)
        if found is None:
            _npm_install(prefix, say)
            found = _installation_in(prefix)
            if found is None:
                raise HostError(f"npm finished but {prefix}/node_modules/.bin/pi or node is missing")
        node, cli = found
        return HostInstallation(node=node, cli=cli, version=probe_version(node, cli), managed=True)


def _npm_install(prefix: Path, say: Progress) -> None:
    npm = shutil.which("npm")
    if npm is None or shutil.which("node") is None:
        raise HostError(
            "cannot install the pi host: npm and node are not on PATH. Install Node.js (18 or newer) with npm, "
            "or point --skill-eval-host (or SKILL_EVAL_HOST) at an existing pi installation"
        )
    package_json, lock = _lock_files()
    staging = Path(tempfile.mkdtemp(prefix=".staging-", dir=prefix.parent))
    try:
        (staging / "package.json").write_bytes(package_json)
        (staging / "package-lock.json").write_bytes(lock)
        say(f"skill-eval: installing pi {pinned_version()} with node 22 into {prefix} (first use; about 350 MB)")
        proc = subprocess.run(
            [npm, "ci", "--no-audit", "--no-fund", "--loglevel=error"],
            cwd=staging,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
        )
        if proc.returncode != 0:
            raise HostError(f"npm ci failed (exit {proc.returncode}) in {staging}:\n{proc.stderr[-2000:]}")
        # The staging dir is renamed into place only when complete: a killed install never
        # leaves a half-populated prefix that looks usable.
        os.replace(staging, prefix)
        say(f"skill-eval: pi {pinned_version()} installed")
    finally:
        if staging.exists():
            shutil.rmtree(staging, ignore_errors=True)


def resolve_host(
    explicit: str | os.PathLike[str] | None = None,
    *,
    install_if_missing: bool = True,
    progress: Progress | None = None,
) -> HostInstallation:
    """Find the host to run: explicit location, then ``SKILL_EVAL_HOST``, then the managed install."""
    location = explicit or os.environ.get(HOST_ENV)
    if location:
        return from_explicit(location)
    prefix = managed_prefix()
    found = _installation_in(prefix)
    if found:
        node, cli = found
        return HostInstallation(node=node, cli=cli, version=managed_version(prefix), managed=True)
    if not install_if_missing or os.environ.get(NO_INSTALL_ENV):
        raise HostError(
            f"the pi host is not installed (looked in {managed_prefix()}); run `skill-eval host install`, "
            "or point --skill-eval-host at an existing pi installation"
        )
    return install_managed(progress or (lambda msg: print(msg, file=sys.stderr, flush=True)))
