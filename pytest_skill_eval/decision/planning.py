"""How many trials a suite needs to decide, and what they would cost (pure): ``skill-eval plan``.

Every figure comes from :mod:`.power` (exact enumeration, never a normal approximation):

- each comparison: :func:`~.power.trials_for_power` at the level a comparison of the family
  faces (:func:`comparison_level`: alpha/m under ``holm`` and ``bh``, alpha under ``none``),
  at its observed baseline rate when a stored result of the same suite gave one, else at the
  least favourable baseline rate;
- the suite: the smallest n per arm at which :func:`~.power.suite_power` (the sign test over
  the comparisons, at alpha: it is one test, not adjusted) reaches the power, each case at
  its observed rate or, without one, at the least favourable common rate of a grid;
- the pi runs: every group runs both variants n times (``--skill-eval-trials`` is one setting);
- tokens and cost: the stored result's usage per pi run of each model, times the planned runs
  of the groups using that model; "unavailable" where that result has no figure.

The caller (``commands/plan.py``) reads the definitions and the stored result; this module
takes their counts and returns the plan and its text.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from pytest_skill_eval.decision.multiplicity import ADJUSTMENTS, Adjustment
from pytest_skill_eval.decision.power import (
    CaseCounts,
    TrialPlan,
    check_effect,
    check_level,
    sign_test_critical,
    suite_power,
    trials_for_power,
)

__all__ = ["DEFAULT_ALPHA", "DEFAULT_EFFECT", "DEFAULT_POWER", "ComparisonInput", "ComparisonPlan", "ModelUsage",
           "Plan", "PlanRequest", "SuitePlan", "comparison_level", "make_plan", "minimum_cases", "render_plan",
           "suite_rates"]

DEFAULT_EFFECT = 0.2
DEFAULT_POWER = 0.8
DEFAULT_ALPHA = 0.05
#: the most trials per arm a plan searches
MAX_TRIALS = 2000
#: the most trials per arm the suite's plan searches (each n costs a pass over every case)
MAX_SUITE_TRIALS = 300


def comparison_level(alpha: float, comparisons: int, adjustment: Adjustment) -> float:
    """The level a comparison is planned at: the strictest the adjustment can ask of it.

    ``holm`` and ``bh`` compare the smallest of m p-values with alpha/m (their first step),
    the level the decision core computes a comparison's power at; ``none`` leaves alpha.
    """
    check_level("alpha", alpha)
    if adjustment not in ADJUSTMENTS:
        raise ValueError(f"adjustment: expected one of {', '.join(ADJUSTMENTS)}, found {adjustment!r}")
    return alpha / comparisons if adjustment != "none" and comparisons > 1 else alpha


def minimum_cases(alpha: float) -> int:
    """The fewest non-tied cases with which the two-sided sign test can reject at *alpha*."""
    check_level("alpha", alpha)
    n = 1
    while sign_test_critical(n, alpha) < 0:
        n += 1
    return n


def suite_rates(effect: float) -> tuple[float, ...]:
    """The common baseline rates searched for the suite's least favourable one: every 0.05 and (1 ± D)/2."""
    return tuple(sorted({round(i / 20, 2) for i in range(21)} | {(1 - effect) / 2, (1 + effect) / 2}))


@dataclass(frozen=True, slots=True)
class ComparisonInput:
    """One comparison to plan; the baseline counts come from the stored result (None: none usable, *note* says why)."""

    group_id: str
    comparison_id: str
    baseline_passes: int | None = None
    baseline_graded: int | None = None
    note: str = ""

    @property
    def baseline_rate(self) -> float | None:
        if self.baseline_passes is None or not self.baseline_graded:
            return None
        return self.baseline_passes / self.baseline_graded


@dataclass(frozen=True, slots=True)
class ModelUsage:
    """What the stored result spent per model: pi runs, and the tokens and cost they reported (None: unavailable)."""

    model: str
    runs: int
    tokens: int | None
    cost: float | None
    #: some message of these runs did not report tokens / cost: the figure is a lower bound
    tokens_partial: bool = False
    cost_partial: bool = False


@dataclass(frozen=True, slots=True)
class PlanRequest:
    """What to plan: the settings, every group (id, model) and comparison, and the stored result's usage."""

    effect: float
    power: float
    alpha: float
    adjustment: Adjustment
    groups: tuple[tuple[str, str], ...]
    comparisons: tuple[ComparisonInput, ...]
    #: ``result <id> (<why it is of the same suite>)``, or None: no stored result was used
    result: str | None = None
    #: why no stored result was used, when none was
    no_result: str = "no stored result of this suite"
    usage: tuple[ModelUsage, ...] = ()


@dataclass(frozen=True, slots=True)
class ComparisonPlan:
    comparison: ComparisonInput
    plan: TrialPlan | None
    problem: str | None = None


@dataclass(frozen=True, slots=True)
class SuitePlan:
    """The suite's sign test: trials per arm (None: unreachable, *problem* says why), its power, the rate used."""

    trials: int | None
    power: float | None
    least_favourable_rate: float | None
    problem: str | None = None


@dataclass(frozen=True, slots=True)
class Plan:
    request: PlanRequest
    level: float
    comparisons: tuple[ComparisonPlan, ...]
    suite: SuitePlan


@lru_cache(maxsize=256)
def _trials(effect: float, power: float, level: float, rate: float | None) -> TrialPlan | str:
    try:
        return trials_for_power(effect, power=power, alpha=level, baseline_rate=rate, max_trials=MAX_TRIALS)
    except ValueError as exc:
        return str(exc)


def plan_suite(rates: Sequence[float | None], effect: float, power: float, alpha: float,
               max_trials: int = MAX_SUITE_TRIALS) -> SuitePlan:
    """The smallest n per arm at which the suite's sign test reaches *power* (first n, as for a comparison).

    A case with an observed rate keeps it (rounded to a whole number of passes at n); the
    others share one common rate, the least favourable of :func:`suite_rates` at that n.
    """
    check_effect(effect)
    check_level("power", power)
    needed = minimum_cases(alpha)
    if len(rates) < needed:
        return SuitePlan(None, None, None, f"the sign test over {len(rates)} comparison(s) can never reject at "
                                           f"alpha {alpha:g}: it needs at least {needed}, whatever the trials")
    free = any(r is None for r in rates)
    grid = suite_rates(effect) if free else (0.0,)
    probe = (1 - effect) / 2

    def power_at(n: int, common: float) -> float:
        cases = [CaseCounts(n, n, round((common if r is None else r) * n)) for r in rates]
        return suite_power(cases, effect, alpha)

    for n in range(1, max_trials + 1):
        if power_at(n, probe) < power:
            continue
        worst_rate, worst = min(((p, power_at(n, p)) for p in grid), key=lambda pair: pair[1])
        if worst >= power:
            return SuitePlan(n, worst, worst_rate if free else None)
    return SuitePlan(None, None, None, f"no number of trials up to {max_trials} per arm reaches power {power:g}")


def make_plan(request: PlanRequest) -> Plan:
    """The plan of *request*: every comparison's trials per arm and the suite's."""
    check_effect(request.effect)
    check_level("power", request.power)
    level = comparison_level(request.alpha, len(request.comparisons), request.adjustment)
    planned = []
    for comparison in request.comparisons:
        found = _trials(request.effect, request.power, level, comparison.baseline_rate)
        planned.append(ComparisonPlan(comparison, None, found) if isinstance(found, str)
                       else ComparisonPlan(comparison, found))
    suite = plan_suite([c.baseline_rate for c in request.comparisons], request.effect, request.power, request.alpha)
    return Plan(request, level, tuple(planned), suite)


# ------------------------------------------------------------------------------- showing


def _rate(comparison: ComparisonInput, plan: TrialPlan | None) -> str:
    if comparison.baseline_rate is not None:
        return f"{comparison.baseline_rate:.2f} ({comparison.baseline_passes}/{comparison.baseline_graded} stored)"
    at = f" ({plan.baseline_rate:.2f})" if plan is not None else ""
    return f"least favourable{at}"


def _cost_lines(plan: Plan, trials: int) -> list[str]:
    """Expected tokens and cost at *trials* per arm, per model and in total."""
    request = plan.request
    if request.result is None:
        return [f"    tokens and cost: unavailable ({request.no_result})"]
    by_model = {u.model: u for u in request.usage}
    runs: dict[str, int] = {}
    for _group, model in request.groups:
        runs[model] = runs.get(model, 0) + 2 * trials
    lines = []
    tokens_total: float | None = 0.0
    cost_total: float | None = 0.0
    for model, count in sorted(runs.items()):
        used = by_model.get(model)
        if used is None or used.runs == 0:
            lines.append(f"    {model}: {count} pi run(s): tokens unavailable, cost unavailable "
                         "(the stored result has no pi run of this model)")
            tokens_total = cost_total = None
            continue
        tokens = None if used.tokens is None else used.tokens / used.runs * count
        cost = None if used.cost is None else used.cost / used.runs * count
        tokens_total = None if tokens is None or tokens_total is None else tokens_total + tokens
        cost_total = None if cost is None or cost_total is None else cost_total + cost
        tokens_shown = "unavailable" if tokens is None else f"{round(tokens)}{' or more' if used.tokens_partial else ''}"
        cost_shown = "unavailable" if cost is None else f"${cost:.4f}{' or more' if used.cost_partial else ''}"
        per_run = "" if used.tokens is None else f", {used.tokens / used.runs:.0f} per run over {used.runs} stored"
        lines.append(f"    {model}: {count} pi run(s): tokens {tokens_shown}{per_run}; cost {cost_shown}"
                     + ("" if used.cost is not None else " (no pricing: pi reported no cost)"))
    lines.append(f"    total: tokens {'unavailable' if tokens_total is None else round(tokens_total)}, "
                 f"cost {'unavailable' if cost_total is None else f'${cost_total:.4f}'}")
    return lines


def _runs_line(plan: Plan, label: str, trials: int) -> list[str]:
    groups = len(plan.request.groups)
    return [f"  {label}: --skill-eval-trials {trials}: {groups} group(s) × 2 variant(s) × {trials} trial(s) = "
            f"{groups * 2 * trials} pi run(s)", *_cost_lines(plan, trials)]


def render_plan(plan: Plan, target: str) -> str:
    """The plan as ``skill-eval plan`` prints it (and ``skill-eval check``'s section)."""
    request = plan.request
    m = len(request.comparisons)
    lines = [f"plan {target}: detect a pass-rate difference of {request.effect:g} with power {request.power:g} "
             f"at alpha {request.alpha:g} (exact power, Fisher's test per comparison, the sign test for the suite)"]
    if request.adjustment == "none" or m <= 1:
        lines.append(f"  level: each comparison at alpha {plan.level:g} ({request.adjustment}, {m} comparison(s))")
    else:
        lines.append(f"  level: each comparison at alpha/{m} = {plan.level:.4g} ({request.adjustment} over {m} "
                     "comparisons: the first step's level); the suite test at alpha (one test)")
    if request.result is not None:
        lines.append(f"  baseline rates: observed in stored {request.result}")
    else:
        lines.append(f"  baseline rates: {request.no_result}: the least favourable baseline rate is assumed")
    if not request.comparisons:
        lines.append("  no comparisons: nothing to decide (a comparison pairs a baseline and a candidate check)")
        return "\n".join(lines) + "\n"
    rows = [("comparison", "baseline rate", "trials per arm", "power", "pi runs")]
    for item in plan.comparisons:
        c = item.comparison
        name = f"{c.group_id} {c.comparison_id}"
        if item.plan is None:
            rows.append((name, _rate(c, None), "unreachable", "-", "-"))
        else:
            rows.append((name, _rate(c, item.plan), str(item.plan.trials), f"{item.plan.power:.2f}",
                         str(2 * item.plan.trials)))
    suite = plan.suite
    suite_rate = "observed" if suite.least_favourable_rate is None else f"least favourable ({suite.least_favourable_rate:.2f})"
    groups = len(request.groups)
    rows.append((f"suite (sign test over {m})", suite_rate if suite.trials is not None else "-",
                 str(suite.trials) if suite.trials is not None else "unreachable",
                 f"{suite.power:.2f}" if suite.power is not None else "-",
                 str(groups * 2 * suite.trials) if suite.trials is not None else "-"))
    widths = [max(len(r[i]) for r in rows) for i in range(5)]
    lines.append("")
    for row in rows:
        lines.append("  " + "  ".join(cell.ljust(widths[i]) if i < 2 else cell.rjust(widths[i])
                                      for i, cell in enumerate(row)).rstrip())
    notes = [f"  {c.comparison.group_id} {c.comparison.comparison_id}: {c.comparison.note}"
             for c in plan.comparisons if c.comparison.note]
    notes += [f"  {c.comparison.group_id} {c.comparison.comparison_id}: {c.problem}"
              for c in plan.comparisons if c.problem]
    if suite.problem:
        notes.append(f"  suite: {suite.problem}")
    if notes:
        lines += ["", *notes]
    lines.append("")
    reached = [c.plan.trials for c in plan.comparisons if c.plan is not None]
    if reached:
        lines += _runs_line(plan, "every comparison", max(reached))
    if suite.trials is not None:
        lines += _runs_line(plan, "the suite decision", suite.trials)
    return "\n".join(lines) + "\n"
