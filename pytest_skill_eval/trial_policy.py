"""The outcome policy of a group run with several trials (pure).

A :class:`TrialVerdict` is built from ``group.json`` and ``aggregate.json`` alone, as a
:class:`~pytest_skill_eval.policy.Verdict` is for a single run, and answers the same
questions (:class:`~pytest_skill_eval.policy.Judgement`).

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
from dataclasses import dataclass, field

from pytest_skill_eval.decision import ComparisonDecision, DecisionRules
from pytest_skill_eval.evidence.stop_records import StoppingRecord, stopping_text
from pytest_skill_eval.grading.aggregate import ComparisonRate, ExpectationRate, TrialGrade
from pytest_skill_eval.policy import (
    ERROR_RUN_STATES,
    STATUS_PROPERTY,
    Entry,
    EntryOutcome,
    FailOn,
    VariantState,
    count_words,
    one_line,
)
from pytest_skill_eval.usage import VariantUsage, usage_lines, usage_properties


def percent(rate: float | None) -> str:
    return "unavailable" if rate is None else f"{rate * 100:.0f} %"


def rate_text(e: ExpectationRate) -> str:
    """``7/10 (70 %, 95 % CI 40-89 %)``, and what was not graded."""
    if not e.graded:
        text = "unavailable (graded in no trial)"
    else:
        interval = e.interval
        assert interval is not None
        text = f"{e.passes}/{e.graded} ({percent(e.rate)}, 95 % CI {interval.low * 100:.0f}-{interval.high * 100:.0f} %)"
    extra = [f"{e.not_graded} not graded"] if e.not_graded else []
    extra += [f"{e.grade_errors} grade-error"] if e.grade_errors else []
    extra += ["flaky"] if e.flaky else []
    return text + (f" [{', '.join(extra)}]" if extra else "")


def comparison_text(c: ComparisonRate) -> str:
    flags = " [saturated]" if c.saturated else ""
    return f"{c.transition}{flags}"


@dataclass(frozen=True, slots=True)
class TrialVerdict:
    """Everything the pytest layer says about one group graded over several trials."""

    result_id: str
    group_id: str
    position: int
    group_state: str
    group_dir: str
    fail_on: FailOn
    pass_rate: float
    alpha: float
    variants: tuple[VariantState, ...]
    aggregate: TrialGrade
    #: the group's tokens and cost over every trial (``group.json``)
    usage: VariantUsage | None = None
    #: each comparison's decision by comparison id (``decision_cases.decided``); without them the
    #: regression policy falls back to Fisher's unadjusted p-value below alpha
    decisions: Mapping[str, ComparisonDecision] = field(default_factory=dict)
    rules: DecisionRules | None = None
    #: ``--skill-eval-require-power``: an underpowered or indecisive comparison is an error
    require_power: bool = False
    #: what ``--skill-eval-stop`` looked at and why the trials ended (``stopping.json``), if a rule was in force
    stopping: StoppingRecord | None = None

    # -- policy ----------------------------------------------------------------
    @property
    def grade_state(self) -> str:
        return self.aggregate.state

    @property
    def unsettled(self) -> tuple[ComparisonDecision, ...]:
        """The comparisons decided underpowered or indecisive."""
        return tuple(d for d in self.decisions.values() if d.decision in ("underpowered", "indecisive"))

    @property
    def error(self) -> bool:
        return (any(v.state in ERROR_RUN_STATES for v in self.variants) or self.aggregate.state == "grade-error"
                or (self.require_power and bool(self.unsettled)))

    def decision_line(self, c: ComparisonRate) -> str | None:
        decided = self.decisions.get(c.id)
        return decided.line(self.rules) if decided is not None and self.rules is not None else None

    def decision_words(self) -> str:
        return count_words(d.decision for d in self.decisions.values())

    def expectation_fails_item(self, e: ExpectationRate) -> bool:
        if e.rate is None or self.fail_on in ("never", "regression"):
            return False
        if self.fail_on == "candidate" and e.variant != "candidate":
            return False
        return e.rate < self.pass_rate

    def comparison_fails_item(self, c: ComparisonRate) -> bool:
        if self.fail_on != "regression":
            return False
        sequential = self.stopping.sequential_decision(c.id) if self.stopping is not None else None
        if sequential is not None:
            # under the sequential design a comparison is judged by its boundaries, not by a fixed-N test
            return sequential == "worse"
        decided = self.decisions.get(c.id)
        if decided is not None:
            return decided.decision == "worse"
        p = c.p_value
        return bool(c.regressed) and p is not None and p < self.alpha

    @property
    def failing(self) -> tuple[ExpectationRate | ComparisonRate, ...]:
        return tuple(c for c in self.aggregate.comparisons if self.comparison_fails_item(c)) + tuple(
            e for e in self.aggregate.expectations if self.expectation_fails_item(e))

    @property
    def outcome(self) -> str:
        if self.error:
            return "error"
        return "failed" if self.failing else "passed"

    # -- words -----------------------------------------------------------------
    def trials_text(self) -> str:
        a = self.aggregate
        if self.stopping is not None and self.stopping.stopped:
            text = f"{a.ran} of {a.planned} trials, stopped by {self.stopping.mode}"
        else:
            text = f"{a.ran} trials" if a.ran == a.planned else f"{a.ran} of {a.planned} trials"
        # runs lost to the provider (or invalid): the variant is still complete, so say it here
        lost = sum(n for states in a.runs.values() for state, n in states.items()
                   if state not in ("complete", "not-selected"))
        if lost:
            text += f"; {lost} run{'s' if lost != 1 else ''} lost"
        decided = self.decision_words()
        return f"{text}; {decided}" if decided else text

    def words(self) -> str:
        if self.error:
            problems = [v.state for v in self.variants if v.state in ERROR_RUN_STATES]
            if self.aggregate.state == "grade-error":
                problems.append("grade-error")
            if self.require_power:
                problems += [d.decision for d in self.unsettled]
            return ", ".join(dict.fromkeys(problems)) + f" ({self.trials_text()})"
        not_selected = [v.name for v in self.variants if v.state == "not-selected"]
        if self.aggregate.comparisons and not not_selected:
            return f"{count_words(c.transition for c in self.aggregate.comparisons)} ({self.trials_text()})"
        parts = []
        for v in self.variants:
            if v.state == "not-selected":
                parts.append(f"{v.name} not-selected")
                continue
            mine = [e for e in self.aggregate.expectations if e.variant == v.name and e.graded]
            if mine:
                parts.append(f"{v.name} {sum(e.passes for e in mine)}/{sum(e.graded for e in mine)} pass")
        return ", ".join(parts or [self.group_state]) + f" ({self.trials_text()})"

    def summary_row(self) -> tuple[str, str, str, str]:
        states = {v.name: v.state for v in self.variants}
        comparisons = ", ".join(f"{c.id}: {comparison_text(c)}" for c in self.aggregate.comparisons) or "-"
        if self.stopping is not None:
            comparisons += f"; {stopping_text(self.stopping)}"
        return str(self.position), states.get("baseline", "-"), states.get("candidate", "-"), comparisons

    def transitions(self) -> list[str]:
        return [c.transition for c in self.aggregate.comparisons]

    # -- reports ---------------------------------------------------------------
    def properties(self) -> list[tuple[str, str]]:
        a = self.aggregate
        props = [
            (STATUS_PROPERTY, self.words()),
            ("skill_eval.result_id", self.result_id),
            ("skill_eval.position", str(self.position)),
            ("skill_eval.fail_on", self.fail_on),
            ("skill_eval.pass_rate", f"{self.pass_rate:g}"),
            ("skill_eval.alpha", f"{self.alpha:g}"),
            ("skill_eval.trials", f"{a.ran}/{a.planned}"),
            *((("skill_eval.stopping", stopping_text(self.stopping)),) if self.stopping is not None else ()),
            ("skill_eval.group_state", self.group_state),
            ("skill_eval.grade_state", self.grade_state),
            ("skill_eval.evidence", self.group_dir),
        ]
        for v in self.variants:
            props.append((f"skill_eval.variant.{v.name}", v.state))
            props.append((f"skill_eval.variant.{v.name}.trials", ", ".join(
                f"{n} {state}" for state, n in a.runs.get(v.name, {}).items())))
        props += [(f"skill_eval.expectation.{e.id}", f"{e.variant} {rate_text(e)}") for e in a.expectations]
        for c in a.comparisons:
            props.append((f"skill_eval.comparison.{c.id}", comparison_text(c)))
            if c.p_value is not None:
                props.append((f"skill_eval.comparison.{c.id}.p_value", f"{c.p_value:.4g}"))
            line = self.decision_line(c)
            if line is not None:
                props.append((f"skill_eval.comparison.{c.id}.decision", line))
        if self.usage is not None:
            props += usage_properties(self.usage)
        return props

    def detail_lines(self, indent: str = "  ", *, reasons: bool = True) -> list[str]:
        a = self.aggregate
        lines = [f"{indent}trials     {a.ran} of {a.planned} ran"]
        if self.stopping is not None:
            lines.append(f"{indent}stopping   {one_line(stopping_text(self.stopping))}")
        for v in self.variants:
            reason = f" ({one_line(v.reason)})" if reasons and v.reason and v.state != "not-selected" else ""
            counts = ", ".join(f"{n} {state}" for state, n in a.runs.get(v.name, {}).items())
            lines.append(f"{indent}{v.name:<10} {v.state}{reason} [{counts}]")
        for e in a.expectations:
            lines.append(f"{indent}{e.variant:<10} {rate_text(e)} {e.id} ({e.kind})")
        for c in a.comparisons:
            line = self.decision_line(c)
            lines.append(f"{indent}comparison {c.id}: {comparison_text(c)}" + (f"; {line}" if line else ""))
        if self.usage is not None:
            lines += usage_lines(self.usage, indent)
        return lines

    def headline(self) -> str:
        parts = []
        for item in self.failing:
            if isinstance(item, ComparisonRate) and self.stopping is not None and self.stopping.sequential_decision(item.id):
                parts.append(f"comparison {item.id}: {item.transition} (candidate worse by the sequential design)")
            elif isinstance(item, ComparisonRate):
                line = self.decision_line(item)
                parts.append(f"comparison {item.id}: {line}" if line else
                             f"comparison {item.id}: {item.transition} (p < {self.alpha:g})")
            else:
                parts.append(f"{'' if item.variant == 'candidate' else item.variant + ' '}{item.id} ({item.kind}): "
                             f"passed {item.counts()}, below {percent(self.pass_rate)}")
        return one_line("failed " + "; ".join(parts) if parts else f"group {self.group_id}: {self.words()}")

    def failure_text(self) -> str:
        policy = (f"--skill-eval-fail-on={self.fail_on}, --skill-eval-pass-rate={self.pass_rate:g}, "
                  f"--skill-eval-alpha={self.alpha:g}")
        return "\n".join([self.headline(), f"group {self.group_id}: {self.words()} ({policy})",
                          f"  evidence: {self.group_dir}", *self.detail_lines()])

    def error_text(self) -> str:
        lines = [f"group {self.group_id}: {self.words()}"]
        for v in self.variants:
            if v.state in ERROR_RUN_STATES:
                lines.append(f"  {v.name}: {v.state}: {one_line(v.reason or 'no reason recorded')}")
        for e in self.aggregate.expectations:
            if e.graded == 0 and e.grade_errors:
                lines.append(f"  grade-error ({e.id}): no trial could answer it; see trials/*/grade.json")
        for err in self.aggregate.errors:
            owner = f" {err.owner}" if err.owner else ""
            lines.append(f"  grade-error ({err.scope}{one_line(owner)}): {one_line(err.message)}")
        if self.require_power and self.rules is not None:
            for d in self.unsettled:
                comparison = d.evidence.id.rpartition("/")[2]
                lines.append(f"  comparison {comparison}: {d.line(self.rules)} (an error under --skill-eval-require-power)")
        lines += [f"  evidence: {self.group_dir}", *self.detail_lines(reasons=False)]
        return "\n".join(lines)

    def entries(self) -> tuple[Entry, ...]:
        base: tuple[tuple[str, str], ...] = (("skill_eval.result_id", self.result_id), ("skill_eval.group", self.group_id))
        found: list[Entry] = []
        for v in self.variants:
            props = base + (("skill_eval.state", v.state), ("skill_eval.evidence", self.group_dir))
            outcome: EntryOutcome = ("error" if v.state in ERROR_RUN_STATES else
                                     "skipped" if v.state == "not-selected" else "passed")
            found.append(Entry(f"variant:{v.name}", outcome, v.state,
                               f"{v.name} {v.state}" + (f": {one_line(v.reason)}" if v.reason else ""), props))
        for e in self.aggregate.expectations:
            props = base + (("skill_eval.variant", e.variant), ("skill_eval.kind", e.kind),
                            ("skill_eval.rate", e.counts()))
            message = f"[{e.variant}] {e.id} ({e.kind}): {rate_text(e)}"
            if self.expectation_fails_item(e):
                found.append(Entry(f"expectation:{e.id}", "failed", e.counts(), message, props))
            elif e.graded == 0:
                found.append(Entry(f"expectation:{e.id}", "error" if e.grade_errors else "skipped", "unavailable",
                                   message, props))
            else:
                found.append(Entry(f"expectation:{e.id}", "passed", e.counts(), message, props))
        for c in self.aggregate.comparisons:
            props = base + (("skill_eval.transition", c.transition),
                            ("skill_eval.p_value", "" if c.p_value is None else f"{c.p_value:.4g}"))
            line = self.decision_line(c)
            if line is not None:
                props += (("skill_eval.decision", line),)
            message = f"comparison {c.id}: {comparison_text(c)}" + (f"; {line}" if line else "")
            unsettled = self.require_power and self.decisions.get(c.id) in self.unsettled
            outcome = ("failed" if self.comparison_fails_item(c) else "error" if unsettled else
                       "skipped" if c.transition == "not-comparable" else "passed")
            found.append(Entry(f"comparison:{c.id}", outcome, c.transition, message, props))
        grade_props = base + (("skill_eval.grade_state", self.grade_state), ("skill_eval.evidence", self.group_dir))
        if self.aggregate.state == "grade-error":
            found.append(Entry("grade", "error", "grade-error", self.error_text(), grade_props))
        else:
            found.append(Entry("grade", "passed", self.grade_state, f"graded: {self.group_dir}/aggregate.json", grade_props))
        return tuple(found)


def judge_trials(variants: tuple[VariantState, ...], aggregate: TrialGrade, *, group_id: str, position: int,
                 group_state: str, group_dir: str, fail_on: FailOn, pass_rate: float, alpha: float,
                 result_id: str, usage: VariantUsage | None = None,
                 stopping: StoppingRecord | None = None) -> TrialVerdict:
    return TrialVerdict(result_id, group_id, position, group_state, group_dir, fail_on, pass_rate, alpha, variants,
                        aggregate, usage, stopping=stopping)
