"""A result you can reproduce and inspect later: stored inputs, provenance, ``skill-eval rerun``.

Every run here goes through the real pi host and the scripted stand-in model.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from pytest_skill_eval.redaction import MARKER

from .helpers import AFTER, BEFORE, GROUPS, read_json, result_dirs, suite, write_json

pytestmark = pytest.mark.pi


def _runs(result_dir: Path) -> dict[str, dict[str, Any]]:
    return {f"{p.parent.parent.name}/{p.parent.name}": read_json(p)
            for p in sorted(result_dir.glob("groups/*/*/run.json"))}


def _objects(result_dir: Path) -> list[Path]:
    return sorted(p for p in (result_dir / "objects").rglob("*") if p.is_file())


def _object(result_dir: Path, digest: str) -> bytes:
    return (result_dir / "objects" / digest[:2] / digest).read_bytes()


def _verdicts(result_dir: Path) -> dict[str, Any]:
    summary = read_json(result_dir / "result.json")
    return {g["id"]: (g["state"], g["variants"], g["comparisons"]) for g in summary["groups"]}


def test_the_store_holds_exactly_what_each_variant_got_once_per_content(project: Path,
                                                                         pytester: pytest.Pytester) -> None:
    pytester.runpytest("--skill-eval", "policy.json", "--skill-eval", "suite.json").assert_outcomes(passed=3, failed=2)
    (result,) = result_dirs(project)
    runs = _runs(result)
    referenced: set[str] = set()
    references = 0
    for where, run in runs.items():
        snapshot = run["snapshot"]
        group = where.split("/")[0]
        skill = read_json(result / "groups" / group / "definition.json")["definition"]
        declared = skill["variants"][run["variant"]]["skills"][0]
        stored = {rel: f for rel, f in snapshot["files"].items() if rel.startswith("resources/skills/0/")}
        assert list(stored) == [f"resources/skills/0/{Path(declared).name}/SKILL.md"]
        for rel, entry in snapshot["files"].items():
            data = _object(result, entry["sha256"])
            assert hashlib.sha256(data).hexdigest() == entry["sha256"]
            referenced.add(entry["sha256"])
            references += 1
            if rel.startswith("resources/skills/0/"):
                assert data == (project / declared / "SKILL.md").read_bytes(), where
            elif rel.startswith("workspace/"):
                fixture = skill["fixture"]
                assert data == (project / fixture / rel.removeprefix("workspace/")).read_bytes(), where
        fingerprints = read_json(result / "groups" / where / "fingerprints.json")["before"]
        skill_prints = next(v for k, v in fingerprints.items() if "/resources/skills/0/" in k)
        assert skill_prints == {"SKILL.md": next(iter(stored.values()))["sha256"]}, "the store agrees with fingerprints"
        script = snapshot["script"]
        assert script["model"] == skill["model"]["model"]
        assert _object(result, script["sha256"]) == (project / script["path"]).read_bytes()
        referenced.add(script["sha256"])
        references += 1
    # 5 groups x 2 variants name 3 skill versions, 2 scripts and 1 fixture file: each stored once
    assert len(runs) == 10 and references == 22
    assert sorted(p.name for p in _objects(result)) == sorted(referenced)
    assert len(referenced) == 6
    workspace = {entry["sha256"] for run in runs.values() for rel, entry in run["snapshot"]["files"].items()
                 if rel.startswith("workspace/")}
    for path in _objects(result):
        if path.name in workspace:
            # the fixture is stored once, as the initial workspace snapshot's own inode (no second copy)
            initial = [f for f in result.glob("groups/*/*/workspace-initial/**/*") if f.is_file()
                       and f.stat().st_ino == path.stat().st_ino]
            assert initial, f"{path} is not shared with a workspace-initial file"
        else:
            assert path.stat().st_mode & 0o222 == 0, f"{path}: objects written as bytes are read-only"


def test_rerun_after_the_working_tree_changed_reproduces_the_verdicts_from_the_store(
        project: Path, pytester: pytest.Pytester) -> None:
    pytester.runpytest("--skill-eval", "policy.json", "--skill-eval", "suite.json").assert_outcomes(passed=3, failed=2)
    (original,) = result_dirs(project)
    before = _verdicts(original)
    # today's tree: the candidate skill edited to mean nothing, the old one and every script gone
    (project / AFTER / "SKILL.md").write_text("---\nname: other\ndescription: Unrelated.\n---\nNothing.\n")
    shutil.rmtree(project / BEFORE)
    shutil.rmtree(project / "scripts")
    shutil.rmtree(project / "fixtures")
    result = pytester.runpytest_subprocess(f"--skill-eval-rerun={original}", "-n", "2", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=3, failed=2)
    (rerun,) = [d for d in result_dirs(project) if d != original]
    assert _verdicts(rerun) == before
    summary = read_json(rerun / "result.json")
    assert summary["provenance"]["rerun_of"] == original.name
    assert summary["provenance"]["selection"]["workers"] == "2"
    assert [g["dir"] for g in summary["groups"]] == [g["dir"] for g in read_json(original / "result.json")["groups"]]
    for where, run in _runs(rerun).items():
        assert run["snapshot"] == _runs(original)[where]["snapshot"], where
        assert run["state"] == "complete"
    edited = (project / AFTER / "SKILL.md").read_bytes()
    assert all(p.read_bytes() != edited for p in _objects(rerun))
    from pytest_skill_eval.commands.view import render

    assert f"rerun of  {original.name}: its groups ran again from the inputs it stored" in render(str(rerun), project)
    assert "rerun of" not in render(str(original), project)


def test_skill_eval_rerun_takes_the_stored_settings_and_selection(project: Path, pytester: pytest.Pytester) -> None:
    pytester.runpytest("--skill-eval", "policy.json", "--skill-eval-variant", "candidate",
                       "--skill-eval-fail-on", "never", "--skill-eval-seed", "fixed-seed").assert_outcomes(passed=3)
    (original,) = result_dirs(project)
    done = subprocess.run([sys.executable, "-m", "pytest_skill_eval", "rerun", original.name, "--", "-k", "improves"],
                          cwd=project, capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    (rerun,) = [d for d in result_dirs(project) if d != original]
    provenance = read_json(rerun / "result.json")["provenance"]
    assert provenance["fail_on"] == "never" and provenance["seed"] == "fixed-seed"
    assert provenance["selection"]["variants"] == ["candidate"]
    assert provenance["selection"]["keyword"] == "improves"
    groups = read_json(rerun / "result.json")["groups"]
    assert [(g["id"], g["variants"]) for g in groups] == [("improves", {"baseline": "not-selected",
                                                                         "candidate": "complete"})]


def test_provenance_names_versions_selection_settings_and_no_secret(project: Path, pytester: pytest.Pytester,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    inherited = "inheritedvalue9f8e7d6c5b4a"
    credential = "credential-value-0a1b2c3d4e5f"
    auth_secret = "auth-secret-Zq9xV7-0123456789"
    monkeypatch.setenv("PROV_PLAIN_SETTING", inherited)
    monkeypatch.setenv("SOME_SERVICE_API_KEY", credential)
    group = dict(GROUPS["improves"], id="inherits",
                 runtime={"host": "pi", "environment": {"literal": {}, "inherit": ["PROV_PLAIN_SETTING"]}})
    write_json(project / "groups" / "inherits.json", group)
    write_json(project / "one.json", suite("one", ["groups/inherits.json"]))
    write_json(project / "auth.json", {"other": {"type": "api_key", "key": auth_secret}})
    result = pytester.runpytest("--skill-eval", "one.json", f"--skill-eval-auth={project / 'auth.json'}",
                                "-k", f"inherits or {inherited}",
                                f"--junit-prefix={inherited}-{credential}-{auth_secret}",
                                "--skill-eval-trials", "2", "--skill-eval-rerun-infra", "1")
    result.assert_outcomes(passed=1)
    (res,) = result_dirs(project)
    provenance = read_json(res / "result.json")["provenance"]
    assert set(provenance["versions"]) == {"pytest-skill-eval", "python", "pytest", "pytest-xdist"}
    assert all(provenance["versions"][k] for k in ("pytest-skill-eval", "python", "pytest"))
    assert [set(h) for h in provenance["hosts"]] == [{"pi", "node"}]
    assert provenance["hosts"][0]["node"].startswith("v22.")
    assert provenance["selection"] == {"paths": ["one.json"], "keyword": f"inherits or {MARKER}",
                                       "markers": None, "group": None, "variants": ["baseline", "candidate"],
                                       "workers": None}
    assert (provenance["fail_on"], provenance["trials"], provenance["rerun_infra"]) == ("candidate", 2, 1)
    assert (provenance["pass_rate"], provenance["alpha"]) == (1.0, 0.05)
    assert provenance["seed"] and provenance["provider_timeout_s"] > 0 and provenance["rerun_of"] is None
    assert f"--junit-prefix={MARKER}-{MARKER}-{MARKER}" in provenance["argv"]
    assert f"--skill-eval-auth={project / 'auth.json'}" in provenance["argv"], "a path is not a secret"
    text = (res / "result.json").read_text()
    assert inherited not in text and credential not in text and auth_secret not in text


def test_rerun_of_a_result_without_a_store_says_why_it_cannot(project: Path, pytester: pytest.Pytester) -> None:
    pytester.runpytest("--skill-eval", "policy.json").assert_outcomes(passed=1, failed=2)
    (old,) = result_dirs(project)
    # what an older version wrote: no objects/, no snapshot in run.json
    shutil.rmtree(old / "objects")
    for path in old.glob("groups/*/*/run.json"):
        run = json.loads(path.read_text())
        run.pop("snapshot", None)
        path.write_text(json.dumps(run))
    done = subprocess.run([sys.executable, "-m", "pytest_skill_eval", "rerun", old.name], cwd=project,
                          capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 4, done.stdout + done.stderr
    assert (f"result {old.name} was written by a version of pytest-skill-eval that did not store the inputs its "
            "variants got") in done.stderr
    assert "run the suite again instead" in done.stderr
    assert result_dirs(project) == [old], "nothing ran"
    missing = subprocess.run([sys.executable, "-m", "pytest_skill_eval", "rerun", "20990101000000-00000000"],
                             cwd=project, capture_output=True, text=True, timeout=300, check=False)
    assert missing.returncode == 2 and "no stored result '20990101000000-00000000'" in missing.stderr


def _git(project: Path, *args: str) -> str:
    return subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@example.invalid", *args], cwd=project,
                          check=True, capture_output=True, text=True).stdout.strip()


def test_a_git_baseline_reruns_from_the_commit_it_resolved_to_not_where_the_ref_points_now(
        project: Path, pytester: pytest.Pytester) -> None:
    group = dict(GROUPS["improves"], id="from-git")
    group["variants"] = dict(group["variants"], baseline=dict(group["variants"]["baseline"],
                                                              source={"kind": "git", "ref": "HEAD"}))
    write_json(project / "groups" / "from-git.json", group)
    write_json(project / "git.json", suite("git", ["groups/from-git.json"]))
    _git(project, "init", "-q")
    _git(project, "add", "-A")
    _git(project, "commit", "-qm", "first")
    first = _git(project, "rev-parse", "HEAD")
    committed = _git(project, "show", f"HEAD:{BEFORE}/SKILL.md") + "\n"
    pytester.runpytest("--skill-eval", "git.json").assert_outcomes(passed=1)
    (original,) = result_dirs(project)
    baseline = read_json(original / "groups" / "001-from-git" / "baseline" / "run.json")
    digest = baseline["snapshot"]["files"][f"resources/skills/0/{Path(BEFORE).name}/SKILL.md"]["sha256"]
    assert _object(original, digest).decode() == committed
    # HEAD moves on: a rerun must still get the commit the original resolved
    (project / BEFORE / "SKILL.md").write_text("---\nname: release-notes\ndescription: Moved on.\n---\nNew.\n")
    _git(project, "commit", "-qam", "second")
    result = pytester.runpytest_subprocess(f"--skill-eval-rerun={original}", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)
    (rerun,) = [d for d in result_dirs(project) if d != original]
    again = read_json(rerun / "groups" / "001-from-git" / "baseline" / "run.json")
    assert again["snapshot"] == baseline["snapshot"]
    assert again["source"] == baseline["source"] == {"kind": "git", "ref": "HEAD", "commit": first,
                                                     "root": str(project)}
    assert _verdicts(rerun) == _verdicts(original)


def test_a_result_with_trials_reruns_with_its_trials_and_seed(project: Path, pytester: pytest.Pytester) -> None:
    write_json(project / "one.json", suite("one", ["groups/improves.json"]))
    pytester.runpytest("--skill-eval", "one.json", "--skill-eval-trials", "2").assert_outcomes(passed=1)
    (original,) = result_dirs(project)
    shutil.rmtree(project / "scripts")
    done = subprocess.run([sys.executable, "-m", "pytest_skill_eval", "rerun", original.name], cwd=project,
                          capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    (rerun,) = [d for d in result_dirs(project) if d != original]
    first, again = read_json(original / "result.json"), read_json(rerun / "result.json")
    assert again["trials"] == first["trials"] == 2
    assert again["provenance"]["seed"] == first["provenance"]["seed"]
    assert _verdicts(rerun) == _verdicts(original)
    group = "groups/001-improves"
    for trial in ("001", "002"):
        for name in ("baseline", "candidate"):
            stored = read_json(original / group / "trials" / trial / name / "run.json")["snapshot"]
            assert read_json(rerun / group / "trials" / trial / name / "run.json")["snapshot"] == stored
