"""Which groups the run selects: the declared paths, what pytest collects, positions, one group, one shard.

The part of :class:`~pytest_skill_eval.plugin.session.SkillEvalSession` the collection hooks
ask: which arguments pytest collects (:meth:`GroupSelection.narrow_args`), which files are
definitions (``claims``) and which are never collected (``ignores``), where each file's groups
stand (``position_base``), ``--skill-eval-group`` (``check_group_selector``, ``selected_refs``)
and ``--skill-eval-shard`` (:func:`shard_option`, ``split_shard``, ``empty_shard``). Nothing
here starts anything.

The plugin's entry point loads this module on every pytest run, so what only an option needs
is imported where that option is handled: the sharding rules (``--skill-eval-shard``), the
group selector's refusal of a group file, and the evidence records and readers.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from pytest_skill_eval.definitions.loading import definition_kind
from pytest_skill_eval.definitions.model import GroupRef, Suite
from pytest_skill_eval.errors import DefinitionError, SelectionError
from pytest_skill_eval.evidence import layout
from pytest_skill_eval.plugin.declared import load_declared_suite, named_by, select_position
from pytest_skill_eval.plugin.settings import RunSettings
from pytest_skill_eval.policy import FailOn

if TYPE_CHECKING:
    from pytest_skill_eval.definitions.sharding import Shard
    from pytest_skill_eval.evidence.records import ShardRecord

__all__ = ["GroupSelection", "definitions_fingerprint", "shard_option"]


class GroupSelection:
    """The session's selecting part (a base of ``SkillEvalSession``, which sets these attributes)."""

    config: pytest.Config
    root: Path
    declared: list[Path]
    result_id: str
    result_dir: Path
    fail_on: FailOn
    settings: RunSettings
    group_selector: str | None
    #: ``--skill-eval-shard K/N``, and the split :meth:`split_shard` made (recorded in selection.json)
    shard: Shard | None
    shard_record: ShardRecord | None
    #: True when the run was narrowed to the declared paths (no positional arguments).
    only_declared: bool
    _bases: dict[Path, int]
    _next_base: int
    _selected_position: int | None

    def narrow_args(self, args: list[str], args_source: pytest.Config.ArgsSource, *, from_option: bool) -> list[str]:
        """The pytest arguments for this run.

        ``pytest --skill-eval suite.json`` means "run this suite", not "and every test
        too": without positional arguments the declared paths replace ``testpaths`` and
        the invocation directory. With positional arguments, declared paths are added
        unless an argument already names that file (``suite.json::group`` selects one
        group); ``skill_eval_paths`` from the ini file are then only used to recognise
        definition files, as ``testpaths`` is ignored when arguments are given.
        """
        if args_source != pytest.Config.ArgsSource.ARGS:
            if from_option:
                self.only_declared = True
                return [str(p) for p in self.declared]
            return [*args, *(str(p) for p in self.declared if not named_by(p, args, self.root))]
        if not from_option:
            return args
        return [*args, *(str(p) for p in self.declared if not named_by(p, args, self.root))]

    def claims(self, path: Path) -> bool:
        """Declared files, and suite files inside declared directories, are ours; nothing else."""
        path = path.resolve()
        if path in self.declared:
            return True
        return path.suffix == ".json" and any(
            declared.is_dir() and path.is_relative_to(declared) for declared in self.declared
        ) and definition_kind(path) == "suite"

    def ignores(self, path: Path) -> bool:
        """Never collect from the evidence tree; with only declared paths, collect nothing else."""
        resolved = path.resolve()
        runs = self.root / layout.RUNS_DIR
        if resolved == runs or resolved.is_relative_to(runs):
            return True
        return self.only_declared and resolved.is_file() and not self.claims(resolved)

    def position_base(self, path: Path, count: int) -> int:
        """Group positions continue across definition files in collection order (same on every worker)."""
        key = path.resolve()
        if key not in self._bases:
            self._bases[key] = self._next_base
            self._next_base += count
        return self._bases[key]

    def check_group_selector(self) -> None:
        """``--skill-eval-group`` needs exactly one declared suite and must name one of its groups."""
        sel = self.group_selector
        if sel is None:
            return
        if len(self.declared) != 1 or self.declared[0].is_dir():
            what = ", ".join(str(p) for p in self.declared)
            raise pytest.UsageError(
                f"--skill-eval-group selects a group of one suite, but the run declares {what}: "
                "declare one suite file, or select across suites with -k <group-id>"
            )
        path = self.declared[0]
        if definition_kind(path) == "group":
            from pytest_skill_eval.definitions.selection import group_selector_on_group  # only here

            raise pytest.UsageError(str(group_selector_on_group(path)))
        try:
            suite = load_declared_suite(path, self.root)
        except DefinitionError:
            return  # collection reports the broken suite with every problem in it
        self._selected_position = select_position(suite, sel, self.root)

    def selected_refs(self, suite: Suite) -> tuple[GroupRef, ...]:
        if self._selected_position is None:
            return suite.groups
        return (suite.groups[self._selected_position - 1],)

    def split_shard(self, items: list[pytest.Item]) -> tuple[list[pytest.Item], list[pytest.Item]]:
        """``(kept, deselected)``: this shard's groups, and the groups of the other shards.

        The split is over the groups still selected (after -k, -m, node ids, --lf), by
        their sharding key alone (:mod:`pytest_skill_eval.definitions.sharding`), so every
        process of every shard computes the same split. Items that are not groups stay.
        """
        from pytest_skill_eval.definitions.sharding import assign_shards
        from pytest_skill_eval.evidence.records import ShardGroup, ShardRecord, ShardSettings

        assert self.shard is not None
        keyed = [(item, key) for item in items if callable(k := getattr(item, "shard_key", None)) and (key := k())]
        assignment = assign_shards([key for _, key in keyed], self.shard.count)
        ordered = sorted(keyed, key=lambda pair: (int(getattr(pair[0], "position", 0)), pair[1]))
        groups = tuple(ShardGroup(key, int(getattr(item, "position", 0)), assignment[key]) for item, key in ordered)
        settings = self.settings
        self.shard_record = ShardRecord(
            self.shard.index, self.shard.count, groups, definitions_fingerprint(item for item, _ in ordered),
            ShardSettings(self.fail_on, settings.count,
                          settings.seed if settings.count > 1 or settings.seed_given else None,
                          settings.pass_rate, settings.alpha),
        )
        theirs = {id(item) for item, key in keyed if assignment[key] != self.shard.index}
        return [i for i in items if id(i) not in theirs], [i for i in items if id(i) in theirs]

    def empty_shard(self, session: pytest.Session) -> None:
        """A shard that got no group is not an error: say so, and exit 0 (not pytest's 5).

        Only when other shards got groups; when -k/-m selected nothing at all, pytest's
        "no tests ran" (exit 5) stands, as it does without sharding.
        """
        if self.shard is None or session.exitstatus != pytest.ExitCode.NO_TESTS_COLLECTED:
            return
        from pytest_skill_eval.evidence.reader import read_optional
        from pytest_skill_eval.evidence.records import SelectionRecord

        selection = read_optional(SelectionRecord, self.result_dir / layout.SELECTION_FILE)
        split = selection.shard if selection is not None else None
        if split is None or not split.groups:
            return
        session.exitstatus = pytest.ExitCode.OK
        reporter = self.config.pluginmanager.get_plugin("terminalreporter")
        if reporter is not None:
            reporter.write_line(
                f"skill-eval: shard {self.shard} has no groups: the {len(split.groups)} selected group(s) went to "
                f"the other shards; this is not an error (exit 0), and result {self.result_id} records the shard "
                "for skill-eval merge", yellow=True)


def shard_option(text: str | None, settings: RunSettings, *, rerun: bool) -> Shard | None:
    """``--skill-eval-shard K/N`` checked (a usage error before anything runs); None without it.

    Several trials need one seed across the shards, given (*rerun*: the stored result's seed).
    """
    if text is None:
        return None
    from pytest_skill_eval.definitions.sharding import parse_shard

    try:
        shard = parse_shard(text)
    except SelectionError as exc:
        raise pytest.UsageError(str(exc)) from None
    if settings.count > 1 and not settings.seed_given and not rerun:
        raise pytest.UsageError(
            f"--skill-eval-shard with --skill-eval-trials {settings.count} needs --skill-eval-seed: each shard "
            "would draw its own seed, and skill-eval merge refuses shards whose seeds differ; give every shard "
            "the same seed (e.g. --skill-eval-seed $GITHUB_RUN_ID)")
    return shard


def definitions_fingerprint(items: Any) -> str:
    """``sha256:<hex>`` of the definitions the *items* were collected from (suite and group files).

    Each file counts as its parsed JSON with sorted keys, so a checkout's line endings do not
    matter; a file that does not parse counts as its bytes, one that cannot be read as nothing.
    """
    digest = hashlib.sha256()
    files: set[Path] = set()
    for item in items:
        files.add(Path(item.path))
        group = getattr(item, "group", None)
        if group is not None:
            files.add(Path(group.path))
    for path in sorted(files):
        try:
            data = path.read_bytes()
        except OSError:
            data = b""
        try:
            data = json.dumps(json.loads(data), sort_keys=True, ensure_ascii=False).encode()
        except (ValueError, UnicodeDecodeError):
            pass
        digest.update(hashlib.sha256(data).digest())
    return f"sha256:{digest.hexdigest()}"
