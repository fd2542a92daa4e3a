"""Reading one definition file into a JSON document: regular files only, strict JSON, no surrogates."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import Any, NoReturn

from pytest_skill_eval import jsonbounds
from pytest_skill_eval.errors import DefinitionError, JSONBoundsError, Problem
from pytest_skill_eval.jsonpointer import escape as _escape
from pytest_skill_eval.schemas import describe as _describe
from pytest_skill_eval.schemas import quote as _quote


def read_document(path: Path) -> dict[str, Any]:
    """Read one strict JSON object from *path* or raise DefinitionError naming the file.

    Strict means: UTF-8, no duplicate field names, no ``NaN``/``Infinity``, no lone
    surrogates. Only a regular file is opened: a FIFO, device, socket or directory is
    refused from its ``stat`` (and the open never blocks), so nothing can hang the load.
    """
    try:
        data = read_regular_file(path)
    except _NotRegularFileError as exc:
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


class _NotRegularFileError(OSError):
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


def read_regular_file(path: Path) -> bytes:
    """The bytes of *path* if it is a regular file; raises _NotRegularFileError naming what it is."""
    mode = os.stat(path).st_mode
    if not stat.S_ISREG(mode):
        raise _NotRegularFileError(file_kind(mode))
    # O_NONBLOCK: should the file be swapped for a FIFO after the stat, open() cannot block.
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0))
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(handle.fileno())
        if not stat.S_ISREG(info.st_mode):
            raise _NotRegularFileError(file_kind(info.st_mode))
        if info.st_size > jsonbounds.MAX_BYTES:
            raise _NotRegularFileError(f"a file of {info.st_size} bytes, over the {jsonbounds.MAX_BYTES}-byte limit of a JSON file")
        return handle.read(jsonbounds.MAX_BYTES + 1)


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
        raise _NonStandardConstantError(name)

    try:
        doc = jsonbounds.loads(text, object_pairs_hook=collect_pairs, parse_constant=reject_constant)
    except JSONBoundsError as exc:
        raise DefinitionError(file, [Problem(exc.pointer, f"expected JSON this loader can read, found {exc.reason}")]) from None
    except json.JSONDecodeError as exc:
        raise DefinitionError(
            file, [Problem("", f"expected JSON, found invalid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}")]
        ) from None
    except _NonStandardConstantError as exc:
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
    try:
        # one pass in C: a lone surrogate in any key or string makes the encoding fail
        json.dumps(doc, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        pass  # found one: the walk below says where
    except (RecursionError, ValueError, TypeError):
        pass  # cannot tell this way: walk
    else:
        return []
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


class _NonStandardConstantError(ValueError):
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
