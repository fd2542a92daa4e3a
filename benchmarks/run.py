#!/usr/bin/env python3
"""Benchmark pytest-skill-eval against the bare cost of the pi invocations it makes.

    python benchmarks/run.py [--groups N] [--quick] [--repeats R] [--profile] [--keep]

Everything is measured in one run, on this machine, against the embedded scripted
stand-in model and the same generated suite (the quickstart groups copied N times with
distinct ids). Timed measurements are repeated and interleaved (the order rotates every
repeat) and the median is reported. Nothing here asserts a time.

Measures (see docs/performance.md for what each number means):

* overhead   plugin wall time for N groups / the bare floor: the very same pi invocations
             (byte-identical argv, environment, agent dir, skills, workspace, prompts)
             started one after another by a minimal raw-subprocess driver, with no
             evidence and no grading. A second floor uses the package's own driver
             (``host.driver.run_json``/``run_rpc``) to split driver cost from the rest.
* scaling    the same suite with ``-n 1``, ``-n 2``, ``-n 4`` (pytest-xdist), ratio to ``-n 1``;
             and the raw floor on 2 concurrent lanes: the best ``-n 2`` could do on this machine.
* collection ``pytest --collect-only -q`` of a generated suite of 1,000 groups.
* view       ``skill-eval view <result>`` on a stored result of 500 groups (one real group
             directory copied 500 times).
* evidence   bytes written per run relative to the raw event stream (``events.jsonl``).
* memory     peak RSS of the pytest process (and of the largest pi process it started).
* what-if    the plugin again with the changes docs/performance.md proposes, applied in
             the measured process by ``_whatif.py`` (skipped with ``--quick``/``--no-what-if``).

The pytest processes run with plugin autoloading off and only the plugins under test
(``pytest_skill_eval.plugin.hooks``, ``xdist.plugin`` for ``-n``), so unrelated plugins installed
in the environment (e.g. hypothesis) do not count as evaluator overhead.

Results are printed as a table and written as JSON (``benchmarks/results/latest.json``,
or ``results/quick.json`` with ``--quick``).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import pickle
import platform
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
QUICKSTART = REPO / "example_suites" / "quickstart"
RESULTS = HERE / "results"
PLUGIN = "pytest_skill_eval.plugin.hooks"
XDIST = "xdist.plugin"
SUBPROCESS_TIMEOUT = 1800.0

#: Targets from the project brief; reported, never asserted.
TARGET_OVERHEAD = 1.10
TARGET_SPEEDUP_N2 = 1.6

sys.path.insert(0, str(HERE))
from _recorder import ENV as RECORD_ENV  # noqa: E402
from _rss_probe import ENV as RSS_ENV  # noqa: E402
from _whatif import CACHE_ENV as WHATIF_CACHE_ENV  # noqa: E402
from _whatif import ENV as WHATIF_ENV  # noqa: E402


class BenchError(RuntimeError):
    """The benchmark cannot produce a meaningful number (e.g. the suite did not pass)."""


# --------------------------------------------------------------------------- statistics


@dataclass(frozen=True, slots=True)
class Samples:
    """Repeated timings of one measurement, in seconds."""

    values: tuple[float, ...]

    @property
    def median(self) -> float:
        return statistics.median(self.values)

    def to_json(self) -> dict[str, Any]:
        return {
            "median": round(self.median, 4),
            "min": round(min(self.values), 4),
            "max": round(max(self.values), 4),
            "runs": [round(v, 4) for v in self.values],
        }


def cpu_seconds(who: int) -> float:
    """User + system CPU seconds of ``RUSAGE_SELF`` or ``RUSAGE_CHILDREN`` (reaped descendants)."""
    usage = resource.getrusage(who)
    return usage.ru_utime + usage.ru_stime


def paired_ratio(numerators: Sequence[float], denominators: Sequence[float]) -> float:
    """Median of per-repeat ratios: each pair ran back to back, so drift cancels."""
    return statistics.median(n / d for n, d in zip(numerators, denominators, strict=True))


def rotated(items: Sequence[Any], repeat: int) -> list[Any]:
    """*items* rotated by *repeat*, so no measurement always runs first (or last)."""
    k = repeat % len(items)
    return list(items[k:]) + list(items[:k])


# --------------------------------------------------------------------------- the machine


def cpu_idle_fraction(window: float = 1.0) -> float:
    """Share of all cores' time spent idle over *window* seconds (``/proc/stat``), 1.0 if unknown."""

    def sample() -> tuple[int, int]:
        fields = [int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
        return fields[3] + fields[4], sum(fields)  # idle + iowait, total

    try:
        idle0, total0 = sample()
        time.sleep(window)
        idle1, total1 = sample()
    except (OSError, ValueError, IndexError):
        return 1.0
    return (idle1 - idle0) / max(1, total1 - total0)


def wait_for_quiet(max_wait: float, threshold: float = 0.8) -> float:
    """Wait (at most *max_wait* s) until the machine is mostly idle; return the last idle share."""
    deadline = time.monotonic() + max_wait
    idle = cpu_idle_fraction()
    while idle < threshold and time.monotonic() < deadline:
        idle = cpu_idle_fraction()
    return idle


def machine_info(pi_version: str, node: Path) -> dict[str, Any]:
    cpu = "unknown"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem_kb = 0
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                mem_kb = int(line.split()[1])
    except OSError:
        pass
    node_version = subprocess.run([str(node), "--version"], capture_output=True, text=True).stdout.strip()
    # xdist ships no type information; its installed distribution's version is the same value
    from importlib.metadata import version

    import pytest

    import pytest_skill_eval

    return {
        "cores": os.cpu_count(),
        "cores_usable": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count(),
        "cpu": cpu,
        "memory_gib": round(mem_kb / 1024 / 1024, 1),
        "platform": platform.platform(),
        "python": platform.python_version(),
        "pytest": pytest.__version__,
        "xdist": version("pytest-xdist"),
        "pi": pi_version,
        "node": node_version,
        "loadavg_start": [round(x, 2) for x in os.getloadavg()],
        "package": package_provenance(Path(pytest_skill_eval.__file__).parent),
    }


def byte_compile() -> dict[str, Any]:
    """Compile the measured package's modules to bytecode first, as installing a wheel does.

    An editable install or a ``git archive`` snapshot has none, and with
    ``PYTHONDONTWRITEBYTECODE`` set (some sandboxes and CI images set it) every pytest process
    would compile ~100 modules from source again: ~0.15 s of CPU a process that no installed
    copy pays. ``py_compile`` writes the files whatever that variable says; Python reads them.
    """
    import compileall

    import pytest_skill_eval

    package = Path(pytest_skill_eval.__file__).parent
    ok = bool(compileall.compile_dir(str(package), quiet=1))
    return {"precompiled": ok, "PYTHONDONTWRITEBYTECODE": os.environ.get("PYTHONDONTWRITEBYTECODE", "")}


def package_provenance(package: Path) -> dict[str, Any]:
    """Which code was measured: the package path and its commit.

    In this repository: HEAD and whether package files are modified. Elsewhere (a snapshot
    put first on ``PYTHONPATH``, e.g. from ``git archive``): a ``COMMIT`` file beside the
    package, if present.
    """
    if not package.resolve().is_relative_to(REPO):
        marker = package.parent / "COMMIT"
        commit = marker.read_text().strip() if marker.is_file() else None
        return {"path": str(package), "commit": commit, "package_dirty": False, "snapshot": True}

    def git(*args: str) -> str:
        proc = subprocess.run(["git", "-C", str(REPO), *args], capture_output=True, text=True)
        return proc.stdout.strip() if proc.returncode == 0 else ""

    return {
        "path": str(package),
        "commit": git("rev-parse", "HEAD") or None,
        "package_dirty": bool(git("status", "--porcelain", "--", "pytest_skill_eval")),
        "snapshot": False,
    }


# --------------------------------------------------------------------------- generated suites


def make_suite(dest: Path, groups: int, source: Path = QUICKSTART) -> Path:
    """A definition root with *groups* groups: the source suite's groups, cycled, new ids.

    Everything of the source root is copied (skills, fixtures, scripts); the groups are
    written to ``bench-groups/`` and listed in ``suite.json``. A group keeps its script by
    naming its model explicitly (a group without ``model`` would look for a script named
    after its new id).
    """
    ignore = shutil.ignore_patterns(".skill-eval", ".pytest_cache", "__pycache__", "pytest.ini")
    shutil.copytree(source, dest, ignore=ignore)
    suite = json.loads((source / "suite.json").read_text(encoding="utf-8"))
    templates = [json.loads((source / ref).read_text(encoding="utf-8")) for ref in suite["groups"]]
    out_dir = dest / "bench-groups"
    out_dir.mkdir()
    refs: list[str] = []
    for i in range(groups):
        doc = json.loads(json.dumps(templates[i % len(templates)]))
        original = doc["id"]
        doc["id"] = f"{original}-{i + 1:04d}"
        doc.setdefault("model", {"model": f"scripted/{original}"})
        rel = f"bench-groups/{doc['id']}.json"
        (dest / rel).write_text(json.dumps(doc, indent=2), encoding="utf-8")
        refs.append(rel)
    bench_suite = {"schema_version": 1, "kind": "suite", "id": f"bench-{groups}", "groups": refs}
    (dest / "suite.json").write_text(json.dumps(bench_suite, indent=2), encoding="utf-8")
    (dest / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")  # pins rootdir here
    return dest


# --------------------------------------------------------------------------- pytest runs


@dataclass(frozen=True, slots=True)
class PytestRun:
    wall: float
    cpu: float
    returncode: int
    output: str
    result_dir: Path | None
    memory: tuple[dict[str, Any], ...]

    def peak_kb(self, role: str | None = None, key: str = "self_kb") -> int:
        """Peak of *key* over the processes of *role* (``main``, ``worker``, or all)."""
        rows = [m for m in self.memory if role is None or (m["role"] == "main") == (role == "main")]
        return max((int(m[key]) for m in rows), default=0)


def run_pytest(
    root: Path,
    args: Sequence[str],
    *,
    plugins: Sequence[str] = (PLUGIN,),
    env_extra: dict[str, str] | None = None,
    expect: Iterable[int] = (0,),
    python_prefix: Sequence[str] = ("-m", "pytest"),
) -> PytestRun:
    """Run pytest in a fresh interpreter in *root*; wall time from spawn to exit."""
    runs = root / ".skill-eval" / "runs"
    before = {p for p in runs.iterdir() if p.is_dir()} if runs.is_dir() else set()
    rss_dir = Path(tempfile.mkdtemp(prefix="rss-", dir=root.parent))
    env = dict(os.environ)
    env.update(
        PYTEST_DISABLE_PLUGIN_AUTOLOAD="1",
        PYTEST_PLUGINS=",".join([*plugins, "_rss_probe"]),
        PYTHONPATH=os.pathsep.join(p for p in (str(HERE), os.environ.get("PYTHONPATH", "")) if p),
        **{RSS_ENV: str(rss_dir)},
    )
    env.update(env_extra or {})
    cpu_before = cpu_seconds(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, *python_prefix, *args],
        cwd=root,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=SUBPROCESS_TIMEOUT,
    )
    wall = time.perf_counter() - started
    cpu = cpu_seconds(resource.RUSAGE_CHILDREN) - cpu_before  # pytest and every pi it reaped
    output = proc.stdout + proc.stderr
    if proc.returncode not in tuple(expect):
        raise BenchError(f"pytest {' '.join(args)} in {root} exited {proc.returncode}:\n{output[-4000:]}")
    after = {p for p in runs.iterdir() if p.is_dir()} if runs.is_dir() else set()
    new = sorted(after - before)
    memory = tuple(json.loads(p.read_text()) for p in sorted(rss_dir.glob("*.json")))
    shutil.rmtree(rss_dir, ignore_errors=True)
    return PytestRun(wall, cpu, proc.returncode, output, new[-1] if new else None, memory)


def suite_args(*extra: str) -> list[str]:
    return ["--skill-eval", "suite.json", "-q", *extra]


# --------------------------------------------------------------------------- the bare floor


@dataclass(frozen=True, slots=True)
class Invocation:
    """One pi process exactly as the plugin started it (recorded, see ``_recorder.py``)."""

    index: int
    variant: str
    mode: str
    argv: tuple[str, ...]
    env: dict[str, str]
    cwd: str
    messages: tuple[str, ...]
    scratch: Path
    snapshot: Path
    plan_file: Path
    turn_ends: int

    @classmethod
    def load(cls, directory: Path) -> Invocation:
        data = json.loads((directory / "invocation.json").read_text(encoding="utf-8"))
        if data["outcome"] != "complete":
            raise BenchError(f"recorded invocation {directory.name} did not complete: {data['failure']}")
        return cls(
            index=int(directory.name),
            variant=data["variant"],
            mode=data["mode"],
            argv=tuple(data["argv"]),
            env=dict(data["env"]),
            cwd=data["cwd"],
            messages=tuple(data["messages"]),
            scratch=Path(data["scratch"]),
            snapshot=directory / "scratch",
            plan_file=directory / "plan.pickle",
            turn_ends=int(data["turn_ends"]),
        )

    def restore(self, base_url: str) -> None:
        """Recreate the scratch directory at its original path; point the stand-in at *base_url*.

        Only the stand-in's port in ``models.json`` differs from the recorded run (the
        recording process and its server are gone); argv and environment are identical.
        """
        if self.scratch.exists():
            shutil.rmtree(self.scratch)
        shutil.copytree(self.snapshot, self.scratch, symlinks=True)
        models = Path(self.env["PI_CODING_AGENT_DIR"]) / "models.json"
        data = json.loads(models.read_text(encoding="utf-8"))
        scripted = data.get("providers", {}).get("scripted")
        if scripted is not None:
            recorded = urlsplit(scripted["baseUrl"]).port
            scripted["baseUrl"] = base_url
            models.write_text(json.dumps(data, indent=2), encoding="utf-8")
            self._reconfine(recorded, urlsplit(base_url).port)

    def _reconfine(self, recorded: int | None, port: int | None) -> None:
        """The confinement wrapper lets pi reach the recorded stand-in's port only (a Landlock
        ``connect`` rule, or a namespace ``bridge`` to the same port): move it."""
        wrapper = next((i for i, arg in enumerate(self.argv) if arg.endswith("landlock.py")), None)
        if wrapper is None or recorded is None or port is None or wrapper + 1 >= len(self.argv):
            return
        rules = Path(self.argv[wrapper + 1])
        lines = rules.read_text(encoding="utf-8").splitlines()
        def moved(line: str) -> str:
            if line == f"connect {recorded}":
                return f"connect {port}"
            words = line.split(" ")
            if words[:3] == ["bridge", str(recorded), str(recorded)]:
                return " ".join(["bridge", str(port), str(port), *words[3:]])
            return line

        rules.write_text("".join(moved(line) + "\n" for line in lines), encoding="utf-8")

    def cleanup(self) -> None:
        shutil.rmtree(self.scratch, ignore_errors=True)


def record_invocations(root: Path, record_dir: Path) -> tuple[list[Invocation], dict[str, str], PytestRun]:
    """One untimed plugin run with the recorder: the floor's invocations and scripts.

    The run gets a temp directory of its own: the floor restores its scratch directories
    under their recorded names, which name the (then ended) recording process, and any
    evaluator starting meanwhile in the shared scratch root would sweep them as stale.
    """
    private_tmp = record_dir.parent / f"{record_dir.name}-tmp"
    private_tmp.mkdir(mode=0o700, parents=True, exist_ok=True)
    run = run_pytest(root, suite_args(), plugins=(PLUGIN, "_recorder"),
                     env_extra={RECORD_ENV: str(record_dir), "TMPDIR": str(private_tmp)})
    invocations = [Invocation.load(d) for d in sorted(record_dir.iterdir()) if d.is_dir()]
    if not invocations:
        raise BenchError("the recording run recorded no pi invocation (did the engine stop calling run_json/run_rpc?)")
    registrations = json.loads((record_dir / "registrations.json").read_text(encoding="utf-8"))
    return invocations, registrations, run


def _record_type(line: bytes, wanted: bytes) -> bool:
    """Whether a stdout record is of type *wanted* (cheap substring test, then JSON)."""
    if b'"' + wanted + b'"' not in line:
        return False
    try:
        return bool(json.loads(line).get("type") == wanted.decode())
    except (ValueError, AttributeError):
        return False


def run_raw(inv: Invocation) -> tuple[float, int]:
    """The minimum any caller must do: start pi, send the prompts, read to settlement.

    JSON mode: prompts are argv, stdin is /dev/null, stdout is read to EOF. RPC mode: one
    ``prompt`` per turn, stdout read until ``agent_settled``, then stdin closed (EOF ends
    pi) and stdout drained. stderr is drained on a thread (pi stalls on a full pipe).
    Returns the wall time from spawn to exit and the number of ``turn_end`` records.
    """
    rpc = inv.mode == "rpc"
    started = time.perf_counter()
    proc = subprocess.Popen(
        list(inv.argv),
        cwd=inv.cwd,
        env=inv.env,
        stdin=subprocess.PIPE if rpc else subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert proc.stdout is not None and proc.stderr is not None
    errors: list[bytes] = []
    drain = threading.Thread(target=lambda: errors.append(proc.stderr.read() if proc.stderr else b""), daemon=True)
    drain.start()
    turn_ends = 0
    try:
        if rpc:
            assert proc.stdin is not None
            for message in inv.messages:
                proc.stdin.write(json.dumps({"type": "prompt", "message": message}).encode("utf-8") + b"\n")
                proc.stdin.flush()
                for line in proc.stdout:  # binary iteration splits on b"\n" only
                    turn_ends += _record_type(line, b"turn_end")
                    if _record_type(line, b"agent_settled"):
                        break
                else:
                    proc.wait()
                    drain.join()
                    tail = b"".join(errors).decode("utf-8", "replace").strip()[-400:]
                    raise BenchError(f"invocation {inv.index}: pi exited before the turn settled: {tail}")
            proc.stdin.close()
        for line in proc.stdout:
            turn_ends += _record_type(line, b"turn_end")
        returncode = proc.wait()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    drain.join()
    wall = time.perf_counter() - started
    if returncode != 0:
        tail = b"".join(errors).decode("utf-8", "replace").strip()[-400:]
        raise BenchError(f"invocation {inv.index}: pi exited {returncode}: {tail}")
    return wall, turn_ends


def with_compile_cache(cache: Path) -> Callable[[Invocation], tuple[float, int]]:
    """A what-if floor: the raw invocation with node's compile cache on, shared and warm.

    The plugin's ``LaunchPlan.env()`` sets ``NODE_DISABLE_COMPILE_CACHE=1``, so every pi
    start recompiles pi's 10 MB bundle. This runner only swaps that variable for
    ``NODE_COMPILE_CACHE=<cache>``; it measures what the floor itself could be.
    """

    def runner(inv: Invocation) -> tuple[float, int]:
        env = {k: v for k, v in inv.env.items() if k != "NODE_DISABLE_COMPILE_CACHE"}
        env["NODE_COMPILE_CACHE"] = str(cache)
        return run_raw(dataclasses.replace(inv, env=env))

    return runner


def run_with_driver(inv: Invocation) -> tuple[float, int]:
    """The same invocation through the package driver (``run_json`` / ``run_rpc``)."""
    from pytest_skill_eval.host.driver import Safeguards, run_json, run_rpc

    plan = pickle.loads(inv.plan_file.read_bytes())
    started = time.perf_counter()
    run = run_json(plan, Safeguards()) if inv.mode == "json" else run_rpc(plan, list(inv.messages), Safeguards())
    wall = time.perf_counter() - started
    if run.outcome != "complete":
        raise BenchError(f"invocation {inv.index} through the driver: {run.outcome}: {run.failure}")
    return wall, sum(1 for r in run.records if r.type == "turn_end")


@dataclass(frozen=True, slots=True)
class FloorRun:
    total: float
    cpu: float
    per_invocation: tuple[float, ...]
    turn_ends: tuple[int, ...]


def run_floor(invocations: Sequence[Invocation], runner: Callable[[Invocation], tuple[float, int]], base_url: str) -> FloorRun:
    """All invocations one after another; only pi's own wall time counts (restores do not)."""
    walls: list[float] = []
    counts: list[int] = []
    cpu = 0.0
    try:
        for inv in invocations:
            inv.restore(base_url)
            # this process (driver loop, the stand-in's threads) plus the pi process it reaps
            before = cpu_seconds(resource.RUSAGE_SELF) + cpu_seconds(resource.RUSAGE_CHILDREN)
            wall, turn_ends = runner(inv)
            cpu += cpu_seconds(resource.RUSAGE_SELF) + cpu_seconds(resource.RUSAGE_CHILDREN) - before
            walls.append(wall)
            counts.append(turn_ends)
            inv.cleanup()
    finally:
        for inv in invocations:
            inv.cleanup()
    return FloorRun(sum(walls), cpu, tuple(walls), tuple(counts))


def run_floor_parallel(
    invocations: Sequence[Invocation],
    runner: Callable[[Invocation], tuple[float, int]],
    base_url: str,
    lanes: int,
) -> FloorRun:
    """The floor on *lanes* concurrent lanes: what ``-n <lanes>`` could at best achieve here.

    A group's invocations (they share one scratch directory) stay in order on one lane;
    a free lane takes the next group (ideal dynamic scheduling, no worker start-up).
    Wall time runs from the first start to the last exit (restores, a few ms, included).
    """
    batches: dict[Path, list[Invocation]] = {}
    for inv in invocations:
        batches.setdefault(inv.scratch, []).append(inv)
    pending = list(batches.values())
    lock = threading.Lock()
    counts: dict[int, int] = {}
    errors: list[BaseException] = []

    def lane() -> None:
        while not errors:
            with lock:
                if not pending:
                    return
                batch = pending.pop(0)
            try:
                for inv in batch:
                    inv.restore(base_url)
                    counts[inv.index] = runner(inv)[1]
                    inv.cleanup()
            except BaseException as exc:  # re-raised in the caller's thread
                errors.append(exc)

    cpu_before = cpu_seconds(resource.RUSAGE_SELF) + cpu_seconds(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    threads = [threading.Thread(target=lane, name=f"floor-lane-{i}") for i in range(lanes)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    wall = time.perf_counter() - started
    cpu = cpu_seconds(resource.RUSAGE_SELF) + cpu_seconds(resource.RUSAGE_CHILDREN) - cpu_before
    for inv in invocations:
        inv.cleanup()
    if errors:
        raise errors[0]
    return FloorRun(wall, cpu, (), tuple(counts[i.index] for i in invocations))


# --------------------------------------------------------------------------- evidence and view


def evidence_stats(result_dir: Path) -> dict[str, Any]:
    """Bytes of the evidence tree of one result, relative to its raw event streams."""
    categories = {"events": 0, "workspace snapshots": 0, "run metadata": 0, "group metadata": 0, "batch": 0}
    files = 0
    for path in result_dir.rglob("*"):
        if not path.is_file():
            continue
        files += 1
        size = path.stat().st_size
        parts = path.relative_to(result_dir).parts
        if path.name == "events.jsonl":
            categories["events"] += size
        elif any(p in ("workspace", "workspace-initial", "turns") for p in parts):
            categories["workspace snapshots"] += size
        elif len(parts) == 1:
            categories["batch"] += size
        elif len(parts) == 3:
            categories["group metadata"] += size
        else:
            categories["run metadata"] += size
    runs = len(list(result_dir.rglob("events.jsonl")))
    total = sum(categories.values())
    events = categories["events"]
    return {
        "runs": runs,
        "files": files,
        "files_per_run": round(files / runs, 1) if runs else None,
        "bytes_total": total,
        "bytes_per_run": round(total / runs) if runs else None,
        "events_bytes_per_run": round(events / runs) if runs else None,
        "ratio_to_events": round(total / events, 3) if events else None,
        "by_category": categories,
    }


def make_view_result(template_result: Path, dest_root: Path, groups: int) -> str:
    """A stored result of *groups* groups: the richest real group directory, copied."""
    from pytest_skill_eval.evidence import layout

    candidates = [d for d in (template_result / "groups").iterdir() if d.is_dir()]
    template = max(candidates, key=lambda d: sum(1 for p in d.rglob("*") if p.is_file()))
    result_id = layout.new_result_id()
    result_dir = dest_root / ".skill-eval" / "runs" / result_id
    base_id = json.loads((template / "group.json").read_text(encoding="utf-8"))["id"]
    for position in range(1, groups + 1):
        group_id = f"{base_id}-{position:04d}"
        gdir = result_dir / "groups" / layout.group_dir_name(position, group_id)
        shutil.copytree(template, gdir, symlinks=True)
        for name, key in (("group.json", "id"), ("grade.json", "group_id")):
            path = gdir / name
            if path.exists():
                data = json.loads(path.read_text(encoding="utf-8"))
                if key in data:
                    data[key] = group_id
                if name == "group.json":
                    data["position"] = position
                path.write_text(json.dumps(data, indent=2), encoding="utf-8")
    from pytest_skill_eval.engine.batch import write_batch_summary

    write_batch_summary(result_dir, result_id, interrupted=False)
    return result_id


def skill_eval_command() -> list[str]:
    script = Path(sys.executable).parent / "skill-eval"
    return [str(script)] if script.exists() else [sys.executable, "-m", "pytest_skill_eval"]


def time_view(root: Path, result_id: str) -> tuple[float | None, str, int]:
    """Wall time of ``skill-eval view <result>``; ``None`` with a reason when unavailable."""
    started = time.perf_counter()
    proc = subprocess.run(
        [*skill_eval_command(), "view", result_id],
        cwd=root,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        timeout=SUBPROCESS_TIMEOUT,
    )
    wall = time.perf_counter() - started
    if proc.returncode == 0:
        return wall, "ok", len(proc.stdout)
    err = proc.stderr.decode("utf-8", "replace")
    if "pytest_skill_eval.views" in err or "invalid choice: 'view'" in err:
        return None, "n/a (view not available)", 0
    last = err.strip().splitlines()[-1] if err.strip() else f"exit {proc.returncode}"
    return None, f"n/a (view failed: {last[:160]})", 0


# --------------------------------------------------------------------------- profile


def profile_plugin(root: Path, out: Path) -> Path:
    """One plugin run under a profiler, report written to *out*.

    pyinstrument (wall clock, if installed; not a dependency) shows where the main
    thread's wall time goes, waiting on pi included; otherwise cProfile (stdlib).
    """
    import importlib.util
    import pstats

    if importlib.util.find_spec("pyinstrument") is not None:
        prefix = ("-m", "pyinstrument", "-i", "0.001", "-o", str(out), "-m", "pytest")
        run_pytest(root, suite_args(), python_prefix=prefix)
        return out
    prof = root.parent / "plugin.prof"
    run_pytest(root, suite_args(), python_prefix=("-m", "cProfile", "-o", str(prof), "-m", "pytest"))
    with out.open("w", encoding="utf-8") as handle:
        stats = pstats.Stats(str(prof), stream=handle)
        stats.strip_dirs()
        handle.write("== by cumulative time (main thread) ==\n")
        stats.sort_stats("cumulative").print_stats(45)
        handle.write("\n== by own time (main thread) ==\n")
        stats.sort_stats("tottime").print_stats(30)
    return out


# --------------------------------------------------------------------------- report


def fmt_s(seconds: float | None) -> str:
    return "n/a" if seconds is None else f"{seconds:8.2f} s"


def fmt_mb(kb: int) -> str:
    return f"{kb / 1024:6.0f} MB"


def render(report: dict[str, Any]) -> str:
    m, o, s, c, v, e, mem = (report[k] for k in ("machine", "overhead", "scaling", "collection", "view", "evidence", "memory"))
    rows: list[tuple[str, str, str]] = []

    def section(title: str) -> None:
        rows.append((f"[{title}]", "", ""))

    def row(name: str, value: str, note: str = "") -> None:
        rows.append((f"  {name}", value, note))

    section(f"overhead, {o['groups']} groups = {o['pi_invocations']} pi runs, median of {report['repeats']}")
    row("plugin (pytest --skill-eval)", fmt_s(o["plugin_s"]["median"]), "wall, spawn to exit")
    row("bare floor (raw subprocess)", fmt_s(o["floor_raw_s"]["median"]), f"{o['floor_raw_per_run_s']:.3f} s per pi run")
    row("floor via package driver", fmt_s(o["floor_driver_s"]["median"]), "host.driver.run_json/run_rpc")
    row("pytest startup (no groups)", fmt_s(o["pytest_startup_s"]["median"]), "interpreter + pytest + plugin import")
    verdict = "meets" if o["ratio_raw"] <= TARGET_OVERHEAD else "misses"
    row("overhead plugin / raw floor", f"{o['ratio_raw']:8.3f} x", f"{verdict} target <= {TARGET_OVERHEAD:.2f}")
    row("overhead plugin / driver floor", f"{o['ratio_driver']:8.3f} x", "")
    row("evaluator time per pi run", f"{o['evaluator_per_run_s']:8.3f} s", "(plugin - raw floor) / pi runs")
    row("CPU: plugin tree / raw floor", f"{o['ratio_cpu_raw']:8.3f} x",
        f"{o['plugin_cpu_s']['median']:.2f} s vs {o['floor_raw_cpu_s']['median']:.2f} s user+sys")
    row("evaluator CPU per pi run", f"{o['evaluator_cpu_per_run_s']:8.3f} s", "(plugin CPU - raw floor CPU) / pi runs")
    row("parity (turn_end per run)", "ok" if o["parity"]["ok"] else "MISMATCH", "floor saw the same model turns")
    row("what-if: floor with compile cache", fmt_s(o["what_if_compile_cache_s"]["median"]),
        f"{o['what_if_compile_cache_ratio']:.2f}x the floor (NODE_COMPILE_CACHE instead of disabling it)")
    section(f"scaling (pytest-xdist), {s['groups']} groups, median of {report['repeats']}")
    for key, entry in s["workers"].items():
        speed = entry["speedup_vs_n1"]
        note = ""
        if key == "2":
            verdict = "meets" if speed >= TARGET_SPEEDUP_N2 else "misses"
            note = f"{verdict} target >= {TARGET_SPEEDUP_N2:.1f}x on {m['cores']} cores"
        row(f"-n {key}", fmt_s(entry["s"]["median"]),
            f"{speed:.2f}x vs -n 1, CPU {entry['cpu_s']['median']:.1f} s {note}".rstrip())
    row("raw floor on 2 lanes", fmt_s(s["floor_2_lanes_s"]["median"]),
        f"{s['floor_2_lanes_speedup']:.2f}x the sequential floor: the machine's limit for -n 2")
    row("-n 2 / floor on 2 lanes", f"{s['n2_over_floor_2_lanes']:8.3f} x", "evaluator overhead under xdist")
    for wset, w in (report.get("what_if") or {}).items():
        section(f"what-if {wset}: {', '.join(w['changes'])} (benchmarks/_whatif.py)")
        row("plugin", fmt_s(w["runs_s"]["plugin"]["median"]),
            f"{w['plugin_over_floor']:.3f}x the {w['floor']}, {w['plugin_over_todays_floor']:.2f}x today's raw floor")
        row("-n 1 / -n 2", f"{w['runs_s']['-n 1']['median']:.2f}/{w['runs_s']['-n 2']['median']:.2f} s",
            f"-n 2 is {w['speedup_n2_vs_n1']:.2f}x faster than -n 1")
    t = report.get("trials")
    if t:
        section(f"trials (--skill-eval-trials {t['trials']}), {o['groups']} groups, median of {report['repeats']}")
        row(f"plugin, {t['trials']} trials", fmt_s(t["plugin_s"]["median"]),
            f"{t['over_raw_floor_times_trials']:.3f}x the raw floor times {t['trials']}")
        row("cost of one extra trial", fmt_s(t["extra_trial_s"]),
            f"{t['extra_trial_over_raw_floor']:.3f}x the bare floor of one trial's pi runs")
    section("collection and view")
    row(f"collect-only, {c['groups']} groups", fmt_s(c["s"]["median"]), f"{c['per_group_ms']:.2f} ms per group")
    view_value = fmt_s(v["s"]["median"]) if v.get("s") else v["status"]
    row(f"skill-eval view, {v['groups']} groups", view_value, v.get("note", ""))
    section("evidence and memory")
    row("evidence bytes / events.jsonl", f"{e['ratio_to_events']:8.2f} x",
        f"{e['bytes_per_run']} B per run, {e['files_per_run']} files per run")
    row("peak RSS, pytest process", fmt_mb(mem["plugin_self_kb"]), f"{o['groups']} groups, no xdist")
    row("peak RSS, largest pi process", fmt_mb(mem["pi_kb"]), "")
    if mem.get("xdist_n2_main_kb"):
        both = f"{mem['xdist_n2_main_kb'] / 1024:.0f}/{mem['xdist_n2_worker_kb'] / 1024:.0f} MB"
        row("peak RSS, -n 2 controller / worker", both, "")

    width = max(len(r[0]) for r in rows if r[1]) + 2
    lines = [
        f"machine: {m['cores']} cores ({m['cores_usable']} usable), {m['cpu']}, {m['memory_gib']} GiB; "
        f"pi {m['pi']} on node {m['node']}; python {m['python']}, pytest {m['pytest']}, xdist {m['xdist']}",
        f"load average at start {m['loadavg_start']}, at end {m.get('loadavg_end')}, "
        f"1-min during timed steps {m.get('loadavg_during')}; idle CPU before steps {m.get('idle_before_steps')}",
        f"package {m['package']['path']} (commit {str(m['package']['commit'])[:10]}"
        f"{', package files modified' if m['package']['package_dirty'] else ''})",
        "",
    ]
    for name, value, note in rows:
        lines.append(f"{name:<{width}}{value:>14}  {note}".rstrip() if value else name)
    return "\n".join(lines)


# --------------------------------------------------------------------------- the session

#: What-if sets: the changes docs/performance.md proposes, applied by ``_whatif.py``.
WHAT_IF_SETS = {"fixes": "no-probe,server-poll", "fixes+cache": "no-probe,server-poll,compile-cache"}


@dataclass(frozen=True, slots=True)
class Settings:
    groups: int
    repeats: int
    collect_groups: int
    view_groups: int
    worker_counts: tuple[int, ...]
    what_if: bool
    quiet_wait: float
    profile: bool
    output: Path
    keep: bool

    @classmethod
    def from_args(cls, args: argparse.Namespace) -> Settings:
        return cls(
            groups=args.groups,
            repeats=args.repeats or (1 if args.quick else 3),
            collect_groups=args.collect_groups or (200 if args.quick else 1000),
            view_groups=args.view_groups or (100 if args.quick else 500),
            worker_counts=(1, 2) if args.quick else (1, 2, 4),
            what_if=not (args.quick or args.no_what_if),
            quiet_wait=args.quiet_wait,
            profile=args.profile,
            output=args.output or RESULTS / ("quick.json" if args.quick else "latest.json"),
            keep=args.keep,
        )


def say(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


class Bench:
    """One benchmark session: generated suites, recorded invocations, the stand-in, step log.

    Each ``measure_*`` method runs its timed steps (repeated, order rotated per repeat)
    and returns its section of the JSON report.
    """

    def __init__(self, settings: Settings, work: Path, base_url: str, invocations: Sequence[Invocation]) -> None:
        self.settings = settings
        self.work = work
        self.base_url = base_url
        self.invocations = list(invocations)
        self.suite_root = work / "suite"
        self.load: list[float] = []  # 1-minute load average before each timed step
        self.idle: list[float] = []  # idle CPU share just before each timed step
        self.plugin_runs: list[PytestRun] = []
        self.raw: list[FloorRun] = []
        self.cached: list[FloorRun] = []
        self.floors: list[FloorRun] = []  # every floor run, for the parity check
        self.n2_runs: list[PytestRun] = []

    def step(self, label: str) -> None:
        """Announce a timed step; wait for a quiet machine first when asked to."""
        say(f"bench: {label}")
        quiet = self.settings.quiet_wait
        self.idle.append(wait_for_quiet(quiet) if quiet else cpu_idle_fraction(0.5))
        self.load.append(os.getloadavg()[0])

    def floor(self, runner: Callable[[Invocation], tuple[float, int]], lanes: int = 1) -> FloorRun:
        if lanes == 1:
            run = run_floor(self.invocations, runner, self.base_url)
        else:
            run = run_floor_parallel(self.invocations, runner, self.base_url, lanes)
        self.floors.append(run)
        return run

    # -- overhead ------------------------------------------------------------------
    def measure_overhead(self) -> dict[str, Any]:
        empty = self.work / "empty"
        empty.mkdir()
        (empty / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")
        cached_runner = with_compile_cache(self.work / "node-compile-cache")
        run_floor(self.invocations[:1], cached_runner, self.base_url)  # warm the cache, untimed
        driver: list[FloorRun] = []
        startup: list[float] = []
        steps: dict[str, Callable[[], None]] = {
            "plugin": lambda: self.plugin_runs.append(run_pytest(self.suite_root, suite_args())),
            "raw": lambda: self.raw.append(self.floor(run_raw)),
            "driver": lambda: driver.append(self.floor(run_with_driver)),
            "cached": lambda: self.cached.append(self.floor(cached_runner)),
            "startup": lambda: startup.append(run_pytest(empty, ["--collect-only", "-q"], expect=(5,)).wall),
        }
        repeats = self.settings.repeats
        for r in range(repeats):
            for name in rotated(list(steps), r):
                self.step(f"overhead repeat {r + 1}/{repeats}: {name}")
                steps[name]()

        plugin_s = Samples(tuple(p.wall for p in self.plugin_runs))
        raw_s, driver_s, cached_s = (Samples(tuple(f.total for f in runs)) for runs in (self.raw, driver, self.cached))
        n_runs = len(self.invocations)
        return {
            "groups": self.settings.groups,
            "pi_invocations": n_runs,
            "modes": {m: sum(1 for i in self.invocations if i.mode == m) for m in ("json", "rpc")},
            "plugin_s": plugin_s.to_json(),
            "floor_raw_s": raw_s.to_json(),
            "floor_driver_s": driver_s.to_json(),
            "pytest_startup_s": Samples(tuple(startup)).to_json(),
            "floor_raw_per_run_s": raw_s.median / n_runs,
            "floor_raw_per_invocation_s": [
                round(statistics.median(f.per_invocation[i] for f in self.raw), 4) for i in range(n_runs)
            ],
            "ratio_raw": paired_ratio(plugin_s.values, raw_s.values),
            "ratio_driver": paired_ratio(plugin_s.values, driver_s.values),
            "ratio_raw_of_medians": plugin_s.median / raw_s.median,
            "evaluator_per_run_s": (plugin_s.median - raw_s.median) / n_runs,
            "plugin_cpu_s": Samples(tuple(p.cpu for p in self.plugin_runs)).to_json(),
            "floor_raw_cpu_s": Samples(tuple(f.cpu for f in self.raw)).to_json(),
            "floor_driver_cpu_s": Samples(tuple(f.cpu for f in driver)).to_json(),
            "ratio_cpu_raw": paired_ratio([p.cpu for p in self.plugin_runs], [f.cpu for f in self.raw]),
            "evaluator_cpu_per_run_s": statistics.median(
                p.cpu - f.cpu for p, f in zip(self.plugin_runs, self.raw, strict=True)
            ) / n_runs,
            "what_if_compile_cache_s": cached_s.to_json(),
            "what_if_compile_cache_cpu_s": Samples(tuple(f.cpu for f in self.cached)).to_json(),
            "what_if_compile_cache_ratio": paired_ratio(cached_s.values, raw_s.values),
        }

    # -- trials --------------------------------------------------------------------
    def measure_trials(self, trials: int = 3) -> dict[str, Any]:
        """What an extra trial costs: (plugin at *trials* - plugin at 1) / (trials - 1), against the
        bare floor of one trial's pi runs (each trial makes exactly the recorded invocations)."""
        runs: list[PytestRun] = []
        for r in range(self.settings.repeats):
            self.step(f"trials repeat {r + 1}/{self.settings.repeats}: --skill-eval-trials {trials}")
            runs.append(run_pytest(self.suite_root, suite_args("--skill-eval-trials", str(trials), "--skill-eval-seed", "bench")))
        multi = Samples(tuple(p.wall for p in runs))
        single = Samples(tuple(p.wall for p in self.plugin_runs))
        raw = Samples(tuple(f.total for f in self.raw))
        extra = (multi.median - single.median) / (trials - 1)
        return {
            "trials": trials,
            "plugin_s": multi.to_json(),
            "plugin_cpu_s": Samples(tuple(p.cpu for p in runs)).to_json(),
            "extra_trial_s": extra,
            "extra_trial_over_raw_floor": extra / raw.median,
            "over_raw_floor_times_trials": multi.median / (raw.median * trials),
        }

    def parity(self) -> dict[str, Any]:
        """Did every floor run see the model turns the plugin's driver saw?"""
        expected = tuple(i.turn_ends for i in self.invocations)
        return {
            "ok": all(f.turn_ends == expected for f in self.floors),
            "plugin_turn_ends": list(expected),
            "floor_turn_ends": list(self.floors[0].turn_ends) if self.floors else [],
        }

    # -- scaling -------------------------------------------------------------------
    def measure_scaling(self) -> dict[str, Any]:
        runs: dict[int, list[PytestRun]] = {n: [] for n in self.settings.worker_counts}
        lanes2: list[FloorRun] = []
        repeats = self.settings.repeats
        for r in range(repeats):
            for n in rotated([*self.settings.worker_counts, 0], r):  # 0: the floor on 2 lanes
                self.step(f"scaling repeat {r + 1}/{repeats}: " + ("raw floor on 2 lanes" if n == 0 else f"-n {n}"))
                if n == 0:
                    lanes2.append(self.floor(run_raw, lanes=2))
                else:
                    runs[n].append(run_pytest(self.suite_root, suite_args("-n", str(n)), plugins=(PLUGIN, XDIST)))

        n1 = [p.wall for p in runs[1]]
        lanes2_s = Samples(tuple(f.total for f in lanes2))
        raw_median = Samples(tuple(f.total for f in self.raw)).median
        self.n2_runs = runs.get(2, [])
        return {
            "groups": self.settings.groups,
            "floor_2_lanes_s": lanes2_s.to_json(),
            "floor_2_lanes_cpu_s": Samples(tuple(f.cpu for f in lanes2)).to_json(),
            "floor_2_lanes_speedup": raw_median / lanes2_s.median,
            "n2_over_floor_2_lanes": paired_ratio([p.wall for p in runs[2]], lanes2_s.values),
            "workers": {
                str(n): {
                    "s": Samples(tuple(p.wall for p in by_n)).to_json(),
                    "speedup_vs_n1": paired_ratio(n1, [p.wall for p in by_n]),
                    "cpu_s": Samples(tuple(p.cpu for p in by_n)).to_json(),
                }
                for n, by_n in runs.items()
            },
        }

    # -- what-if -------------------------------------------------------------------
    def measure_what_if(self) -> dict[str, Any] | None:
        """The plugin, ``-n 1`` and ``-n 2`` again with each set of proposed changes applied."""
        if not self.settings.what_if:
            return None
        cache = str(self.work / "node-compile-cache-whatif")
        shapes: dict[str, tuple[list[str], tuple[str, ...]]] = {
            "plugin": (suite_args(), (PLUGIN, "_whatif")),
            "-n 1": (suite_args("-n", "1"), (PLUGIN, XDIST, "_whatif")),
            "-n 2": (suite_args("-n", "2"), (PLUGIN, XDIST, "_whatif")),
        }
        env = {name: {WHATIF_ENV: changes, WHATIF_CACHE_ENV: cache} for name, changes in WHAT_IF_SETS.items()}
        run_pytest(self.suite_root, suite_args(), plugins=(PLUGIN, "_whatif"), env_extra=env["fixes+cache"])  # warm
        runs: dict[str, dict[str, list[PytestRun]]] = {name: {shape: [] for shape in shapes} for name in WHAT_IF_SETS}
        repeats = self.settings.repeats
        for r in range(repeats):
            for name, shape in rotated([(n, s) for n in WHAT_IF_SETS for s in shapes], r):
                self.step(f"what-if repeat {r + 1}/{repeats}: {shape} with {WHAT_IF_SETS[name]}")
                args, plugins = shapes[shape]
                runs[name][shape].append(run_pytest(self.suite_root, args, plugins=plugins, env_extra=env[name]))

        result: dict[str, Any] = {}
        for name, by_shape in runs.items():
            walls = {shape: [r.wall for r in by_shape[shape]] for shape in shapes}
            floor = self.cached if "compile-cache" in WHAT_IF_SETS[name] else self.raw
            floor_walls = [f.total for f in floor]
            result[name] = {
                "changes": WHAT_IF_SETS[name].split(","),
                "runs_s": {shape: Samples(tuple(w)).to_json() for shape, w in walls.items()},
                "cpu_s": {shape: Samples(tuple(r.cpu for r in by_shape[shape])).to_json() for shape in shapes},
                "floor": "compile-cache floor" if floor is self.cached else "raw floor",
                "plugin_over_floor": paired_ratio(walls["plugin"], floor_walls),
                "plugin_over_floor_of_medians": statistics.median(walls["plugin"]) / statistics.median(floor_walls),
                "plugin_over_todays_floor": paired_ratio(walls["plugin"], [f.total for f in self.raw]),
                "speedup_n2_vs_n1": paired_ratio(walls["-n 1"], walls["-n 2"]),
            }
        return result

    # -- collection and view ------------------------------------------------------
    def measure_collection(self) -> dict[str, Any]:
        groups, repeats = self.settings.collect_groups, self.settings.repeats
        root = make_suite(self.work / "collect", groups)
        walls: list[float] = []
        for r in range(repeats):
            say(f"bench: collection repeat {r + 1}/{repeats}: {groups} groups")
            run = run_pytest(root, suite_args("--collect-only"))
            found = re.search(r"(\d+) tests? collected", run.output)
            if not found or int(found[1]) != groups:
                raise BenchError(f"collect-only did not collect {groups} items:\n{run.output[-2000:]}")
            walls.append(run.wall)
        samples = Samples(tuple(walls))
        return {"groups": groups, "s": samples.to_json(), "per_group_ms": samples.median / groups * 1000}

    def measure_view(self) -> dict[str, Any]:
        groups, repeats = self.settings.view_groups, self.settings.repeats
        template = self.plugin_runs[0].result_dir
        if template is None:
            raise BenchError("the plugin run left no result directory to build the view result from")
        root = self.work / "view"
        root.mkdir()
        result_id = make_view_result(template, root, groups)
        walls: list[float] = []
        status, size = "ok", 0
        for r in range(repeats):
            say(f"bench: view repeat {r + 1}/{repeats}: {groups} groups")
            wall, status, size = time_view(root, result_id)
            if wall is None:
                break
            walls.append(wall)
        return {
            "groups": groups,
            "status": status,
            "s": Samples(tuple(walls)).to_json() if walls else None,
            "note": f"{size} bytes of output" if walls else "",
        }

    # -- the rest -------------------------------------------------------------------
    def memory(self) -> dict[str, Any]:
        n2 = self.n2_runs
        return {
            "plugin_self_kb": max(p.peak_kb("main") for p in self.plugin_runs),
            "pi_kb": max(p.peak_kb("main", "children_kb") for p in self.plugin_runs),
            "xdist_n2_main_kb": max((p.peak_kb("main") for p in n2), default=0),
            "xdist_n2_worker_kb": max((p.peak_kb("worker") for p in n2), default=0),
        }

    def conditions(self) -> dict[str, Any]:
        """How busy the machine was around the timed steps."""
        return {
            "loadavg_end": [round(x, 2) for x in os.getloadavg()],
            "loadavg_during": {
                "min": round(min(self.load), 2),
                "median": round(statistics.median(self.load), 2),
                "max": round(max(self.load), 2),
            },
            "idle_before_steps": {
                "min": round(min(self.idle), 2),
                "median": round(statistics.median(self.idle), 2),
                "quiet_wait_s": self.settings.quiet_wait,
            },
        }


# --------------------------------------------------------------------------- main


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--groups", type=int, default=8, help="groups in the timed suite (default 8)")
    parser.add_argument("--quick", action="store_true",
                        help="one repeat, smaller collection/view suites, -n 1/2 only, no what-if runs")
    parser.add_argument("--repeats", type=int, default=None, help="timed repeats (default 3, 1 with --quick)")
    parser.add_argument("--collect-groups", type=int, default=None, help="groups in the collection suite (default 1000)")
    parser.add_argument("--view-groups", type=int, default=None, help="groups in the stored view result (default 500)")
    parser.add_argument("--output", type=Path, default=None, help="JSON output (default results/latest.json)")
    parser.add_argument("--profile", action="store_true", help="also profile one plugin run (results/profile.txt)")
    parser.add_argument("--keep", action="store_true", help="keep the temporary benchmark directory")
    parser.add_argument("--no-what-if", action="store_true",
                        help="skip the what-if runs (the proposed fixes applied by benchmarks/_whatif.py)")
    parser.add_argument("--quiet-wait", type=float, default=0.0, metavar="SECONDS",
                        help="before each timed step, wait up to this long for >= 80%% idle CPU (shared machines)")
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    settings = Settings.from_args(parse_args(argv))
    from pytest_skill_eval.host.install import resolve_host
    from pytest_skill_eval.scripted.server import ScriptedModelServer

    host = resolve_host(progress=say)
    machine = machine_info(host.version, host.node)
    machine["bytecode"] = byte_compile()
    work = Path(tempfile.mkdtemp(prefix="skill-eval-bench-"))
    server = ScriptedModelServer().start()
    try:
        say(f"bench: working in {work}")
        suite_root = make_suite(work / "suite", settings.groups)
        say("bench: recording run (untimed warm-up; captures the plugin's exact pi invocations)")
        invocations, registrations, recording = record_invocations(suite_root, work / "record")
        for name, script in registrations.items():
            server.register(name, Path(script))

        bench = Bench(settings, work, server.base_url, invocations)
        overhead = bench.measure_overhead()
        trials = bench.measure_trials()
        scaling = bench.measure_scaling()
        what_if = bench.measure_what_if()
        collection = bench.measure_collection()
        view = bench.measure_view()
        profile = None
        if settings.profile:
            say("bench: profiling one plugin run (pyinstrument if installed, else cProfile)")
            profile = str(profile_plugin(suite_root, RESULTS / "profile.txt"))
        overhead["parity"] = bench.parity()
        machine.update(bench.conditions())
        first_result = bench.plugin_runs[0].result_dir
        assert first_result is not None  # measure_view checked it
        report: dict[str, Any] = {
            "schema": "skill-eval-bench/1",
            "created": datetime.now(UTC).isoformat(timespec="seconds"),
            "command": " ".join(["python", "benchmarks/run.py", *(argv if argv is not None else sys.argv[1:])]),
            "repeats": settings.repeats,
            "machine": machine,
            "overhead": overhead,
            "scaling": scaling,
            "trials": trials,
            "what_if": what_if,
            "collection": collection,
            "view": view,
            "evidence": evidence_stats(first_result),
            "memory": {**bench.memory(), "recording_run_s": round(recording.wall, 3)},
            "profile": profile,
        }
        settings.output.parent.mkdir(parents=True, exist_ok=True)
        settings.output.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
        print(render(report))
        print(f"\nwritten: {settings.output}")
        return 0
    finally:
        server.stop()
        if settings.keep:
            say(f"bench: kept {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    try:
        raise SystemExit(main())
    except BenchError as exc:
        print(f"bench: error: {exc}", file=sys.stderr)
        raise SystemExit(2) from None
