"""Issue 28: the one decision of a result on every surface, from real runs.

Every run goes through the real pi host and the scripted stand-in model. The figures are
checked against scipy (a test-only dependency), never against the decision core itself.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from scipy.stats import binomtest

from pytest_skill_eval.evidence.records import ResultRecord, problems

from .helpers import GROUPS, description_group, only_result, read_json, reads_skill, suite, write_json

pytestmark = pytest.mark.pi


def _decision(project: Path) -> dict[str, Any]:
    summary = read_json(only_result(project) / "result.json")
    assert problems(ResultRecord, summary) == []
    assert ResultRecord.from_json(summary).to_json() == summary  # round trip, in the stored key order
    decision: dict[str, Any] = summary["decision"]
    return decision


def test_single_runs_get_exact_mcnemar_over_their_comparisons(project: Path, pytester: pytest.Pytester) -> None:
    result = pytester.runpytest("--skill-eval", "policy.json", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1, failed=2)
    decision = _decision(project)
    # improves: fail-to-pass; regresses: pass-to-fail; stays-failing: fail-to-fail (a tie)
    p = binomtest(1, 2, 0.5).pvalue
    assert decision["test"] == "exact McNemar"
    assert decision["counts"] == {"higher": 1, "lower": 1, "ties": 1}
    assert decision["p_value"] == pytest.approx(p)
    assert decision["decision"] == "underpowered"
    assert decision["line"].startswith("underpowered: 1 fail-to-pass, 1 pass-to-fail, 1 tie: p = 1, power ")
    assert decision["rules"] == {"alpha": 0.05, "min_effect": 0.2, "target_power": 0.8, "coverage_floor": 0.8,
                                 "adjustment": "holm"}
    by_group = {c["group"]: c for c in decision["comparisons"]}
    assert sorted(by_group) == ["improves", "regresses", "stays-failing"]
    improves = by_group["improves"]
    assert (improves["comparison"], improves["position"], improves["planned"]) == ("reads-skill", 1, 1)
    assert (improves["baseline"], improves["candidate"]) == ({"passes": 0, "graded": 1}, {"passes": 1, "graded": 1})
    # one run of one comparison can never reject on its own: Fisher's p is 1, and so is Holm's
    assert (improves["p_value"], improves["adjusted_p_value"], improves["decision"]) == (1.0, 1.0, "underpowered")
    assert improves["line"].startswith("underpowered: fail-to-pass, p = 1 (holm 1), power 0.00 to detect 0.2")
    assert decision["lost_runs"] == 0


def test_a_comparison_with_an_arm_not_graded_is_indecisive(project: Path, pytester: pytest.Pytester) -> None:
    write_json(project / "mixed.json", suite("mixed", ["groups/missing-script.json", "groups/improves.json"]))
    result = pytester.runpytest("--skill-eval", "mixed.json", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1, errors=1)
    decision = _decision(project)
    by_group = {c["group"]: c for c in decision["comparisons"]}
    missing = by_group["missing-script"]
    assert (missing["decision"], missing["coverage"], missing["p_value"]) == ("indecisive", 0.0, None)
    assert missing["line"] == "indecisive: baseline 0 of 1 graded, candidate 0 of 1 (0 %, floor 80 %)"
    # one of two comparisons decisive is below the floor: the suite is indecisive too
    assert decision["decision"] == "indecisive"
    assert decision["line"] == ("indecisive: 1 of 2 comparisons graded in at least 80 % of planned trials "
                                "(50 %, floor 80 %)")
    assert decision["lost_runs"] == 2


def test_a_variant_not_selected_compares_nothing(project: Path, pytester: pytest.Pytester) -> None:
    result = pytester.runpytest("--skill-eval", "policy.json", "--skill-eval-variant", "candidate",
                                "-p", "no:cacheprovider")
    assert result.ret in (0, 1)
    decision = _decision(project)
    assert decision["comparisons"] == [] and decision["decision"] == "indecisive"


GROUPS_USED = (GROUPS, description_group, reads_skill)  # the builders this module's later tests share
