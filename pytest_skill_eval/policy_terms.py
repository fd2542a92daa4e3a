"""The terms of the outcome policy (pure): the ``--skill-eval-fail-on`` values, the states that
make an item an error, the reported parts of a group and their wording helpers.

:mod:`.policy` (the verdict) and :mod:`.trial_policy` (how a verdict over several trials reads
its aggregate) both speak them; :mod:`.policy` exports them all.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal, get_args

from pytest_skill_eval.safe_text import neutralise

if TYPE_CHECKING:
    from pytest_skill_eval.evidence.records import RunRecord, TranscriptRecord

FailOn = Literal["candidate", "regression", "any", "never"]
FAIL_ON_CHOICES: tuple[FailOn, ...] = get_args(FailOn)
DEFAULT_FAIL_ON: FailOn = "candidate"

Outcome = Literal["passed", "failed", "error"]
#: ``reported``: a failure recorded for the reader that fails nothing under the policy (a baseline
#: failing under ``candidate``, an uncounted transition); not a skip, the check did run
EntryOutcome = Literal["passed", "failed", "reported", "skipped", "error"]

STATUS_PROPERTY = "skill_eval.status"
ERROR_RUN_STATES = ("invalid", "infrastructure-failed", "cancelled")
FAILING_TRANSITIONS = ("pass-to-fail", "fail-to-fail")


def parse_fail_on(value: str, source: str = "--skill-eval-fail-on") -> FailOn:
    """Return *value* as a policy, or raise ValueError naming the valid ones."""
    for choice in FAIL_ON_CHOICES:
        if value == choice:
            return choice
    raise ValueError(f"{source}: {value!r} is not a valid policy. Valid policies: {', '.join(FAIL_ON_CHOICES)}")


@dataclass(frozen=True, slots=True)
class VariantState:
    name: str
    state: str
    reason: str | None
    run_dir: str


@dataclass(frozen=True, slots=True)
class Entry:
    """One separately reported part of a group: a variant, expectation, comparison or the grade."""

    name: str
    outcome: EntryOutcome
    word: str
    message: str
    properties: tuple[tuple[str, str], ...]


def one_line(text: str) -> str:
    """*text* on one line and safe to print: :func:`~.safe_text.neutralise` with tab, CR and
    LF as ``\\t``, ``\\r``, ``\\n``. The backslash is left alone, so an excerpt a grade already
    escaped (``"a\\nb"``) is shown as it is, never as ``\\\\n``."""
    return neutralise(text, one_line=True)


def count_words(words: Iterable[str]) -> str:
    """``fail-to-pass`` / ``2 fail-to-pass, pass-to-pass`` in order of first appearance."""
    counts = Counter(words)
    return ", ".join(word if n == 1 else f"{n} {word}" for word, n in counts.items())


#: how the scripted stand-in starts the text it answers with when its script has no step left
EXHAUSTED_PREFIX = "[scripted stand-in] Script exhausted:"


def stand_in_notes(variant: str, run: RunRecord | None, transcript: TranscriptRecord | None) -> tuple[tuple[str, int, str], ...]:
    """What a failure should say about a run of the scripted stand-in: that it ran out of steps.

    The stand-in answers a request its script has no step for with a plain text stop
    that starts with :data:`EXHAUSTED_PREFIX`; that text is the turn's response.
    """
    if run is None or run.ran is None or run.ran.model.provider != "scripted" or transcript is None:
        return ()
    return tuple((variant, t.turn.index, t.turn.response) for t in transcript.turns
                 if t.turn.response.startswith(EXHAUSTED_PREFIX))
