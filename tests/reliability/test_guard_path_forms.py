"""Every path form pi's read/write/edit accept, through the real host: the guard decides
on exactly the file the tool would open (issue 11, part 1).

One group, both variants, one scripted run each (the corpus and its project are in
``path_forms.py``): every row is tried with read, write and edit. Blocked calls must be
recorded as evidence (the run still completes and is graded); nothing outside the workspace
may be read or written; the shared fixture, the definition root and the counterpart
variant's initial workspace must stay untouched.
"""

from __future__ import annotations

import json

import pytest

from reliability.path_forms import assert_nothing_escaped, assert_variant_contained, plant

pytestmark = pytest.mark.pi


def test_every_path_form_is_decided_on_the_file_the_tool_opens(pytester: pytest.Pytester, pi_host: object,
                                                               tmp_path_factory: pytest.TempPathFactory,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    expectations = [{"id": "no-secret", "kind": "tool-call", "variant": "candidate", "tool": "read",
                     "argumentContains": ["environ"], "expect": "failed"}]
    project = plant(pytester.path, tmp_path_factory.mktemp("outside"), tmp_path_factory.mktemp("scratch"), expectations)
    calls = [(f"{tool}:{label}", tool in allowed) for tool, label, allowed in project.calls]
    monkeypatch.setenv("TMPDIR", str(project.scratch))
    result = pytester.runpytest_subprocess("--skill-eval", "groups/forms.json", "-p", "no:cacheprovider",
                                           "--skill-eval-auth", "auth.json")
    result.assert_outcomes(passed=1)
    (res,) = (p for p in (project.root / ".skill-eval" / "runs").iterdir() if p.is_dir())
    gdir = res / "groups" / "001-forms"
    for variant_name in ("baseline", "candidate"):
        vdir = gdir / variant_name
        assert json.loads((vdir / "run.json").read_text())["state"] == "complete", "blocked attempts are evidence, never crashes"
        recorded = json.loads((vdir / "transcript.json").read_text())["turns"][0]["tool_calls"]
        assert len(recorded) == len(calls)
        own = variant_name == "candidate"
        expected = [(label, not (allowed or (own and label.endswith(":file-counterpart-workspace")))) for label, allowed in calls]
        got = [(label, c["blocked"]) for (label, _), c in zip(calls, recorded, strict=True)]
        assert [g for g, e in zip(got, expected, strict=True) if g != e] == [], "blocked exactly the rows that escape"
        for (label, blocked), c in zip(expected, recorded, strict=True):
            if blocked:
                assert c["result_text"].startswith("skill-eval guard blocked"), (label, c["result_text"])
        assert_variant_contained(project, vdir)
        assert '"readRoots"' not in (vdir / "events.jsonl").read_text(), "the guard's own configuration was read"
        # the variant's final workspace holds only what its own allowed calls made
        final_poison = [p for p in (vdir / "workspace").rglob("*") if p.is_file() and p.read_bytes().startswith(b"POISON")]
        assert final_poison and all("poison-write-" in p.name or "poison-edit-" in p.name for p in final_poison)
    assert_nothing_escaped(project)
