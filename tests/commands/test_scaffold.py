"""The pure part of ``skill-eval init``: reading SKILL.md frontmatter and building the documents."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pytest_skill_eval.definitions.rules import check_group_document, check_suite_document
from pytest_skill_eval.errors import SkillFileError
from pytest_skill_eval.scaffold import SkillMetadata, build_scaffold, read_skill
from pytest_skill_eval.scripted.format import parse_script

BRAND = Path(__file__).parent / "skills" / "brand-guidelines" / "SKILL.md"


def skill_md(front: str, body: str = "# Title\n\nDo the thing.\n") -> str:
    return f"---\n{front}---\n\n{body}"


# --------------------------------------------------------------------------- reading the frontmatter


def test_reads_a_real_skill() -> None:
    skill = read_skill(BRAND.read_text(), "SKILL.md", "skills/brand-guidelines")
    assert skill == SkillMetadata(
        name="brand-guidelines",
        description=("Applies Anthropic's official brand colors and typography to any sort of artifact that may "
                     "benefit from having Anthropic's look-and-feel. Use it when brand colors or style guidelines, "
                     "visual formatting, or company design standards apply."),
        path="skills/brand-guidelines",
        model_invocable=True,
    )


@pytest.mark.parametrize(
    ("front", "description"),
    [
        ("description: plain words\n", "plain words"),
        ("description: plain words # a comment\n", "plain words"),
        ("description: one#two\n", "one#two"),
        ("description: first line\n  continued here\n", "first line continued here"),
        ('description: "quoted: with a colon \\u00e9"\n', "quoted: with a colon \u00e9"),
        ("description: 'it''s quoted: yes'\n", "it's quoted: yes"),
        ('description: "spans\n  two lines"\n', "spans two lines"),
        ("description: >\n  folded\n  text\n\n  second\n", "folded text\nsecond"),
        ("description: >-\n  folded: fine in a block\n", "folded: fine in a block"),
        ("description: |\n  line one\n    indented\n", "line one\n  indented"),
    ],
)
def test_description_forms(front: str, description: str) -> None:
    skill = read_skill(skill_md("name: demo\n" + front), "SKILL.md", "skills/demo")
    assert skill.description == description


def test_other_fields_are_skipped_whatever_their_shape() -> None:
    front = ("name: demo\nlicense: Complete terms in LICENSE.txt\nmetadata:\n  author: someone\n  tags:\n"
             "    - a\n    - b\nallowed-tools:\n- read\ndescription: Does demo things.\n")
    assert read_skill(skill_md(front), "SKILL.md", "s/demo").description == "Does demo things."


def test_crlf_and_a_byte_order_mark_are_accepted() -> None:
    text = "\ufeff---\r\nname: demo\r\ndescription: Windows text.\r\n---\r\nbody\r\n"
    assert read_skill(text, "SKILL.md", "s/demo").description == "Windows text."


@pytest.mark.parametrize(
    ("value", "invocable"),
    [("true", False), ("True", False), ("false", True), ('"true"', True), (None, True)],
)
def test_disable_model_invocation(value: str | None, invocable: bool) -> None:
    front = "name: demo\ndescription: d\n" + (f"disable-model-invocation: {value}\n" if value else "")
    assert read_skill(skill_md(front), "SKILL.md", "s/demo").model_invocable is invocable


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("# Demo\n\nno frontmatter\n",
         'x/SKILL.md: line 1: expected "---" opening the YAML frontmatter (name and description), found "# Demo"'),
        ("", 'x/SKILL.md: line 1: expected "---" opening the YAML frontmatter (name and description), found ""'),
        ("---\nname: demo\ndescription: d\n",
         'x/SKILL.md: expected a "---" line closing the frontmatter opened on line 1, found none'),
        (skill_md("description: d\n"),
         'x/SKILL.md: frontmatter: expected a "name" field (the skill\'s name, which names .skill-eval/<name>/), found none'),
        (skill_md("name: demo\n"),
         'x/SKILL.md: frontmatter: expected a "description" field (what the skill does and when to use it; '
         "pi drops a skill without one), found none"),
        (skill_md("name: demo\ndescription:\n"),
         'x/SKILL.md: frontmatter "description": expected a non-empty text, found ""'),
        (skill_md("name: Demo_Skill\ndescription: d\n"),
         'x/SKILL.md: frontmatter "name": expected 1 to 64 lowercase letters, digits and single hyphens, '
         'not starting or ending with a hyphen, found "Demo_Skill"'),
        (skill_md("name: -demo\ndescription: d\n"), 'found "-demo"'),
        (skill_md("name: de--mo\ndescription: d\n"), 'found "de--mo"'),
        (skill_md("name: demo-\ndescription: d\n"), 'found "demo-"'),
        (skill_md("name: " + "a" * 65 + "\ndescription: d\n"), 'found "' + "a" * 65 + '"'),
        (skill_md("name: " + "a" * 90 + "\ndescription: d\n"), 'found "' + "a" * 60 + '"… (90 characters)'),
        (skill_md("name: demo\nname: other\ndescription: d\n"),
         'x/SKILL.md: line 3: expected each field once, found "name" again (first on line 2)'),
        (skill_md("name: demo\ndescription: Use it when: things happen\n"),
         'x/SKILL.md: line 3: frontmatter "description": expected a plain text without ": " (YAML reads it as a '
         'nested mapping and the skill would not load), found "Use it when: things happen": put the value in quotes'),
        (skill_md("name: demo\ndescription:\n  - a\n  - b\n"),
         'x/SKILL.md: line 3: frontmatter "description": expected a text, found a list'),
        (skill_md("name: demo\ndescription:\n  key: value\n"),
         'x/SKILL.md: line 3: frontmatter "description": expected a text, found a mapping'),
        (skill_md("name: [demo]\ndescription: d\n"),
         'x/SKILL.md: line 2: frontmatter "name": expected a text (plain, quoted or a | or > block), found "[demo]"'),
        (skill_md('name: demo\ndescription: "never closed\n'),
         'x/SKILL.md: line 3: frontmatter "description": expected a double-quoted string closed on its own, '
         'found "\\"never closed"'),
        (skill_md("name: demo\ndescription: 'it's'\n"),
         "x/SKILL.md: line 3: frontmatter \"description\": expected '' for a quote inside a single-quoted string"),
        (skill_md('name: demo\ndescription: "bad \\q escape"\n'),
         'x/SKILL.md: line 3: frontmatter "description": expected a double-quoted string with JSON-style escapes'),
        (skill_md("name: demo\ndescription: |x\n  a\n"),
         'x/SKILL.md: line 3: frontmatter "description": expected a block scalar header such as | or >-, found "|x"'),
        (skill_md("name: demo\nthis is not yaml\ndescription: d\n"),
         "x/SKILL.md: line 3: expected a 'key: value' line, found \"this is not yaml\""),
        ("---\n  indented: first\n---\n", "x/SKILL.md: line 2: expected a 'key: value' line, found \"  indented: first\""),
    ],
)
def test_malformed_frontmatter_names_the_file_and_what_was_found(text: str, message: str) -> None:
    with pytest.raises(SkillFileError) as caught:
        read_skill(text, "x/SKILL.md", "x")
    assert str(caught.value).startswith("x/SKILL.md: ")
    assert message in str(caught.value)


# --------------------------------------------------------------------------- building the documents


def documents(skill: SkillMetadata) -> dict[str, Any]:
    scaffold = build_scaffold(skill)
    return {f.path: (f.text if f.path.endswith(".md") else json.loads(f.text)) for f in scaffold.files}


DEMO = SkillMetadata("demo-skill", "Summarises changelogs into release notes.", "skills/demo-skill")


def test_the_files_and_where_they_go() -> None:
    scaffold = build_scaffold(DEMO)
    assert scaffold.directory == ".skill-eval/demo-skill"
    assert scaffold.suite == ".skill-eval/demo-skill/suite.json"
    assert [f.path for f in scaffold.files] == [
        ".skill-eval/demo-skill/suite.json",
        ".skill-eval/demo-skill/groups/description.json",
        ".skill-eval/demo-skill/groups/body.json",
        ".skill-eval/demo-skill/scripts/demo-skill-description.json",
        ".skill-eval/demo-skill/scripts/demo-skill-body.json",
        ".skill-eval/demo-skill/README.md",
    ]
    assert all(f.text.endswith("\n") for f in scaffold.files)
    assert scaffold.notes == ()


def test_every_document_passes_the_loaders_pure_checks() -> None:
    docs = documents(DEMO)
    suite = docs[".skill-eval/demo-skill/suite.json"]
    assert suite == {"schema_version": 1, "kind": "suite", "id": "demo-skill",
                     "groups": ["groups/description.json", "groups/body.json"]}
    assert check_suite_document(suite, ".skill-eval/demo-skill") == []
    for kind in ("description", "body"):
        group = docs[f".skill-eval/demo-skill/groups/{kind}.json"]
        assert check_group_document(group) == [], kind
        assert group["model"] == {"model": f"scripted/demo-skill-{kind}"}
        script = docs[f".skill-eval/demo-skill/scripts/demo-skill-{kind}.json"]
        assert len(parse_script(script, f"{kind}.json").turns) == len(group["input"]["turns"]) == 2


def test_both_groups_compare_head_with_the_working_tree() -> None:
    docs = documents(DEMO)
    for kind in ("description", "body"):
        variants = docs[f".skill-eval/demo-skill/groups/{kind}.json"]["variants"]
        assert variants["baseline"] == {"source": {"kind": "git", "ref": "HEAD"}, "skills": ["skills/demo-skill"],
                                        "target": 0, "context": []}
        assert variants["candidate"] == {"source": {"kind": "working-tree"}, "skills": ["skills/demo-skill"],
                                         "target": 0, "context": []}


def test_the_description_group_asks_naturally_over_two_turns() -> None:
    group = documents(DEMO)[".skill-eval/demo-skill/groups/description.json"]
    assert group["type"] == "description" and group["tools"] == ["read"] and group["fixture"] is None
    first, second = group["input"]["turns"]
    assert "demo-skill" not in first + second  # natural: the prompt never names the skill
    # a task placeholder for the author, never the description pasted in (it would go stale when it changes)
    assert DEMO.description not in second and second.startswith("Now the real task: [placeholder: ")
    pairs = {(e["comparison"], e["variant"], e["kind"], e["expect"], e["turn"]) for e in group["expectations"]}
    assert pairs == {
        ("unread-on-turn-one", "baseline", "skill-read", "not-before-turn", 2),
        ("unread-on-turn-one", "candidate", "skill-read", "not-before-turn", 2),
        ("read-by-turn-two", "baseline", "skill-read", "by-turn", 2),
        ("read-by-turn-two", "candidate", "skill-read", "by-turn", 2),
    }


def test_the_body_group_checks_a_result_file() -> None:
    docs = documents(DEMO)
    group = docs[".skill-eval/demo-skill/groups/body.json"]
    assert group["type"] == "body" and group["tools"] == ["read", "write", "edit"] and group["fixture"] is None
    kinds = {(e["comparison"], e["variant"], e["kind"], e["path"], e["expect"]) for e in group["expectations"]}
    assert kinds == {
        ("result-exists", side, "path", "result.json", "exists") for side in ("baseline", "candidate")
    } | {("result-complete", side, "json", "result.json", "field-equals") for side in ("baseline", "candidate")}
    assert all(e.get("value", "complete") == "complete" and e.get("pointer", "/status") == "/status"
               for e in group["expectations"])
    script = docs[".skill-eval/demo-skill/scripts/demo-skill-body.json"]
    # the script writes only once the skill was delivered, so a broken delivery fails the group
    write_rule = script["turns"][1]["rules"][0]
    assert write_rule["when"] == {"conversation_contains": '<skill name="demo-skill"'}
    assert write_rule["steps"][0]["tool_calls"][0]["arguments"] == {"path": "result.json", "content": '{"status": "complete"}\n'}
    assert "tool_calls" not in json.dumps(script["turns"][1]["steps"])


def test_the_description_script_reads_the_skill_only_when_pi_lists_it() -> None:
    script = documents(DEMO)[".skill-eval/demo-skill/scripts/demo-skill-description.json"]
    assert "tool_calls" not in json.dumps(script["turns"][0])
    rule = script["turns"][1]["rules"][0]
    assert rule["when"] == {"skill_listed": "demo-skill"}
    assert rule["steps"][0]["tool_calls"] == [{"name": "read", "arguments": {"path": "{{skill:demo-skill.location}}"}}]
    assert "not a model" in script["description"]


def test_the_readme_says_how_to_run_and_what_to_edit_for_a_real_model() -> None:
    readme = documents(DEMO)[".skill-eval/demo-skill/README.md"]
    assert "pytest --skill-eval .skill-eval/demo-skill/suite.json" in readme
    assert "skill-eval init skills/demo-skill" in readme
    assert '"model": {"model": "anthropic/claude-sonnet-4-5"' in readme
    assert '"inherit": ["ANTHROPIC_API_KEY"]' in readme
    assert "skill-eval check .skill-eval/demo-skill/suite.json" in readme


@pytest.mark.parametrize(
    ("name", "suite_id"),
    [
        ("demo", "demo"),
        ("3d-models", "skill-3d-models"),
        ("1" * 57 + "-aaaa", "skill-" + "1" * 57),  # cut to 64 characters, never ending with a hyphen
    ],
)
def test_the_suite_id_is_the_name_when_it_can_be(name: str, suite_id: str) -> None:
    suite = documents(SkillMetadata(name, "d", "skills/x"))[f".skill-eval/{name}/suite.json"]
    assert suite["id"] == suite_id
    assert check_suite_document(suite) == []


def test_a_skill_pi_never_lists_gets_no_description_group() -> None:
    skill = SkillMetadata("demo-skill", "d", "skills/demo-skill", model_invocable=False)
    scaffold = build_scaffold(skill)
    assert [f.path.rsplit("/", 1)[1] for f in scaffold.files] == ["suite.json", "body.json", "demo-skill-body.json",
                                                                  "README.md"]
    assert json.loads(scaffold.files[0].text)["groups"] == ["groups/body.json"]
    assert scaffold.notes and "disable-model-invocation: true" in scaffold.notes[0]
    assert "groups/description.json" not in scaffold.files[-1].text


@pytest.mark.parametrize("description", ["/skill:other go", "Line one\nline two", "quote \" and \\ backslash"])
def test_any_description_makes_a_valid_prompt(description: str) -> None:
    docs = documents(SkillMetadata("demo", description, "skills/demo"))
    assert check_group_document(docs[".skill-eval/demo/groups/description.json"]) == []
