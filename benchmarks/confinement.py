#!/usr/bin/env python3
"""What the kernel confinement costs one pi run (issue 27), side by side with a bare pi run.

    python benchmarks/confinement.py [--runs N] [--output PATH]

One prepared variant (private agent dir, workspace, the guard and tool gate, the scripted
stand-in over HTTP) is started N times each way, interleaved: **bare** (pi's argv as the
engine builds it), **landlock-ports** (behind the Landlock wrapper with TCP port rules, the
fallback without a network namespace) and **confined** (the wrapper as the engine prefixes
it: Landlock and a private network namespace whose only way out is the relay, every
request to the model relayed). Each pi run is one JSON-mode prompt answered with one tool
call and a text. CPU is the children's user+system time (``RUSAGE_CHILDREN`` deltas; this
process is a child subreaper, so the relay, orphaned when pi ends, is reaped and counted
here too), wall the run's elapsed time; the median of N is reported, and each way's ratio
to bare. The wrapper's own cost is measured alone too (it execs ``/bin/true``). Nothing is
asserted.
"""

from __future__ import annotations

import argparse
import ctypes
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import tempfile
import time
import warnings
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


PR_SET_CHILD_SUBREAPER = 36


def _reap_orphans(timeout: float = 5.0) -> None:
    """Wait for every orphan reparented to this process (the relay outlives pi by a moment)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            time.sleep(0.002)
    raise RuntimeError("an orphan (the relay?) is still running after the run")


def _timed(argv: list[str], env: dict[str, str], cwd: Path) -> tuple[float, float]:
    cpu, wall = _children_cpu(), time.perf_counter()
    proc = subprocess.run(argv, env=env, cwd=cwd, stdin=subprocess.DEVNULL, capture_output=True, timeout=300)
    _reap_orphans()
    wall, cpu = time.perf_counter() - wall, _children_cpu() - cpu
    if proc.returncode != 0 or b"agent_settled" not in proc.stdout:
        raise RuntimeError(f"pi run failed ({proc.returncode}): {proc.stderr.decode(errors='replace')[-800:]}")
    return cpu, wall


def _prepare(base: Path, server: ScriptedModelServer) -> tuple[LaunchPlan, LaunchPlan, LaunchPlan]:
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
    model = confine.model_endpoints("scripted", {"scripted": server.provider_config(["bench"])})
    roots = confine.variant_roots(base, workspace, [], [], None, None, [gate.parent / "active-tools.jsonl"], host,
                                  compile_cache)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # auto's one warning about the namespace left out on purpose
        ports = confine.confine_variant(Settings("auto"), roots, model, base, netns_gap="left out to measure it")
    ports_rules = Path(ports.wrapper[-1]).with_name("confinement-ports.rules")
    os.replace(ports.wrapper[-1], ports_rules)
    confined = confine.confine_variant(Settings("required"), roots, model, base, netns_gap="")
    if confined.record["network"]["mechanism"] != "namespace" or ports.record["network"]["mechanism"] != "landlock-ports":
        raise RuntimeError("the two confined ways are not what they claim")
    confine.warm_compile_cache(str(host.node), str(host.cli), str(compile_cache))

    def behind(wrapper: tuple[str, ...]) -> LaunchPlan:
        return LaunchPlan(**{**{f: getattr(plan, f) for f in plan.__dataclass_fields__}, "wrapper": wrapper})

    return plan, behind((*ports.wrapper[:-1], str(ports_rules))), behind(confined.wrapper)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=15, help="pi runs each way (default 15)")
    parser.add_argument("--output", type=Path, default=RESULTS / "confinement.json")
    args = parser.parse_args()
    abi = confine.kernel_abi()
    if abi < 4:
        print(f"this kernel has Landlock ABI {abi}: nothing to measure", file=sys.stderr)
        return 1
    if gap := confine.netns_unavailable():
        print(f"no network namespace here ({gap}): nothing to measure", file=sys.stderr)
        return 1
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    server = ScriptedModelServer()
    server.start()
    ways = ("bare", "landlock-ports", "confined")
    samples: dict[str, list[tuple[float, float]]] = {k: [] for k in (*ways, "wrapper-alone (ports)",
                                                                      "wrapper-alone (namespace)")}
    try:
        with tempfile.TemporaryDirectory(prefix="skill-eval-confine-bench-") as tmp:
            plans = dict(zip(ways, _prepare(Path(tmp) / "variant", server), strict=True))
            for plan in plans.values():  # warm the page cache and the compile cache, untimed
                _timed(plan.argv(), plan.env(), plan.workspace)
            for i in range(args.runs):
                order = list(plans.items())
                for name, plan in order[i % 3:] + order[:i % 3]:
                    samples[name].append(_timed(plan.argv(), plan.env(), plan.workspace))
                for label, way in (("ports", "landlock-ports"), ("namespace", "confined")):
                    wrapper = plans[way].wrapper
                    cpu, wall = _children_cpu(), time.perf_counter()
                    subprocess.run([*wrapper, "/bin/true"], check=True)
                    _reap_orphans()
                    samples[f"wrapper-alone ({label})"].append((_children_cpu() - cpu, time.perf_counter() - wall))
    finally:
        server.stop()
    med = {k: (statistics.median(c for c, _ in v), statistics.median(w for _, w in v)) for k, v in samples.items()}
    report: dict[str, Any] = {
        "when": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "machine": platform.platform(),
        "cpus": os.cpu_count(), "landlock_abi": abi, "runs": args.runs,
        "median_s": {k: {"cpu": round(c, 4), "wall": round(w, 4)} for k, (c, w) in med.items()},
        "cpu_ratio": round(med["confined"][0] / med["bare"][0], 4),
        "wall_ratio": round(med["confined"][1] / med["bare"][1], 4),
        "ratios_to_bare": {k: {"cpu": round(med[k][0] / med["bare"][0], 4), "wall": round(med[k][1] / med["bare"][1], 4)}
                           for k in ways[1:]},
        "target_cpu_ratio": TARGET_CPU_RATIO,
    }
    print(f"{'':28}{'CPU (median)':>14}{'wall (median)':>15}{'CPU / bare':>12}{'wall / bare':>13}")
    for k, (c, w) in med.items():
        ratio = f"{c / med['bare'][0]:>12.3f}{w / med['bare'][1]:>13.3f}" if k in ways else ""
        print(f"{k:28}{c * 1000:>11.1f} ms{w * 1000:>12.1f} ms{ratio}")
    print(f"confined (Landlock + namespace) / bare: CPU {report['cpu_ratio']:.3f}, wall {report['wall_ratio']:.3f} "
          f"(target CPU <= {TARGET_CPU_RATIO})")
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(report, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
