"""Every form of Git revision a definition can write, in a real repository.

GitPython reads Git's revision syntax itself and refuses the forms it does not read with
exceptions other than ``BadName`` (NotImplementedError for dates, IndexError for a reflog
index past the log, ValueError for trees, blobs and ``^main``). Each such ref is the
located "does not resolve to a commit" error, in ``skill-eval check`` and in a run (the
variant ``invalid``), never an INTERNALERROR; the forms it does read resolve to the commit
real Git names.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from pytest_skill_eval.errors import SourceError
from pytest_skill_eval.services.check import check_path
from pytest_skill_eval.sources.snapshots import GitSource


def git(root: Path, *args: str) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com"}
    return subprocess.run(["git", *args], cwd=root, check=True, capture_output=True, text=True, env=env).stdout.strip()


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_repo(tmp_path_factory.mktemp("refs"))


def make_repo(root: Path) -> Path:
    """main (two commits, tags v1 and annotated v2) and a branch "other" checked out before main."""
    git(root, "init", "-q", "-b", "main")
    (root / "skills" / "t").mkdir(parents=True)
    (root / "skills" / "t" / "SKILL.md").write_text("---\nname: t\ndescription: T.\n---\nOne.\n")
    git(root, "add", ".")
    git(root, "commit", "-qm", "first message")
    git(root, "tag", "v1")
    git(root, "tag", "-a", "v2", "-m", "annotated")
    git(root, "checkout", "-qb", "other")
    (root / "skills" / "t" / "SKILL.md").write_text("---\nname: t\ndescription: T.\n---\nTwo.\n")
    git(root, "commit", "-qam", "second message")
    git(root, "checkout", "-q", "main")
    return root


#: forms GitPython reads: each resolves to the commit real Git names
READ = ["HEAD", "main", "v1", "v2", "v2^{}", "v2^{commit}", "HEAD^0", "other~1", "other^", "@", "HEAD@{0}",
        "@{-1}", ":/second message", "HEAD^{/first}", "refs/heads/other"]

#: forms GitPython refuses, by the exception it raises
REFUSED = {
    # dates and other @{...} modes: NotImplementedError
    "HEAD@{yesterday}": "GitPython does not read this form",
    "main@{2001-01-01}": "GitPython does not read this form",
    "HEAD@{1 day ago}": "GitPython does not read this form",
    "@{}": "GitPython does not read this form",
    # upstream and push: BadName
    "main@{upstream}": "did not resolve",
    "main@{u}": "did not resolve",
    "main@{push}": "did not resolve",
    # reflog indexes past the log, previous checkouts that never happened: IndexError
    "main@{5}": "Invalid revlog index",
    "@{-99}": "Invalid previous checkout selector",
    # (GitPython wraps an index of 2**31 or more around to the ref itself; Git refuses it)
    "HEAD@{2147483648}": "Invalid revlog index: 2147483648",
    "main@{18446744073709551616}": "Invalid revlog index",
    # a previous-checkout form with a ref: ValueError
    "HEAD@{-1}": "Previous checkout selectors do not take an explicit ref",
    # trees, blobs and tags are no commits: ValueError
    "HEAD^{tree}": "Cannot convert object",
    "HEAD:": "Cannot convert object",
    ":skills/t/SKILL.md": "Cannot convert object",
    "HEAD:skills/t/SKILL.md": "Cannot convert object",
    "HEAD^{blob}": "Could not accommodate",
    "HEAD^{nonsense}": "Invalid output type",
    "main@{": "Missing closing brace",
    # ranges, negations and parent shorthands: BadName or ValueError
    "main...other": "did not resolve",
    "main..other": "did not resolve",
    "^main": "must start with an object name",
    "~1": "must start with an object name",
    "HEAD^!": "not enough parent commits",
    "HEAD^@": "not enough parent commits",
    "v1~5": "not enough parent commits",
    ":/no commit says this": "No commit found",
    # names of nothing, option-like text, a well-formed id of no stored object
    "mian": "did not resolve",
    "-": "did not resolve",
    "--output=/tmp/x": "did not resolve",
    "0" * 40: "could not be resolved",
    # control characters never reach GitPython (a newline would be a second cat-file request)
    "v1\n": "holds no control characters; found U+000A",
    "v1\x00": "holds no control characters; found U+0000",
}


@pytest.mark.parametrize("ref", READ)
def test_forms_gitpython_reads_resolve_as_git_does(repo: Path, ref: str) -> None:
    named = git(repo, "rev-parse", "--verify", ref)  # (":/text^{commit}" would search for the suffix too)
    expected = git(repo, "rev-parse", "--verify", f"{named}^{{commit}}")
    assert GitSource(repo, ref).commit.hexsha == expected


@pytest.mark.parametrize("ref", list(REFUSED))
def test_forms_gitpython_refuses_do_not_resolve(repo: Path, ref: str) -> None:
    with pytest.raises(SourceError) as refused:
        GitSource(repo, ref)
    message = str(refused.value)
    assert message.startswith(f"git source: ref {ref!r} does not resolve to a commit (")
    assert REFUSED[ref] in message


def test_the_nearest_branch_and_tag_names_are_suggested(repo: Path) -> None:
    with pytest.raises(SourceError, match=r'; did you mean "main"\?$'):
        GitSource(repo, "mian")
    with pytest.raises(SourceError, match=r'; did you mean "other" or "main"\?$'):
        GitSource(repo, "main...other")
    with pytest.raises(SourceError) as far:
        GitSource(repo, "HEAD@{yesterday}")
    assert "did you mean" not in str(far.value)
    assert str(far.value).endswith('; the repository has branches: "main", "other"; tags: "v1", "v2"')


def _group(root: Path, ref: str) -> Path:
    variant = {"source": {"kind": "git", "ref": ref}, "skills": ["skills/t"], "target": 0, "context": []}
    group = {
        "schema_version": 1, "kind": "group", "id": "refs", "type": "description", "input": {"prompt": "Hi."},
        "fixture": None, "tools": [], "variants": {"baseline": variant, "candidate": {**variant, "source": {"kind": "working-tree"}}},
        "expectations": [], "review_questions": [], "model": {"model": "scripted/refs"},
    }
    path = root / "groups" / "refs.json"
    path.parent.mkdir(exist_ok=True)
    path.write_text(json.dumps(group))
    (root / "groups" / "scripts").mkdir(exist_ok=True)
    (root / "groups" / "scripts" / "refs.json").write_text(json.dumps(
        {"schema": "skill-eval-script/1", "turns": [{"steps": [{"text": "ok"}]}]}))
    return path


@pytest.mark.parametrize("ref", ["HEAD@{yesterday}", "main@{5}", "HEAD^{tree}", "^main", "@{-99}", "0" * 40])
def test_check_reports_each_refused_form_located(repo: Path, ref: str) -> None:
    """Today: NotImplementedError or IndexError out of the check (an INTERNALERROR under pytest)."""
    path = _group(repo, ref)
    report, ok = check_path(path.relative_to(repo), repo)
    assert not ok
    (line,) = [line for line in report.splitlines() if "baseline source" in line]
    assert line.lstrip().startswith("error") and "/variants/baseline/source/ref" in line
    assert "does not resolve to a commit" in line


@pytest.mark.pi
def test_a_run_with_a_refused_form_makes_that_variant_invalid(pytester: pytest.Pytester, pi_host: object) -> None:
    """Under pytest: the baseline is ``invalid`` with the located reason; the candidate still runs."""
    root = make_repo(pytester.path)
    _group(root, "HEAD@{yesterday}")
    result = pytester.runpytest_subprocess("--skill-eval", "groups/refs.json", "-p", "no:cacheprovider")
    assert "INTERNALERROR" not in result.stdout.str()
    (res,) = [p for p in (root / ".skill-eval" / "runs").iterdir() if p.is_dir()]
    baseline = json.loads((res / "groups" / "001-refs" / "baseline" / "run.json").read_text())
    assert baseline["state"] == "invalid"
    assert baseline["reason"].startswith("git source: ref 'HEAD@{yesterday}' does not resolve to a commit")
    candidate = json.loads((res / "groups" / "001-refs" / "candidate" / "run.json").read_text())
    assert candidate["state"] == "complete"
