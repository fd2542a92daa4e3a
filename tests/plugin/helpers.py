"""Building blocks of the plugin tests: groups made to pass, fail or break, and report readers.

Every group here runs the real pi host against the scripted stand-in model; description
groups run in JSON mode and take well under a second per variant.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any
from xml.etree import ElementTree

from pytest_skill_eval.host.install import cache_dir

#: The real host cache, read before pytester points HOME at its temporary directory.
HOST_CACHE = cache_dir()
QUICKSTART = Path(__file__).resolve().parents[2] / "example_suites" / "quickstart"
BEFORE = "skills-before-description/release-notes"
AFTER = "skills/release-notes"


def variant(skill: str) -> dict[str, Any]:
    return {"source": {"kind": "working-tree"}, "skills": [skill], "target": 0, "context": []}


def reads_skill(comparison: str = "reads-skill") -> list[dict[str, Any]]:
    return [
        {"id": f"{side}-reads-skill", "kind": "skill-read", "variant": side, "expect": "by-turn", "turn": 1,
         "comparison": comparison}
        for side in ("baseline", "candidate")
    ]


def description_group(group_id: str, baseline: str, candidate: str, expectations: list[dict[str, Any]],
                      model: str = "scripted/release-notes-activation") -> dict[str, Any]:
    return {
        "schema_version": 1,
        "kind": "group",
        "id": group_id,
        "type": "description",
        "input": {"prompt": "Please write release notes for the change we just merged."},
        "fixture": None,
        "tools": ["read"],
        "variants": {"baseline": variant(baseline), "candidate": variant(candidate)},
        "expectations": expectations,
        "review_questions": [],
        "model": {"model": model},
    }


NEVER_SAID = [
    {"id": f"{side}-says-magic", "kind": "response-text", "variant": side, "expect": "contains",
     "value": "a phrase the script never says", "comparison": "says-magic"}
    for side in ("baseline", "candidate")
]

GROUPS: dict[str, dict[str, Any]] = {
    # baseline fails, candidate passes: fail-to-pass
    "improves": description_group("improves", BEFORE, AFTER, reads_skill()),
    # baseline passes, candidate fails: pass-to-fail
    "regresses": description_group("regresses", AFTER, BEFORE, reads_skill()),
    # both fail: fail-to-fail
    "stays-failing": description_group("stays-failing", AFTER, AFTER, NEVER_SAID),
    # the model names a script that does not exist: both variants invalid
    "missing-script": description_group("missing-script", BEFORE, AFTER, reads_skill(),
                                        model="scripted/no-such-script"),
    # a response-text expectation without its value: grade-error after complete runs
    "grade-error": description_group("grade-error", BEFORE, AFTER, [
        {"id": "candidate-says", "kind": "response-text", "variant": "candidate", "expect": "contains"},
    ]),
}


def suite(suite_id: str, groups: list[str]) -> dict[str, Any]:
    return {"schema_version": 1, "kind": "suite", "id": suite_id, "groups": groups}


def write_json(path: Path, value: Any) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(value, indent=2) + "\n", encoding="utf-8")
    return path


def result_dirs(root: Path) -> list[Path]:
    runs = root / ".skill-eval" / "runs"
    return sorted(p for p in runs.iterdir() if p.is_dir()) if runs.is_dir() else []


def only_result(root: Path) -> Path:
    dirs = result_dirs(root)
    assert len(dirs) == 1, dirs
    return dirs[0]


def read_json(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


def junit_cases(xml_path: Path) -> dict[str, ElementTree.Element]:
    """JUnit testcases keyed by ``classname::name``."""
    root = ElementTree.parse(xml_path).getroot()
    return {f"{tc.get('classname')}::{tc.get('name')}": tc for tc in root.iter("testcase")}


def junit_details(xml_path: Path) -> dict[str, dict[str, str]]:
    """The properties of each group in the ``skill-eval details`` suite, keyed by node id."""
    root = ElementTree.parse(xml_path).getroot()
    details = next(s for s in root.findall("testsuite") if s.get("name") == "skill-eval details")
    return {str(block.get("name")): properties(block) for block in details.findall("testsuite")}


def properties(testcase: ElementTree.Element) -> dict[str, str]:
    return {p.get("name", ""): p.get("value", "") for p in testcase.iter("property")}


def verdict_of(testcase: ElementTree.Element) -> str:
    for tag in ("failure", "error", "skipped"):
        if testcase.find(tag) is not None:
            return tag
    return "passed"
