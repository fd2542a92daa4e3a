"""Stopping a group's trials when its answer is known (pure): curtailment and the sequential design.

``--skill-eval-stop`` (off by default) takes one of two rules, applied after every trial:

- ``curtail`` (deterministic curtailment): the group stops as soon as no outcome of the
  remaining trials can change any verdict of the trials policy. Exact and free of alpha:
  every verdict is the one the full N trials would give. A verdict is *fixed* when it is the
  same at every completion of the counts: each remaining trial of each arm passes, fails or
  is not graded.
- ``sequential``: each comparison runs the group-sequential sign test of
  :mod:`~pytest_skill_eval.decision.sequential` and is decided at a look (better, worse,
  futile); the group stops when every comparison is decided and every verdict the policy
  judges on the expectations is fixed (as for ``curtail``), so a pass-rate verdict never
  rests on fewer trials than it needs.

The verdicts (``trial_policy``) are, per expectation, whether it is graded at all and, when
the policy judges it (``candidate``: candidate expectations; ``any``: every one), whether its
rate is below the pass rate; per comparison, whether it can be compared and, under
``regression``, whether the candidate's rate is lower with Fisher's p below alpha.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Literal

from pytest_skill_eval.decision.sequential import DEFAULT_LOOKS, Look, PairOutcome, sequential_looks
from pytest_skill_eval.stats import fisher_exact

__all__ = ["STOP_MODES", "ComparisonCounts", "ExpectationCounts", "StopCheck", "StopMode", "StopRule", "check_stop",
           "comparison_fixed", "expectation_fixed"]

StopMode = Literal["off", "curtail", "sequential"]
STOP_MODES: tuple[StopMode, ...] = ("off", "curtail", "sequential")


@dataclass(frozen=True, slots=True)
class StopRule:
    """``--skill-eval-stop`` and the policy settings its verdicts are the ones of."""

    mode: StopMode = "off"
    fail_on: str = "candidate"
    pass_rate: float = 1.0
    alpha: float = 0.05
    looks: int = DEFAULT_LOOKS

    def __post_init__(self) -> None:
        if self.mode not in STOP_MODES:
            raise ValueError(f"stop: expected one of {', '.join(STOP_MODES)}, found {self.mode!r}")

    def judges_expectation(self, variant: str) -> bool:
        """Whether the policy's pass-rate verdict applies to an expectation of *variant*."""
        return self.fail_on == "any" or (self.fail_on == "candidate" and variant == "candidate")

    @property
    def judges_comparisons(self) -> bool:
        return self.fail_on == "regression"


@dataclass(frozen=True, slots=True)
class ExpectationCounts:
    """One expectation's graded trials so far, and whether the policy judges its rate."""

    id: str
    passes: int
    graded: int
    judged: bool


@dataclass(frozen=True, slots=True)
class ComparisonCounts:
    """One comparison's counts per arm so far, its pairs (one per trial), and whether ``regression`` judges it."""

    id: str
    baseline_passes: int
    baseline_graded: int
    candidate_passes: int
    candidate_graded: int
    judged: bool
    pairs: tuple[PairOutcome, ...] = ()


def below(passes: int, graded: int, pass_rate: float) -> bool | None:
    """The policy's verdict on a rate: below the pass rate, or None when nothing was graded (the same float test)."""
    return None if graded == 0 else passes / graded < pass_rate


def expectation_fixed(passes: int, graded: int, remaining: int, pass_rate: float, *, judged: bool = True) -> bool:
    """Whether the expectation's verdict is the same whatever *remaining* trials give.

    With nothing graded yet and trials to come, it may stay unavailable or not. Otherwise
    the rate of any completion lies between the extremes ``passes / (graded + r)`` (every
    remaining trial fails) and ``(passes + r) / (graded + r)`` (every one passes); the float
    division is correctly rounded and so monotone, and the verdict is fixed when both
    extremes give the same answer.
    """
    if remaining == 0:
        return True
    if graded == 0:
        return False
    if not judged:
        return True
    low = below(passes, graded + remaining, pass_rate)
    high = below(passes + remaining, graded + remaining, pass_rate)
    return low == high and low == below(passes, graded, pass_rate)


@functools.lru_cache(maxsize=65536)
def _fisher(a: int, b: int, c: int, d: int) -> float:
    return fisher_exact(a, b, c, d)


def regression_verdict(bp: int, bg: int, cp: int, cg: int, alpha: float) -> bool | None:
    """The ``regression`` policy's verdict: candidate rate lower and Fisher's p below alpha (None: not comparable)."""
    if not (bg and cg):
        return None
    return cp / cg < bp / bg and _fisher(bp, bg - bp, cp, cg - cp) < alpha


def _completions(passes: int, graded: int, remaining: int) -> Iterator[tuple[int, int]]:
    """Every (passes, graded) one arm can end with, the extremes first."""
    yield passes, graded + remaining
    yield passes + remaining, graded + remaining
    yield passes, graded
    for extra in range(remaining + 1):
        for won in range(extra + 1):
            yield passes + won, graded + extra


def comparison_fixed(c: ComparisonCounts, remaining: int, alpha: float) -> bool:
    """Whether the comparison's verdict is the same at every completion of both arms (stops at the first difference)."""
    if remaining == 0:
        return True
    if not (c.baseline_graded and c.candidate_graded):
        return False
    if not c.judged:
        return True
    first = regression_verdict(c.baseline_passes, c.baseline_graded, c.candidate_passes, c.candidate_graded, alpha)
    for bp, bg in _completions(c.baseline_passes, c.baseline_graded, remaining):
        for cp, cg in _completions(c.candidate_passes, c.candidate_graded, remaining):
            if regression_verdict(bp, bg, cp, cg, alpha) != first:
                return False
    return True


@dataclass(frozen=True, slots=True)
class StopCheck:
    """What the rule says after the trials so far: stop or go on, why, and each comparison's looks."""

    mode: StopMode
    ran: int
    planned: int
    stop: bool
    #: why the group stops, or what is still open (``None`` when it ran to the end undecided)
    reason: str
    #: per comparison, the sequential design's looks so far (``sequential`` only)
    looks: tuple[tuple[str, tuple[Look, ...]], ...] = ()


def check_stop(mode: StopMode, *, ran: int, planned: int, expectations: Sequence[ExpectationCounts],
               comparisons: Sequence[ComparisonCounts], pass_rate: float, alpha: float,
               looks: int = DEFAULT_LOOKS) -> StopCheck:
    """Whether the group can stop after *ran* of *planned* trials under *mode*, and why."""
    if mode not in STOP_MODES:
        raise ValueError(f"stop: expected one of {', '.join(STOP_MODES)}, found {mode!r}")
    remaining = planned - ran
    if mode == "off" or remaining <= 0:
        return StopCheck(mode, ran, planned, False, "ran every planned trial")
    for e in expectations:
        if not expectation_fixed(e.passes, e.graded, remaining, pass_rate, judged=e.judged):
            return StopCheck(mode, ran, planned, False, f"expectation {e.id} is not decided yet")
    if mode == "curtail":
        for c in comparisons:
            if not comparison_fixed(c, remaining, alpha):
                return StopCheck(mode, ran, planned, False, f"comparison {c.id} is not decided yet")
        return StopCheck(mode, ran, planned, True, "no remaining trial can change a verdict")
    seen = tuple((c.id, sequential_looks(c.pairs, planned, alpha, looks)) for c in comparisons)
    reasons = []
    for cid, found in seen:
        last = found[-1] if found else None
        if last is None:
            return StopCheck(mode, ran, planned, False, f"comparison {cid}: no look yet", seen)
        if last.decision == "continue":
            return StopCheck(mode, ran, planned, False, f"comparison {cid}: not decided at look {last.number} after "
                             f"{last.trials} trials (|S| = {abs(last.statistic)}, boundary {last.boundary})", seen)
        reasons.append(look_reason(cid, last))
    return StopCheck(mode, ran, planned, True, "; ".join(reasons) or "no remaining trial can change a verdict", seen)


def look_reason(comparison: str, look: Look) -> str:
    """``comparison x: candidate better, p = 0.0039 <= 0.0078`` (or worse, or futile)."""
    if look.decision in ("better", "worse"):
        bound = look.boundary_p
        limit = f" <= {bound:.2g}" if bound is not None else ""
        return f"comparison {comparison}: candidate {look.decision}, p = {look.p_value:.2g}{limit}"
    if look.decision == "futile":
        return (f"comparison {comparison}: futile ({look.higher} higher, {look.lower} lower: no remaining trial "
                f"can reach the boundary)")
    return f"comparison {comparison}: {look.decision}, p = {look.p_value:.2g}"
