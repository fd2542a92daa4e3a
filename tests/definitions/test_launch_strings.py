"""Definition strings that reach the host's argv or environment (issue 26, part 4).

``execve`` refuses a string with a NUL and a string of ``MAX_ARG_STRLEN`` (128 KiB) or more,
and the whole argv and environment over ``ARG_MAX``. Each definition string that becomes
an argument or an environment string is checked against those limits at load, so
``skill-eval check`` names the field instead of saying "no problems found" before a run that
would crash. Prompts are not limited: one that is no argument goes over RPC.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from pytest_skill_eval.definitions.loading import load_group
from pytest_skill_eval.definitions.rules import check_group_document
from pytest_skill_eval.errors import DefinitionError, ScriptError
from pytest_skill_eval.execlimits import MAX_ARG_STRLEN, MAX_EXEC_TOTAL
from pytest_skill_eval.host.models import ModelRouter
from pytest_skill_eval.services.check import check_path

from .support import apply_edits, spec_doc, write_json

LITERAL = "/runtime/environment/literal"


def _problems(doc: dict[str, Any]) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for problem in check_group_document(doc):
        found.setdefault(problem.pointer, []).append(problem.message)
    return found


def _leaves(node: Any, pointer: str = "") -> list[tuple[str, str]]:
    """Every string value of *node* with its JSON pointer."""
    if isinstance(node, dict):
        return [leaf for key, value in node.items() for leaf in _leaves(value, f"{pointer}/{key}")]
    if isinstance(node, list):
        return [leaf for i, value in enumerate(node) for leaf in _leaves(value, f"{pointer}/{i}")]
    return [(pointer, node)] if isinstance(node, str) else []


#: the fields whose strings reach pi's argv or environment (or a path the host is given)
REACHES_EXEC = re.compile(
    r"^/(model/model|model/thinking|tools/\d+|fixture|variants/\w+/(skills|context)/\d+"
    r"|runtime/extensions/\d+/(entry|resources/\d+)|runtime/environment/(literal/\w+|inherit/\d+)|runtime/host)$"
)


def _with_model(doc: dict[str, Any]) -> dict[str, Any]:
    edited: dict[str, Any] = apply_edits(doc, {"/model": {"model": "openai/gpt-4o", "thinking": "low"}})
    return edited


@pytest.mark.parametrize("base", ["runtime", "body", "description"])
def test_a_nul_in_any_string_that_reaches_execve_is_a_located_error(base: str) -> None:
    """Every string leaf of the spec's examples, with a NUL inside: each one that becomes an
    argument, an environment string or a path is refused at its own pointer."""
    doc = _with_model(spec_doc(base))
    assert check_group_document(doc) == []
    checked = 0
    for pointer, text in _leaves(doc):
        if not REACHES_EXEC.match(pointer):
            continue
        edited = apply_edits(json.loads(json.dumps(doc)), {pointer: text[:1] + "\x00" + text[1:]})
        problems = _problems(edited)
        assert pointer in problems, f"{pointer}: a NUL passed the loader"
        checked += 1
    assert checked >= 5


def test_a_nul_in_an_environment_name_is_a_located_error() -> None:
    for name in ("A\x00B", "A=B", "=A", ""):
        doc = apply_edits(spec_doc("runtime"), {f"{LITERAL}/{name}": "x"})
        problems = _problems(doc)
        assert any(p.startswith(LITERAL) for p in problems), name
        doc = apply_edits(spec_doc("runtime"), {"/runtime/environment/inherit": [name]})
        assert "/runtime/environment/inherit/0" in _problems(doc), name


def test_a_nul_in_a_literal_value_is_named_with_its_place() -> None:
    """Today: "no problems found", then a traceback from Popen at the run."""
    doc = apply_edits(spec_doc("runtime"), {f"{LITERAL}/PROBE_MODE": "inj\x00ection"})
    assert _problems(doc) == {f"{LITERAL}/PROBE_MODE": [
        "expected a value without NUL characters (the kernel ends every environment string at its first NUL), "
        'found "inj\\u0000ection" with a NUL at character 4']}


@pytest.mark.parametrize("char", ["v", "é", "😀"])
def test_a_literal_value_too_large_for_one_environment_string_is_a_located_error(char: str) -> None:
    """NAME=value and its NUL must fit MAX_ARG_STRLEN; counted in UTF-8 bytes, at the boundary."""
    room = MAX_ARG_STRLEN - len("PROBE_MODE=") - 1
    width = len(char.encode())
    fits = char * (room // width)
    doc = apply_edits(spec_doc("runtime"), {f"{LITERAL}/PROBE_MODE": fits})
    assert _problems(doc) == {}
    over = fits + "v" * (room - len(fits.encode()) + 1)
    doc = apply_edits(spec_doc("runtime"), {f"{LITERAL}/PROBE_MODE": over})
    assert _problems(doc) == {f"{LITERAL}/PROBE_MODE": [
        f"expected a value of at most {room} bytes (the kernel takes at most {MAX_ARG_STRLEN} bytes per environment "
        f"string, NAME=value and its closing NUL: Linux MAX_ARG_STRLEN), found {room + 1} bytes (UTF-8); put a long "
        "text in a fixture file instead"]}


def test_literal_values_no_kernel_takes_in_all_are_a_located_error() -> None:
    """Each value fits; together they pass the most any Linux execve takes (6 MiB)."""
    count = MAX_EXEC_TOTAL // 120_000 + 1
    literal = {f"BULK_{i}": "v" * 120_000 for i in range(count)}
    problems = _problems(apply_edits(spec_doc("runtime"), {f"{LITERAL}": literal}))
    assert list(problems) == [LITERAL]
    assert problems[LITERAL][0].startswith(f"expected literal values of at most {MAX_EXEC_TOTAL} bytes in all")
    fewer = dict(list(literal.items())[: count - 2])
    assert _problems(apply_edits(spec_doc("runtime"), {f"{LITERAL}": fewer})) == {}


@pytest.mark.parametrize("model", [
    "openai/gpt\x00-4o",
    "open\x00ai/gpt-4o",
    "scripted/demo\x00",
])
def test_a_nul_in_the_model_name_is_a_located_error(model: str) -> None:
    (message,) = _problems(apply_edits(spec_doc("runtime"), {"/model": {"model": model}}))["/model/model"]
    assert message.startswith("expected a model name without NUL characters")


def test_a_model_id_too_large_for_one_argument_is_a_located_error() -> None:
    fits = "m" * (MAX_ARG_STRLEN - 1)
    assert _problems(apply_edits(spec_doc("runtime"), {"/model": {"model": f"openai/{fits}"}})) == {}
    (message,) = _problems(apply_edits(spec_doc("runtime"), {"/model": {"model": f"openai/{fits}m"}}))["/model/model"]
    assert message.startswith(f"expected a provider and model id of at most {MAX_ARG_STRLEN - 1} bytes each")
    assert message.endswith(f"with a part of {MAX_ARG_STRLEN} bytes")


@pytest.mark.parametrize("name", ["../secret", "a/../../x", "/etc/passwd", "a\\b", "a//b", ".", "a/\u202eb"])
def test_a_scripted_name_that_leaves_scripts_is_a_located_error(name: str) -> None:
    (message,) = _problems(apply_edits(spec_doc("runtime"), {"/model": {"model": f"scripted/{name}"}}))["/model/model"]
    assert message.startswith('expected "scripted/<name>" with <name> a script name below "scripts/"')


def test_scripted_names_below_scripts_load() -> None:
    for name in ("demo", "sub/demo", "sub/../demo", "v1.2"):
        assert _problems(apply_edits(spec_doc("runtime"), {"/model": {"model": f"scripted/{name}"}})) == {}


def test_prompts_are_not_limited_they_go_over_rpc() -> None:
    """A prompt with a NUL or over 128 KiB loads: the launch sends it over RPC, not as an argument."""
    doc = apply_edits(spec_doc("runtime"), {"/input/turns/0": "a\x00b", "/input/turns/1": "x" * (MAX_ARG_STRLEN * 2)})
    assert _problems(doc) == {}


# --------------------------------------------------------------------------- through check, with files


def _scripted_group(root: Path, model: str) -> Path:
    (root / "skills" / "t").mkdir(parents=True, exist_ok=True)
    (root / "skills" / "t" / "SKILL.md").write_text("---\nname: t\ndescription: T.\n---\nBody.\n")
    variant = {"source": {"kind": "working-tree"}, "skills": ["skills/t"], "target": 0, "context": []}
    return write_json(root / "groups" / "g.json", {
        "schema_version": 1, "kind": "group", "id": "g", "type": "description", "input": {"prompt": "Hi."},
        "fixture": None, "tools": [], "variants": {"baseline": variant, "candidate": variant},
        "expectations": [], "review_questions": [], "model": {"model": model},
        "runtime": {"host": "pi", "environment": {"literal": {"NOTE": "a\x00b", "LONG": "x" * MAX_ARG_STRLEN},
                                                  "inherit": []}},
    })


def test_check_names_each_string_execve_would_refuse(tmp_path: Path) -> None:
    """Today: "no problems found" (the NUL and the oversize value pass)."""
    path = _scripted_group(tmp_path, "openai/gpt-4o")
    report, ok = check_path(path.relative_to(tmp_path), tmp_path)
    assert not ok
    assert f"{path}: {LITERAL}/NOTE: expected a value without NUL characters" in report
    assert f"{path}: {LITERAL}/LONG: expected a value of at most" in report
    with pytest.raises(DefinitionError) as refused:
        load_group(path, tmp_path)
    assert [p.pointer for p in refused.value.problems] == [f"{LITERAL}/LONG", f"{LITERAL}/NOTE"]


def test_a_script_reached_through_a_symlink_out_of_the_root_is_refused(tmp_path: Path) -> None:
    root = tmp_path / "root"
    outside = tmp_path / "outside.json"
    outside.write_text(json.dumps({"schema": "skill-eval-script/1", "turns": [{"steps": [{"text": "hi"}]}]}))
    path = _scripted_group(root, "scripted/demo")
    doc = json.loads(path.read_text())
    del doc["runtime"]
    write_json(path, doc)
    (root / "groups" / "scripts").mkdir()
    (root / "groups" / "scripts" / "demo.json").symlink_to(outside)
    group = load_group(path, root)
    with pytest.raises(ScriptError, match=r"resolves to .*outside\.json, outside the definition root"):
        ModelRouter(root).find_script(group, "demo")
    report, ok = check_path(path.relative_to(root), root)
    assert not ok
    assert "/model/model" in report and "outside the definition root" in report
    # a script directory the API caller configured is trusted, links into it included
    assert ModelRouter(root, [tmp_path]).find_script(group, "demo") == root / "groups" / "scripts" / "demo.json"
    # a whole scripts/ directory linked out of the root is the same escape
    (root / "groups" / "scripts" / "demo.json").unlink()
    (root / "groups" / "scripts").rmdir()
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "elsewhere" / "demo.json").write_text(outside.read_text())
    (root / "groups" / "scripts").symlink_to(tmp_path / "elsewhere")
    with pytest.raises(ScriptError, match="outside the definition root"):
        ModelRouter(root).find_script(group, "demo")


def test_a_group_built_without_the_loader_still_cannot_name_a_script_outside(tmp_path: Path) -> None:
    path = _scripted_group(tmp_path, "scripted/demo")
    doc = json.loads(path.read_text())
    del doc["runtime"]
    write_json(path, doc)
    group = load_group(path, tmp_path)
    (tmp_path / "secret.json").write_text("{}")
    with pytest.raises(ScriptError, match="names no script below scripts/"):
        ModelRouter(tmp_path).find_script(group, "../../secret")


def test_check_names_an_environment_over_this_machines_arg_max(tmp_path: Path) -> None:
    """Each value fits and the total is under what any kernel could take, but not under this
    machine's ARG_MAX: the pre-run check says the run would be infrastructure-failed."""
    from pytest_skill_eval.host.launch import arg_max

    path = _scripted_group(tmp_path, "openai/gpt-4o")
    doc = json.loads(path.read_text())
    doc["runtime"]["environment"]["literal"] = {f"BULK_{i}": "v" * 100_000 for i in range(arg_max() // 100_000 + 1)}
    write_json(path, doc)
    load_group(path, tmp_path)  # it loads: the limit is this machine's, not the definition's
    report, ok = check_path(path.relative_to(tmp_path), tmp_path)
    assert not ok
    (line,) = [line for line in report.splitlines() if "environment" in line and "ARG_MAX" in line]
    assert "/runtime/environment" in line and f"over this machine's ARG_MAX of {arg_max()}" in line
    assert "infrastructure-failed" in line
    doc["runtime"]["environment"]["literal"] = {"SMALL": "v"}
    write_json(path, doc)
    assert "ARG_MAX" not in check_path(path.relative_to(tmp_path), tmp_path)[0]
