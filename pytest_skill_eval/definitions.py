"""Schema-version-1 group and suite definitions, loaded into frozen dataclasses.

Loading happens in three layers, every problem of a file reported at once:

1. **structure**: the JSON Schema files shipped under ``schemas/`` (draft 2020-12),
   whose errors are rewritten into this package's own ``expected …, found …`` text;
2. **cross-field rules** JSON Schema cannot word clearly (pure, :func:`check_group_document`
   and :func:`check_suite_document`): lexical path containment, target and turn ranges,
   tools per group type, the environment-name policy, unique ids;
3. **canonical containment** (file system): symlinks may not lead declared
   working-tree paths, suite group references or the definition file out of the root.

Kind-specific expectation fields are kept raw and checked at grade time, as the spec
requires: a malformed expectation becomes ``grade-error`` evidence, not a load error.
"""

from __future__ import annotations

import dataclasses
import json
import os
import posixpath
import re
import stat
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, NoReturn

from . import envpolicy, schemas
from .errors import (
    DefinitionError,
    PathEscapeError,
    Problem,
    SelectionError,
)
from .jsonpointer import escape as _escape
from .paths import check_relative, contain_path
from .schemas import describe as _describe
from .schemas import join_quoted as _join_quoted
from .schemas import quote as _quote

__all__ = [
    "BODY_TOOLS",
    "DESCRIPTION_TOOLS",
    "SECRET_NAME_MARKERS",
    "TOOL_NAME",
    "UNSUPPORTED_TOOLS",
    "VARIANTS",
    "ExtensionBundle",
    "Expectation",
    "Group",
    "GroupRef",
    "ModelSpec",
    "Runtime",
    "RuntimeEnvironment",
    "SelectionError",
    "Source",
    "Suite",
    "Variant",
    "check_group_document",
    "check_group_selection",
    "check_suite_document",
    "check_suite_group_ids",
    "definition_kind",
    "file_kind",
    "load_definition",
    "load_group",
    "load_suite",
    "load_suite_groups",
    "parse_document",
    "read_document",
    "select_group",
    "select_variants",
]

VariantName = Literal["baseline", "candidate"]
VARIANTS: tuple[VariantName, VariantName] = ("baseline", "candidate")

#: Built-in tools a description group may grant (or none at all).
DESCRIPTION_TOOLS: tuple[str, ...] = ("read",)
#: Built-in tools a body group may grant; custom names need a runtime extension bundle.
BODY_TOOLS: tuple[str, ...] = ("read", "write", "edit")
#: Native pi tools that escape the path guard, so no group may grant them.
UNSUPPORTED_TOOLS: tuple[str, ...] = ("bash", "powershell", "grep", "find", "ls")

#: Substrings that mark a name as secret-like (case-insensitive). Literal values are
#: recorded in evidence, so such names must come through ``inherit`` instead.
SECRET_NAME_MARKERS: tuple[str, ...] = (
    "KEY",
    "TOKEN",
    "SECRET",
    "PASSWORD",
    "PASSWD",
    "CREDENTIAL",
    "AUTH",
    "PRIVATE",
)


@dataclass(frozen=True, slots=True)
class Source:
    """Where a variant's skills and context come from: the working tree or one Git ref."""

    kind: Literal["working-tree", "git"]
    ref: str | None = None


@dataclass(frozen=True, slots=True)
class Variant:
    """One side of the comparison: ordered skills, the target index and ordered context."""

    name: VariantName
    source: Source
    skills: tuple[str, ...]
    target: int | None
    context: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Expectation:
    """Common expectation fields; ``raw`` keeps the whole object for grade-time checks."""

    id: str
    kind: str
    variant: VariantName
    expect: str
    comparison: str | None
    turn: int | None
    pointer: str
    raw: dict[str, Any] = field(compare=False, hash=False)


@dataclass(frozen=True, slots=True)
class ModelSpec:
    """A ``provider/model`` name and optional thinking level."""

    model: str
    thinking: str | None = None

    @property
    def provider(self) -> str:
        return self.model.split("/", 1)[0]

    @property
    def model_id(self) -> str:
        return self.model.split("/", 1)[1] if "/" in self.model else self.model


@dataclass(frozen=True, slots=True)
class ExtensionBundle:
    """An extension entry file and the directories copied with it."""

    entry: str
    resources: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class RuntimeEnvironment:
    """Recorded literal variables (sorted by name) and names inherited unrecorded."""

    literal: tuple[tuple[str, str], ...] = ()
    inherit: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Runtime:
    """The host profile shared by both variants; the default is a plain ``pi`` host."""

    host: Literal["pi", "piflow"] = "pi"
    session: bool = False
    extensions: tuple[ExtensionBundle, ...] = ()
    environment: RuntimeEnvironment = RuntimeEnvironment()


@dataclass(frozen=True, slots=True)
class Group:
    """A loaded, validated group definition; declared paths are kept as written."""

    path: Path
    id: str
    type: Literal["description", "body"]
    prompts: tuple[str, ...]
    input_kind: Literal["prompt", "turns"]
    fixture: str | None
    tools: tuple[str, ...]
    baseline: Variant
    candidate: Variant
    expectations: tuple[Expectation, ...]
    review_questions: tuple[str, ...]
    model: ModelSpec | None
    runtime: Runtime
    raw: dict[str, Any] = field(compare=False, hash=False)
    #: Whether the definition declared ``runtime`` (``runtime`` holds defaults when not).

    def variant(self, name: VariantName) -> Variant:
        return self.baseline if name == "baseline" else self.candidate


@dataclass(frozen=True, slots=True)
class GroupRef:
    """One entry of a suite's ``groups``: its one-based position and resolved file.

    ``path`` is the definition root joined with the normalized root-relative path;
    ``group_id`` is known once the group was loaded (see :func:`load_suite_groups`).
    """

    position: int
    ref: str
    path: Path
    group_id: str | None = None


@dataclass(frozen=True, slots=True)
class Suite:
    """A loaded suite: its id and ordered group references."""

    path: Path
    id: str
    groups: tuple[GroupRef, ...]


# --------------------------------------------------------------------------- reading


def read_document(path: Path) -> dict[str, Any]:
    """Read one strict JSON object from *path* or raise DefinitionError naming the file.

    Strict means: UTF-8, no duplicate field names, no ``NaN``/``Infinity``, no lone
    surrogates. Only a regular file is opened: a FIFO, device, socket or directory is
    refused from its ``stat`` (and the open never blocks), so nothing can hang the load.
    """
    try:
        data = _read_regular(path)
    except _NotRegular as exc:
        raise DefinitionError(str(path), [Problem("", f"expected a regular file, found {exc}")]) from None
    except OSError as exc:
        raise DefinitionError(str(path), [Problem("", f"expected a readable file, found an OS error: {exc.strerror or exc}")]) from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise DefinitionError(
            str(path), [Problem("", f"expected UTF-8 text, found byte 0x{exc.object[exc.start]:02x} at offset {exc.start}")]
        ) from None
    return parse_document(str(path), text)


class _NotRegular(OSError):
    pass


_FILE_KINDS = (
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
)


def file_kind(mode: int) -> str:
    """How messages name a non-regular file of ``st_mode`` *mode* ("a FIFO (named pipe)", …)."""
    return next((name for test, name in _FILE_KINDS if test(mode)), "a special file")


def _read_regular(path: Path) -> bytes:
    """The bytes of *path* if it is a regular file; raises _NotRegular naming what it is."""
    mode = os.stat(path).st_mode
    if not stat.S_ISREG(mode):
        raise _NotRegular(file_kind(mode))
    # O_NONBLOCK: should the file be swapped for a FIFO after the stat, open() cannot block.
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0))
    with os.fdopen(fd, "rb") as handle:
        mode = os.fstat(handle.fileno()).st_mode
        if not stat.S_ISREG(mode):
            raise _NotRegular(file_kind(mode))
        return handle.read()


def parse_document(file: str, text: str) -> dict[str, Any]:
    """Parse definition *text* (named *file* in errors) into one JSON object."""
    duplicates: list[tuple[dict[str, Any], list[str]]] = []

    def collect_pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        obj: dict[str, Any] = {}
        repeated: list[str] = []
        for key, value in pairs:
            if key in obj and key not in repeated:
                repeated.append(key)
            obj[key] = value
        if repeated:
            duplicates.append((obj, repeated))
        return obj

    def reject_constant(name: str) -> NoReturn:
        raise _NonStandardConstant(name)

    try:
        doc = json.loads(text, object_pairs_hook=collect_pairs, parse_constant=reject_constant)
    except json.JSONDecodeError as exc:
        raise DefinitionError(
            file, [Problem("", f"expected JSON, found invalid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}")]
        ) from None
    except _NonStandardConstant as exc:
        raise DefinitionError(file, [Problem("", f"expected standard JSON, found the non-standard constant {exc}")]) from None
    except (ValueError, RecursionError) as exc:
        # int() digit limits and nesting too deep for the parser land here.
        reason = "nesting too deep to parse" if isinstance(exc, RecursionError) else str(exc)
        raise DefinitionError(file, [Problem("", f"expected JSON this loader can read, found {reason}")]) from None
    if duplicates:
        where = _object_pointers(doc)
        raise DefinitionError(
            file,
            [
                Problem(f"{where.get(id(obj), '')}/{_escape(key)}", f"expected each field name once, found {_quote(key)} more than once")
                for obj, keys in duplicates
                for key in keys
            ],
        )
    surrogates = _surrogate_problems(doc)
    if surrogates:
        raise DefinitionError(file, surrogates)
    if not isinstance(doc, dict):
        raise DefinitionError(file, [Problem("", f"expected a JSON object, found {_describe(doc)}")])
    return doc


def _has_surrogate(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def _surrogate_problems(doc: Any) -> list[Problem]:
    """Lone surrogates (``"\\ud800"``) in any key or string: no file, output or evidence can hold them.

    Pointers are shown with ``\\u`` escapes where a key holds one, so the error prints.
    """
    problems: list[Problem] = []
    stack: list[tuple[Any, str]] = [(doc, "")]
    while stack:
        node, pointer = stack.pop()
        if isinstance(node, dict):
            for key, value in node.items():
                child = f"{pointer}/{_escape(key)}"
                if _has_surrogate(key):
                    problems.append(
                        Problem(_printable(child), f"expected a field name of valid Unicode text, found {_describe(key)} with a lone surrogate")
                    )
                stack.append((value, child))
        elif isinstance(node, list):
            stack.extend((value, f"{pointer}/{index}") for index, value in enumerate(node))
        elif isinstance(node, str) and _has_surrogate(node):
            problems.append(Problem(_printable(pointer), f"expected valid Unicode text, found {_describe(node)} with a lone surrogate"))
    return problems


def _printable(text: str) -> str:
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


class _NonStandardConstant(ValueError):
    pass


def _object_pointers(doc: Any) -> dict[int, str]:
    """Map ``id()`` of every object in *doc* to its JSON pointer (iteratively: no recursion limit)."""
    found: dict[int, str] = {}
    stack: list[tuple[Any, str]] = [(doc, "")]
    while stack:
        node, pointer = stack.pop()
        if isinstance(node, dict):
            found[id(node)] = pointer
            stack.extend((value, f"{pointer}/{_escape(key)}") for key, value in node.items())
        elif isinstance(node, list):
            stack.extend((value, f"{pointer}/{index}") for index, value in enumerate(node))
    return found


def definition_kind(path: Path) -> str | None:
    """Return ``"group"``/``"suite"`` if *path* looks like a definition, else None (not ours)."""
    try:
        doc = json.loads(_read_regular(path).decode("utf-8"))
    except (OSError, UnicodeDecodeError, ValueError, RecursionError):
        return None
    if isinstance(doc, dict) and doc.get("kind") in ("group", "suite") and "schema_version" in doc:
        return str(doc["kind"])
    return None


# --------------------------------------------------------------------------- loading


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
            problems.append(
                Problem(
                    f"/groups/{ref.position - 1}",
                    f"expected a group whose id no earlier group uses, found id {_quote(group.id)} again "
                    f"(first in {_quote(earlier.ref)} at /groups/{earlier.position - 1})",
                )
            )
    if problems:
        raise DefinitionError(str(suite.path), problems)


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
    problems.extend(_group_containment_problems(doc, root))
    if problems:
        raise DefinitionError(str(path), problems)
    return group_from_document(path, doc)


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
        if not isinstance(ref, str) or ref == "" or check_relative(ref, base) or _evidence_tree_problem(ref, base):
            continue  # already reported
        group_path = root / posixpath.normpath(posixpath.join(base, ref))
        refs.append(GroupRef(position=index + 1, ref=ref, path=group_path))
        try:
            contain_path(root, group_path, shown=ref)
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
        raise DefinitionError(str(path), problems)
    return Suite(path=path, id=doc["id"], groups=tuple(refs))


def _group_containment_problems(doc: dict[str, Any], root: Path) -> list[Problem]:
    """Canonical checks of the working-tree paths a group declares (touches the file system).

    Git-sourced skills and context are skipped: they may exist only in a commit, and
    the snapshot step checks Git entries itself. Lexically invalid paths are skipped
    because :func:`check_group_document` already reported them.
    """
    problems: list[Problem] = []
    real_root = Path(os.path.realpath(root))
    for pointer, text in _working_tree_paths(doc):
        if check_relative(text) is not None:
            continue
        try:
            real = contain_path(root, root / posixpath.normpath(text), shown=text)
        except PathEscapeError as exc:
            problems.append(Problem(pointer, str(exc)))
            continue
        if _evidence_tree_problem(text) is None and real.relative_to(real_root).parts[0].casefold() == EVIDENCE_TREE:
            problems.append(
                Problem(pointer, f'expected a path outside the evidence tree, found {_quote(text)} resolving into "{EVIDENCE_TREE}/"')
            )
    return problems


def _working_tree_paths(doc: dict[str, Any]) -> Iterator[tuple[str, str]]:
    fixture = doc.get("fixture")
    if isinstance(fixture, str):
        yield "/fixture", fixture
    variants = doc.get("variants")
    for name in VARIANTS:
        variant = variants.get(name) if isinstance(variants, dict) else None
        if not isinstance(variant, dict):
            continue
        source = variant.get("source")
        if not (isinstance(source, dict) and source.get("kind") == "working-tree"):
            continue
        for key in ("skills", "context"):
            yield from _strings_at(variant.get(key), f"/variants/{name}/{key}")
    for index, bundle in _bundles(doc):
        if isinstance(bundle.get("entry"), str):
            yield f"/runtime/extensions/{index}/entry", bundle["entry"]
        yield from _strings_at(bundle.get("resources"), f"/runtime/extensions/{index}/resources")


# --------------------------------------------------------------------------- pure checks


def check_group_document(doc: dict[str, Any]) -> list[Problem]:
    """Every structural and cross-field problem of a group document (pure; no file system)."""
    problems = schemas.problems("group", doc)
    problems.extend(_input_problems(doc))
    problems.extend(_command_prompt_problems(doc))
    problems.extend(_group_path_problems(doc))
    problems.extend(_target_problems(doc))
    problems.extend(_tool_problems(doc))
    problems.extend(_expectation_problems(doc))
    problems.extend(_environment_problems(doc))
    return _unique(problems)


def check_suite_document(doc: dict[str, Any], base: str = "") -> list[Problem]:
    """Every structural and lexical problem of a suite document (pure).

    *base* is the suite's directory relative to the definition root; group references
    resolve from it and must stay inside the root.
    """
    problems = schemas.problems("suite", doc)
    groups = doc.get("groups")
    if isinstance(groups, list):
        seen: dict[str, int] = {}
        for index, ref in enumerate(groups):
            if not isinstance(ref, str) or ref == "":
                continue
            problem = check_relative(ref, base) or _evidence_tree_problem(ref, base)
            if problem is not None:
                problems.append(Problem(f"/groups/{index}", problem))
                continue
            normal = posixpath.normpath(posixpath.join(base, ref))
            earlier = seen.setdefault(normal, index)
            # Identical texts are uniqueItems' business; this catches "a.json" vs "./a.json".
            if earlier != index and groups[earlier] != ref:
                problems.append(
                    Problem(
                        f"/groups/{index}",
                        f"expected each group file once, found {_quote(ref)} naming the same file as /groups/{earlier}",
                    )
                )
    return _unique(problems)


def _input_problems(doc: dict[str, Any]) -> list[Problem]:
    inp = doc.get("input")
    if not isinstance(inp, dict):
        return []
    present = [key for key in ("prompt", "turns") if key in inp]
    if len(present) == 1:
        return []
    found = "neither" if not present else 'both "prompt" and "turns"'
    return [Problem("/input", f'expected exactly one of "prompt" or "turns", found {found}')]


def _group_path_problems(doc: dict[str, Any]) -> list[Problem]:
    declared: list[tuple[str, Any]] = [("/fixture", doc.get("fixture"))]
    variants = doc.get("variants")
    for name in VARIANTS:
        variant = variants.get(name) if isinstance(variants, dict) else None
        if isinstance(variant, dict):
            for key in ("skills", "context"):
                declared.extend(_strings_at(variant.get(key), f"/variants/{name}/{key}"))
    for index, bundle in _bundles(doc):
        declared.append((f"/runtime/extensions/{index}/entry", bundle.get("entry")))
        declared.extend(_strings_at(bundle.get("resources"), f"/runtime/extensions/{index}/resources"))
    problems = []
    for pointer, text in declared:
        # Empty strings and non-strings are the schema's to report.
        if isinstance(text, str) and text:
            problem = check_relative(text) or _evidence_tree_problem(text)
            if problem is not None:
                problems.append(Problem(pointer, problem))
    problems.extend(_repeated_path_problems(doc))
    return problems


#: The evidence tree under the definition root; no declared path may name it or lie in it.
EVIDENCE_TREE = ".skill-eval"


def _evidence_tree_problem(text: str, base: str = "") -> str | None:
    """Why lexically valid *text* (from *base*) names the evidence tree, or None."""
    normal = posixpath.normpath(posixpath.join(base, text))
    # casefold: on case-insensitive file systems ".Skill-Eval" is the same directory.
    if normal.split("/", 1)[0].casefold() == EVIDENCE_TREE:
        return f'expected a path outside the evidence tree, found {_quote(text)} inside "{EVIDENCE_TREE}/"'
    return None


def _repeated_path_problems(doc: dict[str, Any]) -> list[Problem]:
    """A variant's skills or context naming one path twice (``a`` and ``./a`` count too)."""
    variants = doc.get("variants")
    problems = []
    for name in VARIANTS:
        variant = variants.get(name) if isinstance(variants, dict) else None
        if not isinstance(variant, dict):
            continue
        for key in ("skills", "context"):
            items = variant.get(key)
            first: dict[str, int] = {}
            for pointer, text in _strings_at(items, f"/variants/{name}/{key}"):
                if not text or check_relative(text) is not None:
                    continue
                index = int(pointer.rsplit("/", 1)[1])
                earlier = first.setdefault(posixpath.normpath(text), index)
                if earlier == index:
                    continue
                shown = f"/variants/{name}/{key}/{earlier}"
                if isinstance(items, list) and items[earlier] == text:
                    message = f"expected each path once, found {_quote(text)} again (first at {shown})"
                else:
                    message = f"expected each path once, found {_quote(text)} naming the same path as {shown}"
                problems.append(Problem(pointer, message))
    return problems


def _command_prompt_problems(doc: dict[str, Any]) -> list[Problem]:
    """Prompts pi would run as a command (``/skill:…``, a prompt template, an extension command).

    pi treats a prompt as a command when its text starts with ``/`` (no trimming, the
    whole text: ``text.startsWith("/")``). Such a prompt is explicit delivery, so no
    prompt may start with ``/``: not in description groups, not on later body turns,
    and not on body turn one either, where a variant without a target would send it
    as written. The evaluator's own ``/skill:<name> `` prefix on body turn one is added
    after this check and is unaffected.
    """
    inp = doc.get("input")
    if not isinstance(inp, dict):
        return []
    prompts: list[tuple[str, Any]] = []
    if "prompt" in inp:
        prompts.append(("/input/prompt", inp["prompt"]))
    turns = inp.get("turns")
    if isinstance(turns, list):
        prompts.extend((f"/input/turns/{index}", turn) for index, turn in enumerate(turns))
    return [
        Problem(
            pointer,
            'expected a prompt that does not start with "/" (pi would run it as a command: /skill:, a prompt '
            f"template or an extension command, which is explicit delivery), found {_describe(text)}",
        )
        for pointer, text in prompts
        if isinstance(text, str) and text.startswith("/")
    ]


def _target_problems(doc: dict[str, Any]) -> list[Problem]:
    variants = doc.get("variants")
    if not isinstance(variants, dict):
        return []
    problems = []
    for name in VARIANTS:
        variant = variants.get(name)
        if not isinstance(variant, dict) or "target" not in variant:
            continue
        skills = variant.get("skills")
        target = variant["target"]
        index = json_int(target)
        if not isinstance(skills, list) or (target is not None and index is None):
            continue
        count = len(skills)
        pointer = f"/variants/{name}/target"
        may_be_null = name == "baseline" or (count == 0 and "runtime" in doc)
        if target is None and not may_be_null:
            why = (
                "a candidate that declares skills must identify its target"
                if count
                else 'only a candidate of a group with a "runtime" profile may have no target'
            )
            problems.append(Problem(pointer, f"expected {_index_range(count, False)} ({why}), found null"))
        elif index is not None and index >= count:
            problems.append(Problem(pointer, f"expected {_index_range(count, may_be_null)}, found {index}"))
    return problems


def _index_range(count: int, nullable: bool) -> str:
    if count == 0:
        return 'null ("skills" is empty)' if nullable else 'an index into "skills", which is empty'
    indexes = "index 0" if count == 1 else f"an index from 0 to {count - 1}"
    return f'{"null or " if nullable else ""}{indexes} into "skills"'


def _tool_problems(doc: dict[str, Any]) -> list[Problem]:
    tools = doc.get("tools")
    if not isinstance(tools, list):
        return []
    group_type = doc.get("type")
    runtime = doc.get("runtime")
    extensions = runtime.get("extensions") if isinstance(runtime, dict) else None
    # Any declared bundle counts, even a malformed one the schema already reported,
    # so one mistake does not also flag every custom tool.
    has_bundle = isinstance(extensions, list) and len(extensions) > 0
    if group_type == "description":
        allowed, expected = set(DESCRIPTION_TOOLS), '"read" (description groups allow no tools or only "read")'
    elif group_type == "body":
        allowed = set(BODY_TOOLS)
        names = _join_quoted(BODY_TOOLS)
        expected = (
            f"one of {names} or a custom tool of a declared extension bundle"
            if has_bundle
            else f"one of {names} (custom tools need a runtime extension bundle)"
        )
    else:
        # Unknown type: the schema reports it; only the type-independent rule applies.
        allowed, expected = None, "a supported tool"
    problems = []
    for index, tool in enumerate(tools):
        if not isinstance(tool, str) or not TOOL_NAME.match(tool):
            continue  # the schema's pattern reports it
        if tool in UNSUPPORTED_TOOLS:
            problems.append(Problem(f"/tools/{index}", f"expected {expected}, found {_quote(tool)} (native {_quote(tool)} is unsupported)"))
        elif allowed is not None and tool not in allowed and not (group_type == "body" and has_bundle):
            problems.append(Problem(f"/tools/{index}", f"expected {expected}, found {_quote(tool)}"))
    return problems


#: The tool-name syntax, kept equal to the ``tools`` item pattern of group.schema.json.
#: The launch layer applies it too: pi splits ``--tools`` on commas with no escaping.
TOOL_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_-]{0,63}\Z")


def _expectation_problems(doc: dict[str, Any]) -> list[Problem]:
    expectations = doc.get("expectations")
    if not isinstance(expectations, list):
        return []
    turn_count = _turn_count(doc.get("input"))
    first: dict[str, int] = {}
    problems = []
    for index, expectation in enumerate(expectations):
        if not isinstance(expectation, dict):
            continue
        ident = expectation.get("id")
        if isinstance(ident, str):
            earlier = first.setdefault(ident, index)
            if earlier != index:
                problems.append(
                    Problem(
                        f"/expectations/{index}/id",
                        f"expected an id no earlier expectation uses, found {_quote(ident)} again (first at /expectations/{earlier})",
                    )
                )
        turn = json_int(expectation.get("turn"))
        if turn is not None and turn_count is not None and turn > turn_count:
            expected = "turn 1 (the input has one turn)" if turn_count == 1 else f"a turn from 1 to {turn_count}"
            problems.append(Problem(f"/expectations/{index}/turn", f"expected {expected}, found {turn}"))
    return problems


def _turn_count(inp: Any) -> int | None:
    if not isinstance(inp, dict) or ("prompt" in inp) == ("turns" in inp):
        return None
    if isinstance(inp.get("prompt"), str):
        return 1
    turns = inp.get("turns")
    return len(turns) if isinstance(turns, list) and turns else None


def _environment_problems(doc: dict[str, Any]) -> list[Problem]:
    runtime = doc.get("runtime")
    environment = runtime.get("environment") if isinstance(runtime, dict) else None
    if not isinstance(environment, dict):
        return []
    problems = []
    literal = environment.get("literal")
    literal_names = {name.upper() for name in literal} if isinstance(literal, dict) else set()
    if isinstance(literal, dict):
        for name in literal:
            pointer = f"/runtime/environment/literal/{_escape(name)}"
            reserved = _reserved_reason(name)
            if reserved is not None:
                problems.append(Problem(pointer, reserved))
                continue
            marker = next((m for m in SECRET_NAME_MARKERS if m in name.upper()), None)
            if marker is not None and _is_environment_name(name):
                problems.append(
                    Problem(
                        pointer,
                        "expected a non-secret name (literal values are recorded in evidence; pass secrets with "
                        f'"inherit"), found {_quote(name)} containing {_quote(marker)}',
                    )
                )
    inherit = environment.get("inherit")
    if isinstance(inherit, list):
        for index, name in enumerate(inherit):
            if not isinstance(name, str):
                continue
            pointer = f"/runtime/environment/inherit/{index}"
            reserved = _reserved_reason(name)
            if reserved is not None:
                problems.append(Problem(pointer, reserved))
            elif name.upper() in literal_names and _is_environment_name(name):
                problems.append(Problem(pointer, f'expected a name not also set in "literal", found {_quote(name)}'))
    return problems


def _reserved_reason(name: str) -> str | None:
    if not _is_environment_name(name):
        return None  # the schema's pattern reports it
    why = envpolicy.reserved_reason(name)
    if why is None:
        return None
    return f"expected a name the evaluator does not control, found {_quote(name)} ({why})"


def _is_environment_name(name: str) -> bool:
    return bool(name) and (name[0].isascii() and (name[0].isalpha() or name[0] == "_")) and all(
        c.isascii() and (c.isalnum() or c == "_") for c in name
    )


def _bundles(doc: dict[str, Any]) -> Iterator[tuple[int, dict[str, Any]]]:
    runtime = doc.get("runtime")
    extensions = runtime.get("extensions") if isinstance(runtime, dict) else None
    if isinstance(extensions, list):
        for index, bundle in enumerate(extensions):
            if isinstance(bundle, dict):
                yield index, bundle


def _strings_at(value: Any, pointer: str) -> Iterator[tuple[str, str]]:
    if isinstance(value, list):
        for index, item in enumerate(value):
            if isinstance(item, str):
                yield f"{pointer}/{index}", item


def json_int(value: Any) -> int | None:
    """An integer as JSON Schema counts them (``2`` and ``2.0``), never a boolean."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return None


# --------------------------------------------------------------------------- selection


def select_group(suite: Suite, selector: str, option: str = "--skill-eval-group") -> GroupRef:
    """Return the suite group *selector* names: a group id or a one-based position.

    Selecting by id needs the group ids (:func:`load_suite_groups` fills them in).
    Raises SelectionError naming the valid ids and positions.
    """
    count = len(suite.groups)
    ids = [ref.group_id for ref in suite.groups]
    choices = f"a position from 1 to {count}" if count > 1 else "position 1"
    if selector.isascii() and selector.isdigit():
        position = int(selector)
        if 1 <= position <= count:
            return suite.groups[position - 1]
        raise SelectionError(f"{option} {selector} is out of range: suite {_quote(suite.id)} has {choices}")
    if any(ident is None for ident in ids):
        raise ValueError("select_group needs group ids to select by id; load the suite with load_suite_groups")
    for ref in suite.groups:
        if ref.group_id == selector:
            return ref
    known = _join_quoted([str(ident) for ident in ids])
    raise SelectionError(
        f"{option} {_quote(selector)} matches no group of suite {_quote(suite.id)}: expected one of {known} or {choices}"
    )


def select_variants(selector: str | None, option: str = "--skill-eval-variant") -> tuple[VariantName, ...]:
    """Return the variants a ``--variant`` value selects (both when *selector* is None)."""
    if selector is None:
        return VARIANTS
    for name in VARIANTS:
        if selector == name:
            return (name,)
    raise SelectionError(f"{option} expects one of {_join_quoted(VARIANTS)}, found {_quote(selector)}")


def check_group_selection(definition: Group | Suite, selector: str | None, option: str = "--skill-eval-group") -> None:
    """Raise SelectionError when a group selector is applied to a direct group definition."""
    if selector is not None and isinstance(definition, Group):
        raise SelectionError(
            f"{option} selects a group of a suite; {definition.path} is a group definition: "
            f"drop {option}, or run a suite that lists it"
        )


# --------------------------------------------------------------------------- building


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


# --------------------------------------------------------------------------- text helpers


def _unique(problems: list[Problem]) -> list[Problem]:
    return list(dict.fromkeys(problems))
