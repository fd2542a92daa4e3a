"""The fixed costs of issue 18: collection of a large suite and ``view`` of a large result.

    python benchmarks/fixed.py [--collect-groups 1000] [--view-groups 500] [--repeats 7]

* collect   ``pytest --skill-eval suite.json --collect-only -q`` on a generated suite of
            N groups (``run.make_suite``: the quickstart groups cycled with new ids), in a
            fresh interpreter with plugin autoloading off, as ``run.py`` runs it.
* view      ``skill-eval view <result>`` on a stored result of M groups. The result is
            built cheaply: the quickstart suite runs once through the plugin (2 groups,
            4 pi runs, untimed), then ``run.make_view_result`` copies its richest group
            directory M times with consistent ``group.json``/``grade.json`` ids and
            positions and writes ``selection.json``/``result.json`` for the batch.

The measured package is byte-compiled first, as ``run.py`` does (an editable install or a
snapshot has no bytecode, and with ``PYTHONDONTWRITEBYTECODE`` set every timed process would
compile it from source). Each measure is repeated; wall and CPU (user+sys of the child) are
reported as best and median, with the 1-minute load average after each repeat. Best of N is the figure to compare on a shared machine: load from elsewhere only
ever adds time. Nothing is asserted. Output: a table on stdout and, with ``--output``, JSON.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import run as bench  # noqa: E402  (the sibling benchmark module)


def timed(argv: Sequence[str], cwd: Path, env: dict[str, str]) -> tuple[float, float, subprocess.CompletedProcess[str]]:
    """Wall and child CPU of one command, spawn to exit."""
    before = bench.cpu_seconds(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    proc = subprocess.run(list(argv), cwd=cwd, env=env, stdin=subprocess.DEVNULL, capture_output=True,
                          text=True, timeout=bench.SUBPROCESS_TIMEOUT)
    wall = time.perf_counter() - started
    cpu = bench.cpu_seconds(resource.RUSAGE_CHILDREN) - before
    if proc.returncode != 0:
        raise bench.BenchError(f"{' '.join(argv)} exited {proc.returncode}:\n{(proc.stdout + proc.stderr)[-3000:]}")
    return wall, cpu, proc


def summary(walls: Sequence[float], cpus: Sequence[float]) -> dict[str, Any]:
    return {
        "wall_best_s": round(min(walls), 4),
        "wall_median_s": round(statistics.median(walls), 4),
        "cpu_best_s": round(min(cpus), 4),
        "cpu_median_s": round(statistics.median(cpus), 4),
        "walls_s": [round(w, 4) for w in walls],
        "cpus_s": [round(c, 4) for c in cpus],
    }


def pytest_env() -> dict[str, str]:
    env = dict(os.environ)
    env.update(PYTEST_DISABLE_PLUGIN_AUTOLOAD="1", PYTEST_PLUGINS=bench.PLUGIN)
    return env


def measure_collect(work: Path, groups: int, repeats: int) -> dict[str, Any]:
    root = bench.make_suite(work / "collect", groups)
    argv = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *bench.suite_args("--collect-only")]
    walls: list[float] = []
    cpus: list[float] = []
    for r in range(repeats):
        wall, cpu, proc = timed(argv, root, pytest_env())
        found = re.search(r"(\d+) tests? collected", proc.stdout + proc.stderr)
        if not found or int(found[1]) != groups:
            raise bench.BenchError(f"collect-only did not collect {groups} items:\n{proc.stdout[-2000:]}")
        walls.append(wall)
        cpus.append(cpu)
        print(f"fixed: collect {r + 1}/{repeats}: {wall:.3f} s wall, {cpu:.3f} s CPU, load {os.getloadavg()[0]:.1f}",
              file=sys.stderr)
    return {"groups": groups, **summary(walls, cpus)}


def build_view_result(work: Path, groups: int) -> tuple[Path, str]:
    """Run the quickstart suite once (untimed) and replicate its richest group *groups* times."""
    source = bench.make_suite(work / "template", 2)
    run = bench.run_pytest(source, bench.suite_args(), expect=(0, 1))
    if run.result_dir is None:
        raise bench.BenchError(f"the template run left no result:\n{run.output[-2000:]}")
    root = work / "view"
    root.mkdir()
    return root, bench.make_view_result(run.result_dir, root, groups)


def measure_view(root: Path, result_id: str, groups: int, repeats: int) -> dict[str, Any]:
    argv = [*bench.skill_eval_command(), "view", result_id]
    walls: list[float] = []
    cpus: list[float] = []
    size = 0
    for r in range(repeats):
        wall, cpu, proc = timed(argv, root, dict(os.environ))
        size = len(proc.stdout.encode())
        walls.append(wall)
        cpus.append(cpu)
        print(f"fixed: view {r + 1}/{repeats}: {wall:.3f} s wall, {cpu:.3f} s CPU, load {os.getloadavg()[0]:.1f}",
              file=sys.stderr)
    return {"groups": groups, "output_bytes": size, **summary(walls, cpus)}


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--collect-groups", type=int, default=1000)
    parser.add_argument("--view-groups", type=int, default=500)
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--only", choices=("collect", "view"), default=None)
    parser.add_argument("--output", type=Path, default=None, help="also write the figures as JSON")
    parser.add_argument("--keep", action="store_true", help="keep the temporary directory")
    args = parser.parse_args(argv)
    work = Path(tempfile.mkdtemp(prefix="skill-eval-fixed-"))
    # the untimed template run's scratch lives in this private TMPDIR: an evaluator elsewhere on
    # the machine cannot sweep it as stale
    os.environ.setdefault("TMPDIR", str(work))
    import pytest_skill_eval  # the package that is measured (a snapshot first on PYTHONPATH wins)

    report: dict[str, Any] = {"package": bench.package_provenance(Path(pytest_skill_eval.__file__).parent),
                              "loadavg_start": os.getloadavg(), "repeats": args.repeats,
                              # as run.py: no measured process compiles the package from source
                              "bytecode": bench.byte_compile()}
    try:
        if args.only in (None, "collect"):
            report["collect"] = measure_collect(work, args.collect_groups, args.repeats)
        if args.only in (None, "view"):
            root, result_id = build_view_result(work, args.view_groups)
            report["view"] = measure_view(root, result_id, args.view_groups, args.repeats)
    finally:
        if args.keep:
            print(f"fixed: kept {work}", file=sys.stderr)
        else:
            shutil.rmtree(work, ignore_errors=True)
    report["loadavg_end"] = os.getloadavg()
    for name in ("collect", "view"):
        if name in report:
            m = report[name]
            print(f"{name:8} {m['groups']:5d} groups  wall best {m['wall_best_s']:.3f} s  median {m['wall_median_s']:.3f} s"
                  f"  CPU best {m['cpu_best_s']:.3f} s  median {m['cpu_median_s']:.3f} s")
    print(f"load average {report['loadavg_start']} -> {report['loadavg_end']}")
    if args.output:
        args.output.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
