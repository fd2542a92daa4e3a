"""A group-sequential exact sign test of one comparison's trial pairs (pure).

Trial k runs both arms, so each trial gives one pair of outcomes of a comparison: the
candidate passed where the baseline failed (*higher*, +1), the converse (*lower*, -1), both
alike (a tie, 0), or a side was not graded (the pair is left out). The statistic after n
trials is ``S = higher - lower`` over the ``m = higher + lower`` discordant pairs.

Under the null hypothesis (identical arms, independent runs) each discordant pair is
+1 or -1 with probability 1/2 whatever the common pass rate, independently of which pairs
are discordant. So, *given the discordant counts* m_1 <= m_2 <= ... at the looks, S is a
fair +-1 random walk observed at times m_1, m_2, ...: its law has no nuisance parameter,
and the boundaries are computed exactly on it (integer path counts, no approximation).

Design (Lan & DeMets 1983, O'Brien-Fleming-type spending):

- looks after the trials :func:`look_points` names (``looks`` equally spaced blocks, rounded
  up to an even trial so each block holds as many baseline-first as candidate-first trials;
  the last look is at the planned N);
- the information fraction of a look is its share of the planned trials, t = n / N;
- two-sided alpha is spent as ``alpha(t) = 2 - 2 * Phi(z_{1 - alpha/2} / sqrt(t))``;
- at look j the boundary c_j is the smallest integer with
  ``P(|S_i| >= c_i at an earlier look, or |S_j| >= c_j) <= alpha(t_j)`` under the fair walk
  given m_1..m_j (alpha a discreteness leaves unspent carries over to later looks);
- **efficacy**: |S_j| >= c_j stops with *candidate better* (S > 0) or *candidate worse* (S < 0);
- **futility** (non-binding, so it can only lower the type-I error): at a look before the
  last, the comparison stops when no outcome of the remaining trials can bring the sign
  test's nominal p-value to alpha at any later look. Every boundary has nominal level at
  most alpha (``P(|S_j| >= c_j) <= alpha(t_j) <= alpha``), so such a comparison can never
  cross one.

The conditional type-I error given every discordant sequence is at most alpha, hence so is
the unconditional one; ``tests/stats/test_sequential.py`` checks it by brute-force
enumeration of sign sequences and by simulation with identical arms. docs/statistics.md
gives the design and its references.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from statistics import NormalDist
from typing import ClassVar, Literal

from pytest_skill_eval.codec import Layout, Stored, meta
from pytest_skill_eval.decision.exact import sign_test

__all__ = ["DEFAULT_LOOKS", "Look", "LookDecision", "obf_spending", "look_points", "boundaries", "sequential_looks"]

#: how many looks the design takes by default (fewer when there are fewer trials)
DEFAULT_LOOKS = 5

LookDecision = Literal["continue", "better", "worse", "futile", "not significant"]

#: a trial's pair of one comparison: +1 higher (fail-to-pass), -1 lower, 0 tie, None not graded in an arm
PairOutcome = Literal[-1, 0, 1] | None


def obf_spending(t: float, alpha: float) -> float:
    """Lan-DeMets O'Brien-Fleming-type two-sided spending: ``2 - 2 Phi(z_{1-alpha/2} / sqrt(t))``."""
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"alpha: expected a level between 0 and 1, found {alpha!r}")
    if t <= 0.0:
        return 0.0
    if t >= 1.0:
        return alpha
    normal = NormalDist()
    return 2.0 - 2.0 * normal.cdf(normal.inv_cdf(1.0 - alpha / 2.0) / math.sqrt(t))


def look_points(planned: int, looks: int = DEFAULT_LOOKS) -> tuple[int, ...]:
    """The trial counts after which the design looks: ``looks`` blocks, each ending on an even trial (but the last, N)."""
    if planned < 1 or looks < 1:
        raise ValueError(f"expected at least one planned trial and one look, found {planned} and {looks}")
    points: list[int] = []
    for j in range(1, looks + 1):
        n = -(-planned * j // looks)
        if n % 2 and n < planned:
            n += 1
        n = min(n, planned)
        if not points or n > points[-1]:
            points.append(n)
    return tuple(points)


def boundaries(discordant: Sequence[int], fractions: Sequence[float], alpha: float) -> tuple[tuple[int, Fraction], ...]:
    """Each look's boundary c_j and the alpha spent up to it (exact), given the discordant counts at the looks.

    A boundary above m_j cannot be reached at that look (too few discordant pairs to
    spend any alpha on).
    """
    if len(discordant) != len(fractions):
        raise ValueError("expected one fraction per look")
    if any(b < a for a, b in zip(discordant, discordant[1:], strict=False)) or any(m < 0 for m in discordant):
        raise ValueError(f"expected non-decreasing discordant counts, found {list(discordant)}")
    # paths[s] = the number of sign sequences of the pairs so far ending at S = s that crossed no earlier boundary
    paths: dict[int, int] = {0: 1}
    seen = 0
    spent = Fraction(0)
    found: list[tuple[int, Fraction]] = []
    for m, t in zip(discordant, fractions, strict=True):
        steps = m - seen
        if steps:
            moved: dict[int, int] = {}
            for s, count in paths.items():
                for up in range(steps + 1):
                    end = s + 2 * up - steps
                    moved[end] = moved.get(end, 0) + count * math.comb(steps, up)
            paths = moved
        seen = m
        allowed = Fraction(obf_spending(t, alpha))
        total = 1 << m
        c = m + 1  # unreachable: nothing crosses
        tail = 0
        for candidate in range(m, 0, -1):
            tail_here = tail + sum(paths.get(s, 0) for s in {candidate, -candidate})
            if spent + Fraction(tail_here, total) > allowed:
                break
            tail, c = tail_here, candidate
        spent += Fraction(tail, total)
        if c <= m and (m - c) % 2:
            c += 1  # S has the parity of m: the same crossing set, stated as a value S can take
        paths = {s: n for s, n in paths.items() if abs(s) < c}
        found.append((c, spent))
    return tuple(found)


@dataclass(frozen=True, slots=True)
class Look(Stored):
    """One look of one comparison: what it saw, its boundary, and what it decided."""

    STORED: ClassVar[Layout] = Layout(order=("number", "trials", "planned", "higher", "lower", "statistic", "boundary",
                                             "p_value", "boundary_p", "spent", "allowed", "decision"))
    #: the look's number (1-based; stored as ``look``) and the trials it saw
    number: int = field(metadata=meta(key="look"))
    trials: int
    planned: int
    higher: int
    lower: int
    #: the boundary on |higher - lower| (above ``higher + lower``: unreachable at this look)
    boundary: int
    #: the two-sided alpha spent up to this look, and the spending function's allowance
    spent: float
    allowed: float
    decision: LookDecision

    @property
    def statistic(self) -> int:
        return self.higher - self.lower

    @property
    def pairs(self) -> int:
        return self.higher + self.lower

    @property
    def p_value(self) -> float:
        """The nominal two-sided sign-test p-value of the look's counts."""
        return sign_test(self.higher, self.lower)

    @property
    def boundary_p(self) -> float | None:
        """The nominal p-value at the boundary: the look crosses when ``p_value <= boundary_p`` (None: unreachable)."""
        if self.boundary > self.pairs:
            return None
        # |S| = c with m pairs: higher = (m + c) / 2; the boundary has the parity of m (see boundaries)
        c = self.boundary + (self.pairs - self.boundary) % 2
        if c > self.pairs:
            return None
        return sign_test((self.pairs + c) // 2, (self.pairs - c) // 2)


def futile(higher: int, lower: int, remaining: int, alpha: float) -> bool:
    """Whether no outcome of *remaining* more pairs can bring the sign test's p-value to *alpha*."""
    lead, trail = max(higher, lower), min(higher, lower)
    return all(sign_test(lead + a, trail) > alpha for a in range(remaining + 1))


def sequential_looks(pairs: Sequence[PairOutcome], planned: int, alpha: float,
                     looks: int = DEFAULT_LOOKS) -> tuple[Look, ...]:
    """The looks reached by *pairs* (one per trial that ran, in trial order) under the design for *planned* trials.

    The last look returned says whether the comparison is decided (``better``, ``worse``,
    ``futile``, or ``not significant`` at the final look) or goes on (``continue``).
    Nothing after a deciding look is looked at.
    """
    if len(pairs) > planned:
        raise ValueError(f"expected at most {planned} trials, found {len(pairs)}")
    points = [n for n in look_points(planned, looks) if n <= len(pairs)]
    counts = [(sum(1 for p in pairs[:n] if p == 1), sum(1 for p in pairs[:n] if p == -1)) for n in points]
    fractions = [n / planned for n in points]
    bounds = boundaries([h + lo for h, lo in counts], fractions, alpha)
    found: list[Look] = []
    for j, (n, (higher, lower), t, (c, spent)) in enumerate(zip(points, counts, fractions, bounds, strict=True), 1):
        s = higher - lower
        decision: LookDecision
        if abs(s) >= c:
            decision = "better" if s > 0 else "worse"
        elif n == planned:
            decision = "not significant"
        elif futile(higher, lower, planned - n, alpha):
            decision = "futile"
        else:
            decision = "continue"
        found.append(Look(j, n, planned, higher, lower, c, float(spent), obf_spending(t, alpha), decision))
        if decision != "continue":
            break
    return tuple(found)
