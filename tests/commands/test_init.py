"""``skill-eval init``: what it writes into a real Git repository, and every refusal (no pi host)."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import pytest

from pytest_skill_eval.commands.init import init_skill
from pytest_skill_eval.definitions.loading import load_definition, load_suite_groups
from pytest_skill_eval.definitions.model import Suite
from pytest_skill_eval.errors import InitRefusedError, SkillFileError
from pytest_skill_eval.services.check import check_path

from .support import SUITE, WRITTEN, git, skill_eval, skill_repo, tree


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return skill_repo(tmp_path / "my-skills")


def test_init_writes_the_suite_and_says_what_to_run(repo: Path) -> None:
    done = skill_eval(repo, "init", "skills/brand-guidelines")
    assert done.returncode == 0, done.stderr
    head = git(repo, "rev-parse", "HEAD").strip()
    assert done.stdout.splitlines() == [
        f'Wrote the evaluation of skill "brand-guidelines" (skills/brand-guidelines) under {repo}:',
        *(f"  {path}" for path in WRITTEN),
        f"baseline: skills/brand-guidelines as committed at HEAD ({head[:12]}); candidate: the working tree",
        f"Next, run it offline with the scripted stand-in model, from the definition root {repo}:",
        f"  pytest --skill-eval {SUITE}",
        "To use a real model, edit the groups as .skill-eval/brand-guidelines/README.md says.",
    ]
    assert done.stderr == ""
    assert sorted(p for p in tree(repo) if p.startswith(".skill-eval/")) == sorted(WRITTEN)


def test_what_init_writes_loads_and_passes_check(repo: Path) -> None:
    init_skill(Path("skills/brand-guidelines"), repo)
    suite = load_definition(repo / SUITE, repo)
    assert isinstance(suite, Suite) and suite.id == "brand-guidelines"
    _, groups = load_suite_groups(suite, repo)
    assert [(g.id, g.type) for g in groups] == [("description", "description"), ("body", "body")]
    for group in groups:
        assert group.baseline.source.kind == "git" and group.baseline.source.ref == "HEAD"
        assert group.candidate.source.kind == "working-tree"
        assert group.baseline.skills == group.candidate.skills == ("skills/brand-guidelines",)
    report, ok = check_path(Path(SUITE), repo, env={})
    assert ok, report
    assert "git ref HEAD resolves to commit" in report
    checked = skill_eval(repo, "check", SUITE)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    # nothing is edited yet: no problem, but the warnings say why the comparisons cannot show a change
    assert checked.stdout.splitlines()[-1].startswith("no problems found, "), checked.stdout
    assert checked.stdout.count("  warn  identical variants ") == 2


def test_from_elsewhere_the_next_command_changes_to_the_root(repo: Path) -> None:
    done = skill_eval(repo / "skills", "init", "brand-guidelines/SKILL.md")  # the file works as well as its directory
    assert done.returncode == 0, done.stderr
    assert f"  cd {shlex.quote(str(repo))} && pytest --skill-eval {SUITE}" in done.stdout.splitlines()
    assert (repo / SUITE).is_file()


def test_init_never_overwrites_and_lists_what_exists(repo: Path) -> None:
    assert skill_eval(repo, "init", "skills/brand-guidelines").returncode == 0
    (repo / ".skill-eval/brand-guidelines/groups/body.json").write_text("{}  my edits\n")
    before = tree(repo)
    again = skill_eval(repo, "init", "skills/brand-guidelines")
    assert again.returncode == 2
    assert again.stdout == ""
    assert again.stderr.splitlines() == [
        f"skill-eval: error: init never overwrites, and these exist already under {repo}:",
        *(f"  {path}" for path in WRITTEN),
        "edit them, or move them away and run skill-eval init again",
    ]
    assert tree(repo) == before


def test_one_existing_file_is_enough_to_refuse_and_nothing_is_written(repo: Path) -> None:
    readme = repo / ".skill-eval/brand-guidelines/README.md"
    readme.parent.mkdir(parents=True)
    readme.write_text("mine\n")
    before = tree(repo)
    with pytest.raises(InitRefusedError) as caught:
        init_skill(Path("skills/brand-guidelines"), repo)
    assert str(caught.value).splitlines()[1:] == [
        "  .skill-eval/brand-guidelines/README.md",
        "edit them, or move them away and run skill-eval init again",
    ]
    assert tree(repo) == before


def test_a_dangling_link_counts_as_existing(repo: Path) -> None:
    suite = repo / SUITE
    suite.parent.mkdir(parents=True)
    suite.symlink_to(repo / "nowhere.json")
    with pytest.raises(InitRefusedError, match=r"exist already .*\n  \.skill-eval/brand-guidelines/suite\.json"):
        init_skill(Path("skills/brand-guidelines"), repo)
    assert not (repo / "nowhere.json").exists()


def test_a_file_where_the_directory_goes_is_refused(repo: Path) -> None:
    (repo / ".skill-eval").mkdir()
    (repo / ".skill-eval" / "brand-guidelines").write_text("a file\n")
    with pytest.raises(InitRefusedError, match=r"exist already .*\n  \.skill-eval/brand-guidelines\n"):
        init_skill(Path("skills/brand-guidelines"), repo)


def test_not_inside_a_git_repository(tmp_path: Path) -> None:
    skill = tmp_path / "plain" / "skills" / "brand-guidelines"
    skill.parent.mkdir(parents=True)
    skill_repo_copy = skill_repo(tmp_path / "source")  # a copy of the skill, outside any repository
    (skill_repo_copy / "skills" / "brand-guidelines").rename(skill)
    done = skill_eval(tmp_path / "plain", "init", "skills/brand-guidelines")
    assert done.returncode == 2
    assert done.stderr.startswith("skill-eval: error: skills/brand-guidelines is not inside a Git repository. ")
    assert "run `git init` at the top of the project" in done.stderr
    assert "git add <skill-dir> && git commit" in done.stderr
    assert not (tmp_path / "plain" / ".skill-eval").exists()


def test_a_repository_without_a_commit(tmp_path: Path) -> None:
    repo = skill_repo(tmp_path / "fresh", commit=False)
    done = skill_eval(repo, "init", "skills/brand-guidelines")
    assert done.returncode == 2
    assert done.stderr == (
        f"skill-eval: error: the Git repository {repo} has no commit yet, and the baseline is the skill as committed "
        f"at HEAD: commit the skill first: git -C {repo} add skills/brand-guidelines && "
        f"git -C {repo} commit -m 'Add the brand-guidelines skill'\n"
    )
    assert not (repo / ".skill-eval").exists()


def test_a_skill_that_head_does_not_hold(tmp_path: Path) -> None:
    repo = skill_repo(tmp_path / "repo", commit=False)
    git(repo, "add", "README.md")
    git(repo, "commit", "-q", "-m", "Start")
    with pytest.raises(InitRefusedError) as caught:
        init_skill(repo / "skills" / "brand-guidelines", tmp_path)
    head = git(repo, "rev-parse", "HEAD").strip()
    assert str(caught.value).startswith(
        f"skills/brand-guidelines/SKILL.md is not in the commit at HEAD ({head[:12]}), and the baseline is the skill "
        "as committed there: commit the skill first: git -C "
    )
    # the fix it names works
    git(repo, "add", "skills")
    git(repo, "commit", "-q", "-m", "Add the skill")
    assert init_skill(repo / "skills" / "brand-guidelines", tmp_path).head == git(repo, "rev-parse", "HEAD").strip()


def test_uncommitted_changes_are_noted(repo: Path) -> None:
    skill_md = repo / "skills" / "brand-guidelines" / "SKILL.md"
    skill_md.write_text(skill_md.read_text() + "\nOne more rule.\n")
    done = skill_eval(repo, "init", "skills/brand-guidelines")
    assert done.returncode == 0, done.stderr
    assert ("note: skills/brand-guidelines has changes that are not committed: the candidate has them and the "
            "baseline does not (the description group is invalid while they go beyond the frontmatter description)"
            ) in done.stdout.splitlines()


def test_a_skill_at_the_top_of_the_work_tree_is_refused(tmp_path: Path) -> None:
    repo = tmp_path / "one-skill"
    repo.mkdir()
    git(repo, "init", "-q")
    (repo / "SKILL.md").write_text("---\nname: one-skill\ndescription: d\n---\nbody\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "x")
    with pytest.raises(InitRefusedError, match=r"^\. is the top of its Git work tree.*Move the skill into a subdirectory"):
        init_skill(Path("."), repo)


def test_a_skill_named_runs_is_refused(repo: Path) -> None:
    skill = repo / "skills" / "runs"
    skill.mkdir()
    (skill / "SKILL.md").write_text("---\nname: runs\ndescription: d\n---\nbody\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "x")
    with pytest.raises(InitRefusedError, match=r'the skill name "runs" would put its suite in \.skill-eval/runs/'):
        init_skill(Path("skills/runs"), repo)
    assert not (repo / ".skill-eval").exists()


def test_a_skill_inside_skill_eval_is_refused(repo: Path) -> None:
    skill = repo / ".skill-eval" / "vendored" / "demo"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text("---\nname: demo\ndescription: d\n---\nbody\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "x")
    with pytest.raises(InitRefusedError) as caught:
        init_skill(Path(".skill-eval/vendored/demo"), repo)
    assert str(caught.value) == (
        f".skill-eval/vendored/demo: the skill's path in the work tree {repo} cannot be declared: expected a path "
        'outside the evidence tree, found ".skill-eval/vendored/demo" inside ".skill-eval/"'
    )
    assert not (repo / ".skill-eval" / "demo").exists()


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda d: (d / "SKILL.md").unlink(),
         "skills/brand-guidelines/SKILL.md: expected the skill's SKILL.md (its frontmatter names and describes it), "
         "found none"),
        (lambda d: (d / "SKILL.md").write_text("# Brand guidelines\n\nNo frontmatter.\n"),
         'skills/brand-guidelines/SKILL.md: line 1: expected "---" opening the YAML frontmatter (name and '
         'description), found "# Brand guidelines"'),
        (lambda d: (d / "SKILL.md").write_text("---\nname: Brand Guidelines\ndescription: d\n---\n"),
         'skills/brand-guidelines/SKILL.md: frontmatter "name": expected 1 to 64 lowercase letters, digits and single '
         'hyphens, not starting or ending with a hyphen, found "Brand Guidelines"'),
        (lambda d: (d / "SKILL.md").write_bytes(b"---\nname: x\ndescription: caf\xe9\n---\n"),
         "skills/brand-guidelines/SKILL.md: expected UTF-8 text, found byte 0xe9 at offset 28"),
    ],
    ids=["missing", "no-frontmatter", "bad-name", "not-utf8"],
)
def test_a_bad_skill_md_names_the_file_and_what_was_found(repo: Path, make: object, message: str) -> None:
    make(repo / "skills" / "brand-guidelines")  # type: ignore[operator]
    done = skill_eval(repo, "init", "skills/brand-guidelines")
    assert (done.returncode, done.stdout, done.stderr) == (2, "", f"skill-eval: error: {message}\n")
    assert not (repo / ".skill-eval").exists()
    with pytest.raises(SkillFileError):
        init_skill(Path("skills/brand-guidelines"), repo)


def test_a_path_that_is_not_a_skill_directory(repo: Path) -> None:
    done = skill_eval(repo, "init", "skills/nope")
    assert (done.returncode, done.stderr) == (
        2, "skill-eval: error: skills/nope: expected a skill directory (one holding a SKILL.md), found nothing there\n")
    done = skill_eval(repo, "init", "README.md")
    assert done.stderr == "skill-eval: error: README.md: expected a skill directory (one holding a SKILL.md), found a file\n"


def test_init_appears_in_the_help() -> None:
    done = skill_eval(Path.cwd(), "init", "--help")
    assert done.returncode == 0
    text = " ".join(done.stdout.split())
    assert text.startswith("usage: skill-eval init [-h] skill-dir ")
    assert "Nothing is ever overwritten" in text
    assert "--force" not in text  # refusing to overwrite is the point: there is no way around it


def test_the_readme_is_what_the_scaffold_wrote(repo: Path) -> None:
    init_skill(Path("skills/brand-guidelines"), repo)
    readme = (repo / ".skill-eval/brand-guidelines/README.md").read_text()
    assert readme.startswith("# Evaluating the `brand-guidelines` skill\n")
    assert "What to edit to use a real model" in readme
    group = json.loads((repo / ".skill-eval/brand-guidelines/groups/body.json").read_text())
    assert group["model"] == {"model": "scripted/brand-guidelines-body"}


def test_a_file_appearing_while_init_writes_is_not_replaced_and_nothing_is_left(
        repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import os

    real_link = os.link
    calls: list[str] = []

    def racing_link(src: str, dst: Path) -> None:
        calls.append(str(dst))
        if len(calls) == 3:  # someone else writes this file first
            Path(dst).write_text("theirs\n")
        real_link(src, dst)

    monkeypatch.setattr(os, "link", racing_link)  # the os module init writes through
    before = tree(repo)
    with pytest.raises(InitRefusedError, match=r"groups/body\.json appeared while it was writing; nothing was left written$"):
        init_skill(Path("skills/brand-guidelines"), repo)
    after = tree(repo)
    assert after.pop(".skill-eval/brand-guidelines/groups/body.json") == b"theirs\n"
    assert after == before  # the two files init had written are gone, no temporary file is left
