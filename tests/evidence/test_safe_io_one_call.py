"""The one-call path walk of ``evidence.safe_io`` (``openat2``) answers exactly as the walk
one component at a time does, on every kind of entry a hostile result can put on the way.

Each case is read twice, with the one-call walk and with it switched off, and the two
answers (the value, or the error's text) must be equal.
"""

from __future__ import annotations

import os
import socket
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from pytest_skill_eval.errors import EvidenceError
from pytest_skill_eval.evidence import safe_io


def _tree(root: Path, outside: Path) -> None:
    deep = root / "g" / "trials" / "1" / "baseline"
    deep.mkdir(parents=True)
    (deep / "run.json").write_text('{"a": [1, {"b": 2}]}', encoding="utf-8")
    (deep / "workspace").mkdir()
    (deep / "workspace" / "f.txt").write_text("x", encoding="utf-8")
    outside.mkdir()
    (outside / "run.json").write_text('{"stolen": true}', encoding="utf-8")
    (outside / "baseline").mkdir()
    (outside / "baseline" / "run.json").write_text('{"stolen": true}', encoding="utf-8")
    (root / "linked" / "trials").mkdir(parents=True)
    os.symlink(outside, root / "linked" / "trials" / "1")            # a linked trial, far down
    os.symlink(outside, root / "top-link")                           # a linked group, first component
    os.symlink("g", root / "inner-link")                             # a link that stays inside
    (root / "file-dir").mkdir()
    (root / "file-dir" / "plain").write_text("not a directory", encoding="utf-8")
    os.mkfifo(root / "fifo-dir")
    with socket.socket(socket.AF_UNIX) as sock:
        sock.bind(str(root / "sock"))


CASES = [
    "g/trials/1/baseline/run.json",
    "g/trials/1/baseline/workspace/f.txt",
    "g/trials/1/baseline/workspace",
    "g/trials/1/baseline/missing.json",
    "g/trials/9/baseline/run.json",
    "linked/trials/1/baseline/run.json",
    "linked/trials/1/run.json",
    "top-link/baseline/run.json",
    "inner-link/trials/1/baseline/run.json",
    "file-dir/plain/x/run.json",
    "fifo-dir/a/b/run.json",
    "sock/a/b/c",
]


def _answer(call: Callable[[], Any]) -> tuple[str, Any]:
    try:
        return "value", call()
    except (EvidenceError, OSError) as exc:
        return type(exc).__name__, str(exc)


def _answers(root: Path) -> list[tuple[str, Any]]:
    out = []
    for rel in CASES:
        path = root / rel
        out.append(_answer(lambda p=path: safe_io.read_bytes(p, root)))  # type: ignore[misc]
        out.append(_answer(lambda p=path: safe_io.entry_kind(p, root)))  # type: ignore[misc]
        out.append(_answer(lambda p=path: safe_io.list_dir(p, root)))  # type: ignore[misc]
        out.append(_answer(lambda p=path: safe_io.read_json(p, root, missing_ok=True)))  # type: ignore[misc]
    return out


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="openat2 is Linux's")
def test_the_one_call_walk_is_taken_here_and_answers_as_the_component_walk(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = tmp_path / "result"
    root.mkdir()
    _tree(root, tmp_path / "outside")
    if safe_io._openat2() is None:
        pytest.skip("this kernel (or its seccomp filter) refuses openat2: the component walk is the only one")
    one_call = _answers(root)
    monkeypatch.setattr(safe_io, "_openat2", lambda: None)
    component_walk = _answers(root)
    assert one_call == component_walk
    # and the hostile cases were refused, not read: nothing from outside the result came back
    assert not any("stolen" in repr(answer) for answer in one_call)
    assert ("value", b'{"a": [1, {"b": 2}]}') in one_call


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="openat2 is Linux's")
def test_the_one_call_walk_refuses_a_link_swapped_in_below_the_root(tmp_path: Path) -> None:
    root = tmp_path / "result"
    root.mkdir()
    _tree(root, tmp_path / "outside")
    if safe_io._openat2() is None:
        pytest.skip("openat2 refused here")
    trial = root / "g" / "trials" / "1"
    os.rename(trial, root / "g" / "trials" / "moved")
    os.symlink(tmp_path / "outside", trial)  # what a hostile result does after the first read
    with pytest.raises(EvidenceError, match="symbolic link"):
        safe_io.read_bytes(trial / "baseline" / "run.json", root)
