"""``benchmarks/latency.py`` works: its smallest run (xdist lanes and jobs), end to end (no time is asserted)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.pi


def test_the_latency_benchmark_runs_and_reports_every_lane_count(pi_host: Any, tmp_path: Path) -> None:
    out = tmp_path / "latency.json"
    done = subprocess.run(
        [sys.executable, str(REPO / "benchmarks" / "latency.py"), "--quick", "--groups", "2", "--ttft", "0.05",
         "--tps", "400", "--lanes", "1,2", "--jobs", "2", "--output", str(out)],
        capture_output=True, text=True, timeout=600, cwd=tmp_path,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    report = json.loads(out.read_text())
    assert report["latency"] == {"first_token_delay": 0.05, "tokens_per_second": 400}
    assert [(row["mode"], row["lanes"]) for row in report["runs"]] == [("xdist", 1), ("xdist", 2), ("jobs", 2)]
    for row in report["runs"]:
        assert row["pi_runs"] == 4  # 2 groups x 2 variants
        assert row["model_requests"] >= row["pi_runs"]
        # the ideal is the model time the server's schedule gives every reply, over the lanes
        assert row["model_s"] >= 0.05 * row["model_requests"]
        assert row["ideal_s"] == pytest.approx(row["model_s"] / row["lanes"], abs=1e-3)
        assert row["lanes_seen"] >= 1 and row["lane_peak_mb"] > 0 and row["tree_peak_mb"] >= row["lane_peak_mb"]
    # with jobs the lanes are rebuilt from the groups' spans: two groups, two lanes at most
    assert 1 <= report["runs"][2]["critical_lane"]["runs"] <= 4
    assert "ideal = model time / lanes" in done.stdout
    assert "    jobs 2 " in done.stdout
