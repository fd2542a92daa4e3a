"""The batch summary ``result.json``: written last, from the groups' persisted records."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pytest_skill_eval.evidence import layout, store


def write_batch_summary(result_dir: Path, result_id: str, *, interrupted: bool, stopped: str | None = None) -> dict[str, Any]:
    """Write ``result.json`` (last): one entry per selected group, whether or not it ran.

    The selection comes from ``selection.json``; a selected group with no directory never
    started: ``cancelled`` after Ctrl-C, else ``not-run`` with the reason pytest stopped
    (*stopped*, e.g. ``-x``). Group directories not in the selection are listed too.
    """
    selection_file = result_dir / layout.SELECTION_FILE
    selection: Mapping[str, Any] = store.read_json(selection_file) if selection_file.is_file() else {}
    selected_variants = set(selection.get("variants") or ("baseline", "candidate"))
    on_disk = {d.name: d for d in layout.group_dirs(result_dir)}
    groups: list[dict[str, Any]] = []
    for planned in selection.get("groups", []):
        gdir = on_disk.pop(str(planned.get("dir")), None)
        if gdir is not None:
            groups.append(_persisted_entry(gdir, interrupted))
            continue
        state = "cancelled" if interrupted else "not-run"
        reason = ("cancelled before it started" if interrupted
                  else f"not run: pytest stopped early ({stopped})" if stopped
                  else "not run: no process ran it")
        groups.append({
            "dir": None,
            "id": planned.get("id"),
            "position": planned.get("position"),
            "state": state,
            "reason": reason,
            "grade_state": None,
            "variants": {n: state if n in selected_variants else "not-selected" for n in ("baseline", "candidate")},
            "comparisons": {},
        })
    groups.extend(_persisted_entry(gdir, interrupted) for gdir in on_disk.values())
    groups.sort(key=lambda g: (g["position"] if isinstance(g["position"], int) else 0))
    states = [g["state"] for g in groups]
    if interrupted or "cancelled" in states:
        state = "cancelled"
    elif groups and all(s == "invalid" for s in states):
        state = "invalid"
    elif all(s == "complete" for s in states):
        state = "complete"
    else:
        state = "partially-complete"
    summary = {"result_id": result_id, "state": state, "groups": groups}
    store.write_json(result_dir / "result.json", summary)
    return summary


def _persisted_entry(gdir: Path, interrupted: bool) -> dict[str, Any]:
    """The summary entry of a group that started, from its group record (or what there is of it)."""
    record_file = layout.group_record_file(gdir)
    position = int(gdir.name.split("-", 1)[0])
    if record_file is None:
        # started, but the process running it stopped before the group record was written
        runs = {n: store.read_json(gdir / n / "run.json") for n in ("baseline", "candidate") if (gdir / n / "run.json").is_file()}
        definition = store.read_json(gdir / "definition.json") if (gdir / "definition.json").is_file() else {}
        return {
            "dir": gdir.name,
            "id": (definition.get("definition") or {}).get("id", gdir.name.split("-", 1)[1]),
            "position": position,
            "state": "cancelled" if interrupted else "not-run",
            "reason": "stopped before its group.json was written",
            "grade_state": None,
            "variants": {n: runs[n].get("state") if n in runs else "not-run" for n in ("baseline", "candidate")},
            "comparisons": {},
        }
    group = store.read_json(record_file)
    grade_path = layout.grade_file(gdir, group)
    grade: Mapping[str, Any] = store.read_json(grade_path) if grade_path.is_file() else {}
    return {
        "dir": gdir.name,
        "id": group["id"],
        "position": group.get("position", position),
        "state": group["state"],
        "reason": None,
        "grade_state": group.get("grade_state"),
        "variants": {n: v["state"] for n, v in group["variants"].items()},
        "comparisons": {c["id"]: c["transition"] for c in grade.get("comparisons", [])},
    }
