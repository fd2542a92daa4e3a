"""Isolation: what one variant may see, built from declared inputs only.

Fixture and extension bundles are snapshotted once per group from the definition-root
working tree; skills and context come from the variant's own source (working tree or one
exact Git commit). Secrets that must never reach evidence are collected here too.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, Protocol

from pytest_skill_eval.definitions.model import ExtensionBundle, Group, Variant
from pytest_skill_eval.errors import InvalidVariantError, SkillEvalError, SourceError
from pytest_skill_eval.evidence import trees
from pytest_skill_eval.redaction import unsafe_reason
from pytest_skill_eval.sources.snapshots import SourceIdentity

#: copies one declared path (skill or context) of a variant's source to a destination
Copy = Callable[[str, Path], None]


class GroupSources(Protocol):
    """Where one group's inputs come from: the fixture, the extension bundles, each variant's
    skills and context. A run reads the definition root (:class:`DeclaredSources`); a rerun
    reads a stored result's object store (:mod:`.stored`)."""

    def snapshot_fixture(self, dest: Path) -> None: ...

    def snapshot_bundles(self, dest: Path) -> None: ...

    def open_variant(self, variant: Variant) -> tuple[Copy, SourceIdentity]: ...


@dataclass(frozen=True, slots=True)
class DeclaredSources:
    """A group's inputs as its definition declares them: the working tree, or one exact Git commit."""

    group: Group
    root: Path

    def snapshot_fixture(self, dest: Path) -> None:
        if self.group.fixture is not None:
            snapshot_fixture(self.root, self.group.fixture, dest)

    def snapshot_bundles(self, dest: Path) -> None:
        snapshot_bundles(self.root, self.group, dest)

    def open_variant(self, variant: Variant) -> tuple[Copy, SourceIdentity]:
        return open_source(variant, self.root)


def snapshot_fixture(root: Path, rel: str, dest: Path) -> None:
    from pytest_skill_eval.sources.snapshots import copy_working_tree

    src = root / rel
    if src.is_file() or (src.is_symlink() and src.resolve().is_file()):
        copy_working_tree(root, rel, dest / Path(rel).name)
    else:
        copy_working_tree(root, rel, dest)


def snapshot_bundles(root: Path, group: Group, dest: Path) -> None:
    """Extension bundles: snapshotted once per group, copied byte-identically to each variant."""
    for i, bundle in enumerate(group.runtime.extensions):
        snapshot_bundle(root, i, bundle, dest / str(i))


def snapshot_bundle(root: Path, index: int, bundle: ExtensionBundle, dest: Path) -> None:
    """One bundle's resources, refusing an entry that is not inside them."""
    from pytest_skill_eval.sources.snapshots import copy_working_tree

    for rel in bundle.resources:
        copy_working_tree(root, rel, dest / rel)
    if not (dest / bundle.entry).is_file():
        raise SourceError(f"extension bundle {index}: entry {bundle.entry!r} is not inside its declared resources")


def context_files(items: list[Path]) -> list[dict[str, str]]:
    """Declared context as pi's project instructions: files in declared order, directories sorted."""
    files: list[dict[str, str]] = []
    for item in items:
        paths = [item] if item.is_file() else sorted(p for p in item.rglob("*") if p.is_file())
        for path in paths:
            try:
                content = path.read_text(encoding="utf-8")
            except UnicodeDecodeError:
                raise InvalidVariantError(f"context file {path.name} is not valid UTF-8") from None
            files.append({"path": str(path), "content": content})
    return files


def split_frontmatter(text: str) -> tuple[list[str], str]:
    """Frontmatter lines and body of a SKILL.md (no YAML parser: we compare lines, not values)."""
    if not text.startswith("---\n"):
        return [], text
    end = text.find("\n---", 4)
    if end < 0:
        return [], text
    after = text.find("\n", end + 4)
    return text[4:end].split("\n"), text[after + 1 :] if after >= 0 else ""


def _without_description(lines: list[str]) -> list[str]:
    kept, skipping = [], False
    for line in lines:
        if line.startswith("description:"):
            skipping = True
            continue
        if skipping and (line.startswith((" ", "\t")) or not line.strip()):
            continue  # folded/continued description value
        skipping = False
        kept.append(line)
    return kept


def describe_revision_difference(before: Path, after: Path) -> str | None:
    """None when two target snapshots differ only in the frontmatter description text."""
    files_a, files_b = trees.read_files(before), trees.read_files(after)
    if set(files_a) != set(files_b):
        only = sorted(set(files_a) ^ set(files_b))
        return "the target snapshots hold different files: " + ", ".join(only)
    differences: list[str] = []
    for rel in sorted(files_a):
        if files_a[rel] == files_b[rel]:
            continue
        if rel != "SKILL.md":
            differences.append(f"resource {rel} differs")
            continue
        fm_a, body_a = split_frontmatter(files_a[rel].decode("utf-8", "replace"))
        fm_b, body_b = split_frontmatter(files_b[rel].decode("utf-8", "replace"))
        if body_a != body_b:
            differences.append("SKILL.md body differs")
        if _without_description(fm_a) != _without_description(fm_b):
            differences.append("SKILL.md frontmatter differs beyond description")
    return "; ".join(differences) or None


@dataclass(frozen=True, slots=True)
class RevisionCheck:
    """The description-only revision rule of one group, as ``group.json`` records it.

    ``state`` is ``passed``, ``failed`` (the group is invalid: ``reason`` says why) or
    ``not-checkable`` (a variant's target could not be snapshotted; that variant is
    invalid on its own and its counterpart still runs).
    """

    state: Literal["passed", "failed", "not-checkable"]
    reason: str | None = None

    def to_json(self) -> dict[str, str | None]:
        return {"state": self.state, "reason": self.reason}


def check_description_revision(group: Group, scratch: Path, root: Path,
                               sources: GroupSources | None = None) -> RevisionCheck | None:
    """Spec: in a description group where both variants declare the target, only its description may change.

    None when the rule does not apply (a body group, or a variant without a target).
    A target that cannot be snapshotted is that variant's own problem: the rule is then
    ``not-checkable`` rather than a shared failure of the group.
    """
    if group.type != "description" or group.baseline.target is None or group.candidate.target is None:
        return None
    snapshots = []
    for variant in (group.baseline, group.candidate):
        dest = scratch / variant.name
        try:
            copy = sources.open_variant(variant)[0] if sources is not None else copy_from_source(variant, root)
            copy(variant.skills[variant.target], dest)  # type: ignore[index]
        except (SkillEvalError, OSError) as exc:
            return RevisionCheck("not-checkable", f"the {variant.name} target could not be snapshotted: {exc}")
        snapshots.append(dest)
    problem = describe_revision_difference(*snapshots)
    if problem:
        return RevisionCheck("failed", "description group: the baseline and candidate targets must differ only "
                                       f"in their frontmatter description ({problem}); {revision_next_step(group)}")
    return RevisionCheck("passed")


def revision_next_step(group: Group) -> str:
    """What to do when a description group's targets differ beyond the description (the usual
    edit: description and body together), as one sentence of the failed rule's reason."""
    baseline, candidate = group.baseline.source, group.candidate.source
    if baseline.kind == "git" and baseline.ref == "HEAD" and candidate.kind == "working-tree":
        commit = ("commit the body change first (git add -p: leave only the description edit uncommitted), "
                  "so the baseline at HEAD has it too")
    else:
        commit = "make both sources hold the same body and resources, so only the description differs"
    ref = "the baseline's" if baseline.kind == "git" else "a git baseline's"
    return (f"a description group compares the description alone. To go on: {commit}; or point {ref} "
            f'"ref" at a commit that already has the candidate\'s body and resources; or leave this group '
            f'out of the run with -k "not {group.id}"')


def copy_from_source(variant: Variant, root: Path) -> Callable[[str, Path], None]:
    return open_source(variant, root)[0]


def open_source(variant: Variant, root: Path) -> tuple[Callable[[str, Path], None], SourceIdentity]:
    """How to copy a declared path from the variant's source, and that source's identity.

    A Git source resolves its ref to one exact commit here (a SourceError when it cannot).
    """
    from pytest_skill_eval.sources.snapshots import GitSource, SourceIdentity, copy_working_tree

    if variant.source.kind == "git":
        source = GitSource(root, variant.source.ref or "")
        return source.copy, source.identity(root)
    return (lambda rel, dest: copy_working_tree(root, rel, dest)), SourceIdentity("working-tree", None, None, str(root))


def materialise_skill(copy: Callable[[str, Path], None], rel: str, index: int, dest: Path, kind: str) -> None:
    """Snapshot one declared skill to *dest*; it must hold a UTF-8 ``SKILL.md``."""
    copy(rel, dest)
    if not (dest / "SKILL.md").is_file():
        raise InvalidVariantError(f"skill {rel!r} (index {index}) has no SKILL.md in its {kind} source")
    try:
        (dest / "SKILL.md").read_bytes().decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InvalidVariantError(f"skill {rel!r} (index {index}): SKILL.md is not valid UTF-8 ({exc.reason} at byte {exc.start})") from None


def materialise_resources(variant: Variant, base: Path, root: Path, sources: GroupSources | None = None,
                          ) -> tuple[list[Path], list[Path], dict[str, Any]]:
    skills_dir, context_dir = base / "resources" / "skills", base / "resources" / "context"
    copy, identity = sources.open_variant(variant) if sources is not None else open_source(variant, root)
    skills: list[Path] = []
    for i, rel in enumerate(variant.skills):
        dest = skills_dir / str(i) / Path(rel).name
        materialise_skill(copy, rel, i, dest, identity.kind)
        skills.append(dest)
    contexts: list[Path] = []
    for i, rel in enumerate(variant.context):
        dest = context_dir / str(i) / Path(rel).name
        copy(rel, dest)
        contexts.append(dest)
    return skills, contexts, identity.to_json()


def inherit_problems(group: Group, env: Mapping[str, str]) -> list[tuple[int, str]]:
    """Why each ``environment.inherit`` entry cannot be used (by index); empty when all can."""
    problems: list[tuple[int, str]] = []
    for i, name in enumerate(group.runtime.environment.inherit):
        if name not in env:
            problems.append((i, f"inherited environment variable(s) not set: {name}"))
            continue
        problem = unsafe_reason(env[name])
        if problem:
            problems.append((i, (
                f"inherited environment variable {name} cannot be kept out of evidence reliably ({problem}): "
                "environment.inherit is for secrets, which are redacted from evidence; "
                "declare non-secret settings in environment.literal"
            )))
    return problems


def inherited_values(group: Group, env: Mapping[str, str]) -> dict[str, str]:
    """The inherited variables' values, or :class:`InvalidVariantError` when one cannot be used."""
    names = group.runtime.environment.inherit
    missing = [n for n in names if n not in env]
    if missing:
        raise InvalidVariantError(f"inherited environment variable(s) not set: {', '.join(missing)}")
    problems = inherit_problems(group, env)
    if problems:
        raise InvalidVariantError(problems[0][1])
    return {n: env[n] for n in names}


def auth_secrets(auth_file: Path | None) -> dict[str, str]:
    """Every secret-like string value of the configured auth file: none of them may reach evidence.

    The engine redacts them with the inherited values (see :mod:`.redaction`).
    """
    if auth_file is None:
        return {}
    found: dict[str, str] = {}

    def walk(value: Any, where: str) -> None:
        if isinstance(value, dict):
            for key, item in value.items():
                walk(item, f"{where}/{key}")
        elif isinstance(value, list):
            for i, item in enumerate(value):
                walk(item, f"{where}/{i}")
        elif isinstance(value, str) and unsafe_reason(value) is None:
            # shorter or repetitive strings ("api_key", "oauth") are settings, not secrets
            found[f"auth:{where}"] = value

    try:
        walk(json.loads(auth_file.read_text(encoding="utf-8")), "")
    except (OSError, ValueError):
        pass  # pi reports an unreadable auth file itself; nothing to redact
    return found
