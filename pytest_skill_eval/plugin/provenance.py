"""What produced a result, for ``result.json`` ``provenance``: versions, selection, settings, arguments.

Written by the controller (or the only process) at session end. The pi hosts are read
from the runs' own records, since under xdist only the workers resolved a host. The
argument list is redacted: every value a group inherits from the environment, every
secret of the configured auth file, and the value of every environment variable whose
name says it holds a credential (``*_KEY``, ``*_TOKEN``, ``*_SECRET``, ``*PASSWORD*``, …)
is replaced by the redaction marker wherever it occurs in an argument.
"""

from __future__ import annotations

import platform
import re
import subprocess
from collections.abc import Mapping
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from pytest_skill_eval.evidence import layout
from pytest_skill_eval.evidence.reader import read_optional
from pytest_skill_eval.evidence.records import DefinitionRecord, ProvenanceRecord, RunRecord

if TYPE_CHECKING:
    from pytest_skill_eval.plugin.session import SkillEvalSession

#: environment names that hold credentials by convention
_SECRET_NAME = re.compile(r"(KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL|AUTH|COOKIE|SESSION)", re.IGNORECASE)


def _version(distribution: str) -> str | None:
    try:
        return metadata.version(distribution)
    except metadata.PackageNotFoundError:
        return None


def python_versions() -> dict[str, str | None]:
    from pytest_skill_eval import __version__

    return {"pytest-skill-eval": __version__, "python": platform.python_version(), "pytest": pytest.__version__,
            "pytest-xdist": _version("pytest-xdist")}


def _node_version(node: str, cache: dict[str, str | None]) -> str | None:
    if node not in cache:
        try:
            done = subprocess.run([node, "--version"], capture_output=True, text=True, timeout=30, check=False)
            cache[node] = (done.stdout.strip() or None) if done.returncode == 0 else None
        except (OSError, subprocess.SubprocessError):
            cache[node] = None
    return cache[node]


def _run_files(result_dir: Path) -> list[Path]:
    """Every run record of the result, and nothing a subject wrote into a stored workspace."""
    patterns = ("groups/*/{v}/run.json", "groups/*/{v}-attempts/*/run.json", "groups/*/trials/*/{v}/run.json",
                "groups/*/trials/*/{v}-attempts/*/run.json")
    return sorted({p for pattern in patterns for v in ("baseline", "candidate")
                   for p in result_dir.glob(pattern.format(v=v))})


def hosts_used(result_dir: Path) -> tuple[dict[str, str | None], ...]:
    """The distinct pi hosts the runs of *result_dir* ran on: pi and node versions."""
    seen: dict[tuple[str, str], dict[str, str | None]] = {}
    nodes: dict[str, str | None] = {}
    for path in _run_files(result_dir):
        run = read_optional(RunRecord, path)
        if not isinstance(run, RunRecord) or run.ran is None:
            continue
        host = run.ran.host
        key = (str(host.get("version")), str(host.get("node")))
        if key not in seen:
            node = str(host.get("node") or "")
            seen[key] = {"pi": str(host.get("version")) if host.get("version") is not None else None,
                         "node": _node_version(node, nodes) if node else None}
    return tuple(seen[k] for k in sorted(seen))


def argv_secrets(result_dir: Path, env: Mapping[str, str], auth_file: Path | None) -> list[str]:
    """Every value the argument list must not show (see the module docstring)."""
    from pytest_skill_eval.redaction import unsafe_reason
    from pytest_skill_eval.sources.isolation import auth_secrets

    names = {name for name in env if _SECRET_NAME.search(name)}
    for group_dir in layout.group_dirs(result_dir):
        record = read_optional(DefinitionRecord, group_dir / "definition.json")
        if isinstance(record, DefinitionRecord):
            runtime = record.definition.get("runtime") or {}
            names.update(str(n) for n in (runtime.get("environment") or {}).get("inherit", []))
    values = [env[n] for n in sorted(names) if n in env and unsafe_reason(env[n]) is None]
    return [*values, *auth_secrets(auth_file).values()]


def redacted(values: list[str], secrets: list[str]) -> list[str]:
    """*values* with every spelling of every secret replaced by the redaction marker."""
    from pytest_skill_eval.redaction import Redactor

    redactor = Redactor.of(secrets)
    return [redactor.text(str(v))[0] for v in values]


def build_provenance(session: SkillEvalSession, env: Mapping[str, str]) -> ProvenanceRecord:
    """The provenance of *session*'s result, from its configuration and its persisted runs."""
    config = session.config
    opt = config.getoption
    auth = Path(opt("skill_eval_auth")).resolve() if opt("skill_eval_auth") else None
    settings = session.settings

    def shown(path: Path) -> str:
        return path.relative_to(session.root).as_posix() if path.is_relative_to(session.root) else str(path)

    secrets = argv_secrets(session.result_dir, env, auth)

    def clean(value: str | None) -> str | None:
        return redacted([value], secrets)[0] if value else None

    selection: dict[str, Any] = {
        "paths": [shown(p) for p in session.declared] if session.rerun is None else [],
        "keyword": clean(opt("keyword")),
        "markers": clean(opt("markexpr")),
        "group": clean(session.group_selector),
        "variants": sorted(session.selected),
        "workers": str(opt("numprocesses", None)) if opt("numprocesses", None) not in (None, 0) else None,
    }
    return ProvenanceRecord(
        versions=python_versions(),
        hosts=hosts_used(session.result_dir),
        selection=selection,
        fail_on=session.fail_on,
        trials=settings.count,
        seed=settings.seed,
        pass_rate=settings.pass_rate,
        alpha=settings.alpha,
        provider_timeout_s=settings.provider_timeout_s,
        rerun_infra=settings.rerun_infra,
        argv=tuple(redacted(list(config.invocation_params.args), secrets)),
        rerun_of=session.rerun.result_id if session.rerun is not None else None,
        repeat_limit=settings.repeat_limit,
        stop=settings.stop,
    )
