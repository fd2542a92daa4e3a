"""The evidence directory of one variant's run, and the ``run.json`` of one that never started.

:class:`VariantEvidence` owns a run's evidence directory and its redaction counts: every
file is redacted as it is written and counted, inputs go into the result's object store,
and ``run.json`` is written last (:mod:`pytest_skill_eval.engine.variant` runs the steps).
"""

from __future__ import annotations

import stat
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, cast

from pytest_skill_eval.codec import Encodable
from pytest_skill_eval.definitions.model import Group, VariantName
from pytest_skill_eval.engine.config import VariantOutcome
from pytest_skill_eval.evidence import layout, objects, records, store
from pytest_skill_eval.evidence.records import RunRecord
from pytest_skill_eval.redaction import Redactor


@dataclass(slots=True)
class VariantEvidence:
    """The evidence directory of one run: every file redacted as it is written, counted."""

    run_dir: Path
    redactor: Redactor
    redactions: dict[str, int] = field(default_factory=dict)
    snapshots: store.SnapshotCache = field(default_factory=store.SnapshotCache)
    #: the result directory whose ``objects/`` store holds the run's inputs (None: not stored)
    result_dir: Path | None = None
    stored: dict[str, records.StoredFile] = field(default_factory=dict)
    script: records.StoredScript | None = None

    def store_inputs(self, base: Path, top: str) -> None:
        """Every file under ``base/top`` as the variant gets it, into the result's object store.

        Redacted like every other evidence byte: a secret in an input is stored as the marker
        (and counted under ``snapshot/<path>``), so a rerun sees the marker there.
        """
        if self.result_dir is None:
            return
        files, counts = objects.store_tree(self.result_dir, base, top,
                                           self.redactor.data if self.redactor.active else None)
        self.stored.update({rel: records.StoredFile(digest, mode) for rel, (digest, mode) in files.items()})
        for rel, n in counts.items():
            self.count(f"snapshot/{rel}", n)

    def store_script(self, model: str, path: Path, shown: str) -> None:
        """The scripted stand-in's script (read from *path*, named *shown*), into the object store."""
        if self.result_dir is None:
            return
        data, n = self.redactor.data(path.read_bytes()) if self.redactor.active else (path.read_bytes(), 0)
        self.count(f"snapshot/script/{shown}", n)
        self.script = records.StoredScript(model, shown, objects.put(self.result_dir, data))

    def count(self, rel: str, n: int) -> None:
        if n:
            self.redactions[rel] = self.redactions.get(rel, 0) + n

    def store_snapshot_inputs(self, rel: str, top: str, taken: store.Snapshot) -> None:
        """The regular files of the evidence snapshot *rel* (just taken, see :meth:`snapshot`) into
        the object store as inputs under *top*, each linked to its evidence file, not copied again.

        The snapshot's bytes are the redacted inputs, exactly what :meth:`store_inputs` would
        store, so the fixture costs its size once in the evidence instead of twice.
        """
        if self.result_dir is None:
            return
        tree = self.run_dir / rel
        for path_in_tree, stored in taken.files.items():
            source = tree / path_in_tree
            info = source.lstat()
            if not stat.S_ISREG(info.st_mode):
                continue
            name = f"{top}/{path_in_tree}"
            digest = objects.put_link(self.result_dir, source, stored.sha256)
            self.stored[name] = records.StoredFile(digest, f"{stat.S_IMODE(info.st_mode):o}")
            if taken.counts.get(path_in_tree):
                self.count(f"snapshot/{name}", taken.counts[path_in_tree])

    def snapshot(self, src: Path, rel: str) -> store.Snapshot:
        """A workspace or session copy into evidence, each file redacted as it is written, then
        its manifest (``<rel>.manifest.json``) beside it.

        A file an earlier snapshot of this group already stored unchanged is hard-linked to
        that evidence file instead of written again (:class:`~.store.SnapshotCache`); links
        join evidence files only, never the live workspace.
        """
        active = self.redactor.active
        taken = store.copy_tree_atomic(src, self.run_dir / rel, self.redactor.data if active else None,
                                       self.snapshots, self.redactor.secrets if active else None)
        self.redactions.update({f"{rel}/{k}": v for k, v in taken.counts.items()})
        manifest = records.ManifestRecord(dict(taken.files))  # the entries are the manifest's own
        # not passed through the redactor: the manifest names the stored files as they are named
        # in the tree, and its digests are of the already redacted bytes
        store.write_atomic(layout.manifest_file(self.run_dir / rel), manifest.to_bytes(), sync_dir=False)
        return taken

    def write_text(self, rel: str, text: str) -> None:
        clean, n = self.redactor.text(text)
        self.count(rel, n)
        store.write_atomic(self.run_dir / rel, clean.encode("utf-8"), sync_dir=False)

    def write_json(self, rel: str, value: Any, *, sync_dir: bool = False) -> None:
        clean, n = self.redactor.json(value)
        self.count(rel, n)
        store.write_json(self.run_dir / rel, clean, sync_dir=sync_dir)

    def write_record(self, rel: str, record: Encodable, *, sync_dir: bool = False) -> None:
        """A record as its stored JSON, redacted and counted (:func:`~.store.write_record`)."""
        self.count(rel, store.write_record(self.run_dir / rel, record, self.redactor, sync_dir=sync_dir))

    def finish(self, record: RunRecord) -> VariantOutcome:
        """``run.json``, written last, with the one directory fsync that makes every rename durable."""
        record = replace(record, redactions=dict(self.redactions))
        if self.stored or self.script is not None:
            record = replace(record, snapshot=records.SnapshotRecord(dict(self.stored), self.script))
        store.write_record(self.run_dir / "run.json", record, self.redactor)
        return VariantOutcome(record.variant, record.state, record.reason, self.run_dir)


def persist_state(run_dir: Path, group: Group, name: VariantName, state: str, reason: str) -> VariantOutcome:
    """A variant that never started: ``run.json`` with its state and why."""
    record = RunRecord(variant=name, group=group.id, state=cast(records.RunState, state), reason=reason)
    store.write_record(run_dir / "run.json", record)
    return VariantOutcome(name, state, reason, run_dir)
