"""A skill author's first hour (issue 30), without the host: init, the usual edit, and what
``skill-eval check`` says about it, in real Git repositories holding a real public skill."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_skill_eval.commands.check import check_path

from .support import SUITE, git, skill_eval, skill_repo

SKILL_MD = Path("skills") / "brand-guidelines" / "SKILL.md"
DESCRIPTION = "description: Applies Anthropic's official brand colors"


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = skill_repo(tmp_path / "my-skills")
    done = skill_eval(root, "init", "skills/brand-guidelines")
    assert done.returncode == 0, done.stderr
    return root


def edit(repo: Path, *, description: str | None = None, body: str | None = None) -> None:
    """The usual edits of SKILL.md: a new description line, a line added to the body."""
    path = repo / SKILL_MD
    text = path.read_text()
    if description is not None:
        lines = text.split("\n")
        (index,) = [i for i, line in enumerate(lines) if line.startswith("description: ")]
        lines[index] = f"description: {description}"
        text = "\n".join(lines)
    if body is not None:
        text += f"\n{body}\n"
    path.write_text(text)


def check(repo: Path) -> tuple[str, bool]:
    return check_path(Path(SUITE), repo)


# -- 2: the usual edit (description and body together) ------------------------------------


def test_a_description_and_body_edit_says_how_to_go_on(repo: Path) -> None:
    edit(repo, description="Brand colours and fonts for anything Anthropic ships.", body="Always check contrast.")
    text, ok = check(repo)
    assert not ok
    (line,) = [line for line in text.splitlines() if "description revision" in line]
    assert "(SKILL.md body differs)" in line
    assert "commit the body change first (git add -p: leave only the description edit uncommitted)" in line
    assert "point the baseline's \"ref\" at a commit that already has the candidate's body" in line
    assert '-k "not description"' in line


def test_following_the_advice_commit_the_body_first_makes_the_group_valid(repo: Path) -> None:
    edit(repo, body="Always check contrast.")
    git(repo, "commit", "-qam", "Body: check contrast")
    edit(repo, description="Brand colours and fonts for anything Anthropic ships.")
    text, ok = check(repo)
    assert ok, text
    assert "description revision" not in text


def test_following_the_advice_a_baseline_ref_with_the_new_body_makes_the_group_valid(repo: Path) -> None:
    edit(repo, body="Always check contrast.")
    git(repo, "commit", "-qam", "Body: check contrast")
    git(repo, "tag", "new-body")
    git(repo, "reset", "-q", "--soft", "HEAD~1")  # HEAD has the old body again
    edit(repo, description="Brand colours and fonts for anything Anthropic ships.")
    group = repo / ".skill-eval" / "brand-guidelines" / "groups" / "description.json"
    group.write_text(group.read_text().replace('"ref": "HEAD"', '"ref": "new-body"'))
    text, ok = check(repo)
    assert ok, text


def test_a_description_group_with_other_sources_gets_the_general_advice(tmp_path: Path) -> None:
    from pytest_skill_eval.definitions.model import Group, Runtime, Source, Variant
    from pytest_skill_eval.sources.isolation import revision_next_step

    def group(baseline: Source, candidate: Source) -> Group:
        def variant(name: str, source: Source) -> Variant:
            return Variant(name, source, ("skills/x",), 0, ())  # type: ignore[arg-type]

        return Group(path=tmp_path / "g.json", id="activation", type="description", prompts=("Go.",),
                     input_kind="prompt", fixture=None, tools=("read",), baseline=variant("baseline", baseline),
                     candidate=variant("candidate", candidate), expectations=(), review_questions=(), model=None,
                     runtime=Runtime(), raw={})

    both_trees = revision_next_step(group(Source("working-tree"), Source("working-tree")))
    assert "make both sources hold the same body and resources" in both_trees
    assert "a git baseline's \"ref\"" in both_trees and '-k "not activation"' in both_trees
    tagged = revision_next_step(group(Source("git", "v1"), Source("working-tree")))
    assert "git add -p" not in tagged and "the baseline's \"ref\"" in tagged


def test_inits_readme_says_the_ways_on_after_the_usual_edit(repo: Path) -> None:
    readme = (repo / ".skill-eval" / "brand-guidelines" / "README.md").read_text()
    assert "commit the body change first (`git add -p`" in readme
    assert f'`pytest --skill-eval {SUITE} -k "not description"`' in readme


# -- 3: baseline and candidate identical -----------------------------------------------------


def test_check_warns_when_the_edit_is_committed(repo: Path) -> None:
    edit(repo, description="Brand colours and fonts for anything Anthropic ships.")
    text, ok = check(repo)
    assert ok and "identical" not in text, text  # an uncommitted edit: the variants differ
    git(repo, "commit", "-qam", "New description")
    text, ok = check(repo)
    assert ok, text  # nothing stops a run, but nothing it shows can mean anything
    warned = [line for line in text.splitlines() if line.startswith("  warn  identical variants ")]
    assert len(warned) == 2, text
    assert ("baseline and candidate get byte-identical skills and context: these comparisons cannot show a change; "
            "the working tree holds what HEAD holds: edit the skill without committing") in warned[0]
    assert 'point the baseline\'s "ref" at an earlier commit (HEAD~1, a branch or a tag)' in warned[0]
    assert text.splitlines()[-1] == "no problems found, 2 warnings (warn lines)"
    # the advice works: the commit before the edit as the baseline
    for name in ("description", "body"):
        group = repo / ".skill-eval" / "brand-guidelines" / "groups" / f"{name}.json"
        group.write_text(group.read_text().replace('"ref": "HEAD"', '"ref": "HEAD~1"'))
    text, ok = check(repo)
    assert ok and "identical" not in text, text


def test_identical_skills_under_other_paths_are_identical_too(repo: Path) -> None:
    import shutil

    shutil.copytree(repo / "skills" / "brand-guidelines", repo / "copy" / "brand-guidelines")
    group = repo / ".skill-eval" / "brand-guidelines" / "groups" / "body.json"
    doc = json.loads(group.read_text())
    doc["variants"]["baseline"]["source"] = {"kind": "working-tree"}
    doc["variants"]["candidate"]["skills"] = ["copy/brand-guidelines"]
    group.write_text(json.dumps(doc))
    report, ok = check_path(Path(".skill-eval/brand-guidelines/groups/body.json"), repo)
    assert ok, report
    (line,) = [line for line in report.splitlines() if "identical variants" in line]
    assert "point the baseline at an earlier version of the skill, or change the candidate's" in line
    # one byte of difference, and the warning goes
    (repo / "copy" / "brand-guidelines" / "LICENSE.txt").write_text("changed")
    report, ok = check_path(Path(".skill-eval/brand-guidelines/groups/body.json"), repo)
    assert ok and "identical" not in report, report


def test_the_same_skills_with_another_target_are_not_identical() -> None:
    from pytest_skill_eval.sameness import identical_inputs

    prints = {"/s/baseline/resources/skills/0/a": {"SKILL.md": "1"}, "/s/baseline/resources/skills/1/b": {"SKILL.md": "2"}}
    other = {k.replace("baseline", "candidate"): v for k, v in prints.items()}
    assert identical_inputs(prints, other, 0, 0)
    assert not identical_inputs(prints, other, 0, 1)
    assert not identical_inputs(prints, {**other, "/s/candidate/resources/context/0/c.md": {".": "3"}}, 0, 0)
