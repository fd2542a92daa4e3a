"""The pure core of the scripted stand-in: request reading, conditions, planning, validation."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from pytest_skill_eval.errors import ScriptError
from pytest_skill_eval.scripted.conversation import DeliveredSkill, ListedSkill, read_conversation
from pytest_skill_eval.scripted.format import (
    AllOf,
    AnyOf,
    Condition,
    ConversationContains,
    LastToolResultContains,
    Not,
    SkillDescriptionContains,
    SkillListed,
    SystemPromptContains,
    UserMessageContains,
    load_script,
    parse_script,
)
from pytest_skill_eval.scripted.replies import PlannedToolCall, ReplyUsage, holds, plan_reply

# A system prompt shaped exactly like pi 1.6's (abridged preamble), with XML-escaped values.
SYSTEM_PROMPT = """You are a coding assistant running inside pi, a coding agent harness.

<skills>
The following skills provide specialized instructions for specific tasks.
Use the read tool to load a skill's file when the task matches its description.

<available_skills>
  <skill>
    <name>demo-skill</name>
    <description>Produce result.json for the &lt;demo&gt; task &amp; &quot;more&quot;. Use when asked.</description>
    <location>/skills/demo-skill/SKILL.md</location>
  </skill>
  <skill>
    <name>other</name>
    <description>Summarise logs &amp;amp; traces.</description>
    <location>/skills/other/SKILL.md</location>
  </skill>
</available_skills>
</skills>

<cwd>
/work/space
</cwd>"""

DELIVERED = (
    '<skill name="demo-skill" location="/skills/demo-skill/SKILL.md">\n'
    "References are relative to /skills/demo-skill.\n\n# Demo\nDo it.\n</skill>\n\ngo"
)


def user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": [{"type": "text", "text": text}]}


def assistant_calls(*names: str) -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {"id": f"c{i}", "type": "function", "function": {"name": n, "arguments": "{}"}}
            for i, n in enumerate(names)
        ],
    }


def tool(text: str, call_id: str = "c0") -> dict[str, Any]:
    return {"role": "tool", "content": text, "tool_call_id": call_id}


def request(*messages: dict[str, Any], system: str = SYSTEM_PROMPT) -> dict[str, Any]:
    return {
        "model": "m",
        "stream": True,
        "messages": [{"role": "system", "content": system}, *messages],
    }


def script(*turns: Any, source: str = "s.json") -> Any:
    return parse_script({"schema": "skill-eval-script/1", "turns": list(turns)}, source)


# ------------------------------------------------------------------------- reading


def test_read_conversation_extracts_skills_cwd_and_position() -> None:
    conversation = read_conversation(request(
        user("first"),
        {"role": "assistant", "content": "ok"},
        user(DELIVERED),
        assistant_calls("read", "read"),
        tool("one", "c0"),
        tool("two", "c1"),
    ))
    assert conversation.skills == (
        ListedSkill(
            "demo-skill",
            'Produce result.json for the <demo> task & "more". Use when asked.',
            "/skills/demo-skill/SKILL.md",
        ),
        # One unescaping pass only: pi escaped a literal "&amp;" to "&amp;amp;".
        ListedSkill("other", "Summarise logs &amp; traces.", "/skills/other/SKILL.md"),
    )
    assert conversation.skills[0].dir == "/skills/demo-skill"
    assert conversation.cwd == "/work/space"
    assert conversation.delivered == (DeliveredSkill("demo-skill", "/skills/demo-skill/SKILL.md"),)
    assert (conversation.turn, conversation.step) == (2, 1)
    assert conversation.current_user_message == DELIVERED
    assert conversation.tool_results == ("one", "two")
    assert conversation.latest_tool_results == ("one", "two")


@pytest.mark.parametrize(
    ("messages", "turn", "step", "latest"),
    [
        ([], 0, 0, ()),
        ([user("a")], 1, 0, ()),
        ([user("a"), assistant_calls("read"), tool("r1")], 1, 1, ("r1",)),
        ([user("a"), assistant_calls("read"), tool("r1"), assistant_calls("read"), tool("r2")], 1, 2, ("r2",)),
        ([user("a"), assistant_calls("read"), tool("r1"), {"role": "assistant", "content": "x"}], 1, 2, ()),
        ([user("a"), assistant_calls("read"), tool("r1"), {"role": "assistant", "content": "x"}, user("b")], 2, 0, ()),
    ],
    ids=["no-user", "first-request", "after-tool", "second-tool-round", "after-text", "second-turn"],
)
def test_turn_step_and_latest_tool_results(
    messages: list[dict[str, Any]], turn: int, step: int, latest: tuple[str, ...]
) -> None:
    conversation = read_conversation(request(*messages))
    assert (conversation.turn, conversation.step, conversation.latest_tool_results) == (turn, step, latest)


def test_read_conversation_tolerates_odd_bodies() -> None:
    assert read_conversation({}).turn == 0
    odd = read_conversation({"messages": ["x", {"role": "user", "content": None}, {"role": "user"}]})
    assert (odd.turn, odd.user_messages, odd.skills, odd.cwd) == (2, ("", ""), (), None)
    plain = read_conversation({"messages": [{"role": "developer", "content": "<cwd>\nC:\\w\n</cwd>"}]})
    assert plain.cwd == "C:/w"


# ---------------------------------------------------------------------- conditions

CONVERSATION = read_conversation(request(
    user("first question"), {"role": "assistant", "content": "ok"},
    user("please run the demo"), assistant_calls("read"), tool("file says hello"),
))


@pytest.mark.parametrize(
    ("condition", "expected"),
    [
        (SystemPromptContains("coding agent harness"), True),
        (SystemPromptContains("Coding Agent"), False),
        (SkillDescriptionContains('<demo> task & "more"'), True),
        (SkillDescriptionContains("&lt;demo&gt;"), False),
        (SkillListed("other"), True),
        (SkillListed("demo"), False),
        (UserMessageContains("run the demo"), True),
        (UserMessageContains("first question"), False),
        (ConversationContains("first question"), True),
        (ConversationContains("file says"), True),
        (ConversationContains("nowhere"), False),
        (LastToolResultContains("hello"), True),
        (LastToolResultContains("goodbye"), False),
        (AllOf((SkillListed("other"), UserMessageContains("demo"))), True),
        (AllOf((SkillListed("other"), UserMessageContains("nope"))), False),
        (AnyOf((SkillListed("nope"), UserMessageContains("demo"))), True),
        (AnyOf((SkillListed("nope"), UserMessageContains("nope"))), False),
        (Not(SkillListed("nope")), True),
        (Not(Not(SkillListed("nope"))), False),
    ],
    ids=repr,
)
def test_holds(condition: Condition, expected: bool) -> None:
    assert holds(condition, CONVERSATION) is expected


def test_last_tool_result_is_false_on_a_turns_first_request() -> None:
    fresh_turn = read_conversation(request(user("a"), assistant_calls("read"), tool("hello"), user("b")))
    assert holds(LastToolResultContains("hello"), fresh_turn) is False
    assert holds(ConversationContains("hello"), fresh_turn) is True


# ------------------------------------------------------------------------ planning

READ_SKILL = {
    "rules": [
        {"when": {"skill_description_contains": "<demo> task"}, "steps": [
            {"text": "Reading.", "tool_calls": [
                {"name": "read", "arguments": {"path": "{{skill_matching:<demo>.location}}"}},
                {"name": "read", "arguments": {"path": "{{cwd}}/input.txt", "limit": 5}},
            ]},
            {"text": "Done."},
        ]},
        {"when": {"skill_listed": "other"}, "steps": [{"text": "Other is listed."}]},
    ],
    "steps": [{"text": "Nothing to do."}],
}


def test_first_matching_rule_picks_the_steps_and_placeholders_resolve() -> None:
    body = request(user("go"))
    reply = plan_reply(script(READ_SKILL), body)
    assert (reply.turn, reply.step, reply.outcome, reply.rule) == (1, 0, "scripted", 0)
    assert reply.source == "/turns/0/rules/0/steps/0"
    assert reply.text == "Reading."
    assert reply.tool_calls == (
        PlannedToolCall("call_1_0_0", "read", '{"path": "/skills/demo-skill/SKILL.md"}'),
        PlannedToolCall("call_1_0_1", "read", '{"path": "/work/space/input.txt", "limit": 5}'),
    )
    assert reply.finish_reason == "tool_calls"
    completion = "Reading." + "".join(c.name + c.arguments for c in reply.tool_calls)
    assert reply.usage == ReplyUsage(len(json.dumps(body, separators=(",", ":"))) // 4, len(completion) // 4)
    assert reply.usage.total_tokens == reply.usage.prompt_tokens + reply.usage.completion_tokens

    second = plan_reply(script(READ_SKILL), request(user("go"), assistant_calls("read", "read"), tool("a"), tool("b")))
    assert (second.step, second.source, second.text, second.finish_reason) == (1, "/turns/0/rules/0/steps/1", "Done.", "stop")


def test_later_rule_and_default_steps() -> None:
    without_demo = SYSTEM_PROMPT.replace("&lt;demo&gt; task", "other task")
    reply = plan_reply(script(READ_SKILL), request(user("go"), system=without_demo))
    assert (reply.rule, reply.source, reply.text) == (1, "/turns/0/rules/1/steps/0", "Other is listed.")
    nothing = plan_reply(script(READ_SKILL), request(user("go"), system="no skills here"))
    assert (nothing.rule, nothing.source, nothing.text) == (None, "/turns/0/steps/0", "Nothing to do.")


def test_conditions_are_evaluated_on_every_request() -> None:
    turn = {
        "rules": [{"when": {"last_tool_result_contains": "ENOENT"}, "steps": [{"text": "x"}, {"text": "Missing file."}]}],
        "steps": [{"tool_calls": [{"name": "read", "arguments": {"path": "a"}}]}, {"text": "Read it."}],
    }
    found = plan_reply(script(turn), request(user("go"), assistant_calls("read"), tool("content")))
    missing = plan_reply(script(turn), request(user("go"), assistant_calls("read"), tool("ENOENT: no such file")))
    assert (found.text, found.rule) == ("Read it.", None)
    assert (missing.text, missing.rule) == ("Missing file.", 0)


@pytest.mark.parametrize(
    ("messages", "expected"),
    [
        (
            [user("go"), {"role": "assistant", "content": "Nothing to do."}, user("again"), {"role": "assistant", "content": "x"}],
            "[scripted stand-in] Script exhausted: s.json has no step /turns/1/steps/1 (1 step(s) there).",
        ),
        (
            [user("1"), {"role": "assistant", "content": "x"}, user("2"), {"role": "assistant", "content": "x"}, user("3")],
            "[scripted stand-in] Script exhausted: s.json has 2 turn(s) and this is user message 3.",
        ),
        ([], "[scripted stand-in] The request has no user message to answer."),
    ],
    ids=["steps", "turns", "no-user-message"],
)
def test_exhausted_script_answers_with_a_plain_stop(messages: list[dict[str, Any]], expected: str) -> None:
    reply = plan_reply(script({"steps": [{"text": "one"}]}, {"steps": [{"text": "two"}]}), request(*messages))
    assert (reply.outcome, reply.text, reply.tool_calls, reply.finish_reason) == ("exhausted", expected, (), "stop")


def test_exhausted_rule_names_the_rule() -> None:
    turn = {"rules": [{"when": {"user_message_contains": "go"}, "steps": [{"text": "x"}]}]}
    reply = plan_reply(script(turn), request(user("go"), {"role": "assistant", "content": "x"}))
    assert (reply.rule, reply.text) == (
        0, "[scripted stand-in] Script exhausted: s.json has no step /turns/0/rules/0/steps/1 (1 step(s) there).",
    )
    unmatched = plan_reply(script(turn), request(user("stop")))
    assert unmatched.text == "[scripted stand-in] Script exhausted: s.json has no step /turns/0/steps/0 (0 step(s) there)."


def test_fault_step() -> None:
    reply = plan_reply(script({"steps": [{"fault": "stall"}]}), request(user("go")))
    assert (reply.outcome, reply.fault, reply.source, reply.text, reply.usage.completion_tokens) == (
        "fault", "stall", "/turns/0/steps/0", "", 0,
    )


@pytest.mark.parametrize(
    ("template", "expected"),
    [
        ("{{cwd}}", "/work/space"),
        ("{{skill:demo-skill.location}}", "/skills/demo-skill/SKILL.md"),
        ("{{skill:demo-skill.dir}}", "/skills/demo-skill"),
        ("{{skill:other.name}}", "other"),
        ("{{skill_matching:logs.location}}", "/skills/other/SKILL.md"),
        ("{{skill_matching:Use when.name}}", "demo-skill"),
        ("{{skill_matching:& \"more\".dir}}", "/skills/demo-skill"),
        ("{{delivered.location}}", "/skills/demo-skill/SKILL.md"),
        ("{{delivered.dir}}", "/skills/demo-skill"),
        ("{{delivered.name}}", "demo-skill"),
        ("a {{cwd}} b {{delivered.name}} c", "a /work/space b demo-skill c"),
    ],
)
def test_placeholders(template: str, expected: str) -> None:
    steps = [{"text": template, "tool_calls": [{"name": "t", "arguments": {"deep": [{"v": template}], "n": 1}}]}]
    reply = plan_reply(script({"steps": steps}), request(user(DELIVERED)))
    assert reply.text == expected
    assert json.loads(reply.tool_calls[0].arguments) == {"deep": [{"v": expected}], "n": 1}


def test_delivered_uses_the_latest_block_in_any_user_message() -> None:
    later = DELIVERED.replace("demo-skill", "second")
    turns = ({"steps": [{"text": "x"}]}, {"steps": [{"text": "{{delivered.name}}"}]})
    reply = plan_reply(script(*turns), request(user(later), {"role": "assistant", "content": "x"}, user("plain")))
    assert reply.text == "second"


@pytest.mark.parametrize(
    ("step", "expected"),
    [
        (
            {"text": "{{cwd}}"},
            "[scripted stand-in] Script s.json: cannot resolve {{cwd}} at /turns/0/steps/0/text: "
            "the system prompt has no <cwd> section.",
        ),
        (
            {"tool_calls": [{"name": "read", "arguments": {"p": ["{{skill:nope.location}}"]}}]},
            "[scripted stand-in] Script s.json: cannot resolve {{skill:nope.location}} at "
            '/turns/0/steps/0/tool_calls/0/arguments/p/0: no skill named "nope" is listed in <available_skills>.',
        ),
        (
            {"text": "{{skill_matching:zebra.dir}}"},
            "[scripted stand-in] Script s.json: cannot resolve {{skill_matching:zebra.dir}} at "
            '/turns/0/steps/0/text: no skill in <available_skills> has a description containing "zebra".',
        ),
        (
            {"text": "ok", "tool_calls": [{"name": "read", "arguments": {"a/b": "{{delivered.dir}}"}}]},
            "[scripted stand-in] Script s.json: cannot resolve {{delivered.dir}} at "
            "/turns/0/steps/0/tool_calls/0/arguments/a~1b: no user message so far holds a "
            "<skill name=… location=…> block (pi writes one when the prompt starts with /skill:<name>).",
        ),
    ],
    ids=["cwd", "skill", "skill_matching", "delivered"],
)
def test_unresolved_placeholder_becomes_an_explaining_text_stop(step: dict[str, Any], expected: str) -> None:
    reply = plan_reply(script({"steps": [step]}), request(user("go"), system="no sections"))
    assert (reply.outcome, reply.text, reply.tool_calls, reply.source) == (
        "unresolved", expected, (), "/turns/0/steps/0",
    )


# ---------------------------------------------------------------------- validation

VALID_STEP = {"text": "x"}


CONDITION_KEYS = (
    '"system_prompt_contains", "skill_description_contains", "skill_listed", "user_message_contains", '
    '"conversation_contains", "last_tool_result_contains", "all", "any", "not"'
)


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        ([], "s.json: /: expected a script object, found an empty array"),
        (
            {"turns": [{"steps": [VALID_STEP]}]},
            's.json: /schema: expected "skill-eval-script/1", found no "schema" field',
        ),
        (
            {"schema": "skill-eval-script/2", "turns": [{"steps": [VALID_STEP]}]},
            's.json: /schema: expected "skill-eval-script/1", found "skill-eval-script/2"',
        ),
        (
            {"schema": "skill-eval-script/1", "turns": [], "extra": 1},
            's.json: /extra: expected one of the fields "schema", "description", "latency", "pricing", "turns", found unknown field "extra"\n'
            "s.json: /turns: expected a non-empty array of turns, found an empty array",
        ),
        (
            {"schema": "skill-eval-script/1", "description": 3, "turns": [{"steps": [VALID_STEP]}]},
            "s.json: /description: expected a string, found 3",
        ),
        (
            {"schema": "skill-eval-script/1", "turns": [{}]},
            's.json: /turns/0: expected a turn object with "rules", "steps" or both, found an empty object',
        ),
        (
            {"schema": "skill-eval-script/1", "turns": [{"steps": [{}], "comment": None}]},
            "s.json: /turns/0/comment: expected a string, found null\n"
            's.json: /turns/0/steps/0: expected a step object with "text", "tool_calls" or "fault", found an empty object',
        ),
        (
            {"schema": "skill-eval-script/1", "turns": [{"steps": [{"fault": "boom"}, {"fault": "stall", "text": "x"}]}]},
            's.json: /turns/0/steps/0/fault: expected one of "http-500", "stall", "malformed", "disconnect", '
            '"no-finish-reason", "rate-limit", "overloaded", found "boom"\n'
            's.json: /turns/0/steps/1: expected "fault" alone, without "text", "tool_calls" or "usage", '
            'found an object with the fields "fault", "text"',
        ),
        (
            {"schema": "skill-eval-script/1", "turns": [{"steps": [{"text": True, "tool_calls": []}]}]},
            "s.json: /turns/0/steps/0/text: expected a string, found true\n"
            "s.json: /turns/0/steps/0/tool_calls: expected a non-empty array of tool calls, found an empty array",
        ),
        (
            {"schema": "skill-eval-script/1", "turns": [{"steps": [{"tool_calls": [
                {"arguments": []}, {"name": "", "id": "x"}, "read",
            ]}]}]},
            "s.json: /turns/0/steps/0/tool_calls/0/arguments: expected an arguments object, found an empty array\n"
            's.json: /turns/0/steps/0/tool_calls/0/name: expected a non-empty tool name string, found no "name" field\n'
            's.json: /turns/0/steps/0/tool_calls/1/id: expected one of the fields "name", "arguments", found unknown field "id"\n'
            's.json: /turns/0/steps/0/tool_calls/1/name: expected a non-empty tool name string, found ""\n'
            's.json: /turns/0/steps/0/tool_calls/2: expected a tool call object, found "read"',
        ),
        (
            {"schema": "skill-eval-script/1", "turns": [{"steps": [
                {"text": "{{cwd}} {{home}}", "tool_calls": [{"name": "r", "arguments": {"p": ["{{skill:x}}", "{{delivered.path}}"]}}]},
            ]}]},
            "s.json: /turns/0/steps/0/text: expected placeholders {{cwd}}, {{skill:<name>.location|dir|name}}, "
            "{{skill_matching:<text>.location|dir|name}} or {{delivered.location|dir|name}}, found {{home}}\n"
            "s.json: /turns/0/steps/0/tool_calls/0/arguments/p/0: expected placeholders {{cwd}}, "
            "{{skill:<name>.location|dir|name}}, {{skill_matching:<text>.location|dir|name}} or "
            "{{delivered.location|dir|name}}, found {{skill:x}}\n"
            "s.json: /turns/0/steps/0/tool_calls/0/arguments/p/1: expected placeholders {{cwd}}, "
            "{{skill:<name>.location|dir|name}}, {{skill_matching:<text>.location|dir|name}} or "
            "{{delivered.location|dir|name}}, found {{delivered.path}}",
        ),
        (
            {"schema": "skill-eval-script/1", "turns": [{"rules": []}, {"rules": [{"steps": []}, {"when": {}, "steps": [VALID_STEP], "x": 1}]}]},
            "s.json: /turns/0/rules: expected a non-empty array of rules, found an empty array\n"
            "s.json: /turns/1/rules/0/steps: expected a non-empty array of steps, found an empty array\n"
            f's.json: /turns/1/rules/0/when: expected a condition object with exactly one of the fields {CONDITION_KEYS}, '
            'found no "when" field\n'
            f"s.json: /turns/1/rules/1/when: expected a condition object with exactly one of the fields {CONDITION_KEYS}, "
            "found an empty object\n"
            's.json: /turns/1/rules/1/x: expected one of the fields "comment", "when", "steps", "choose", found unknown field "x"',
        ),
    ],
    ids=[
        "not-object", "missing-schema", "wrong-schema", "empty-turns-and-unknown-key", "description",
        "empty-turn", "empty-step", "faults", "text-and-tool-calls", "tool-calls", "placeholders", "rules",
    ],
)
def test_validation_errors(data: Any, expected: str) -> None:
    with pytest.raises(ScriptError) as raised:
        parse_script(data, "s.json")
    assert str(raised.value) == expected


@pytest.mark.parametrize(
    ("when", "expected"),
    [
        ({"skill_listed": ""}, '/when/skill_listed: expected a non-empty string, found ""'),
        ({"user_message_contains": 1}, "/when/user_message_contains: expected a non-empty string, found 1"),
        ({"all": []}, "/when/all: expected a non-empty array of conditions, found an empty array"),
        ({"any": {"skill_listed": "x"}}, "/when/any: expected a non-empty array of conditions, found an object"),
        ({"not": "x"}, f'/when/not: expected a condition object with exactly one of the fields {CONDITION_KEYS}, found "x"'),
        (
            {"maybe": "x"},
            f'/when/maybe: expected one of the fields {CONDITION_KEYS}, found unknown field "maybe"',
        ),
        (
            {"skill_listed": "a", "not": {"skill_listed": "b"}},
            f"/when: expected a condition object with exactly one of the fields {CONDITION_KEYS}, "
            'found an object with the fields "skill_listed", "not"',
        ),
        (
            {"all": [{"any": [{"not": {"conversation_contains": None}}]}, {"system_prompt_contains": []}]},
            "/when/all/0/any/0/not/conversation_contains: expected a non-empty string, found null\n"
            "s.json: /turns/0/rules/0/when/all/1/system_prompt_contains: expected a non-empty string, found an empty array",
        ),
    ],
    ids=["skill_listed", "user_message", "all-empty", "any-not-array", "not-string", "unknown", "two-keys", "nested"],
)
def test_condition_validation_errors(when: Any, expected: str) -> None:
    data = {"schema": "skill-eval-script/1", "turns": [{"rules": [{"when": when, "steps": [VALID_STEP]}]}]}
    with pytest.raises(ScriptError) as raised:
        parse_script(data, "s.json")
    assert str(raised.value) == "s.json: /turns/0/rules/0" + expected


def test_every_condition_kind_parses() -> None:
    when = {"all": [
        {"system_prompt_contains": "a"}, {"skill_description_contains": "b"}, {"skill_listed": "c"},
        {"user_message_contains": "d"}, {"conversation_contains": "e"}, {"last_tool_result_contains": "f"},
        {"any": [{"not": {"skill_listed": "g"}}]},
    ]}
    parsed = script({"rules": [{"when": when, "steps": [VALID_STEP], "comment": "why"}], "comment": "turn"})
    assert parsed.turns[0].rules[0].when == AllOf((
        SystemPromptContains("a"), SkillDescriptionContains("b"), SkillListed("c"),
        UserMessageContains("d"), ConversationContains("e"), LastToolResultContains("f"),
        AnyOf((Not(SkillListed("g")),)),
    ))


def test_load_script_reads_a_file(tmp_path: Path) -> None:
    path = tmp_path / "ok.json"
    path.write_text(json.dumps({"schema": "skill-eval-script/1", "description": "d", "turns": [{"steps": [VALID_STEP]}]}))
    loaded = load_script(path)
    assert (loaded.source, loaded.description, len(loaded.turns)) == (str(path), "d", 1)


def test_load_script_errors_name_the_file(tmp_path: Path) -> None:
    missing = tmp_path / "missing.json"
    with pytest.raises(ScriptError) as raised:
        load_script(missing)
    assert str(raised.value) == f"{missing}: /: expected a readable UTF-8 script file, found No such file or directory"
    broken = tmp_path / "broken.json"
    broken.write_text('{"schema": "skill-eval-script/1",\n  "turns": [}')
    with pytest.raises(ScriptError) as raised:
        load_script(broken)
    assert str(raised.value) == (
        f"{broken}: /: expected a JSON document, found invalid JSON at line 2 column 13: Expecting value"
    )
    invalid = tmp_path / "invalid.json"
    invalid.write_text('{"schema": "skill-eval-script/1", "turns": [{"steps": [{"fault": "oops"}]}]}')
    with pytest.raises(ScriptError, match=r"invalid\.json: /turns/0/steps/0/fault: expected one of"):
        load_script(invalid)


# ------------------------------------------------------------------- the user docs

DOCS = Path(__file__).resolve().parents[2] / "docs" / "scripted-model.md"


def test_every_script_in_the_docs_is_valid() -> None:
    blocks = [json.loads(b) for b in re.findall(r"```json\n(.*?)```", DOCS.read_text(), re.DOTALL)]
    scripts = [b for b in blocks if "schema" in b]
    assert len(scripts) == 5
    for index, data in enumerate(scripts):
        parse_script(data, f"docs block {index}")


def test_the_docs_validation_example_is_what_the_loader_says() -> None:
    data = {"schema": "skill-eval-script/1", "turns": [
        {"rules": [{"when": {"skill_description": "demo"}, "steps": [VALID_STEP]}], "steps": [{"fault": "timeout"}]},
        {"steps": [{"text": "{{workspace}}"}]},
    ]}
    documented = re.search(r"```\n(suite/scripts/reads-demo\.json: .*?)\n```", DOCS.read_text(), re.DOTALL)
    assert documented is not None
    with pytest.raises(ScriptError) as raised:
        parse_script(data, "suite/scripts/reads-demo.json")
    assert str(raised.value) == documented.group(1)


def test_the_docs_fallback_example_behaves_as_described() -> None:
    blocks = [json.loads(b) for b in re.findall(r"```json\n(.*?)```", DOCS.read_text(), re.DOTALL)]
    (fallback,) = [b for b in blocks if "schema" in b and "Fell back" in json.dumps(b)]
    parsed = parse_script(fallback, "fallback.json")
    missing = "ENOENT: no such file or directory, access '/work/space/CONFIG.md'"
    steps = [
        plan_reply(parsed, request(user("go"))),
        plan_reply(parsed, request(user("go"), assistant_calls("read"), tool(missing))),
        plan_reply(parsed, request(user("go"), assistant_calls("read"), tool(missing), assistant_calls("read"), tool("# Readme"))),
    ]
    assert [json.loads(s.tool_calls[0].arguments)["path"] if s.tool_calls else s.text for s in steps] == [
        "/work/space/CONFIG.md", "/work/space/README.md", "Fell back to the README.",
    ]


def test_a_steps_usage_adds_cache_and_reasoning_tokens() -> None:
    parsed = script({"steps": [{"text": "done", "usage": {"cache_read": 7, "reasoning": 3}}]})
    reply = plan_reply(parsed, request(user("go")))
    assert (reply.usage.cache_read, reply.usage.cache_write, reply.usage.reasoning) == (7, 0, 3)
    assert reply.usage.completion_tokens == len("done") // 4 + 3


@pytest.mark.parametrize(("usage", "expected"), [
    ({}, 's.json: /turns/0/steps/0/usage: expected a usage object with "cache_read", "cache_write" or "reasoning" '
         "token counts, found an empty object"),
    ({"cache_read": -1}, "s.json: /turns/0/steps/0/usage/cache_read: expected a non-negative integer, found -1"),
])
def test_invalid_usage(usage: dict[str, Any], expected: str) -> None:
    with pytest.raises(ScriptError) as raised:
        parse_script({"schema": "skill-eval-script/1", "turns": [{"steps": [{"text": "x", "usage": usage}]}]}, "s.json")
    assert str(raised.value) == expected


def test_tool_call_arguments_keep_non_ascii_text() -> None:
    # the arguments are the JSON the script wrote, placeholders resolved, characters as they are
    reply = plan_reply(script({"steps": [{"tool_calls": [{"name": "write", "arguments": {"text": "é {{cwd}}"}}]}]}),
                       request(user("go")))
    assert reply.tool_calls == (PlannedToolCall("call_1_0_0", "write", '{"text": "é /work/space"}'),)
