"""A skill author's first hour (issue 30), without the host: init, the usual edit, and what
``skill-eval check`` says about it, in real Git repositories holding a real public skill."""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from pytest_skill_eval.services.check import check_path

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
    rewrite(repo, lambda doc: doc["input"].__setitem__("turns", ["What is 17 times 23?", "Style my slides, please."]),
            "description")  # no placeholder left to warn of
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


# -- 5: paths and refs get suggestions -------------------------------------------------------


def group_file(repo: Path, name: str = "body") -> Path:
    return repo / ".skill-eval" / "brand-guidelines" / "groups" / f"{name}.json"


def rewrite(repo: Path, change: Any, name: str = "body") -> None:
    doc = json.loads(group_file(repo, name).read_text())
    change(doc)
    group_file(repo, name).write_text(json.dumps(doc, indent=2))


def errors(repo: Path, env: dict[str, str] | None = None) -> list[str]:
    text, _ = check_path(Path(".skill-eval/brand-guidelines/groups/body.json"), repo, env=env)
    return [line.strip() for line in text.splitlines() if line.strip().startswith("error")]


def test_a_misspelled_skill_fixture_or_context_path_suggests_the_nearest(repo: Path) -> None:
    (repo / "fixtures" / "small-project").mkdir(parents=True)
    (repo / "fixtures" / "small-project" / "a.txt").write_text("a\n")
    (repo / "docs").mkdir()
    (repo / "docs" / "style-guide.md").write_text("style\n")

    def typos(doc: dict[str, Any]) -> None:
        doc["fixture"] = "fixtures/smal-project"
        for side in ("baseline", "candidate"):
            doc["variants"][side]["skills"] = ["skill/brand-guideline"]  # two segments wrong
        doc["variants"]["candidate"]["context"] = ["docs/style-guid.md"]

    rewrite(repo, typos)
    found = errors(repo)
    (fixture,) = [line for line in found if line.startswith("error fixture ")]
    assert fixture.endswith(f"/fixture: fixtures/smal-project: not found under the definition root {repo} "
                            '(the current directory) (did you mean "fixtures/small-project"?) (the group would be invalid)')
    (working,) = [line for line in found if "candidate skill 0" in line]
    assert 'skill/brand-guideline: not found under the definition root' in working
    assert '(did you mean "skills/brand-guidelines"?)' in working
    (committed,) = [line for line in found if "baseline skill 0" in line]  # the baseline is HEAD
    assert "skill/brand-guideline: not found in commit " in committed
    assert '(did you mean "skills/brand-guidelines"?)' in committed
    (context,) = [line for line in found if "candidate context 0" in line]
    assert '(did you mean "docs/style-guide.md"?)' in context
    # nothing close: no guess
    rewrite(repo, lambda doc: doc.__setitem__("fixture", "completely/different"))
    (fixture,) = [line for line in errors(repo) if "error fixture" in line]
    assert "did you mean" not in fixture


def test_an_unknown_ref_names_the_nearest_branches_and_tags(repo: Path) -> None:
    git(repo, "branch", "-m", "main", "master")  # the repository's only branch is master
    rewrite(repo, lambda doc: doc["variants"]["baseline"]["source"].__setitem__("ref", "main"))
    (line,) = [line for line in errors(repo) if "baseline source" in line]
    assert "git source: ref 'main' does not resolve to a commit" in line
    assert '; the repository has branches: "master" (the variant would be invalid)' in line
    git(repo, "tag", "v1.2.0")
    rewrite(repo, lambda doc: doc["variants"]["baseline"]["source"].__setitem__("ref", "v1.2.1"))
    (line,) = [line for line in errors(repo) if "baseline source" in line]
    assert '; did you mean "v1.2.0"? (the variant would be invalid)' in line


def test_an_absolute_path_inside_the_root_suggests_its_relative_form(repo: Path) -> None:
    absolute = str(repo / "skills" / "brand-guidelines")
    rewrite(repo, lambda doc: doc["variants"]["candidate"].__setitem__("skills", [absolute]))
    (line,) = errors(repo)
    assert line.endswith(f'/variants/candidate/skills/0: expected a relative path, found absolute path "{absolute}"; '
                         'relative to the definition root that is "skills/brand-guidelines"')
    # outside the root there is no relative form to suggest
    rewrite(repo, lambda doc: doc["variants"]["candidate"].__setitem__("skills", ["/usr/share"]))
    (line,) = errors(repo)
    assert line.endswith('found absolute path "/usr/share"')
    # a suite's group references are relative to the suite's directory
    suite = repo / ".skill-eval" / "brand-guidelines" / "suite.json"
    doc = json.loads(suite.read_text())
    doc["groups"][1] = str(group_file(repo))
    suite.write_text(json.dumps(doc))
    text, ok = check(repo)
    assert not ok
    assert 'relative to the suite\'s directory that is "groups/body.json"' in text


def test_a_declared_but_unset_key_names_the_unset_variable_first(repo: Path) -> None:
    def real_model(doc: dict[str, Any]) -> None:
        doc["model"] = {"model": "anthropic/claude-sonnet-4-5"}
        doc["runtime"] = {"host": "pi", "session": False, "extensions": [],
                          "environment": {"literal": {}, "inherit": ["ANTHROPIC_API_KEY"]}}

    rewrite(repo, real_model)
    (line,) = [line for line in errors(repo, env={}) if "model" in line]
    assert ("provider anthropic gets no credential: ANTHROPIC_API_KEY is in the group's runtime.environment.inherit "
            "but not set where pytest runs: set it (export ANTHROPIC_API_KEY=...), or ") in line
    # not declared at all: the advice starts with declaring it, as before
    rewrite(repo, lambda doc: doc["runtime"]["environment"].__setitem__("inherit", []))
    (line,) = [line for line in errors(repo, env={}) if "model" in line]
    assert "gets no credential: add ANTHROPIC_API_KEY or " in line


# -- 8: what users share follows the umask; evidence stays private -------------------------------


@pytest.fixture
def umask() -> Iterator[Callable[[int], None]]:
    """Set the process umask for one test (restored after it)."""
    old = os.umask(0o022)
    os.umask(old)

    def set_mask(mask: int) -> None:
        os.umask(mask)

    yield set_mask
    os.umask(old)


def modes(root: Path, paths: list[Path]) -> set[int]:
    return {stat.S_IMODE((root / p).stat().st_mode) for p in paths}


@pytest.mark.parametrize(("mask", "expected"), [(0o022, 0o644), (0o077, 0o600), (0o002, 0o664)])
def test_init_writes_files_the_umask_allows(tmp_path: Path, umask: Callable[[int], None], mask: int,
                                            expected: int) -> None:
    from pytest_skill_eval.commands.init import init_skill

    root = skill_repo(tmp_path / "my-skills")
    umask(mask)
    report = init_skill(Path("skills/brand-guidelines"), root)
    assert modes(root, [Path(f.path) for f in report.scaffold.files]) == {expected}


@pytest.mark.parametrize(("mask", "expected"), [(0o022, 0o644), (0o077, 0o600)])
def test_the_html_report_follows_the_umask_and_evidence_stays_private(tmp_path: Path, umask: Callable[[int], None],
                                                                      mask: int, expected: int) -> None:
    from pytest_skill_eval.evidence import store
    from pytest_skill_eval.services.report import write_report

    result = tmp_path / ".skill-eval" / "runs" / "20261203120000-0123abcd"
    umask(mask)
    store.write_json(result / "selection.json", {"variants": ["baseline", "candidate"], "groups": []})
    written, _ = write_report(result, tmp_path / "published" / "report.html")
    assert modes(tmp_path, [written, result / "report.html"]) == {expected}
    assert modes(tmp_path, [result / "selection.json"]) == {0o600}  # evidence: its owner's only


# -- 9: skill-eval run exits 0 on failed checks, and says so where it is listed -------------------

README = Path(__file__).resolve().parents[2] / "README.md"


def readme_commands() -> list[str]:
    """The command lines of the README's "Using it on your skill" code blocks."""
    section = README.read_text(encoding="utf-8").split("## Using it on your skill", 1)[1].split("\n## ", 1)[0]
    return [line for block in section.split("```bash\n")[1:] for line in block.split("```")[0].splitlines()]


def test_the_readme_says_skill_eval_run_exits_0_where_it_lists_it() -> None:
    (line,) = [line for line in readme_commands() if line.startswith("skill-eval run ")]
    assert "exits 0 even when checks fail (CI: use pytest)" in line
    section = README.read_text(encoding="utf-8").split("## Using it on your skill", 1)[1]
    assert "For a CI job that\nmust fail when the candidate's checks fail, use `pytest --skill-eval …` (exit 1" in section


def test_skill_eval_run_help_points_ci_users_to_pytest(tmp_path: Path) -> None:
    done = skill_eval(tmp_path, "run", "--help")
    assert done.returncode == 0
    assert "To fail a CI job when the candidate's checks fail, run pytest --skill-eval TARGET instead (exit 1)." in " ".join(
        done.stdout.split())
    listed = skill_eval(tmp_path, "--help")
    assert "(exits 0 when checks fail; for CI use pytest --skill-eval)" in " ".join(listed.stdout.split())


# -- 6: init's starter suite -----------------------------------------------------------------------


def test_the_description_prompt_is_a_task_placeholder_not_the_description(repo: Path) -> None:
    doc = json.loads(group_file(repo, "description").read_text())
    second = doc["input"]["turns"][1]
    assert "Anthropic" not in second and "brand" not in second  # neither the description nor the skill's name
    assert second == ("Now the real task: [placeholder: a request a user of this skill would make, in their own "
                      "words, without naming the skill]")


def test_check_warns_while_the_placeholder_is_in_place(repo: Path) -> None:
    edit(repo, description="Brand colours and fonts for anything Anthropic ships.")  # no identical warning
    text, ok = check(repo)
    assert ok, text
    (line,) = [line for line in text.splitlines() if line.startswith("  warn ")]
    assert line.split() [:3] == ["warn", "placeholder", "/input/turns/1"]
    assert "still holds skill-eval init's [placeholder: a request a user of this skill would make" in line
    assert text.splitlines()[-1] == "no problems found, 1 warning (warn lines)"
    rewrite(repo, lambda doc: doc["input"].__setitem__(
        "turns", [doc["input"]["turns"][0], "Can you make this slide deck look like it came from Anthropic?"]),
        "description")
    text, ok = check(repo)
    assert ok and "warn" not in text and text.splitlines()[-1] == "no problems found", text


def test_the_readmes_k_example_selects_one_of_inits_groups(repo: Path) -> None:
    import shlex
    import subprocess
    import sys

    (example,) = [line for line in readme_commands() if " -k " in line]
    args = shlex.split(example.split("#", 1)[0].replace(".skill-eval/my-skill/", ".skill-eval/brand-guidelines/"))
    assert args[0] == "pytest"
    done = subprocess.run([sys.executable, "-m", "pytest", *args[1:], "--collect-only", "-q", "-p", "no:cacheprovider"],
                          cwd=repo, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    assert [line for line in done.stdout.splitlines() if "::" in line] == [f"{SUITE}::description"]
    assert "1/2 tests collected (1 deselected)" in done.stdout
    readme = (repo / ".skill-eval" / "brand-guidelines" / "README.md").read_text()
    assert f"pytest --skill-eval {SUITE} -k description   # one group, by its id" in readme
