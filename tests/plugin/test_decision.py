"""Issue 28: the one decision of a result on every surface, from real runs.

Every run goes through the real pi host and the scripted stand-in model. The figures are
checked against scipy (a test-only dependency), never against the decision core itself.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
from scipy.stats import binomtest

from pytest_skill_eval.evidence.records import ResultRecord, problems

from .helpers import junit_details, only_result, read_json, suite, write_json

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


def _section(output: str) -> list[str]:
    """The lines of the ``skill-eval`` terminal section."""
    lines = output.splitlines()
    start = next(i for i, line in enumerate(lines) if "= skill-eval =" in line)
    end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith("=")), len(lines))
    return lines[start + 1:end]


def test_the_terminal_section_ends_with_the_decision_line(project: Path, pytester: pytest.Pytester) -> None:
    result = pytester.runpytest("--skill-eval", "policy.json", "-p", "no:cacheprovider")
    section = _section(result.stdout.str())
    decision = _decision(project)
    assert section[-1] == f"decision: {decision['line']}"
    assert "  improves/reads-skill: underpowered: fail-to-pass, p = 1 (holm 1), power 0.00 to detect 0.2" in section
    quiet = pytester.runpytest("--skill-eval", "policy.json", "-p", "no:cacheprovider", "-q")
    lines = quiet.stdout.lines
    before = lines[next(i for i, line in enumerate(lines) if "short test summary info" in line) - 1]
    assert before.startswith("decision: underpowered: 1 fail-to-pass, 1 pass-to-fail, 1 tie: p = 1")


def test_require_power_fails_a_run_whose_decision_is_underpowered(project: Path, pytester: pytest.Pytester) -> None:
    write_json(project / "one.json", suite("one", ["groups/improves.json"]))
    plain = pytester.runpytest("--skill-eval", "one.json", "-p", "no:cacheprovider")
    assert plain.ret == 0
    gated = pytester.runpytest("--skill-eval", "one.json", "-p", "no:cacheprovider", "--skill-eval-require-power")
    gated.assert_outcomes(passed=1)
    assert gated.ret == 1, "an underpowered decision never passes a CI gate silently"
    gated.stdout.fnmatch_lines(["skill-eval: the suite's decision is underpowered (--skill-eval-require-power)",
                                "decision: underpowered: 1 fail-to-pass, 0 pass-to-fail, 0 ties: p = 1, *"])


@pytest.mark.parametrize(("args", "message"), [
    (["--skill-eval-adjust", "bonferroni"], "--skill-eval-adjust expects one of holm, bh, none, found 'bonferroni'"),
    (["--skill-eval-min-effect", "0.7"],
     "--skill-eval-min-effect expects a rate difference above 0 and at most 0.5 (e.g. 0.2), found '0.7'"),
    (["--skill-eval-min-effect", "nan"],
     "--skill-eval-min-effect expects a rate difference above 0 and at most 0.5 (e.g. 0.2), found 'nan'"),
    (["-o", "skill_eval_adjust=BH"], "skill_eval_adjust expects one of holm, bh, none, found 'BH'"),
    (["-o", "skill_eval_min_effect=0"],
     "skill_eval_min_effect expects a rate difference above 0 and at most 0.5 (e.g. 0.2), found '0'"),
])
def test_decision_options_are_checked_before_anything_runs(project: Path, pytester: pytest.Pytester,
                                                          args: list[str], message: str) -> None:
    result = pytester.runpytest("--skill-eval", "policy.json", "-p", "no:cacheprovider", *args)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([f"ERROR: {message}"])
    assert not (project / ".skill-eval" / "runs").exists() or not list((project / ".skill-eval" / "runs").iterdir())


def test_trials_regression_policy_uses_holm_over_the_runs_comparisons(project: Path, pytester: pytest.Pytester) -> None:
    """4 trials: regresses is 4/4 -> 0/4, Fisher's p = 0.029 < alpha, but Holm over the run's three
    comparisons makes it 0.086: not a regression, and its words say it is underpowered."""
    from scipy.stats import fisher_exact

    p = fisher_exact([[4, 0], [0, 4]]).pvalue
    holm = min(1.0, 3 * p)
    assert p < 0.05 < holm
    result = pytester.runpytest("--skill-eval", "policy.json", "-p", "no:cacheprovider", "--skill-eval-trials", "4",
                                "--skill-eval-seed", "s", "--skill-eval-fail-on", "regression", "-v")
    result.assert_outcomes(passed=3)
    result.stdout.fnmatch_lines_random([
        "*policy.json::regresses PASSED pass-to-fail (4 trials; underpowered)*",
        "*policy.json::improves PASSED fail-to-pass (4 trials; underpowered)*",
    ])
    decision = _decision(project)
    assert decision["test"] == "exact sign test"
    regresses = next(c for c in decision["comparisons"] if c["group"] == "regresses")
    assert regresses["p_value"] == pytest.approx(p) and regresses["adjusted_p_value"] == pytest.approx(holm)
    assert regresses["line"].startswith("underpowered: 4/4 -> 0/4, p = 0.029 (holm 0.086), power ")
    assert decision["counts"] == {"higher": 1, "lower": 1, "ties": 1}

    # without the adjustment the same evidence is a regression (today's unadjusted rule)
    shutil.rmtree(project / ".skill-eval")
    unadjusted = pytester.runpytest("--skill-eval", "policy.json", "-p", "no:cacheprovider", "--skill-eval-trials", "4",
                                    "--skill-eval-seed", "s", "--skill-eval-fail-on", "regression",
                                    "--skill-eval-adjust", "none", "--junitxml=junit.xml", "-v")
    unadjusted.assert_outcomes(passed=2, failed=1)
    unadjusted.stdout.fnmatch_lines(["*policy.json::regresses FAILED pass-to-fail (4 trials; worse)*"])
    unadjusted.stdout.fnmatch_lines(["*failed comparison reads-skill: worse: 4/4 -> 0/4, p = 0.029*"])
    details = junit_details(project / "junit.xml")
    props = details["policy.json::regresses"]
    assert props["skill_eval.comparison.reads-skill.decision"].startswith("worse: 4/4 -> 0/4, p = 0.029")


def test_trials_with_enough_evidence_are_worse_under_holm(project: Path, pytester: pytest.Pytester) -> None:
    write_json(project / "two.json", suite("two", ["groups/improves.json", "groups/regresses.json"]))
    result = pytester.runpytest("--skill-eval", "two.json", "-p", "no:cacheprovider", "--skill-eval-trials", "6",
                                "--skill-eval-seed", "s", "--skill-eval-fail-on", "regression", "-v")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(["*two.json::regresses FAILED pass-to-fail (6 trials; worse)*"])
    decision = _decision(project)
    by_group = {c["group"]: c for c in decision["comparisons"]}
    assert (by_group["improves"]["decision"], by_group["regresses"]["decision"]) == ("better", "worse")


def test_view_junit_and_step_summary_carry_the_decision(project: Path, pytester: pytest.Pytester,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    import sys
    from xml.etree import ElementTree

    summary_file = project / "step-summary.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary_file))
    pytester.runpytest("--skill-eval", "policy.json", "-p", "no:cacheprovider", "--junitxml=junit.xml")
    decision = _decision(project)
    line = decision["line"]

    view = pytester.run(sys.executable, "-m", "pytest_skill_eval", "view", "latest")
    assert view.ret == 0, view.stderr.str()
    out = view.stdout.lines
    assert f"decision  {line}" in out
    assert ("          exact McNemar over 3 comparisons (3 decisive); adjustment holm, alpha 0.05, minimum effect 0.2, "
            "target power 0.8, coverage floor 0.8") in out
    assert any(x.startswith("  regresses/reads-skill: underpowered: pass-to-fail, p = 1 (holm 1)") for x in out)

    root = ElementTree.parse(project / "junit.xml").getroot()
    details = next(s for s in root.iter("testsuite") if s.get("name") == "skill-eval details")
    props = {p.get("name"): p.get("value") for p in details.findall("properties/property")}
    assert props["skill_eval.decision"] == line
    assert props["skill_eval.decision.test"] == "exact McNemar"
    assert props["skill_eval.decision.counts"] == "1 higher, 1 lower, 1 ties"
    assert str(props["skill_eval.decision.comparison.improves/reads-skill"]).startswith("underpowered: fail-to-pass, p = 1")

    text = summary_file.read_text(encoding="utf-8")
    heading = text.splitlines()[0]
    assert heading.startswith("## skill-eval result ")
    assert text.splitlines()[2] == "**Decision:** " + line.replace("_", "\\_")
    assert "| `improves/reads-skill` | underpowered | 0/1 | 1/1 | 1 | 1 | 0.00 | 100 % |" in text


def test_aa_runs_the_candidate_against_itself_and_reports_the_false_flips(
        project: Path, pytester: pytest.Pytester) -> None:
    """The trials example's stochastic stand-in, 6 trials, both arms the candidate: the flips
    are counted again here from each trial's grade.json, independently of the decision core."""
    trials_root = Path(__file__).resolve().parents[2] / "example_suites" / "trials"
    shutil.copytree(trials_root / "skills", project / "skills", dirs_exist_ok=True)
    shutil.copytree(trials_root / "skills-before", project / "skills-before", dirs_exist_ok=True)
    shutil.copytree(trials_root / "scripts", project / "scripts", dirs_exist_ok=True)
    shutil.copy(trials_root / "groups" / "changelog-activation.json", project / "groups")
    write_json(project / "aa.json", suite("aa", ["groups/changelog-activation.json"]))
    result = pytester.runpytest("--skill-eval", "aa.json", "-p", "no:cacheprovider", "--skill-eval-trials", "6",
                                "--skill-eval-seed", "aa-2", "--skill-eval-aa")
    assert result.ret in (0, 1)
    res = only_result(project)
    gdir = res / "groups" / "001-changelog-activation"
    # both arms ran the candidate's skill: byte-identical fingerprints, the candidate's source
    for n in range(1, 7):
        prints = {v: read_json(gdir / "trials" / f"{n:03d}" / v / "fingerprints.json")["before"]
                  for v in ("baseline", "candidate")}
        assert list(prints["baseline"].values()) == list(prints["candidate"].values()) != [], prints
    flips = pairs = 0
    for n in range(1, 7):
        statuses = {e["variant"]: e["status"] for e in read_json(gdir / "trials" / f"{n:03d}" / "grade.json")["expectations"]}
        if {statuses["baseline"], statuses["candidate"]} <= {"pass", "fail"}:
            pairs += 1
            flips += statuses["baseline"] != statuses["candidate"]
    decision = _decision(project)
    assert decision["aa"] is True and flips > 0, "the seed was chosen so that the stand-in flips"
    assert (decision["flips"]["flips"], decision["flips"]["pairs"]) == (flips, pairs)
    (comparison,) = decision["comparisons"]
    assert (comparison["flips"]["flips"], comparison["flips"]["pairs"]) == (flips, pairs)
    assert decision["decision_flips"]["pairs"] == 1
    result.stdout.fnmatch_lines([f"  A/A false-flip rate: {flips} flips in {pairs} pairs (*"])
    assert "identical skills and context" not in result.stdout.str(), "an A/A run is identical on purpose"


FLAKY_PROVIDER = {
    "schema": "skill-eval-script/1",
    "description": "A provider that fails one request in three with a 500; otherwise the skill is read.",
    "turns": [{
        "rules": [{
            "when": {"skill_description_contains": "release notes"},
            "choose": [
                {"weight": 1, "steps": [{"fault": "http-500"}]},
                {"weight": 2, "steps": [
                    {"tool_calls": [{"name": "read", "arguments": {"path": "{{skill_matching:release notes.location}}"}}]},
                    {"text": "Following the release-notes skill."}]},
            ],
        }],
        "steps": [{"text": "No skill matched."}],
    }],
}


def test_runs_lost_to_the_provider_show_at_group_and_result_level_and_make_a_comparison_indecisive(
        project: Path, pytester: pytest.Pytester) -> None:
    from .helpers import AFTER, description_group, reads_skill

    write_json(project / "scripts" / "flaky-provider.json", FLAKY_PROVIDER)
    write_json(project / "groups" / "flaky.json",
               description_group("flaky", AFTER, AFTER, reads_skill(), model="scripted/flaky-provider"))
    write_json(project / "flaky-suite.json", suite("flaky-suite", ["groups/flaky.json"]))
    args = ["--skill-eval", "flaky-suite.json", "-p", "no:cacheprovider", "--skill-eval-trials", "6",
            "--skill-eval-seed", "lost-13", "--skill-eval-fail-on", "regression", "-v"]
    result = pytester.runpytest(*args, "--skill-eval-html=report.html")
    res = only_result(project)
    gdir = res / "groups" / "001-flaky"
    states = {v: [read_json(gdir / "trials" / f"{n:03d}" / v / "run.json")["state"] for n in range(1, 7)]
              for v in ("baseline", "candidate")}
    lost = {v: sum(s != "complete" for s in found) for v, found in states.items()}
    assert all(s in ("complete", "infrastructure-failed") for found in states.values() for s in found), states
    coverage = min(6 - n for n in lost.values()) / 6
    assert sum(lost.values()) > 0 and coverage < 0.8, "the seed was chosen to lose runs below the floor"
    summary = read_json(res / "result.json")
    (group,) = summary["groups"]
    # the group is complete (each variant completed in some trial): its lost runs are said beside it
    assert group["state"] == "complete" and group["lost_runs"] == lost
    decision = summary["decision"]
    assert decision["lost_runs"] == sum(lost.values())
    (comparison,) = decision["comparisons"]
    assert (comparison["decision"], comparison["coverage"]) == ("indecisive", pytest.approx(coverage))
    assert comparison["p_value"] is None and decision["decision"] == "indecisive"
    # never a failure by chance under regression, never a silent pass: the words say it
    result.assert_outcomes(passed=1)
    total = sum(lost.values())
    result.stdout.fnmatch_lines([f"*flaky-suite.json::flaky PASSED * (6 trials; {total} run{'s' if total != 1 else ''} "
                                 "lost; indecisive)*"])
    result.stdout.fnmatch_lines([f"  lost runs: {total} pi run(s) of the compared groups did not complete*"])
    page = (project / "report.html").read_text(encoding="utf-8")
    assert f'<span class="bad lost">{total} runs lost</span>' in page
    assert f'{total} pi runs of the compared groups did not complete' in page
    # --skill-eval-require-power makes it an error for a CI gate
    shutil.rmtree(project / ".skill-eval")
    gated = pytester.runpytest(*args, "--skill-eval-require-power")
    gated.assert_outcomes(errors=1)
    gated.stdout.fnmatch_lines(["*comparison reads-skill: indecisive: baseline * (an error under --skill-eval-require-power)*"])
