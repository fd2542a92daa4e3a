"""Definitions at launch: a definition that passes ``check`` never crashes the launch.

Issue 26, part 4, through the real host and the real kernel: a prompt over the kernel's
per-argument limit (``MAX_ARG_STRLEN``, 128 KiB) is delivered and graded, one turn and
many; an environment that ``execve`` refuses (E2BIG over ``ARG_MAX``) is that variant's
``infrastructure-failed`` with the kernel's reason, and the next group still runs and
``result.json`` is written; a host that cannot be executed (a missing node, a file without
the execute bit, a file no kernel can load) is a fault with its reason, never a traceback.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any, cast

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pytest_skill_eval.execlimits import MAX_ARG_STRLEN, exec_size, fits_one_exec_string
from pytest_skill_eval.host.driver import run_json, run_rpc
from pytest_skill_eval.host.install import HostInstallation
from pytest_skill_eval.host.launch import LaunchPlan, arg_max, launch_mode

SKILL = "---\nname: target\ndescription: Target skill for launch tests.\n---\nBody.\n"
#: more than the kernel takes as one argument (131072 bytes with its NUL)
BIG = 140 * 1024


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def _group(root: Path, gid: str, prompts: list[str], *, type_: str = "description",
           literal: dict[str, str] | None = None, says: str = "got the tail", tails: list[str] | None = None) -> str:
    """A group whose stand-in says *says* on each turn whose user message holds its tail marker."""
    _write(root / "skills" / "target" / "SKILL.md", SKILL)
    variant = {"source": {"kind": "working-tree"}, "skills": ["skills/target"], "target": 0, "context": []}
    group: dict[str, Any] = {
        "schema_version": 1, "kind": "group", "id": gid, "type": type_,
        "input": {"turns": prompts} if len(prompts) > 1 else {"prompt": prompts[0]},
        "fixture": None, "tools": [],
        "variants": {"baseline": {**variant, "skills": [], "target": None}, "candidate": variant},
        "expectations": [
            {"id": f"{side}-{turn}", "kind": "response-text", "variant": side, "expect": "contains",
             "value": f"{says} {turn}", **({"turn": turn} if type_ == "body" else {})}
            for side in ("baseline", "candidate") for turn in range(1, len(prompts) + 1)
        ],
        "review_questions": [], "model": {"model": f"scripted/{gid}"},
    }
    if literal is not None:
        group["runtime"] = {"host": "pi", "environment": {"literal": literal, "inherit": []}}
    markers = tails or [f"TAIL-{turn}" for turn in range(1, len(prompts) + 1)]
    script = {"schema": "skill-eval-script/1", "turns": [
        {"rules": [{"when": {"user_message_contains": marker}, "steps": [{"text": f"{says} {turn}"}]}],
         "steps": [{"text": "the tail never arrived"}]}
        for turn, marker in enumerate(markers, start=1)
    ]}
    _write(root / "groups" / f"{gid}.json", json.dumps(group))
    _write(root / "groups" / "scripts" / f"{gid}.json", json.dumps(script))
    return f"{gid}.json"


def _suite(root: Path, refs: list[str]) -> None:
    _write(root / "groups" / "suite.json", json.dumps({"schema_version": 1, "kind": "suite", "id": "launch", "groups": refs}))


def _result(root: Path) -> Path:
    """The one stored result; it renders (``skill-eval view``) whatever its runs hold."""
    from pytest_skill_eval.commands.view import render

    (result,) = [p for p in (root / ".skill-eval" / "runs").iterdir() if p.is_dir()]
    assert "== group 1 " in render(str(result), root)
    return result


def _run(result: Path, position: int, gid: str, variant: str) -> dict[str, Any]:
    path = result / "groups" / f"{position:03d}-{gid}" / variant / "run.json"
    return cast(dict[str, Any], json.loads(path.read_text(encoding="utf-8")))


def _transcript(result: Path, position: int, gid: str, variant: str) -> list[dict[str, Any]]:
    path = result / "groups" / f"{position:03d}-{gid}" / variant / "transcript.json"
    return cast(list[dict[str, Any]], json.loads(path.read_text(encoding="utf-8"))["turns"])


# --------------------------------------------------------------------------- the kernel's limits


def test_the_limits_are_the_kernels(tmp_path: Path) -> None:
    """MAX_ARG_STRLEN and the ARG_MAX sum are what a real execve accepts and refuses."""
    true = "/bin/true"
    fits = "x" * (MAX_ARG_STRLEN - 1)
    assert fits_one_exec_string(fits) and not fits_one_exec_string(fits + "x")
    subprocess.run([true, fits], check=True)
    with pytest.raises(OSError) as refused:
        subprocess.run([true, fits + "x"], check=True)
    assert refused.value.errno == 7  # E2BIG
    value = "y" * (MAX_ARG_STRLEN - 3)  # "A=" + value + NUL is one string at the limit
    subprocess.run([true], env={"A": value}, check=True)
    with pytest.raises(OSError):
        subprocess.run([true], env={"A": value + "y"}, check=True)
    # multi-byte text counts in bytes
    assert not fits_one_exec_string("é" * (MAX_ARG_STRLEN // 2))
    assert not fits_one_exec_string("a\x00b")
    # the sum: getconf's ARG_MAX, counted as the kernel counts it
    assert arg_max() == int(subprocess.run(["getconf", "ARG_MAX"], capture_output=True, text=True, check=True).stdout)
    chunk = "z" * 100_000
    env = {f"V{i}": chunk for i in range(arg_max() // 100_000 + 1)}
    assert exec_size([true], env) > arg_max()
    with pytest.raises(OSError) as total:
        subprocess.run([true], env=env, check=True)
    assert total.value.errno == 7
    # exactly at the limit, then one byte over: exec_size counts what the kernel counts
    fewer = dict(list(env.items())[: len(env) - 1])
    fewer["W"] = ""
    fewer["W"] = "w" * (arg_max() - exec_size([true, "arg"], fewer))
    assert exec_size([true, "arg"], fewer) == arg_max()
    subprocess.run([true, "arg"], env=fewer, check=True)
    with pytest.raises(OSError) as over:
        subprocess.run([true, "arg"], env={**fewer, "W": fewer["W"] + "w"}, check=True)
    assert over.value.errno == 7


def test_a_prompt_that_is_no_argument_goes_over_rpc() -> None:
    assert launch_mode(True, ["x" * (MAX_ARG_STRLEN - 1)]) == "json"
    assert launch_mode(True, ["x" * MAX_ARG_STRLEN]) == "rpc"
    assert launch_mode(True, ["é" * (MAX_ARG_STRLEN // 2)]) == "rpc"
    assert launch_mode(True, ["a NUL \x00 inside"]) == "rpc"


def _plan(tmp_path: Path, host: HostInstallation, mode: str = "json", **changes: Any) -> LaunchPlan:
    fields: dict[str, Any] = dict(
        host=host, mode=mode, workspace=tmp_path / "ws", agent_dir=tmp_path / "agent", home=tmp_path / "home",
        skills=(), extensions=(), tools=(), provider=None, model=None, thinking=None, session_dir=None,
        prompts=("Go.",),
    )
    fields.update(changes)
    (tmp_path / "ws").mkdir(exist_ok=True)
    return LaunchPlan(**fields)


def test_a_plan_whose_argv_and_environment_pass_arg_max_moves_to_rpc(tmp_path: Path) -> None:
    host = HostInstallation(node=Path("/bin/true"), cli=Path("/bin/true"), version="1.6.0", managed=False)
    literal = tuple((f"V{i}", "v" * 100_000) for i in range(arg_max() // 100_020))
    without = _plan(tmp_path, host, prompts=("",), literal_env=literal)
    room = arg_max() - exec_size(without.argv(), without.env())
    prompt = "p" * (room + 1)  # one argument that fits the kernel's per-string limit ...
    assert fits_one_exec_string(prompt)
    plan = _plan(tmp_path, host, prompts=(prompt,), literal_env=literal)  # ... but not beside this environment
    assert exec_size(plan.argv(), plan.env()) > arg_max()
    assert plan.fitted().mode == "rpc"
    assert exec_size(plan.fitted().argv(), plan.env()) <= arg_max()
    small = _plan(tmp_path, host, prompts=(prompt[:-2],), literal_env=literal)
    assert small.fitted() is small and small.mode == "json"


# --------------------------------------------------------------------------- a host that cannot start


@pytest.mark.parametrize("what", ["missing node", "no execute bit", "not an executable", "a directory"])
@pytest.mark.parametrize("mode", ["json", "rpc"])
def test_a_host_that_cannot_start_is_a_fault_with_its_reason(tmp_path: Path, what: str, mode: str) -> None:
    node = tmp_path / "node"
    if what == "no execute bit":
        node.write_text("#!/bin/sh\n")
        node.chmod(0o644)
    elif what == "not an executable":
        node.write_bytes(b"\x7fELF garbage")
        node.chmod(0o755)
    elif what == "a directory":
        node.mkdir()
    host = HostInstallation(node=node, cli=tmp_path / "pi.js", version="1.6.0", managed=False)
    plan = _plan(tmp_path, host, mode=mode)
    run = run_json(plan) if mode == "json" else run_rpc(plan, ["Go."])
    assert run.outcome == "infrastructure-failed"
    assert run.failure is not None and run.failure.startswith("the host could not be started: ")
    expected = {"missing node": "No such file or directory", "no execute bit": "Permission denied",
                "not an executable": "Exec format error", "a directory": "Permission denied"}[what]
    assert expected in run.failure and str(node) in run.failure
    assert run.pid is None and run.records == []


def test_an_environment_over_arg_max_is_a_fault_naming_the_sizes(tmp_path: Path) -> None:
    host = HostInstallation(node=Path("/bin/true"), cli=Path("/bin/true"), version="1.6.0", managed=False)
    literal = tuple((f"V{i}", "v" * 100_000) for i in range(arg_max() // 100_000 + 1))
    run = run_rpc(_plan(tmp_path, host, mode="rpc", literal_env=literal), ["Go."])
    assert run.outcome == "infrastructure-failed" and run.failure is not None
    assert "Argument list too long" in run.failure and f"ARG_MAX {arg_max()}" in run.failure


def test_a_nul_that_reaches_execve_anyway_is_a_fault(tmp_path: Path) -> None:
    """Defence in depth: a plan built without the loader still never raises from the launch."""
    host = HostInstallation(node=Path("/bin/true"), cli=Path("/bin/true"), version="1.6.0", managed=False)
    run = run_rpc(_plan(tmp_path, host, mode="rpc", literal_env=(("NAME", "a\x00b"),)), ["Go."])
    assert run.outcome == "infrastructure-failed" and run.failure is not None
    assert "embedded null byte" in run.failure


# --------------------------------------------------------------------------- through the real host


@pytest.fixture
def root(pytester: pytest.Pytester, pi_host: object, monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    scratch = pytester.path / "scratch"
    scratch.mkdir()
    monkeypatch.setenv("TMPDIR", str(scratch))
    return pytester


@pytest.mark.pi
def test_a_one_turn_prompt_over_128k_is_delivered_and_graded(root: pytest.Pytester) -> None:
    """Today: E2BIG from Popen, "evidence could not be persisted", no result.json, no next group."""
    prompt = "Summarise this pasted document.\n" + ("lorem ipsum é " * (BIG // 14)) + " TAIL-1"
    assert len(prompt.encode("utf-8")) > MAX_ARG_STRLEN
    _suite(root.path, [_group(root.path, "big", [prompt]), _group(root.path, "after", ["Short. TAIL-1"])])
    result = root.runpytest_subprocess("--skill-eval", "groups/suite.json", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=2)
    res = _result(root.path)
    assert json.loads((res / "result.json").read_text())["state"] == "complete"
    for variant in ("baseline", "candidate"):
        run = _run(res, 1, "big", variant)
        assert run["state"] == "complete", run["reason"]
        assert run["mode"] == "rpc"  # what ran, said truthfully
        assert prompt not in run["argv"]
        (turn,) = _transcript(res, 1, "big", variant)
        assert turn["prompt"] == prompt and turn["response"] == "got the tail 1"
        assert _run(res, 2, "after", variant)["mode"] == "json"  # a prompt that fits stays an argument


@pytest.mark.pi
def test_many_turns_over_128k_each_are_delivered_and_graded(root: pytest.Pytester) -> None:
    turns = [f"Turn {n}: " + ("x" * BIG) + f" TAIL-{n}" for n in (1, 2, 3)]
    _suite(root.path, [_group(root.path, "many", turns, type_="body")])
    result = root.runpytest_subprocess("--skill-eval", "groups/suite.json", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)
    res = _result(root.path)
    for variant in ("baseline", "candidate"):
        run = _run(res, 1, "many", variant)
        assert run["state"] == "complete", run["reason"]
        assert [t["response"] for t in _transcript(res, 1, "many", variant)] == [
            "got the tail 1", "got the tail 2", "got the tail 3"]


@pytest.mark.pi
def test_a_prompt_with_a_nul_is_delivered_as_written(root: pytest.Pytester) -> None:
    """A NUL cannot be an argument; over RPC it is JSON text like any other character."""
    prompt = "before\x00after TAIL-1"
    _suite(root.path, [_group(root.path, "nul", [prompt])])
    result = root.runpytest_subprocess("--skill-eval", "groups/suite.json", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)
    run = _run(_result(root.path), 1, "nul", "candidate")
    assert run["state"] == "complete" and run["mode"] == "rpc"
    assert _transcript(_result(root.path), 1, "nul", "candidate")[0]["prompt"] == prompt


@pytest.mark.pi
def test_an_environment_execve_refuses_fails_that_group_and_the_next_one_runs(root: pytest.Pytester) -> None:
    """The total environment over ARG_MAX (no one value is too large): infrastructure-failed
    with the kernel's reason, the session goes on and writes result.json."""
    literal = {f"BULK_{i}": "v" * 100_000 for i in range(arg_max() // 100_000 + 1)}
    _suite(root.path, [_group(root.path, "bulky", ["Hello. TAIL-1"], literal=literal),
                       _group(root.path, "after", ["Short. TAIL-1"])])
    result = root.runpytest_subprocess("--skill-eval", "groups/suite.json", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1, errors=1)
    assert "Traceback" not in result.stdout.str() and "evidence could not be persisted" not in result.stdout.str()
    res = _result(root.path)
    for variant in ("baseline", "candidate"):
        run = _run(res, 1, "bulky", variant)
        assert run["state"] == "infrastructure-failed"
        assert run["reason"].startswith("the host could not be started: [Errno 7] Argument list too long")
        assert f"ARG_MAX {arg_max()}" in run["reason"]
        assert _run(res, 2, "after", variant)["state"] == "complete"
    assert json.loads((res / "result.json").read_text())["state"] == "partially-complete"


# --------------------------------------------------------------------------- if it loads, execve takes it


_FILL = st.sampled_from(["v", "é", "😀", "\x00", "=", " ", "\n"])


@st.composite
def _sized_text(draw: st.DrawFn) -> str:
    """Text around the kernel's per-string limit, sometimes with a NUL somewhere."""
    size = draw(st.sampled_from([0, 1, 1000, MAX_ARG_STRLEN // 4 - 10, MAX_ARG_STRLEN // 2 - 3,
                                 MAX_ARG_STRLEN - 20, MAX_ARG_STRLEN - 12, MAX_ARG_STRLEN - 1, MAX_ARG_STRLEN]))
    text = draw(_FILL) * size
    if draw(st.booleans()):
        at = draw(st.integers(0, len(text)))
        text = text[:at] + draw(_FILL) + text[at:]
    return text


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(values=st.lists(_sized_text(), min_size=0, max_size=3), model=_sized_text(),
       provider=st.sampled_from(["openai", "scripted", "a\x00b"]))
def test_a_definition_that_loads_is_one_execve_takes(tmp_path: Path, values: list[str], model: str, provider: str) -> None:
    """Literal values and the model name drawn around the limits, with NULs: whenever the
    loader accepts the document, a real execve of its launch plan succeeds."""
    from pytest_skill_eval.definitions.loading import group_from_document
    from pytest_skill_eval.definitions.rules import check_group_document
    doc = json.loads((Path(__file__).parents[1] / "definitions" / "valid" / "spec-runtime.json").read_text())
    doc["runtime"]["environment"]["literal"] = {f"V{i}": value for i, value in enumerate(values)}
    doc["model"] = {"model": f"{provider}/{model}"}
    if check_group_document(doc):
        return  # refused with a located error: nothing launches
    group = group_from_document(tmp_path / "g.json", doc)
    assert group.model is not None
    true = Path("/bin/true")
    plan = _plan(tmp_path, HostInstallation(node=true, cli=true, version="1.6.0", managed=False), mode="rpc",
                 provider=group.model.provider, model=group.model.model_id, literal_env=group.runtime.environment.literal)
    subprocess.run(plan.argv(), env=plan.env(), check=True)


@pytest.mark.pi
def test_a_skill_path_the_file_system_will_not_open_fails_that_variant_and_the_next_group_runs(
        root: pytest.Pytester) -> None:
    """Today: ENAMETOOLONG escapes as "evidence could not be persisted" and stops the session."""
    _suite(root.path, [_group(root.path, "longpath", ["Hi. TAIL-1"]), _group(root.path, "after", ["Short. TAIL-1"])])
    path = root.path / "groups" / "longpath.json"
    group = json.loads(path.read_text())
    group["variants"]["baseline"].update(skills=["/".join(["a" * 200] * 25)], target=0)
    path.write_text(json.dumps(group))
    result = root.runpytest_subprocess("--skill-eval", "groups/suite.json", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1, errors=1)
    assert "evidence could not be persisted" not in result.stdout.str()
    res = _result(root.path)
    baseline = _run(res, 1, "longpath", "baseline")
    assert baseline["state"] == "invalid"
    assert baseline["reason"].endswith(": cannot be read from the working tree: File name too long")
    assert _run(res, 1, "longpath", "candidate")["state"] == "complete"
    assert _run(res, 2, "after", "candidate")["state"] == "complete"
    assert (res / "result.json").exists()
