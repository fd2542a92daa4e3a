"""Host-free: pytest's own JUnit XML, rewritten by the plugin, against the xunit1 and xunit2 schemas.

pytest runs a plain test file here (no skill-eval group, no host): its testcases stand in for
group items, so the rewrite sees every element pytest writes (failure, error, skipped,
properties) without running pi.
"""

from __future__ import annotations

from pathlib import Path
from xml.etree import ElementTree

import pytest

from pytest_skill_eval.plugin.junit import DETAILS_SUITE, GroupCase, clean_classname, relative_path, rewrite_file
from pytest_skill_eval.policy import Entry

from .validate import schema_errors

TESTS = """
import pytest

@pytest.fixture
def broken():
    raise RuntimeError("no host")

def test_passes(record_property):
    record_property("skill_eval.status", "fail-to-pass")
    record_property("skill_eval.evidence", {evidence!r})

def test_fails(record_property):
    record_property("skill_eval.status", "pass-to-fail")
    assert False, "candidate-says-done: fail"

def test_errors(broken):
    pass

def test_skipped():
    pytest.skip("not-selected")
"""

FAMILIES = ["xunit2", "xunit1", "legacy"]


def run_pytest(pytester: pytest.Pytester, family: str, *, subdir: str = "") -> tuple[Path, Path]:
    where = pytester.path / subdir if subdir else pytester.path
    where.mkdir(parents=True, exist_ok=True)
    evidence = pytester.path / ".skill-eval" / "runs" / "r1" / "groups" / "001-g"
    test_file = where / "test_groups.py"
    test_file.write_text(TESTS.format(evidence=str(evidence)), encoding="utf-8")
    xml = pytester.path / "report.xml"
    pytester.runpytest_inprocess(str(test_file), f"--junitxml={xml}", "-o", f"junit_family={family}",
                                 "-p", "no:skill_eval", "-W", "ignore::pytest.PytestWarning")
    return xml, evidence


def cases_for(pytester: pytest.Pytester, subdir: str = "") -> list[GroupCase]:
    prefix = f"{subdir}/" if subdir else ""
    entries = (
        Entry("variant:baseline", "passed", "complete", "baseline complete", (("skill_eval.evidence", str(pytester.path / "b")),)),
        Entry("expectation:baseline-says", "reported", "fail (reported only)", "m", (("skill_eval.status", "fail"),)),
        Entry("expectation:candidate-says", "failed", "fail", "m", (("skill_eval.observed", "bad \x07 bell"),)),
    )
    return [GroupCase(f"{prefix}test_groups.py::{name}", entries)
            for name in ("test_passes", "test_fails", "test_errors", "test_skipped")]


@pytest.mark.parametrize("family", FAMILIES)
def test_pytest_alone_breaks_the_schema_with_testcase_properties(pytester: pytest.Pytester, family: str) -> None:
    """The validator is strict enough to catch what the rewrite fixes."""
    xml, _ = run_pytest(pytester, family)
    errors = schema_errors(xml, family)
    assert errors and all("properties" in e for e in errors), errors


@pytest.mark.parametrize("family", FAMILIES)
def test_rewritten_xml_is_valid_and_counts_one_testcase_per_item(pytester: pytest.Pytester, family: str) -> None:
    xml, evidence = run_pytest(pytester, family)
    rewrite_file(xml, cases_for(pytester), prefix=None, rootdir=pytester.path)
    assert schema_errors(xml, family) == []
    root = ElementTree.parse(xml).getroot()
    first, details = root.findall("testsuite")
    assert [tc.get("name") for tc in first.iter("testcase")] == ["test_passes", "test_fails", "test_errors", "test_skipped"]
    assert (first.get("tests"), first.get("failures"), first.get("errors"), first.get("skipped")) == ("4", "1", "1", "1")
    assert first.find("testcase/properties") is None
    # the details hold no testcase, so nothing is counted twice
    assert details.get("name") == DETAILS_SUITE
    assert (details.get("tests"), details.get("failures"), details.get("errors")) == ("0", "0", "0")
    assert details.find(".//testcase") is None
    blocks = {b.get("name"): {p.get("name"): p.get("value") for p in b.iter("property")} for b in details.findall("testsuite")}
    assert list(blocks) == [c.nodeid for c in cases_for(pytester)]
    passes = blocks["test_groups.py::test_passes"]
    assert passes["skill_eval.status"] == "fail-to-pass"
    assert passes["skill_eval.evidence"] == evidence.relative_to(pytester.path).as_posix()
    assert passes["skill_eval.entry.variant:baseline"] == "passed: complete"
    assert passes["skill_eval.entry.variant:baseline.evidence"] == "b"
    assert passes["skill_eval.entry.expectation:baseline-says"] == "reported: fail (reported only)"
    # neutralised as on every surface (a bare XML escape would be #x07)
    assert passes["skill_eval.entry.expectation:candidate-says.observed"] == "bad \\u0007 bell"


def test_hidden_directory_gives_no_leading_dot(pytester: pytest.Pytester) -> None:
    xml, _ = run_pytest(pytester, "xunit2", subdir=".skill-eval/demo")
    before = {tc.get("classname") for tc in ElementTree.parse(xml).getroot().iter("testcase")}
    assert before == {".skill-eval.demo.test_groups"}  # what pytest alone writes
    rewrite_file(xml, cases_for(pytester, ".skill-eval/demo"), prefix=None, rootdir=pytester.path)
    after = {tc.get("classname") for tc in ElementTree.parse(xml).getroot().iter("testcase")}
    assert after == {"skill-eval.demo.test_groups"}
    assert schema_errors(xml, "xunit2") == []


def test_other_tests_are_left_alone(pytester: pytest.Pytester) -> None:
    xml, _ = run_pytest(pytester, "xunit1")
    rewrite_file(xml, [], prefix=None, rootdir=pytester.path)
    root = ElementTree.parse(xml).getroot()
    assert len(root.findall("testsuite")) == 1  # no details suite without groups
    assert root.find("testsuite/testcase/properties") is not None


@pytest.mark.parametrize(("name", "clean"), [(".skill-eval.suite.json", "skill-eval.suite.json"),
                                             ("a..hidden.suite.json", "a.hidden.suite.json"),
                                             ("suite.json", "suite.json")])
def test_clean_classname(name: str, clean: str) -> None:
    assert clean_classname(name) == clean


def test_relative_path(tmp_path: Path) -> None:
    assert relative_path(str(tmp_path / "a" / "b"), tmp_path) == "a/b"
    assert relative_path("/elsewhere/x", tmp_path) == "/elsewhere/x"
    assert relative_path("already/relative", tmp_path) == "already/relative"


def test_junit_prefix_is_kept_and_matched(pytester: pytest.Pytester) -> None:
    xml, _ = run_pytest(pytester, "xunit2", subdir=".skill-eval/demo")
    root = ElementTree.parse(xml).getroot()
    for tc in root.iter("testcase"):  # what pytest writes with --junit-prefix=ci
        tc.set("classname", "ci." + str(tc.get("classname")))
    ElementTree.ElementTree(root).write(xml, encoding="unicode")
    rewrite_file(xml, cases_for(pytester, ".skill-eval/demo"), prefix="ci", rootdir=pytester.path)
    after = ElementTree.parse(xml).getroot()
    assert {tc.get("classname") for tc in after.iter("testcase")} == {"ci.skill-eval.demo.test_groups"}
    assert after.find("testsuite/testcase/properties") is None
    assert schema_errors(xml, "xunit2") == []
