"""What grading sees of one variant run: plain frozen values read back from evidence.

``evidence.load_observation`` builds a :class:`RunObservation` from a persisted run
directory; ``grading`` judges expectations from it and nothing else, so a stored
result can be re-graded without running the agent again.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

RunState = Literal["complete", "invalid", "infrastructure-failed", "cancelled", "not-selected"]


@dataclass(frozen=True, slots=True)
class ToolCall:
    """One tool call the subject made, with its result as the host reported it."""

    turn: int
    id: str
    name: str
    arguments: dict[str, Any] = field(compare=False, hash=False)
    result_text: str | None = None
    is_error: bool = False
    blocked: bool = False
    event_index: int = -1


@dataclass(frozen=True, slots=True)
class Turn:
    """One declared user turn, from prompt to settlement."""

    index: int
    prompt: str
    sent: str
    response: str
    tool_calls: tuple[ToolCall, ...] = ()
    stop_reason: str | None = None
    error: str | None = None
    settled: bool = True


@dataclass(frozen=True, slots=True)
class ContextRequest:
    """One model request observed by the context observer (numbered per turn, from 1)."""

    turn: int
    request: int
    system_prompt: str
    provider_context: str


@dataclass(frozen=True, slots=True)
class RunObservation:
    """Everything grading may read about one variant run.

    Paths in ``workspace_root``, ``skill_roots``, ``target_file`` and
    ``context_roots`` are absolute paths as the host saw them during the run.
    File maps use slash-separated paths relative to the workspace.
    """

    variant: Literal["baseline", "candidate"]
    state: RunState
    workspace_root: str
    skill_roots: tuple[str, ...]
    target_file: str | None
    context_roots: tuple[str, ...]
    turns: tuple[Turn, ...]
    initial_files: Mapping[str, bytes] = field(compare=False, hash=False, default_factory=dict)
    final_files: Mapping[str, bytes] = field(compare=False, hash=False, default_factory=dict)
    turn_files: Mapping[int, Mapping[str, bytes]] = field(compare=False, hash=False, default_factory=dict)
    context_requests: tuple[ContextRequest, ...] = ()
    #: evidence files stored with inherited values replaced by the redaction marker, keyed by
    #: run-directory-relative path (``workspace/out.json``, ``turns/2/workspace/out.json``)
    redactions: Mapping[str, int] = field(compare=False, hash=False, default_factory=dict)

    @property
    def final_response(self) -> str:
        return self.turns[-1].response if self.turns else ""
