"""The outcome policy: how a group's persisted evidence becomes pytest outcomes (pure).

A :class:`Verdict` is built from a group's ``group.json`` and its grade document alone, so the
item (in whichever process ran it) and the xdist controller (which only sees reports)
judge the same evidence the same way. One verdict for N >= 1 trials: a single run is
judged over its ``grade.json`` by the rules below (the spec's transitions); several trials
over their ``aggregate.json`` by the rate rules of :mod:`.trial_policy` (imported only then:
pytest's start-up imports this module, and grading waits until a group runs).

- ``invalid``, ``infrastructure-failed`` and ``cancelled`` runs and any grade error make
  the item an **error**, never a pass;
- ``--skill-eval-fail-on`` decides which failed expectations fail the item:
  ``candidate`` (default) any selected candidate expectation, so every ``pass-to-fail``
  and ``fail-to-fail`` comparison; ``regression`` only ``pass-to-fail`` comparisons;
  ``any`` any expectation; ``never`` none (the seed CLI's contract);
- ``not-selected`` variants are reported, never failed.

Besides the item's outcome, a verdict yields one :class:`Entry` per variant, expectation,
comparison and grade: the details of the JUnit report. An entry fails only when it is one
of the reasons the item fails, so the XML never disagrees with the exit code.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from pytest_skill_eval.grading.results import ComparisonResult, ExpectationResult, GradeError, GroupGrade
from pytest_skill_eval.policy_terms import (
    DEFAULT_FAIL_ON,
    ERROR_RUN_STATES,
    FAIL_ON_CHOICES,
    FAILING_TRANSITIONS,
    STATUS_PROPERTY,
    Entry,
    EntryOutcome,
    FailOn,
    Outcome,
    VariantState,
    count_words,
    one_line,
    parse_fail_on,
    stand_in_notes,
)
from pytest_skill_eval.usage import VariantUsage, usage_lines, usage_properties

if TYPE_CHECKING:
    from pytest_skill_eval.decision import ComparisonDecision, DecisionRules
    from pytest_skill_eval.evidence.records import GroupRecord, InvalidGroupRecord
    from pytest_skill_eval.evidence.stop_records import StoppingRecord
    from pytest_skill_eval.grading.aggregate import ComparisonRate, ExpectationRate, TrialGrade

__all__ = [
    "DEFAULT_FAIL_ON", "ERROR_RUN_STATES", "FAILING_TRANSITIONS", "FAIL_ON_CHOICES", "STATUS_PROPERTY", "Entry",
    "EntryOutcome", "FailOn", "Judgement", "Outcome", "VariantState", "Verdict", "count_words", "judge",
    "judge_trials", "one_line", "parse_fail_on", "stand_in_notes",
]


@dataclass(frozen=True, slots=True)
class Verdict:
    """Everything the pytest layer says about one graded group, run once or over several trials
    (then *expectations*, *comparisons* and *grade_errors* are empty: *aggregate* holds the rates)."""

    result_id: str
    group_id: str
    position: int
    group_state: str
    grade_state: str
    group_dir: str
    fail_on: FailOn
    variants: tuple[VariantState, ...]
    expectations: tuple[ExpectationResult, ...]
    comparisons: tuple[ComparisonResult, ...]
    grade_errors: tuple[GradeError, ...]
    #: where a scripted stand-in ran out of script steps, ``(variant, turn, its reply)``; see :func:`stand_in_notes`
    notes: tuple[tuple[str, int, str], ...] = ()
    #: the group's tokens and cost (``group.json``); ``None`` for a group that recorded none
    usage: VariantUsage | None = None
    #: over several trials: what they say together; ``None`` for a single run
    aggregate: TrialGrade | None = None
    #: the rate rules' thresholds (``--skill-eval-pass-rate``, ``--skill-eval-alpha``), over trials
    pass_rate: float = 1.0
    alpha: float = 0.05
    #: over trials: each comparison's decision by id (``decision_cases.decided``); without them the
    #: regression policy falls back to Fisher's unadjusted p-value below alpha
    decisions: Mapping[str, ComparisonDecision] = field(default_factory=dict)
    rules: DecisionRules | None = None
    #: ``--skill-eval-require-power``: an underpowered or indecisive comparison is an error
    require_power: bool = False
    #: over trials: what ``--skill-eval-stop`` looked at and why the trials ended (``stopping.json``)
    stopping: StoppingRecord | None = None

    # -- policy ----------------------------------------------------------------
    @property
    def error(self) -> bool:
        bad_run = any(v.state in ERROR_RUN_STATES for v in self.variants)
        unsettled = self.require_power and bool(self.unsettled)
        return bad_run or bool(self.grade_errors) or self.grade_state == "grade-error" or unsettled

    @property
    def unsettled(self) -> tuple[ComparisonDecision, ...]:
        """The comparisons decided underpowered or indecisive (over trials: a single run has no decisions)."""
        return tuple(d for d in self.decisions.values() if d.decision in ("underpowered", "indecisive"))

    def expectation_fails_item(self, e: ExpectationResult | ExpectationRate) -> bool:
        if not isinstance(e, ExpectationResult):
            from pytest_skill_eval import trial_policy

            return trial_policy.expectation_fails(e, self.fail_on, self.pass_rate)
        if e.status != "fail":
            return False
        if self.fail_on == "any":
            return True
        if self.fail_on == "candidate":
            return e.variant == "candidate"
        if self.fail_on == "regression":
            return any(c.candidate == e.id and c.transition == "pass-to-fail" for c in self.comparisons)
        return False

    def comparison_fails_item(self, c: ComparisonResult | ComparisonRate) -> bool:
        if not isinstance(c, ComparisonResult):
            from pytest_skill_eval import trial_policy

            return trial_policy.comparison_fails(self, c)
        if self.fail_on in ("candidate", "any"):
            return c.transition in FAILING_TRANSITIONS
        if self.fail_on == "regression":
            return c.transition == "pass-to-fail"
        return False

    @property
    def failing(self) -> tuple[ExpectationResult | ComparisonResult | ExpectationRate | ComparisonRate, ...]:
        """The comparisons and expectations that fail the item under the policy."""
        comparisons, expectations = self._graded()
        return tuple(c for c in comparisons if self.comparison_fails_item(c)) + tuple(
            e for e in expectations if self.expectation_fails_item(e)
        )

    def _graded(self) -> tuple[Sequence[ComparisonResult | ComparisonRate], Sequence[ExpectationResult | ExpectationRate]]:
        """The comparisons and expectations judged: the grade's, or the aggregate's rates."""
        if self.aggregate is not None:
            return self.aggregate.comparisons, self.aggregate.expectations
        return self.comparisons, self.expectations

    @property
    def outcome(self) -> Outcome:
        if self.error:
            return "error"
        return "failed" if self.failing else "passed"

    # -- words -----------------------------------------------------------------
    def words(self) -> str:
        """What happened, for the status column: ``fail-to-pass``, ``invalid``, ``candidate 2/3 pass``;
        over several trials followed by how many ran: ``pass-to-pass (10 trials)``."""
        a = self.aggregate
        if a is not None:
            from pytest_skill_eval.trial_policy import trials_text
        suffix = "" if a is None else f" ({trials_text(self, a)})"
        if self.error:
            problems = [v.state for v in self.variants if v.state in ERROR_RUN_STATES]
            if self.grade_errors or self.grade_state == "grade-error":
                problems.append("grade-error")
            problems += [d.decision for d in self.unsettled] if self.require_power else []
            return ", ".join(dict.fromkeys(problems)) + suffix
        not_selected = [v.name for v in self.variants if v.state == "not-selected"]
        comparisons, expectations = self._graded()
        if comparisons and not not_selected:
            return count_words(c.transition for c in comparisons) + suffix
        parts = []
        for v in self.variants:
            if v.state == "not-selected":
                parts.append(f"{v.name} not-selected")
                continue
            passes, graded = _tally(e for e in expectations if e.variant == v.name)
            if graded:
                parts.append(f"{v.name} {passes}/{graded} pass")
        return (", ".join(parts) or self.group_state) + suffix

    def variant(self, name: str) -> VariantState | None:
        return next((v for v in self.variants if v.name == name), None)

    def summary_row(self) -> tuple[str, str, str, str]:
        """Position, baseline state, candidate state and comparisons, for the summary table."""
        states = {v.name: v.state for v in self.variants}
        comparisons = ", ".join(f"{c.id}: {c.transition}" for c in self.comparisons) or "-"
        if self.aggregate is not None:
            from pytest_skill_eval.trial_policy import summary_comparisons

            comparisons = summary_comparisons(self, self.aggregate)
        return str(self.position), states.get("baseline", "-"), states.get("candidate", "-"), comparisons

    def transitions(self) -> list[str]:
        return [c.transition for c in self._graded()[0]]

    # -- reports ---------------------------------------------------------------
    def properties(self) -> list[tuple[str, str]]:
        """Item properties (JUnit ``<property>``): states, every expectation and comparison, paths."""
        a = self.aggregate
        props = [
            (STATUS_PROPERTY, self.words()),
            ("skill_eval.result_id", self.result_id),
            ("skill_eval.position", str(self.position)),
            ("skill_eval.fail_on", self.fail_on),
        ]
        if a is not None:
            from pytest_skill_eval import trial_policy

            props += [("skill_eval.pass_rate", f"{self.pass_rate:g}"), ("skill_eval.alpha", f"{self.alpha:g}"),
                      ("skill_eval.trials", f"{a.ran}/{a.planned}"), *trial_policy.stopping_properties(self)]
        props += [
            ("skill_eval.group_state", self.group_state),
            ("skill_eval.grade_state", self.grade_state),
            ("skill_eval.evidence", self.group_dir),
        ]
        for v in self.variants:
            props.append((f"skill_eval.variant.{v.name}", v.state))
            props.append((f"skill_eval.variant.{v.name}.trials", trial_policy.variant_trials(a, v.name)) if a is not None
                         else (f"skill_eval.variant.{v.name}.evidence", v.run_dir))
        if a is not None:
            props += trial_policy.properties(self, a)
        props += [(f"skill_eval.expectation.{e.id}", f"{e.variant} {e.status}") for e in self.expectations]
        props += [(f"skill_eval.comparison.{c.id}", c.transition) for c in self.comparisons]
        if self.usage is not None:
            props += usage_properties(self.usage)
        return props

    def headline(self) -> str:
        """The first line of the failure text, which pytest's short summary shows.

        It names each expectation that fails the item with what was observed (a failing
        comparison's candidate side is one: every policy that fails a ``pass-to-fail`` or
        ``fail-to-fail`` comparison fails its failed candidate side), or, when a scripted
        stand-in ran out of script steps, says that instead; escaped to stay one line. The
        transition is already the status word of the line.
        """
        if self.aggregate is not None:
            from pytest_skill_eval import trial_policy

            return trial_policy.headline(self)
        failed = sorted((e for e in self.failing if isinstance(e, ExpectationResult)),
                        key=lambda e: e.variant != "candidate")  # the candidate's checks first
        names = [f"{'' if e.variant == 'candidate' else e.variant + ' '}{e.id} ({e.kind})" for e in failed]
        if self.notes:
            # what the checks observed is then the stand-in's own complaint: say that instead
            where = ", ".join(f"{variant} turn {turn}" for variant, turn, _reply in self.notes)
            cause = f"the scripted stand-in ran out of script steps ({where})"
            return one_line(f"failed {', '.join(names)}: {cause}" if names else f"group {self.group_id}: {cause}")
        parts = [f"{name}: {e.observed}" for name, e in zip(names, failed, strict=True)]
        if not parts:  # a stored grade whose comparison disagrees with its sides: name the comparison
            parts = [f"comparison {c.id}: {c.transition}" for c in self.failing if isinstance(c, ComparisonResult)]
        return one_line("failed " + "; ".join(parts) if parts else f"group {self.group_id}: {self.words()}")

    def failure_text(self) -> str:
        if self.aggregate is not None:
            from pytest_skill_eval import trial_policy

            return trial_policy.failure_text(self, self.aggregate)
        lines = [self.headline(), f"group {self.group_id}: {self.words()} (--skill-eval-fail-on={self.fail_on})"]
        lines += self._note_lines()
        shown: set[str] = set()
        for item in self.failing:
            if isinstance(item, ComparisonResult):
                lines.append(f"  comparison {item.id}: {item.transition}")
                for side in (item.baseline, item.candidate):
                    e = self._expectation(side)
                    if e is not None:
                        lines.append(self._explain(e, indent="    "))
                        shown.add(e.id)
            elif isinstance(item, ExpectationResult) and item.id not in shown:
                lines.append(self._explain(item, indent="  "))
        lines.append(self.summary_text())
        return "\n".join(lines)

    def error_text(self) -> str:
        if self.aggregate is not None:
            from pytest_skill_eval import trial_policy

            return trial_policy.error_text(self, self.aggregate)
        return self._run_error_text()

    def _run_error_text(self) -> str:
        lines = [f"group {self.group_id}: {self.words()}"]
        for v in self.variants:
            if v.state in ERROR_RUN_STATES:
                lines.append(f"  {v.name}: {v.state}: {one_line(v.reason or 'no reason recorded')}")
                lines.append(f"      evidence: {v.run_dir}")
        for err in self.grade_errors:
            owner = f" {err.owner}" if err.owner else ""
            lines.append(f"  grade-error ({err.scope}{one_line(owner)}): {one_line(err.message)}")
        lines += self._note_lines()
        lines.append(self.summary_text(reasons=False))
        return "\n".join(lines)

    def summary_text(self, *, reasons: bool = True) -> str:
        return "\n".join([f"  evidence: {self.group_dir}", *self.detail_lines(reasons=reasons)])

    def detail_lines(self, indent: str = "  ", *, reasons: bool = True) -> list[str]:
        """One line per variant, expectation and comparison (``-v`` output and failure text)."""
        if self.aggregate is not None:
            from pytest_skill_eval import trial_policy

            return trial_policy.detail_lines(self, self.aggregate, indent, reasons=reasons)
        lines = []
        for v in self.variants:
            reason = f" ({one_line(v.reason)})" if reasons and v.reason and v.state != "complete" else ""
            lines.append(f"{indent}{v.name:<10} {v.state}{reason}")
        for e in self.expectations:
            lines.append(f"{indent}{e.variant:<10} {e.status:<11} {e.id} ({e.kind})")
        for c in self.comparisons:
            lines.append(f"{indent}comparison {c.id}: {c.transition}")
        if self.usage is not None:
            lines += usage_lines(self.usage, indent)
        return lines

    def entries(self) -> tuple[Entry, ...]:
        """The separate entries: one per variant, expectation and comparison, and the grade."""
        if self.aggregate is not None:
            from pytest_skill_eval import trial_policy

            return trial_policy.entries(self, self.aggregate)
        base = (("skill_eval.result_id", self.result_id), ("skill_eval.group", self.group_id))
        found: list[Entry] = []
        for v in self.variants:
            props = base + (("skill_eval.state", v.state), ("skill_eval.evidence", v.run_dir))
            if v.state == "complete":
                found.append(Entry(f"variant:{v.name}", "passed", "complete", f"{v.name} complete", props))
            elif v.state == "not-selected":
                found.append(Entry(f"variant:{v.name}", "skipped", "not-selected",
                                   f"{v.name} not-selected: {one_line(v.reason or 'excluded by --skill-eval-variant')}", props))
            else:
                outcome: EntryOutcome = "error" if v.state in ERROR_RUN_STATES else "passed"
                found.append(Entry(f"variant:{v.name}", outcome, v.state,
                                   f"{v.name} {v.state}: {one_line(v.reason or 'no reason recorded')}\n"
                                   f"evidence: {v.run_dir}", props))
        for e in self.expectations:
            found.append(self._expectation_entry(e, base))
        for c in self.comparisons:
            found.append(self._comparison_entry(c, base))
        grade_props = base + (("skill_eval.grade_state", self.grade_state), ("skill_eval.evidence", self.group_dir))
        if self.grade_errors or self.grade_state == "grade-error":
            messages = [f"grade-error ({err.scope} {err.owner or ''}): {one_line(err.message)}".replace(" )", ")")
                        for err in self.grade_errors]
            found.append(Entry("grade", "error", "grade-error", "\n".join(messages) or "grade-error", grade_props))
        else:
            found.append(Entry("grade", "passed", self.grade_state, f"graded: {self.group_dir}/grade.json", grade_props))
        return tuple(found)

    # -- helpers ---------------------------------------------------------------
    def _note_lines(self) -> list[str]:
        return [f"  {variant}: the scripted stand-in ran out of script steps on turn {turn}: {one_line(reply)}"
                for variant, turn, reply in self.notes]

    def _expectation(self, expectation_id: str | None) -> ExpectationResult | None:
        return next((e for e in self.expectations if e.id == expectation_id), None)

    def _evidence_of(self, variant: str) -> str:
        v = self.variant(variant)
        return v.run_dir if v else self.group_dir

    def _explain(self, e: ExpectationResult, indent: str) -> str:
        # each field on its own line, whatever the subject wrote into it (file names, excerpts)
        where = "; ".join(e.locations)
        evidence = one_line(self._evidence_of(e.variant) + (f" ({where})" if where else ""))
        text = (f"{indent}[{e.variant}] {e.id} ({e.kind}): {e.status}\n"
                f"{indent}    expected: {one_line(e.expected)}\n{indent}    observed: {one_line(e.observed)}\n"
                f"{indent}    evidence: {evidence}")
        if e.error:
            text += f"\n{indent}    error: {one_line(e.error)}"
        return text

    def _expectation_entry(self, e: ExpectationResult, base: tuple[tuple[str, str], ...]) -> Entry:
        props = base + (
            ("skill_eval.variant", e.variant),
            ("skill_eval.kind", e.kind),
            ("skill_eval.status", e.status),
            ("skill_eval.expected", e.expected),
            ("skill_eval.observed", e.observed),
            ("skill_eval.evidence", self._evidence_of(e.variant)),
        )
        message = self._explain(e, indent="").strip()
        name = f"expectation:{e.id}"
        if e.status == "pass":
            return Entry(name, "passed", "pass", message, props)
        if e.status == "fail":
            if self.expectation_fails_item(e):
                return Entry(name, "failed", "fail", message, props)
            return Entry(name, "reported", "fail (reported only)",
                         f"fail, reported only: it does not fail the group under --skill-eval-fail-on={self.fail_on}\n{message}",
                         props)
        if e.status == "grade-error":
            return Entry(name, "error", "grade-error", message, props)
        return Entry(name, "skipped", e.status, f"{e.status}: {e.observed}", props)

    def _comparison_entry(self, c: ComparisonResult, base: tuple[tuple[str, str], ...]) -> Entry:
        props = base + (
            ("skill_eval.transition", c.transition),
            ("skill_eval.baseline", c.baseline or ""),
            ("skill_eval.candidate", c.candidate or ""),
            ("skill_eval.evidence", self.group_dir),
        )
        sides = [self._explain(e, indent="  ") for e in (self._expectation(c.baseline), self._expectation(c.candidate)) if e]
        message = "\n".join([f"comparison {c.id}: {c.transition}" + (f" ({c.reason})" if c.reason else ""), *sides])
        name = f"comparison:{c.id}"
        if self.comparison_fails_item(c):
            return Entry(name, "failed", c.transition, message, props)
        if c.transition in FAILING_TRANSITIONS:
            return Entry(name, "reported", f"{c.transition} (reported only)",
                         f"reported only: {c.transition} does not fail the group under "
                         f"--skill-eval-fail-on={self.fail_on}\n{message}", props)
        if c.transition == "not-comparable":
            return Entry(name, "skipped", c.transition, message, props)
        return Entry(name, "passed", c.transition, message, props)


#: What the pytest layer holds of a judged group (the name its callers know it by).
Judgement = Verdict


def _tally(expectations: Iterable[ExpectationResult | ExpectationRate]) -> tuple[int, int]:
    """Passes and graded checks of *expectations*: a single run's pass or fail counts once,
    a rate its passes of its graded trials."""
    passes = graded = 0
    for e in expectations:
        if isinstance(e, ExpectationResult):
            passes += e.status == "pass"
            graded += e.status in ("pass", "fail")
        else:
            passes += e.passes
            graded += e.graded
    return passes, graded


def judge(group: GroupRecord | InvalidGroupRecord, grade: GroupGrade | TrialGrade, *, group_dir: str,
          fail_on: FailOn, result_id: str, notes: Sequence[tuple[str, int, str]] = (), pass_rate: float = 1.0,
          alpha: float = 0.05, stopping: StoppingRecord | None = None) -> Verdict:
    """Judge one group from its persisted ``group.json`` and the grade document it names: a
    single run's ``grade.json``, or the ``aggregate.json`` over its trials (judged by the rate
    rules with *pass_rate* and *alpha*; each variant's evidence is then in every trial; *stopping*:
    its ``stopping.json``).

    *notes* (see :func:`stand_in_notes`) only add to the failure and error texts.
    """
    usage = getattr(group, "usage", None)  # an InvalidGroupRecord never ran pi
    if not isinstance(grade, GroupGrade):
        from pytest_skill_eval.evidence.layout import TRIALS_DIR

        variants = tuple(VariantState(name, v.state, v.reason, f"{group_dir}/{TRIALS_DIR}/*/{name}")
                         for name, v in group.variants.items())
        return judge_trials(variants, grade, group_id=str(group.id), position=group.position,
                            group_state=group.state, group_dir=group_dir, fail_on=fail_on, pass_rate=pass_rate,
                            alpha=alpha, result_id=result_id, usage=usage, stopping=stopping)
    return Verdict(
        result_id=result_id,
        group_id=str(group.id),
        position=group.position,
        group_state=group.state,
        grade_state=grade.state,
        group_dir=group_dir,
        fail_on=fail_on,
        variants=tuple(VariantState(name, v.state, v.reason, f"{group_dir}/{name}") for name, v in group.variants.items()),
        expectations=grade.expectations,
        comparisons=grade.comparisons,
        grade_errors=grade.errors,
        notes=tuple(notes),
        usage=usage,
    )


def judge_trials(variants: tuple[VariantState, ...], aggregate: TrialGrade, *, group_id: str, position: int,
                 group_state: str, group_dir: str, fail_on: FailOn, pass_rate: float, alpha: float,
                 result_id: str, usage: VariantUsage | None = None, stopping: StoppingRecord | None = None) -> Verdict:
    """The verdict over several trials: *aggregate* judged by the rate rules (:mod:`.trial_policy`)."""
    return Verdict(result_id=result_id, group_id=group_id, position=position, group_state=group_state,
                   grade_state=aggregate.state, group_dir=group_dir, fail_on=fail_on, variants=variants,
                   expectations=(), comparisons=(), grade_errors=(), usage=usage, aggregate=aggregate,
                   pass_rate=pass_rate, alpha=alpha, stopping=stopping)
