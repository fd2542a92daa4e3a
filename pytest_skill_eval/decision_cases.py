"""The one adapter from judged groups to the decision core's cases (pure).

A case is a comparison (docs/statistics.md): one baseline and one candidate check of one
group, with the outcome of each planned trial per arm: ``True`` (pass), ``False`` (fail) or
``None`` (not graded: the run was not complete, the check was a grade-error, or the trial
never ran). Missing is never a failure.

This is the only module that knows how a single run (a :class:`~.policy.Verdict` over
``grade.json``) and a group run with trials (a :class:`~.policy.Verdict` with an aggregate,
``aggregate.json`` and each trial's ``grade.json``) store their comparisons; everything else asks it for
:class:`~.decision.ComparisonEvidence`.

- :func:`grade_cases`: a single run's stored grade;
- :func:`trial_cases`: a group's trials, each trial's grade by trial number (in trial
  order, as the suite's sign test needs its first k graded trials per arm);
- :func:`verdict_cases`: a judged group. A trial verdict only holds counts, so its cases
  hold the passes, then the fails, then the missing trials: fit for the per-comparison
  figures (Fisher's test does not look at order), not for the suite test, which
  :func:`trial_cases` feeds;
- :func:`comparison_bound`: the decision an item can take alone for its own comparisons
  under an adjustment over the whole suite: the other comparisons' p-values are not known
  yet, so they count as 1 (Holm and Benjamini-Hochberg are monotone: a larger p-value
  elsewhere never makes this one significant), which is never more significant than the
  decision over the whole result.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from pytest_skill_eval.decision import ComparisonDecision, ComparisonEvidence, DecisionRules, Outcome
from pytest_skill_eval.decision.suite import decide_comparisons

if TYPE_CHECKING:
    from pytest_skill_eval.evidence.stop_records import StoppingRecord
    from pytest_skill_eval.grading.aggregate import TrialGrade
    from pytest_skill_eval.grading.results import ComparisonResult, ExpectationResult, GroupGrade
    from pytest_skill_eval.policy import Judgement

__all__ = ["CASE_SEPARATOR", "GroupCases", "case_id", "comparison_bound", "grade_cases", "lost_trial_runs",
           "decided", "planned_trials", "split_case_id", "status_outcome", "trial_cases", "verdict_cases"]

#: a case's id is ``<group id>/<comparison id>`` (group ids cannot hold a slash)
CASE_SEPARATOR = "/"


def case_id(group_id: str, comparison_id: str) -> str:
    return f"{group_id}{CASE_SEPARATOR}{comparison_id}"


def split_case_id(cid: str) -> tuple[str, str]:
    group, _, comparison = cid.partition(CASE_SEPARATOR)
    return group, comparison


@dataclass(frozen=True, slots=True)
class GroupCases:
    """One group's cases (its comparisons), and how its runs ended across trials."""

    group_id: str
    position: int
    cases: tuple[ComparisonEvidence, ...]
    #: per variant, runs that did not complete (any state but ``complete`` and ``not-selected``), and
    #: trials planned but never run: the missing data the group's state ``complete`` does not show
    lost_runs: Mapping[str, int]


def status_outcome(status: str | None) -> Outcome:
    if status == "pass":
        return True
    if status == "fail":
        return False
    return None


def grade_outcomes(grade: GroupGrade) -> dict[str, Outcome]:
    return expectation_outcomes(grade.expectations)


def expectation_outcomes(expectations: Sequence[ExpectationResult]) -> dict[str, Outcome]:
    return {e.id: status_outcome(e.status) for e in expectations}


def grade_cases(group_id: str, grade: GroupGrade) -> tuple[ComparisonEvidence, ...]:
    """A single run's comparisons: each a case of one planned trial."""
    return single_run_cases(group_id, grade.expectations, grade.comparisons)


def single_run_cases(group_id: str, expectations: Sequence[ExpectationResult],
                     comparisons: Sequence[ComparisonResult]) -> tuple[ComparisonEvidence, ...]:
    """Each comparison of a single run (a stored grade or a judged verdict): one planned trial per arm."""
    outcomes = expectation_outcomes(expectations)
    return tuple(ComparisonEvidence(case_id(group_id, c.id),
                                    (outcomes.get(c.baseline) if c.baseline else None,),
                                    (outcomes.get(c.candidate) if c.candidate else None,))
                 for c in comparisons)


def planned_trials(aggregate: TrialGrade, stopping: StoppingRecord | None) -> int:
    """The trials a group's decision counts: all planned, or those run when a stop rule
    (``--skill-eval-stop``) ended the group on purpose (not run by design is not missing data)."""
    return stopping.ran if stopping is not None and stopping.stopped else aggregate.planned


def trial_cases(group_id: str, aggregate: TrialGrade, trials: Mapping[int, GroupGrade | None],
                planned: int | None = None) -> tuple[ComparisonEvidence, ...]:
    """A group's comparisons over its planned trials (*planned*: :func:`planned_trials`); a
    trial without a grade (never ran, unreadable) is missing in both arms."""
    by_trial = {n: grade_outcomes(g) for n, g in trials.items() if g is not None}
    cases = []
    for c in aggregate.comparisons:
        baseline: list[Outcome] = []
        candidate: list[Outcome] = []
        for n in range(1, (aggregate.planned if planned is None else planned) + 1):
            seen = by_trial.get(n, {})
            baseline.append(seen.get(c.baseline) if c.baseline else None)
            candidate.append(seen.get(c.candidate) if c.candidate else None)
        cases.append(ComparisonEvidence(case_id(group_id, c.id), tuple(baseline), tuple(candidate)))
    return tuple(cases)


def lost_trial_runs(aggregate: TrialGrade, selected: Sequence[str], planned: int | None = None) -> dict[str, int]:
    """Per selected variant, its trials whose run did not complete, and the trials never run
    (of *planned*: :func:`planned_trials`)."""
    planned = aggregate.planned if planned is None else planned
    lost = {}
    for name in selected:
        states = aggregate.runs.get(name, {})
        not_complete = sum(n for state, n in states.items() if state not in ("complete", "not-selected"))
        lost[name] = not_complete + max(planned - aggregate.ran, 0)
    return lost


def counted(passes: int, graded: int, planned: int) -> tuple[Outcome, ...]:
    return (True,) * passes + (False,) * (graded - passes) + (None,) * (planned - graded)


def verdict_cases(verdict: Judgement) -> GroupCases:
    """A judged group's cases; a group with a variant not selected has none (nothing was compared)."""
    a = verdict.aggregate
    if a is None:
        states = {v.name: v.state for v in verdict.variants}
        if "not-selected" in states.values():
            return GroupCases(verdict.group_id, verdict.position, (), {})
        cases = single_run_cases(verdict.group_id, verdict.expectations, verdict.comparisons)
        lost = {name: int(state not in ("complete", "not-selected")) for name, state in states.items()}
        return GroupCases(verdict.group_id, verdict.position, cases, lost)
    planned = planned_trials(a, verdict.stopping)
    selected = [v.name for v in verdict.variants if v.state != "not-selected"]
    if len(selected) < len(verdict.variants):
        return GroupCases(verdict.group_id, verdict.position, (), lost_trial_runs(a, selected, planned))
    cases = tuple(ComparisonEvidence(case_id(verdict.group_id, c.id),
                                     counted(c.baseline_passes, c.baseline_graded, planned),
                                     counted(c.candidate_passes, c.candidate_graded, planned))
                  for c in a.comparisons)
    return GroupCases(verdict.group_id, verdict.position, cases, lost_trial_runs(a, selected, planned))


def comparison_bound(cases: Sequence[ComparisonEvidence], family: int,
                     rules: DecisionRules) -> tuple[ComparisonDecision, ...]:
    """The decisions of one group's *cases* that hold whatever the suite's other comparisons show.

    *family* is the number of comparisons the run selected (at least ``len(cases)``); each
    unknown one counts as decisive with p = 1. An ``indecisive`` case is decided as the core
    decides it; a comparison called ``worse`` here is ``worse`` (adjusted p <= alpha) in the
    result's decision too.
    """
    if not cases:
        return ()
    padding = [ComparisonEvidence(f"\0unknown-{k}", (True,), (True,)) for k in range(max(0, family - len(cases)))]
    # each unknown comparison is Fisher's 1/1 against 1/1 (p = 1); the power of every case is then
    # computed at alpha / family, as the core computes it over the whole suite
    return decide_comparisons([*cases, *padding], rules)[:len(cases)]


def decided(verdict: Judgement, rules: DecisionRules, family: int, *, require_power: bool = False) -> Judgement:
    """*verdict* with its comparisons' decisions (:func:`comparison_bound` over *family*
    comparisons); a single run's verdict is returned as it is: its policy is the spec's
    transitions, and one run of one comparison is always underpowered on its own (the
    suite's exact McNemar test is where single runs speak)."""
    if verdict.aggregate is None:
        return verdict
    cases = verdict_cases(verdict).cases
    bound = comparison_bound(cases, max(family, len(cases)), rules)
    return replace(verdict, decisions={split_case_id(d.evidence.id)[1]: d for d in bound}, rules=rules,
                   require_power=require_power)
