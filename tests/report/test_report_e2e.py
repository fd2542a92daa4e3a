"""The HTML report of real results: the example suites and the hostile suite through the real pi host.

Each suite runs in a pytester subprocess with ``--skill-eval-html`` (or the ini
setting), and the page it wrote is opened in Debian's chromium: it renders every group
with no console error and no network request, and none of the hostile payloads runs.

``SKILL_EVAL_UPDATE_SCREENSHOTS=1`` rewrites the screenshots in ``docs/`` from the
quickstart report.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "example_suites"
HOSTILE = Path(__file__).parent / "hostile"
SCREENSHOTS_ENV = "SKILL_EVAL_UPDATE_SCREENSHOTS"

pytestmark = pytest.mark.pi


def _copy(src: Path, pytester: pytest.Pytester) -> Path:
    shutil.copytree(src, pytester.path, dirs_exist_ok=True, ignore=shutil.ignore_patterns(".skill-eval"))
    return pytester.path


def _result_dir(root: Path) -> Path:
    (result,) = [p for p in (root / ".skill-eval" / "runs").iterdir() if p.is_dir()]
    return result


@pytest.mark.parametrize("suite", ["quickstart", "workflow"])
def test_example_suite_report_renders_cleanly(suite: str, pytester: pytest.Pytester, pi_host: object,
                                              open_report: Any) -> None:
    root = _copy(EXAMPLES / suite, pytester)
    # workflow under xdist: the controller writes the report after result.json
    extra = ["-n", "2"] if suite == "workflow" else []
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--skill-eval-html=out/report.html", *extra)
    result.assert_outcomes(passed=2)
    report = root / "out" / "report.html"
    result.stdout.fnmatch_lines([f"html report: {report}"])
    stored = _result_dir(root) / "report.html"
    assert stored.read_bytes() == report.read_bytes()

    opened = open_report(report)
    page = opened.page
    assert page.locator("#groups tbody tr").count() == 2
    assert "fail-to-pass" in page.inner_text("#overview")
    assert opened.open_all_groups() == 2
    for index in range(2):
        body = page.locator(f"#g{index} .group-body")
        text = body.inner_text()
        for heading in ("For the reviewer", "Comparisons", "What differs between the two targets", "Declared context",
                        "Expectations", "Turns", "Final response", "Workspace changes"):
            assert heading in text, (index, heading)
        assert page.locator(f"#g{index} .turn").count() >= 2
    opened.assert_clean(report.as_uri())

    if suite == "quickstart" and os.environ.get(SCREENSHOTS_ENV):
        fresh = open_report(report)
        fresh.page.screenshot(path=str(REPO / "docs" / "report-overview.png"))
        group = open_report(report, "g1")
        group.page.locator("#g1").screenshot(path=str(REPO / "docs" / "report-group.png"))


def test_ini_setting_writes_the_report_relative_to_the_ini_file(pytester: pytest.Pytester, pi_host: object) -> None:
    root = _copy(EXAMPLES / "quickstart", pytester)
    ini = root / "pytest.ini"
    ini.write_text(ini.read_text() + "skill_eval_html = reports/skill-eval.html\n")
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-q", "-k", "activation")
    result.assert_outcomes(passed=1)
    assert (root / "reports" / "skill-eval.html").is_file()
    result.stdout.fnmatch_lines([f"skill-eval html report: {root / 'reports' / 'skill-eval.html'}"])


def test_hostile_result_runs_none_of_its_payloads(pytester: pytest.Pytester, pi_host: object, open_report: Any) -> None:
    root = _copy(HOSTILE, pytester)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--skill-eval", "suite.json",
                                           "--skill-eval-html=report.html")
    # the candidate's response check fails by design: its observed text quotes a payload too
    result.assert_outcomes(failed=1)
    report = root / "report.html"
    source = report.read_text()
    assert "<script>window.__pwned" not in source and "<img" not in source and "<svg" not in source

    opened = open_report(report)
    assert opened.open_all_groups() == 1
    page = opened.page
    page.locator("details#g0 summary").click()  # close and open again: loaded once, nothing new runs
    page.locator("details#g0 summary").click()
    page.mouse.move(300, 300)
    assert page.evaluate("window.__pwned") is None
    assert page.locator("img, iframe, svg, object, embed, link[rel=stylesheet], a[href^=javascript]").count() == 0
    text = page.inner_text("#g0")
    for shown in ("window.__pwned='text'", "window.__pwned='blocked'", "<img src=x onerror=window.__pwned=1>.md",
                  "window.__pwned='file'", "window.__pwned='response'", "window.__pwned = 'review'",
                  "<b onmouseover=alert(1)>start.md", "window.__pwned = 'skill-body'", "window.__pwned = 'old-body'"):
        assert shown in text, shown
    assert page.locator("#g0 .call-blocked").count() == 2  # the guard block, in both variants
    opened.assert_clean(report.as_uri())


def test_a_trials_result_shows_the_rates_and_the_first_trial_in_full(pytester: pytest.Pytester, pi_host: object,
                                                                   open_report: Any) -> None:
    root = _copy(EXAMPLES / "quickstart", pytester)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--skill-eval-trials", "2",
                                           "--skill-eval-html=out/report.html")
    result.assert_outcomes(passed=2)
    report = root / "out" / "report.html"
    opened = open_report(report)
    assert opened.open_all_groups() == 2
    text = opened.page.locator("#g1 > .group-body").inner_text()
    assert "Trials" in text and "2 of 2 trials ran" in text and "trial 1 is shown in full" in text
    assert "2/2 (100 %, 95 % CI 34-100 %)" in text
    assert "Comparisons in trial 1" in text and "Turns" in text
    assert opened.page.locator("#g1 .turn").count() >= 2
    # every trial opens, not only trial 1: trial 2's own runs and turns load when it is opened
    trials = opened.page.locator("#g1 details.trial")
    assert trials.count() == 2
    assert opened.page.locator("#g1-t2 .turn").count() == 0
    opened.page.locator("#g1-t2 > summary").click()
    opened.page.locator("#g1-t2 .turn").first.wait_for()
    trial_two = opened.page.locator("#g1-t2 > .group-body").inner_text()
    assert "trials/002" in trial_two and "Turns" in trial_two and "What differs" not in trial_two
    assert opened.page.locator("#g1-t2 .turn").count() >= 2
    opened.assert_clean(report.as_uri())
    # a link to a trial opens its group and the trial
    linked = open_report(report, "g0-t2")
    linked.page.locator("#g0-t2 .turn").first.wait_for()
    assert linked.page.locator("#g0").evaluate("d => d.open") and linked.page.locator("#g0-t2").evaluate("d => d.open")
    assert linked.page.locator("#g0-t2 .turn").count() >= 1
    linked.assert_clean(report.as_uri())


def test_the_report_opens_with_the_decision_and_shows_each_groups_pytest_outcome(
        pytester: pytest.Pytester, pi_host: object, open_report: Any) -> None:
    root = _copy(EXAMPLES / "quickstart", pytester)
    suite = json.loads((root / "suite.json").read_text())
    groups = suite["groups"]
    # a third group whose model has no script: both variants invalid, its comparison not-comparable
    broken = json.loads((root / groups[0]).read_text())
    broken["id"] = "no-script"
    broken["model"] = {"model": "scripted/no-such-script"}
    (root / "groups" / "no-script.json").write_text(json.dumps(broken))
    suite["groups"] = [*groups, "groups/no-script.json"]
    (root / "suite.json").write_text(json.dumps(suite))
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--skill-eval-html=out/report.html")
    result.assert_outcomes(passed=2, errors=1)
    report = root / "out" / "report.html"
    stored = json.loads((_result_dir(root) / "result.json").read_text())
    opened = open_report(report)
    page = opened.page
    # the first section after the header is the decision, with its line
    first = page.locator("body > section").first
    assert first.get_attribute("id") == "decision"
    assert page.locator("#decision .decision-line").inner_text() == stored["decision"]["line"]
    assert page.locator("#decisions tbody tr").count() == 3
    outcomes = [page.locator("#groups tbody tr").nth(i).locator(".pytest").inner_text() for i in range(3)]
    assert outcomes == ["passed", "passed", "error"]
    # fail-to-fail is not drawn like not-comparable
    not_comparable = page.locator("#groups .tr-not-comparable").first
    colour = not_comparable.evaluate("e => getComputedStyle(e).color")
    page.evaluate("() => { const s = document.createElement('span'); s.className = 'tr tr-fail-to-fail'; "
                  "s.id = 'probe'; document.body.append(s); }")
    assert page.locator("#probe").evaluate("e => getComputedStyle(e).color") != colour
    opened.assert_clean(report.as_uri())
    # skill-eval report, from the stored result alone, judges the outcomes again the same way
    again = pytester.run(sys.executable, "-m", "pytest_skill_eval", "report", "latest", "-o", "again.html")
    assert again.ret == 0, again.stderr.str()
    reopened = open_report(root / "again.html")
    assert [reopened.page.locator("#groups tbody tr").nth(i).locator(".pytest").inner_text()
            for i in range(3)] == outcomes
