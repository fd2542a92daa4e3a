"""``skill-eval merge``: what it refuses (every problem at once, nothing written) and what it writes.

The shard results here are written by hand through the evidence records, so no subject
runs; tests/e2e/test_shard_merge.py merges real shard runs and compares with one run.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Literal

import pytest

from pytest_skill_eval import schemas
from pytest_skill_eval.commands.cli import main
from pytest_skill_eval.definitions.sharding import assign_shards
from pytest_skill_eval.evidence import store
from pytest_skill_eval.evidence.records import (
    PlannedGroup,
    ResultGroup,
    ResultRecord,
    SelectionRecord,
    ShardGroup,
    ShardRecord,
    ShardSettings,
)

KEYS = [f"suite.json::group-{i}" for i in range(1, 6)]
SETTINGS = ShardSettings("candidate", 1, None, 1.0, 0.05)


def _split(count: int, keys: list[str] = KEYS) -> dict[str, int]:
    return assign_shards(keys, count)


def write_shard(where: Path, index: int, count: int, *, keys: list[str] = KEYS, fingerprint: str = "sha256:same",
                settings: ShardSettings = SETTINGS, extra_dirs: tuple[str, ...] = (), result: bool = True,
                name: str | None = None, never_started: Literal["not-run", "cancelled"] | None = None) -> Path:
    """A finished shard result (groups without evidence: refusal tests never read them)."""
    split = _split(count, keys)
    res = where / (name or f"2026120206000{index}-0000000{index}")
    groups = res / "groups"
    groups.mkdir(parents=True)
    mine = [(pos, key) for pos, key in enumerate(keys, start=1) if split[key] == index]
    planned = [PlannedGroup(key, pos, key.split("::")[1], f"{pos:03d}-{key.split('::')[1]}") for pos, key in mine]
    for p in planned if never_started is None else ():
        (groups / p.dir).mkdir()
    for extra in extra_dirs:
        (groups / extra).mkdir()
    shard = ShardRecord(index, count, tuple(ShardGroup(k, pos, split[k]) for pos, k in enumerate(keys, start=1)),
                        fingerprint, settings)
    store.write_json(res / "selection.json", SelectionRecord(("baseline", "candidate"), tuple(planned), shard).to_json())
    if result and never_started is not None:
        # pytest stopped (-x) or Ctrl-C came before these groups started: no group directories
        entries = tuple(ResultGroup(None, p.id, p.position, never_started, f"{never_started} before it started", None,
                                    {"baseline": never_started, "candidate": never_started}, {}) for p in planned)
        state: Literal["cancelled", "partially-complete"] = (
            "cancelled" if never_started == "cancelled" else "partially-complete")
        store.write_json(res / "result.json", ResultRecord(res.name, state, entries).to_json())
    elif result:
        entries = tuple(ResultGroup(p.dir, p.id, p.position, "complete", None, "graded",
                                    {"baseline": "complete", "candidate": "complete"}, {}) for p in planned)
        store.write_json(res / "result.json", ResultRecord(res.name, "complete", entries).to_json())
    return res


def merge_cli(cwd: Path, *targets: Path | str, monkeypatch: pytest.MonkeyPatch) -> int:
    monkeypatch.chdir(cwd)
    return main(["merge", *(str(t) for t in targets)])


def _refused(capsys: pytest.CaptureFixture[str], cwd: Path) -> str:
    err = capsys.readouterr().err
    assert err.startswith("skill-eval: error: cannot merge: ")
    assert not (cwd / ".skill-eval").exists(), "a refused merge writes nothing"
    return err


def test_a_missing_shard_is_named_with_its_groups(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    one, two = write_shard(tmp_path / "a", 1, 3), write_shard(tmp_path / "b", 2, 3)
    assert merge_cli(tmp_path, one, two, monkeypatch=monkeypatch) == 4
    err = _refused(capsys, tmp_path)
    missing = [f"{pos:03d} {key}" for pos, key in enumerate(KEYS, start=1) if _split(3)[key] == 3]
    assert f"shard 3/3 is missing (its group(s): {', '.join(missing)}); add its result" in err


def test_a_missing_empty_shard_is_still_missing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    keys = KEYS[:1]
    only = write_shard(tmp_path / "a", 1, 2, keys=keys)
    assert merge_cli(tmp_path, only, monkeypatch=monkeypatch) == 4
    assert "shard 2/2 is missing (it has no groups, but its result is needed to show it ran)" in _refused(capsys, tmp_path)


def test_every_conflict_is_reported_at_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    one = write_shard(tmp_path / "a", 1, 2)
    other = write_shard(tmp_path / "b", 2, 2, fingerprint="sha256:changed", keys=[*KEYS, "suite.json::new"],
                        settings=dataclasses.replace(SETTINGS, fail_on="any", seed="7"))
    assert merge_cli(tmp_path, one, other, monkeypatch=monkeypatch) == 4
    err = _refused(capsys, tmp_path)
    assert "definitions differ: " in err and "every shard must run the same checkout" in err
    assert f"only in {other}: suite.json::new" in err
    assert f"settings differ: --skill-eval-fail-on is 'candidate' in {one}, 'any' in {other}" in err
    assert f"settings differ: --skill-eval-seed is None in {one}, '7' in {other}" in err


def test_shards_with_different_stop_rules_are_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    one, other = write_shard(tmp_path / "a", 1, 2), write_shard(tmp_path / "b", 2, 2)
    summary = json.loads((other / "result.json").read_text())
    summary["provenance"] = {
        "versions": {"pytest-skill-eval": "0.1.0", "python": "3", "pytest": "9"}, "hosts": [], "selection": {},
        "fail_on": "candidate", "trials": 1, "seed": "s", "pass_rate": 1.0, "alpha": 0.05, "provider_timeout_s": 1.0,
        "rerun_infra": 0, "argv": [], "rerun_of": None, "stop": "curtail"}
    (other / "result.json").write_text(json.dumps(summary))
    assert merge_cli(tmp_path, one, other, monkeypatch=monkeypatch) == 4
    assert (f"settings differ: --skill-eval-stop is 'off' in {one}, 'curtail' in {other}"
            in _refused(capsys, tmp_path))


def test_shard_counts_must_agree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                 capsys: pytest.CaptureFixture[str]) -> None:
    one, two = write_shard(tmp_path / "a", 1, 2), write_shard(tmp_path / "b", 2, 3)
    assert merge_cli(tmp_path, one, two, monkeypatch=monkeypatch) == 4
    assert f"shard counts differ: {one} is shard 1/2, {two} is shard 2/3" in _refused(capsys, tmp_path)


def test_the_same_shard_twice(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    one = write_shard(tmp_path / "a", 1, 2)
    again = write_shard(tmp_path / "b", 1, 2)
    two = write_shard(tmp_path / "c", 2, 2)
    assert merge_cli(tmp_path, one, one, two, again, monkeypatch=monkeypatch) == 4
    err = _refused(capsys, tmp_path)
    assert f"shard 1/2 is given twice: {one} (the same result)" in err
    assert f"shard 1/2 is given twice: {one} and {again}" in err
    assert f"is in two shards: {one} and {again}" in err
    assert f"is in two shards: {one} and {one}" not in err, "the same result given twice is one problem"


def test_a_group_in_the_wrong_shard(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                    capsys: pytest.CaptureFixture[str]) -> None:
    theirs = next(pos for pos, key in enumerate(KEYS, start=1) if _split(2)[key] == 2)
    stray = f"{theirs:03d}-group-{theirs}"
    one = write_shard(tmp_path / "a", 1, 2, extra_dirs=(stray, "009-unknown"))
    two = write_shard(tmp_path / "b", 2, 2)
    assert merge_cli(tmp_path, one, two, monkeypatch=monkeypatch) == 4
    err = _refused(capsys, tmp_path)
    assert f"{one} holds group {stray}, which the split assigns to shard 2" in err
    assert f"{one} holds group 009-unknown, which the split assigns to no shard (it is not in the split)" in err
    assert f"group {stray} is in two shards: {one} and {two}" in err


def test_unfinished_and_unsharded_results_are_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    unfinished = write_shard(tmp_path / "a", 1, 2, result=False)
    unsharded = write_shard(tmp_path / "b", 2, 2)
    data = json.loads((unsharded / "selection.json").read_text())
    del data["shard"]
    store.write_json(unsharded / "selection.json", data)
    assert merge_cli(tmp_path, unfinished, unsharded, "no-such-result", monkeypatch=monkeypatch) == 4
    err = _refused(capsys, tmp_path)
    assert f"{unfinished}: no result.json: that shard run did not finish" in err
    assert f"{unsharded}: not a shard result: its selection.json records no shard" in err
    assert "no stored result 'no-such-result'" in err


def test_shards_that_selected_nothing_merge_into_an_empty_result_exit_five(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    shards = [write_shard(tmp_path / "in", i, 2, keys=[]) for i in (1, 2)]
    assert merge_cli(tmp_path, *shards, monkeypatch=monkeypatch) == 5
    out = capsys.readouterr().out
    assert "no groups: no shard selected any group" in out
    (merged,) = (p for p in (tmp_path / ".skill-eval" / "runs").iterdir() if p.is_dir())
    assert (tmp_path / ".skill-eval" / "runs" / ".gitignore").is_file()
    for name, schema in (("selection.json", "evidence-selection"), ("result.json", "evidence-result"),
                         ("merge.json", "evidence-merge")):
        data = json.loads((merged / name).read_text())
        assert schemas.problems(schema, data) == [], name
    assert json.loads((merged / "selection.json").read_text()) == {"variants": ["baseline", "candidate"], "groups": []}
    result = json.loads((merged / "result.json").read_text())
    decision = result.pop("decision")
    assert result == {"result_id": merged.name, "state": "complete", "groups": []}
    assert (decision["decision"], decision["comparisons"]) == ("indecisive", [])
    assert decision["line"] == "indecisive: no comparison to decide on (no group compared both variants)"
    record = json.loads((merged / "merge.json").read_text())
    assert [(s["index"], s["result_id"]) for s in record["shards"]] == [(1, shards[0].name), (2, shards[1].name)]


def test_into_puts_the_merged_result_in_another_directory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    shards = [write_shard(tmp_path / "in", i, 2, keys=[]) for i in (1, 2)]
    monkeypatch.chdir(tmp_path)
    assert main(["merge", "--into", "out", *(str(s) for s in shards)]) == 5
    assert len([p for p in (tmp_path / "out").iterdir() if p.is_dir()]) == 1
    assert not (tmp_path / ".skill-eval").exists()
    assert "merged 2 shard result(s) into" in capsys.readouterr().out


@pytest.mark.parametrize(("first", "code", "state"), [("not-run", 1, "partially-complete"), ("cancelled", 2, "cancelled")])
def test_merge_exits_as_a_stopped_or_cancelled_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                   capsys: pytest.CaptureFixture[str],
                                                   first: Literal["not-run", "cancelled"], code: int,
                                                   state: str) -> None:
    shards = [write_shard(tmp_path / "in", 1, 2, never_started=first),
              write_shard(tmp_path / "in", 2, 2, never_started="not-run")]
    assert merge_cli(tmp_path, *shards, monkeypatch=monkeypatch) == code
    capsys.readouterr()
    (merged,) = (p for p in (tmp_path / ".skill-eval" / "runs").iterdir() if p.is_dir())
    result = json.loads((merged / "result.json").read_text())
    assert result["state"] == state
    assert [g["position"] for g in result["groups"]] == [1, 2, 3, 4, 5], "suite order, across the shards"
    assert schemas.problems("evidence-result", result) == []
