"""The one error tree of pytest-skill-eval.

    SkillEvalError
    ├── DefinitionError            a definition file breaks the schema-version-1 contract
    ├── SelectionError             a group or variant selector names nothing
    ├── PathEscapeError            a declared path is not a contained relative path
    ├── SourceError                a skill/context/fixture snapshot cannot be taken
    ├── InvalidVariantError        a variant cannot run as declared (its run state is ``invalid``)
    ├── HostError                  the pi host cannot be found, installed or launched
    ├── LaunchRefusedError         a launch would hand pi an argument or variable it must not get
    ├── ScriptError                a scripted-model script is malformed
    ├── EvidenceError              evidence cannot be written or read back
    │   ├── MalformedGradeError    a stored grade document is not what grading writes
    │   └── EvidenceRefusedError   an entry of a stored result no command reads (a link, a special file, too large)
    ├── SkillFileError             a SKILL.md is missing or its frontmatter cannot be read
    ├── InitRefusedError           ``skill-eval init`` will not write (no Git commit, files exist, ...)
    ├── UnanswerableError          the evidence cannot answer one expectation (a ``grade-error``)
    │   └── MalformedJSONError     a workspace file is not one strict JSON text
    ├── GroupNotPassedError        how a pytest item reports a group that did not pass
    │   ├── GroupFailedError       selected expectations failed under the fail-on policy
    │   └── GroupNotGradedError    a variant was invalid, failed or cancelled, or grading errored
    └── MergeRefusedError          ``skill-eval merge``'s inputs are not the shards of one split

Outside the tree, as the standard exceptions they refine (callers catch those):

    ValueError
    └── JSONBoundsError            a document over the bounded JSON reader's size or depth limit
    Exception
    └── UnsupportedSchemaError     a schema the compiled fast check cannot be trusted with (never
                                   reaches a user: the full validator is used instead)

A failed expectation is data (see ``grading``), never an exception; ``UnanswerableError`` is
caught inside grading and becomes ``grade-error`` evidence, ``GroupNotPassedError`` is caught by
pytest and becomes the item's failure or error text.

Every exception class of the package, module-private ones included, is named ``...Error``
(tests/api/test_architecture.py checks it, ruff's N818 flags a new one at its definition).
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any


def json_text(value: Any) -> str:
    """*value* as JSON for a message, as the author wrote it (non-ASCII kept).

    Lone surrogates cannot be printed, so such values fall back to ``\\u`` escapes.
    """
    rendered = json.dumps(value, ensure_ascii=False)
    try:
        rendered.encode("utf-8")
    except UnicodeEncodeError:
        return json.dumps(value)
    return rendered


def show(value: Any, limit: int = 80) -> str:
    """A short, single-line JSON rendering of *value* for messages (how grade errors show values)."""
    try:
        text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), sort_keys=True)
    except (TypeError, ValueError, RecursionError):
        text = repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def did_you_mean(found: Any, known: Sequence[str], *, cutoff: float = 0.75) -> str:
    """`` (did you mean "x"?)`` when *found* is a string close to one of *known*, else ``""``.

    The default cutoff is high for values ("present" is not a typo of "absent", "exist" is
    one of "exists"); field names, which are longer and fewer, use a looser one.
    """
    if not isinstance(found, str) or found in known:
        return ""
    close = difflib.get_close_matches(found, list(known), n=1, cutoff=cutoff)
    return suggestion_text(close[0] if close else None)


def suggestion_text(suggestion: str | None) -> str:
    """`` (did you mean "x"?)`` for a suggestion found some other way, ``""`` for none."""
    return f" (did you mean {json_text(suggestion)}?)" if suggestion else ""


class SkillEvalError(Exception):
    """Base class of every error this package raises on purpose."""


@dataclass(frozen=True, slots=True)
class Problem:
    """One violation in one definition file, located by a JSON pointer.

    Problems sort by pointer segment, array indexes as numbers (``/expectations/2``
    before ``/expectations/10``), then by message.
    """

    pointer: str
    message: str

    def sort_key(self) -> tuple[tuple[tuple[int, int, str], ...], str]:
        segments = self.pointer.split("/")[1:] if self.pointer else []
        return tuple((0, int(s), "") if s.isdigit() and s.isascii() else (1, 0, s) for s in segments), self.message

    def __lt__(self, other: Problem) -> bool:
        return self.sort_key() < other.sort_key()

    def render(self, file: str) -> str:
        return f"{file}: {self.pointer or '/'}: {self.message}"


class DefinitionError(SkillEvalError):
    """A definition file is unreadable or violates the schema; lists every problem."""

    def __init__(self, file: str, problems: list[Problem] | tuple[Problem, ...]) -> None:
        self.file = file
        self.problems = tuple(sorted(problems, key=Problem.sort_key))
        super().__init__("\n".join(p.render(file) for p in self.problems))


class PathEscapeError(SkillEvalError):
    """A declared path is absolute, malformed or leaves its root."""


class SourceError(SkillEvalError):
    """A declared source (working tree or Git commit) cannot supply a path."""


class HostError(SkillEvalError):
    """The pi host is missing, too old, or could not be installed or started."""


class LaunchRefusedError(SkillEvalError):
    """A launch plan carries a value the host must not receive (the variant is invalid).

    The loader rejects such definitions first; this is the launch layer's own check, so a
    definition object built without the loader still cannot steer the host.
    """


class ScriptError(SkillEvalError):
    """A scripted-model script file is malformed."""


class EvidenceError(SkillEvalError):
    """Evidence could not be persisted or read back."""


class SelectionError(SkillEvalError):
    """A group or variant selector names nothing, or does not apply to the definition."""


class InvalidVariantError(SkillEvalError):
    """The variant cannot be run as declared (its state is ``invalid``)."""


class SkillFileError(SkillEvalError):
    """A skill's ``SKILL.md`` is missing, not UTF-8, or its frontmatter is malformed."""


class InitRefusedError(SkillEvalError):
    """``skill-eval init`` refuses to write; the message says why and what to do."""


class UnanswerableError(SkillEvalError):
    """The evidence cannot answer an expectation; the message says what is missing."""


class MalformedJSONError(UnanswerableError, ValueError):
    """A workspace file's bytes are not one strict JSON text."""


class GroupNotPassedError(SkillEvalError):
    """Raised by a pytest item for a group that did not pass; the message is the report."""


class GroupFailedError(GroupNotPassedError):
    """Selected expectations failed under the fail-on policy (the item fails)."""


class GroupNotGradedError(GroupNotPassedError):
    """A variant was invalid, infrastructure failed or was cancelled, or grading errored (the item errors)."""


class MalformedGradeError(EvidenceError, ValueError):
    """A stored grade document (``grade.json``) whose structure or field types are wrong.

    Also a ``ValueError``, as it was before it joined the tree.
    """


class EvidenceRefusedError(EvidenceError):
    """An entry of a result that no command reads: a link, a special file, a file too large."""


class MergeRefusedError(SkillEvalError):
    """The inputs are not the shards of one split (every problem is listed)."""


class JSONBoundsError(ValueError):
    """A document is not JSON this reader can take; ``reason`` says what was found."""

    def __init__(self, reason: str, pointer: str = "") -> None:
        super().__init__(reason)
        self.reason = reason
        self.pointer = pointer


class UnsupportedSchemaError(Exception):
    """The schema uses something the compiled check cannot be trusted with."""
