"""``stopping.json``: what ``--skill-eval-stop`` looked at in a group run with trials, and why it stopped.

Written by the engine after the group's last trial when a stop rule was in force (never with
``off``), checked against ``schemas/evidence-stopping.schema.json`` when read. It records every
check the rule made (after each trial), each comparison's looks under the sequential design
(counts, statistic, boundary, spent alpha, decision), the settings the rule used, and the
reason the group stopped or that it ran every planned trial. ``skill-eval regrade`` leaves it
as it is: which trials ran is a fact of the run.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pytest_skill_eval.codec import Stored, from_json
from pytest_skill_eval.decision.sequential import Look
from pytest_skill_eval.decision.stopping import StopCheck, StopMode
from pytest_skill_eval.errors import EvidenceError
from pytest_skill_eval.evidence.layout import STOPPING_FILE

__all__ = ["ComparisonLooks", "StopCheckRecord", "StoppingRecord", "parse_stopping", "read_stopping", "stopping_text"]



@dataclass(frozen=True, slots=True)
class StopCheckRecord(Stored):
    """One check of the rule, after *trial* trials: whether it stopped there and why (or what was still open)."""

    trial: int
    stop: bool
    reason: str


@dataclass(frozen=True, slots=True)
class ComparisonLooks(Stored):
    """One comparison's looks under the sequential design, in order."""

    id: str
    looks: tuple[Look, ...]


@dataclass(frozen=True, slots=True)
class StoppingRecord(Stored):
    """The stop rule's record of one group."""

    mode: StopMode
    planned: int
    ran: int
    stopped: bool
    reason: str
    fail_on: str
    pass_rate: float
    alpha: float
    checks: tuple[StopCheckRecord, ...]
    comparisons: tuple[ComparisonLooks, ...] = field(default=())

    @property
    def looks(self) -> tuple[tuple[str, tuple[Look, ...]], ...]:
        """Each comparison's id and its looks."""
        return tuple((c.id, c.looks) for c in self.comparisons)

    @property
    def saved(self) -> int:
        """Trials per arm not run because the group stopped."""
        return self.planned - self.ran if self.stopped else 0

    @classmethod
    def of(cls, checks: list[StopCheck], *, fail_on: str, pass_rate: float, alpha: float) -> StoppingRecord:
        """The record of the checks the rule made, the last one deciding."""
        last = checks[-1]
        return cls(last.mode, last.planned, last.ran, last.stop, last.reason, fail_on, pass_rate, alpha,
                   tuple(StopCheckRecord(c.ran, c.stop, c.reason) for c in checks),
                   tuple(ComparisonLooks(cid, looks) for cid, looks in last.looks))

    def sequential_decision(self, comparison: str) -> str | None:
        """The design's last decision on *comparison* (``better``, ``worse``, ``futile``, …), None without looks."""
        for cid, looks in self.looks:
            if cid == comparison and looks:
                return looks[-1].decision
        return None


def stopping_text(record: StoppingRecord) -> str:
    """``stopped after 6 of 20 trials (curtail): no remaining trial can change a verdict`` (one line)."""
    if record.stopped:
        return f"stopped after {record.ran} of {record.planned} trials ({record.mode}): {record.reason}"
    if record.ran < record.planned:
        return f"ran {record.ran} of {record.planned} trials ({record.mode}; not stopped by the rule): {record.reason}"
    last_open = next((c.reason for c in reversed(record.checks) if c.trial < record.planned), None)
    open_text = f"; last open: {last_open}" if last_open else ""
    return f"ran all {record.planned} trials ({record.mode}: no earlier stop{open_text})"


def read_stopping(group_dir: Path, root: Path | None = None) -> StoppingRecord | None:
    """The group's ``stopping.json``, None when absent; EvidenceError naming the file when it is not such a record.

    *root*: the stored result *group_dir* lies in, when it is untrusted input (no link below it is followed).
    """
    from pytest_skill_eval.evidence import safe_io

    path = group_dir / STOPPING_FILE
    data = safe_io.read_json(path, root, missing_ok=True)
    if data is safe_io.ABSENT:
        return None
    return parse_stopping(data, path)


def parse_stopping(data: Any, source: Path | str) -> StoppingRecord:
    """A stored ``stopping.json`` as its record, checked by ``evidence-stopping``; EvidenceError naming *source*."""
    from pytest_skill_eval.evidence import records

    records.check("evidence-stopping", data, source)
    record = from_json(StoppingRecord, data, source)
    if record.ran > record.planned:
        raise EvidenceError(f"{source}: /ran: expected at most the planned {record.planned} trials, found {record.ran}")
    return record
