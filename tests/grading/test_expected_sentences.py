"""The ``expected`` sentence of every kind and every expect value (what views and JUnit show).

A sentence that says the opposite of the check ("is read" for ``not-read``) misleads a
reviewer reading the evidence, so each one is pinned here.
"""

from __future__ import annotations

from typing import Any

import pytest

from pytest_skill_eval.grading.kinds import describe_expected
from pytest_skill_eval.grading.shapes import EXPECTS, parse_check

from .builders import expectation, group

T = "the target skill skills/target"
CASES: list[tuple[dict[str, Any], str]] = [
    # skill-read
    ({"kind": "skill-read", "expect": "never"}, f"{T} is never read"),
    ({"kind": "skill-read", "expect": "on-turn", "turn": 2}, f"{T} is first read on turn 2"),
    ({"kind": "skill-read", "expect": "by-turn", "turn": 3}, f"{T} is first read on or before turn 3"),
    ({"kind": "skill-read", "expect": "not-before-turn", "turn": 2}, f"{T} is not read before turn 2"),
    # resource-read
    ({"kind": "resource-read", "expect": "read", "resource": "workspace", "path": "a/b.md"},
     "workspace file a/b.md is read on any turn"),
    ({"kind": "resource-read", "expect": "not-read", "resource": "workspace", "path": "a.md", "turn": 2},
     "workspace file a.md is not read on turn 2"),
    ({"kind": "resource-read", "expect": "read", "resource": "skill", "index": 1, "path": "SKILL.md", "turn": 1},
     "file SKILL.md of skill 1 (skills/target) is read on turn 1"),
    ({"kind": "resource-read", "expect": "not-read", "resource": "context", "index": 0, "path": "."},
     "context item 0 (context/contract.md) is not read on any turn"),
    ({"kind": "resource-read", "expect": "read", "resource": "context", "index": 1, "path": "x/y.md"},
     "file x/y.md of context item 1 (context/dir) is read on any turn"),
    # path
    ({"kind": "path", "expect": "exists", "path": "result.json"}, "result.json exists in the workspace at the end of the run"),
    ({"kind": "path", "expect": "absent", "path": "tmp", "turn": 2}, "tmp does not exist in the workspace after turn 2"),
    # changed-paths
    ({"kind": "changed-paths", "expect": "equals", "paths": []}, "no file changes by the end of the run"),
    ({"kind": "changed-paths", "expect": "equals", "paths": ["b", "a"], "turn": 1},
     "exactly these files change by the end of turn 1: a, b"),
    ({"kind": "changed-paths", "expect": "excludes", "paths": ["z", "y/x"]},
     "none of these files change by the end of the run: y/x, z"),
    ({"kind": "changed-paths", "expect": "excludes", "paths": []}, "none of these files change by the end of the run: "),
    # file-text
    ({"kind": "file-text", "expect": "contains", "path": "n.md", "value": "hi"}, 'n.md contains "hi" at the end of the run'),
    ({"kind": "file-text", "expect": "not-contains", "path": "n.md", "value": "x", "turn": 3},
     'n.md does not contain "x" after turn 3'),
    ({"kind": "file-text", "expect": "equals", "path": "n.md", "value": ""}, 'n.md is exactly "" at the end of the run'),
    # json
    ({"kind": "json", "expect": "available", "path": "r.json"}, "r.json exists at the end of the run"),
    ({"kind": "json", "expect": "missing", "path": "r.json", "turn": 1}, "r.json does not exist after turn 1"),
    ({"kind": "json", "expect": "valid", "path": "r.json"}, "r.json is valid JSON at the end of the run"),
    ({"kind": "json", "expect": "malformed", "path": "r.json"}, "r.json exists but is not valid JSON at the end of the run"),
    ({"kind": "json", "expect": "field-present", "path": "r.json", "pointer": "/a"},
     'r.json is JSON with a value at pointer "/a" at the end of the run'),
    ({"kind": "json", "expect": "field-absent", "path": "r.json", "pointer": "/a/0", "turn": 2},
     'r.json is JSON without a value at pointer "/a/0" after turn 2'),
    ({"kind": "json", "expect": "field-equals", "path": "r.json", "pointer": "", "value": {"b": [1, None]}},
     'the value at pointer "" in r.json equals {"b":[1,null]} at the end of the run'),
    # response-text
    ({"kind": "response-text", "expect": "contains", "value": "done"}, 'the final response of the final turn contains "done"'),
    ({"kind": "response-text", "expect": "not-contains", "value": "x", "turn": 1},
     'the final response of turn 1 does not contain "x"'),
    ({"kind": "response-text", "expect": "equals", "value": "ok"}, 'the final response of the final turn is exactly "ok"'),
    # tool-call
    ({"kind": "tool-call", "expect": "called", "tool": "write"}, "a call to write is made"),
    ({"kind": "tool-call", "expect": "succeeded", "tool": "read", "argumentContains": ["a", "b"], "turn": 2},
     'a call to read with arguments containing "a", "b" succeeds on turn 2'),
    ({"kind": "tool-call", "expect": "failed", "tool": "read", "argumentNotContains": ["x"]},
     'a call to read with arguments not containing "x" fails'),
    ({"kind": "tool-call", "expect": "not-called", "tool": "edit", "argumentContains": ["a"],
      "argumentNotContains": ["b", "c"], "turn": 1},
     'no call to edit with arguments containing "a" and arguments not containing "b", "c" is made on turn 1'),
    # context-text
    ({"kind": "context-text", "expect": "contains", "value": "x"},
     'the system prompt of the last model request on the final turn contains "x"'),
    ({"kind": "context-text", "expect": "not-contains", "value": "x", "surface": "provider-context", "request": "first",
      "turn": 2},
     'the provider context of the first model request on turn 2 does not contain "x"'),
    ({"kind": "context-text", "expect": "equals", "value": "x", "request": 3},
     'the system prompt of the model request 3 on the final turn is exactly "x"'),
]


@pytest.mark.parametrize(("raw", "sentence"), CASES, ids=[f"{i}-{r['kind']}-{r['expect']}" for i, (r, _) in enumerate(CASES)])
def test_expected_sentence(raw: dict[str, Any], sentence: str) -> None:
    raw = {"id": "e", "variant": "candidate", **raw}
    g = group([raw])
    check, problems = parse_check(g, expectation(raw))
    assert problems == [] and check is not None
    assert describe_expected(check, g) == sentence


def test_every_kind_and_expect_has_a_sentence_here() -> None:
    covered = {(raw["kind"], raw["expect"]) for raw, _ in CASES}
    assert covered == {(kind, expect) for kind, expects in EXPECTS.items() for expect in expects}


def test_a_long_path_list_is_cut() -> None:
    paths = [f"p{i:02}" for i in range(23)]
    raw = {"id": "e", "variant": "candidate", "kind": "changed-paths", "expect": "excludes", "paths": paths}
    g = group([raw])
    check, _ = parse_check(g, expectation(raw))
    assert check is not None
    sentence = describe_expected(check, g)
    listed = ", ".join(paths[:20])
    assert sentence == f"none of these files change by the end of the run: {listed} and 3 more"
    check20, _ = parse_check(g, expectation({**raw, "paths": paths[:20]}))
    assert check20 is not None
    assert describe_expected(check20, g) == f"none of these files change by the end of the run: {listed}"
