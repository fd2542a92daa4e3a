"""Shards and merge end to end: N shard runs in separate directories, merged, equal the one run.

A four-group suite (the quickstart's two groups, and each again under another id) runs
once on its own and as shards 1/2 and 2/2 (one of them under xdist) in separate copies;
``skill-eval merge`` of the shard results is compared with the single run's result,
normalised as tools/compare_evidence.py normalises two runs of the same code (ids, times,
scratch and root paths): every file is equal, apart from ``merge.json``, which only a merge
writes. view, report and regrade then work on the merged result.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

QUICKSTART = Path(__file__).resolve().parents[2] / "example_suites" / "quickstart"
TOOL = Path(__file__).resolve().parents[2] / "tools" / "compare_evidence.py"

pytestmark = pytest.mark.pi


def _tool() -> ModuleType:
    spec = importlib.util.spec_from_file_location("compare_evidence", TOOL)
    assert spec is not None and spec.loader is not None
    tool = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tool)
    return tool


def _four_group_suite(root: Path) -> None:
    shutil.copytree(QUICKSTART, root, ignore=shutil.ignore_patterns(".skill-eval"))
    refs = []
    for name in ("release-notes-activation", "release-notes-body"):
        group = json.loads((root / "groups" / f"{name}.json").read_text())
        group["id"] = f"{name}-again"
        (root / "groups" / f"{name}-again.json").write_text(json.dumps(group, indent=2) + "\n")
        refs += [f"groups/{name}.json", f"groups/{name}-again.json"]
    suite = json.loads((root / "suite.json").read_text())
    suite["groups"] = refs
    (root / "suite.json").write_text(json.dumps(suite, indent=2) + "\n")


def _pytest(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *args], cwd=root,
                          capture_output=True, text=True)


def _cli(cwd: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "pytest_skill_eval", *args], cwd=cwd, capture_output=True, text=True,
                          env={**os.environ, **(env or {})})


def _result(root: Path) -> Path:
    (found,) = (p for p in (root / ".skill-eval" / "runs").iterdir() if p.is_dir() and not p.name.startswith("."))
    return found


def test_merged_shards_equal_the_single_run(tmp_path: Path, pi_host: object) -> None:
    single = tmp_path / "single"
    _four_group_suite(single)
    done = _pytest(single)
    assert done.returncode == 0, done.stdout + done.stderr
    shards = []
    for index, extra in ((1, ["-n", "2"]), (2, [])):
        root = tmp_path / f"shard-{index}"
        _four_group_suite(root)
        done = _pytest(root, "--skill-eval-shard", f"{index}/2", *extra)
        assert done.returncode == 0, done.stdout + done.stderr
        assert "2 passed" in done.stdout
        shards.append(_result(root))
    for shard in shards:
        selection = json.loads((shard / "selection.json").read_text())
        assert len(selection["groups"]) == 2
        assert [g["position"] for g in selection["shard"]["groups"]] == [1, 2, 3, 4]
        assert json.loads((shard / "result.json").read_text())["shard"]["count"] == 2
    assert {d.name for s in shards for d in (s / "groups").iterdir()} == {
        d.name for d in (_result(single) / "groups").iterdir()}

    merge_root = tmp_path / "merge"
    merge_root.mkdir()
    page = tmp_path / "step-summary.md"
    merged_run = _cli(merge_root, "merge", *(str(s) for s in reversed(shards)), env={"GITHUB_STEP_SUMMARY": str(page)})
    assert merged_run.returncode == 0, merged_run.stdout + merged_run.stderr
    assert "merged 2 shard result(s) into" in merged_run.stdout
    merged = _result(merge_root)
    assert f"## skill-eval result `{merged.name}` (complete)" in page.read_text()
    assert "4 groups: 4 passed" in page.read_text()

    tool = _tool()
    roots = (str(single), *(str(tmp_path / f"shard-{i}") for i in (1, 2)))
    want = tool.digest_result(_result(single), roots)
    got = tool.digest_result(merged, roots, skip=frozenset({"merge.json"}))
    assert sorted(got) == sorted(want)
    assert [name for name in want if want[name] != got[name]] == []
    record = json.loads((merged / "merge.json").read_text())
    assert [s["index"] for s in record["shards"]] == [1, 2]
    # the decision over every shard's comparisons is the one the single run made
    single_decision = json.loads((_result(single) / "result.json").read_text())["decision"]
    merged_decision = json.loads((merged / "result.json").read_text())["decision"]
    assert merged_decision == single_decision and len(merged_decision["comparisons"]) == 4

    view = _cli(merge_root, "view", "latest", "--group", "3", "--variant", "candidate")
    assert view.returncode == 0, view.stdout + view.stderr
    assert "== group 3 release-notes-body (body) [complete]" in view.stdout
    report = _cli(merge_root, "report", merged.name)
    assert report.returncode == 0, report.stderr
    assert (merged / "report.html").is_file()
    regrade = _cli(merge_root, "regrade", merged.name)
    assert regrade.returncode == 0, regrade.stdout + regrade.stderr
    assert regrade.stdout.count("identical to grade.json") == 4

    # the same shard twice, and one missing, is refused with nothing written
    refused = _cli(merge_root, "merge", str(shards[0]), str(shards[0]))
    assert refused.returncode == 4
    assert "shard 1/2 is given twice" in refused.stderr and "shard 2/2 is missing" in refused.stderr
    assert len([p for p in (merge_root / ".skill-eval" / "runs").iterdir() if p.is_dir()]) == 1

    # the merge holds every shard's stored inputs, so it reruns like a single run's result
    rerun = _cli(merge_root, "rerun", merged.name)
    assert rerun.returncode == 0, rerun.stdout + rerun.stderr
    assert "4 passed" in rerun.stdout


def test_merge_exits_as_the_single_run_would_when_a_candidate_fails(tmp_path: Path, pi_host: object) -> None:
    """--skill-eval-fail-on any: the baseline's failed checks fail the groups, in one run and in the merge."""
    roots = []
    for index in (1, 2):
        root = tmp_path / f"shard-{index}"
        shutil.copytree(QUICKSTART, root, ignore=shutil.ignore_patterns(".skill-eval"))
        done = _pytest(root, "--skill-eval-shard", f"{index}/2", "--skill-eval-fail-on", "any")
        assert done.returncode == 1, done.stdout + done.stderr
        roots.append(_result(root))
    merged = _cli(tmp_path, "merge", *(str(r) for r in roots))
    assert merged.returncode == 1, merged.stdout + merged.stderr
    assert merged.stdout.count(" failed ") == 2
