"""How one variant's pi process is launched: argv, environment and private config.

Every variant gets its own agent dir and HOME, a pinned ``settings.json`` (retries,
provider SDK retries, compaction and cache warming off) and flags that switch off every
kind of ambient discovery; declared skills and extensions are passed explicitly.
"""

from __future__ import annotations

import json
import os
import shutil
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any, Literal, Mapping, Sequence

from .install import HostInstallation

#: Settings pinned in every private agent dir (see reference: retries would re-run turns).
PINNED_SETTINGS: dict[str, Any] = {
    "retry": {"enabled": False, "provider": {"maxRetries": 0}},
    "compaction": {"enabled": False},
    "cacheWarming": "off",
    "enableInstallTelemetry": False,
    "enableAnalytics": False,
    "quietStartup": True,
    "defaultProjectTrust": "never",
}

Mode = Literal["json", "rpc"]


@dataclass(frozen=True, slots=True)
class LaunchPlan:
    """Everything needed to start one pi process for one variant."""

    host: HostInstallation
    mode: Mode
    workspace: Path
    agent_dir: Path
    home: Path
    skills: tuple[Path, ...]
    extensions: tuple[Path, ...]
    tools: tuple[str, ...]
    provider: str
    model: str
    thinking: str | None
    session_dir: Path | None
    prompts: tuple[str, ...] = ()
    literal_env: tuple[tuple[str, str], ...] = ()
    inherited_env: Mapping[str, str] = field(default_factory=dict, compare=False, repr=False)
    extra_env: tuple[tuple[str, str], ...] = ()
    #: node's compile cache for pi's own bundle, shared across runs (None: disabled)
    compile_cache: Path | None = None

    def argv(self) -> list[str]:
        args = [
            "--mode", self.mode, "--offline", "--no-approve",
            "--provider", self.provider, "--model", self.model,
            "--no-extensions", "--no-skills", "--no-context-files", "--no-prompt-templates", "--no-themes",
        ]  # fmt: skip
        args += ["--session-dir", str(self.session_dir)] if self.session_dir else ["--no-session"]
        if self.thinking:
            args += ["--thinking", self.thinking]
        for ext in self.extensions:
            args += ["--extension", str(ext)]
        for skill in self.skills:
            args += ["--skill", str(skill)]
        args += ["--tools", ",".join(self.tools)] if self.tools else ["--no-tools"]
        if self.mode == "json":
            args += list(self.prompts)
        return self.host.argv(*args)

    def env(self) -> dict[str, str]:
        """The child's whole environment: a small baseline plus declared values only."""
        env = {
            # node 22 first, so anything the host spawns runs on the same runtime
            "PATH": os.pathsep.join([str(self.host.bin_dir), "/usr/local/bin", "/usr/bin", "/bin"]),
            "HOME": str(self.home),
            "PI_CODING_AGENT_DIR": str(self.agent_dir),
            "PI_OFFLINE": "1",
            "PI_SKIP_VERSION_CHECK": "1",
            "PI_TELEMETRY": "0",
            "TMPDIR": str(self.home / "tmp"),
            "NO_PROXY": "127.0.0.1,localhost",
            "LANG": "C.UTF-8",
        }
        if self.compile_cache is not None:
            # V8 code cache of the host's own modules: ~20 % of every pi start, no behaviour
            env["NODE_COMPILE_CACHE"] = str(self.compile_cache)
        else:
            env["NODE_DISABLE_COMPILE_CACHE"] = "1"
        env.update(self.extra_env)
        env.update(self.literal_env)
        env.update(self.inherited_env)
        return env

    def redacted_env(self) -> dict[str, str]:
        """The environment as evidence may show it: inherited values never appear."""
        env = self.env()
        for name in self.inherited_env:
            env[name] = "<inherited, not recorded>"
        return env


def write_agent_config(
    agent_dir: Path,
    home: Path,
    providers: Mapping[str, Any],
    *,
    user_models: Path | None = None,
    auth_file: Path | None = None,
) -> None:
    """Create the private agent dir and HOME: pinned settings, merged providers, auth."""
    agent_dir.mkdir(parents=True, exist_ok=True)
    (home / "tmp").mkdir(parents=True, exist_ok=True)
    merged: dict[str, Any] = {}
    if user_models is not None:
        data = json.loads(user_models.read_text(encoding="utf-8"))
        merged.update(data.get("providers", {}))
    merged.update(providers)
    (agent_dir / "settings.json").write_text(json.dumps(PINNED_SETTINGS, indent=2), encoding="utf-8")
    (agent_dir / "models.json").write_text(json.dumps({"providers": merged}, indent=2), encoding="utf-8")
    if auth_file is not None:
        target = agent_dir / "auth.json"
        shutil.copyfile(auth_file, target)
        target.chmod(0o600)


def bundled_extension(name: str) -> Path:
    """Path of an extension shipped in this package (e.g. ``guard.mjs``)."""
    return Path(str(resources.files("pytest_skill_eval.host") / "extensions" / name))


#: Where each template extension takes its inlined configuration (see guard.mjs).
_CONFIG_SLOTS = {"guard.mjs": "/*SKILL_EVAL_GUARD_CONFIG*/ null", "observer.mjs": "/*SKILL_EVAL_OBSERVER_CONFIG*/ null"}
#: Modules a configured extension imports from beside itself.
_COMPANIONS = {"guard.mjs": ("guard-paths.mjs",)}


def configured_extension(name: str, dest: Path, config: Mapping[str, Any]) -> Path:
    """Write a copy of bundled extension ``name`` into ``dest`` with ``config`` inlined.

    The configuration becomes a JSON literal in the module itself (ASCII-only JSON is a
    valid JavaScript expression), so nothing the subject controls, neither an
    environment variable nor a file path, can redirect or replace it. ``dest`` must lie
    outside the workspace.
    """
    template = bundled_extension(name).read_text(encoding="utf-8")
    slot = _CONFIG_SLOTS[name]
    if template.count(slot) != 1:
        raise RuntimeError(f"bundled extension {name} has no single configuration slot")
    dest.mkdir(parents=True, exist_ok=True)
    for companion in _COMPANIONS.get(name, ()):
        shutil.copyfile(bundled_extension(companion), dest / companion)
    literal = json.dumps(config, ensure_ascii=True, sort_keys=True)
    target = dest / name
    target.write_text(template.replace(slot, literal), encoding="utf-8")
    return target


def allowed_roots_config(workspace: Path, read_roots: Sequence[Path]) -> dict[str, Any]:
    """The guard's configuration: where reads and writes may land (canonical paths)."""
    return {
        "workspace": os.path.realpath(workspace),
        "readRoots": [os.path.realpath(p) for p in read_roots],
    }
