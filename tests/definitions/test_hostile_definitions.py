"""Hostile strings and hostile files: every case ends in a located error or a valid load.

Issue 11, part 5: lone surrogates, over-long path segments, control and bidirectional
formatting characters, FIFOs and other non-regular files, and suites that list suites
used to pass ``check`` and crash (or hang) a run later. The fuzz test mixes those classes
into the spec's examples and asks the loader and ``skill-eval check`` about each one.
"""

from __future__ import annotations

import json
import os
import socket
import stat
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pytest_skill_eval.definitions.loading import (
    definition_kind,
    load_definition,
    load_group,
    load_suite,
    load_suite_groups,
)
from pytest_skill_eval.definitions.model import Group, Suite
from pytest_skill_eval.errors import DefinitionError
from pytest_skill_eval.evidence.layout import group_dir_name
from pytest_skill_eval.paths import MAX_SEGMENT_BYTES, unsafe_character
from pytest_skill_eval.services.check import check_path

from .support import BASES, spec_doc, write_json, write_suite_tree

# --------------------------------------------------------------------------- non-regular files

needs_fifo = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this platform")


def _no_hang(action: Any, seconds: float = 10.0) -> Any:
    """Run *action* in a thread; fail (instead of hanging the suite) if it blocks."""
    outcome: list[Any] = []

    def target() -> None:
        try:
            outcome.append(("value", action()))
        except BaseException as exc:  # noqa: BLE001 - handed back to the test
            outcome.append(("error", exc))

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    thread.join(seconds)
    assert outcome, f"blocked for {seconds}s"
    kind, value = outcome[0]
    if kind == "error":
        raise value
    return value


@needs_fifo
@pytest.mark.parametrize("load", [load_group, load_suite, load_definition])
def test_fifo_definition_is_refused_without_opening_it(tmp_path: Path, load: Any) -> None:
    fifo = tmp_path / "group.json"
    os.mkfifo(fifo)
    with pytest.raises(DefinitionError) as caught:
        _no_hang(lambda: load(fifo, tmp_path))
    assert str(caught.value) == f"{fifo}: /: expected a regular file, found a FIFO (named pipe)"
    assert _no_hang(lambda: definition_kind(fifo)) is None


def test_directory_definition_is_refused(tmp_path: Path) -> None:
    folder = tmp_path / "group.json"
    folder.mkdir()
    with pytest.raises(DefinitionError) as caught:
        load_definition(folder, tmp_path)
    assert str(caught.value) == f"{folder}: /: expected a regular file, found a directory"


@pytest.mark.skipif(not hasattr(socket, "AF_UNIX"), reason="no Unix sockets")
def test_socket_definition_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "s.json"
    server = socket.socket(socket.AF_UNIX)
    try:
        server.bind(str(path))
    except OSError as exc:  # pragma: no cover - path too long for AF_UNIX
        pytest.skip(str(exc))
    try:
        with pytest.raises(DefinitionError) as caught:
            load_definition(path, tmp_path)
        assert str(caught.value) == f"{path}: /: expected a regular file, found a socket"
    finally:
        server.close()


def test_device_definition_is_refused(tmp_path: Path) -> None:
    null = Path(os.devnull)
    if not null.exists() or not stat.S_ISCHR(null.stat().st_mode):
        pytest.skip("no character device")
    link = tmp_path / "null.json"
    link.symlink_to(null)
    # The link leaves the root, so containment refuses it first; read_document itself:
    from pytest_skill_eval.definitions.document import read_document

    with pytest.raises(DefinitionError) as caught:
        read_document(null)
    assert str(caught.value) == f"{null}: /: expected a regular file, found a character device"


@needs_fifo
def test_suite_group_naming_a_fifo_is_located_in_the_suite(tmp_path: Path) -> None:
    suite = write_suite_tree(tmp_path)
    (tmp_path / "groups" / "body-behavior.json").unlink()
    os.mkfifo(tmp_path / "groups" / "body-behavior.json")
    with pytest.raises(DefinitionError) as caught:
        _no_hang(lambda: load_suite(suite, tmp_path))
    assert str(caught.value) == (
        f'{suite}: /groups/1: expected an existing group definition file, found "groups/body-behavior.json" '
        "naming a FIFO (named pipe)"
    )


@needs_fifo
def test_check_refuses_a_fifo_without_hanging(tmp_path: Path) -> None:
    fifo = tmp_path / "group.json"
    os.mkfifo(fifo)
    report, ok = _no_hang(lambda: check_path(Path("group.json"), tmp_path))
    assert not ok
    assert "expected a regular file, found a FIFO (named pipe)" in report


@needs_fifo
def test_collection_refuses_a_fifo_without_hanging(pytester: pytest.Pytester) -> None:
    write_suite_tree(pytester.path)
    os.mkfifo(pytester.path / "fifo.json")
    result = pytester.runpytest_subprocess("--skill-eval", "fifo.json", "--skill-eval-check", "-p", "no:cacheprovider", timeout=60)
    err = result.stderr.str()
    assert "--skill-eval fifo.json: expected a suite or group definition file or a directory, found a FIFO (named pipe)" in err, err
    assert "Traceback" not in result.stdout.str() + err


@needs_fifo
def test_collection_of_a_directory_skips_a_fifo_without_hanging(pytester: pytest.Pytester) -> None:
    write_suite_tree(pytester.path / "defs")
    os.mkfifo(pytester.path / "defs" / "fifo.json")
    result = pytester.runpytest_subprocess("--skill-eval", "defs", "--skill-eval-check", "--collect-only", "-q",
                                           "-p", "no:cacheprovider", timeout=60)
    assert "Traceback" not in result.stdout.str() + result.stderr.str()
    result.stdout.fnmatch_lines(["*suite.json::natural-activation*"])


# --------------------------------------------------------------------------- suites in suites


def test_suite_listing_another_suite_says_so(tmp_path: Path) -> None:
    write_suite_tree(tmp_path)
    inner = spec_doc("suite")
    inner["id"] = "inner"
    write_json(tmp_path / "inner.json", inner)
    outer = spec_doc("suite")
    outer["groups"].append("inner.json")
    path = write_json(tmp_path / "suite.json", outer)
    suite = load_suite(path, tmp_path)
    with pytest.raises(DefinitionError) as caught:
        load_suite_groups(suite, tmp_path)
    assert str(caught.value) == (
        f'{tmp_path / "inner.json"}: /kind: expected "group", found "suite" '
        "(a suite lists group files only; suites do not nest)"
    )


def test_check_reports_a_suite_listing_itself(tmp_path: Path) -> None:
    doc = spec_doc("suite")
    write_suite_tree(tmp_path)
    doc["groups"].append("suite.json")
    write_json(tmp_path / "suite.json", doc)
    report, ok = check_path(Path("suite.json"), tmp_path)
    assert not ok
    assert '/groups/2: expected a group definition file, found "suite.json" naming this suite itself' in report


# --------------------------------------------------------------------------- evidence tree


def test_symlink_into_the_evidence_tree_is_refused(tmp_path: Path) -> None:
    (tmp_path / ".skill-eval" / "runs").mkdir(parents=True)
    (tmp_path / "fixtures").mkdir()
    (tmp_path / "fixtures" / "task").symlink_to(tmp_path / ".skill-eval" / "runs")
    path = write_json(tmp_path / "group.json", spec_doc("body"))
    with pytest.raises(DefinitionError) as caught:
        load_group(path, tmp_path)
    assert str(caught.value) == (
        f'{path}: /fixture: expected a path outside the evidence tree, found "fixtures/task" resolving into ".skill-eval/"'
    )


# --------------------------------------------------------------------------- trailing newlines


@pytest.mark.parametrize(
    ("pointer", "value", "expected"),
    [
        ("id", "retained-artifact-behavior\n", "/id: expected an id"),
        ("model", {"model": "scripted/x\n"}, '/model/model: expected a "provider/model" name'),
    ],
)
def test_patterns_do_not_accept_a_trailing_newline(tmp_path: Path, pointer: str, value: Any, expected: str) -> None:
    doc = spec_doc("body")
    doc[pointer] = value
    path = write_json(tmp_path / "group.json", doc)
    with pytest.raises(DefinitionError, match="found") as caught:
        load_group(path, tmp_path)
    assert f"{path}: {expected}" in str(caught.value)


# --------------------------------------------------------------------------- fuzz

HOSTILE = [
    "\ud800",
    "a\udfffb",
    "\udc80.json",
    "x" * 256,
    "\u00e9" * 128,
    "d/" + "y" * 300,
    "a\u202eb",
    "\u2066x\u2069",
    "\u200e",
    "\u061c",
    "a\x1bb",
    "a\nb",
    "\x7f",
    "\x85",
    "\x00",
    ".skill-eval",
    ".skill-eval/runs/r/result.json",
    "./.SKILL-EVAL/x",
    "/skill:target go",
    "/template",
    "noop,bash",
    "bad tool",
    "read\n",
    "suite.json",
    "groups/../suite.json",
    "inner.json",
    "fifo.json",
    "groups",
    "skills/target",
    "./skills/target",
    "probe",
    "ok-id",
    "a" * 65,
    "",
]
PATH_POINTERS = {
    "description": ["/fixture", "/variants/candidate/skills/-", "/variants/baseline/context/-", "/input/turns/0", "/input/turns/1",
                    "/tools/-", "/id", "/expectations/0/id", "/review_questions/0"],
    "body": ["/fixture", "/variants/candidate/skills/-", "/variants/candidate/context/-", "/input/turns/0", "/input/turns/1",
             "/tools/-", "/id"],
    "runtime": ["/fixture", "/runtime/extensions/0/entry", "/runtime/extensions/0/resources/-", "/tools/-", "/input/turns/1",
                "/variants/baseline/skills/-"],
    "common": ["/input/prompt", "/id", "/fixture"],
    "suite": ["/groups/-", "/groups/0", "/id"],
}  # fmt: skip

hostile_text = st.sampled_from(HOSTILE) | st.builds(
    lambda a, b, c: a + b + c, st.sampled_from(["", "fixtures/", "/", "skills/"]), st.sampled_from(HOSTILE), st.text(max_size=4)
)


def _set(doc: Any, pointer: str, value: Any) -> None:
    tokens = pointer.split("/")[1:]
    node = doc
    for token in tokens[:-1]:
        node = node[int(token)] if isinstance(node, list) else node[token]
    last = tokens[-1]
    if isinstance(node, list):
        if last == "-":
            node.append(value)
        elif int(last) < len(node):
            node[int(last)] = value
    elif isinstance(node, dict):
        node[last] = value


@st.composite
def hostile_documents(draw: st.DrawFn) -> tuple[str, Any]:
    base = draw(st.sampled_from(sorted(PATH_POINTERS)))
    doc = spec_doc(base)
    for _ in range(draw(st.integers(min_value=1, max_value=3))):
        choice = draw(st.integers(min_value=0, max_value=5))
        if choice == 0:  # a hostile key somewhere near the top
            target = doc if not isinstance(doc.get("runtime"), dict) or draw(st.booleans()) else doc["runtime"]
            target[draw(hostile_text)] = draw(hostile_text)
        else:
            _set(doc, draw(st.sampled_from(PATH_POINTERS[base])), draw(hostile_text))
    return base, doc


@pytest.fixture(scope="module")
def fuzz_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("fuzz")
    write_suite_tree(root)
    inner = spec_doc("suite")
    inner["id"] = "inner"
    write_json(root / "inner.json", inner)
    for name in ("skills/target", "skills/support", "fixtures/task", "context/contract.md", "extensions/probe.mjs"):
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        if not (root / name).exists():
            (root / name).write_text("x\n", encoding="utf-8")
    if hasattr(os, "mkfifo"):
        os.mkfifo(root / "fifo.json")
    return root


def _valid_invariants(loaded: Group | Suite) -> None:
    """What a valid load guarantees about every string that reaches paths, views and evidence."""
    strings: list[str] = [loaded.id]
    if isinstance(loaded, Suite):
        strings += [ref.ref for ref in loaded.groups]
        for ref in loaded.groups:
            assert ref.path.name != "fifo.json"
        declared = [ref.ref for ref in loaded.groups]
    else:
        json.dumps(loaded.raw).encode("utf-8")  # no lone surrogate anywhere
        assert len(group_dir_name(999, loaded.id).encode("utf-8")) <= MAX_SEGMENT_BYTES
        declared = [p for v in (loaded.baseline, loaded.candidate) for p in (*v.skills, *v.context)]
        declared += [loaded.fixture] if loaded.fixture else []
        declared += [b.entry for b in loaded.runtime.extensions] + [r for b in loaded.runtime.extensions for r in b.resources]
        for tool in loaded.tools:
            assert tool.isascii() and tool[:1].isalpha() and all(c.isalnum() or c in "_-" for c in tool), tool
        assert len(set(loaded.tools)) == len(loaded.tools)
        assert not any(prompt.startswith("/") for prompt in loaded.prompts)
        for variant in (loaded.baseline, loaded.candidate):
            assert len(set(variant.skills)) == len(variant.skills)
            assert len(set(variant.context)) == len(variant.context)
    for text in strings + declared:
        text.encode("utf-8")
        assert unsafe_character(text) is None, text
    for text in declared:
        assert all(len(part.encode("utf-8")) <= MAX_SEGMENT_BYTES for part in text.split("/")), text
        assert not text.lstrip("./").casefold().startswith(".skill-eval"), text


@settings(max_examples=2000, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(case=hostile_documents())
def test_hostile_definitions_end_in_a_located_error_or_a_valid_load(fuzz_root: Path, case: tuple[str, Any]) -> None:
    base, doc = case
    path = fuzz_root / ("suite.json" if base == "suite" else "mutant.json")
    original = path.read_bytes() if path.exists() else None
    path.write_text(json.dumps(doc), encoding="ascii")  # ASCII JSON: lone surrogates survive as escapes
    try:
        try:
            loaded = _no_hang(lambda: load_definition(path, fuzz_root))
            if isinstance(loaded, Suite):
                loaded = _no_hang(lambda: load_suite_groups(loaded, fuzz_root))[0]
        except DefinitionError as error:
            assert error.problems
            for problem in error.problems:
                assert problem.message.startswith("expected "), problem
                assert problem.pointer == "" or problem.pointer.startswith("/"), problem
            str(error).encode("utf-8")  # printable
        else:
            _valid_invariants(loaded)
        report, _ok = _no_hang(lambda: check_path(path, fuzz_root))
        report.encode("utf-8")
        assert "Traceback" not in report
    finally:
        if original is not None:
            path.write_bytes(original)


def test_check_cli_prints_a_located_surrogate_error(tmp_path: Path) -> None:
    doc = spec_doc("description")
    doc["review_questions"] = ["Why\ud800?"]
    (tmp_path / "group.json").write_text(json.dumps(doc), encoding="ascii")
    result = subprocess.run(
        [sys.executable, "-m", "pytest_skill_eval", "check", "group.json"],
        cwd=tmp_path, capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert result.returncode != 0
    assert '/review_questions/0: expected valid Unicode text, found "Why\\ud800?" with a lone surrogate' in result.stdout
    assert "Traceback" not in result.stdout + result.stderr
    assert "no problems found" not in result.stdout


def test_bases_cover_every_example() -> None:
    assert set(PATH_POINTERS) == set(BASES)
