"""``reuse.json`` read back through its schema (a hostile one is a located error) and its one-line wording."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from pytest_skill_eval.errors import EvidenceError
from pytest_skill_eval.evidence.reuse_records import REUSE_FILE, read_reuse, reuse_text


def record(**changes: Any) -> dict[str, Any]:
    found: dict[str, Any] = {
        "source_result": "20261203155149-4aeaaf9f", "source_group": "groups/001-g", "variant": "baseline",
        "reused": True, "reason": None,
        "runs": [{"trial": n, "source": f"groups/001-g/trials/{n:03d}/baseline", "run_sha256": "a" * 64, "objects": 2}
                 for n in (1, 2, 3)],
        "files": {"resources/skills/0/x/SKILL.md": {"sha256": "b" * 64, "mode": "644"}},
    }
    found.update(changes)
    return found


def test_the_wording_names_the_source_and_trials_or_the_refusal() -> None:
    assert reuse_text(record()) == "baseline reused from 20261203155149-4aeaaf9f (groups/001-g, trials 1-3)"
    assert reuse_text(record(runs=record()["runs"][:1])) == ("baseline reused from 20261203155149-4aeaaf9f "
                                                             "(groups/001-g, trial 1)")
    refused = record(reused=False, runs=[], reason="baseline not reused: seed differs: stored 'a', now 'b'")
    assert reuse_text(refused) == "baseline not reused: seed differs: stored 'a', now 'b'"


def test_a_stored_record_reads_back_and_an_absent_one_is_none(tmp_path: Path) -> None:
    assert read_reuse(tmp_path, tmp_path) is None
    (tmp_path / REUSE_FILE).write_text(json.dumps(record()))
    assert read_reuse(tmp_path, tmp_path) == record()


@pytest.mark.parametrize(("change", "pointer"), [
    ({"variant": "candidate"}, "/variant"),
    ({"reused": "yes"}, "/reused"),
    ({"runs": [{"trial": 0, "source": "x", "run_sha256": "a" * 64, "objects": 1}]}, "/runs/0/trial"),
    ({"runs": [{"trial": 1, "source": "x", "run_sha256": "not a digest", "objects": 1}]}, "/runs/0/run_sha256"),
    ({"files": {"x": {"sha256": "b" * 64}}}, "/files/x"),
])
def test_a_misshapen_record_is_a_located_error(tmp_path: Path, change: dict[str, Any], pointer: str) -> None:
    (tmp_path / REUSE_FILE).write_text(json.dumps(record(**change)))
    with pytest.raises(EvidenceError, match="reuse.json") as caught:
        read_reuse(tmp_path, tmp_path)
    assert pointer in str(caught.value)


def test_a_linked_or_special_record_is_refused(tmp_path: Path) -> None:
    (tmp_path / "elsewhere.json").write_text(json.dumps(record()))
    (tmp_path / "linked").mkdir()
    (tmp_path / "linked" / REUSE_FILE).symlink_to(tmp_path / "elsewhere.json")
    with pytest.raises(EvidenceError):
        read_reuse(tmp_path / "linked", tmp_path)
    (tmp_path / "fifo").mkdir()
    os.mkfifo(tmp_path / "fifo" / REUSE_FILE)
    with pytest.raises(EvidenceError):
        read_reuse(tmp_path / "fifo", tmp_path)
