"""CPU per thread of one plugin run, and a CPU-time profile of each thread (nothing is asserted).

The main thread mostly waits for pi; the evaluator's other threads (pi's stdout and stderr
readers, which also feed ``events.jsonl`` and the repeating-subject detector, and the
scripted stand-in's server and request threads) do their work meanwhile. A profiler on the
main thread sees none of it, and a wall-clock profile counts the waiting. This runs pytest
in-process on the benchmark's generated suite with ``threading.Thread.run`` wrapped so that
every thread adds up its own ``time.thread_time()`` and, with ``--profile``, runs under its
own ``cProfile.Profile(time.thread_time)``::

    python benchmarks/threads.py                      # 8 groups, CPU per thread
    python benchmarks/threads.py --groups 4 --profile results/threads.txt

Measure two commits side by side by putting a snapshot first on ``PYTHONPATH`` (see
docs/performance.md) and alternating the runs; compare medians, the machine is shared.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import os
import pstats
import re
import resource
import sys
import tempfile
import threading
import time
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import run as bench  # noqa: E402


def _kind(name: str) -> str:
    """A thread's name without its number: ``Thread-12 (_read_stdout)`` -> ``Thread (_read_stdout)``."""
    return re.sub(r"-\d+$", "", re.sub(r"Thread-\d+", "Thread", name))


def measure(root: Path, profile: bool) -> tuple[dict[str, float], float, float, dict[str, list[cProfile.Profile]]]:
    """Run the suite under *root* once in this process: CPU per thread kind, of the process,
    of its children (pi), and the profiles per thread kind."""
    import pytest

    cpu: dict[str, float] = defaultdict(float)
    profiles: dict[str, list[cProfile.Profile]] = defaultdict(list)
    lock = threading.Lock()
    original = threading.Thread.run

    def run(self: threading.Thread) -> None:
        started = time.thread_time()
        profiler = cProfile.Profile(time.thread_time) if profile else None
        if profiler is not None:
            profiler.enable()
        try:
            original(self)
        finally:
            if profiler is not None:
                profiler.disable()
            with lock:
                cpu[_kind(self.name)] += time.thread_time() - started
                if profiler is not None:
                    profiles[_kind(self.name)].append(profiler)

    threading.Thread.run = run  # type: ignore[method-assign]
    os.environ["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    cwd = Path.cwd()
    os.chdir(root)
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    main = cProfile.Profile(time.thread_time) if profile else None
    started = time.thread_time()
    try:
        if main is not None:
            main.enable()
        code = pytest.main(["-p", "pytest_skill_eval.plugin.hooks", *bench.suite_args()])
    finally:
        if main is not None:
            main.disable()
        cpu["MainThread"] += time.thread_time() - started
        os.chdir(cwd)
        threading.Thread.run = original  # type: ignore[method-assign]
    if code != 0:
        raise bench.BenchError(f"pytest exited {code}")
    own_after = resource.getrusage(resource.RUSAGE_SELF)
    children_after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if main is not None:
        profiles["MainThread"].append(main)
    process = own_after.ru_utime + own_after.ru_stime - own.ru_utime - own.ru_stime
    reaped = children_after.ru_utime + children_after.ru_stime - children.ru_utime - children.ru_stime
    return dict(cpu), process, reaped, dict(profiles)


def report(profiles: dict[str, list[cProfile.Profile]], lines: int = 40, dump: Path | None = None) -> str:
    """The text of every thread's profile; with *dump*, each thread's merged statistics also in
    ``<dump>.<thread>.prof`` (for ``pstats``: callers, callees)."""
    out = io.StringIO()
    for kind, found in sorted(profiles.items()):
        stats = pstats.Stats(found[0], stream=out)
        for more in found[1:]:
            stats.add(more)
        if dump is not None:
            stats.dump_stats(f"{dump}.{re.sub(r'[^A-Za-z0-9_-]+', '-', kind).strip('-')}.prof")
        out.write(f"\n===================== {kind} (CPU time)\n")
        stats.sort_stats("tottime").print_stats(lines)
        stats.sort_stats("cumulative").print_stats(lines)
    return out.getvalue()


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--groups", type=int, default=8)
    parser.add_argument("--profile", type=Path, default=None, help="write each thread's CPU-time profile here")
    args = parser.parse_args(argv)
    work = Path(tempfile.mkdtemp(prefix="skill-eval-threads-"))
    root = bench.make_suite(work / "suite", args.groups)
    cpu, process, reaped, profiles = measure(root, args.profile is not None)
    print(f"process CPU {process:.3f} s, children (pi) CPU {reaped:.3f} s, {args.groups} groups")
    for kind, seconds in sorted(cpu.items(), key=lambda item: -item[1]):
        print(f"  {kind:40s} {seconds:.3f} s")
    if args.profile is not None:
        args.profile.write_text(report(profiles, dump=args.profile), encoding="utf-8")
        print(f"profiles: {args.profile}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
