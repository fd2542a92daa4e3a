#!/usr/bin/env python3
"""Latency-bound runs: many xdist lanes while the (emulated) model keeps everyone waiting.

    python benchmarks/latency.py [--groups 32] [--ttft 1.5] [--tps 50] [--lanes 1,4,8,16]
                                 [--jobs 1,4,8,16] [--repeat-lanes 8] [--quick] [--quiet-wait S]
                                 [--output FILE]

With a real model a run is latency-bound, not CPU-bound. This benchmark makes the scripted
stand-in as slow as one (every script of the generated suite gets a top-level ``latency``:
``first_token_delay`` = ``--ttft`` seconds, then ``--tps`` output tokens per second; see
docs/scripted-model.md) and runs the suite (the quickstart groups, cycled) under
``pytest -n L`` for each lane count L, and with ``--jobs`` under ``pytest -n 0
--skill-eval-jobs L`` (L lanes as threads of one pytest process). For each run it reports:

* wall         spawn to exit of ``pytest --skill-eval suite.json -n L``;
* ideal        the total emulated model time of the run ÷ L. The model time is computed from
               the evidence: for every model reply pi recorded (each assistant
               ``message_end`` in ``events.jsonl``), the time the server's schedule gives
               it (``pacing.model_seconds``: first-token delay + output at the rate);
* ratio        wall ÷ ideal (1.0 would be a lane that does nothing but wait for the model);
* memory       peak resident memory per lane: psutil samples (every 0.1 s) the process tree
               of the run; a lane is one xdist worker plus every process below it (pi,
               node); its RSS is summed per sample, and the peak over samples and lanes is
               reported, with the controller's peak and the whole tree's peak beside it.
               With jobs the pytest process is the "controller" and each pi tree a "lane";
               the whole tree ÷ L is the comparable figure;
* CPU          user + system seconds of the whole tree (reaped children of the bench);
* breakdown    from the evidence timestamps (``run.json`` ``started_at``/``ended_at``): the
               summed pi process time, how much of it is not model time (pi start-up, tool
               execution, exit), the time before the first pi start (pytest and xdist
               bring-up) and after the last pi exit.

Nothing here asserts a time. ``--quick`` is a smoke test (4 groups, short latency, -n 1/2).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import psutil

sys.path.insert(0, str(Path(__file__).resolve().parent))

from run import (  # noqa: E402  (benchmarks/ is not a package)
    HERE,
    PLUGIN,
    RESULTS,
    SUBPROCESS_TIMEOUT,
    XDIST,
    BenchError,
    cpu_seconds,
    machine_info,
    make_suite,
    wait_for_quiet,
)

from pytest_skill_eval.scripted.pacing import Latency, model_seconds  # noqa: E402

TARGET_RATIO = 1.15
TARGET_LANE_MB = 200.0
SAMPLE_SECONDS = 0.1


def say(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


# --------------------------------------------------------------------------- the suite


def make_latency_suite(dest: Path, groups: int, latency: Latency) -> Path:
    """The quickstart groups cycled *groups* times, every script slowed down to *latency*."""
    root = make_suite(dest, groups)
    setting = {k: v for k, v in (("first_token_delay", latency.first_token_delay),
                                 ("tokens_per_second", latency.tokens_per_second)) if v is not None}
    for script in sorted((root / "scripts").glob("*.json")):
        data = json.loads(script.read_text(encoding="utf-8"))
        data["latency"] = setting
        script.write_text(json.dumps(data, indent=2), encoding="utf-8")
    return root


# --------------------------------------------------------------------------- memory sampling


@dataclass
class TreeSampler:
    """Samples the RSS of a process tree: per lane (a child of the root and its descendants)."""

    root: int
    lane_peak: dict[int, int] = field(default_factory=dict)
    controller_peak: int = 0
    tree_peak: int = 0
    samples: int = 0
    _stop: threading.Event = field(default_factory=threading.Event)
    _thread: threading.Thread | None = None

    def start(self) -> TreeSampler:
        self._thread = threading.Thread(target=self._loop, name="rss-sampler", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(5)

    def _loop(self) -> None:
        while not self._stop.is_set():
            self.sample()
            self._stop.wait(SAMPLE_SECONDS)

    @staticmethod
    def _rss(process: psutil.Process) -> int:
        try:
            return int(process.memory_info().rss)
        except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess):
            return 0

    def sample(self) -> None:
        try:
            root = psutil.Process(self.root)
            children = root.children()
        except (psutil.NoSuchProcess, psutil.ZombieProcess):
            return
        controller = self._rss(root)
        total = controller
        for child in children:
            try:
                below = child.children(recursive=True)
            except (psutil.NoSuchProcess, psutil.ZombieProcess):
                below = []
            lane = self._rss(child) + sum(self._rss(p) for p in below)
            total += lane
            self.lane_peak[child.pid] = max(self.lane_peak.get(child.pid, 0), lane)
        self.controller_peak = max(self.controller_peak, controller)
        self.tree_peak = max(self.tree_peak, total)
        self.samples += 1


# --------------------------------------------------------------------------- one run


@dataclass(frozen=True, slots=True)
class LaneRun:
    lanes: int
    wall: float
    cpu: float
    result_dir: Path
    lane_peak_mb: float
    controller_peak_mb: float
    tree_peak_mb: float
    lanes_seen: int
    samples: int
    loadavg: tuple[float, float, float]


def run_lanes(root: Path, lanes: int, *, jobs: bool = False) -> LaneRun:
    """``pytest --skill-eval suite.json -n <lanes>`` (or ``-n 0 --skill-eval-jobs <lanes>``) in
    a fresh interpreter, sampled."""
    runs = root / ".skill-eval" / "runs"
    before = {p for p in runs.iterdir() if p.is_dir()} if runs.is_dir() else set()
    env = dict(os.environ)
    env.update(
        PYTEST_DISABLE_PLUGIN_AUTOLOAD="1",
        PYTEST_PLUGINS=",".join([PLUGIN, XDIST]),
        PYTHONPATH=os.pathsep.join(p for p in (str(HERE), os.environ.get("PYTHONPATH", "")) if p),
    )
    args = ["--skill-eval", "suite.json", "-q", "-p", "no:cacheprovider",
            *(["-n", "0", "--skill-eval-jobs", str(lanes)] if jobs else ["-n", str(lanes)])]
    cpu0 = cpu_seconds(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "pytest", *args], cwd=root, env=env, stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    sampler = TreeSampler(proc.pid).start()
    try:
        output, _ = proc.communicate(timeout=SUBPROCESS_TIMEOUT)
    finally:
        sampler.stop()
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    wall = time.perf_counter() - started
    cpu = cpu_seconds(resource.RUSAGE_CHILDREN) - cpu0
    if proc.returncode != 0:
        raise BenchError(f"pytest {' '.join(args)} in {root} exited {proc.returncode}:\n{output[-4000:]}")
    new = sorted(({p for p in runs.iterdir() if p.is_dir()} if runs.is_dir() else set()) - before)
    if not new:
        raise BenchError(f"pytest -n {lanes} wrote no result in {runs}")
    mb = 1024 * 1024
    peaks = list(sampler.lane_peak.values())
    load = os.getloadavg()
    return LaneRun(lanes, wall, cpu, new[-1], max(peaks, default=0) / mb, sampler.controller_peak / mb,
                   sampler.tree_peak / mb, len(peaks), sampler.samples, (load[0], load[1], load[2]))


# --------------------------------------------------------------------------- the evidence


def reply_chars(message: dict[str, Any]) -> int:
    """The output characters of one assistant message, counted as the stand-in paced them."""
    chars = 0
    for block in message.get("content") or ():
        if block.get("type") == "text":
            chars += len(block.get("text") or "")
        elif block.get("type") == "toolCall":
            chars += len(block.get("name") or "") + len(json.dumps(block.get("arguments") or {}, ensure_ascii=False))
    return chars


#: the scratch directory of a variant names the pytest process that ran it: ``run-<pid>-…``
_SCRATCH_PID = re.compile(r"/run-(\d+)-")


@dataclass
class Lane:
    """The pi runs one pytest process (one xdist worker: one lane) made, in start order."""

    runs: list[tuple[float, float, float]] = field(default_factory=list)  # start, end, model seconds

    def summary(self, spawn: float) -> dict[str, float]:
        runs = sorted(self.runs)
        gaps = sum(b[0] - a[1] for a, b in zip(runs, runs[1:], strict=False))
        duration = sum(end - start for start, end, _ in runs)
        model = sum(m for _, _, m in runs)
        return {
            "runs": len(runs), "first_start_s": runs[0][0] - spawn, "last_end_s": runs[-1][1] - spawn,
            "model_s": model, "pi_not_model_s": duration - model, "between_runs_s": gaps,
        }


def evidence_times(result_dir: Path, latency: Latency, *, jobs: bool = False) -> dict[str, Any]:
    """Model time, pi time, and per lane where the time went, from one stored result.

    Under xdist a run's lane is the worker pid in its scratch path. With jobs every run has
    the one pytest pid; the lanes are rebuilt from the groups' spans instead (a lane runs one
    group at a time: each group, in start order, goes to the lane that became free first).
    """
    model = 0.0
    requests = 0
    pi_time = 0.0
    starts: list[float] = []
    ends: list[float] = []
    per_run_other: list[float] = []
    lanes: dict[str, Lane] = {}
    by_group: dict[str, list[tuple[float, float, float]]] = {}
    pi_start: list[float] = []
    for run_json in sorted(result_dir.glob("groups/*/*/run.json")):
        run = json.loads(run_json.read_text(encoding="utf-8"))
        if run.get("started_at") is None or run.get("ended_at") is None:
            continue
        run_model = 0.0
        first_request: float | None = None
        for line in (run_json.parent / "events.jsonl").read_text(encoding="utf-8").splitlines():
            event = json.loads(line)
            message = event.get("message") if event.get("type") == "message_end" else None
            if isinstance(message, dict) and message.get("role") == "assistant":
                run_model += model_seconds(reply_chars(message), latency)
                requests += 1
                if first_request is None and isinstance(message.get("timestamp"), int | float):
                    first_request = float(message["timestamp"]) / 1000  # pi stamps a reply when it asks for it
        if first_request is not None:
            pi_start.append(first_request - float(run["started_at"]))
        duration = float(run["ended_at"]) - float(run["started_at"])
        span = (float(run["started_at"]), float(run["ended_at"]), run_model)
        if jobs:
            by_group.setdefault(run_json.parent.parent.name, []).append(span)
        else:
            pid = _SCRATCH_PID.search(str(run.get("env", {}).get("HOME", "")))
            lanes.setdefault(pid.group(1) if pid else "?", Lane()).runs.append(span)
        model += run_model
        pi_time += duration
        per_run_other.append(duration - run_model)
        starts.append(float(run["started_at"]))
        ends.append(float(run["ended_at"]))
    if jobs:
        free: list[tuple[float, str]] = []  # (when the lane became free, lane)
        for runs in sorted(by_group.values(), key=min):
            start = min(r[0] for r in runs)
            ready = [f for f in free if f[0] <= start]
            lane_name = min(ready)[1] if ready else f"lane-{len(free) + 1}"
            free = [f for f in free if f[1] != lane_name] + [(max(r[1] for r in runs), lane_name)]
            lanes.setdefault(lane_name, Lane()).runs.extend(runs)
    return {
        "pi_runs": len(starts),
        "model_requests": requests,
        "model_s": model,
        "pi_s": pi_time,
        "pi_not_model_s": pi_time - model,
        "pi_not_model_per_run_s": statistics.median(per_run_other) if per_run_other else 0.0,
        "first_start": min(starts, default=0.0),
        "last_end": max(ends, default=0.0),
        "lanes": lanes,
        "pi_start_s": statistics.median(pi_start) if pi_start else None,
    }


# --------------------------------------------------------------------------- the bench


def measure(root: Path, lanes: int, latency: Latency, *, jobs: bool = False) -> dict[str, Any]:
    load_before = os.getloadavg()
    wall_clock_start = time.time()
    run = run_lanes(root, lanes, jobs=jobs)
    times = evidence_times(run.result_dir, latency, jobs=jobs)
    ideal = times["model_s"] / lanes
    row = {
        "mode": "jobs" if jobs else "xdist",
        "lanes": lanes,
        "wall_s": round(run.wall, 3),
        "ideal_s": round(ideal, 3),
        "ratio": round(run.wall / ideal, 4) if ideal else None,
        "cpu_s": round(run.cpu, 2),
        "lane_peak_mb": round(run.lane_peak_mb, 1),
        "controller_peak_mb": round(run.controller_peak_mb, 1),
        "tree_peak_mb": round(run.tree_peak_mb, 1),
        "tree_peak_per_lane_mb": round(run.tree_peak_mb / lanes, 1),
        "lanes_seen": run.lanes_seen,
        "memory_samples": run.samples,
        "model_s": round(times["model_s"], 3),
        "model_requests": times["model_requests"],
        "pi_runs": times["pi_runs"],
        "pi_s": round(times["pi_s"], 3),
        "pi_not_model_s": round(times["pi_not_model_s"], 3),
        "pi_not_model_per_run_s": round(times["pi_not_model_per_run_s"], 3),
        "pi_start_to_first_request_s": None if times["pi_start_s"] is None else round(times["pi_start_s"], 3),
        "bring_up_s": round(times["first_start"] - wall_clock_start, 3),
        "tail_s": round(wall_clock_start + run.wall - times["last_end"], 3),
        "loadavg_before": [round(x, 2) for x in load_before],
        "loadavg_after": [round(x, 2) for x in run.loadavg],
    }
    lanes_seen = [lane.summary(wall_clock_start) for lane in times["lanes"].values()]
    if lanes_seen:
        # the lane that finished last decides the wall time: spawn -> its first pi start,
        # its pi runs (model time + the rest), the evaluator's work between them, then exit
        last = max(lanes_seen, key=lambda lane: lane["last_end_s"])
        row["critical_lane"] = {k: round(v, 3) for k, v in last.items()}
        row["lane_first_start_s"] = [round(min(x["first_start_s"] for x in lanes_seen), 3),
                                     round(max(x["first_start_s"] for x in lanes_seen), 3)]
        row["lane_last_end_s"] = [round(min(x["last_end_s"] for x in lanes_seen), 3),
                                  round(max(x["last_end_s"] for x in lanes_seen), 3)]
        row["lane_model_s"] = [round(min(x["model_s"] for x in lanes_seen), 3),
                               round(max(x["model_s"] for x in lanes_seen), 3)]
        row["between_runs_per_run_s"] = round(
            sum(x["between_runs_s"] for x in lanes_seen) / max(1, sum(x["runs"] - 1 for x in lanes_seen)), 4)
    return row


def render(report: dict[str, Any]) -> str:
    latency = report["latency"]
    lines = [
        f"[latency-bound: {report['groups']} groups, first token {latency['first_token_delay']} s, "
        f"{latency['tokens_per_second']} tokens/s; ideal = model time / lanes]",
        f"  {'lanes':>10} {'wall':>8} {'ideal':>8} {'ratio':>7} {'CPU':>7} {'MB/lane':>8} {'ctrl MB':>8} "
        f"{'tree MB':>8} {'bring-up':>9} {'tail':>6} {'pi-not-model/run':>17}",
    ]
    for row in report["runs"]:
        lines.append(
            f"  {_lanes_label(row):>10} {row['wall_s']:>7.2f}s {row['ideal_s']:>7.2f}s {row['ratio']:>6.3f}x "
            f"{row['cpu_s']:>6.1f}s {row['lane_peak_mb']:>8.0f} {row['controller_peak_mb']:>8.0f} "
            f"{row['tree_peak_mb']:>8.0f} {row['bring_up_s']:>8.2f}s {row['tail_s']:>5.2f}s "
            f"{row['pi_not_model_per_run_s']:>16.3f}s"
        )
    for row in report["runs"]:
        lane = row.get("critical_lane")
        if lane:
            lines.append(
                f"  {_lanes_label(row):<10} last lane: first pi start {lane['first_start_s']:.2f} s, model "
                f"{lane['model_s']:.1f} s, pi not model {lane['pi_not_model_s']:.1f} s, between runs "
                f"{lane['between_runs_s']:.2f} s, exit {row['wall_s'] - lane['last_end_s']:.2f} s; lanes end "
                f"{row['lane_last_end_s'][0]:.1f}-{row['lane_last_end_s'][1]:.1f} s, model per lane "
                f"{row['lane_model_s'][0]:.1f}-{row['lane_model_s'][1]:.1f} s"
                + ("" if row.get("pi_start_to_first_request_s") is None else
                   f"; pi start to first request {row['pi_start_to_first_request_s']:.2f} s (median)"))
    first = report["runs"][0] if report["runs"] else None
    if first:
        lines.append(f"  model time {first['model_s']:.1f} s over {first['model_requests']} model requests in "
                     f"{first['pi_runs']} pi runs; targets: ratio <= {TARGET_RATIO} at 8 lanes, "
                     f"<= {TARGET_LANE_MB:.0f} MB per lane")
    return "\n".join(lines)


def _lanes_label(row: dict[str, Any]) -> str:
    """``-n 8`` (xdist workers) or ``jobs 8`` (``-n 0 --skill-eval-jobs 8``)."""
    return f"{'jobs' if row.get('mode') == 'jobs' else '-n'} {row['lanes']}"


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--groups", type=int, default=None, help="groups in the suite (default 32, 4 with --quick)")
    parser.add_argument("--ttft", type=float, default=None, help="seconds to first token (default 1.5, 0.2 quick)")
    parser.add_argument("--tps", type=float, default=50.0, help="output tokens per second (default 50)")
    parser.add_argument("--lanes", default=None, help="comma-separated -n values (default 1,4,8,16; 1,2 quick)")
    parser.add_argument("--jobs", default="", help="comma-separated --skill-eval-jobs values run with -n 0 (after the -n runs)")
    parser.add_argument("--repeat-lanes", default="", help="comma-separated lane counts to run a second time")
    parser.add_argument("--quick", action="store_true", help="a smoke test: 4 groups, 0.2 s first token, -n 1,2")
    parser.add_argument("--quiet-wait", type=float, default=0.0, metavar="SECONDS",
                        help="before each run, wait up to this long for >= 80%% idle CPU (shared machines)")
    parser.add_argument("--output", type=Path, default=None,
                        help="JSON output (default results/latency.json, latency-quick.json with --quick)")
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    groups = args.groups or (4 if args.quick else 32)
    latency = Latency(args.ttft if args.ttft is not None else (0.2 if args.quick else 1.5), args.tps)
    lanes = [int(x) for x in (args.lanes if args.lanes is not None else ("1,2" if args.quick else "1,4,8,16")).split(",")
             if x]
    jobs = [int(x) for x in args.jobs.split(",") if x]
    repeat = [int(x) for x in args.repeat_lanes.split(",") if x]
    output = args.output or RESULTS / ("latency-quick.json" if args.quick else "latency.json")
    from pytest_skill_eval.host.install import resolve_host

    host = resolve_host(progress=say)
    machine = machine_info(host.version, host.node)
    with tempfile.TemporaryDirectory(prefix="skill-eval-latency-") as work:
        root = make_latency_suite(Path(work) / "suite", groups, latency)
        rows = []
        for count, as_jobs in [*((n, False) for n in lanes), *((n, True) for n in jobs), *((n, False) for n in repeat)]:
            if args.quiet_wait:
                say(f"latency: waiting up to {args.quiet_wait:.0f} s for a quiet machine "
                    f"(idle {wait_for_quiet(args.quiet_wait):.0%})")
            say(f"latency: {'-n 0 --skill-eval-jobs' if as_jobs else '-n'} {count}, {groups} groups, "
                f"load average {os.getloadavg()[0]:.2f}")
            rows.append(measure(root, count, latency, jobs=as_jobs))
            say(f"latency:   wall {rows[-1]['wall_s']} s, ideal {rows[-1]['ideal_s']} s, "
                f"ratio {rows[-1]['ratio']}, {rows[-1]['lane_peak_mb']} MB/lane")
    report = {
        "schema": "skill-eval-bench-latency/1",
        "created": datetime.now(UTC).isoformat(timespec="seconds"),
        "command": " ".join(["python", "benchmarks/latency.py", *(argv if argv is not None else sys.argv[1:])]),
        "groups": groups,
        "latency": {"first_token_delay": latency.first_token_delay, "tokens_per_second": latency.tokens_per_second},
        "machine": machine,
        "runs": rows,
    }
    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    print(render(report))
    print(f"\nwritten: {output}")
    return 0


if __name__ == "__main__":
    try:
        raise SystemExit(main())
    except BenchError as exc:
        print(f"latency: error: {exc}", file=sys.stderr)
        raise SystemExit(2) from None
