"""Which paths a run declares (``--skill-eval``, ini ``skill_eval_paths``) and which groups they name."""

from __future__ import annotations

import stat
from collections.abc import Iterable
from pathlib import Path

import pytest

from pytest_skill_eval.definitions.document import file_kind
from pytest_skill_eval.definitions.loading import definition_kind
from pytest_skill_eval.definitions.model import Suite
from pytest_skill_eval.errors import DefinitionError
from pytest_skill_eval.evidence import layout


def resolve_declared(paths: Iterable[Path], root: Path, source: str, *, norecurse: Iterable[str] = ()) -> list[Path]:
    """Resolve declared paths from *root*; each must exist, a file must be a definition,
    and a directory must hold a suite (pytest would silently collect nothing)."""
    patterns = tuple(norecurse)
    resolved: list[Path] = []
    for p in paths:
        full = (p if p.is_absolute() else root / p).resolve()
        if not full.exists():
            raise pytest.UsageError(f"{source} {p}: no such file or directory (resolved from {root}); "
                                    "give a suite or group definition path relative to the directory you run pytest from")
        mode = full.stat().st_mode
        if not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)):
            # pytest would skip it as "not found"; opening it could block (a FIFO).
            raise pytest.UsageError(f"{source} {p}: expected a suite or group definition file or a directory, "
                                    f"found {file_kind(mode)}")
        if full.is_file() and definition_kind(full) is None:
            raise pytest.UsageError(f"{source} {p}: {_not_a_definition(full)}")
        if full.is_dir():
            problem = _suiteless_directory(full, p, root, patterns)
            if problem is not None:
                raise pytest.UsageError(f"{source} {p}: {problem}")
        if full not in resolved:
            resolved.append(full)
    return resolved


def _not_a_definition(path: Path) -> str:
    """Why the file *path* is no definition: the located error of a file that does not read as
    JSON (as ``skill-eval check`` gives it), else what a definition must declare."""
    from pytest_skill_eval.definitions.document import read_document

    expected = 'expected a JSON object with "schema_version" and "kind": "suite" or "group"'
    try:
        read_document(path)
    except DefinitionError as exc:
        return f"not a suite or group definition: {exc}"
    return f"not a suite or group definition ({expected})"


def _suiteless_directory(directory: Path, shown: Path, root: Path, norecurse: tuple[str, ...]) -> str | None:
    """Why *directory* would contribute nothing (it holds no suite), or None when it holds one.

    Walks as pytest collects (``norecursedirs`` pruned, the evidence tree skipped) and stops
    at the first suite, so a directory that works costs only the files before it.
    """
    import fnmatch
    import os

    runs = (root / layout.RUNS_DIR).resolve()
    groups: list[str] = []
    for dirpath, dirnames, filenames in os.walk(directory):
        here = Path(dirpath)
        dirnames[:] = sorted(d for d in dirnames if not any(fnmatch.fnmatch(d, pat) for pat in norecurse)
                             and (here / d).resolve() != runs)
        for name in sorted(filenames):
            if not name.endswith(".json"):
                continue
            kind = definition_kind(here / name)
            if kind == "suite":
                return None
            if kind == "group":
                path = here / name
                groups.append(path.relative_to(root).as_posix() if path.is_relative_to(root) else str(path))
    if not groups:
        return ('found no suite or group definition in it (a JSON object with "schema_version": 1 and '
                '"kind": "suite" or "group"): name a suite or group file, or a directory that holds suites')
    listed = ", ".join(groups[:5]) + (f" and {len(groups) - 5} more" if len(groups) > 5 else "")
    count = f"{len(groups)} group definition{'s' if len(groups) != 1 else ''}"
    return (f"a directory contributes the suite files inside it, and {shown} holds none; found {count} "
            f"({listed}): name a group file (--skill-eval {groups[0]}) or a suite that lists them "
            '(a JSON object with "schema_version": 1, "kind": "suite", "id" and "groups": [...])')


def named_by(path: Path, args: list[str], root: Path) -> bool:
    """Whether a positional argument (``file`` or ``file::name``) names *path* itself."""
    for arg in args:
        head = arg.split("::", 1)[0]
        candidate = Path(head) if Path(head).is_absolute() else root / head
        try:
            if candidate.resolve() == path:
                return True
        except OSError:
            continue
    return False


def load_declared_suite(path: Path, root: Path) -> Suite:
    from pytest_skill_eval.definitions.loading import load_suite

    return load_suite(path, root)


def select_position(suite: Suite, selector: str, root: Path) -> int:
    """The one-based suite position *selector* names (a group id or a position)."""
    import dataclasses

    from pytest_skill_eval.definitions.loading import load_group
    from pytest_skill_eval.definitions.selection import select_group
    from pytest_skill_eval.errors import SelectionError as DefinitionSelectionError

    if not (selector.isascii() and selector.isdigit()):
        # ids come from the groups that load; a broken one is reported when it is collected
        refs = []
        for ref in suite.groups:
            try:
                refs.append(dataclasses.replace(ref, group_id=load_group(ref.path, root).id))
            except DefinitionError:
                continue
        suite = dataclasses.replace(suite, groups=tuple(refs))
    try:
        return select_group(suite, selector).position
    except DefinitionSelectionError as exc:
        raise pytest.UsageError(str(exc)) from None
