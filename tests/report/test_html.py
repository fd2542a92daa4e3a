"""The HTML report without the pi host: pure helpers, and a result built from records.

The built result carries script payloads everywhere the subject can write (agent text,
tool arguments and results, file names and contents) and where the definition author
can (group id aside: it must be an identifier; review questions, skills). The browser
tests open it in chromium and check that none of it runs and nothing is fetched.
"""

from __future__ import annotations

import base64
import hashlib
import html
import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from pytest_skill_eval.evidence import records, store
from pytest_skill_eval.grading.results import ComparisonResult, ExpectationResult, ExpectationStatus, GroupGrade
from pytest_skill_eval.observation import ToolCall, Turn
from pytest_skill_eval.render import html as html_module
from pytest_skill_eval.render.diffs import DIFF_MAX_LINES, diff_files, diff_trees
from pytest_skill_eval.render.html import (
    TEXT_SHOWN,
    assistant_steps,
    render_report,
    script_json,
    turn_of,
)
from pytest_skill_eval.sameness import resource_key
from pytest_skill_eval.services.report import REPORT_FILE, load_report, write_report

PAYLOAD = "<script>window.__pwned='{}'</script><img src=x onerror=\"window.__pwned='{}'\">"
HOSTILE_NAME = "<img src=x onerror=window.__pwned=1>.md"


def payload(tag: str) -> str:
    return PAYLOAD.format(tag, tag + "-img")


# ------------------------------------------------------------------------- pure helpers


@pytest.fixture(autouse=True)
def _fresh_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """Build the page's Jinja environment anew in each test: html.py keeps one for the process,
    and a mutation run forks each mutant from a process that has already run these tests, so
    autoescaping, the finalizer and the filters were never rebuilt under a mutant (docs/testing.md)."""
    monkeypatch.setattr(html_module, "_ENV", None)


def test_script_json_cannot_close_its_element() -> None:
    text = str(script_json("</script><script>alert(1)</script><!-- & \u2028"))
    assert "<" not in text and ">" not in text and "&" not in text and "\u2028" not in text
    assert json.loads(text) == "</script><script>alert(1)</script><!-- & \u2028"


@pytest.mark.parametrize(("location", "turn"), [
    ("workspace result.json after turn 2", 2),
    ("turn 1, tool call call_1_0_0 (read)", 1),
    ("final response of turn 3", 3),
    ("final workspace rollback.json", None),
    ("context request 3 of turn 1 (system-prompt)", 1),
])
def test_turn_of_location(location: str, turn: int | None) -> None:
    assert turn_of(location) == turn


def test_resource_key_drops_the_scratch_prefix() -> None:
    assert resource_key("/tmp/skill-eval-0/run-1/candidate/resources/skills/0/rollback") == "skills/0/rollback"
    assert resource_key("/tmp/x/baseline/resources/context/1/contract.md") == "context/1/contract.md"


def test_diff_files() -> None:
    modified = diff_files("a.md", b"one\ntwo\nthree\n", b"one\n2\nthree\n")
    assert modified.change == "modified"
    assert [(line.tag, line.text) for line in modified.lines] == [
        ("hunk", "@@ -1,3 +1,3 @@"), ("ctx", "one"), ("del", "two"), ("add", "2"), ("ctx", "three")]
    assert diff_files("new.md", None, b"x\n").change == "added"
    assert diff_files("old.md", b"x\n", None).change == "removed"
    binary = diff_files("b.bin", b"\xff\x00", b"\xfe")
    assert binary.lines == () and binary.note == "binary file, not diffed (2 -> 1 bytes)"
    long = diff_files("long.md", None, "".join(f"{i}\n" for i in range(DIFF_MAX_LINES + 10)).encode())
    assert len(long.lines) == DIFF_MAX_LINES and long.note is not None and "cut" in long.note
    assert [d.path for d in diff_trees({"same": b"1", "gone": b"2"}, {"same": b"1", "new": b"3"})] == ["gone", "new"]


def test_long_texts_are_cut_in_the_page(hostile_result: Path) -> None:
    transcript = hostile_result / "groups" / "001-hostile" / "candidate" / "transcript.json"
    data = json.loads(transcript.read_text())
    data["turns"][0]["tool_calls"][0]["result_text"] = "y" * (TEXT_SHOWN + 5)
    _write(transcript, data)
    page = render_report(load_report(hostile_result))
    assert "y" * (TEXT_SHOWN + 1) not in page
    assert "[… cut: 5 more characters; the whole text is in transcript.json]" in page


def test_assistant_steps_by_turn_range() -> None:
    lines = [
        json.dumps({"type": "message_end", "message": {"role": "user", "content": [{"type": "text", "text": "hi"}]}}),
        json.dumps({"type": "message_end", "message": {"role": "assistant", "content": [
            {"type": "text", "text": "first"}, {"type": "toolCall", "id": "c1", "name": "read", "arguments": {}}]}}),
        "not json \"message_end\"",
        json.dumps({"type": "message_end", "message": {"role": "assistant", "content": [{"type": "text", "text": "second"}]}}),
    ]
    steps = assistant_steps(lines, {1: (0, 2), 2: (3, None)})
    assert [(s.text, s.call_ids) for s in steps[1]] == [("first", ("c1",))]
    assert [s.text for s in steps[2]] == ["second"]


# --------------------------------------------------------------- a result from records


def _write(path: Path, value: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    store.write_json(path, value)


def _run(variant: records.VariantName, root: Path, skill: str) -> records.RunRecord:
    scratch = f"/tmp/scratch/{variant}"
    return records.RunRecord(
        variant=variant, group="hostile", state="complete", reason=None,
        paths=records.RunPaths(f"{scratch}/workspace", (f"{scratch}/resources/skills/0/notes",),
                               f"{scratch}/resources/skills/0/notes/SKILL.md", ()),
        runtime={"host": "pi"},
        source=records.SourceRecord("working-tree", None, None, str(root)),
        ran=records.HostRunRecord(
            registered_tools=(("read", "write"),), context_files=(), host={"version": "1.6.0"}, mode="rpc",
            model=records.ModelRecord("scripted", "hostile", None, "scripted/hostile"), argv=("pi",), env={},
            tools=("read", "write"),
            registered_skills={"prompt": [{"name": "notes", "description": payload("description"),
                                           "location": f"{scratch}/resources/skills/0/notes/SKILL.md"}]},
            registered_context=(), returncode=0, started_at=1.0, ended_at=2.5, turn_times=((1.0, 2.0),),
            usage=records.Usage(100, 20, 0, 0, 120, 0.0012), fingerprints_changed=(),
        ),
    )


def build_result(tmp_path: Path) -> Path:
    """A one-group result whose every subject-written text carries a payload."""
    root = tmp_path / "root"
    for name, body in (("skills-before/notes", "old " + payload("old-skill")), ("skills/notes", "new " + payload("new-skill"))):
        (root / name).mkdir(parents=True)
        (root / name / "SKILL.md").write_text(f"---\nname: notes\ndescription: d\n---\n{body}\n")
    result = root / ".skill-eval" / "runs" / "20260101000000-0badc0de"
    gdir = result / "groups" / "001-hostile"
    definition = {"id": "hostile", "variants": {
        "baseline": {"source": {"kind": "working-tree"}, "skills": ["skills-before/notes"], "target": 0, "context": []},
        "candidate": {"source": {"kind": "working-tree"}, "skills": ["skills/notes"], "target": 0, "context": []}}}
    _write(gdir / "definition.json", records.DefinitionRecord(str(root / "groups/hostile.json"), definition).to_json())
    for variant, skill in (("baseline", "skills-before/notes"), ("candidate", "skills/notes")):
        vdir = gdir / variant
        run = _run(variant, root, skill)  # type: ignore[arg-type]
        call = ToolCall(turn=1, id="c1", name="write", arguments={"path": HOSTILE_NAME, "content": payload("arg")},
                        result_text=payload("result"), event_index=1)
        blocked = ToolCall(turn=1, id="c2", name="read", arguments={"path": "/etc/" + payload("blocked")},
                           result_text="skill-eval guard blocked: " + payload("guard"), is_error=True, blocked=True,
                           event_index=2)
        turn = Turn(index=1, prompt=payload("prompt"), sent=payload("prompt"), response=payload("response"),
                    tool_calls=(call, blocked), stop_reason="stop")
        transcript = records.TranscriptRecord((records.TranscriptTurn(turn, records.Usage(100, 20, 0, 0, 120, 0.0012),
                                                                      1.0, 2.0, (0, None)),))
        _write(vdir / "transcript.json", transcript.to_json())
        events = [{"type": "message_end", "message": {"role": "assistant", "content": [
            {"type": "text", "text": payload("agent-text")}, {"type": "toolCall", "id": "c1"}, {"type": "toolCall", "id": "c2"}]}}]
        store.write_atomic(vdir / "events.jsonl", "".join(json.dumps(e) + "\n" for e in events).encode())
        store.write_atomic(vdir / "final-response.txt", payload("response").encode())
        store.write_atomic(vdir / "stderr.txt", ("x" * 9000 + payload("stderr")).encode())
        sha = hashlib.sha256((root / skill / "SKILL.md").read_bytes()).hexdigest()
        prints = {f"/tmp/scratch/{variant}/resources/skills/0/notes": {"SKILL.md": sha}}
        _write(vdir / "fingerprints.json", {"before": prints, "after": prints})
        (vdir / "workspace-initial").mkdir()
        (vdir / "workspace-initial" / "start.md").write_text("start\n")
        (vdir / "workspace").mkdir()
        (vdir / "workspace" / "start.md").write_text("start\n" + payload("changed") + "\n")
        (vdir / "workspace" / HOSTILE_NAME).write_text(payload("file") + "\n")
        _write(vdir / "run.json", run.to_json())
    STATUSES: tuple[tuple[str, ExpectationStatus], ...] = (("baseline", "fail"), ("candidate", "pass"))
    expectations = tuple(
        ExpectationResult(f"{v}-wrote", "file-text", v, status, payload("expected"), payload("observed"),
                          (f"workspace {HOSTILE_NAME} after turn 1",))
        for v, status in STATUSES
    )
    grade = GroupGrade("hostile", "graded", expectations,
                       (ComparisonResult("wrote", "baseline-wrote", "candidate-wrote", "fail-to-pass"),))
    _write(gdir / "grade.json", grade.to_json())
    both = {"baseline": records.VariantStateRecord("complete", None), "candidate": records.VariantStateRecord("complete", None)}
    group = records.GroupRecord(id="hostile", position=1, path=str(root / "groups/hostile.json"), suite=None,
                                type="body", state="complete", grade_state="graded",
                                variants=both,  # type: ignore[arg-type]
                                review_questions=(payload("review"),))
    _write(gdir / "group.json", group.to_json())
    summary = records.ResultRecord(result.name, "complete", (records.ResultGroup(
        "001-hostile", "hostile", 1, "complete", None, "graded", {"baseline": "complete", "candidate": "complete"},
        {"wrote": "fail-to-pass"}),))
    _write(result / "result.json", summary.to_json())
    for path in result.rglob("*.json"):  # every file is what its record's schema says
        if path.name in ("grade.json", "fingerprints.json"):
            continue
        kind = {"run.json": records.RunRecord, "transcript.json": records.TranscriptRecord,
                "definition.json": records.DefinitionRecord, "result.json": records.ResultRecord}.get(path.name)
        if kind is not None:
            records.parse(kind, json.loads(path.read_text()), path)
    return result


@pytest.fixture
def hostile_result(tmp_path: Path) -> Path:
    return build_result(tmp_path)


def _inline_scripts(page: str) -> list[str]:
    return re.findall(r"<script>(.*?)</script>", page, flags=re.S)


def test_page_is_self_contained_and_escaped(hostile_result: Path) -> None:
    page = render_report(load_report(hostile_result))
    # nothing the subject wrote survives as markup: every '<' of it is escaped or inside JSON
    assert "<script>window.__pwned" not in page and "<img" not in page
    # only the page's own script and style, allowed by hash; the group data is JSON text
    tags = re.findall(r"<script[^>]*>", page)
    assert tags.count("<script>") == 1 and all(t in ("<script>", '<script type="application/json" id="data-g0">') for t in tags)
    csp = re.search(r'<meta http-equiv="Content-Security-Policy" content="([^"]+)">', page)
    assert csp is not None
    policy = html.unescape(csp.group(1))
    assert policy.startswith("default-src 'none'; ")
    script = _inline_scripts(page)[0]
    digest = base64.b64encode(hashlib.sha256(script.encode()).digest()).decode()
    assert f"script-src 'sha256-{digest}'" in policy
    assert not re.search(r"(src|href)=\"(https?:|//)", page), "no external asset"
    # the group's details carry the payloads as escaped text
    data = re.search(r'<script type="application/json" id="data-g0">(.*?)</script>', page, flags=re.S)
    assert data is not None
    fragment = json.loads(data.group(1))
    assert "&lt;script&gt;window.__pwned=&#39;agent-text&#39;&lt;/script&gt;" in fragment
    assert "<img" not in fragment and "<script" not in fragment


def test_page_shows_what_differs_and_says_it_was_read_now(hostile_result: Path) -> None:
    report = load_report(hostile_result)
    (group,) = report.groups
    (resource,) = group.resources
    assert (resource.resource, resource.file, resource.status) == ("skills/0/notes", "SKILL.md", "differs")
    assert resource.diff is not None and resource.note is not None
    assert "read now from the working tree" in resource.note
    assert [line.tag for line in resource.diff.lines if line.tag in ("add", "del")] == ["del", "add"]
    candidate = group.variant("candidate")
    assert candidate is not None
    assert [(d.path, d.change) for d in candidate.workspace] == [(HOSTILE_NAME, "added"), ("start.md", "modified")]
    assert [kind for kind, _ in candidate.timeline(candidate.transcript.turns[0].turn)] == ["text", "call", "call"]  # type: ignore[union-attr]
    assert candidate.anchor("turn 1, tool call c2 (read)") == ("t1-c1", "turn 1, read call")
    assert candidate.anchor("turn 1, tool call nope (read)") == ("t1", "turn 1")
    assert candidate.anchor(f"workspace {HOSTILE_NAME} after turn 1") == ("t1", "turn 1")
    assert candidate.anchor("final workspace changes") is None


def test_turn_snapshots_are_diffed_against_the_fixture(hostile_result: Path) -> None:
    snapshot = hostile_result / "groups" / "001-hostile" / "candidate" / "turns" / "1" / "workspace"
    snapshot.mkdir(parents=True)
    (snapshot / "start.md").write_text("start\nafter turn one\n")
    candidate = load_report(hostile_result).groups[0].variant("candidate")
    assert candidate is not None
    assert [(d.path, d.change) for d in candidate.turn_workspaces[1]] == [("start.md", "modified")]
    assert "workspace after turn 1, against the fixture" in render_report(load_report(hostile_result))


def test_changed_source_is_not_shown_as_the_run_time_contents(hostile_result: Path) -> None:
    root = hostile_result.parents[2]
    (root / "skills" / "notes" / "SKILL.md").write_text("edited after the run\n")
    (resource,) = load_report(hostile_result).groups[0].resources
    assert resource.diff is None
    assert resource.note is not None and "has changed since the run" in resource.note


def test_unreadable_evidence_is_a_problem_not_a_crash(hostile_result: Path) -> None:
    (hostile_result / "groups" / "001-hostile" / "candidate" / "run.json").write_text("[]")
    (hostile_result / "groups" / "001-hostile" / "grade.json").write_text('{"state": 3}')
    report = load_report(hostile_result)
    candidate = report.groups[0].variant("candidate")
    assert candidate is not None and candidate.run is None
    # worded as the text view words them: the file relative to the result, once, then the
    # JSON pointer, what was expected and what was found
    assert list(candidate.problems) == [
        "groups/001-hostile/candidate/run.json: /: expected a run record object, found an empty array"]
    assert any(p.startswith("groups/001-hostile/grade.json: /") and str(hostile_result) not in p
               for p in report.groups[0].problems), report.groups[0].problems
    assert "problem:" in render_report(report)


def test_write_report_is_stored_in_the_result_too(hostile_result: Path, tmp_path: Path) -> None:
    out = tmp_path / "artifacts" / "report.html"
    written, warnings = write_report(hostile_result, out)
    assert written == out and warnings == []
    assert out.read_bytes() == (hostile_result / REPORT_FILE).read_bytes()


def test_cli_report(hostile_result: Path, tmp_path: Path) -> None:
    root = hostile_result.parents[2]

    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "pytest_skill_eval", "report", *args], cwd=root,
                              capture_output=True, text=True, timeout=120)

    done = cli("latest", "-o", str(tmp_path / "r.html"))
    assert done.returncode == 0, done.stderr
    assert done.stdout == f"report written: {tmp_path / 'r.html'}\n"
    assert (hostile_result / REPORT_FILE).is_file()
    done = cli("20260101")
    assert done.returncode == 0 and done.stdout == f"report written: {hostile_result / REPORT_FILE}\n"
    missing = cli("nope")
    assert missing.returncode == 2 and "no stored result 'nope'" in missing.stderr


# ------------------------------------------------------------------------------ browser


def test_hostile_result_runs_nothing_in_a_browser(hostile_result: Path, open_report: Any) -> None:
    path, _ = write_report(hostile_result)
    opened = open_report(path)
    assert opened.open_all_groups() == 1
    page = opened.page
    assert page.evaluate("window.__pwned") is None
    assert page.locator("img, iframe, svg, object, embed, link[rel=stylesheet]").count() == 0
    assert page.locator("script").count() == 2  # the group data and the page's own script
    body = page.inner_text("body")
    assert "<script>window.__pwned='agent-text'</script>" in body
    assert HOSTILE_NAME in body
    assert "blocked by the skill-eval guard" in body
    assert "stderr.txt (the last 8,000 of 9,0" in body
    opened.assert_clean(path.as_uri())


def test_filters_and_links_in_a_browser(hostile_result: Path, open_report: Any) -> None:
    path, _ = write_report(hostile_result)
    opened = open_report(path, "g0-candidate-t1")
    page = opened.page
    assert page.locator("details#g0").get_attribute("open") is not None, "a turn link opens its group"
    assert page.locator("#g0-candidate-t1").is_visible()
    page.locator("#g0 .exp a").first.click()  # an expectation's location links to its turn
    assert page.evaluate("location.hash") == "#g0-baseline-t1"
    page.select_option("#filter-transition", "none")
    assert page.locator("#groups tbody tr:visible").count() == 0
    assert page.inner_text("#filter-count") == "0 of 1 groups shown"
    page.select_option("#filter-transition", "fail-to-pass")
    page.select_option("#filter-state", "complete")
    assert page.locator("#groups tbody tr:visible").count() == 1
    opened.assert_clean(path.as_uri())


def test_large_result_builds_group_details_only_when_opened(hostile_result: Path, open_report: Any) -> None:
    import shutil

    groups = hostile_result / "groups"
    for position in range(2, 151):
        shutil.copytree(groups / "001-hostile", groups / f"{position:03d}-hostile")
    path, _ = write_report(hostile_result)
    opened = open_report(path)
    page = opened.page
    assert page.locator("#groups tbody tr").count() == 150
    assert page.locator("details.group").count() == 150
    assert page.locator(".turn").count() == 0, "no group's details are in the page before it is opened"
    page.locator("details#g120 > summary").click()
    # the details are built by a script once the group opens: wait for them (count() does not)
    page.locator("#g120 .turn").first.wait_for()
    assert page.locator("#g120 .turn").count() == 2
    assert page.locator(".turn").count() == 2
    assert page.evaluate("window.__pwned") is None
    opened.assert_clean(path.as_uri())


def test_partial_evidence_renders(hostile_result: Path, open_report: Any) -> None:
    """A not-selected variant, a suite entry that did not load, no result.json: all shown, nothing breaks."""
    import shutil

    gdir = hostile_result / "groups" / "001-hostile"
    shutil.rmtree(gdir / "baseline")
    _write(gdir / "baseline" / "run.json",
           records.RunRecord("baseline", "hostile", "not-selected", "excluded by variant selection").to_json())
    broken = hostile_result / "groups" / "002-invalid-broken"
    invalid = {"baseline": records.VariantStateRecord("invalid", payload("reason")),
               "candidate": records.VariantStateRecord("invalid", payload("reason"))}
    _write(broken / "group.json", records.InvalidGroupRecord(
        "groups/broken.json", 2, invalid, (payload("definition-error"),)).to_json())  # type: ignore[arg-type]
    (hostile_result / "result.json").unlink()
    report = load_report(hostile_result)
    assert [g.state for g in report.groups] == ["complete", "invalid"]
    path, _ = write_report(hostile_result)
    opened = open_report(path)
    assert opened.open_all_groups() == 2
    page = opened.page
    assert "no result.json" in page.inner_text("header")
    assert "excluded by variant selection" in page.inner_text("#g0")
    assert "window.__pwned='definition-error'" in page.inner_text("#g1")
    page.select_option("#filter-state", "invalid")
    assert page.locator("#groups tbody tr:visible").count() == 1
    assert page.evaluate("window.__pwned") is None
    opened.assert_clean(path.as_uri())


def test_git_source_contents_are_read_from_the_recorded_commit(hostile_result: Path) -> None:
    root = hostile_result.parents[2]

    def git(*args: str) -> str:
        return subprocess.run(["git", *args], cwd=root, check=True, capture_output=True, text=True,
                              env={"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.invalid",
                                   "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.invalid",
                                   "HOME": str(root), "PATH": "/usr/bin:/bin"}).stdout.strip()

    git("init", "-q")
    git("add", "skills", "skills-before")
    git("commit", "-q", "-m", "skills")
    commit = git("rev-parse", "HEAD")
    # the working tree moves on; the recorded commit still has the run's bytes
    (root / "skills" / "notes" / "SKILL.md").write_text("edited after the run\n")
    run_file = hostile_result / "groups" / "001-hostile" / "candidate" / "run.json"
    run = json.loads(run_file.read_text())
    run["source"] = {"kind": "git", "ref": "HEAD", "commit": commit, "root": str(root)}
    _write(run_file, run)
    (resource,) = load_report(hostile_result).groups[0].resources
    assert resource.diff is not None, resource.note
    assert resource.note is not None and f"candidate: skills/notes read now from commit {commit[:12]}" in resource.note
    assert any("new-skill" in line.text for line in resource.diff.lines if line.tag == "add")
