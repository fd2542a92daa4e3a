"""The no-progress detector for a subject that repeats itself (pure: records in, a cycle out).

The workspace is a dict standing in for the tree; its digest is injected as it is by the
driver (there a content digest of the real tree: tests/host/test_treedigest.py).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from typing import Any

import pytest

from pytest_skill_eval.host.repetition import Repetition, RepetitionDetector


class Subject:
    """Feeds pi-shaped tool records to a detector, with a fake workspace it can change."""

    def __init__(self, limit: int = 5) -> None:
        self.files: dict[str, str] = {"a.txt": "one"}
        self.digests = 0
        self.detector = RepetitionDetector(limit, self.digest)
        self.index = 0
        self.ids: Iterator[int] = iter(range(10**6))

    def digest(self) -> str:
        self.digests += 1
        return json.dumps(self.files, sort_keys=True)

    def _feed(self, data: dict[str, Any]) -> Repetition | None:
        self.index += 1
        return self.detector.observe(data, self.index)

    def call(self, tool: str, args: dict[str, Any], result: str, *, error: bool = False,
             write: tuple[str, str] | None = None) -> Repetition | None:
        cid = f"call-{next(self.ids)}"
        assert self._feed({"type": "tool_execution_start", "toolCallId": cid, "toolName": tool, "args": args}) is None
        if write is not None:
            self.files[write[0]] = write[1]
        return self._feed({"type": "tool_execution_end", "toolCallId": cid, "toolName": tool,
                           "result": {"content": [{"type": "text", "text": result}]}, "isError": error})

    def prompt(self) -> None:
        assert self._feed({"type": "agent_start"}) is None


def test_the_same_call_with_the_same_result_k_times_stops_at_the_kth() -> None:
    s = Subject(limit=5)
    outcomes = [s.call("read", {"path": "a.txt"}, "one") for _ in range(5)]
    assert outcomes[:4] == [None] * 4
    found = outcomes[4]
    assert found is not None
    assert found.count == 5 and len(found.cycle) == 1
    assert found.cycle[0].tool == "read" and found.cycle[0].arguments == {"path": "a.txt"}
    assert found.first_record == 1 and found.last_record == 10  # first start .. last end
    record = found.to_json()
    assert record["kind"] == "repeated-tool-calls" and record["period"] == 1 and record["count"] == 5
    assert record["cycle"][0]["is_error"] is False and len(record["cycle"][0]["result_sha256"]) == 64
    assert 'read {"path":"a.txt"}' in found.reason() and "5 times" in found.reason()


def test_a_write_then_read_cycle_of_the_same_bytes_stops_after_k_cycles_that_changed_nothing() -> None:
    s = Subject(limit=3)
    s.files = {}
    # the first write creates the file (progress); the next three cycles change nothing
    seen = []
    for _ in range(4):
        seen.append(s.call("write", {"path": "b.txt", "content": "x"}, "wrote 1 byte", write=("b.txt", "x")))
        seen.append(s.call("read", {"path": "b.txt"}, "x"))
    # a cycle may begin at any call: read, write repeated three times from the first read on
    assert seen[:6] == [None] * 6
    found = seen[6]
    assert found is not None and found.count == 3
    assert [c.tool for c in found.cycle] == ["read", "write"]


def test_a_cycle_of_three_calls_is_found() -> None:
    s = Subject(limit=2)
    cycle = [("read", {"path": "a.txt"}, "one"), ("ls", {"path": "."}, "a.txt"), ("grep", {"pattern": "x"}, "none")]
    seen = [s.call(*c) for _ in range(2) for c in cycle]
    assert seen[:-1] == [None] * 5
    assert seen[-1] is not None and [c.tool for c in seen[-1].cycle] == ["read", "ls", "grep"]


def test_a_guard_refusal_repeated_is_a_cycle_too() -> None:
    s = Subject(limit=3)
    seen = [s.call("edit", {"path": "SKILL.md", "oldText": "a", "newText": "b"}, "blocked: read-only", error=True)
            for _ in range(3)]
    assert seen[-1] is not None and seen[-1].cycle[0].is_error


def test_one_short_of_the_limit_is_not_stopped() -> None:
    s = Subject(limit=5)
    assert [s.call("read", {"path": "a.txt"}, "one") for _ in range(4)] == [None] * 4


def test_a_break_in_the_run_starts_the_count_again() -> None:
    s = Subject(limit=3)
    assert s.call("read", {"path": "a.txt"}, "one") is None
    assert s.call("read", {"path": "a.txt"}, "one") is None
    assert s.call("ls", {"path": "."}, "a.txt") is None  # near miss: two, then something else
    assert s.call("read", {"path": "a.txt"}, "one") is None
    assert s.call("read", {"path": "a.txt"}, "one") is None
    assert s.call("read", {"path": "a.txt"}, "one") is not None


def test_the_same_tool_with_changing_arguments_is_never_stopped() -> None:
    s = Subject(limit=2)
    assert all(s.call("read", {"path": f"f{i}.txt"}, "same text") is None for i in range(200))


def test_argument_key_order_is_no_change() -> None:
    s = Subject(limit=2)
    assert s.call("read", {"path": "a.txt", "offset": 1}, "one") is None
    assert s.call("read", {"offset": 1, "path": "a.txt"}, "one") is not None


def test_a_changing_result_is_progress() -> None:
    s = Subject(limit=2)
    assert all(s.call("bash", {"command": "date"}, f"tick {i}") is None for i in range(100))


def test_a_changing_file_is_progress_even_with_identical_calls_and_results() -> None:
    s = Subject(limit=2)
    # the same call and the same result, but the workspace grows each time (an append tool)
    assert all(s.call("append", {"path": "log", "line": "x"}, "ok", write=("log", "x" * (i + 1))) is None
               for i in range(100))


def test_a_write_whose_content_changes_each_time_is_never_stopped() -> None:
    s = Subject(limit=2)
    for i in range(50):
        assert s.call("write", {"path": "b.txt", "content": str(i)}, "wrote", write=("b.txt", str(i))) is None
        assert s.call("read", {"path": "b.txt"}, str(i)) is None


def test_a_change_inside_the_window_is_progress() -> None:
    s = Subject(limit=3)
    assert s.call("read", {"path": "a.txt"}, "one") is None
    s.files["other"] = "changed by something else"  # seen by the next call's digest
    assert s.call("read", {"path": "a.txt"}, "one") is None
    assert s.call("read", {"path": "a.txt"}, "one") is None
    assert s.call("read", {"path": "a.txt"}, "one") is None
    assert s.call("read", {"path": "a.txt"}, "one") is not None  # three unchanged since the change


def test_a_new_prompt_starts_afresh() -> None:
    s = Subject(limit=3)
    assert s.call("read", {"path": "a.txt"}, "one") is None
    assert s.call("read", {"path": "a.txt"}, "one") is None
    s.prompt()
    assert s.call("read", {"path": "a.txt"}, "one") is None
    assert s.call("read", {"path": "a.txt"}, "one") is None
    assert s.call("read", {"path": "a.txt"}, "one") is not None


def test_a_period_two_alternation_with_a_different_result_is_not_a_period_one_cycle() -> None:
    s = Subject(limit=3)
    seen = []
    for _ in range(3):
        seen.append(s.call("read", {"path": "a.txt"}, "one"))
        seen.append(s.call("read", {"path": "a.txt"}, "two"))
    assert seen[:-1] == [None] * 5 and seen[-1] is not None and len(seen[-1].cycle) == 2


def test_memory_stays_bounded_over_a_long_progressing_run() -> None:
    s = Subject(limit=5)
    for i in range(5000):
        s.call("read", {"path": f"f{i}"}, "x")
    assert len(s.detector._steps) <= 5 * 8  # noqa: SLF001 (the bound is the point)


def test_a_limit_below_two_is_refused() -> None:
    with pytest.raises(ValueError, match="at least 2"):
        RepetitionDetector(1, lambda: "")


def test_a_cycle_of_the_longest_period_fills_the_kept_window_and_is_found() -> None:
    s = Subject(limit=5)  # 8 calls x 5 repetitions: exactly the 40 steps the detector keeps
    cycle = [("read", {"path": f"f{i}"}, f"text {i}") for i in range(8)]
    seen = [s.call(*c) for _ in range(5) for c in cycle]
    assert seen[:-1] == [None] * 39
    found = seen[-1]
    assert found is not None and found.count == 5 and [c.arguments["path"] for c in found.cycle] == [
        f"f{i}" for i in range(8)]
    assert found.first_record == 1 and found.last_record == 80


def test_a_repetition_straddling_the_window_trim_is_found_at_the_kth() -> None:
    s = Subject(limit=5)
    for i in range(38):  # progress: 38 different calls, so the window is trimmed during the repetition
        assert s.call("read", {"path": f"f{i}"}, "x") is None
    seen = [s.call("read", {"path": "a.txt"}, "one") for _ in range(5)]
    assert seen[:4] == [None] * 4
    found = seen[4]
    assert found is not None and found.count == 5 and found.first_record == 2 * 38 + 1


def test_a_call_that_flips_the_workspace_back_and_forth_is_a_cycle_of_two() -> None:
    # the same call and result each time, but each call changes the tree and the next undoes it:
    # not a one-call cycle (the workspace differs at every call boundary), but a two-call cycle
    # whose boundaries are all the same workspace
    s = Subject(limit=2)
    seen = [s.call("toggle", {"path": "t"}, "ok", write=("t", "on" if i % 2 == 0 else "off")) for i in range(5)]
    assert seen[:4] == [None] * 4  # the first call created t: before it the tree was another one
    found = seen[4]
    assert found is not None and found.count == 2 and len(found.cycle) == 2
    assert found.workspace_sha256 == json.dumps({"a.txt": "one", "t": "on"}, sort_keys=True)
    assert found.first_record == 3 and found.last_record == 10


def test_the_stored_workspace_digest_is_the_one_that_stayed_the_same() -> None:
    s = Subject(limit=3)
    assert s.call("read", {"path": "a.txt"}, "one") is None
    s.files["other"] = "changed"
    found = [s.call("read", {"path": "a.txt"}, "one") for _ in range(4)][-1]
    assert found is not None
    assert found.workspace_sha256 == json.dumps({"a.txt": "one", "other": "changed"}, sort_keys=True)
    assert found.to_json()["workspace_sha256"] == found.workspace_sha256


def test_the_result_digest_is_the_sha256_of_the_canonical_result_and_error_flag() -> None:
    # evidence.md: "the SHA-256 of its result (the canonical JSON of pi's result and isError)"
    for error, spelled in ((False, "false"), (True, "true")):
        s = Subject(limit=2)
        found = [s.call("read", {"path": "a.txt"}, "one", error=error) for _ in range(2)][-1]
        assert found is not None
        text = '{"isError":' + spelled + ',"result":{"content":[{"text":"one","type":"text"}]}}'
        assert found.cycle[0].result_sha256 == hashlib.sha256(text.encode()).hexdigest()


def test_end_records_without_a_start_are_counted_by_the_end_records_tool() -> None:
    # a stream cut or reordered so that the starts are missing: the end record still names the tool
    s = Subject(limit=3)
    seen = [s._feed({"type": "tool_execution_end", "toolCallId": "lost", "toolName": "read",  # noqa: SLF001
                     "result": {"content": [{"type": "text", "text": "one"}]}, "isError": False})
            for _ in range(3)]
    assert seen[:2] == [None, None]
    found = seen[2]
    assert found is not None and found.count == 3 and s.digests == 4  # before the first call, after each
    assert found.cycle[0].tool == "read" and found.cycle[0].arguments is None
    # the first record of a call without a start is its end record (an events.jsonl index, not -1)
    assert found.to_json()["records"] == [1, 3]
