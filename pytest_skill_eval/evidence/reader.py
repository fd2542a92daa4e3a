"""Reading stored evidence back through its typed records (what grading and the views see)."""

from __future__ import annotations

import os
import re
import stat
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, TypeVar

from pytest_skill_eval.errors import EvidenceError, MalformedGradeError
from pytest_skill_eval.evidence import layout, records, safe_io
from pytest_skill_eval.evidence.layout import manifest_file
from pytest_skill_eval.grading.aggregate import TrialGrade
from pytest_skill_eval.grading.results import GroupGrade
from pytest_skill_eval.observation import FileTree, RunObservation
from pytest_skill_eval.paths import shown
from pytest_skill_eval.usage import Usage, VariantUsage, total


def read_json(path: Path, root: Path | None = None) -> Any:
    """The bounded JSON document of the evidence file *path* (see :mod:`.safe_io`: below
    *root*, a stored result, no link is followed)."""
    return safe_io.read_json(path, root, label=str(path))


def read_record(kind: type[records.Record], path: Path, root: Path | None = None) -> records.Record:
    """The typed record stored at *path*; :class:`EvidenceError` naming the file when it is not one."""
    return records.parse(kind, read_json(path, root), path)


def read_optional(kind: type[records.Record], path: Path, root: Path | None = None) -> records.Record | None:
    """The record at *path*, or None when the file is absent or not such a record (for readers
    that only add to a text, such as a failure's notes)."""
    try:
        if not safe_io.is_file(path, root):
            return None
        return read_record(kind, path, root)
    except EvidenceError:
        return None


def parse_grade(data: Any, source: Path | str) -> GroupGrade:
    """A stored grade document as its :class:`GroupGrade`, checked by ``evidence-grade`` (the
    same wording as every other record); :class:`MalformedGradeError` naming *source* when it is not one."""
    records.check("evidence-grade", data, source, MalformedGradeError)
    try:
        return GroupGrade.from_json(data)
    except MalformedGradeError as exc:  # pragma: no cover - the schema refuses what from_json would
        raise MalformedGradeError(f"{source}: {exc}") from exc


def parse_aggregate(data: Any, source: Path | str) -> TrialGrade:
    """A stored ``aggregate.json`` as its :class:`TrialGrade`, checked by ``evidence-aggregate``."""
    records.check("evidence-aggregate", data, source)
    return TrialGrade.from_json(data)


def grade_parser(group: records.GroupRecord | records.InvalidGroupRecord) -> Callable[[Any, Path | str], GroupGrade | TrialGrade]:
    """How the grade document *group* names is read: ``aggregate.json`` when it counts trials,
    else ``grade.json`` (the record decides, never what the file holds)."""
    if isinstance(group, records.GroupRecord) and group.trials is not None:
        return parse_aggregate
    return parse_grade


def run_record(data: Any, source: Path | str) -> records.RunRecord:
    return records.parse(records.RunRecord, data, source)


def transcript_record(data: Any, source: Path | str) -> records.TranscriptRecord:
    return records.parse(records.TranscriptRecord, data, source)


def definition_record(data: Any, source: Path | str) -> records.DefinitionRecord:
    return records.parse(records.DefinitionRecord, data, source)


def result_record(data: Any, source: Path | str) -> records.ResultRecord:
    return records.parse(records.ResultRecord, data, source)


Parsed = TypeVar("Parsed")


def read_checked(path: Path, parse: Callable[[Any, str], Parsed], shown: str | None = None,
                 root: Path | None = None) -> tuple[Parsed | None, list[str]]:
    """Read the evidence file *path* for a reader that goes on past a bad file (views, regrade).

    ``(record, [])`` when it is one; ``(None, [])`` when it is absent (a run stopped early is
    ordinary); ``(None, problems)`` when it cannot be read or is not such a record, each
    problem starting with *shown* (default: the path) and saying what was expected and found.
    Below *root* (the stored result) no link is followed: a linked file or directory, or one
    that is not a regular file, is such a problem.
    """
    label = shown if shown is not None else str(path)
    try:
        data = safe_io.read_json(path, root, label=label, missing_ok=True)
        if data is safe_io.ABSENT:
            return None, []
        return parse(data, label), []
    except EvidenceError as exc:
        return None, str(exc).split("\n")
    except OSError as exc:
        return None, [f"{label}: cannot read evidence file {path}: {exc.strerror or exc}"]


def read_group_usage(group_dir: Path) -> VariantUsage:
    """Tokens and cost of a group, per variant and in total, over every pi run it recorded
    (trials and the earlier attempts of reruns included): what ``group.json`` stores."""
    per_variant: dict[str, Usage] = {}
    runs = 0
    for name in ("baseline", "candidate"):
        found: list[Usage] = []
        for path in layout.run_files(group_dir, name):
            run = read_record(records.RunRecord, path)
            if run.ran is not None:
                found.append(run.ran.usage)
                runs += 1
        per_variant[name] = total(found)
    return VariantUsage(per_variant["baseline"], per_variant["candidate"], runs)


def read_group(path: Path) -> records.GroupRecord | records.InvalidGroupRecord:
    """A ``group.json`` (or its fallback) of either shape."""
    return records.parse_group(read_json(path), path)


def read_group_grade(group_dir: Path, group: records.GroupRecord | records.InvalidGroupRecord) -> GroupGrade | TrialGrade:
    """The grade document the group record *group* names in *group_dir*: a single run's
    ``grade.json`` or the ``aggregate.json`` over its trials (or the fallback published for
    either); :class:`MalformedGradeError` or :class:`EvidenceError` naming the file and the first
    field that is not what grading writes."""
    path = records.grade_file(group_dir, group)
    return grade_parser(group)(read_json(path), path)


_SHA256 = re.compile(r"[0-9a-f]{64}")


def _manifest_entries(data: Any) -> dict[str, tuple[int, str]] | None:
    """The entries of a manifest that has exactly the shape its schema asks for, checked by
    hand (a schema check of 10,000 entries costs ~0.7 s, this ~10 ms); None when not."""
    files = data.get("files") if isinstance(data, dict) else None
    if not isinstance(files, dict):
        return None
    entries: dict[str, tuple[int, str]] = {}
    for path, entry in files.items():
        size = entry.get("size") if isinstance(entry, dict) else None
        digest = entry.get("sha256") if isinstance(entry, dict) else None
        if (type(size) is not int or size < 0 or not isinstance(digest, str)
                or _SHA256.fullmatch(digest) is None):
            return None
        # interned: the trees of one run share most paths and digests
        entries[sys.intern(path)] = (size, sys.intern(digest))
    return entries


def load_tree(root: Path, result: Path | None = None, listed: Mapping[str, str] | None = None) -> FileTree:
    """A stored snapshot tree, read lazily.

    The tree itself says which files there are and their sizes (one ``lstat`` each, no
    reads), so a file added, removed or resized by hand is seen. ``<tree>.manifest.json``
    supplies each file's digest while the file still has the size it recorded and an mtime
    older than the manifest itself (a stored file keeps its source's mtime; an edit after
    the snapshot makes it newer). Any other file, and every file of a tree stored before
    manifests (or with a manifest that is not one), is hashed when a comparison asks.

    Below *result* (a stored result, untrusted) nothing is followed: a tree or manifest that
    is a link, or a manifest key that is not a plain relative path, is an EvidenceError. A
    file with other hard links (the writers share unchanged files so) is in the tree only
    when the manifest records its digest, and its bytes must hash to it when read: a hard
    link could name a file outside the result. *listed*: the listing of the tree's parent
    directory (``safe_io.list_dir``), when the caller has it: what the tree and its manifest are.
    """
    sizes: dict[str, int] = {}
    mtimes: dict[str, int] = {}
    linked: set[str] = set()
    kind = listed.get(root.name) if listed is not None else safe_io.entry_kind(root, result)
    if kind == safe_io.DIRECTORY:
        _list_tree(str(root), "", sizes, mtimes, linked)
    elif kind is not None and result is not None:
        raise EvidenceError(f"{shown(root, result)}: expected a directory, found {kind}; "
                            "a stored result is never followed through a link")
    digests: dict[str, str] = {}
    manifest = manifest_file(root)
    if sizes and (listed.get(manifest.name) if listed is not None else safe_io.entry_kind(manifest, result)) is not None:
        try:
            data = safe_io.read_json(manifest, result)
            written = os.lstat(manifest).st_mtime_ns
        except OSError:
            data = None
        except EvidenceError:
            if result is not None:
                raise
            data = None
        entries = _manifest_entries(data)
        if entries is None and data is not None and not records.problems(records.ManifestRecord, data):
            entries = {k: (v.size, v.sha256) for k, v in records.ManifestRecord.from_json(data).files.items()}
        if entries and result is not None:
            bad = layout.record_path_problems("evidence-manifest", {"files": entries})
            if bad:
                raise EvidenceError("\n".join(p.render(shown(manifest, result)) for p in bad))
        for path, (size, digest) in (entries or {}).items():
            if sizes.get(path) == size and (mtimes[path] < written or (result is not None and path in linked)):
                digests[path] = digest
    if result is None:
        return FileTree(str(root), sizes, digests)  # the evaluator's own tree while it runs
    for path in linked - set(digests):
        del sizes[path]  # several links and no digest to check its bytes against: not shown
    return FileTree(str(root), sizes, digests, frozenset(linked))


def _list_tree(directory: str, prefix: str, sizes: dict[str, int], mtimes: dict[str, int], linked: set[str]) -> None:
    """Every regular file under *directory* (symlinks not followed): size and mtime by relative path."""
    with os.scandir(directory) as entries:
        for entry in entries:
            st = entry.stat(follow_symlinks=False)
            if stat.S_ISDIR(st.st_mode):
                _list_tree(entry.path, prefix + entry.name + "/", sizes, mtimes, linked)
            elif stat.S_ISREG(st.st_mode):
                rel = sys.intern(prefix + entry.name)
                sizes[rel] = st.st_size
                mtimes[rel] = st.st_mtime_ns
                if st.st_nlink > 1:
                    linked.add(rel)


def load_observation(run_dir: Path, result: Path | None = None) -> RunObservation:
    """Rebuild what grading sees of a run from its persisted evidence alone (below *result*,
    a stored result, without following any link)."""
    run = read_record(records.RunRecord, run_dir / "run.json", result)
    transcript_path = run_dir / "transcript.json"
    turns = (
        tuple(t.turn for t in read_record(records.TranscriptRecord, transcript_path, result).turns)
        if safe_io.entry_kind(transcript_path, result) is not None else ()
    )
    turn_files: dict[int, Mapping[str, bytes]] = {}
    for name, kind in safe_io.list_dir(run_dir / "turns", result):
        if kind == safe_io.DIRECTORY and name.isascii() and name.isdigit():
            turn_files[int(name)] = load_tree(run_dir / "turns" / name / "workspace", result)
    observed = run_dir / "context-observations.json"
    requests = (read_record(records.ContextObservations, observed, result).requests
                if safe_io.entry_kind(observed, result) is not None else ())
    paths = run.paths
    return RunObservation(
        variant=run.variant,
        state=run.state,
        workspace_root=paths.workspace if paths else "",
        skill_roots=paths.skills if paths else (),
        target_file=paths.target_file if paths else None,
        context_roots=paths.context if paths else (),
        turns=turns,
        initial_files=load_tree(run_dir / "workspace-initial", result),
        final_files=load_tree(run_dir / "workspace", result),
        turn_files=turn_files,
        context_requests=requests,
        redactions=run.redactions,
    )
