"""Validated expectations: one frozen, tagged type per kind, and their union :data:`Check`.

:func:`~.shapes.parse_check` builds them from raw expectation objects; the judges in
:mod:`.turns` and :mod:`.workspace` take the one type they answer, and :mod:`.kinds`
dispatches on the type. Each type carries exactly the fields its kind uses, already
checked: paths are relative workspace (or resource) paths, a JSON pointer comes with its
parsed tokens, optional fields hold their documented defaults.

Every check has ``kind`` (its tag, the definition's ``kind`` string), ``expect``,
``variant`` and ``turn`` (``None`` when the expectation has none).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal, TypeAlias

from pytest_skill_eval.definitions.model import VariantName

TextExpect: TypeAlias = Literal["contains", "not-contains", "equals"]


@dataclass(frozen=True, slots=True, kw_only=True)
class SkillRead:
    """When the variant's target skill is first read."""

    kind: Literal["skill-read"] = "skill-read"
    expect: Literal["never", "on-turn", "by-turn", "not-before-turn"]
    variant: VariantName
    turn: int | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class ResourceRead:
    """Whether a file of the workspace, a declared skill or a context item is read."""

    kind: Literal["resource-read"] = "resource-read"
    expect: Literal["read", "not-read"]
    variant: VariantName
    turn: int | None = None
    resource: Literal["workspace", "skill", "context"]
    index: int | None = None
    """the declared skill or context item; ``None`` for the workspace"""
    path: str
    """relative to the resource; ``"."`` is a context item itself"""


@dataclass(frozen=True, slots=True, kw_only=True)
class PathCheck:
    """Whether a workspace path exists (as a file or a directory with files)."""

    kind: Literal["path"] = "path"
    expect: Literal["exists", "absent"]
    variant: VariantName
    turn: int | None = None
    path: str


@dataclass(frozen=True, slots=True, kw_only=True)
class ChangedPaths:
    """The set of files changed since the initial workspace."""

    kind: Literal["changed-paths"] = "changed-paths"
    expect: Literal["equals", "excludes"]
    variant: VariantName
    turn: int | None = None
    paths: tuple[str, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class FileText:
    """The text of one workspace file."""

    kind: Literal["file-text"] = "file-text"
    expect: TextExpect
    variant: VariantName
    turn: int | None = None
    path: str
    value: str


@dataclass(frozen=True, slots=True, kw_only=True)
class JsonCheck:
    """One workspace file as a JSON document, or one value in it."""

    kind: Literal["json"] = "json"
    expect: Literal["available", "missing", "valid", "malformed", "field-present", "field-absent", "field-equals"]
    variant: VariantName
    turn: int | None = None
    path: str
    pointer: str = ""
    """the pointer as written (``field-*`` only)"""
    tokens: tuple[str, ...] = ()
    """the pointer's unescaped reference tokens"""
    value: Any = None
    """what ``field-equals`` compares with"""


@dataclass(frozen=True, slots=True, kw_only=True)
class ResponseText:
    """The final response of a turn."""

    kind: Literal["response-text"] = "response-text"
    expect: TextExpect
    variant: VariantName
    turn: int | None = None
    value: str


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolCallCheck:
    """Calls to one tool, optionally filtered by their arguments' JSON text."""

    kind: Literal["tool-call"] = "tool-call"
    expect: Literal["called", "succeeded", "failed", "not-called"]
    variant: VariantName
    turn: int | None = None
    tool: str
    contains: tuple[str, ...] = ()
    not_contains: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class ContextText:
    """What one model request of a turn was sent: its system prompt or provider context."""

    kind: Literal["context-text"] = "context-text"
    expect: TextExpect
    variant: VariantName
    turn: int | None = None
    value: str
    surface: Literal["system-prompt", "provider-context"] = "system-prompt"
    request: Literal["first", "last"] | int = "last"


Check: TypeAlias = (
    SkillRead | ResourceRead | PathCheck | ChangedPaths | FileText | JsonCheck | ResponseText | ToolCallCheck
    | ContextText
)
"""Any validated expectation."""

WorkspaceCheck: TypeAlias = PathCheck | ChangedPaths | FileText | JsonCheck
"""The checks judged on workspace state: a ``turn`` makes them read that turn's snapshot."""

CHECK_TYPES: dict[str, type[Check]] = {
    "skill-read": SkillRead,
    "resource-read": ResourceRead,
    "path": PathCheck,
    "changed-paths": ChangedPaths,
    "file-text": FileText,
    "json": JsonCheck,
    "response-text": ResponseText,
    "tool-call": ToolCallCheck,
    "context-text": ContextText,
}
"""Each kind's check type, by the kind string."""
