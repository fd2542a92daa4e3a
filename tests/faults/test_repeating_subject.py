"""No-progress detection of a subject that repeats itself, through the real host.

The scripted stand-in plays a model that loops (the same ``read`` again and again; writing
a file's same bytes and reading it back) and one that works long but keeps changing
something (the same tool on other files; a write whose content changes each time). The
first kind is stopped after K repetitions and its cycle recorded; the second never is.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any, cast

import psutil
import pytest

pytestmark = pytest.mark.pi

SKILL = "---\nname: target\ndescription: Target skill for loop tests.\n---\nBody.\n"


@pytest.fixture
def root(pytester: pytest.Pytester, pi_host: object, monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    scratch = pytester.path / "scratch"
    scratch.mkdir()
    monkeypatch.setenv("TMPDIR", str(scratch))
    return pytester


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def _call(name: str, **arguments: Any) -> dict[str, Any]:
    return {"tool_calls": [{"name": name, "arguments": arguments}]}


def _setup(root: Path, gid: str, steps: list[dict[str, Any]], tools: list[str],
           runtime: dict[str, Any] | None = None, *, type_: str = "body", turns: int = 1) -> None:
    _write(root / "skills" / "target" / "SKILL.md", SKILL)
    _write(root / "fixture" / "notes.txt", "first notes\n")
    variant = {"source": {"kind": "working-tree"}, "skills": ["skills/target"], "target": 0, "context": []}
    group = {
        "schema_version": 1, "kind": "group", "id": gid, "type": type_,
        "input": {"prompt": "Go."} if turns == 1 else {"turns": [f"Go {t}." for t in range(turns)]},
        "fixture": "fixture", "tools": tools,
        "variants": {"baseline": {**variant, "skills": [], "target": None}, "candidate": variant},
        "expectations": [],
        "review_questions": [], "model": {"model": f"scripted/{gid}"},
    }
    if runtime is not None:
        group["runtime"] = runtime
    _write(root / "groups" / f"{gid}.json", json.dumps(group))
    _write(root / "groups" / "scripts" / f"{gid}.json",
           json.dumps({"schema": "skill-eval-script/1", "turns": [{"steps": [*steps, {"text": "done"}]}] * turns}))


def _result(root: Path) -> Path:
    (result,) = [p for p in (root / ".skill-eval" / "runs").iterdir() if p.is_dir()]
    from pytest_skill_eval.commands.view import render

    assert "== group 1 " in render(str(result), root)  # every record is read back through its schema
    return result


def _run(result: Path, gid: str) -> dict[str, Any]:
    return cast(dict[str, Any], json.loads((result / "groups" / f"001-{gid}" / "candidate" / "run.json").read_text()))


def _tool_ends(result: Path, gid: str) -> int:
    events = (result / "groups" / f"001-{gid}" / "candidate" / "events.jsonl").read_text().splitlines()
    return sum(1 for line in events if json.loads(line).get("type") == "tool_execution_end")


@pytest.mark.parametrize("type_", ["body", "description"])  # pi in RPC mode, and in JSON mode
def test_the_same_read_again_and_again_is_stopped_as_no_progress(
    root: pytest.Pytester, processes_in: Callable[[Path], list[psutil.Process]], type_: str
) -> None:
    _setup(root.path, "reads", [_call("read", path="notes.txt")] * 30, ["read"], type_=type_)
    result = root.runpytest_subprocess("--skill-eval", "groups/reads.json", "-p", "no:cacheprovider",
                                       "--skill-eval-variant", "candidate", "--skill-eval-repeat-limit", "4")
    result.assert_outcomes(errors=1)
    res = _result(root.path)
    run = _run(res, "reads")
    assert run["state"] == "infrastructure-failed"
    assert run["reason"] == ('no progress: the subject repeated the same tool call 4 times in a row with the same '
                             'results and an unchanged workspace (read {"path":"notes.txt"}) (repeating subject)')
    loop = run["no_progress"]
    assert loop["kind"] == "repeated-tool-calls" and loop["count"] == 4 and loop["period"] == 1
    assert [(c["tool"], c["arguments"], c["is_error"]) for c in loop["cycle"]] == [("read", {"path": "notes.txt"}, False)]
    # stopped at once (pi may finish a call or two while it is being reaped), not played to the end
    assert 4 <= _tool_ends(res, "reads") < 8
    transcript = json.loads((res / "groups" / "001-reads" / "candidate" / "transcript.json").read_text())
    assert transcript["turns"][0]["settled"] is False and len(transcript["turns"][0]["tool_calls"]) >= 4
    assert processes_in(root.path / "scratch") == []


def test_writing_the_same_bytes_and_reading_them_back_is_stopped(root: pytest.Pytester) -> None:
    cycle = [_call("write", path="out.txt", content="same\n"), _call("read", path="out.txt")]
    _setup(root.path, "cycle", cycle * 15, ["read", "write"])
    root.makeini("[pytest]\nskill_eval_repeat_limit = 3\n")
    result = root.runpytest_subprocess("--skill-eval", "groups/cycle.json", "-p", "no:cacheprovider",
                                       "--skill-eval-variant", "candidate")
    result.assert_outcomes(errors=1)
    res = _result(root.path)
    run = _run(res, "cycle")
    assert run["state"] == "infrastructure-failed"
    loop = run["no_progress"]
    assert loop["count"] == 3 and loop["period"] == 2
    assert sorted(c["tool"] for c in loop["cycle"]) == ["read", "write"]
    assert "the same cycle of 2 tool calls 3 times" in run["reason"]
    assert json.loads((res / "result.json").read_text())["provenance"]["repeat_limit"] == 3
    assert 6 <= _tool_ends(res, "cycle") < 10
    # the workspace as it was when the run was stopped is kept as evidence
    assert (res / "groups" / "001-cycle" / "candidate" / "workspace" / "out.txt").read_text() == "same\n"


def test_the_reported_loop_a_refused_edit_of_the_skill_then_a_read_is_stopped(root: pytest.Pytester) -> None:
    # issue 29's report: the guard refuses an edit of the delivered skill; the model writes it
    # again and reads it back, again and again
    skill = "{{delivered.location}}"
    cycle = [_call("edit", path=skill, edits=[{"oldText": "Body", "newText": "Better"}]), _call("read", path=skill)]
    _setup(root.path, "refused", cycle * 15, ["read", "edit"])
    result = root.runpytest_subprocess("--skill-eval", "groups/refused.json", "-p", "no:cacheprovider",
                                       "--skill-eval-variant", "candidate")  # the default limit, 5
    result.assert_outcomes(errors=1)
    res = _result(root.path)
    loop = _run(res, "refused")["no_progress"]
    assert loop["count"] == 5 and loop["period"] == 2
    assert {c["tool"]: c["is_error"] for c in loop["cycle"]} == {"edit": True, "read": False}
    assert 10 <= _tool_ends(res, "refused") < 14


def test_a_long_subject_that_keeps_changing_something_is_never_stopped(root: pytest.Pytester) -> None:
    _write(root.path / "fixture" / "more.txt", "more\n")
    steps = []
    for i in range(8):
        steps.append(_call("read", path="notes.txt", offset=1 + i % 2, limit=1 + i))  # same tool, other arguments
        steps.append(_call("write", path="out.txt", content=f"version {i}\n"))  # a changing file
        steps.append(_call("read", path="out.txt"))
    _setup(root.path, "busy", steps, ["read", "write"])
    result = root.runpytest_subprocess("--skill-eval", "groups/busy.json", "-p", "no:cacheprovider",
                                       "--skill-eval-variant", "candidate", "--skill-eval-repeat-limit", "2")
    result.assert_outcomes(passed=1)
    res = _result(root.path)
    run = _run(res, "busy")
    assert run["state"] == "complete" and "no_progress" not in run
    assert _tool_ends(res, "busy") == 24
    assert (res / "groups" / "001-busy" / "candidate" / "workspace" / "out.txt").read_text() == "version 7\n"


def test_the_recorded_arguments_are_redacted_like_all_evidence(root: pytest.Pytester,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    secret = "loop-secret-4f1c9a"
    monkeypatch.setenv("LOOP_SECRET", secret)
    runtime = {"host": "pi", "session": False, "extensions": [],
               "environment": {"literal": {}, "inherit": ["LOOP_SECRET"]}}
    _setup(root.path, "secret", [_call("read", path=f"{secret}.txt")] * 10, ["read"], runtime)
    result = root.runpytest_subprocess("--skill-eval", "groups/secret.json", "-p", "no:cacheprovider",
                                       "--skill-eval-variant", "candidate", "--skill-eval-repeat-limit", "3")
    result.assert_outcomes(errors=1)
    res = _result(root.path)
    raw = (res / "groups" / "001-secret" / "candidate" / "run.json").read_text()
    assert secret not in raw
    run = json.loads(raw)
    assert run["no_progress"]["cycle"][0]["arguments"] == {"path": "<redacted>.txt"}
    assert "<redacted>.txt" in run["reason"]


def test_a_new_turn_starts_the_count_afresh(root: pytest.Pytester) -> None:
    # three identical reads in each of two turns: six in a row, but the second prompt is progress
    _setup(root.path, "turns", [_call("read", path="notes.txt")] * 3, ["read"], turns=2)
    result = root.runpytest_subprocess("--skill-eval", "groups/turns.json", "-p", "no:cacheprovider",
                                       "--skill-eval-variant", "candidate", "--skill-eval-repeat-limit", "4")
    result.assert_outcomes(passed=1)
    res = _result(root.path)
    assert _run(res, "turns")["state"] == "complete"
    assert _tool_ends(res, "turns") == 6


def test_zero_switches_the_check_off(root: pytest.Pytester) -> None:
    _setup(root.path, "off", [_call("read", path="notes.txt")] * 6, ["read"])
    result = root.runpytest_subprocess("--skill-eval", "groups/off.json", "-p", "no:cacheprovider",
                                       "--skill-eval-variant", "candidate", "--skill-eval-repeat-limit", "0")
    result.assert_outcomes(passed=1)
    assert _run(_result(root.path), "off")["state"] == "complete"


@pytest.mark.parametrize("value", ["1", "-2", "five", "2.5"])
def test_a_bad_limit_is_a_usage_error_naming_the_option(root: pytest.Pytester, value: str) -> None:
    _setup(root.path, "bad", [], ["read"])
    result = root.runpytest_subprocess("--skill-eval", "groups/bad.json", "-p", "no:cacheprovider",
                                       f"--skill-eval-repeat-limit={value}")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([f"*--skill-eval-repeat-limit expects a whole number of repetitions of at least 2, "
                                 f"or 0 to switch the check off (e.g. 5), found {value!r}*"])
