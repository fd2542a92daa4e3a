"""pytest plugin loaded only by ``benchmarks/run.py`` for its "what-if" measurements.

It applies, inside the measured pytest process, changes that
``docs/performance.md`` proposes, so their effect is measured end to end rather than
estimated. ``SKILL_EVAL_BENCH_WHATIF`` is a comma-separated list of:

``compile-cache``
    ``LaunchPlan.env()`` (``host/launch.py``) without ``NODE_DISABLE_COMPILE_CACHE=1`` and
    with ``NODE_COMPILE_CACHE=$SKILL_EVAL_BENCH_COMPILE_CACHE``: node keeps the compiled
    code of pi's bundle in one shared directory instead of recompiling it at every start.

``no-probe``
    ``install.probe_version`` (``host/install.py``) reads the version from pi's
    ``package.json`` instead of spawning ``node pi --version`` (about 0.2 s of CPU per
    pytest process, i.e. per xdist worker).

``server-poll``
    The scripted stand-in's ``serve_forever`` polls for shutdown every 0.01 s instead of
    0.1 s (``scripted/server.py``, ``ScriptedModelServer.start``), so stopping it at the
    end of the session no longer waits up to 0.1 s.

``no-dir-fsync``
    ``store.write_atomic`` (``evidence/store.py``) without its per-file directory fsync (file
    fsyncs stay). An upper bound for fsyncing each evidence directory once instead; not
    part of the default what-if sets, used for a separate measurement.

Nothing here is part of the package; it only patches the imported modules of one run.
"""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import Any

import pytest

ENV = "SKILL_EVAL_BENCH_WHATIF"
CACHE_ENV = "SKILL_EVAL_BENCH_COMPILE_CACHE"


def version_from_package_json(cli: Path) -> str | None:
    """pi's version from the ``package.json`` of the package that holds *cli*."""
    for parent in Path(cli).resolve().parents:
        manifest = parent / "package.json"
        if manifest.is_file():
            data = json.loads(manifest.read_text(encoding="utf-8"))
            if str(data.get("name", "")).endswith("/pi-coding-agent"):
                return str(data["version"])
    return None


def pytest_configure(config: pytest.Config) -> None:
    changes = {c.strip() for c in os.environ.get(ENV, "").split(",") if c.strip()}
    if "compile-cache" in changes:
        from pytest_skill_eval.host import launch

        cache = os.environ[CACHE_ENV]
        original_env = launch.LaunchPlan.env

        def env(self: Any) -> dict[str, str]:
            values = dict(original_env(self))
            values.pop("NODE_DISABLE_COMPILE_CACHE", None)
            values["NODE_COMPILE_CACHE"] = cache
            return values

        launch.LaunchPlan.env = env  # type: ignore[method-assign]
    if "no-probe" in changes:
        from pytest_skill_eval.host import install

        original_probe = install.probe_version

        def probe_version(node: Path, cli: Path) -> str:
            return version_from_package_json(cli) or original_probe(node, cli)

        install.probe_version = probe_version
    if "server-poll" in changes:
        import socketserver

        from pytest_skill_eval.scripted import handler

        def serve_forever(self: Any, poll_interval: float = 0.5) -> None:
            socketserver.BaseServer.serve_forever(self, min(poll_interval, 0.01))

        handler.ScriptedHTTPServer.serve_forever = serve_forever  # type: ignore[method-assign]
    if "no-dir-fsync" in changes:
        from pytest_skill_eval.evidence import store

        store.os = _FileFsyncOnly()  # type: ignore[attr-defined,assignment]


class _FileFsyncOnly:
    """``os`` as ``evidence`` sees it, except that fsync of a directory is skipped."""

    def __getattr__(self, name: str) -> Any:
        return getattr(os, name)

    @staticmethod
    def fsync(fd: int) -> None:
        if not stat.S_ISDIR(os.fstat(fd).st_mode):
            os.fsync(fd)
