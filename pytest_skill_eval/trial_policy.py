"""How a verdict over several trials reads its aggregate (pure).

A group run with ``--skill-eval-trials N`` (N > 1) is judged by the same
:class:`~pytest_skill_eval.policy.Verdict` as a single run, over ``group.json`` and
``aggregate.json``; this module holds what differs, the rules and words over rates:

- The item is an **error** when a selected variant completed in no trial (nothing to judge),
  when a trial was cancelled, or when the aggregate is a ``grade-error`` (a check no trial
  could answer, or a group-level grading problem). Trials whose run was not ``complete``
  and single grade errors are counted and shown, never failures.
- ``--skill-eval-fail-on candidate`` (default): a candidate expectation whose pass rate is
  below ``--skill-eval-pass-rate`` (default 1.0) fails the item; ``regression``: a
  comparison decided ``worse``: the candidate's rate lower, Fisher's exact p-value adjusted
  over the run's comparisons (``--skill-eval-adjust``, Holm by default) at most
  ``--skill-eval-alpha`` (default 0.05), whatever the comparisons of groups not yet judged
  show (:func:`~pytest_skill_eval.decision_cases.comparison_bound`); ``any``: any expectation
  below the pass rate; ``never``: nothing.
- Each comparison's decision (better, worse, no detectable difference, underpowered,
  indecisive) is in the status words; with ``--skill-eval-require-power`` an underpowered
  or indecisive comparison makes the item an error.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Protocol

from pytest_skill_eval.decision import ComparisonDecision, DecisionRules
from pytest_skill_eval.evidence.stop_records import StoppingRecord, stopping_text
from pytest_skill_eval.grading.aggregate import ComparisonRate, ExpectationRate, TrialGrade
from pytest_skill_eval.policy_terms import (
    ERROR_RUN_STATES,
    Entry,
    EntryOutcome,
    FailOn,
    VariantState,
    count_words,
    one_line,
)
from pytest_skill_eval.usage import VariantUsage, usage_lines


def percent(rate: float) -> str:
    return f"{rate * 100:.0f} %"


def rate_text(e: ExpectationRate) -> str:
    """``7/10 (70 %, 95 % CI 40-89 %)``, and what was not graded."""
    if not e.graded:
        text = "unavailable (graded in no trial)"
    else:
        interval = e.interval
        assert interval is not None
        text = f"{e.passes}/{e.graded} ({percent(e.passes / e.graded)}, 95 % CI {interval.low * 100:.0f}-{interval.high * 100:.0f} %)"
    extra = [f"{e.not_graded} not graded"] if e.not_graded else []
    extra += [f"{e.grade_errors} grade-error"] if e.grade_errors else []
    extra += ["flaky"] if e.flaky else []
    return text + (f" [{', '.join(extra)}]" if extra else "")


def comparison_text(c: ComparisonRate) -> str:
    flags = " [saturated]" if c.saturated else ""
    return f"{c.transition}{flags}"


class RatedVerdict(Protocol):
    """What these rules and words read of a :class:`~pytest_skill_eval.policy.Verdict`."""

    @property
    def result_id(self) -> str: ...
    @property
    def group_id(self) -> str: ...
    @property
    def group_dir(self) -> str: ...
    @property
    def grade_state(self) -> str: ...
    @property
    def fail_on(self) -> FailOn: ...
    @property
    def pass_rate(self) -> float: ...
    @property
    def alpha(self) -> float: ...
    @property
    def variants(self) -> tuple[VariantState, ...]: ...
    @property
    def usage(self) -> VariantUsage | None: ...
    @property
    def decisions(self) -> Mapping[str, ComparisonDecision]: ...
    @property
    def rules(self) -> DecisionRules | None: ...
    @property
    def require_power(self) -> bool: ...
    @property
    def stopping(self) -> StoppingRecord | None: ...
    @property
    def unsettled(self) -> tuple[ComparisonDecision, ...]: ...
    @property
    def failing(self) -> tuple[object, ...]: ...
    def words(self) -> str: ...


# -- policy --------------------------------------------------------------------
def expectation_fails(e: ExpectationRate, fail_on: FailOn, pass_rate: float) -> bool:
    if e.rate is None or fail_on in ("never", "regression"):
        return False
    if fail_on == "candidate" and e.variant != "candidate":
        return False
    return e.rate < pass_rate


def comparison_fails(v: RatedVerdict, c: ComparisonRate) -> bool:
    if v.fail_on != "regression":
        return False
    sequential = v.stopping.sequential_decision(c.id) if v.stopping is not None else None
    if sequential is not None:
        # under the sequential design a comparison is judged by its boundaries, not by a fixed-N test
        return sequential == "worse"
    decided = v.decisions.get(c.id)
    if decided is not None:
        return decided.decision == "worse"
    p = c.p_value
    return bool(c.regressed) and p is not None and p < v.alpha


# -- words ---------------------------------------------------------------------
def trials_text(v: RatedVerdict, a: TrialGrade) -> str:
    """``10 trials``, ``4 of 10 trials, stopped by curtail``, then runs lost and the decisions."""
    if v.stopping is not None and v.stopping.stopped:
        text = f"{a.ran} of {a.planned} trials, stopped by {v.stopping.mode}"
    else:
        text = f"{a.ran} trials" if a.ran == a.planned else f"{a.ran} of {a.planned} trials"
    # runs lost to the provider (or invalid): the variant is still complete, so say it here
    lost = sum(n for states in a.runs.values() for state, n in states.items()
               if state not in ("complete", "not-selected"))
    if lost:
        text += f"; {lost} run{'s' if lost != 1 else ''} lost"
    decided = count_words(d.decision for d in v.decisions.values())
    return f"{text}; {decided}" if decided else text


def decision_line(v: RatedVerdict, c: ComparisonRate) -> str | None:
    decided = v.decisions.get(c.id)
    return decided.line(v.rules) if decided is not None and v.rules is not None else None


def variant_trials(a: TrialGrade, name: str) -> str:
    """``3 complete, 1 invalid``: the states one variant's trials ended in."""
    return ", ".join(f"{n} {state}" for state, n in a.runs.get(name, {}).items())


def stopping_properties(v: RatedVerdict) -> list[tuple[str, str]]:
    return [("skill_eval.stopping", stopping_text(v.stopping))] if v.stopping is not None else []


def properties(v: RatedVerdict, a: TrialGrade) -> list[tuple[str, str]]:
    """The item properties of the rates: each expectation's, each comparison's, its p-value and decision."""
    props = [(f"skill_eval.expectation.{e.id}", f"{e.variant} {rate_text(e)}") for e in a.expectations]
    for c in a.comparisons:
        props.append((f"skill_eval.comparison.{c.id}", comparison_text(c)))
        if c.p_value is not None:
            props.append((f"skill_eval.comparison.{c.id}.p_value", f"{c.p_value:.4g}"))
        line = decision_line(v, c)
        if line is not None:
            props.append((f"skill_eval.comparison.{c.id}.decision", line))
    return props


def summary_comparisons(v: RatedVerdict, a: TrialGrade) -> str:
    """The comparisons column of the summary table: each comparison's transition and flags, and the stopping."""
    comparisons = ", ".join(f"{c.id}: {comparison_text(c)}" for c in a.comparisons) or "-"
    return comparisons + (f"; {stopping_text(v.stopping)}" if v.stopping is not None else "")


def detail_lines(v: RatedVerdict, a: TrialGrade, indent: str = "  ", *, reasons: bool = True) -> list[str]:
    lines = [f"{indent}trials     {a.ran} of {a.planned} ran"]
    if v.stopping is not None:
        lines.append(f"{indent}stopping   {one_line(stopping_text(v.stopping))}")
    for s in v.variants:
        reason = f" ({one_line(s.reason)})" if reasons and s.reason and s.state != "not-selected" else ""
        lines.append(f"{indent}{s.name:<10} {s.state}{reason} [{variant_trials(a, s.name)}]")
    for e in a.expectations:
        lines.append(f"{indent}{e.variant:<10} {rate_text(e)} {e.id} ({e.kind})")
    for c in a.comparisons:
        line = decision_line(v, c)
        lines.append(f"{indent}comparison {c.id}: {comparison_text(c)}" + (f"; {line}" if line else ""))
    if v.usage is not None:
        lines += usage_lines(v.usage, indent)
    return lines


def headline(v: RatedVerdict) -> str:
    parts = []
    # the candidate's checks before a baseline's (docs/usage.md, "A failure"), as for a single run
    for item in sorted(v.failing, key=lambda item: isinstance(item, ExpectationRate) and item.variant != "candidate"):
        if isinstance(item, ComparisonRate) and v.stopping is not None and v.stopping.sequential_decision(item.id):
            parts.append(f"comparison {item.id}: {item.transition} (candidate worse by the sequential design)")
        elif isinstance(item, ComparisonRate):
            line = decision_line(v, item)
            parts.append(f"comparison {item.id}: {line}" if line else
                         f"comparison {item.id}: {item.transition} (p < {v.alpha:g})")
        elif isinstance(item, ExpectationRate):
            parts.append(f"{'' if item.variant == 'candidate' else item.variant + ' '}{item.id} ({item.kind}): "
                         f"passed {item.counts()}, below {percent(v.pass_rate)}")
    return one_line("failed " + "; ".join(parts) if parts else f"group {v.group_id}: {v.words()}")


def failure_text(v: RatedVerdict, a: TrialGrade) -> str:
    policy = (f"--skill-eval-fail-on={v.fail_on}, --skill-eval-pass-rate={v.pass_rate:g}, "
              f"--skill-eval-alpha={v.alpha:g}")
    return "\n".join([headline(v), f"group {v.group_id}: {v.words()} ({policy})",
                      f"  evidence: {v.group_dir}", *detail_lines(v, a)])


def error_text(v: RatedVerdict, a: TrialGrade) -> str:
    lines = [f"group {v.group_id}: {v.words()}"]
    for s in v.variants:
        if s.state in ERROR_RUN_STATES:
            lines.append(f"  {s.name}: {s.state}: {one_line(s.reason or 'no reason recorded')}")
    for e in a.expectations:
        if e.graded == 0 and e.grade_errors:
            lines.append(f"  grade-error ({e.id}): no trial could answer it; see trials/*/grade.json")
    for err in a.errors:
        owner = f" {err.owner}" if err.owner else ""
        lines.append(f"  grade-error ({err.scope}{one_line(owner)}): {one_line(err.message)}")
    if v.require_power and v.rules is not None:
        unsettled = v.unsettled
        for c in a.comparisons:
            d = v.decisions.get(c.id)
            if d is not None and d in unsettled:  # named by its own id (a stored one may hold a slash)
                lines.append(f"  comparison {c.id}: {d.line(v.rules)} (an error under --skill-eval-require-power)")
    lines += [f"  evidence: {v.group_dir}", *detail_lines(v, a, reasons=False)]
    return "\n".join(lines)


def entries(v: RatedVerdict, a: TrialGrade) -> tuple[Entry, ...]:
    base: tuple[tuple[str, str], ...] = (("skill_eval.result_id", v.result_id), ("skill_eval.group", v.group_id))
    found: list[Entry] = []
    for s in v.variants:
        props = base + (("skill_eval.state", s.state), ("skill_eval.evidence", v.group_dir))
        outcome: EntryOutcome = ("error" if s.state in ERROR_RUN_STATES else
                                 "skipped" if s.state == "not-selected" else "passed")
        found.append(Entry(f"variant:{s.name}", outcome, s.state,
                           f"{s.name} {s.state}" + (f": {one_line(s.reason)}" if s.reason else ""), props))
    for e in a.expectations:
        props = base + (("skill_eval.variant", e.variant), ("skill_eval.kind", e.kind),
                        ("skill_eval.rate", e.counts()))
        message = f"[{e.variant}] {e.id} ({e.kind}): {rate_text(e)}"
        if expectation_fails(e, v.fail_on, v.pass_rate):
            found.append(Entry(f"expectation:{e.id}", "failed", e.counts(), message, props))
        elif e.graded == 0:
            found.append(Entry(f"expectation:{e.id}", "error" if e.grade_errors else "skipped", "unavailable",
                               message, props))
        else:
            found.append(Entry(f"expectation:{e.id}", "passed", e.counts(), message, props))
    for c in a.comparisons:
        props = base + (("skill_eval.transition", c.transition),
                        ("skill_eval.p_value", "" if c.p_value is None else f"{c.p_value:.4g}"))
        line = decision_line(v, c)
        if line is not None:
            props += (("skill_eval.decision", line),)
        message = f"comparison {c.id}: {comparison_text(c)}" + (f"; {line}" if line else "")
        unsettled = v.require_power and v.decisions.get(c.id) in v.unsettled
        outcome = ("failed" if comparison_fails(v, c) else "error" if unsettled else
                   "skipped" if c.transition == "not-comparable" else "passed")
        found.append(Entry(f"comparison:{c.id}", outcome, c.transition, message, props))
    grade_props = base + (("skill_eval.grade_state", v.grade_state), ("skill_eval.evidence", v.group_dir))
    if a.state == "grade-error":
        found.append(Entry("grade", "error", "grade-error", error_text(v, a), grade_props))
    else:
        found.append(Entry("grade", "passed", v.grade_state, f"graded: {v.group_dir}/aggregate.json", grade_props))
    return tuple(found)
