"""pytest plugin for ad-hoc timelines (not used by ``run.py``): when each process and item ran.

With ``SKILL_EVAL_BENCH_TIMELINE=<file>`` every pytest process that loads it (the
controller and each xdist worker) appends lines ``<seconds> <process> <event> [item]`` to
the file; seconds count from ``SKILL_EVAL_BENCH_T0`` (a Unix time, default: when the
plugin was imported). This is how docs/performance.md times xdist bring-up, each
worker's items, the tail and the shutdown::

    T0=$(date +%s.%N) SKILL_EVAL_BENCH_T0=$T0 SKILL_EVAL_BENCH_TIMELINE=/tmp/timeline.txt \\
    PYTHONPATH=benchmarks PYTEST_PLUGINS=_timeline pytest --skill-eval suite.json -q -n 2
    sort -n /tmp/timeline.txt
"""

from __future__ import annotations

import os
import time
from collections.abc import Generator

import pytest

OUT = os.environ.get("SKILL_EVAL_BENCH_TIMELINE")
T0 = float(os.environ.get("SKILL_EVAL_BENCH_T0") or time.time())


def _log(config: pytest.Config, event: str, item: str = "") -> None:
    if not OUT:
        return
    workerinput = getattr(config, "workerinput", None)
    who = str(workerinput["workerid"]) if workerinput else "main"
    with open(OUT, "a", encoding="utf-8") as handle:
        handle.write(f"{time.time() - T0:8.3f} {who:5} {event} {item}".rstrip() + "\n")


def pytest_configure(config: pytest.Config) -> None:
    _log(config, "configure")


def pytest_collection_finish(session: pytest.Session) -> None:
    _log(session.config, "collected", f"{len(session.items)} items")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Generator[None, None, None]:
    _log(item.config, "start", item.name)
    yield
    _log(item.config, "end", item.name)


def pytest_unconfigure(config: pytest.Config) -> None:
    _log(config, "unconfigure")
