"""What each kind says it observed, for the branches the kind tables leave unpinned.

(Text-check sentences -- contains / equals -- are left to test_kinds: their wording is
being extended with excerpts of what was found.)
"""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from pytest_skill_eval.grading.kinds import judge, redaction_note
from pytest_skill_eval.grading.shapes import parse_check
from pytest_skill_eval.observation import RunObservation

from .builders import expectation, grade_one, group, observation, read, turn

TYPES = observation(final={
    "obj.json": b'{"a": 1}', "arr.json": b"[1]", "str.json": b'"s"', "bool.json": b"false", "null.json": b"null",
    "num.json": b"-1.5e3", "int.json": b"7", "dir/a.json": b"{}", "dir/b.json": b"{}",
})


@pytest.mark.parametrize(("path", "described"), [
    ("obj.json", "an object"), ("arr.json", "an array"), ("str.json", "a string"), ("bool.json", "a boolean"),
    ("null.json", "null"), ("num.json", "a number"), ("int.json", "a number"),
])
def test_valid_json_names_the_document_type(path: str, described: str) -> None:
    result = grade_one({"kind": "json", "expect": "valid", "path": path}, TYPES)
    assert (result.status, result.observed) == ("pass", f"{path} is valid JSON ({described})")
    malformed = grade_one({"kind": "json", "expect": "malformed", "path": path}, TYPES)
    assert (malformed.status, malformed.observed) == ("fail", f"{path} is valid JSON ({described})")


@pytest.mark.parametrize(("raw", "status", "observed", "locations"), [
    ({"expect": "available", "path": "dir"}, "fail", "dir is a directory (2 files under it), not a file",
     ("final workspace dir",)),
    ({"expect": "missing", "path": "dir"}, "pass", "dir is a directory (2 files under it), not a file",
     ("final workspace dir",)),
    ({"expect": "missing", "path": "int.json"}, "fail", "int.json exists (1 byte)", ("final workspace int.json",)),
    ({"expect": "field-present", "path": "gone.json", "pointer": "/a"}, "fail", "gone.json does not exist",
     ("final workspace gone.json",)),
    ({"expect": "field-absent", "path": "obj.json", "pointer": "/b"}, "pass", 'obj.json has no value at pointer "/b"',
     ('final workspace obj.json at pointer "/b"',)),
    ({"expect": "field-absent", "path": "obj.json", "pointer": "/a"}, "fail", 'the value at pointer "/a" is 1',
     ('final workspace obj.json at pointer "/a"',)),
    ({"expect": "field-equals", "path": "obj.json", "pointer": "/b", "value": None}, "fail",
     'obj.json has no value at pointer "/b"', ('final workspace obj.json at pointer "/b"',)),
    ({"expect": "field-equals", "path": "arr.json", "pointer": "", "value": [1]}, "pass", 'the value at pointer "" is [1]',
     ('final workspace arr.json at pointer ""',)),
    ({"expect": "field-present", "path": "obj.json", "pointer": "/a"}, "pass", 'the value at pointer "/a" is 1',
     ('final workspace obj.json at pointer "/a"',)),
    ({"expect": "valid", "path": "dir"}, "fail", "dir is a directory (2 files under it), not a file",
     ("final workspace dir",)),
])
def test_json_observations(raw: dict[str, Any], status: str, observed: str, locations: tuple[str, ...]) -> None:
    result = grade_one({"kind": "json", **raw}, TYPES)
    assert (result.status, result.observed, result.locations) == (status, observed, locations)


def test_json_after_a_turn_reads_that_snapshot() -> None:
    obs = observation(final={"r.json": b"{}"}, turn_files={1: {"r.json": b"[]"}})
    result = grade_one({"kind": "json", "expect": "valid", "path": "r.json", "turn": 1}, obs)
    assert (result.observed, result.locations) == ("r.json is valid JSON (an array)", ("workspace r.json after turn 1",))


def test_path_observations() -> None:
    obs = observation(final={"a/b": b"", "a/c/d": b"", "f": b"x"})
    directory = grade_one({"kind": "path", "expect": "exists", "path": "a"}, obs)
    assert (directory.status, directory.observed) == ("pass", "a is a directory with 2 files under it")
    single = grade_one({"kind": "path", "expect": "absent", "path": "a/c"}, obs)
    assert (single.status, single.observed) == ("fail", "a/c is a directory with 1 file under it")
    prefix_only = grade_one({"kind": "path", "expect": "absent", "path": "a/b/x"}, obs)
    assert prefix_only.status == "pass" and prefix_only.observed == "a/b/x does not exist"
    file_ = grade_one({"kind": "path", "expect": "exists", "path": "f", "turn": 2},
                      observation(turn_files={2: {"f": b""}}))
    assert (file_.observed, file_.locations) == ("f is a file", ("workspace f after turn 2",))


def test_file_text_observations() -> None:
    obs = observation(final={"n.md": b"caf\xe9", "d/x": b""})
    bad = grade_one({"kind": "file-text", "expect": "contains", "path": "n.md", "value": "c"}, obs)
    assert (bad.status, bad.observed) == ("fail", "n.md is not UTF-8 text (invalid byte at offset 3)")
    assert bad.locations == ("final workspace n.md",)
    missing = grade_one({"kind": "file-text", "expect": "not-contains", "path": "d", "value": "c"}, obs)
    assert (missing.status, missing.observed) == ("fail", "d is a directory (1 file under it), not a file")


def test_changed_paths_observations() -> None:
    obs = observation(initial={"a": b"1", "b": b"1"}, final={"a": b"2", "c": b"new"})
    hit = grade_one({"kind": "changed-paths", "expect": "excludes", "paths": ["c", "b", "z"]}, obs)
    assert (hit.status, hit.observed) == ("fail", "excluded files changed: b (removed), c (added)")
    assert hit.locations == ("final workspace changes",)
    clean = grade_one({"kind": "changed-paths", "expect": "excludes", "paths": ["z"]}, obs)
    assert (clean.status, clean.observed) == ("pass", "changed files: a (modified), b (removed), c (added)")
    nothing = grade_one({"kind": "changed-paths", "expect": "equals", "paths": [], "turn": 1},
                        observation(initial={"a": b"1"}, turn_files={1: {"a": b"1"}}))
    assert (nothing.status, nothing.observed, nothing.locations) == (
        "pass", "no file changed", ("workspace changes after turn 1",))
    exact = grade_one({"kind": "changed-paths", "expect": "equals", "paths": ["a", "b", "c"]}, obs)
    assert (exact.status, exact.observed) == ("pass", "changed files: a (modified), b (removed), c (added)")


def test_resource_read_observations() -> None:
    obs = observation(turns=[turn(1, calls=[read("c1", "/run/ws/a.md")]), turn(2),
                             turn(3, calls=[read("c3", "/run/ws/a.md"), read("c4", "a.md")])])
    anywhere = grade_one({"kind": "resource-read", "expect": "read", "resource": "workspace", "path": "a.md"}, obs)
    assert (anywhere.status, anywhere.observed) == ("pass", "read 3 times, first on turn 1")
    assert anywhere.locations == ("turn 1, tool call c1 (read)", "turn 3, tool call c3 (read)",
                                  "turn 3, tool call c4 (read)")
    on_three = grade_one({"kind": "resource-read", "expect": "not-read", "resource": "workspace", "path": "a.md",
                          "turn": 3}, obs)
    assert (on_three.status, on_three.observed) == ("fail", "read 2 times on turn 3")
    on_two = grade_one({"kind": "resource-read", "expect": "not-read", "resource": "workspace", "path": "a.md",
                        "turn": 2}, obs)
    assert (on_two.status, on_two.observed, on_two.locations) == ("pass", "not read on turn 2", ())
    never = grade_one({"kind": "resource-read", "expect": "read", "resource": "context", "index": 0, "path": "."}, obs)
    assert (never.status, never.observed) == ("fail", "not read")
    context = grade_one({"kind": "resource-read", "expect": "read", "resource": "context", "index": 1, "path": "x.md"},
                        observation(turns=[turn(1, calls=[read("c1", "/run/context/1/x.md")])]))
    assert (context.status, context.observed) == ("pass", "read 1 time, first on turn 1")


# -- redaction notes -----------------------------------------------------------------------

def check_of(raw: dict[str, Any]) -> Any:
    raw = {"id": "e", "variant": "candidate", **raw}
    check, problems = parse_check(group([raw]), expectation(raw))
    assert check is not None, problems
    return check


def redacted(obs: RunObservation, counts: dict[str, int]) -> RunObservation:
    return dataclasses.replace(obs, redactions=counts)


REDACTED = {"workspace/a.txt": 2, "workspace/b.txt": 1, "turns/1/workspace/a.txt": 1, "workspace-initial/c.txt": 3,
            "events.jsonl": 4}


@pytest.mark.parametrize(("raw", "note"), [
    ({"kind": "file-text", "expect": "contains", "path": "a.txt", "value": "x"},
     "note: redacted file(s), inherited values replaced by <redacted>: workspace/a.txt (2 values)"),
    ({"kind": "file-text", "expect": "contains", "path": "a.txt", "value": "x", "turn": 1},
     "note: redacted file(s), inherited values replaced by <redacted>: turns/1/workspace/a.txt (1 value)"),
    ({"kind": "path", "expect": "exists", "path": "b.txt"},
     "note: redacted file(s), inherited values replaced by <redacted>: workspace/b.txt (1 value)"),
    ({"kind": "json", "expect": "valid", "path": "a.txt"},
     "note: redacted file(s), inherited values replaced by <redacted>: workspace/a.txt (2 values)"),
    ({"kind": "changed-paths", "expect": "equals", "paths": []},
     ("note: redacted file(s), inherited values replaced by <redacted>: workspace-initial/c.txt (3 values), "
     "workspace/a.txt (2 values), workspace/b.txt (1 value)")),
    ({"kind": "changed-paths", "expect": "excludes", "paths": ["q"], "turn": 1},
     ("note: redacted file(s), inherited values replaced by <redacted>: turns/1/workspace/a.txt (1 value), "
     "workspace-initial/c.txt (3 values)")),
    ({"kind": "file-text", "expect": "contains", "path": "c.txt", "value": "x"}, None),
    ({"kind": "file-text", "expect": "contains", "path": "b.txt", "value": "x", "turn": 1}, None),
    ({"kind": "response-text", "expect": "contains", "value": "x"}, None),
    ({"kind": "resource-read", "expect": "read", "resource": "workspace", "path": "a.txt"}, None),
])
def test_redaction_note(raw: dict[str, Any], note: str | None) -> None:
    check = check_of(raw)
    assert redaction_note(check, redacted(observation(), REDACTED)) == note
    assert redaction_note(check, observation()) is None


def test_a_redaction_note_is_appended_to_the_observation() -> None:
    obs = redacted(observation(final={"a.txt": b"<redacted>"}), {"workspace/a.txt": 1})
    raw = {"kind": "file-text", "expect": "not-contains", "path": "a.txt", "value": "zzz"}
    verdict = judge(check_of(raw), obs, group([{"id": "e", "variant": "candidate", **raw}]))
    assert verdict.passed
    assert verdict.observed.endswith(
        "; note: redacted file(s), inherited values replaced by <redacted>: workspace/a.txt (1 value)")
    assert verdict.locations == ("final workspace a.txt",)
    result = grade_one(raw, obs)
    assert result.observed == verdict.observed and result.status == "pass"


def test_locations_of_absent_files_and_unchanged_exclusions() -> None:
    obs = observation(initial={"a": b"1"}, final={"a": b"1", "broken.json": b"{"})
    missing = grade_one({"kind": "file-text", "expect": "contains", "path": "gone", "value": "x"}, obs)
    assert (missing.status, missing.locations) == ("fail", ("final workspace gone",))
    clean = grade_one({"kind": "changed-paths", "expect": "excludes", "paths": ["a"], "turn": 1},
                      observation(initial={"a": b"1"}, turn_files={1: {"a": b"1"}}))
    assert (clean.status, clean.observed, clean.locations) == ("pass", "no file changed", ("workspace changes after turn 1",))
    malformed = grade_one({"kind": "json", "expect": "malformed", "path": "broken.json"}, obs)
    assert (malformed.status, malformed.locations) == ("pass", ("final workspace broken.json",))


@pytest.mark.parametrize(("text", "value", "where"), [
    ("abc abc", "abc", "line 1, column 1"),  # the first occurrence
    ("\nabc", "abc", "line 2, column 1"),
    ("a\nb\ncd", "d", "line 3, column 2"),
    ("x\n\nyz", "z", "line 3, column 2"),
])
def test_contains_names_the_first_occurrence(text: str, value: str, where: str) -> None:
    result = grade_one({"kind": "file-text", "expect": "contains", "path": "n", "value": value},
                       observation(final={"n": text.encode()}))
    assert result.status == "pass"
    assert where in result.observed


def test_equals_shows_forty_characters_of_the_difference() -> None:
    found = "x" + "y" * 60
    result = grade_one({"kind": "file-text", "expect": "equals", "path": "n", "value": "xz"},
                       observation(final={"n": found.encode()}))
    assert result.status == "fail"
    # forty characters of what was found, and an ellipsis because more follows
    assert result.observed.endswith('found "' + "y" * 40 + '"…')


def test_the_target_sentence_names_each_variants_own_target() -> None:
    from pytest_skill_eval.grading.checks import SkillRead
    from pytest_skill_eval.grading.kinds import describe_expected

    g = group(baseline_target=0, candidate_target=1)
    sentences = {v: describe_expected(SkillRead(expect="never", variant=v), g) for v in ("baseline", "candidate")}
    assert sentences == {"baseline": "the target skill skills/support is never read",
                         "candidate": "the target skill skills/target is never read"}
    # a target the loader would have refused still gets a sentence
    for target in (None, 2):
        odd = group(candidate_target=target)
        assert describe_expected(SkillRead(expect="never", variant="candidate"), odd) == "the target skill is never read"


def test_resource_sentences_name_each_variants_own_items() -> None:
    from pytest_skill_eval.grading.checks import ResourceRead
    from pytest_skill_eval.grading.kinds import describe_expected

    g = group()
    g = dataclasses.replace(g, baseline=dataclasses.replace(g.baseline, skills=("skills/old",), context=("ctx/old.md",)))
    check = ResourceRead(expect="read", variant="baseline", path=".", resource="context", index=0)
    assert describe_expected(check, g) == "context item 0 (ctx/old.md) is read on any turn"
    check = ResourceRead(expect="not-read", variant="baseline", turn=2, path="x.md", resource="skill", index=0)
    assert describe_expected(check, g) == "file x.md of skill 0 (skills/old) is not read on turn 2"
