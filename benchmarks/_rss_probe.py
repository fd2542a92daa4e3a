"""pytest plugin loaded only by ``benchmarks/run.py``: records peak memory of pytest processes.

When ``SKILL_EVAL_BENCH_RSS_DIR`` is set, every pytest process that loads this plugin (the
controller and, under xdist, each worker) writes one JSON file there at unconfigure time:

* ``self_kb``: ``ru_maxrss`` of the pytest process itself (``RUSAGE_SELF``), i.e. the
  evaluator's own peak resident memory;
* ``children_kb``: ``ru_maxrss`` over its reaped children (``RUSAGE_CHILDREN``): the
  largest pi host process this pytest process started and waited for.

``RUSAGE_CHILDREN`` seen from the benchmark would mix both (the maximum over the whole
tree, which is always a pi process), hence this probe inside the measured process.
"""

from __future__ import annotations

import json
import os
import resource
from pathlib import Path

import pytest

ENV = "SKILL_EVAL_BENCH_RSS_DIR"


def pytest_unconfigure(config: pytest.Config) -> None:
    out = os.environ.get(ENV)
    if not out:
        return
    workerinput = getattr(config, "workerinput", None)
    role = str(workerinput.get("workerid", "worker")) if workerinput else "main"
    record = {
        "role": role,
        "pid": os.getpid(),
        "self_kb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
        "children_kb": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss,
    }
    Path(out, f"{role}-{os.getpid()}.json").write_text(json.dumps(record), encoding="utf-8")
