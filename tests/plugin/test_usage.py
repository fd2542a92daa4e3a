"""Tokens and cost, everywhere: summed per turn, variant, group and result, shown in the ``-v``
lines, the summary table, the JUnit properties, ``skill-eval view``, the step summary and
``result.json``; a figure pi did not report is "unavailable", never 0.

Real pi host, scripted model over real HTTP. The scripted model's figures are
deterministic; its cost is real when its script gives pricing (``"pricing"``, per million
tokens, into pi's models.json) and unavailable without. A step with ``"usage": false``
sends no usage at all, so pi reports none for that message.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from junit_xml.validate import schema_errors

from pytest_skill_eval.definitions.model import VARIANTS

from .helpers import AFTER, BEFORE, description_group, junit_details, only_result, read_json, suite, write_json

pytestmark = pytest.mark.pi

ARGS = ("-p", "no:cacheprovider")
#: US dollars per million tokens
PRICING = {"input": 3.0, "output": 15.0, "cacheRead": 0.3, "cacheWrite": 3.75}
FIGURES = ("input", "output", "cacheRead", "cacheWrite", "totalTokens", "reasoning")


@pytest.fixture(autouse=True)
def _host(pi_host: Any) -> None:
    """Install the managed host once, before any inner run needs it."""


def _script(steps: list[dict[str, Any]], *, priced: bool) -> dict[str, Any]:
    script: dict[str, Any] = {"schema": "skill-eval-script/1", "turns": [{"steps": steps}]}
    if priced:
        script["pricing"] = PRICING
    return script


def _group(project: Path, gid: str, script: dict[str, Any]) -> str:
    write_json(project / "scripts" / f"usage-{gid}.json", script)
    write_json(project / "groups" / f"{gid}.json", description_group(gid, BEFORE, AFTER, [], model=f"scripted/usage-{gid}"))
    return f"groups/{gid}.json"


def _runs(result: Path) -> list[dict[str, Any]]:
    return [read_json(p) for p in sorted((result / "groups").rglob("run.json"))]


def _expected_cost(usage: dict[str, Any]) -> float:
    return float(usage["input"] * PRICING["input"] + usage["output"] * PRICING["output"]
            + usage["cacheRead"] * PRICING["cacheRead"] + usage["cacheWrite"] * PRICING["cacheWrite"]) / 1e6


def _view(project: Path, *args: str) -> str:
    proc = subprocess.run([sys.executable, "-m", "pytest_skill_eval", "view", *args], cwd=project,
                          capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def test_priced_usage_is_summed_per_turn_variant_group_and_result_and_shown_everywhere(
        project: Path, pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    summary_file = project / "step-summary.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary_file))
    two_messages = _script([{"tool_calls": [{"name": "read", "arguments": {"path": "{{cwd}}/missing.md"}}],
                             "usage": {"cache_read": 120, "cache_write": 30}},
                            {"text": "Done.", "usage": {"reasoning": 7}}], priced=True)
    one_message = _script([{"text": "Written."}], priced=True)
    write_json(project / "usage.json", suite("usage", [_group(project, "two", two_messages),
                                                       _group(project, "one", one_message)]))
    result = pytester.runpytest("--skill-eval", "usage.json", "-v", "--junitxml=report.xml",
                                "--skill-eval-html=report.html", *ARGS)
    result.assert_outcomes(passed=2)
    res = only_result(project)

    # per message and turn: pi's figures, the cost pi computed from the script's pricing
    for run in _runs(res):
        usage = run["usage"]
        assert all(isinstance(usage[k], int) for k in FIGURES), usage
        assert usage["messagesWithoutTokens"] == 0 and usage["messagesWithoutCost"] == 0
        assert usage["cost"] == pytest.approx(_expected_cost(usage)) and usage["cost"] > 0
    two = res / "groups" / "001-two"
    for name in VARIANTS:
        run = read_json(two / name / "run.json")["usage"]
        (turn,) = read_json(two / name / "transcript.json")["turns"]
        assert turn["usage"] == run, "one turn: the run is its turn"
        assert (run["messages"], run["cacheRead"], run["cacheWrite"], run["reasoning"]) == (2, 120, 30, 7)

    # per variant and group (group.json), then the result (result.json)
    summary = read_json(res / "result.json")
    totals: dict[str, list[dict[str, Any]]] = {"baseline": [], "candidate": []}
    for entry in summary["groups"]:
        group = read_json(res / "groups" / entry["dir"] / "group.json")
        assert entry["usage"] == group["usage"]
        assert group["usage"]["runs"] == 2
        for name in VARIANTS:
            run = read_json(res / "groups" / entry["dir"] / name / "run.json")["usage"]
            assert group["usage"][name] == run
            totals[name].append(run)
        both = [group["usage"]["baseline"], group["usage"]["candidate"]]
        for key in (*FIGURES, "messages"):
            assert group["usage"]["total"][key] == sum(u[key] for u in both)
        assert group["usage"]["total"]["cost"] == pytest.approx(sum(u["cost"] for u in both))
    for name in VARIANTS:
        assert summary["usage"][name]["totalTokens"] == sum(u["totalTokens"] for u in totals[name])
        assert summary["usage"][name]["cost"] == pytest.approx(sum(u["cost"] for u in totals[name]))
    grand = summary["usage"]["total"]
    assert grand["totalTokens"] == sum(r["usage"]["totalTokens"] for r in _runs(res))
    assert summary["usage"]["runs"] == 4

    out = result.stdout.str()
    # the -v lines: each variant's usage and the group's total under the group's line
    group_usage = read_json(two / "group.json")["usage"]
    tokens, cost = group_usage["total"]["totalTokens"], group_usage["total"]["cost"]
    result.stdout.fnmatch_lines([
        "usage.json::two PASSED*",
        f"    usage baseline   tokens {group_usage['baseline']['totalTokens']} (input *, output *, cache read 120, "
        "cache write 30, reasoning 7), cost $*",
        "    usage candidate  tokens *",
        f"    usage total      tokens {tokens} (*), cost ${cost:.4f}",
    ])
    # the summary table: tokens and cost per group, and a total row
    result.stdout.fnmatch_lines([
        "*#*group*outcome*baseline*candidate*tokens*cost*comparisons*",
        f"1*usage.json::two*passed*complete*complete*{tokens}*${cost:.4f}*",
        "2*usage.json::one*passed*complete*complete*",
        f"*total*{grand['totalTokens']}*${grand['cost']:.4f}*",
    ])
    assert "unavailable" not in out

    # JUnit properties, and the XML still validates
    xml = project / "report.xml"
    assert schema_errors(xml, "xunit2") == []
    props = junit_details(xml)["usage.json::two"]
    assert props["skill_eval.usage.total.tokens"] == str(tokens)
    assert float(props["skill_eval.usage.total.cost"]) == pytest.approx(cost)
    assert props["skill_eval.usage.baseline.cache_read"] == "120"
    assert props["skill_eval.usage.candidate.messages_without_tokens"] == "0"

    # skill-eval view: the result, each group, each run and turn
    view = _view(project, res.name)
    assert f"usage     total: tokens {grand['totalTokens']} (" in view
    assert f"usage     total: tokens {tokens} (" in view
    assert view.count("    usage      tokens ") == 4, "one line per turn"
    candidate_only = _view(project, res.name, "--group", "1", "--variant", "candidate")
    assert f"usage     candidate: tokens {group_usage['candidate']['totalTokens']} (" in candidate_only

    # the step summary reads the same totals
    step = summary_file.read_text(encoding="utf-8")
    assert f"**Cost:** ${grand['cost']:.4f} for {grand['totalTokens']} tokens over 4 pi runs" in step
    assert f"| {tokens} | ${cost:.4f} |" in step
    # the HTML report: the group's row and the batch at a glance
    html = (project / "report.html").read_text(encoding="utf-8")
    assert f'<td class="num">{tokens:,}</td><td class="num">${cost:.4f}</td>' in html
    assert f"<td>{grand['totalTokens']:,}</td><td>${grand['cost']:.4f}</td>" in html


def test_a_provider_that_reports_no_usage_is_unavailable_everywhere_never_zero(
        project: Path, pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    summary_file = project / "step-summary.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary_file))
    gid = _group(project, "silent", _script([{"text": "No usage.", "usage": False}], priced=True))
    result = pytester.runpytest("--skill-eval", gid, "-v", "--junitxml=report.xml", "--skill-eval-html=report.html",
                                *ARGS)
    result.assert_outcomes(passed=1)
    res = only_result(project)
    html = (project / "report.html").read_text(encoding="utf-8")
    assert '<td class="num">unavailable</td><td class="num">unavailable</td>' in html
    assert '<td class="num">0</td>' not in html and "$0.0000" not in html
    for run in _runs(res):
        usage = run["usage"]
        assert all(usage[k] is None for k in (*FIGURES, "cost")), usage
        assert (usage["messages"], usage["messagesWithoutTokens"], usage["messagesWithoutCost"]) == (1, 1, 1)
    summary = read_json(res / "result.json")
    assert summary["usage"]["total"]["totalTokens"] is None and summary["usage"]["total"]["cost"] is None
    assert summary["groups"][0]["usage"]["total"]["cost"] is None

    result.stdout.fnmatch_lines([
        "    usage            tokens unavailable, cost unavailable",
    ])
    result.stdout.fnmatch_lines(["1*silent*passed*complete*complete*unavailable*unavailable*",
                                 "*total*unavailable*unavailable*"])
    props = junit_details(project / "report.xml")[f"{gid}::silent"]
    assert props["skill_eval.usage.total.tokens"] == "unavailable"
    assert props["skill_eval.usage.total.cost"] == "unavailable"
    view = _view(project, res.name)
    assert "usage     total: tokens unavailable, cost unavailable" in view
    assert "tokens 0" not in view and "$0.0000" not in view
    step = summary_file.read_text(encoding="utf-8")
    assert "**Cost:** unavailable for unavailable tokens over 2 pi runs" in step


def test_unpriced_model_has_tokens_but_cost_unavailable_and_partial_sums_say_so(
        project: Path, pytester: pytest.Pytester) -> None:
    """No pricing: pi's cost is 0 whatever was used, so it is unavailable, not $0.00. One of two
    messages without usage: the tokens are the other's, and the sum says one did not report."""
    partial = _script([{"tool_calls": [{"name": "read", "arguments": {"path": "{{cwd}}/missing.md"}}], "usage": False},
                       {"text": "Counted."}], priced=False)
    gid = _group(project, "partial", partial)
    result = pytester.runpytest("--skill-eval", gid, "-v", *ARGS)
    result.assert_outcomes(passed=1)
    res = only_result(project)
    for run in _runs(res):
        usage = run["usage"]
        assert usage["totalTokens"] > 0 and usage["cost"] is None
        assert (usage["messages"], usage["messagesWithoutTokens"], usage["messagesWithoutCost"]) == (2, 1, 2)
    total = read_json(res / "result.json")["usage"]["total"]
    assert (total["messages"], total["messagesWithoutTokens"], total["messagesWithoutCost"]) == (4, 2, 4)
    result.stdout.fnmatch_lines([
        # no cost at all: one usage line, not three, each variant's tokens in it
        f"    usage            tokens {total['totalTokens']} (2 of 4 messages did not report) (baseline *, candidate *), "
        "cost unavailable",
    ])
    result.stdout.fnmatch_lines([f"*partial*{total['totalTokens']} (2 of 4 messages did not report)*unavailable*"])


def test_trials_sum_every_trial_into_the_group_and_result(project: Path, pytester: pytest.Pytester) -> None:
    gid = _group(project, "tried", _script([{"text": "Again."}], priced=True))
    result = pytester.runpytest("--skill-eval", gid, "--skill-eval-trials", "3", "--skill-eval-seed", "usage", "-v",
                                *ARGS)
    result.assert_outcomes(passed=1)
    res = only_result(project)
    group = read_json(res / "groups" / "001-tried" / "group.json")["usage"]
    assert group["runs"] == 6
    for name in VARIANTS:
        trials = [read_json(res / "groups" / "001-tried" / "trials" / f"{n:03d}" / name / "run.json")["usage"]
                  for n in (1, 2, 3)]
        assert group[name]["totalTokens"] == sum(u["totalTokens"] for u in trials)
        assert group[name]["cost"] == pytest.approx(sum(u["cost"] for u in trials))
        assert group[name]["messages"] == 3
    assert read_json(res / "result.json")["usage"]["total"] == group["total"]
    result.stdout.fnmatch_lines([f"    usage total      tokens {group['total']['totalTokens']} (*), cost $*"])
