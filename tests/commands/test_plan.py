"""``skill-eval plan``: trials per arm from the exact power core, pi runs, expected tokens and cost.

The figures are checked against ``trials_for_power`` and against an independent computation
with scipy (Fisher's test table by table, binomial pmfs, the binomial test); the stored-result
path against a real result of ``example_suites/trials`` run once through pytest with the
real pi host and the scripted model (one script given pricing, the other not).
"""

from __future__ import annotations

import functools
import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from pytest_skill_eval.decision.planning import (
    ComparisonInput,
    ComparisonPlan,
    ModelUsage,
    Plan,
    PlanRequest,
    SuitePlan,
    comparison_level,
    make_plan,
    minimum_cases,
    plan_suite,
    render_plan,
    suite_rates,
)
from pytest_skill_eval.decision.power import TrialPlan, least_favourable_rates, trials_for_power

from .support import skill_eval

EXAMPLES = Path(__file__).resolve().parents[2] / "example_suites"
PRICING = {"input": 3.0, "output": 15.0}


# ---------------------------------------------------------------- independent computations


@functools.lru_cache(maxsize=64)
def scipy_region(n: int, alpha: float) -> np.ndarray:
    """``[x, y]`` is True where scipy's two-sided Fisher test of the n-by-n table rejects at alpha."""
    return np.array([[stats.fisher_exact([[x, n - x], [y, n - y]]).pvalue <= alpha * (1 + 1e-9)
                      for y in range(n + 1)] for x in range(n + 1)])


def scipy_fisher_power(n: int, base: float, cand: float, alpha: float) -> float:
    """P(scipy's two-sided Fisher test rejects at alpha), summed over every table it rejects."""
    joint = np.outer(stats.binom.pmf(range(n + 1), n, base), stats.binom.pmf(range(n + 1), n, cand))
    return float(joint[scipy_region(n, alpha)].sum())


def scipy_comparison_power(n: int, base: float, effect: float, alpha: float) -> float:
    return min(scipy_fisher_power(n, base, cand, alpha) for cand in (base - effect, base + effect)
               if -1e-12 <= cand <= 1 + 1e-12)


def scipy_sign_power(n: int, rates: list[float], effect: float, alpha: float) -> float:
    """The suite's sign-test power, the smaller of every case's candidate rate moved up or down by *effect*."""
    return min(scipy_shifted_sign_power(n, rates, shift, alpha) for shift in (effect, -effect))


def scipy_shifted_sign_power(n: int, rates: list[float], shift: float, alpha: float) -> float:
    """The suite's sign-test power, every case's candidate rate moved by *shift* (clamped), by convolution."""
    dist = np.zeros((1, 1))
    dist[0, 0] = 1.0
    for rate in rates:
        passes = round(rate * n)
        base, cand = passes / n, min(1.0, max(0.0, passes / n + shift))
        joint = np.outer(stats.binom.pmf(range(n + 1), n, base), stats.binom.pmf(range(n + 1), n, cand))
        x, y = np.indices(joint.shape)
        plus, minus = joint[y > x].sum(), joint[y < x].sum()
        grown = np.zeros((dist.shape[0] + 1, dist.shape[1] + 1))
        grown[:-1, :-1] += dist * (1 - plus - minus)
        grown[1:, :-1] += dist * plus
        grown[:-1, 1:] += dist * minus
        dist = grown
    power = 0.0
    for pos in range(dist.shape[0]):
        for neg in range(dist.shape[1]):
            if dist[pos, neg] and pos + neg and stats.binomtest(pos, pos + neg, 0.5).pvalue <= alpha * (1 + 1e-9):
                power += dist[pos, neg]
    return power


# ------------------------------------------------------------------------------ the core


def test_comparison_level_follows_the_adjustment() -> None:
    assert comparison_level(0.05, 4, "holm") == pytest.approx(0.0125)
    assert comparison_level(0.05, 4, "bh") == pytest.approx(0.0125)
    assert comparison_level(0.05, 4, "none") == 0.05
    assert comparison_level(0.05, 1, "holm") == 0.05
    with pytest.raises(ValueError, match="alpha: expected a number strictly between 0 and 1, found 1.5"):
        comparison_level(1.5, 2, "holm")


def test_observed_rate_plan_agrees_with_trials_for_power_and_scipy() -> None:
    request = PlanRequest(0.5, 0.8, 0.05, "holm", (("g", "m"), ("h", "m")),
                          (ComparisonInput("g", "c", 3, 10), ComparisonInput("h", "c", 9, 10)))
    plan = make_plan(request)
    assert plan.level == 0.025
    for item, rate in zip(plan.comparisons, (0.3, 0.9), strict=True):
        assert item.plan is not None
        assert item.plan == trials_for_power(0.5, power=0.8, alpha=0.025, baseline_rate=rate)
        n = item.plan.trials
        # independently: n reaches the power, and no smaller n does (the first n, the sawtooth allowed for)
        assert scipy_comparison_power(n, rate, 0.5, 0.025) == pytest.approx(item.plan.power, abs=1e-9)
        assert scipy_comparison_power(n, rate, 0.5, 0.025) >= 0.8
        assert all(scipy_comparison_power(k, rate, 0.5, 0.025) < 0.8 for k in range(1, n))


def test_least_favourable_plan_agrees_with_scipy() -> None:
    request = PlanRequest(0.5, 0.8, 0.05, "none", (("g", "m"),), (ComparisonInput("g", "c"),))
    item = make_plan(request).comparisons[0]
    assert item.plan == trials_for_power(0.5, power=0.8, alpha=0.05)
    n, rate = item.plan.trials, item.plan.baseline_rate
    assert scipy_comparison_power(n, rate, 0.5, 0.05) == pytest.approx(item.plan.power, abs=1e-9)
    # at n - 1 some baseline rate of the searched grid falls short (scipy finds it too)
    short = min(least_favourable_rates(0.5), key=lambda p: scipy_comparison_power(n - 1, p, 0.5, 0.05))
    assert scipy_comparison_power(n - 1, short, 0.5, 0.05) < 0.8
    text = render_plan(make_plan(request), "suite.json")
    assert f"least favourable ({rate:.2f})" in text
    assert "no stored result of this suite: the least favourable baseline rate is assumed" in text


def test_suite_plan_agrees_with_an_independent_sign_test_power() -> None:
    rates = [0.2, 0.3, 0.3, 0.5, 0.6, 0.7, 0.4]
    request = PlanRequest(0.4, 0.8, 0.05, "holm", tuple((f"g{i}", "m") for i in range(7)),
                          tuple(ComparisonInput(f"g{i}", "c", round(r * 10), 10) for i, r in enumerate(rates)))
    suite = make_plan(request).suite
    assert suite.trials is not None and suite.power is not None
    n = suite.trials
    # the mean rate (0.43) admits both directions; both take the smaller
    assert scipy_sign_power(n, rates, 0.4, 0.05) == pytest.approx(suite.power, abs=1e-9)
    assert suite.power >= 0.8
    assert scipy_sign_power(n - 1, rates, 0.4, 0.05) < 0.8 or n == 1


def test_too_few_comparisons_for_the_sign_test_say_so() -> None:
    assert minimum_cases(0.05) == 6  # 2 / 2^6 = 0.031 <= 0.05 < 2 / 2^5
    assert stats.binomtest(6, 6, 0.5).pvalue <= 0.05 < stats.binomtest(5, 5, 0.5).pvalue
    request = PlanRequest(0.3, 0.8, 0.05, "holm", (("g", "m"),), (ComparisonInput("g", "a"), ComparisonInput("g", "b")))
    text = render_plan(make_plan(request), "suite.json")
    assert "the sign test over 2 comparison(s) can never reject at alpha 0.05: it needs at least 6" in text
    assert "the suite decision" not in text


def admitted_sign_power(n: int, rates: list[float], effect: float, alpha: float) -> float:
    """The suite's power over the directions the cases' mean baseline rate (at n trials) admits."""
    mean = sum(round(r * n) / n for r in rates) / len(rates)
    return min(scipy_shifted_sign_power(n, rates, shift, alpha) for shift in (effect, -effect)
               if -1e-12 <= mean + shift <= 1 + 1e-12)


@pytest.mark.parametrize("rates", [[None] * 8, [0.5, None, 0.2, None, 0.9, None, 0.4, 0.6]])
def test_least_favourable_suite_plan_agrees_with_scipy(rates: list[float | None]) -> None:
    found = plan_suite(rates, 0.5, 0.8, 0.05)
    assert found.trials is not None and found.power is not None and found.least_favourable_rate is not None
    n = found.trials
    grid = sorted({k / 20 for k in range(21)} | {0.25, 0.75})  # every 0.05 and (1 -+ D) / 2

    def power(k: int, common: float) -> float:
        return admitted_sign_power(k, [common if r is None else r for r in rates], 0.5, 0.05)

    # the plan's rate is the least favourable of the grid at n, every rate reaches the power at n, none below n does all
    powers = {common: power(n, common) for common in grid}
    assert powers[found.least_favourable_rate] == pytest.approx(found.power, abs=1e-9) == pytest.approx(min(powers.values()))
    assert min(powers.values()) >= 0.8
    assert all(min(power(k, common) for common in grid) < 0.8 for k in range(1, n))


def test_the_suite_plan_at_its_limits() -> None:
    # exactly the fewest cases that can reject (6 at alpha 0.05) are enough to plan on
    six = plan_suite([0.5] * 6, 0.5, 0.8, 0.05)
    assert (six.trials, six.least_favourable_rate, six.problem) == (6, None, None)
    assert six.power is not None and six.power == pytest.approx(admitted_sign_power(6, [0.5] * 6, 0.5, 0.05), abs=1e-9)
    assert admitted_sign_power(5, [0.5] * 6, 0.5, 0.05) < 0.8
    # a power exactly reached counts; so does the last n searched
    assert plan_suite([0.5] * 6, 0.5, six.power, 0.05).trials == 6
    assert plan_suite([0.5] * 6, 0.5, 0.8, 0.05, max_trials=6).trials == 6
    assert plan_suite([0.5] * 6, 0.5, 0.8, 0.05, max_trials=5) == SuitePlan(
        None, None, None, "no number of trials up to 5 per arm reaches power 0.8")
    with pytest.raises(ValueError, match="^power: expected a number strictly between 0 and 1, found 1.0$"):
        plan_suite([0.5] * 6, 0.5, 1.0, 0.05)
    # one trial per arm can be enough: 10 cases at 0/1 each rise with probability 0.5, 6 or more rises reject
    assert plan_suite([0.0] * 10, 0.5, 0.3, 0.05) == SuitePlan(1, pytest.approx(stats.binom.sf(5, 10, 0.5)), None)  # type: ignore[arg-type]


def test_the_suite_grid_and_a_smaller_effect() -> None:
    # the common rates searched: every 0.05 and (1 -+ D) / 2 (off that grid for D = 0.15)
    assert list(suite_rates(0.15)) == pytest.approx(sorted([k / 20 for k in range(21)] + [0.425, 0.575]), abs=1e-15)
    # a smaller effect: the least favourable common rate of 8 free cases, as scipy has it at n
    free = plan_suite([None] * 8, 0.3, 0.8, 0.05)
    assert (free.trials, free.least_favourable_rate) == (16, 0.6)
    assert free.power == pytest.approx(admitted_sign_power(16, [0.6] * 8, 0.3, 0.05), abs=1e-9)
    with pytest.raises(ValueError, match="^power: expected a number strictly between 0 and 1, found 1.0$"):
        make_plan(PlanRequest(0.5, 1.0, 0.05, "holm", (), ()))
    with pytest.raises(ValueError, match="^alpha: expected a number strictly between 0 and 1, found 0$"):
        minimum_cases(0)
    with pytest.raises(ValueError, match="^adjustment: expected one of holm, bh, none, found 'sidak'$"):
        comparison_level(0.05, 2, "sidak")  # type: ignore[arg-type]


def test_render_plan_level_line_and_models_without_usage() -> None:
    c1, c2 = ComparisonInput("g1", "c1", 1, 2), ComparisonInput("g2", "c2", 1, 2)
    items = (ComparisonPlan(c1, TrialPlan(5, 0.5, 0.91)), ComparisonPlan(c2, TrialPlan(5, 0.5, 0.91)))
    for adjustment, line in (("none", "  level: each comparison at alpha 0.1 (none, 2 comparison(s))"),
                             ("holm", "  level: each comparison at alpha/2 = 0.05 (holm over 2 comparisons: the first step's "
                                      "level); the suite test at alpha (one test)")):
        request = PlanRequest(0.3, 0.9, 0.1, adjustment, (("g1", "m-0"), ("g2", "m-a")), (c1, c2),  # type: ignore[arg-type]
                              result="result r1", usage=(ModelUsage("m-a", 2, 300, 0.5),))
        text = render_plan(Plan(request, 0.1 if adjustment == "none" else 0.05, items, SuitePlan(None, None, None)), "s")
        assert text.splitlines()[1] == line
        # a model the stored result has no run of does not hide the others
        assert text.endswith("""\
    m-0: 10 pi run(s): tokens unavailable, cost unavailable (the stored result has no pi run of this model)
    m-a: 10 pi run(s): tokens 1500, 150 per run over 2 stored; cost $2.5000
    total: tokens unavailable, cost unavailable
""")


# --------------------------------------------------------------------------- the command


def _copy(name: str, dest: Path) -> Path:
    shutil.copytree(EXAMPLES / name, dest, ignore=shutil.ignore_patterns(".skill-eval"))
    return dest


def test_cli_without_a_stored_result_assumes_the_least_favourable_rate(tmp_path: Path) -> None:
    root = _copy("quickstart", tmp_path / "quickstart")
    done = skill_eval(root, "plan", "suite.json", "--min-effect", "0.3")
    assert done.returncode == 0, done.stderr
    expected = trials_for_power(0.3, power=0.8, alpha=0.025)
    assert "baseline rates: no stored result of suite quickstart at suite.json: " \
           "the least favourable baseline rate is assumed" in done.stdout
    assert "each comparison at alpha/2 = 0.025 (holm over 2 comparisons" in done.stdout
    row = re.search(r"release-notes-activation reads-skill\s+least favourable \((\S+)\)\s+(\d+)\s+(\S+)\s+(\d+)",
                    done.stdout)
    assert row is not None, done.stdout
    assert (float(row[1]), int(row[2]), int(row[4])) == (round(expected.baseline_rate, 2), expected.trials,
                                                        2 * expected.trials)
    runs = 2 * 2 * expected.trials
    assert f"--skill-eval-trials {expected.trials}: 2 group(s) × 2 variant(s) × {expected.trials} trial(s) = " \
           f"{runs} pi run(s)" in done.stdout
    assert "tokens and cost: unavailable (no stored result of suite quickstart at suite.json)" in done.stdout


def test_unreadable_stored_results_are_skipped_and_counted(tmp_path: Path) -> None:
    root = _copy("quickstart", tmp_path / "quickstart")
    bad = root / ".skill-eval" / "runs" / "20991231000000-deadbeef"
    (bad / "groups").mkdir(parents=True)
    (bad / "result.json").write_text('{"result_id": 7}')  # not a result record
    done = skill_eval(root, "plan", "suite.json", "--min-effect", "0.5")
    assert done.returncode == 0, done.stderr
    assert "(1 stored result(s) could not be read and were skipped)" in done.stdout


@pytest.mark.parametrize(("option", "value", "message"), [
    ("--min-effect", "0", "argument --min-effect: expected a pass-rate difference above 0 and at most 0.5, found '0'"),
    ("--min-effect", "0.6", "argument --min-effect: expected a pass-rate difference above 0 and at most 0.5, found '0.6'"),
    ("--min-effect", "a lot", "argument --min-effect: expected a pass-rate difference above 0 and at most 0.5, "
                              "found 'a lot'"),
    ("--power", "1", "argument --power: expected a power above 0 and below 1, found '1'"),
    ("--power", "80", "argument --power: expected a power above 0 and below 1, found '80'"),
    ("--alpha", "0", "argument --alpha: expected a significance level above 0 and below 1, found '0'"),
    ("--alpha", "nan", "argument --alpha: expected a significance level above 0 and below 1, found 'nan'"),
    ("--alpha", "inf", "argument --alpha: expected a significance level above 0 and below 1, found 'inf'"),
])
def test_bad_options_name_the_option_the_range_and_what_was_found(tmp_path: Path, option: str, value: str,
                                                                  message: str) -> None:
    for command in ("plan", "check"):
        done = skill_eval(tmp_path, command, "suite.json", option, value)
        assert done.returncode == 2
        assert message in done.stderr
        assert "Traceback" not in done.stderr


def test_definition_that_does_not_load_is_a_located_error(tmp_path: Path) -> None:
    (tmp_path / "suite.json").write_text('{"schema_version": 1, "kind": "suite", "id": "s", "groups": ["nope.json"]}')
    done = skill_eval(tmp_path, "plan", "suite.json")
    assert done.returncode == 2
    assert done.stderr.startswith("skill-eval: error: ") and "nope.json" in done.stderr
    assert "Traceback" not in done.stderr


# ---------------------------------------------------------------- with a stored result


@pytest.fixture(scope="module")
def trials_result(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """example_suites/trials run once with 3 trials (12 pi runs); changelog-body's script given pricing."""
    root = _copy("trials", tmp_path_factory.mktemp("plan") / "trials")
    script = root / "scripts" / "changelog-body.json"
    data = json.loads(script.read_text())
    data["pricing"] = PRICING
    script.write_text(json.dumps(data))
    done = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "--skill-eval-trials", "3"],
                          cwd=root, env=dict(os.environ), capture_output=True, text=True, timeout=900, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    yield root


def _stored(root: Path) -> tuple[str, dict[str, dict[str, object]]]:
    (result,) = (root / ".skill-eval" / "runs").glob("2*")
    return result.name, {g["id"]: g for g in json.loads((result / "result.json").read_text())["groups"]}


@pytest.mark.pi
def test_stored_result_gives_rates_tokens_and_cost(trials_result: Path) -> None:
    result_id, groups = _stored(trials_result)
    done = skill_eval(trials_result, "plan", "suite.json")
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert (f"baseline rates: observed in stored result {result_id} (.skill-eval/runs/{result_id}: it records suite "
            "trials at suite.json; 2 of 2 group definition(s) unchanged since)") in out
    planned = []
    for gid, cid in (("changelog-activation", "reads-skill"), ("changelog-body", "writes-changelog")):
        aggregate = json.loads((trials_result / ".skill-eval" / "runs" / result_id / "groups" /
                                str(groups[gid]["dir"]) / "aggregate.json").read_text())
        (comparison,) = [c for c in aggregate["comparisons"] if c["id"] == cid]
        passes, graded = comparison["baseline_passes"], comparison["baseline_graded"]
        expected = trials_for_power(0.2, power=0.8, alpha=0.025, baseline_rate=passes / graded)
        planned.append(expected.trials)
        assert re.search(rf"{gid} {cid}\s+{passes / graded:.2f} \({passes}/{graded} stored\)\s+{expected.trials}\s+"
                         rf"{expected.power:.2f}\s+{2 * expected.trials}\n", out), out
    n = max(planned)
    assert f"every comparison: --skill-eval-trials {n}: 2 group(s) × 2 variant(s) × {n} trial(s) = {4 * n} pi run(s)" in out
    # tokens: the stored tokens per pi run of each model times the planned runs; cost only where priced
    activation = groups["changelog-activation"]["usage"]
    assert isinstance(activation, dict)
    per_run = activation["total"]["totalTokens"] / activation["runs"]
    assert activation["total"]["cost"] is None
    assert (f"scripted/changelog-activation: {2 * n} pi run(s): tokens {round(per_run * 2 * n)}, {per_run:.0f} per run "
            f"over {activation['runs']} stored; cost unavailable (no pricing: pi reported no cost)") in out
    body = groups["changelog-body"]["usage"]
    assert isinstance(body, dict) and body["total"]["cost"] > 0
    cost = body["total"]["cost"] / body["runs"] * 2 * n
    assert f"scripted/changelog-body: {2 * n} pi run(s): tokens " in out
    assert f"cost ${cost:.4f}\n" in out
    assert "total: tokens " in out and "cost unavailable" in out.split("total: tokens")[1]


@pytest.mark.pi
def test_check_shows_the_same_plan(trials_result: Path) -> None:
    check = skill_eval(trials_result, "check", "suite.json")
    plan = skill_eval(trials_result, "plan", "suite.json")
    assert check.returncode == 0 and plan.returncode == 0
    # the plan section comes before the verdict, which stays the last line (the trials example's
    # body group gives both variants the same skill on purpose: check warns that it cannot show a change)
    assert check.stdout.endswith("\n\n" + plan.stdout + "\nno problems found, 1 warning (warn lines)\n")


@pytest.mark.pi
def test_changed_definition_falls_back_to_the_least_favourable_rate(trials_result: Path) -> None:
    group = trials_result / "groups" / "changelog-body.json"
    original = group.read_text()
    try:
        data = json.loads(original)
        data["review_questions"] = ["Changed after the run?"]
        group.write_text(json.dumps(data))
        done = skill_eval(trials_result, "plan", "suite.json")
    finally:
        group.write_text(original)
    assert done.returncode == 0, done.stderr
    assert "1 of 2 group definition(s) unchanged since" in done.stdout
    assert ("changelog-body writes-changelog: definition changed since the stored result: "
            "least favourable rate assumed") in done.stdout
    assert re.search(r"changelog-body writes-changelog\s+least favourable", done.stdout)


@pytest.mark.pi
def test_result_of_another_suite_is_refused_by_name(trials_result: Path, tmp_path: Path) -> None:
    result_id, _groups = _stored(trials_result)
    root = _copy("quickstart", tmp_path / "quickstart")
    done = skill_eval(root, "plan", "suite.json", "--result", str(trials_result / ".skill-eval" / "runs" / result_id))
    assert done.returncode == 2
    assert (f"skill-eval: error: result {result_id} is not of suite quickstart at suite.json: none of its group.json "
            "files records that definition") in done.stderr
    # and the same suite at another path is another suite: the copy's result is not used
    moved = tmp_path / "moved"
    shutil.copytree(trials_result, moved)
    done = skill_eval(moved, "plan", "suite.json", "--min-effect", "0.5")
    assert "baseline rates: no stored result of suite trials at suite.json" in done.stdout


@pytest.mark.pi
def test_stored_counts_that_are_not_a_rate_are_not_planned_on(trials_result: Path) -> None:
    """A tampered aggregate (more passes than graded trials: the schema only asks for counts >= 0)."""
    result_id, groups = _stored(trials_result)
    path = trials_result / ".skill-eval" / "runs" / result_id / "groups" / str(groups["changelog-body"]["dir"]) / \
        "aggregate.json"
    original = path.read_text()
    try:
        data = json.loads(original)
        data["comparisons"][0]["baseline_passes"] = data["comparisons"][0]["baseline_graded"] + 5
        path.write_text(json.dumps(data))
        done = skill_eval(trials_result, "plan", "suite.json")
    finally:
        path.write_text(original)
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    assert re.search(r"changelog-body writes-changelog: the stored baseline counts are not a rate \(8 passes of 3 "
                     r"graded\): least favourable rate assumed", done.stdout), done.stdout


@pytest.mark.pi
def test_single_run_result_gives_one_graded_baseline_trial(tmp_path: Path) -> None:
    """A single run's grade: the baseline side of each comparison's transition is 1/1 or 0/1."""
    root = _copy("quickstart", tmp_path / "quickstart")
    done = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q"], cwd=root,
                          env=dict(os.environ), capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    result_id, groups = _stored(root)
    planned = skill_eval(root, "plan", "suite.json", "--min-effect", "0.5", "--adjust", "none")
    assert planned.returncode == 0, planned.stderr
    assert "each comparison at alpha 0.05 (none, 2 comparison(s))" in planned.stdout
    assert f"observed in stored result {result_id}" in planned.stdout
    for gid, group in groups.items():
        grade = json.loads((root / ".skill-eval" / "runs" / result_id / "groups" / str(group["dir"]) /
                            "grade.json").read_text())
        for comparison in grade["comparisons"]:
            passes = 1 if comparison["transition"].startswith("pass-to-") else 0
            expected = trials_for_power(0.5, power=0.8, alpha=0.05, baseline_rate=float(passes))
            assert re.search(rf"{gid} {comparison['id']}\s+{passes:.2f} \({passes}/1 stored\)\s+{expected.trials}\s",
                             planned.stdout), planned.stdout


# ---------------------------------------------------------------- the text, in process

def test_render_plan_shows_the_figures_it_was_given() -> None:
    """Every figure by hand: pi runs = groups x 2 x n; tokens and cost per stored pi run of a model
    times its planned runs (m-a: 1000 tokens and $0.02 over 4 runs, two groups; m-b: $0.01 over 2
    runs, one group, no tokens), partial figures "or more", a total only when every model has one."""
    c1, c2, c3 = ComparisonInput("g1", "c1", 3, 4), ComparisonInput("g2", "c2", note="changed definition"), ComparisonInput("g3", "c3")
    request = PlanRequest(0.2, 0.8, 0.05, "holm", (("g1", "m-a"), ("g2", "m-a"), ("g3", "m-b")), (c1, c2, c3),
                          result="result 20260101-x (same suite)",
                          usage=(ModelUsage("m-a", 4, 1000, 0.02, tokens_partial=True),
                                 ModelUsage("m-b", 2, None, 0.01, cost_partial=True)))
    plan = Plan(request, 0.05 / 3, (ComparisonPlan(c1, TrialPlan(30, 0.75, 0.81)), ComparisonPlan(c2, TrialPlan(40, 0.4, 0.8123)),
                                    ComparisonPlan(c3, None, "no number of trials up to 2000 per arm reaches power 0.8")),
                SuitePlan(12, 0.84, 0.45))
    assert render_plan(plan, "suite.json") == """\
plan suite.json: detect a pass-rate difference of 0.2 with power 0.8 at alpha 0.05 (exact power, Fisher's test per comparison, the sign test for the suite)
  level: each comparison at alpha/3 = 0.01667 (holm over 3 comparisons: the first step's level); the suite test at alpha (one test)
  baseline rates: observed in stored result 20260101-x (same suite)

  comparison                baseline rate            trials per arm  power  pi runs
  g1 c1                     0.75 (3/4 stored)                    30   0.81       60
  g2 c2                     least favourable (0.40)              40   0.81       80
  g3 c3                     least favourable            unreachable      -        -
  suite (sign test over 3)  least favourable (0.45)              12   0.84       72

  g2 c2: changed definition
  g3 c3: no number of trials up to 2000 per arm reaches power 0.8

  every comparison: --skill-eval-trials 40: 3 group(s) × 2 variant(s) × 40 trial(s) = 240 pi run(s)
    m-a: 160 pi run(s): tokens 40000 or more, 250 per run over 4 stored; cost $0.8000
    m-b: 80 pi run(s): tokens unavailable; cost $0.4000 or more
    total: tokens unavailable, cost $1.2000
  the suite decision: --skill-eval-trials 12: 3 group(s) × 2 variant(s) × 12 trial(s) = 72 pi run(s)
    m-a: 48 pi run(s): tokens 12000 or more, 250 per run over 4 stored; cost $0.2400
    m-b: 24 pi run(s): tokens unavailable; cost $0.1200 or more
    total: tokens unavailable, cost $0.3600
"""
    c = ComparisonInput("g1", "c1", 1, 2)
    priced_by_none = PlanRequest(0.3, 0.9, 0.1, "none", (("g1", "m-a"),), (c,), result="result r1",
                                 usage=(ModelUsage("m-a", 2, 300, None),))
    assert render_plan(Plan(priced_by_none, 0.1, (ComparisonPlan(c, TrialPlan(5, 0.5, 0.91)),),
                            SuitePlan(None, None, None, "too few")), "s") == """\
plan s: detect a pass-rate difference of 0.3 with power 0.9 at alpha 0.1 (exact power, Fisher's test per comparison, the sign test for the suite)
  level: each comparison at alpha 0.1 (none, 1 comparison(s))
  baseline rates: observed in stored result r1

  comparison                baseline rate      trials per arm  power  pi runs
  g1 c1                     0.50 (1/2 stored)               5   0.91       10
  suite (sign test over 1)  -                     unreachable      -        -

  suite: too few

  every comparison: --skill-eval-trials 5: 1 group(s) × 2 variant(s) × 5 trial(s) = 10 pi run(s)
    m-a: 10 pi run(s): tokens 1500, 150 per run over 2 stored; cost unavailable (no pricing: pi reported no cost)
    total: tokens 1500, cost unavailable
"""
    unseen = PlanRequest(0.3, 0.9, 0.1, "holm", (("g1", "m-z"),), (c,), result="result r1", usage=(ModelUsage("m-z", 0, None, None),))
    text = render_plan(Plan(unseen, 0.1, (ComparisonPlan(c, TrialPlan(5, 0.5, 0.91)),), SuitePlan(7, 0.95, None)), "s")
    assert "  level: each comparison at alpha 0.1 (holm, 1 comparison(s))\n" in text
    assert "  suite (sign test over 1)  observed                        7   0.95       14\n" in text
    assert text.endswith("""\
  the suite decision: --skill-eval-trials 7: 1 group(s) × 2 variant(s) × 7 trial(s) = 14 pi run(s)
    m-z: 14 pi run(s): tokens unavailable, cost unavailable (the stored result has no pi run of this model)
    total: tokens unavailable, cost unavailable
""")
    free = ComparisonInput("g1", "c1")
    no_result = PlanRequest(0.3, 0.9, 0.1, "bh", (("g1", "m-a"),), (free,))
    assert render_plan(Plan(no_result, 0.1, (ComparisonPlan(free, TrialPlan(5, 0.35, 0.91)),), SuitePlan(None, None, None)),
                       "s").endswith("""\
  baseline rates: no stored result of this suite: the least favourable baseline rate is assumed

  comparison                baseline rate            trials per arm  power  pi runs
  g1 c1                     least favourable (0.35)               5   0.91       10
  suite (sign test over 1)  -                           unreachable      -        -

  every comparison: --skill-eval-trials 5: 1 group(s) × 2 variant(s) × 5 trial(s) = 10 pi run(s)
    tokens and cost: unavailable (no stored result of this suite)
""")
    nothing = PlanRequest(0.2, 0.8, 0.05, "bh", (), ())
    assert render_plan(Plan(nothing, 0.05, (), SuitePlan(None, None, None)), "s").endswith("""\
  level: each comparison at alpha 0.05 (bh, 0 comparison(s))
  baseline rates: no stored result of this suite: the least favourable baseline rate is assumed
  no comparisons: nothing to decide (a comparison pairs a baseline and a candidate check)
""")


def test_a_comparison_the_power_core_refuses_is_reported_not_raised() -> None:
    # stored counts that are no rate (5 passes of 4): the core's refusal becomes the comparison's problem
    bad = ComparisonInput("g", "c", 5, 4)
    plan = make_plan(PlanRequest(0.5, 0.8, 0.05, "none", (("g", "m"),), (bad,)))
    assert plan.comparisons == (ComparisonPlan(bad, None, "baseline rate: expected a rate from 0 to 1, found 1.25"),)
