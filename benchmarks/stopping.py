"""pi runs saved by ``--skill-eval-stop`` on the trials example (issue 29).

    python benchmarks/stopping.py [--trials 20] [--output results/stopping.json]

Runs ``example_suites/trials`` (2 groups, seed ``trials-example``) through the plugin once per
setting: ``off`` (every planned trial), ``curtail`` and ``sequential`` under the suite's own
policy (``candidate``, pass rate 0.75), and ``curtail`` and ``sequential`` under
``--skill-eval-fail-on regression``. For each it reports the pi runs (trials that ran x 2
variants, from each ``group.json``), the runs saved against running every planned trial, the
wall time, each group's outcome, and whether every verdict equals the full run's under the
same policy (for ``curtail`` it must; ``sequential`` decides by its own test). Nothing is
asserted.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
TRIALS = HERE.parent / "example_suites" / "trials"

SETTINGS: list[tuple[str, list[str]]] = [
    ("off", []),
    ("curtail", ["--skill-eval-stop", "curtail"]),
    ("sequential", ["--skill-eval-stop", "sequential"]),
    ("off, regression", ["--skill-eval-fail-on", "regression"]),
    ("curtail, regression", ["--skill-eval-stop", "curtail", "--skill-eval-fail-on", "regression"]),
    ("sequential, regression", ["--skill-eval-stop", "sequential", "--skill-eval-fail-on", "regression"]),
]


def run_once(trials: int, extra: list[str]) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="skill-eval-stop-bench-") as tmp:
        root = Path(tmp) / "trials"
        shutil.copytree(TRIALS, root, ignore=shutil.ignore_patterns(".skill-eval"))
        started = time.perf_counter()
        done = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "-rN",
                               "--skill-eval-trials", str(trials), "--junitxml=junit.xml", *extra],
                              cwd=root, capture_output=True, text=True)
        wall = time.perf_counter() - started
        (result,) = (p for p in (root / ".skill-eval" / "runs").iterdir() if p.is_dir())
        groups: dict[str, Any] = {}
        for gdir in sorted((result / "groups").iterdir()):
            record = json.loads((gdir / "group.json").read_text())
            aggregate = json.loads((gdir / "aggregate.json").read_text())
            stopping = (json.loads((gdir / "stopping.json").read_text())
                        if (gdir / "stopping.json").exists() else None)
            groups[record["id"]] = {
                "ran": record["trials"]["ran"], "planned": record["trials"]["planned"],
                "rates": {e["id"]: [e["passes"], e["passes"] + e["fails"]] for e in aggregate["expectations"]},
                "stopping": stopping["reason"] if stopping is not None else None,
                "outcome": _outcome(root / "junit.xml", record["id"]),
            }
        return {"exit": done.returncode, "wall_s": round(wall, 1), "groups": groups,
                "pi_runs": 2 * sum(g["ran"] for g in groups.values()),
                "planned_runs": 2 * sum(g["planned"] for g in groups.values())}


def _testcases(junit: Path) -> list[Any]:
    from xml.etree import ElementTree

    return list(ElementTree.parse(junit).iter("testcase"))


def _outcome(junit: Path, group_id: str) -> str:
    for case in _testcases(junit):
        if str(case.get("name", "")).endswith(group_id):
            if case.find("failure") is not None:
                return "failed"
            return "error" if case.find("error") is not None else "passed"
    return "unknown"


def verdicts(run: dict[str, Any], pass_rate: float) -> dict[str, Any]:
    """Per group: its outcome and each expectation's pass-rate verdict."""
    return {gid: (g["outcome"], {e: p / n < pass_rate for e, (p, n) in g["rates"].items() if n})
            for gid, g in run["groups"].items()}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--trials", type=int, default=20)
    parser.add_argument("--output", type=Path, default=None)
    args = parser.parse_args(argv)
    runs = {name: run_once(args.trials, extra) for name, extra in SETTINGS}
    print(f"{'setting':<24} {'pi runs':>8} {'saved':>6} {'wall s':>7}  same verdicts as off  per group")
    for name, run in runs.items():
        full = runs["off, regression" if "regression" in name else "off"]
        same = verdicts(run, 0.75) == verdicts(full, 0.75)
        saved = run["planned_runs"] - run["pi_runs"]
        groups = "; ".join(f"{gid}: {g['ran']}/{g['planned']} {g['outcome']}" for gid, g in run["groups"].items())
        print(f"{name:<24} {run['pi_runs']:>8} {saved:>6} {run['wall_s']:>7}  {str(same):<20}  {groups}")
    if args.output is not None:
        args.output.parent.mkdir(parents=True, exist_ok=True)
        args.output.write_text(json.dumps(runs, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
