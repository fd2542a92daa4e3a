"""A stored result as the source of a rerun: its definitions and the inputs its variants got.

``skill-eval rerun <result>`` runs the groups of a stored result again into a new result.
Nothing is read from today's working tree or Git: each group's definition comes from its
``definition.json``, and the fixture, bundles, skills, context and scripted model's script
are materialised from the result's ``objects/`` store, through each variant's ``run.json``
``snapshot``. A result written before results stored their inputs cannot be rerun.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from pytest_skill_eval.definitions.loading import group_from_document
from pytest_skill_eval.definitions.model import VARIANTS, Group, Suite, Variant, VariantName
from pytest_skill_eval.definitions.rules import check_group_document
from pytest_skill_eval.errors import DefinitionError, EvidenceError, ScriptError, SourceError
from pytest_skill_eval.evidence import layout, objects, safe_io
from pytest_skill_eval.evidence.reader import read_optional, read_record
from pytest_skill_eval.evidence.records import DefinitionRecord, GroupRecord, RunRecord, SnapshotRecord
from pytest_skill_eval.paths import shown
from pytest_skill_eval.sources.isolation import Copy
from pytest_skill_eval.sources.snapshots import SourceIdentity


class StoredResult:
    """The groups of one stored result, and the inputs its variants got."""

    def __init__(self, result_dir: Path) -> None:
        self.result_dir = result_dir
        self.result_id = result_dir.name
        # a definition.json that is there but not a regular file is read (and refused, located) later
        self.group_dirs = {layout.group_position(d.name): d for d in layout.group_dirs(result_dir)
                           if safe_io.entry_kind(d / "definition.json", result_dir) is not None}
        self._runs: dict[int, dict[VariantName, RunRecord]] = {}
        self._scratch: Path | None = None
        #: the result-relative run.json each snapshot was read from (by id), for located errors
        self.snapshot_files: dict[int, str] = {}
        #: where each materialised script came from in the stored run
        self._origins: dict[Path, str] = {}

    def check_rerunnable(self) -> None:
        """An :class:`EvidenceError` saying why this result cannot be rerun, if it cannot."""
        if not self.group_dirs:
            raise EvidenceError(f"result {self.result_id} holds no group definitions (groups/*/definition.json): "
                                "there is nothing to run again")
        # every run record is read now, so a hostile one stops the rerun before anything runs
        stored_runs = [self.runs(position) for position in self.group_dirs]
        if not safe_io.is_dir(self.result_dir / objects.OBJECTS_DIR, self.result_dir) or not any(stored_runs):
            raise EvidenceError(
                f"result {self.result_id} was written by a version of pytest-skill-eval that did not store the "
                "inputs its variants got (no objects/ store, no run.json snapshot): it cannot be rerun from its own "
                "inputs; run the suite again instead")

    def definition_files(self) -> list[Path]:
        return [d / "definition.json" for _, d in sorted(self.group_dirs.items())]

    def load_group(self, definition_file: Path) -> tuple[Group, int, Suite | None]:
        """The group a stored ``definition.json`` holds, its position, and its suite (if any)."""
        record = read_record(DefinitionRecord, definition_file, self.result_dir)
        problems = check_group_document(dict(record.definition))
        if problems:
            raise DefinitionError(str(definition_file), problems)
        group = group_from_document(Path(record.path), dict(record.definition))
        group_dir = definition_file.parent
        stored = read_optional(GroupRecord, group_dir / layout.GROUP_FILE, self.result_dir)
        suite = None
        if isinstance(stored, GroupRecord) and stored.suite is not None:
            suite = Suite(path=Path(stored.suite.path), id=stored.suite.id, groups=())
        return group, layout.group_position(group_dir.name), suite

    def runs(self, position: int) -> dict[VariantName, RunRecord]:
        """Each variant's stored run record that has a snapshot (the first trial's, with trials)."""
        if position not in self._runs:
            group_dir = self.group_dirs.get(position)
            found: dict[VariantName, RunRecord] = {}
            if group_dir is not None:
                candidates = [group_dir, *layout.trial_dirs(group_dir)]
                for name in VARIANTS:
                    for where in candidates:
                        path = where / name / "run.json"
                        # a run.json that is there is read strictly: a bad key is a located error
                        run = (read_record(RunRecord, path, self.result_dir)
                               if safe_io.entry_kind(path, self.result_dir) is not None else None)
                        if isinstance(run, RunRecord) and run.snapshot is not None:
                            self.snapshot_files[id(run.snapshot)] = shown(path, self.result_dir)
                            found[name] = run
                            break
            self._runs[position] = found
        return self._runs[position]

    def sources(self, group: Group, position: int) -> StoredGroupSources:
        return StoredGroupSources(self, group, self.runs(position))

    def script(self, group: Group, name: str) -> Path:
        """The stored script of model ``scripted/<name>``, materialised in a private directory."""
        model = f"scripted/{name}"
        for position in sorted(self.group_dirs):
            for run in self.runs(position).values():
                script = run.snapshot.script if run.snapshot is not None else None
                if script is not None and script.model == model:
                    if self._scratch is None:
                        from pytest_skill_eval.sources.scratch import new_run_dir

                        self._scratch = new_run_dir()  # private, and swept if this process is killed
                    layout.parse_path(f"{name}.json", f"the group definition of model {model!r}", "/model", single=True)
                    path = layout.inside(self._scratch, (script.sha256, f"{name}.json"))
                    if not path.is_file():
                        data = objects.read(self.result_dir, script.sha256)
                        path.parent.mkdir(parents=True, exist_ok=True)
                        path.write_bytes(data)
                    self._origins[path] = script.path
                    return path
        raise ScriptError(f"no script for model {model!r} in the stored result {self.result_id}")

    def script_origin(self, path: Path) -> str | None:
        """The stored path of a script :meth:`script` materialised (None for any other file)."""
        return self._origins.get(path)

    def close(self) -> None:
        if self._scratch is not None:
            shutil.rmtree(self._scratch, ignore_errors=True)
            self._scratch = None


class StoredGroupSources:
    """One group's inputs from the stored result: what each variant got, byte for byte."""

    def __init__(self, result: StoredResult, group: Group, runs: dict[VariantName, RunRecord]) -> None:
        self.result = result
        self.group = group
        self.runs = runs

    def _snapshot(self, top: str | None = None) -> SnapshotRecord:
        for name in VARIANTS:
            run = self.runs.get(name)
            if run is None or run.snapshot is None:
                continue
            if top is None or any(rel.startswith(top + "/") for rel in run.snapshot.files):
                return run.snapshot
        raise SourceError(f"the stored result {self.result.result_id} holds no snapshot of group "
                          f"{self.group.id!r}'s {'inputs' if top is None else top} (no variant got that far)")

    def _where(self, snapshot: SnapshotRecord | None) -> str:
        return self.result.snapshot_files.get(id(snapshot), "run.json")

    def _files(self, snapshot: SnapshotRecord) -> dict[str, tuple[str, str]]:
        return {rel: (f.sha256, f.mode) for rel, f in snapshot.files.items()}

    def snapshot_fixture(self, dest: Path) -> None:
        snapshot = self._snapshot()
        objects.materialise(self.result.result_dir, self._files(snapshot), "workspace", dest, self._where(snapshot))

    def snapshot_bundles(self, dest: Path) -> None:
        if not self.group.runtime.extensions:
            return
        snapshot = self._snapshot("extensions")
        objects.materialise(self.result.result_dir, self._files(snapshot), "extensions", dest, self._where(snapshot))
        for i, bundle in enumerate(self.group.runtime.extensions):
            if not (dest / str(i) / bundle.entry).is_file():
                raise SourceError(f"extension bundle {i}: entry {bundle.entry!r} is not in the stored snapshot")

    def open_variant(self, variant: Variant) -> tuple[Copy, SourceIdentity]:
        run = self.runs.get(variant.name)
        if run is None or run.snapshot is None:
            raise SourceError(f"the stored result {self.result.result_id} holds no snapshot of the {variant.name} "
                              f"inputs of group {self.group.id!r} (it did not get that far)")
        files = self._files(run.snapshot)
        prefixes: dict[str, str] = {}
        for kind, declared in (("context", variant.context), ("skills", variant.skills)):
            for i, rel in enumerate(declared):
                prefixes[rel] = f"resources/{kind}/{i}/{Path(rel).name}"  # skills win over context

        def copy(rel: str, dest: Path) -> None:
            prefix = prefixes.get(rel)
            if prefix is None or not objects.materialise(self.result.result_dir, files, prefix, dest,
                                                         self._where(run.snapshot)):
                raise SourceError(f"{rel}: not in the stored snapshot of result {self.result.result_id}")

        source = run.source
        identity = (SourceIdentity(source.kind, source.ref, source.commit, source.root) if source is not None
                    else SourceIdentity("working-tree", None, None, str(self.result.result_dir)))
        return copy, identity
