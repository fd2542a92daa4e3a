"""Every kind and every expect value, passing and failing, against hand-built evidence."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

import pytest

from pytest_skill_eval.observation import ContextRequest, RunObservation

from .builders import call, grade_one, observation, read, turn


@dataclass(frozen=True)
class Case:
    id: str
    raw: dict[str, Any]
    obs: RunObservation
    status: str
    observed: str | None = None
    locations: tuple[str, ...] | None = None
    options: dict[str, Any] = field(default_factory=dict)


def run_case(case: Case) -> None:
    result = grade_one(case.raw, case.obs, **case.options)
    assert result.status == case.status, result
    if case.observed is not None:
        assert result.observed == case.observed
    if case.locations is not None:
        assert result.locations == case.locations


def cases(*items: Case) -> pytest.MarkDecorator:
    return pytest.mark.parametrize("case", items, ids=[c.id for c in items])


# --- skill-read -----------------------------------------------------------------------

READ_ON_TWO = observation(
    turns=[
        turn(1, calls=[read("c1", "/run/skills/0/SKILL.md")]),
        turn(2, calls=[read("c2", "/run/skills/1/SKILL.md")]),
        turn(3, calls=[read("c3", "/run/skills/1/SKILL.md")]),
    ]
)
NEVER_READ = observation(
    turns=[
        turn(1, calls=[call("c1", "edit", {"path": "/run/skills/1/SKILL.md"})]),
        turn(2, calls=[read("c2", "~/SKILL.md")]),
        turn(3),
    ]
)


def reads_target_as(path: str) -> RunObservation:
    return observation(turns=[turn(1, calls=[read("c1", path)]), turn(2), turn(3)])


def skill_read(expect: str, turn_: int | None = None) -> dict[str, Any]:
    raw: dict[str, Any] = {"kind": "skill-read", "expect": expect}
    if turn_ is not None:
        raw["turn"] = turn_
    return raw


@cases(
    Case("never-pass", skill_read("never"), NEVER_READ, "pass", "the target was not read in 3 turns", ()),
    Case("never-fail", skill_read("never"), READ_ON_TWO, "fail", "the target was first read on turn 2",
         ("turn 2, tool call c2 (read)",)),
    Case("on-turn-pass", skill_read("on-turn", 2), READ_ON_TWO, "pass"),
    Case("on-turn-fail-later-read-ignored", skill_read("on-turn", 3), READ_ON_TWO, "fail"),
    Case("on-turn-fail-never", skill_read("on-turn", 1), NEVER_READ, "fail"),
    Case("by-turn-pass", skill_read("by-turn", 2), READ_ON_TWO, "pass"),
    Case("by-turn-fail", skill_read("by-turn", 1), READ_ON_TWO, "fail"),
    Case("by-turn-fail-never", skill_read("by-turn", 3), NEVER_READ, "fail"),
    Case("not-before-turn-pass", skill_read("not-before-turn", 2), READ_ON_TWO, "pass"),
    Case("not-before-turn-pass-never", skill_read("not-before-turn", 2), NEVER_READ, "pass"),
    Case("not-before-turn-fail", skill_read("not-before-turn", 3), READ_ON_TWO, "fail"),
    Case("relative-path", skill_read("on-turn", 1), reads_target_as("../skills/1/./SKILL.md"), "pass"),
    Case("at-prefix", skill_read("on-turn", 1), reads_target_as("@/run/skills/1/SKILL.md"), "pass"),
    Case("tilde-not-expanded", skill_read("never"), reads_target_as("~/../skills/1/SKILL.md"), "pass"),
    Case("other-file-in-skill", skill_read("never"), reads_target_as("/run/skills/1/SKILL.md.bak"), "pass"),
    Case("description-group-timing", skill_read("by-turn", 2), READ_ON_TWO, "pass",
         options={"type": "description"}),
)
def test_skill_read(case: Case) -> None:
    run_case(case)


def test_skill_read_on_target_null_variant_is_grade_error() -> None:
    result = grade_one(skill_read("never"), NEVER_READ, candidate_target=None)
    assert result.status == "grade-error"
    assert result.error == '/expectations/0/variant: expected a variant with a target skill, found "candidate (its target is null)"'


def test_skill_read_without_recorded_target_file_is_grade_error() -> None:
    result = grade_one(skill_read("never"), observation(target_file=None))
    assert result.status == "grade-error"
    assert result.error == "the run recorded no target file, but the variant declares a target skill"


def test_turn_beyond_observed_turns_is_grade_error() -> None:
    short = observation(turns=[turn(1), turn(2)])
    result = grade_one(skill_read("by-turn", 3), short)
    assert result.status == "grade-error"
    assert result.error == "turn 3 was not observed: the run recorded 2 turns"


# --- resource-read --------------------------------------------------------------------

RESOURCE_READS = observation(
    turns=[
        turn(1, calls=[read("c1", "notes.md"), read("c2", "/run/skills/0/references/a.md")]),
        turn(2, calls=[read("c3", "/run/context/0/contract.md"), read("c4", "notes.md")]),
        turn(3),
    ]
)


def resource(
    expect: str, resource_: str, path: str, index: int | None = None, turn_: int | None = None
) -> dict[str, Any]:
    raw: dict[str, Any] = {"kind": "resource-read", "expect": expect, "resource": resource_, "path": path}
    if index is not None:
        raw["index"] = index
    if turn_ is not None:
        raw["turn"] = turn_
    return raw


@cases(
    Case("workspace-read-pass", resource("read", "workspace", "notes.md"), RESOURCE_READS, "pass",
         "read 2 times, first on turn 1", ("turn 1, tool call c1 (read)", "turn 2, tool call c4 (read)")),
    Case("workspace-read-fail", resource("read", "workspace", "other.md"), RESOURCE_READS, "fail", "not read", ()),
    Case("workspace-not-read-pass", resource("not-read", "workspace", "other.md"), RESOURCE_READS, "pass"),
    Case("workspace-not-read-fail", resource("not-read", "workspace", "notes.md"), RESOURCE_READS, "fail"),
    Case("skill-read-pass", resource("read", "skill", "references/a.md", 0), RESOURCE_READS, "pass"),
    Case("skill-other-index-fail", resource("read", "skill", "references/a.md", 1), RESOURCE_READS, "fail"),
    Case("context-item-itself", resource("read", "context", ".", 0), RESOURCE_READS, "pass",
         locations=("turn 2, tool call c3 (read)",)),
    Case("context-dir-not-read", resource("not-read", "context", "b.md", 1), RESOURCE_READS, "pass"),
    Case("turn-scoped-read-fail", resource("read", "skill", "references/a.md", 0, 2), RESOURCE_READS, "fail",
         "not read on turn 2"),
    Case("turn-scoped-read-pass", resource("read", "skill", "references/a.md", 0, 1), RESOURCE_READS, "pass",
         "read 1 time on turn 1"),
    Case("turn-scoped-not-read-pass", resource("not-read", "context", ".", 0, 1), RESOURCE_READS, "pass"),
    Case("turn-scoped-not-read-fail", resource("not-read", "context", ".", 0, 2), RESOURCE_READS, "fail"),
)
def test_resource_read(case: Case) -> None:
    run_case(case)


def test_resource_read_index_without_recorded_root_is_grade_error() -> None:
    obs = replace(observation(), skill_roots=("/run/skills/0",))
    result = grade_one(resource("read", "skill", "SKILL.md", 1), obs)
    assert result.status == "grade-error"
    assert result.error == "skill index 1 has no root: the run recorded 1 skill root"


# --- path -----------------------------------------------------------------------------

FILES = {"result.json": b'{"status": "complete"}', "out/a.txt": b"a", "out/deep/b.txt": b"b"}
WORKSPACE_RUN = observation(final=FILES, turn_files={1: {}, 2: {"result.json": b"{}"}})


def path_(expect: str, path: str, turn_: int | None = None) -> dict[str, Any]:
    raw: dict[str, Any] = {"kind": "path", "expect": expect, "path": path}
    if turn_ is not None:
        raw["turn"] = turn_
    return raw


@cases(
    Case("exists-file", path_("exists", "result.json"), WORKSPACE_RUN, "pass", "result.json is a file",
         ("final workspace result.json",)),
    Case("exists-directory", path_("exists", "out"), WORKSPACE_RUN, "pass", "out is a directory with 2 files under it"),
    Case("exists-fail", path_("exists", "missing.txt"), WORKSPACE_RUN, "fail", "missing.txt does not exist"),
    Case("name-prefix-is-not-a-directory", path_("exists", "resu"), WORKSPACE_RUN, "fail"),
    Case("absent-pass", path_("absent", "missing.txt"), WORKSPACE_RUN, "pass"),
    Case("absent-fail", path_("absent", "out/deep"), WORKSPACE_RUN, "fail"),
    Case("turn-scoped-exists", path_("exists", "result.json", 2), WORKSPACE_RUN, "pass",
         locations=("workspace result.json after turn 2",)),
    Case("turn-scoped-absent", path_("absent", "result.json", 1), WORKSPACE_RUN, "pass"),
    Case("turn-scoped-absent-fail", path_("absent", "result.json", 2), WORKSPACE_RUN, "fail"),
)
def test_path(case: Case) -> None:
    run_case(case)


def test_turn_scoped_workspace_check_without_snapshot_is_grade_error() -> None:
    result = grade_one(path_("exists", "result.json", 3), WORKSPACE_RUN)
    assert result.status == "grade-error"
    assert result.error == "no workspace snapshot after turn 3 was recorded"


# --- changed-paths --------------------------------------------------------------------

CHANGES = observation(
    initial={"a.txt": b"1", "b.txt": b"2", "c.txt": b"3"},
    final={"a.txt": b"1", "b.txt": b"22", "d/e.txt": b"4"},
    turn_files={1: {"a.txt": b"1", "b.txt": b"2", "c.txt": b"3"}},
)


def changed(expect: str, paths: list[str], turn_: int | None = None) -> dict[str, Any]:
    raw: dict[str, Any] = {"kind": "changed-paths", "expect": expect, "paths": paths}
    if turn_ is not None:
        raw["turn"] = turn_
    return raw


@cases(
    Case("equals-pass", changed("equals", ["d/e.txt", "c.txt", "b.txt"]), CHANGES, "pass",
         "changed files: b.txt (modified), c.txt (removed), d/e.txt (added)", ("final workspace changes",)),
    Case("equals-fail", changed("equals", ["b.txt", "a.txt"]), CHANGES, "fail",
         "changed files: b.txt (modified), c.txt (removed), d/e.txt (added); unchanged but expected: a.txt; "
         "changed but not expected: c.txt, d/e.txt"),
    Case("directory-does-not-count", changed("equals", ["b.txt", "c.txt", "d"]), CHANGES, "fail"),
    Case("equals-nothing-pass", changed("equals", [], 1), CHANGES, "pass", "no file changed",
         ("workspace changes after turn 1",)),
    Case("equals-nothing-fail", changed("equals", []), CHANGES, "fail"),
    Case("excludes-pass", changed("excludes", ["a.txt", "z.txt"]), CHANGES, "pass"),
    Case("excludes-fail", changed("excludes", ["a.txt", "c.txt"]), CHANGES, "fail", "excluded files changed: c.txt (removed)"),
)
def test_changed_paths(case: Case) -> None:
    run_case(case)


# --- file-text ------------------------------------------------------------------------

TEXTS = observation(final={"notes.md": "line one\nline twö\n".encode(), "bin.dat": b"\xff\xfe", "dir/x": b""})


def file_text(expect: str, path: str, value: str) -> dict[str, Any]:
    return {"kind": "file-text", "expect": expect, "path": path, "value": value}


@cases(
    Case("contains-pass", file_text("contains", "notes.md", "twö"), TEXTS, "pass",
         "notes.md contains the text at line 2, column 6", ("final workspace notes.md",)),
    Case("contains-fail", file_text("contains", "notes.md", "three"), TEXTS, "fail",
         'notes.md does not contain the text (18 characters); it reads "line one\\nline twö\\n"'),
    Case("contains-is-case-sensitive", file_text("contains", "notes.md", "LINE"), TEXTS, "fail"),
    Case("not-contains-pass", file_text("not-contains", "notes.md", "three"), TEXTS, "pass"),
    Case("not-contains-fail", file_text("not-contains", "notes.md", "one"), TEXTS, "fail",
         'notes.md contains the text at line 1, column 6: "line one\\nline twö\\n"'),
    Case("equals-pass", file_text("equals", "notes.md", "line one\nline twö\n"), TEXTS, "pass"),
    Case("equals-fail-trailing-newline", file_text("equals", "notes.md", "line one\nline twö"), TEXTS, "fail",
         'notes.md (18 characters) differs from the expected text at line 2, column 9: found "\\n"'),
    Case("missing-file-fails-not-contains", file_text("not-contains", "gone.md", "x"), TEXTS, "fail",
         "gone.md does not exist"),
    Case("directory-fails", file_text("contains", "dir", ""), TEXTS, "fail", "dir is a directory (1 file under it), not a file"),
    Case("non-utf8-fails", file_text("not-contains", "bin.dat", "x"), TEXTS, "fail",
         "bin.dat is not UTF-8 text (invalid byte at offset 0)"),
)
def test_file_text(case: Case) -> None:
    run_case(case)


# --- json -----------------------------------------------------------------------------

DOCS = observation(
    final={
        "result.json": b'{"status": "complete", "n": 1, "flag": true, "none": null, "a/b": 1, "m~n": 2, "": 3,'
        b' "list": [10, 20], "-": "dash", "obj": {"x": [1.0, {"y": "z"}]}}',
        "broken.json": b'{"status": ',
        "nan.json": b"[NaN]",
        "bom.json": b"\xef\xbb\xbf{}",
        "latin1.json": b'"\xe9"',
        "deep/x.json": b"1",
    }
)


def json_(expect: str, path: str = "result.json", **fields: Any) -> dict[str, Any]:
    return {"kind": "json", "expect": expect, "path": path, **fields}


@cases(
    Case("available-pass", json_("available", "broken.json"), DOCS, "pass", "broken.json exists (11 bytes)"),
    Case("available-fail", json_("available", "gone.json"), DOCS, "fail", "gone.json does not exist"),
    Case("available-directory-fails", json_("available", "deep"), DOCS, "fail"),
    Case("missing-pass", json_("missing", "gone.json"), DOCS, "pass"),
    Case("missing-fail", json_("missing", "result.json"), DOCS, "fail"),
    Case("valid-pass", json_("valid"), DOCS, "pass", "result.json is valid JSON (an object)"),
    Case("valid-fail", json_("valid", "broken.json"), DOCS, "fail",
         "broken.json is not valid JSON: invalid JSON at line 1 column 12: Expecting value"),
    Case("valid-fail-missing", json_("valid", "gone.json"), DOCS, "fail", "gone.json does not exist"),
    Case("malformed-pass", json_("malformed", "broken.json"), DOCS, "pass"),
    Case("malformed-nan", json_("malformed", "nan.json"), DOCS, "pass"),
    Case("malformed-bom", json_("malformed", "bom.json"), DOCS, "pass"),
    Case("malformed-not-utf8", json_("malformed", "latin1.json"), DOCS, "pass",
         "latin1.json is not valid JSON: not UTF-8 (invalid byte at offset 1)"),
    Case("malformed-fail", json_("malformed"), DOCS, "fail"),
    Case("malformed-fail-missing", json_("malformed", "gone.json"), DOCS, "fail"),
    Case("field-present-pass", json_("field-present", pointer="/none"), DOCS, "pass",
         'the value at pointer "/none" is null', ('final workspace result.json at pointer "/none"',)),
    Case("field-present-fail", json_("field-present", pointer="/nope"), DOCS, "fail",
         'result.json has no value at pointer "/nope"'),
    Case("field-present-fail-malformed", json_("field-present", "broken.json", pointer=""), DOCS, "fail"),
    Case("field-absent-pass", json_("field-absent", pointer="/optional"), DOCS, "pass"),
    Case("field-absent-fail", json_("field-absent", pointer="/status"), DOCS, "fail"),
    Case("field-absent-fail-missing-file", json_("field-absent", "gone.json", pointer="/x"), DOCS, "fail"),
    Case("field-equals-pass", json_("field-equals", pointer="/status", value="complete"), DOCS, "pass"),
    Case("field-equals-fail", json_("field-equals", pointer="/status", value="pending"), DOCS, "fail",
         'the value at pointer "/status" is "complete"'),
    Case("field-equals-null", json_("field-equals", pointer="/none", value=None), DOCS, "pass"),
    Case("field-equals-null-vs-absent", json_("field-equals", pointer="/absent", value=None), DOCS, "fail"),
    Case("int-equals-float", json_("field-equals", pointer="/n", value=1.0), DOCS, "pass"),
    Case("true-is-not-one", json_("field-equals", pointer="/flag", value=1), DOCS, "fail"),
    Case("one-is-not-true", json_("field-equals", pointer="/n", value=True), DOCS, "fail"),
    Case("nested-equality", json_("field-equals", pointer="/obj", value={"x": [1, {"y": "z"}]}), DOCS, "pass"),
    Case("array-order-matters", json_("field-equals", pointer="/list", value=[20, 10]), DOCS, "fail"),
)
def test_json(case: Case) -> None:
    run_case(case)


@pytest.mark.parametrize(
    ("pointer", "found", "value"),
    [
        ("", True, None),  # whole document; value checked separately
        ("/", True, 3),
        ("/a~1b", True, 1),
        ("/m~0n", True, 2),
        ("/list/0", True, 10),
        ("/list/1", True, 20),
        ("/list/2", False, None),
        ("/list/01", False, None),
        ("/list/-", False, None),
        ("/list/+1", False, None),
        ("/-", True, "dash"),
        ("/obj/x/1/y", True, "z"),
        ("/status/0", False, None),
        ("/obj/x/1/y/z", False, None),
    ],
)
def test_json_pointer_edge_cases(pointer: str, found: bool, value: Any) -> None:
    present = grade_one(json_("field-present", pointer=pointer), DOCS)
    assert present.status == ("pass" if found else "fail"), present
    if found and pointer:
        assert grade_one(json_("field-equals", pointer=pointer, value=value), DOCS).status == "pass"


def test_json_whole_document_pointer_equals_whole_value() -> None:
    obs = observation(final={"x.json": b'[1, {"a": null}]'})
    assert grade_one(json_("field-equals", "x.json", pointer="", value=[1.0, {"a": None}]), obs).status == "pass"


# --- response-text --------------------------------------------------------------------

RESPONSES = observation(turns=[turn(1, "Plan: read the file."), turn(2, "Done."), turn(3, "All done.\nBye")])


def response(expect: str, value: str, turn_: int | None = None) -> dict[str, Any]:
    raw: dict[str, Any] = {"kind": "response-text", "expect": expect, "value": value}
    if turn_ is not None:
        raw["turn"] = turn_
    return raw


@cases(
    Case("contains-final-turn", response("contains", "Bye"), RESPONSES, "pass",
         "the final response of turn 3 contains the text at line 2, column 1", ("final response of turn 3",)),
    Case("contains-fail", response("contains", "Plan"), RESPONSES, "fail",
         'the final response of turn 3 does not contain the text (13 characters); it reads "All done.\\nBye"'),
    Case("contains-turn-one", response("contains", "Plan", 1), RESPONSES, "pass", locations=("final response of turn 1",)),
    Case("not-contains-pass", response("not-contains", "error"), RESPONSES, "pass"),
    Case("not-contains-fail", response("not-contains", "done"), RESPONSES, "fail",
         'the final response of turn 3 contains the text at line 1, column 5: "All done.\\nBye"'),
    Case("equals-pass", response("equals", "Done.", 2), RESPONSES, "pass"),
    Case("equals-fail", response("equals", "Done"), RESPONSES, "fail"),
    Case("description-final-turn", response("contains", "Bye"), RESPONSES, "pass", options={"type": "description"}),
)
def test_response_text(case: Case) -> None:
    run_case(case)


def test_failed_text_check_excerpt_is_bounded() -> None:
    long = "x" * 5000
    result = grade_one(response("contains", "needle"), observation(turns=[turn(1, long)]))
    assert result.status == "fail"
    assert len(result.observed) < 300, result.observed
    assert result.observed.endswith('… (+4880 more characters)'), result.observed
    # around a hit deep inside a long text: only the neighbourhood is shown, cut on both sides
    hit = grade_one(response("not-contains", "needle"), observation(turns=[turn(1, long + "needle" + long)]))
    assert hit.status == "fail"
    assert '…"' + "x" * 40 + 'needle' + "x" * 40 + '"…' in hit.observed, hit.observed
    assert len(hit.observed) < 300


def test_failed_text_check_excerpt_escapes_what_the_subject_wrote() -> None:
    hostile = "red\x1b[31m\x9b2J\u202eevil\u2028next\ttab\\slash\"quote"
    for raw, obs in (
        (response("contains", "needle"), observation(turns=[turn(1, hostile)])),
        (file_text("contains", "notes.md", "needle"), observation(final={"notes.md": hostile.encode()})),
    ):
        observed = grade_one(raw, obs).observed
        assert not any(ord(c) < 0x20 or 0x7F <= ord(c) <= 0x9F or c in "\u202e\u2028" for c in observed), repr(observed)
        assert '"red\\u001b[31m\\u009b2J\\u202eevil\\u2028next\\ttab\\\\slash\\"quote"' in observed, observed


def test_response_text_without_turns_is_grade_error() -> None:
    result = grade_one(response("contains", "x"), observation(turns=[]))
    assert result.status == "grade-error"
    assert result.error == "the run recorded no turns"


# --- tool-call ------------------------------------------------------------------------

CALLS = observation(
    turns=[
        turn(1, calls=[
            call("w1", "write", {"path": "out.txt", "content": "héllo"}),
            call("w2", "write", {"path": "x.txt", "content": ""}, is_error=True),
        ]),
        turn(2, calls=[call("e1", "edit", {"path": "/etc/passwd", "edits": []}, blocked=True)]),
        turn(3),
    ]
)


def tool(expect: str, name: str, turn_: int | None = None, **filters: Any) -> dict[str, Any]:
    raw: dict[str, Any] = {"kind": "tool-call", "expect": expect, "tool": name, **filters}
    if turn_ is not None:
        raw["turn"] = turn_
    return raw


@cases(
    Case("called-pass", tool("called", "write"), CALLS, "pass", "2 matching calls to write: 1 succeeded, 1 failed",
         ("turn 1, tool call w1 (write)", "turn 1, tool call w2 (write)")),
    Case("called-fail", tool("called", "read"), CALLS, "fail", "no call to read", ()),
    Case("called-filter-fail", tool("called", "write", argumentContains=["nope"]), CALLS, "fail",
         "no matching call to write; 2 calls did not match the argument filters"),
    Case("compact-json-filter", tool("called", "write", argumentContains=['"path":"out.txt"', "héllo"]), CALLS,
         "pass", locations=("turn 1, tool call w1 (write)",)),
    Case("sorted-keys-filter", tool("called", "write", argumentContains=['{"content":"","path":"x.txt"}']), CALLS, "pass"),
    Case("not-contains-filter", tool("called", "write", argumentNotContains=["out.txt"]), CALLS, "pass",
         locations=("turn 1, tool call w2 (write)",)),
    Case("succeeded-pass", tool("succeeded", "write"), CALLS, "pass"),
    Case("succeeded-fail-error", tool("succeeded", "write", argumentContains=["x.txt"]), CALLS, "fail"),
    Case("succeeded-fail-blocked", tool("succeeded", "edit"), CALLS, "fail",
         "1 matching call to edit: 0 succeeded, 1 failed (1 blocked by the guard)"),
    Case("failed-pass-blocked", tool("failed", "edit"), CALLS, "pass"),
    Case("failed-pass-error", tool("failed", "write"), CALLS, "pass"),
    Case("failed-fail", tool("failed", "write", argumentContains=["out.txt"]), CALLS, "fail"),
    Case("not-called-pass", tool("not-called", "read"), CALLS, "pass"),
    Case("not-called-filter-pass", tool("not-called", "write", argumentContains=["secret"]), CALLS, "pass"),
    Case("not-called-fail", tool("not-called", "write"), CALLS, "fail"),
    Case("not-called-blocked-counts-as-made", tool("not-called", "edit"), CALLS, "fail"),
    Case("turn-scoped-fail", tool("called", "write", 2), CALLS, "fail", "no call to write on turn 2"),
    Case("turn-scoped-pass", tool("called", "edit", 2), CALLS, "pass", locations=("turn 2, tool call e1 (edit)",)),
)
def test_tool_call(case: Case) -> None:
    run_case(case)


# --- context-text ---------------------------------------------------------------------

CONTEXTS = observation(
    context=[
        ContextRequest(1, 2, "alpha beta", "ctx two"),
        ContextRequest(1, 1, "alpha", "ctx one"),
        ContextRequest(3, 1, "gamma", "ctx three"),
    ]
)


def context(expect: str, value: str, turn_: int | None = None, **fields: Any) -> dict[str, Any]:
    raw: dict[str, Any] = {"kind": "context-text", "expect": expect, "value": value, **fields}
    if turn_ is not None:
        raw["turn"] = turn_
    return raw


@cases(
    Case("default-last-of-final-turn", context("contains", "gamma"), CONTEXTS, "pass",
         "the system prompt of model request 1 on turn 3 contains the text at line 1, column 1",
         ("context request 1 of turn 3 (system-prompt)",)),
    Case("contains-fail", context("contains", "alpha"), CONTEXTS, "fail"),
    Case("first-request", context("contains", "beta", 1, request="first"), CONTEXTS, "fail",
         locations=("context request 1 of turn 1 (system-prompt)",)),
    Case("last-request", context("contains", "beta", 1, request="last"), CONTEXTS, "pass"),
    Case("numbered-request", context("contains", "beta", 1, request=2), CONTEXTS, "pass",
         locations=("context request 2 of turn 1 (system-prompt)",)),
    Case("request-never-made", context("not-contains", "beta", 1, request=5), CONTEXTS, "fail",
         "turn 1 made 2 model requests; request 5 was never made", ()),
    Case("provider-context-equals", context("equals", "ctx two", 1, surface="provider-context"), CONTEXTS, "pass",
         locations=("context request 2 of turn 1 (provider-context)",)),
    Case("provider-context-equals-fail", context("equals", "ctx", 1, surface="provider-context"), CONTEXTS, "fail"),
    Case("not-contains-pass", context("not-contains", "beta", 1, request=1), CONTEXTS, "pass"),
    Case("not-contains-fail", context("not-contains", "gamma"), CONTEXTS, "fail"),
    Case("explicit-system-prompt", context("equals", "alpha", 1, surface="system-prompt", request="first"), CONTEXTS,
         "pass"),
)
def test_context_text(case: Case) -> None:
    run_case(case)


def test_context_text_without_observations_is_grade_error() -> None:
    result = grade_one(context("contains", "x"), observation())
    assert result.status == "grade-error"
    assert result.error == "the context observer recorded nothing for this run"


def test_context_text_turn_without_requests_is_grade_error() -> None:
    result = grade_one(context("contains", "x", 2), CONTEXTS)
    assert result.status == "grade-error"
    assert result.error == "the context observer recorded no model request on turn 2"
