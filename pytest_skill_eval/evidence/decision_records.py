"""``result.json`` ``decision``: the one decision over the result's comparisons, with its numbers.

Built from the decision core's :class:`~pytest_skill_eval.decision.SuiteDecision` at the
write boundary of the result (``engine/decision.py``), read back by every surface (the
terminal summary, ``skill-eval view``, JUnit, the step summary, the HTML report) so they all
show the same line and figures. docs/evidence.md gives the fields, docs/statistics.md the rules.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pytest_skill_eval.decision import DecisionRules, SuiteDecision, evidence_flips
from pytest_skill_eval.decision.calibration import FlipRate, decision_flips

__all__ = ["ComparisonRecord", "DecisionRecord", "FlipRecord", "comparison_parts"]


def comparison_parts(cid: str) -> tuple[str, str]:
    """``(group id, comparison id)`` of a case id ``<group>/<comparison>``."""
    group, _, comparison = cid.partition("/")
    return group, comparison


@dataclass(frozen=True, slots=True)
class FlipRecord:
    """A/A calibration: *flips* of *pairs* disagreed (``--skill-eval-aa``)."""

    flips: int
    pairs: int

    @property
    def rate(self) -> FlipRate:
        return FlipRate(self.flips, self.pairs)

    def to_json(self) -> dict[str, Any]:
        interval = self.rate.interval
        return {"flips": self.flips, "pairs": self.pairs, "rate": self.rate.rate,
                "interval": [interval.low, interval.high] if interval is not None else None}

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> FlipRecord:
        return cls(d["flips"], d["pairs"])


@dataclass(frozen=True, slots=True)
class ComparisonRecord:
    """One comparison's decision: its counts, raw and adjusted p-value, power and coverage."""

    group: str
    position: int
    comparison: str
    decision: str
    line: str
    planned: int
    baseline_passes: int
    baseline_graded: int
    candidate_passes: int
    candidate_graded: int
    coverage: float
    p_value: float | None
    adjusted_p_value: float | None
    power: float | None
    #: A/A runs only: this comparison's false flips
    flips: FlipRecord | None = None

    def to_json(self) -> dict[str, Any]:
        out = {"group": self.group, "position": self.position, "comparison": self.comparison,
               "decision": self.decision, "line": self.line, "planned": self.planned,
               "baseline": {"passes": self.baseline_passes, "graded": self.baseline_graded},
               "candidate": {"passes": self.candidate_passes, "graded": self.candidate_graded},
               "coverage": self.coverage, "p_value": self.p_value, "adjusted_p_value": self.adjusted_p_value,
               "power": self.power}
        if self.flips is not None:
            out["flips"] = self.flips.to_json()
        return out

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> ComparisonRecord:
        flips = d.get("flips")
        return cls(d["group"], d["position"], d["comparison"], d["decision"], d["line"], d["planned"],
                   d["baseline"]["passes"], d["baseline"]["graded"], d["candidate"]["passes"],
                   d["candidate"]["graded"], d["coverage"], d["p_value"], d["adjusted_p_value"], d["power"],
                   FlipRecord.from_json(flips) if flips else None)


@dataclass(frozen=True, slots=True)
class DecisionRecord:
    """The result's decision: the suite test over its comparisons, and each comparison's."""

    decision: str
    line: str
    #: ``exact McNemar`` (single runs) or ``exact sign test`` (trials), over cases
    test: str
    higher: int
    lower: int
    ties: int
    p_value: float | None
    power: float | None
    decisive: int
    rules: Mapping[str, Any]
    comparisons: tuple[ComparisonRecord, ...]
    #: pi runs of the comparisons' groups that did not complete, and trials that never ran
    lost_runs: int = 0
    #: ``--skill-eval-aa``: the candidate ran against itself; the false flips of the suite and its decisions
    aa: bool = False
    flips: FlipRecord | None = None
    decision_flips: FlipRecord | None = None

    @property
    def underpowered_or_indecisive(self) -> tuple[str, ...]:
        """``suite`` and each comparison id decided underpowered or indecisive (``--skill-eval-require-power``)."""
        found = ["suite"] if self.decision in ("underpowered", "indecisive") else []
        return (*found, *(f"{c.group}/{c.comparison}" for c in self.comparisons
                          if c.decision in ("underpowered", "indecisive")))

    def lines(self) -> list[str]:
        """The decision line, then one line per comparison that is not ``no detectable difference``."""
        out = [f"decision: {self.line}"]
        out += [f"  {c.group}/{c.comparison}: {c.line}" for c in self.comparisons]
        if self.lost_runs:
            out.append(f"  lost runs: {self.lost_runs} pi run(s) of the compared groups did not complete "
                       "(counted as not graded, never as failures)")
        if self.aa and self.flips is not None:
            out.append(f"  A/A false-flip rate: {self.flips.rate.text()}")
            if self.decision_flips is not None:
                out.append(f"  A/A comparisons decided better or worse: {self.decision_flips.flips} of "
                           f"{self.decision_flips.pairs} decisive")
        return out

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "decision": self.decision, "line": self.line, "test": self.test,
            "counts": {"higher": self.higher, "lower": self.lower, "ties": self.ties},
            "p_value": self.p_value, "power": self.power, "decisive": self.decisive,
            "rules": dict(self.rules), "lost_runs": self.lost_runs,
            "comparisons": [c.to_json() for c in self.comparisons], "aa": self.aa,
        }
        if self.flips is not None:
            out["flips"] = self.flips.to_json()
        if self.decision_flips is not None:
            out["decision_flips"] = self.decision_flips.to_json()
        return out

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> DecisionRecord:
        flips, dflips = d.get("flips"), d.get("decision_flips")
        return cls(d["decision"], d["line"], d["test"], d["counts"]["higher"], d["counts"]["lower"],
                   d["counts"]["ties"], d["p_value"], d["power"], d["decisive"], dict(d["rules"]),
                   tuple(ComparisonRecord.from_json(c) for c in d["comparisons"]), d.get("lost_runs", 0),
                   bool(d.get("aa", False)), FlipRecord.from_json(flips) if flips else None,
                   FlipRecord.from_json(dflips) if dflips else None)

    @classmethod
    def of(cls, suite: SuiteDecision, positions: Mapping[str, int], *, lost_runs: int = 0,
           aa: bool = False) -> DecisionRecord:
        """The record of *suite*; *positions* maps a group id to its position."""
        rules: DecisionRules = suite.rules
        flips = evidence_flips([c.evidence for c in suite.comparisons]) if aa else None
        comparisons = []
        for c in suite.comparisons:
            e = c.evidence
            group, comparison = comparison_parts(e.id)
            own = flips.comparisons.get(e.id) if flips is not None else None
            comparisons.append(ComparisonRecord(
                group, positions.get(group, 0), comparison, c.decision, c.line(rules), e.planned,
                e.baseline_passes, e.baseline_graded, e.candidate_passes, e.candidate_graded, e.coverage,
                c.p_value, c.adjusted_p_value, c.power,
                FlipRecord(own.flips, own.pairs) if own is not None else None))
        test = "exact McNemar" if suite.single_run else "exact sign test"
        line = suite.line() if suite.comparisons else "indecisive: no comparison to decide on (no group compared both variants)"
        return cls(suite.decision, line, test, suite.higher, suite.lower, suite.ties, suite.p_value,
                   suite.power, len(suite.decisive),
                   {"alpha": rules.alpha, "min_effect": rules.min_effect, "target_power": rules.target_power,
                    "coverage_floor": rules.coverage_floor, "adjustment": rules.adjustment},
                   tuple(comparisons), lost_runs, aa,
                   FlipRecord(flips.suite.flips, flips.suite.pairs) if flips is not None else None,
                   (lambda r: FlipRecord(r.flips, r.pairs))(decision_flips(suite)) if aa else None)

