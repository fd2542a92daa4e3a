"""No-progress detection for a subject that repeats itself (pure).

A subject that keeps calling tools keeps the host's stream busy, so silence-based stall
detection never sees it. This detector reads the tool records of pi's JSONL stream
(``tool_execution_start`` / ``tool_execution_end``) and finds a **cycle**: the last ``p``
finished calls, each the same tool with the same arguments getting the same result as the
call ``p`` before it, repeated ``limit`` times in a row (``p`` from 1 to
:data:`MAX_PERIOD`: one call, ``write`` then ``read``, ...), with the workspace's content
the same at every cycle boundary, from before the first repetition to after the last.

The workspace condition comes from an injected *digest* function (the driver passes a
content digest of the workspace tree, :mod:`pytest_skill_eval.host.treedigest`); it is
called once before the first call of an agent run and once after each finished call.
Anything that changes — an argument, a result, a file's bytes, the set of files — is
progress, so a long subject that keeps changing something is never stopped.

Each ``agent_start`` (a new prompt) starts afresh: a new user message is progress.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

#: The default number of repetitions of a cycle that stops a run (``--skill-eval-repeat-limit``).
DEFAULT_REPEAT_LIMIT = 5
#: The longest cycle (in tool calls) looked for.
MAX_PERIOD = 8


def canonical(value: Any) -> str:
    """One spelling of a JSON value: sorted keys, no spaces (object key order is no change)."""
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=repr)


@dataclass(frozen=True, slots=True)
class Step:
    """One finished tool call: what was asked, a digest of what came back, where it ended."""

    tool: str
    arguments: Any
    result_sha256: str
    is_error: bool
    record: int

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.tool, canonical(self.arguments), self.result_sha256)

    def to_json(self) -> dict[str, Any]:
        return {"tool": self.tool, "arguments": self.arguments, "result_sha256": self.result_sha256,
                "is_error": self.is_error}


@dataclass(frozen=True, slots=True)
class Repetition:
    """A cycle of ``len(cycle)`` calls seen ``count`` times in a row, the workspace unchanged."""

    cycle: tuple[Step, ...]
    count: int
    #: indexes of the first call's start record (its end record when the start is missing)
    #: and the last call's end record
    first_record: int
    last_record: int
    workspace_sha256: str

    def reason(self) -> str:
        calls = ", then ".join(f"{s.tool} {_short(canonical(s.arguments))}" for s in self.cycle)
        what = "the same tool call" if len(self.cycle) == 1 else f"the same cycle of {len(self.cycle)} tool calls"
        return (f"no progress: the subject repeated {what} {self.count} times in a row with the same "
                f"results and an unchanged workspace ({calls}) (repeating subject)")

    def to_json(self) -> dict[str, Any]:
        return {"kind": "repeated-tool-calls", "count": self.count, "period": len(self.cycle),
                "cycle": [s.to_json() for s in self.cycle], "records": [self.first_record, self.last_record],
                "workspace_sha256": self.workspace_sha256}


def _short(text: str, most: int = 200) -> str:
    """*text* cut to *most* characters for a one-line reason (``run.json`` keeps it whole)."""
    return text if len(text) <= most else text[:most] + f"… ({len(text)} characters)"


class RepetitionDetector:
    """Feed it every record (``observe``); it answers the :class:`Repetition` that stops the run.

    *limit* is the number of repetitions of a whole cycle (at least 2); *digest* returns the
    workspace's content digest now.
    """

    def __init__(self, limit: int, digest: Callable[[], str], max_period: int = MAX_PERIOD) -> None:
        if limit < 2:
            raise ValueError(f"a repeat limit of at least 2 is needed, found {limit}")
        self.limit = limit
        self.max_period = max_period
        self._digest = digest
        self._keep = limit * max_period
        self._reset()

    def _reset(self) -> None:
        self._started: dict[str, tuple[str, Any, int]] = {}
        self._steps: list[Step] = []
        self._starts: list[int] = []
        #: workspace digests: [i] before step i of the kept steps, [-1] after the last
        self._digests: list[str] = []

    def observe(self, data: Mapping[str, Any] | None, index: int = -1) -> Repetition | None:
        """Take record number *index*; a :class:`Repetition` when it completes the limit."""
        if not data:
            return None
        kind = data.get("type")
        if kind == "agent_start":
            self._reset()
        elif kind == "tool_execution_start":
            if not self._digests:
                self._digests.append(self._digest())
            call_id = str(data.get("toolCallId"))
            self._started[call_id] = (str(data.get("toolName")), data.get("args"), index)
        elif kind == "tool_execution_end":
            return self._end(data, index)
        return None

    def _end(self, data: Mapping[str, Any], index: int) -> Repetition | None:
        call_id = str(data.get("toolCallId"))
        # an end without its start (a stream that lost it): the end names the tool, and the
        # call's first record is the end itself, so ``records`` always points into events.jsonl
        name, args, start = self._started.pop(call_id, (str(data.get("toolName")), None, index))
        is_error = bool(data.get("isError"))
        result = hashlib.sha256(canonical({"result": data.get("result"), "isError": is_error}).encode()).hexdigest()
        if not self._digests:
            self._digests.append(self._digest())
        self._steps.append(Step(name, args, result, is_error, index))
        self._starts.append(start)
        self._digests.append(self._digest())
        if len(self._steps) > self._keep:
            cut = len(self._steps) - self._keep
            del self._steps[:cut], self._starts[:cut], self._digests[:cut]
        return self._cycle()

    def _cycle(self) -> Repetition | None:
        steps, digests, k = self._steps, self._digests, self.limit
        n = len(steps)
        for p in range(1, self.max_period + 1):
            span = p * k
            if span > n:
                break
            window = steps[n - span:]
            if any(window[i].key != window[i + p].key for i in range(span - p)):
                continue
            # digests[j] is the workspace before step j (of the kept steps); one per cycle boundary
            boundaries = {digests[n - j * p] for j in range(k + 1)}
            if len(boundaries) != 1:
                continue
            return Repetition(tuple(window[-p:]), k, self._starts[n - span], window[-1].record, digests[-1])
        return None
