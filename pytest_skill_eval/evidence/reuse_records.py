"""``reuse.json``: what ``--skill-eval-reuse-baseline`` reused in a group, or why it did not.

Written by the engine (``engine/reuse_hook.py``) into the group directory before
``group.json``; checked against ``schemas/evidence-reuse.schema.json`` when read. It names the
source result and group directory, each trial's source run and the SHA-256 of its ``run.json``,
how many objects were copied (each checked against its digest), and the digest and mode of
every input file the baseline got; or, when reuse was refused, the first differing field.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pytest_skill_eval.evidence.layout import REUSE_FILE

__all__ = ["REUSE_FILE", "parse_reuse", "read_reuse", "reuse_text"]


def read_reuse(group_dir: Path, root: Path | None = None) -> dict[str, Any] | None:
    """The group's ``reuse.json`` (checked by its schema), or None when absent; EvidenceError naming it otherwise."""
    from pytest_skill_eval.evidence import safe_io

    path = group_dir / REUSE_FILE
    data = safe_io.read_json(path, root, missing_ok=True)
    if data is safe_io.ABSENT:
        return None
    return parse_reuse(data, path)


def parse_reuse(data: Any, source: Path | str) -> dict[str, Any]:
    """A stored ``reuse.json`` checked by ``evidence-reuse``; EvidenceError naming *source* when it is not one."""
    from pytest_skill_eval.evidence import records

    records.check("evidence-reuse", data, source)
    found: dict[str, Any] = data
    return found


def reuse_text(data: Mapping[str, Any]) -> str:
    """``baseline reused from <id> (groups/001-x, trials 1-20)``, or why it was not."""
    if not data.get("reused"):
        return str(data.get("reason") or "baseline not reused")
    trials = [r["trial"] for r in data.get("runs", [])]
    which = (f"trial {trials[0]}" if len(trials) == 1 else f"trials {min(trials)}-{max(trials)}") if trials else "no run"
    return f"baseline reused from {data['source_result']} ({data.get('source_group')}, {which})"
