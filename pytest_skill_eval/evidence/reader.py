"""Reading stored evidence back through its typed records (what grading and the views see)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from pytest_skill_eval.evidence import records
from pytest_skill_eval.evidence.store import read_files, read_json
from pytest_skill_eval.observation import RunObservation


def read_record(kind: type[records.Record], path: Path) -> records.Record:
    """The typed record stored at *path*; :class:`EvidenceError` naming the file when it is not one."""
    return records.parse(kind, read_json(path), path)


def load_observation(run_dir: Path) -> RunObservation:
    """Rebuild what grading sees of a run from its persisted evidence alone."""
    run = read_record(records.RunRecord, run_dir / "run.json")
    transcript_path = run_dir / "transcript.json"
    turns = (
        tuple(t.turn for t in read_record(records.TranscriptRecord, transcript_path).turns)
        if transcript_path.exists() else ()
    )
    turn_files: dict[int, Mapping[str, bytes]] = {}
    turns_dir = run_dir / "turns"
    if turns_dir.is_dir():
        for entry in sorted(turns_dir.iterdir()):
            if entry.name.isdigit():
                turn_files[int(entry.name)] = read_files(entry / "workspace")
    observed = run_dir / "context-observations.json"
    requests = read_record(records.ContextObservations, observed).requests if observed.exists() else ()
    paths = run.paths
    return RunObservation(
        variant=run.variant,
        state=run.state,
        workspace_root=paths.workspace if paths else "",
        skill_roots=paths.skills if paths else (),
        target_file=paths.target_file if paths else None,
        context_roots=paths.context if paths else (),
        turns=turns,
        initial_files=read_files(run_dir / "workspace-initial"),
        final_files=read_files(run_dir / "workspace"),
        turn_files=turn_files,
        context_requests=requests,
        redactions=run.redactions,
    )
