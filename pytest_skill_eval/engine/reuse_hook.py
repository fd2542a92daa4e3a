"""``--skill-eval-reuse-baseline <result>``: stored baseline runs instead of running the baseline again.

The group loop calls :func:`plan_reuse` once per group after the shared snapshots are taken,
and, per trial, :meth:`BaselineReuse.copy_run` instead of running the baseline when the plan
reuses. Reuse happens only where the inputs are provably the same
(:func:`pytest_skill_eval.reuse.first_difference` over the definition apart from
candidate-only fields, model and thinking, host and plugin version, tools, runtime, every
input file's digest and mode, prompt or turns, script and seed); any difference refuses reuse
for that group, names the first differing field, and the group runs normally.

The stored result is untrusted input: its records are read through their schemas (nothing
below it is followed), a run directory is copied by :mod:`..evidence.copying` (links and
special files refused, shared inodes only where a manifest vouches for the bytes), and every
object a reused run's snapshot names is read back and checked against its digest before it
is stored in the new result. ``reuse.json`` (group directory) records what was reused or why
not: the source result, its group directory, each trial's source run, and the digests.
"""

from __future__ import annotations

import hashlib
import shutil
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pytest_skill_eval import __version__
from pytest_skill_eval.definitions.model import Group
from pytest_skill_eval.engine.config import EngineConfig, VariantOutcome
from pytest_skill_eval.errors import DefinitionError, EvidenceError, ScriptError, SkillEvalError, SourceError
from pytest_skill_eval.evidence import layout, objects, safe_io, store
from pytest_skill_eval.evidence.copying import copy_stored_tree
from pytest_skill_eval.evidence.reader import read_optional, read_record
from pytest_skill_eval.evidence.records import DefinitionRecord, GroupRecord, ResultRecord, RunRecord
from pytest_skill_eval.evidence.reuse_records import REUSE_FILE, reuse_text
from pytest_skill_eval.redaction import Redactor
from pytest_skill_eval.reuse import BaselineInputs, first_difference
from pytest_skill_eval.sources.isolation import GroupSources, materialise_resources

if TYPE_CHECKING:
    from pytest_skill_eval.engine.group_run import GroupRun

__all__ = ["BaselineReuse", "plan_reuse", "with_reuse"]

@dataclass
class BaselineReuse:
    """One group's reuse plan: the stored runs by trial, or why none is reused."""

    source: Path
    source_id: str
    reason: str | None = None
    group_dir: str | None = None
    runs: dict[int, Path] = field(default_factory=dict)
    files: Mapping[str, tuple[str, str]] = field(default_factory=dict)
    copied: list[dict[str, Any]] = field(default_factory=list)
    #: per trial: the staged copy, its run record, the objects it names, the sha256 of its run.json
    staged: dict[int, tuple[Path, RunRecord, list[str], str]] = field(default_factory=dict)
    #: every object the staged runs name, read and checked against its digest
    objects: dict[str, bytes] = field(default_factory=dict)

    @property
    def reuses(self) -> bool:
        return self.reason is None

    def stage(self, staging: Path) -> None:
        """Copy every stored run to be reused into *staging* and read every object it names, checked
        against its digest, before anything runs: a hostile stored result refuses reuse here, never mid-group."""
        staging.mkdir(parents=True, exist_ok=True)
        for trial, source in sorted(self.runs.items()):
            record = read_record(RunRecord, source / "run.json", self.source)
            copy_stored_tree(source, staging / str(trial), self.source)
            snapshot = record.snapshot
            digests = {f.sha256 for f in snapshot.files.values()} if snapshot is not None else set()
            if snapshot is not None and snapshot.script is not None:
                digests.add(snapshot.script.sha256)
            for digest in sorted(digests):
                self.objects.setdefault(digest, objects.read(self.source, digest))
            self.staged[trial] = (staging / str(trial), record, sorted(digests),
                                  hashlib.sha256(safe_io.read_bytes(source / "run.json", self.source)).hexdigest())

    def copy_run(self, trial: int, run_dir: Path, cfg: EngineConfig) -> VariantOutcome:
        """Trial *trial*'s staged baseline run into *run_dir*, its inputs into the new object store."""
        staged, record, digests, run_json = self.staged[trial]
        for digest in digests:
            objects.put(cfg.result_dir, self.objects[digest])
        run_dir.parent.mkdir(parents=True, exist_ok=True)
        shutil.move(staged, run_dir)  # the scratch directory may be on another file system
        self.copied.append({"trial": trial, "source": self.runs[trial].relative_to(self.source).as_posix(),
                            "run_sha256": run_json, "objects": len(digests)})
        cfg.progress(f"[baseline] reused trial {trial} from {self.source_id}")
        return VariantOutcome("baseline", record.state, with_reuse(record.reason, self), run_dir)

    def to_json(self) -> dict[str, Any]:
        return {
            "source_result": self.source_id, "source_group": self.group_dir, "variant": "baseline",
            "reused": self.reuses, "reason": self.reason,
            "runs": list(self.copied),
            "files": {k: {"sha256": sha, "mode": mode} for k, (sha, mode) in sorted(self.files.items())},
        }

    def write(self, group_dir: Path, redactor: Redactor) -> None:
        store.write_record(group_dir / REUSE_FILE, self, redactor)


def _tree(base: Path, top: str, redactor: Redactor) -> dict[str, tuple[str, str]]:
    """``{top/rel: (sha256, mode)}`` of the regular files under ``base/top``, redacted as the object store stores them."""
    return {rel: (hashlib.sha256(redactor.data(data)[0] if redactor.active else data).hexdigest(), mode)
            for rel, data, mode in objects.regular_files(base, top)}


def _current(group: Group, cfg: EngineConfig, fixture: Path, bundles: Path, sources: GroupSources | None,
             redactor: Redactor, seed: str | None) -> BaselineInputs:
    """What the baseline about to run gets, computed as the object store would store it (nothing runs)."""
    with tempfile.TemporaryDirectory(prefix="skill-eval-reuse-") as tmp:
        base = Path(tmp)
        files = {f"workspace/{k.split('/', 1)[1]}": v for k, v in _tree(fixture.parent, fixture.name, redactor).items()}
        materialise_resources(group.variant("baseline"), base, cfg.root, sources)
        files.update(_tree(base, "resources", redactor))
        files.update({f"extensions/{k.split('/', 1)[1]}": v
                      for k, v in _tree(bundles.parent, bundles.name, redactor).items()})
    script = None
    path = cfg.models.script_path(group)
    if path is not None:
        data = path.read_bytes()
        script = hashlib.sha256(redactor.data(data)[0] if redactor.active else data).hexdigest()
    host = cfg.host().version
    return BaselineInputs(dict(group.raw), host, __version__, files, script, seed if script is not None else None)


def _stored(source: Path, group: Group, trials: int) -> tuple[BaselineInputs, str, dict[int, Path]]:
    """The stored group of the same id: its baseline inputs, its directory, and its baseline run per trial."""
    matches = []
    for gdir in layout.group_dirs(source):
        if safe_io.entry_kind(gdir / "definition.json", source) is None:
            continue
        definition = read_record(DefinitionRecord, gdir / "definition.json", source)
        if definition.definition.get("id") == group.id:
            matches.append((gdir, definition))
    if not matches:
        raise SourceError(f"the stored result holds no group {group.id!r}")
    gdir, definition = matches[0]
    record = read_record(GroupRecord, gdir / layout.GROUP_FILE, source)
    if trials > 1:
        if record.trials is None or record.trials.ran < trials:
            ran = record.trials.ran if record.trials is not None else 1
            raise SourceError(f"the stored group ran {ran} baseline run(s), this run plans {trials} trials")
        runs = {k: layout.trial_dir(gdir, k) / "baseline" for k in range(1, trials + 1)}
    else:
        runs = {1: gdir / "baseline" if record.trials is None else layout.trial_dir(gdir, 1) / "baseline"}
    stored_runs = {k: read_record(RunRecord, path / "run.json", source) for k, path in runs.items()}
    first = stored_runs[min(stored_runs)]
    if first.snapshot is None:
        raise SourceError("the stored baseline run holds no record of its inputs (run.json has no snapshot)")
    for k, run in stored_runs.items():
        if run.variant != "baseline" or run.snapshot != first.snapshot:
            raise SourceError(f"the stored baseline runs did not all get the same inputs (trial {k} differs from "
                              f"trial {min(stored_runs)})")
    summary = read_optional(ResultRecord, source / "result.json", source)
    provenance = summary.provenance if isinstance(summary, ResultRecord) else None
    version = provenance.versions.get("pytest-skill-eval") if provenance is not None else None
    host = first.ran.host.get("version") if first.ran is not None else None
    script = first.snapshot.script.sha256 if first.snapshot.script is not None else None
    seed = provenance.seed if provenance is not None and script is not None else None
    files = {k: (f.sha256, f.mode) for k, f in first.snapshot.files.items()}
    inputs = BaselineInputs(dict(definition.definition), host if isinstance(host, str) else None, version, files,
                            script, seed)
    return inputs, gdir.relative_to(source).as_posix(), runs


def with_reuse(reason: str | None, reuse: BaselineReuse) -> str:
    """A baseline's state reason with what reuse did (``baseline reused from …`` or why not)."""
    text = reuse_text(reuse.to_json())
    return f"{reason}; {text}" if reason else text


def plan_reuse(run: GroupRun) -> BaselineReuse | None:
    """The group's reuse plan (None when no ``--skill-eval-reuse-baseline`` was given or the baseline is not
    selected), its runs staged under the group's scratch directory."""
    group, cfg, shared, redactor = run.group, run.cfg, run.shared, run.redactor
    source = cfg.reuse_baseline
    if source is None or "baseline" not in cfg.selected:
        return None
    plan = BaselineReuse(source, source.name)
    try:
        stored, plan.group_dir, runs = _stored(source, group, cfg.trials)
        current = _current(group, cfg, shared.fixture, shared.bundles, shared.sources, redactor, cfg.seed)
    except (SkillEvalError, DefinitionError, EvidenceError, ScriptError, SourceError, OSError) as exc:
        plan.reason = f"baseline not reused: {exc}"
    else:
        difference = first_difference(stored, current)
        if difference is not None:
            plan.reason = difference.text()
        else:
            plan.runs, plan.files = runs, current.files
            try:
                plan.stage(run.scratch / "reuse")
            except (SkillEvalError, OSError) as exc:
                plan.reason, plan.runs, plan.staged = f"baseline not reused: {exc}", {}, {}
    if plan.reason is not None:
        cfg.progress(f"{group.id}: {plan.reason}; the baseline runs")
    return plan
