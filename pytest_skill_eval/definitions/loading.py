"""Loading a definition file: structure (JSON Schema), rules, canonical containment, then the frozen model."""

from __future__ import annotations

import dataclasses
import os
import posixpath
import stat
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pytest_skill_eval import jsonbounds
from pytest_skill_eval.definitions.document import file_kind, read_document, read_regular_file
from pytest_skill_eval.definitions.model import (
    Expectation,
    ExtensionBundle,
    Group,
    GroupRef,
    ModelSpec,
    Runtime,
    RuntimeEnvironment,
    Source,
    Suite,
    Variant,
    VariantName,
)
from pytest_skill_eval.definitions.rules import (
    check_group_document,
    check_suite_document,
    group_containment_problems,
    json_int,
    runs_tree_problem,
)
from pytest_skill_eval.errors import DefinitionError, PathEscapeError, Problem
from pytest_skill_eval.paths import check_relative, contain_path
from pytest_skill_eval.schemas import describe as _describe
from pytest_skill_eval.schemas import quote as _quote


def definition_kind(path: Path) -> str | None:
    """Return ``"group"``/``"suite"`` if *path* looks like a definition, else None (not ours)."""
    try:
        doc = jsonbounds.loads(read_regular_file(path).decode("utf-8"))
    except (OSError, UnicodeDecodeError, ValueError, RecursionError):
        return None
    if isinstance(doc, dict) and doc.get("kind") in ("group", "suite") and "schema_version" in doc:
        return str(doc["kind"])
    return None


def load_group(path: Path, root: Path) -> Group:
    """Load and validate one group definition file; *root* is the definition root."""
    _check_file_contained(path, root)
    return _group_from_document(path, read_document(path), root)


def load_suite(path: Path, root: Path) -> Suite:
    """Load and validate one suite file; group refs are resolved from the suite's directory.

    Each reference must stay inside *root* lexically and canonically and name an
    existing file; the groups themselves are loaded by :func:`load_suite_groups`.
    """
    _check_file_contained(path, root)
    return _suite_from_document(path, read_document(path), root)


def load_definition(path: Path, root: Path) -> Group | Suite:
    """Load a group or a suite, whichever ``kind`` the file declares."""
    _check_file_contained(path, root)
    doc = read_document(path)
    kind = doc.get("kind")
    if kind == "group":
        return _group_from_document(path, doc, root)
    if kind == "suite":
        return _suite_from_document(path, doc, root)
    found = f"no {_quote('kind')} field" if "kind" not in doc else _describe(kind)
    raise DefinitionError(str(path), [Problem("/kind", f'expected one of "group", "suite", found {found}')])


def load_suite_groups(suite: Suite, root: Path) -> tuple[Suite, tuple[Group, ...]]:
    """Load every group of *suite* in order and check their ids are unique.

    Returns the suite with each ``GroupRef.group_id`` filled in, and the groups.
    Raises DefinitionError for the first invalid group file, then for the suite.
    """
    groups = tuple(load_group(ref.path, root) for ref in suite.groups)
    check_suite_group_ids(suite, groups)
    refs = tuple(dataclasses.replace(ref, group_id=group.id) for ref, group in zip(suite.groups, groups, strict=True))
    return dataclasses.replace(suite, groups=refs), groups


def check_suite_group_ids(suite: Suite, groups: Sequence[Group]) -> None:
    """Raise DefinitionError (for the suite file) when two of its groups share an id."""
    first: dict[str, GroupRef] = {}
    problems: list[Problem] = []
    for ref, group in zip(suite.groups, groups, strict=True):
        earlier = first.setdefault(group.id, ref)
        if earlier is not ref:
            problems.append(repeated_id_problem(ref, group.id, earlier))
    if problems:
        raise DefinitionError(str(suite.path), problems)


def repeated_id_problem(ref: GroupRef, group_id: str, earlier: GroupRef) -> Problem:
    """The suite entry *ref* loads a group whose id the *earlier* entry's group has already."""
    return Problem(
        f"/groups/{ref.position - 1}",
        f"expected a group whose id no earlier group uses, found id {_quote(group_id)} again "
        f"(first in {_quote(earlier.ref)} at /groups/{earlier.position - 1})",
    )


def _check_file_contained(path: Path, root: Path) -> None:
    try:
        contain_path(root, path)
    except PathEscapeError as exc:
        raise DefinitionError(str(path), [Problem("", str(exc))]) from None


def _group_from_document(path: Path, doc: dict[str, Any], root: Path) -> Group:
    if doc.get("kind") == "suite" and "groups" in doc:
        # A suite where a group belongs (a suite listing a suite): named alone, since the
        # schema would add every group field the suite lacks.
        raise DefinitionError(
            str(path), [Problem("/kind", 'expected "group", found "suite" (a suite lists group files only; suites do not nest)')]
        )
    problems = check_group_document(doc)
    problems.extend(group_containment_problems(doc, root))
    if problems:
        raise DefinitionError(str(path), _with_relative_forms(problems, doc, root, root))
    return group_from_document(path, doc)


_ABSOLUTE = "expected a relative path, found absolute path "


def _with_relative_forms(problems: list[Problem], doc: Any, root: Path, base: Path) -> list[Problem]:
    """Each absolute-path problem whose path lies inside *root* also says its form relative to *base*
    (the definition root, or the suite's directory for a suite's group references)."""
    real_root = Path(os.path.realpath(root))
    shown: list[Problem] = []
    for problem in problems:
        value = _value_at(doc, problem.pointer) if problem.message.startswith(_ABSOLUTE) else None
        if isinstance(value, str) and value.startswith("/"):
            try:
                real = Path(os.path.realpath(value))
            except (OSError, ValueError):  # NUL, a lone surrogate: said by the problem already
                real = real_root
            if real != real_root and real.is_relative_to(real_root):
                relative = os.path.relpath(real, os.path.realpath(base)).replace(os.sep, "/")
                where = "the definition root" if base == root else "the suite's directory"
                problem = dataclasses.replace(
                    problem, message=f"{problem.message}; relative to {where} that is {_quote(relative)}")
        shown.append(problem)
    return shown


def _value_at(doc: Any, pointer: str) -> Any:
    from pytest_skill_eval.jsonpointer import parse

    value = doc
    for token in parse(pointer) or ():
        if isinstance(value, dict):
            value = value.get(token)
        elif isinstance(value, list) and token.isdigit() and int(token) < len(value):
            value = value[int(token)]
        else:
            return None
    return value


def _suite_from_document(path: Path, doc: dict[str, Any], root: Path) -> Suite:
    real_root = os.path.realpath(root)
    # Directory links are resolved so ".." in a reference means what the OS means.
    base = os.path.relpath(os.path.realpath(path.parent), real_root).replace(os.sep, "/")
    base = "" if base == "." else base
    problems = check_suite_document(doc, base)
    real_self = os.path.realpath(path)
    groups = doc.get("groups")
    refs: list[GroupRef] = []
    for index, ref in enumerate(groups if isinstance(groups, list) else []):
        if not isinstance(ref, str) or ref == "" or check_relative(ref, base) or runs_tree_problem(ref, base):
            continue  # already reported
        group_path = root / posixpath.normpath(posixpath.join(base, ref))
        refs.append(GroupRef(position=index + 1, ref=ref, path=group_path))
        try:
            contain_path(root, group_path, shown=ref, real_root=real_root)
        except PathEscapeError as exc:
            problems.append(Problem(f"/groups/{index}", str(exc)))
            continue
        if os.path.realpath(group_path) == real_self:
            problems.append(
                Problem(f"/groups/{index}", f"expected a group definition file, found {_quote(ref)} naming this suite itself")
            )
            continue
        try:
            mode: int | None = os.stat(group_path).st_mode
        except (OSError, ValueError):
            mode = None
        if mode is None:
            problems.append(
                Problem(f"/groups/{index}", f"expected an existing group definition file, found {_quote(ref)} naming none")
            )
        elif not stat.S_ISREG(mode):
            problems.append(
                Problem(
                    f"/groups/{index}",
                    f"expected an existing group definition file, found {_quote(ref)} naming {file_kind(mode)}",
                )
            )
    if problems:
        raise DefinitionError(str(path), _with_relative_forms(problems, doc, root, path.parent))
    return Suite(path=path, id=doc["id"], groups=tuple(refs))


def _build_variant(name: VariantName, raw: dict[str, Any]) -> Variant:
    src = raw["source"]
    return Variant(
        name=name,
        source=Source(kind=src["kind"], ref=src.get("ref")),
        skills=tuple(raw["skills"]),
        target=json_int(raw["target"]),
        context=tuple(raw["context"]),
    )


def _build_runtime(raw: dict[str, Any] | None) -> Runtime:
    if raw is None:
        return Runtime()
    environment = raw.get("environment", {})
    return Runtime(
        host=raw["host"],
        session=raw.get("session", False),
        extensions=tuple(
            ExtensionBundle(entry=bundle["entry"], resources=tuple(bundle["resources"])) for bundle in raw.get("extensions", [])
        ),
        environment=RuntimeEnvironment(
            literal=tuple(sorted(environment.get("literal", {}).items())),
            inherit=tuple(environment.get("inherit", [])),
        ),
    )


def group_from_document(path: Path, doc: dict[str, Any]) -> Group:
    """Build the dataclasses from a document that passed every check."""
    inp = doc["input"]
    prompts = (inp["prompt"],) if "prompt" in inp else tuple(inp["turns"])
    model_raw = doc.get("model")
    return Group(
        path=path,
        id=doc["id"],
        type=doc["type"],
        prompts=prompts,
        input_kind="prompt" if "prompt" in inp else "turns",
        fixture=doc["fixture"],
        tools=tuple(doc["tools"]),
        baseline=_build_variant("baseline", doc["variants"]["baseline"]),
        candidate=_build_variant("candidate", doc["variants"]["candidate"]),
        expectations=tuple(
            Expectation(
                id=e["id"],
                kind=e["kind"],
                variant=e["variant"],
                expect=e.get("expect", ""),
                comparison=e.get("comparison"),
                turn=json_int(e.get("turn")),
                pointer=f"/expectations/{i}",
                raw=e,
            )
            for i, e in enumerate(doc["expectations"])
        ),
        review_questions=tuple(doc["review_questions"]),
        model=ModelSpec(model_raw["model"], model_raw.get("thinking")) if model_raw is not None else None,
        runtime=_build_runtime(doc.get("runtime")),
        raw=doc,
    )
