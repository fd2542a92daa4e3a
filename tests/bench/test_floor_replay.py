"""``benchmarks/run.py``'s bare floor replays the plugin's recorded pi invocations against the
benchmark's own stand-in: the same model turns as the plugin's run (no time is asserted).

The recording run's confinement rules let pi connect to that run's stand-in port only; the
floor's stand-in listens on another port, so the replay must move the rule, or every
replayed pi is refused the connection (``connect EACCES``) and the floor measures nothing.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "benchmarks"))

import run as bench  # noqa: E402

pytestmark = pytest.mark.pi


def test_the_floor_replays_every_recorded_invocation_with_the_plugin_s_turns(
        pi_host: Any, tmp_path: Path) -> None:
    from pytest_skill_eval.scripted.server import ScriptedModelServer

    root = bench.make_suite(tmp_path / "suite", 2)
    invocations, registrations, _ = bench.record_invocations(root, tmp_path / "record")
    assert len(invocations) == 4
    server = ScriptedModelServer().start()
    try:
        for name, script in registrations.items():
            server.register(name, Path(script))
        floor = bench.run_floor(invocations, bench.run_raw, server.base_url)
        driven = bench.run_floor(invocations, bench.run_with_driver, server.base_url)
    finally:
        server.stop()
    assert floor.turn_ends == driven.turn_ends == tuple(inv.turn_ends for inv in invocations)
    assert all(n >= 1 for n in floor.turn_ends)
