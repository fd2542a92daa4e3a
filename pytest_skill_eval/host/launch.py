"""How one variant's pi process is launched: argv, environment and private config.

Every variant gets its own agent dir and HOME, a pinned ``settings.json`` (retries,
provider SDK retries, compaction and cache warming off) and flags that switch off every
kind of ambient discovery; declared skills and extensions are passed explicitly.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from importlib import resources
from pathlib import Path
from typing import Any, Literal

from pytest_skill_eval.definitions.rules import TOOL_NAME, UNSUPPORTED_TOOLS
from pytest_skill_eval.envpolicy import inherit_refusal, literal_refusal
from pytest_skill_eval.errors import LaunchRefusedError
from pytest_skill_eval.execlimits import MAX_ARG_STRLEN, exec_size, fits_one_exec_string
from pytest_skill_eval.host.install import HostInstallation

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

#: The emergency ceiling of one run (the driver's safeguard): far above any normal turn.
EMERGENCY_CEILING_S = 4 * 3600.0

#: pi's provider clients send a 300 s request timeout by default, which ends a long thinking
#: turn as a failure; the spec imposes no short time caps, so every run gets the emergency
#: ceiling unless an explicit value is given (--skill-eval-provider-timeout)
DEFAULT_PROVIDER_TIMEOUT_S = EMERGENCY_CEILING_S


def pinned_settings(provider_timeout_s: float = DEFAULT_PROVIDER_TIMEOUT_S) -> dict[str, Any]:
    """``settings.json`` of a variant: :data:`PINNED_SETTINGS` with the provider request timeout."""
    retry = dict(PINNED_SETTINGS["retry"])
    retry["provider"] = {**retry["provider"], "timeoutMs": round(provider_timeout_s * 1000)}
    return {**PINNED_SETTINGS, "retry": retry}


Mode = Literal["json", "rpc"]



def refuse_unsafe_tools(tools: Sequence[str]) -> None:
    """Raise :class:`LaunchRefusedError` for a tool list the host must not get.

    pi splits ``--tools`` on commas, trims, and reads ``+name``/``-name`` as modifiers and
    ``*`` as a pattern, and offers no escaping, so every name must follow the loader's
    syntax before the list is joined; anything else is refused, never escaped. pi's native
    tools that take paths or commands the guard does not judge are refused too.
    """
    for tool in tools:
        if not TOOL_NAME.match(tool):
            raise LaunchRefusedError(f"tool name {tool!r} is not a plain identifier (a letter, then letters, digits, '_' or '-')")
    unguarded = sorted(set(UNSUPPORTED_TOOLS).intersection(tools))
    if unguarded:
        raise LaunchRefusedError(f"native tool(s) {unguarded} would run unguarded")
    if len(set(tools)) != len(tools):
        raise LaunchRefusedError(f"tool list {list(tools)!r} names a tool twice")


def arg_max() -> int:
    """This machine's ``ARG_MAX`` (``getconf ARG_MAX``: a quarter of the stack limit on Linux)."""
    try:
        return max(int(os.sysconf("SC_ARG_MAX")), MAX_ARG_STRLEN)
    except (ValueError, OSError):
        return MAX_ARG_STRLEN


def launch_mode(description_prompt: bool, prompts: Sequence[str]) -> Mode:
    """JSON mode for a one-prompt description group, RPC otherwise.

    In JSON mode the prompt is a command-line argument, and pi reads a positional argument
    starting with ``@`` as a file to attach, even after ``--``: such a prompt is sent over
    RPC instead, where pi takes it as text. So is a prompt that cannot be one argv string
    (a NUL, or :data:`MAX_ARG_STRLEN` bytes or more), and :meth:`LaunchPlan.fitted` moves
    a plan to RPC when its whole argv and environment would pass ``ARG_MAX``.
    """
    if description_prompt and len(prompts) == 1 and not prompts[0].startswith("@") and fits_one_exec_string(prompts[0]):
        return "json"
    return "rpc"


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
    #: None (with ``model`` None): no ``--provider``/``--model``, pi picks its own default
    provider: str | None
    model: str | None
    thinking: str | None
    session_dir: Path | None
    prompts: tuple[str, ...] = ()
    literal_env: tuple[tuple[str, str], ...] = ()
    inherited_env: Mapping[str, str] = field(default_factory=dict, compare=False, repr=False)
    #: node's compile cache for pi's own bundle, shared across runs (None: disabled)
    compile_cache: Path | None = None
    #: the kernel confinement's exec wrapper pi starts through (empty: unconfined)
    wrapper: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        refuse_unsafe_tools(self.tools)
        if self.mode == "json" and any(p.startswith("@") for p in self.prompts):
            raise LaunchRefusedError("a prompt starting with '@' would be read by pi as a file to attach")
        checks = [(name, literal_refusal) for name, _ in self.literal_env]
        checks += [(name, inherit_refusal) for name in self.inherited_env]
        for name, refusal in checks:
            why = refusal(name)
            if why is not None:
                raise LaunchRefusedError(f"environment variable {name!r} is reserved ({why})")

    def fitted(self, limit: int | None = None) -> LaunchPlan:
        """This plan, or in RPC mode when its JSON-mode argv and environment would not fit one
        ``execve`` (:func:`exec_size` over *limit*, this machine's :func:`arg_max` by default):
        a prompt of any size is delivered, over RPC's stdin when not as an argument."""
        if self.mode != "json" or exec_size(self.argv(), self.env()) <= (limit if limit is not None else arg_max()):
            return self
        return replace(self, mode="rpc")

    def argv(self) -> list[str]:
        args = [
            "--mode", self.mode, "--offline", "--no-approve",
            *(["--provider", self.provider] if self.provider else []),
            *(["--model", self.model] if self.model else []),
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
            # after "--" every argument is a message, however it starts
            args += ["--", *self.prompts]
        return [*self.wrapper, *self.host.argv(*args)]

    def env(self) -> dict[str, str]:
        """The child's whole environment: declared values, then the evaluator's own on top.

        Reserved names never come from a definition (the loader and ``__post_init__``
        refuse them); should one get here anyway it is dropped, and every value the
        evaluator sets is applied last, so it always wins.
        """
        env = {name: value for name, value in self.literal_env if literal_refusal(name) is None}
        env.update((name, value) for name, value in self.inherited_env.items() if inherit_refusal(name) is None)
        env.update(self._own_env())
        return env

    def _own_env(self) -> dict[str, str]:
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
    provider_timeout_s: float = DEFAULT_PROVIDER_TIMEOUT_S,
) -> None:
    """Create the private agent dir and HOME: pinned settings, merged providers, auth."""
    agent_dir.mkdir(parents=True, exist_ok=True)
    (home / "tmp").mkdir(parents=True, exist_ok=True)
    merged: dict[str, Any] = {}
    if user_models is not None:
        data = json.loads(user_models.read_text(encoding="utf-8"))
        merged.update(data.get("providers", {}))
    merged.update(providers)
    (agent_dir / "settings.json").write_text(json.dumps(pinned_settings(provider_timeout_s), indent=2), encoding="utf-8")
    (agent_dir / "models.json").write_text(json.dumps({"providers": merged}, indent=2), encoding="utf-8")
    if auth_file is not None:
        target = agent_dir / "auth.json"
        shutil.copyfile(auth_file, target)
        target.chmod(0o600)


def bundled_extension(name: str) -> Path:
    """Path of an extension shipped in this package (e.g. ``guard.mjs``)."""
    return Path(str(resources.files("pytest_skill_eval.host") / "extensions" / name))


def write_tool_gate(dest: Path, tools: Sequence[str]) -> Path:
    """This variant's copy of the tool gate, with the declared tool list inlined.

    The list is checked before it is written into the module. The gate records the active
    tools in ``active-tools.jsonl`` beside itself, so *dest* must lie outside the workspace.
    """
    refuse_unsafe_tools(tools)
    return configured_extension("tool-gate.mjs", dest, {"declared": list(tools)})


#: Where each template extension takes its inlined configuration (see guard.mjs).
_CONFIG_SLOTS = {
    "guard.mjs": "/*SKILL_EVAL_GUARD_CONFIG*/ null",
    "observer.mjs": "/*SKILL_EVAL_OBSERVER_CONFIG*/ null",
    "tool-gate.mjs": "/*SKILL_EVAL_TOOL_GATE_CONFIG*/ null",
}
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
