#!/usr/bin/env python3
"""What the kernel confinement costs one pi run (issue 27), side by side with a bare pi run.

    python benchmarks/confinement.py [--runs N] [--output PATH]

One prepared variant (private agent dir, workspace, the guard and tool gate, the scripted
stand-in over HTTP) is started N times each way, interleaved: **bare** (pi's argv as the
engine builds it) and **confined** (the same argv behind the Landlock wrapper, exactly as
the engine prefixes it). Each pi run is one JSON-mode prompt answered with one tool call
and a text. CPU is the children's user+system time (``RUSAGE_CHILDREN`` deltas), wall the
run's elapsed time; the median of N is reported, and the ratio confined / bare. The
wrapper's own cost is measured alone too (it execs ``/bin/true``). Nothing is asserted.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from pytest_skill_eval.engine import confine
from pytest_skill_eval.host.confinement import Settings
from pytest_skill_eval.host.install import cache_dir, resolve_host
from pytest_skill_eval.host.launch import (
    LaunchPlan,
    allowed_roots_config,
    configured_extension,
    write_agent_config,
    write_tool_gate,
)
from pytest_skill_eval.scripted.server import ScriptedModelServer

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results"
TARGET_CPU_RATIO = 1.02  # the target; reported, never asserted


def _children_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def _timed(argv: list[str], env: dict[str, str], cwd: Path) -> tuple[float, float]:
    cpu, wall = _children_cpu(), time.perf_counter()
    proc = subprocess.run(argv, env=env, cwd=cwd, stdin=subprocess.DEVNULL, capture_output=True, timeout=300)
    wall, cpu = time.perf_counter() - wall, _children_cpu() - cpu
    if proc.returncode != 0 or b"agent_settled" not in proc.stdout:
        raise RuntimeError(f"pi run failed ({proc.returncode}): {proc.stderr.decode(errors='replace')[-800:]}")
    return cpu, wall


def _prepare(base: Path, server: ScriptedModelServer) -> tuple[LaunchPlan, LaunchPlan]:
    host = resolve_host(install_if_missing=True)
    base.mkdir(parents=True)
    script = base.parent / "script.json"
    script.write_text(json.dumps({"schema": "skill-eval-script/1", "turns": [{"steps": [
        {"tool_calls": [{"name": "read", "arguments": {"path": "input.txt"}}]}, {"text": "done"}]}]}))
    server.register("bench", script)
    workspace, agent, home, ext = base / "workspace", base / "agent", base / "home", base / "host-extensions"
    workspace.mkdir()
    (workspace / "input.txt").write_text("hello")
    write_agent_config(agent, home, {"scripted": server.provider_config(["bench"])})
    gate = write_tool_gate(ext, ("read",))
    guard = configured_extension("guard.mjs", ext, {**allowed_roots_config(workspace, []), "deny": [], "context": []})
    compile_cache = cache_dir() / "node-compile-cache" / host.version
    plan = LaunchPlan(host=host, mode="json", workspace=workspace, agent_dir=agent, home=home, skills=(),
                      extensions=(guard, gate), tools=("read",), provider="scripted", model="bench", thinking=None,
                      session_dir=None, prompts=("Go.",), compile_cache=compile_cache)
    confined = confine.launch(Settings("required"), base, workspace, [], [], None, None,
                              [gate.parent / "active-tools.jsonl"], host, compile_cache,
                              confine.model_endpoints("scripted", {"scripted": server.provider_config(["bench"])}))
    return plan, LaunchPlan(**{**{f: getattr(plan, f) for f in plan.__dataclass_fields__}, "wrapper": confined.wrapper})


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=15, help="pi runs each way (default 15)")
    parser.add_argument("--output", type=Path, default=RESULTS / "confinement.json")
    args = parser.parse_args()
    abi = confine.kernel_abi()
    if abi < 4:
        print(f"this kernel has Landlock ABI {abi}: nothing to measure", file=sys.stderr)
        return 1
    server = ScriptedModelServer()
    server.start()
    samples: dict[str, list[tuple[float, float]]] = {"bare": [], "confined": [], "wrapper-alone": []}
    try:
        with tempfile.TemporaryDirectory(prefix="skill-eval-confine-bench-") as tmp:
            bare, confined = _prepare(Path(tmp) / "variant", server)
            for plan in (bare, confined):  # warm the page cache and the compile cache, untimed
                _timed(plan.argv(), plan.env(), plan.workspace)
            rules = confined.wrapper[-1]
            for i in range(args.runs):
                order = [("bare", bare), ("confined", confined)]
                for name, plan in order if i % 2 == 0 else order[::-1]:
                    samples[name].append(_timed(plan.argv(), plan.env(), plan.workspace))
                cpu, wall = _children_cpu(), time.perf_counter()
                subprocess.run([*confined.wrapper[:-1], rules, "/bin/true"], check=True)
                samples["wrapper-alone"].append((_children_cpu() - cpu, time.perf_counter() - wall))
    finally:
        server.stop()
    med = {k: (statistics.median(c for c, _ in v), statistics.median(w for _, w in v)) for k, v in samples.items()}
    report: dict[str, Any] = {
        "when": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "machine": platform.platform(),
        "cpus": os.cpu_count(), "landlock_abi": abi, "runs": args.runs,
        "median_s": {k: {"cpu": round(c, 4), "wall": round(w, 4)} for k, (c, w) in med.items()},
        "cpu_ratio": round(med["confined"][0] / med["bare"][0], 4),
        "wall_ratio": round(med["confined"][1] / med["bare"][1], 4),
        "target_cpu_ratio": TARGET_CPU_RATIO,
    }
    print(f"{'':16}{'CPU (median)':>14}{'wall (median)':>15}")
    for k, (c, w) in med.items():
        print(f"{k:16}{c * 1000:>11.1f} ms{w * 1000:>12.1f} ms")
    print(f"confined / bare: CPU {report['cpu_ratio']:.3f}, wall {report['wall_ratio']:.3f} "
          f"(target CPU <= {TARGET_CPU_RATIO})")
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(report, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
