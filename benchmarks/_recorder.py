"""pytest plugin loaded only by ``benchmarks/run.py`` for its (untimed) recording run.

The bare floor must start pi exactly as the plugin does: same argv, same environment, same
private agent dir, guard configuration, skills and workspace. Rather than re-implement the
engine's launch preparation (which would drift as the engine changes), the benchmark runs
the plugin once with this recorder. It wraps the engine's calls to the package driver
(``engine.variant.run_json`` / ``engine.variant.run_rpc``) and, for every pi invocation, stores in
``$SKILL_EVAL_BENCH_RECORD_DIR/<NNNN>/``:

* ``scratch/``: a copy of the engine's whole scratch directory taken just before pi starts
  (workspace, agent dir with ``settings.json``/``models.json``, HOME, snapshotted skills,
  guard and observer configuration), to be restored at the same absolute path later;
* ``plan.pickle``: the :class:`~pytest_skill_eval.host.launch.LaunchPlan` itself;
* ``invocation.json``: argv, env, cwd, mode, the prompt messages as actually sent (body
  groups get the ``/skill:<name>`` prefix on turn one), and what the driver saw (outcome,
  number of ``turn_end`` records) for a parity check against the floor.

Script registrations with the scripted stand-in are stored in ``registrations.json`` so the
benchmark can serve the same scripts from its own server.
"""

from __future__ import annotations

import itertools
import json
import os
import pickle
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

ENV = "SKILL_EVAL_BENCH_RECORD_DIR"


def scratch_root(workspace: Path) -> Path:
    """The engine's per-group scratch directory holding *workspace* (top level under TMPDIR)."""
    tmp = Path(tempfile.gettempdir()).resolve()
    path = Path(workspace).resolve()
    if path.is_relative_to(tmp) and path != tmp:
        parts = path.relative_to(tmp).parts
        # the engine's run directories live in a per-user directory (``skill-eval-<uid>/run-…``):
        # copying that whole directory would copy every other process's runs too
        for depth, part in enumerate(parts[:-1]):
            if part.startswith("run-"):
                return tmp.joinpath(*parts[: depth + 1])
        return tmp / parts[0]
    return path.parent.parent


class _Recorder:
    def __init__(self, out: Path) -> None:
        self.out = out
        self.counter = itertools.count(1)
        self.registrations: dict[str, str] = {}

    def wrap(self, mode: str, original: Callable[..., Any]) -> Callable[..., Any]:
        def recorded(plan: Any, *args: Any, **kwargs: Any) -> Any:
            dest = self.out / f"{next(self.counter):04d}"
            scratch = scratch_root(plan.workspace)
            shutil.copytree(scratch, dest / "scratch", symlinks=True)
            run = original(plan, *args, **kwargs)
            # run_rpc's ``sent`` list is completed in place (``/skill:`` delivery) before turn one
            messages = list(args[0]) if mode == "rpc" and args else list(plan.prompts)
            (dest / "plan.pickle").write_bytes(pickle.dumps(plan))
            record = {
                "mode": plan.mode,
                "argv": plan.argv(),
                "env": plan.env(),
                "cwd": str(plan.workspace),
                "scratch": str(scratch),
                "variant": plan.workspace.parent.name,
                "messages": messages,
                "outcome": run.outcome,
                "failure": run.failure,
                "turn_ends": sum(1 for r in run.records if r.type == "turn_end"),
                "records": len(run.records),
            }
            (dest / "invocation.json").write_text(json.dumps(record, indent=2), encoding="utf-8")
            return run

        return recorded

    def registered(self, name: str, script_path: Path) -> None:
        self.registrations[name] = str(Path(script_path).resolve())
        (self.out / "registrations.json").write_text(json.dumps(self.registrations, indent=2), encoding="utf-8")


def pytest_configure(config: pytest.Config) -> None:
    out = os.environ.get(ENV)
    if not out:
        return
    from pytest_skill_eval.engine import variant as engine
    from pytest_skill_eval.scripted import server

    recorder = _Recorder(Path(out))
    recorder.out.mkdir(parents=True, exist_ok=True)
    for mode in ("json", "rpc"):
        name = f"run_{mode}"
        setattr(engine, name, recorder.wrap(mode, getattr(engine, name)))
    original_register = server.ScriptedModelServer.register

    def register(self: Any, name: str, script_path: Path) -> None:
        original_register(self, name, script_path)
        recorder.registered(name, script_path)

    server.ScriptedModelServer.register = register  # type: ignore[method-assign]
