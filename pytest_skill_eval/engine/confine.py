"""Confining one variant's pi process: the policy from its roots, the wrapper, the record.

:func:`confine_variant` derives the variant's policy (:mod:`pytest_skill_eval.host.confinement`),
writes the rules the Landlock wrapper applies into the variant's private ``host-extensions/``
(with a private network namespace whose only way out is the relay to the model's
endpoint, :mod:`pytest_skill_eval.host.netns`, where this machine can make one) and
returns the argv prefix that starts pi through the wrapper, with what ``run.json`` records.
``required`` refuses a variant this machine cannot confine
(:class:`~pytest_skill_eval.errors.HostError`: the run is ``infrastructure-failed`` and the
reason says what is missing); ``auto`` runs with what the kernel has and says so once.
"""

from __future__ import annotations

import functools
import json
import os
import subprocess
import sys
import tempfile
import threading
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from pytest_skill_eval.errors import HostError
from pytest_skill_eval.host import landlock, netns
from pytest_skill_eval.host.confinement import (
    NET_ABI,
    Endpoint,
    Network,
    Settings,
    VariantRoots,
    derive,
    missing,
    model_endpoints,
    unavailable_hint,
)
from pytest_skill_eval.host.install import HostInstallation

RULES_FILE = "confinement.rules"
__all__ = ["Confined", "confine_variant", "kernel_abi", "launch", "merged_providers", "model_endpoints", "netns_unavailable",
           "variant_roots", "warn_once"]


@functools.cache
def kernel_abi() -> int:
    """This kernel's Landlock ABI version (0: none), asked once per process."""
    return landlock.abi_version()


@functools.cache
def warn_once(text: str) -> None:
    """*text* as a warning, once per process; where warnings are errors, on stderr instead."""
    try:
        warnings.warn(text, RuntimeWarning, stacklevel=1)
    except Warning:
        sys.stderr.write(text + "\n")


@dataclass(frozen=True, slots=True)
class Confined:
    """How pi starts (an argv prefix; empty: unconfined) and what ``run.json`` records of it."""

    wrapper: tuple[str, ...]
    record: dict[str, Any]


def install_roots(host: HostInstallation) -> tuple[str, ...]:
    """What of the host install pi needs: the npm prefix holding pi (or the CLI's directory) and node."""
    roots: list[str] = []
    cli = os.path.realpath(host.cli)
    parts = Path(cli).parts
    if "node_modules" in parts:
        prefix = Path(*parts[: parts.index("node_modules")])
        roots.append(str(prefix))
    else:
        roots.append(os.path.dirname(cli))
    node = os.path.realpath(host.node)
    if not any(node == r or node.startswith(r + os.sep) for r in roots):
        roots.append(os.path.dirname(node))
    return tuple(roots)


def variant_roots(base: Path, workspace: Path, skills: Sequence[Path], contexts: Sequence[Path],
                  bundles: Path | None, session: Path | None, logs: Sequence[Path], host: HostInstallation,
                  compile_cache: Path | None) -> VariantRoots:
    """The canonical roots of the variant prepared under *base* (files named in *logs* are created)."""
    for log in logs:
        log.touch()
    auth = base / "agent" / "auth.json"
    if not auth.exists():
        # pi creates a missing credential store; confined, it may not create files there
        auth.write_text("{}", encoding="utf-8")
        auth.chmod(0o600)
    if session is not None:
        session.mkdir(parents=True, exist_ok=True)
    real = os.path.realpath
    return VariantRoots(
        workspace=real(workspace), skills=tuple(real(p) for p in skills), contexts=tuple(real(p) for p in contexts),
        bundles=real(bundles) if bundles is not None else None, agent_dir=real(base / "agent"),
        host_extensions=real(base / "host-extensions"), temp=real(base / "home" / "tmp"),
        session=real(session) if session is not None else None, host_install=install_roots(host),
        logs=tuple(real(p) for p in logs), compile_cache=real(compile_cache) if compile_cache is not None else None,
    )


@functools.cache
def netns_unavailable() -> str:
    """Why this machine cannot give pi a private network namespace ('' when it can), asked
    once per process by running :mod:`pytest_skill_eval.host.netns` ``--probe`` (never a
    fork of the evaluator, which runs threads)."""
    if not sys.platform.startswith("linux"):
        return f"network namespaces are Linux only (this is {sys.platform})"
    try:
        probe = subprocess.run([sys.executable, "-I", "-S", str(Path(netns.__file__).resolve()), "--probe"],
                               capture_output=True, text=True, timeout=30, check=False, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"the namespace probe did not run: {exc}"
    if probe.returncode == 0:
        return ""
    return (probe.stdout.strip() or probe.stderr.strip()[-300:] or f"the probe exited with {probe.returncode}")


def confine_variant(settings: Settings, roots: VariantRoots, model: Endpoint | Sequence[Endpoint], base: Path,
                    abi: int | None = None, netns_gap: str | None = None) -> Confined:
    """The wrapper and record for one variant, or :class:`HostError` when ``required`` cannot be met.

    *abi*: the Landlock ABI to plan for (default: this kernel's); *netns_gap*: why no
    network namespace can be made, '' when it can (default: this machine's answer).
    """
    guard = "on" if settings.guard else "off (test-only hook)"
    if settings.mode == "off":
        return Confined((), {"mechanism": "none", "mode": "off", "guard": guard,
                             "reason": "switched off (--skill-eval-confinement off)"})
    abi = kernel_abi() if abi is None else abi
    netns_gap = netns_unavailable() if netns_gap is None else netns_gap
    gaps = missing(abi)
    if abi > 0 and not netns_gap:
        # the namespace rules the network whatever Landlock's network ABI
        gaps = [g for g in gaps if not g.startswith("network")]
    elif abi > 0:
        fallback = "TCP is ruled by port only, on any host, and UDP not at all" if abi >= NET_ABI else "no network rules"
        gaps.insert(0, f"network namespace ({netns_gap}): {fallback}")
    if settings.mode == "required" and (abi <= 0 or netns_gap):
        raise HostError("kernel confinement is required (--skill-eval-confinement required) but this machine "
                        f"cannot enforce {'; '.join(gaps)}: "
                        f"{unavailable_hint(sys.platform) if abi <= 0 else 'allow unprivileged user namespaces'}")
    if abi <= 0:
        hint = unavailable_hint(sys.platform)
        warn_once(f"skill-eval: no kernel confinement on this machine, only the path guard protects the "
                   f"user's files: {hint}")
        return Confined((), {"mechanism": "none", "mode": settings.mode, "guard": guard,
                             "reason": f"unavailable: {hint}"})
    if gaps:
        warn_once("skill-eval: kernel confinement is partial on this machine, not enforced: " + "; ".join(gaps))
    policy = derive(roots, model, allow_read=settings.allow_read, allow_net=settings.allow_net)
    # optional system roots this machine lacks are neither applied nor recorded
    policy = replace(policy, grants=tuple(g for g in policy.grants if not g.optional or os.path.exists(g.path)))
    rules_file = base / "host-extensions" / RULES_FILE
    rules_file.parent.mkdir(parents=True, exist_ok=True)
    network: Network = "namespace" if not netns_gap else "landlock-ports" if abi >= NET_ABI else "none"
    rules_file.write_text(landlock.render_rules(policy.rules(abi, network)), encoding="utf-8")
    names = {os.path.realpath(base): "<variant-scratch>", os.path.realpath(base.parent): "<group-scratch>"}
    wrapper = (sys.executable, "-I", "-S", str(Path(landlock.__file__).resolve()), str(rules_file))
    return Confined(wrapper, {"mechanism": "landlock", "version": f"ABI {abi}", "mode": settings.mode,
                              "guard": guard, "not_enforced": gaps, "network": NETWORK_RECORD[network],
                              "rules": policy.to_json(names, network)})


#: what ``run.json`` says of each network mechanism (the endpoints are in ``rules.connect``)
NETWORK_RECORD: dict[Network, dict[str, str]] = {
    "namespace": {"mechanism": "namespace",
                  "detail": "a private network namespace with only lo; a relay outside it connects each bridged "
                            "port to its one endpoint and the CONNECT proxy to the allowed host:port pairs; "
                            "every other TCP connection, UDP and DNS stay inside"},
    "landlock-ports": {"mechanism": "landlock-ports",
                       "detail": "Landlock TCP port rules only: any host on the allowed ports; UDP and DNS not ruled"},
    "none": {"mechanism": "none", "detail": "the network is not confined by the kernel"},
}


def merged_providers(providers: Mapping[str, Any], user_models: Path | None) -> dict[str, Any]:
    """The provider entries pi reads from the variant's ``models.json`` (the user's, then ours)."""
    merged: dict[str, Any] = {}
    if user_models is not None:
        merged.update(json.loads(user_models.read_text(encoding="utf-8")).get("providers", {}))
    merged.update(providers)
    return merged


_warm_lock = threading.Lock()


@functools.cache
def warm_compile_cache(node: str, cli: str, cache: str) -> None:
    """Fill node's compile cache with pi's own modules once, unconfined, if it is empty.

    A confined run may read the cache but never write it (code other runs load), so on a
    fresh machine nothing would ever fill it: ``pi --version`` loads pi's bundle, no subject.
    """
    with _warm_lock:
        if os.path.isdir(cache) and os.listdir(cache):
            return
        os.makedirs(cache, exist_ok=True)
        with tempfile.TemporaryDirectory(prefix="skill-eval-warm-") as home:
            env = {"PATH": f"{os.path.dirname(node)}{os.pathsep}/usr/bin:/bin", "HOME": home, "PI_OFFLINE": "1",
                   "PI_SKIP_VERSION_CHECK": "1", "PI_TELEMETRY": "0", "NODE_COMPILE_CACHE": cache}
            try:
                subprocess.run([node, cli, "--version"], env=env, cwd=home, stdin=subprocess.DEVNULL,
                               capture_output=True, timeout=120, check=False)
            except (OSError, subprocess.TimeoutExpired):
                pass  # a cold cache costs time, never correctness


def launch(settings: Settings, base: Path, workspace: Path, skills: Sequence[Path], contexts: Sequence[Path],
           bundles: Path | None, session: Path | None, logs: Sequence[Path], host: HostInstallation,
           compile_cache: Path | None, model: Sequence[Endpoint]) -> Confined:
    """:func:`confine_variant` for the variant prepared under *base* (the engine's one call)."""
    if settings.mode == "off":
        return confine_variant(settings, _NO_ROOTS, model, base)
    roots = variant_roots(base, workspace, skills, contexts, bundles, session, logs, host, compile_cache)
    confined = confine_variant(settings, roots, model, base)
    if confined.wrapper and compile_cache is not None:
        warm_compile_cache(str(host.node), str(host.cli), str(compile_cache))
    return confined


_NO_ROOTS = VariantRoots("", (), (), None, "", "", "", None, ())
