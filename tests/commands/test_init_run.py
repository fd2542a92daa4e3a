"""What ``skill-eval init`` writes runs at once: real pi, the scripted model over HTTP, a real Git baseline."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from .support import SUITE, git, skill_eval, skill_repo

pytestmark = pytest.mark.pi


@pytest.fixture
def initialised(pytester: pytest.Pytester, pi_host: object) -> Path:
    """The pytester directory as a user's repository holding a real skill, after ``skill-eval init``."""
    repo = skill_repo(pytester.path)
    done = skill_eval(repo, "init", "skills/brand-guidelines")
    assert done.returncode == 0, done.stderr
    assert f"  pytest --skill-eval {SUITE}" in done.stdout.splitlines()
    return repo


def only_result(root: Path) -> Path:
    (result,) = [p for p in (root / ".skill-eval" / "runs").iterdir() if p.is_dir()]
    return result


def test_the_written_suite_passes_offline_at_once(initialised: Path, pytester: pytest.Pytester) -> None:
    result = pytester.runpytest_subprocess("--skill-eval", SUITE, "-v", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=2)
    result.stdout.fnmatch_lines([
        f"*{SUITE}::description PASSED 2 pass-to-pass*",
        "*candidate  pass        candidate-unread-on-turn-one (skill-read)*",
        "*candidate  pass        candidate-read-by-turn-two (skill-read)*",
        "*comparison unread-on-turn-one: pass-to-pass*",
        "*comparison read-by-turn-two: pass-to-pass*",
        f"*{SUITE}::body PASSED 2 pass-to-pass*",
        "*comparison result-exists: pass-to-pass*",
        "*comparison result-complete: pass-to-pass*",
        "*transitions: 4 pass-to-pass*",
        # nothing is edited yet: HEAD and the working tree hold the same skill, and the summary says so
        f"*warning: {SUITE}::description: baseline and candidate get byte-identical skills and context: "
        "these comparisons cannot show a change; the working tree holds what HEAD holds*",
        f"*warning: {SUITE}::body: baseline and candidate get byte-identical skills and context*",
    ])
    stored = only_result(initialised)
    # and so does the report, on the overview and in each group
    report = skill_eval(initialised, "report", "latest")
    assert report.returncode == 0, report.stderr
    page = (stored / "report.html").read_text()
    assert ('id="identical-warning">warning: in 2 groups (description, body) baseline and candidate got '
            "byte-identical skills and context") in page
    assert page.count("(identical inputs: no change to show)") == 2
    summary = json.loads((stored / "result.json").read_text())
    assert summary["state"] == "complete"
    assert [g["comparisons"] for g in summary["groups"]] == [
        {"unread-on-turn-one": "pass-to-pass", "read-by-turn-two": "pass-to-pass"},
        {"result-exists": "pass-to-pass", "result-complete": "pass-to-pass"},
    ]
    head = git(initialised, "rev-parse", "HEAD").strip()
    for group in ("001-description", "002-body"):
        baseline = json.loads((stored / "groups" / group / "baseline" / "run.json").read_text())
        candidate = json.loads((stored / "groups" / group / "candidate" / "run.json").read_text())
        assert baseline["source"] == {"kind": "git", "ref": "HEAD", "commit": head, "root": str(initialised)}
        assert candidate["source"]["kind"] == "working-tree"
    body = stored / "groups" / "002-body" / "candidate"
    transcript = json.loads((body / "transcript.json").read_text())
    assert transcript["turns"][0]["sent"].startswith("/skill:brand-guidelines Work through a small example")
    assert json.loads((body / "workspace" / "result.json").read_text()) == {"status": "complete"}
    # evidence stays out of the user's repository; the written suite is theirs to commit
    status = [line for line in git(initialised, "status", "--porcelain", "--untracked-files=all").splitlines()
              if ".skill-eval" in line]  # pytester's own files are untracked too
    assert sorted(status) == sorted(f"?? {p}" for p in [
        ".skill-eval/brand-guidelines/README.md", ".skill-eval/brand-guidelines/groups/body.json",
        ".skill-eval/brand-guidelines/groups/description.json",
        ".skill-eval/brand-guidelines/scripts/brand-guidelines-body.json",
        ".skill-eval/brand-guidelines/scripts/brand-guidelines-description.json", SUITE,
    ])


def test_the_baseline_really_is_head(initialised: Path, pytester: pytest.Pytester) -> None:
    # A body edit that is not committed: the candidate has it, HEAD does not. The description
    # group must then refuse to run (only the description may differ), the body group still runs.
    skill_md = initialised / "skills" / "brand-guidelines" / "SKILL.md"
    skill_md.write_text(skill_md.read_text() + "\nAlways write result.json last.\n")
    result = pytester.runpytest_subprocess("--skill-eval", SUITE, "-v", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1, errors=1)
    result.stdout.fnmatch_lines([f"*{SUITE}::description ERROR invalid*", f"*{SUITE}::body PASSED 2 pass-to-pass*"])
    group = json.loads((only_result(initialised) / "groups" / "001-description" / "group.json").read_text())
    assert group["revision_check"] == {
        "state": "failed",
        "reason": "description group: the baseline and candidate targets must differ only in their frontmatter "
                  "description (SKILL.md body differs); a description group compares the description alone. "
                  "To go on: commit the body change first (git add -p: leave only the description edit "
                  "uncommitted), so the baseline at HEAD has it too; or point the baseline's \"ref\" at a commit "
                  "that already has the candidate's body and resources; or leave this group out of the run with "
                  '-k "not description"',
    }
    # the error says it where the user reads it, and the -k expression it names works
    result.stdout.fnmatch_lines(['*candidate: invalid: *leave this group out of the run with -k "not description"*'])
    deselected = pytester.runpytest_subprocess("--skill-eval", SUITE, "-p", "no:cacheprovider", "-k", "not description")
    deselected.assert_outcomes(passed=1, deselected=1)


def test_a_broken_script_fails_the_run(initialised: Path, pytester: pytest.Pytester) -> None:
    # The body script writes result.json only when the skill was delivered: if the group's
    # skill is not the one the script expects, the candidate's checks fail.
    script = initialised / ".skill-eval" / "brand-guidelines" / "scripts" / "brand-guidelines-body.json"
    doc = json.loads(script.read_text())
    doc["turns"][1]["rules"][0]["when"] = {"conversation_contains": '<skill name="some-other-skill"'}
    script.write_text(json.dumps(doc))
    result = pytester.runpytest_subprocess("--skill-eval", SUITE, "-v", "-p", "no:cacheprovider", "-k", "body")
    result.assert_outcomes(failed=1, deselected=1)
    result.stdout.fnmatch_lines([f"*{SUITE}::body FAILED 2 fail-to-fail*"])


def edit_description(skill_md: Path, description: str) -> str:
    """Replace the description line of the real skill (line 3); returns the old description."""
    lines = skill_md.read_text().split("\n")
    old = lines[2].removeprefix("description: ")
    lines[2] = f"description: {description}"
    skill_md.write_text("\n".join(lines))
    return old


def test_a_description_edit_is_what_the_description_group_compares(initialised: Path, pytester: pytest.Pytester) -> None:
    new = "Use for anything that should look like Anthropic made it, such as colours, fonts, slides and docs."
    old = edit_description(initialised / "skills" / "brand-guidelines" / "SKILL.md", new)
    result = pytester.runpytest_subprocess("--skill-eval", SUITE, "-v", "-p", "no:cacheprovider", "-k", "description")
    result.assert_outcomes(passed=1, deselected=1)
    assert "byte-identical" not in result.stdout.str()  # the edit is not committed: the variants differ
    group = only_result(initialised) / "groups" / "001-description"
    assert json.loads((group / "group.json").read_text())["revision_check"] == {"state": "passed", "reason": None}
    seen = {side: [s["description"] for s in json.loads((group / side / "run.json").read_text())["registered_skills"]["prompt"]]
            for side in ("baseline", "candidate")}
    assert seen == {"baseline": [old], "candidate": [new]}


def test_a_description_pi_cannot_parse_is_a_regression(initialised: Path, pytester: pytest.Pytester) -> None:
    # An unquoted ": " is a nested mapping to YAML: pi drops the skill, so it is never listed
    # and never read, and the group reports it (the frontmatter reader refuses the same text).
    edit_description(initialised / "skills" / "brand-guidelines" / "SKILL.md", "Brand styling: colours and fonts.")
    result = pytester.runpytest_subprocess("--skill-eval", SUITE, "-v", "-p", "no:cacheprovider", "-k", "description")
    result.assert_outcomes(failed=1, deselected=1)
    result.stdout.fnmatch_lines([f"*{SUITE}::description FAILED pass-to-pass, pass-to-fail*",
                                 "*comparison read-by-turn-two: pass-to-fail*"])
