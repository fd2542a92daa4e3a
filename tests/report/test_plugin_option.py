"""``--skill-eval-html`` and ``skill_eval_html`` without the pi host.

A suite entry whose group file does not load is recorded (``group.json`` of an invalid
entry, ``result.json``) without starting any subject, which is enough to check where the
report goes and that a report that cannot be written leaves the run's outcome alone.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

SUITE = {"schema_version": 1, "kind": "suite", "id": "broken", "groups": ["groups/missing.json"]}


@pytest.fixture
def root(pytester: pytest.Pytester) -> Path:
    (pytester.path / "suite.json").write_text(json.dumps(SUITE))
    (pytester.path / "groups").mkdir()
    (pytester.path / "groups" / "missing.json").write_text('{"schema_version": 1, "kind": "group"}')
    return pytester.path


def _result(root: Path) -> Path:
    (result,) = [p for p in (root / ".skill-eval" / "runs").iterdir() if p.is_dir()]
    return result


def test_option_writes_the_report_and_stores_a_copy(root: Path, pytester: pytest.Pytester) -> None:
    run = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--skill-eval", "suite.json",
                                        "--skill-eval-html=out/report.html")
    assert run.ret == 1  # the entry is an error
    report = root / "out" / "report.html"
    run.stdout.fnmatch_lines([f"html report: {report}"])
    assert (_result(root) / "report.html").read_bytes() == report.read_bytes()
    page = report.read_text()
    assert "invalid" in page and "Content-Security-Policy" in page


def test_ini_setting_is_relative_to_the_ini_file(root: Path, pytester: pytest.Pytester) -> None:
    (root / "pytest.ini").write_text("[pytest]\nskill_eval_paths = suite.json\nskill_eval_html = reports/r.html\n")
    run = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-q")
    assert run.ret == 1
    run.stdout.fnmatch_lines([f"skill-eval html report: {root / 'reports' / 'r.html'}"])
    assert (root / "reports" / "r.html").is_file()


def test_no_report_unless_asked(root: Path, pytester: pytest.Pytester) -> None:
    run = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--skill-eval", "suite.json")
    assert run.ret == 1
    assert not (_result(root) / "report.html").exists()
    assert "html report" not in run.stdout.str()


def test_a_report_that_cannot_be_written_leaves_the_outcome_alone(root: Path, pytester: pytest.Pytester) -> None:
    (root / "taken").mkdir()  # a directory where the file should go
    run = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--skill-eval", "suite.json", "--skill-eval-html=taken")
    assert run.ret == 1  # as without the option
    run.stdout.fnmatch_lines([f"skill-eval: the HTML report could not be written to {root / 'taken'}: *"])
    assert (_result(root) / "result.json").is_file()
    assert (_result(root) / "report.html").is_file(), "the copy in the result is written first"
    assert "html report:" not in run.stdout.str()
