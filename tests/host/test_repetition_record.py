"""What a stopped run stores and says about its repetition: every key, and a one-line reason
with long arguments cut."""

from __future__ import annotations

from pytest_skill_eval.host.repetition import Repetition, Step, canonical

READ = Step("read", {"path": "a.txt"}, "0" * 64, False, 3)
WRITE = Step("write", {"path": "b", "content": "x" * 300}, "1" * 64, True, 5)


def test_a_repetition_stores_every_key() -> None:
    found = Repetition((READ, WRITE), 3, 2, 9, "f" * 64)
    assert found.to_json() == {
        "kind": "repeated-tool-calls", "count": 3, "period": 2,
        "cycle": [{"tool": "read", "arguments": {"path": "a.txt"}, "result_sha256": "0" * 64, "is_error": False},
                  {"tool": "write", "arguments": {"path": "b", "content": "x" * 300}, "result_sha256": "1" * 64,
                   "is_error": True}],
        "records": [2, 9], "workspace_sha256": "f" * 64,
    }


def test_the_reason_names_the_cycle_and_cuts_long_arguments() -> None:
    one = Repetition((READ,), 5, 0, 4, "f" * 64)
    assert one.reason() == ('no progress: the subject repeated the same tool call 5 times in a row with the same '
                            'results and an unchanged workspace (read {"path":"a.txt"}) (repeating subject)')
    two = Repetition((READ, WRITE), 3, 0, 9, "f" * 64)
    written = '{"content":"' + "x" * 300 + '","path":"b"}'
    assert two.reason() == ('no progress: the subject repeated the same cycle of 2 tool calls 3 times in a row with '
                            'the same results and an unchanged workspace (read {"path":"a.txt"}, then write '
                            f"{written[:200]}… ({len(written)} characters)) (repeating subject)")
    exact = Step("read", "y" * 198, "0" * 64, False, 1)  # its canonical text is 200 characters: not cut
    assert Repetition((exact,), 2, 0, 1, "f" * 64).reason().endswith(f'(read "{"y" * 198}") (repeating subject)')


def test_one_spelling_of_a_json_value() -> None:
    assert canonical({"b": ["é", 1.5, None], "a": {"y": 1, "x": True}}) == '{"a":{"x":true,"y":1},"b":["é",1.5,null]}'
