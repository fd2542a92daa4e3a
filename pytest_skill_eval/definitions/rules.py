"""Cross-field rules JSON Schema cannot word clearly (pure): every problem of one document at once.

Lexical path containment, target and turn ranges, tools per group type, the
environment-name policy, unique ids. Each rule returns :class:`~pytest_skill_eval.errors.Problem`
values located by JSON pointer.
"""

from __future__ import annotations

import os
import posixpath
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from pytest_skill_eval import envpolicy, schemas
from pytest_skill_eval.definitions.launchable import launch_string_problems
from pytest_skill_eval.definitions.model import VARIANTS
from pytest_skill_eval.errors import PathEscapeError, Problem
from pytest_skill_eval.jsonpointer import escape as _escape
from pytest_skill_eval.paths import check_relative, contain_path
from pytest_skill_eval.schemas import describe as _describe
from pytest_skill_eval.schemas import join_quoted as _join_quoted
from pytest_skill_eval.schemas import quote as _quote

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


def group_containment_problems(doc: dict[str, Any], root: Path) -> list[Problem]:
    """Canonical checks of the working-tree paths a group declares (touches the file system).

    Git-sourced skills and context are skipped: they may exist only in a commit, and
    the snapshot step checks Git entries itself. Lexically invalid paths are skipped
    because :func:`check_group_document` already reported them.
    """
    problems: list[Problem] = []
    resolved_root = os.path.realpath(root)
    real_root = Path(resolved_root)
    for pointer, text in _working_tree_paths(doc):
        if check_relative(text) is not None:
            continue
        try:
            real = contain_path(root, root / posixpath.normpath(text), shown=text, real_root=resolved_root)
        except PathEscapeError as exc:
            problems.append(Problem(pointer, str(exc)))
            continue
        if evidence_tree_problem(text) is None and real.relative_to(real_root).parts[0].casefold() == EVIDENCE_TREE:
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
    problems.extend(launch_string_problems(doc))
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
            problem = check_relative(ref, base) or runs_tree_problem(ref, base)
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
            problem = check_relative(text) or evidence_tree_problem(text)
            if problem is not None:
                problems.append(Problem(pointer, problem))
    problems.extend(_repeated_path_problems(doc))
    return problems


#: The evidence tree under the definition root; no declared path may name it or lie in it.
EVIDENCE_TREE = ".skill-eval"


def evidence_tree_problem(text: str, base: str = "") -> str | None:
    """Why lexically valid *text* (from *base*) names the evidence tree, or None."""
    normal = posixpath.normpath(posixpath.join(base, text))
    # casefold: on case-insensitive file systems ".Skill-Eval" is the same directory.
    if normal.split("/", 1)[0].casefold() == EVIDENCE_TREE:
        return f'expected a path outside the evidence tree, found {_quote(text)} inside "{EVIDENCE_TREE}/"'
    return None


#: Stored results; a suite may list group files anywhere else, ``.skill-eval/<name>/`` included.
RUNS_TREE = f"{EVIDENCE_TREE}/runs"


def runs_tree_problem(text: str, base: str = "") -> str | None:
    """Why lexically valid suite entry *text* (from *base*) names stored results, or None.

    Group files are the evaluator's own input, never the subject's, so they may live
    beside their suite in ``.skill-eval/<name>/`` (where ``skill-eval init`` writes
    them); only ``.skill-eval/runs/`` is refused, where a stored ``definition.json``
    must not pass for a definition.
    """
    parts = posixpath.normpath(posixpath.join(base, text)).split("/")
    if [part.casefold() for part in parts[:2]] == RUNS_TREE.split("/"):
        return f'expected a path outside the evidence tree, found {_quote(text)} inside "{RUNS_TREE}/"'
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
            reserved = _reserved_reason(name, envpolicy.literal_refusal)
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
            reserved = _reserved_reason(name, envpolicy.inherit_refusal)
            if reserved is not None:
                problems.append(Problem(pointer, reserved))
            elif name.upper() in literal_names and _is_environment_name(name):
                problems.append(Problem(pointer, f'expected a name not also set in "literal", found {_quote(name)}'))
    return problems


def _reserved_reason(name: str, refusal: Callable[[str], str | None]) -> str | None:
    if not _is_environment_name(name):
        return None  # the schema's pattern reports it
    why = refusal(name)
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


def _unique(problems: list[Problem]) -> list[Problem]:
    return list(dict.fromkeys(problems))
