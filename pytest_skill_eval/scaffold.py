"""The starting point ``skill-eval init`` writes for one skill, built from its ``SKILL.md`` (pure).

Two steps, both text in, values out:

- :func:`read_skill` reads the frontmatter fields the evaluation needs (``name``,
  ``description``, ``disable-model-invocation``) and validates them;
- :func:`build_scaffold` turns that metadata into the files of
  ``.skill-eval/<name>/``: a suite, a description group (natural two-turn prompt,
  baseline the skill at Git ``HEAD``, candidate the working tree, a ``skill-read``
  comparison), a body group (the target delivered on turn one, ``path`` and ``json``
  comparisons on ``result.json``), a scripted-model script for each group, and a README
  saying what to edit for a real model.

There is no YAML parser among the dependencies, so the frontmatter is read as the subset
skill frontmatter uses: top-level ``key: value`` lines whose values are plain,
single- or double-quoted scalars or ``|``/``>`` block scalars. Whatever else is there
(nested ``metadata``, lists) is skipped unless it is one of the three fields read.
:mod:`pytest_skill_eval.commands.init` does the I/O: Git, files, printing.
"""

from __future__ import annotations

import dataclasses
import json
import re
from dataclasses import dataclass
from typing import Any

from pytest_skill_eval.definitions.rules import EVIDENCE_TREE
from pytest_skill_eval.errors import SkillFileError
from pytest_skill_eval.schemas import describe as _shown

__all__ = ["Scaffold", "ScaffoldFile", "SkillMetadata", "build_scaffold", "read_skill"]

#: The Agent Skills name rule (agentskills.io): 1 to 64 lowercase letters, digits and single hyphens.
SKILL_NAME = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")
NAME_RULE = "1 to 64 lowercase letters, digits and single hyphens, not starting or ending with a hyphen"
#: The group-id syntax of a suite id (docs/definitions.md).
_GROUP_ID = re.compile(r"[a-z][a-z0-9]*(?:-[a-z0-9]+)*")
_KEY_LINE = re.compile(r"([A-Za-z0-9_][A-Za-z0-9_.-]*)[ \t]*:(?:[ \t]+(.*))?[ \t]*")
_BLOCK_HEADER = re.compile(r"[|>][1-9+-]{0,2}(?:[ \t]+#.*)?")
_READ_FIELDS = ("name", "description", "disable-model-invocation")


@dataclass(frozen=True, slots=True)
class SkillMetadata:
    """What the scaffold needs to know of one skill.

    ``path`` is the skill directory relative to the definition root (the Git work
    tree), ``/``-separated; ``model_invocable`` is False when the frontmatter says
    ``disable-model-invocation: true`` (pi then never lists the skill, so it can only
    be delivered, never discovered).
    """

    name: str
    description: str
    path: str
    model_invocable: bool = True


@dataclass(frozen=True, slots=True)
class ScaffoldFile:
    path: str  # relative to the definition root
    text: str


@dataclass(frozen=True, slots=True)
class Scaffold:
    """The files to write, in writing order, and the suite that lists the groups."""

    directory: str
    suite: str
    files: tuple[ScaffoldFile, ...]
    notes: tuple[str, ...] = ()


# --------------------------------------------------------------------------- reading SKILL.md


@dataclass(frozen=True, slots=True)
class _Entry:
    key: str
    line: int
    inline: str
    rest: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class _Scalar:
    value: str
    plain: bool


def read_skill(text: str, file: str, path: str) -> SkillMetadata:
    """The validated metadata of the ``SKILL.md`` *text* (shown as *file*) of the skill at *path*."""
    fields = _frontmatter(text, file)
    name = _required(fields, "name", file, "the skill's name, which names .skill-eval/<name>/")
    if len(name.value) > 64 or not SKILL_NAME.fullmatch(name.value):
        raise SkillFileError(f'{file}: frontmatter "name": expected {NAME_RULE}, found {_shown(name.value)}')
    description = _required(fields, "description", file, "what the skill does and when to use it; pi drops a skill without one")
    if not description.value.strip():
        raise SkillFileError(f'{file}: frontmatter "description": expected a non-empty text, found {_shown(description.value)}')
    disable = fields.get("disable-model-invocation")
    invocable = not (disable is not None and disable.plain and disable.value in ("true", "True", "TRUE"))
    return SkillMetadata(name.value, description.value.strip(), path, invocable)


def _required(fields: dict[str, _Scalar], key: str, file: str, why: str) -> _Scalar:
    found = fields.get(key)
    if found is None:
        raise SkillFileError(f'{file}: frontmatter: expected a "{key}" field ({why}), found none')
    return found


def _frontmatter(text: str, file: str) -> dict[str, _Scalar]:
    # as pi reads it: newlines normalised, the block ends at the first line starting with "---"
    lines = text.removeprefix("\ufeff").replace("\r\n", "\n").replace("\r", "\n").split("\n")
    if lines[0].rstrip() != "---":
        raise SkillFileError(
            f'{file}: line 1: expected "---" opening the YAML frontmatter (name and description), '
            f"found {_shown(lines[0])}"
        )
    try:
        end = next(i for i in range(1, len(lines)) if lines[i].startswith("---"))
    except StopIteration:
        raise SkillFileError(f'{file}: expected a "---" line closing the frontmatter opened on line 1, found none') from None
    entries: list[_Entry] = []
    for number, line in enumerate(lines[1:end], start=2):
        skipped = not line.strip() or line.startswith("#")
        if skipped or line[0] in " \t" or line.startswith("-"):  # belongs to the field above
            if entries:
                entries[-1] = dataclasses.replace(entries[-1], rest=(*entries[-1].rest, line))
            elif not skipped:
                raise SkillFileError(f"{file}: line {number}: expected a 'key: value' line, found {_shown(line)}")
            continue
        match = _KEY_LINE.fullmatch(line)
        if match is None:
            raise SkillFileError(f"{file}: line {number}: expected a 'key: value' line, found {_shown(line)}")
        entries.append(_Entry(match.group(1), number, (match.group(2) or "").strip(), ()))
    fields: dict[str, _Scalar] = {}
    first: dict[str, int] = {}
    for entry in entries:
        if entry.key not in _READ_FIELDS:
            continue
        if entry.key in first:
            raise SkillFileError(
                f'{file}: line {entry.line}: expected each field once, found "{entry.key}" again (first on line {first[entry.key]})'
            )
        first[entry.key] = entry.line
        fields[entry.key] = _scalar(entry, file)
    return fields


def _scalar(entry: _Entry, file: str) -> _Scalar:
    where = f'{file}: line {entry.line}: frontmatter "{entry.key}"'
    inline, rest = entry.inline, [line for line in entry.rest if not line.startswith("#")]
    body = [line for line in rest if line.strip()]
    if inline[:1] in ("|", ">"):
        if not _BLOCK_HEADER.fullmatch(inline):
            raise SkillFileError(f"{where}: expected a block scalar header such as | or >-, found {_shown(inline)}")
        return _Scalar(_block(inline[0], rest), plain=False)
    if inline[:1] in ('"', "'"):
        joined = " ".join([inline, *(line.strip() for line in body)])
        return _Scalar(_quoted(joined, where), plain=False)
    if inline[:1] in ("[", "{", "&", "*", "!", "@", "`", "%"):
        raise SkillFileError(f"{where}: expected a text (plain, quoted or a | or > block), found {_shown(inline)}")
    if not inline and body:
        head = body[0].strip()
        kind = "a list" if head.startswith("-") else "a mapping" if _KEY_LINE.fullmatch(head) else None
        if kind:
            raise SkillFileError(f"{where}: expected a text, found {kind}")
    value = " ".join([inline, *(line.strip() for line in body)]).strip()
    value = re.split(r"[ \t]#", value, maxsplit=1)[0].rstrip()
    if ": " in value or value.endswith(":"):
        raise SkillFileError(
            f'{where}: expected a plain text without ": " (YAML reads it as a nested mapping and the skill would not load), '
            f"found {_shown(value)}: put the value in quotes"
        )
    return _Scalar(value, plain=True)


def _block(style: str, rest: list[str]) -> str:
    indents = [len(line) - len(line.lstrip(" ")) for line in rest if line.strip()]
    cut = min(indents, default=0)
    lines = [line[cut:] if line.strip() else "" for line in rest]
    if style == "|":
        return "\n".join(lines).strip("\n")
    paragraphs: list[list[str]] = [[]]
    for line in lines:
        if line:
            paragraphs[-1].append(line)
        elif paragraphs[-1]:
            paragraphs.append([])
    return "\n".join(" ".join(p) for p in paragraphs if p)


def _quoted(text: str, where: str) -> str:
    quote = text[0]
    closing = text.rfind(quote)
    tail = text[closing + 1:].strip() if closing > 0 else ""
    if closing <= 0 or (tail and not tail.startswith("#")):
        raise SkillFileError(f"{where}: expected a {_QUOTE_NAMES[quote]} string closed on its own, found {_shown(text)}")
    inner = text[1:closing]
    if quote == "'":
        if "'" in inner.replace("''", ""):
            raise SkillFileError(f"{where}: expected '' for a quote inside a single-quoted string, found {_shown(text)}")
        return inner.replace("''", "'")
    try:
        value = json.loads(text[: closing + 1])
    except ValueError:
        raise SkillFileError(f"{where}: expected a double-quoted string with JSON-style escapes, found {_shown(text)}") from None
    return str(value)


_QUOTE_NAMES = {'"': "double-quoted", "'": "single-quoted"}


# --------------------------------------------------------------------------- building the files


def build_scaffold(skill: SkillMetadata) -> Scaffold:
    """The files of ``.skill-eval/<name>/`` for *skill*; every path is relative to the definition root."""
    directory = f"{EVIDENCE_TREE}/{skill.name}"
    groups: list[tuple[str, dict[str, Any], dict[str, Any]]] = []
    notes: list[str] = []
    if skill.model_invocable:
        groups.append(("description", _description_group(skill), _description_script(skill)))
    else:
        notes.append(
            'no description group: the frontmatter says "disable-model-invocation: true", so pi never lists '
            "the skill and no prompt can make the agent discover it"
        )
    groups.append(("body", _body_group(skill), _body_script(skill)))
    suite = {
        "schema_version": 1,
        "kind": "suite",
        "id": _suite_id(skill.name),
        "groups": [f"groups/{kind}.json" for kind, _, _ in groups],
    }
    files = [ScaffoldFile(f"{directory}/suite.json", _json(suite))]
    for kind, group, _ in groups:
        files.append(ScaffoldFile(f"{directory}/groups/{kind}.json", _json(group)))
    for kind, _, script in groups:
        files.append(ScaffoldFile(f"{directory}/scripts/{_script_name(skill, kind)}.json", _json(script)))
    files.append(ScaffoldFile(f"{directory}/README.md", _readme(skill, [kind for kind, _, _ in groups])))
    return Scaffold(directory=directory, suite=f"{directory}/suite.json", files=tuple(files), notes=tuple(notes))


def _json(value: Any) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False) + "\n"


def _suite_id(name: str) -> str:
    """The skill name when it is a valid suite id (it must start with a letter), else ``skill-<name>``."""
    if _GROUP_ID.fullmatch(name):
        return name
    return f"skill-{name}"[:64].rstrip("-")


def _script_name(skill: SkillMetadata, kind: str) -> str:
    # scripts share one server per worker: a name per skill keeps two skills' suites apart
    return f"{skill.name}-{kind}"


def _variants(skill: SkillMetadata) -> dict[str, Any]:
    def variant(source: dict[str, str]) -> dict[str, Any]:
        return {"source": source, "skills": [skill.path], "target": 0, "context": []}

    return {"baseline": variant({"kind": "git", "ref": "HEAD"}), "candidate": variant({"kind": "working-tree"})}


def _pair(kind: str, comparison: str, fields: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        {"id": f"{side}-{comparison}", "kind": kind, "variant": side, **fields, "comparison": comparison}
        for side in ("baseline", "candidate")
    ]


#: The natural first turn of the description group: a task no skill is needed for.
UNRELATED_TURN = "Before we start, a quick one: what is 17 times 23?"
RESULT_FILE = "result.json"
RESULT_CONTENT = '{"status": "complete"}'


#: how init marks text it cannot know and the author must write; ``skill-eval check`` warns while one is there
PLACEHOLDER = re.compile(r"\[placeholder: [^\]]*\]")
#: the description group's second turn: a natural request with the task left for the author to write. Not
#: the description pasted in: that teaches the wrong pattern (a user never quotes the description) and
#: goes stale when the description changes, which is exactly what the group compares.
TASK_TURN = ("Now the real task: [placeholder: a request a user of this skill would make, in their own words, "
             "without naming the skill]")


def placeholders(prompts: tuple[str, ...], input_kind: str) -> list[tuple[str, str]]:
    """``(JSON pointer, placeholder)`` of every init placeholder still in a group's prompts."""
    found: list[tuple[str, str]] = []
    for index, prompt in enumerate(prompts):
        pointer = "/input/prompt" if input_kind == "prompt" else f"/input/turns/{index}"
        found += [(pointer, match.group()) for match in PLACEHOLDER.finditer(prompt)]
    return found


def _description_group(skill: SkillMetadata) -> dict[str, Any]:
    return {
        "schema_version": 1,
        "kind": "group",
        "id": "description",
        "type": "description",
        "input": {"turns": [UNRELATED_TURN, TASK_TURN]},
        "fixture": None,
        "tools": ["read"],
        "variants": _variants(skill),
        "expectations": [
            *_pair("skill-read", "unread-on-turn-one", {"expect": "not-before-turn", "turn": 2}),
            *_pair("skill-read", "read-by-turn-two", {"expect": "by-turn", "turn": 2}),
        ],
        "review_questions": [
            "Does the description make the agent load the skill for the task, without the prompt naming it?",
            "Does the skill stay unread on the unrelated first turn?",
        ],
        "model": {"model": f"scripted/{_script_name(skill, 'description')}"},
    }


def _body_group(skill: SkillMetadata) -> dict[str, Any]:
    return {
        "schema_version": 1,
        "kind": "group",
        "id": "body",
        "type": "body",
        "input": {
            "turns": [
                "Work through a small example of the task these instructions are for, and say what you did.",
                f"Finish: when the work is done, write {RESULT_FILE} in the workspace containing {RESULT_CONTENT}.",
            ]
        },
        "fixture": None,
        "tools": ["read", "write", "edit"],
        "variants": _variants(skill),
        "expectations": [
            *_pair("path", "result-exists", {"path": RESULT_FILE, "expect": "exists"}),
            *_pair("json", "result-complete",
                   {"path": RESULT_FILE, "expect": "field-equals", "pointer": "/status", "value": "complete"}),
        ],
        "review_questions": ["Did the agent follow the skill's instructions on the first turn and keep to them on the second?"],
        "model": {"model": f"scripted/{_script_name(skill, 'body')}"},
    }


_STAND_IN = (
    "Scripted stand-in, not a model: it checks the plumbing of this group (skills, prompts, expectations, "
    "evidence) offline. It answers the same for baseline and candidate, so its transitions say nothing "
    "about the skill; switch the group to a real model for that (README.md)."
)


def _description_script(skill: SkillMetadata) -> dict[str, Any]:
    return {
        "schema": "skill-eval-script/1",
        "description": f"{skill.name} description group. {_STAND_IN}",
        "turns": [
            {"comment": "turn 1: the unrelated question; no skill is read",
             "steps": [{"text": "17 times 23 is 391."}]},
            {
                "comment": f"turn 2: when pi lists {skill.name}, load it as an agent would whose task matches",
                "rules": [{
                    "when": {"skill_listed": skill.name},
                    "steps": [
                        {"tool_calls": [{"name": "read", "arguments": {"path": f"{{{{skill:{skill.name}.location}}}}"}}]},
                        {"text": f"I read the {skill.name} skill and will follow it for this task."},
                    ],
                }],
                "steps": [{"text": f"{skill.name} is not listed, so I answer from general knowledge."}],
            },
        ],
    }


def _body_script(skill: SkillMetadata) -> dict[str, Any]:
    delivered = {"conversation_contains": f'<skill name="{skill.name}"'}
    return {
        "schema": "skill-eval-script/1",
        "description": f"{skill.name} body group. {_STAND_IN}",
        "turns": [
            {
                "comment": "turn 1: the skill arrives with the prompt (/skill:<name>)",
                "rules": [{"when": delivered, "steps": [{"text": "I have the {{delivered.name}} instructions and worked "
                                                                 "through a small example with them."}]}],
                "steps": [{"text": f"No {skill.name} instructions were delivered."}],
            },
            {
                "comment": f"turn 2: record the outcome in {RESULT_FILE}, as the prompt asks",
                "rules": [{
                    "when": delivered,
                    "steps": [
                        {"tool_calls": [{"name": "write", "arguments": {"path": RESULT_FILE, "content": RESULT_CONTENT + "\n"}}]},
                        {"text": f"Done; the outcome is in {RESULT_FILE}."},
                    ],
                }],
                "steps": [{"text": "Without the instructions there is nothing to record."}],
            },
        ],
    }


def _readme(skill: SkillMetadata, kinds: list[str]) -> str:
    directory = f"{EVIDENCE_TREE}/{skill.name}"
    lines = [
        f"# Evaluating the `{skill.name}` skill",
        "",
        f"Written by `skill-eval init {skill.path}`. Run it from the definition root, the top of this",
        "Git work tree (the directory that holds `.skill-eval/`):",
        "",
        "```bash",
        f"pytest --skill-eval {directory}/suite.json",
        *([f"pytest --skill-eval {directory}/suite.json -k description   # one group, by its id"]
          if "description" in kinds else []),
        f"pytest --skill-eval {directory}/suite.json -k body",
        "```",
        "",
        "| file | what it is |",
        "| --- | --- |",
        "| `suite.json` | lists the groups; each becomes one pytest item |",
    ]
    if "description" in kinds:
        lines.append("| `groups/description.json` | does the **description** make the agent load the skill? Two "
                     "natural turns, `skill-read` comparisons (unread on turn one, read by turn two) |")
    lines += [
        f"| `groups/body.json` | does the **body** make the agent do the work? The skill is delivered on turn "
        f"one; `path` and `json` comparisons on `{RESULT_FILE}` |",
        "| `scripts/*.json` | the scripted stand-in model's scripts, one per group |",
        "",
        f"Both groups compare the skill at `{skill.path}` as committed at Git `HEAD` (the baseline) with",
        "the working tree (the candidate). Edit the skill, do not commit, run the suite, and read",
        "the transitions (`fail-to-pass`, `pass-to-fail`, ...). Once you commit, `HEAD` *is* the",
        'working tree again (`skill-eval check` warns that baseline and candidate are identical):',
        'to compare with a fixed point, set the baseline\'s `"ref"` to a branch, tag or commit',
        '(`"main"`, `"v1.2.0"`).',
        "",
        "The description group compares the frontmatter `description` alone, so an edit of the",
        "description *and* the body (the usual one) makes it `invalid`. Then either:",
        "",
        "- commit the body change first (`git add -p`, leaving only the description edit",
        "  uncommitted), so the baseline at `HEAD` has the new body too;",
        '- or point the baseline\'s `"ref"` at a commit that already has the new body;',
        "- or leave the description group out of the run:",
        f'  `pytest --skill-eval {directory}/suite.json -k "not description"`.',
        "",
        "The body group runs either way.",
        "",
        "## The scripted stand-in model (what runs now)",
        "",
        'Each group names `"model": {"model": "scripted/<script>"}`: the embedded stand-in plays',
        "`scripts/<script>.json`, offline and without a key. It is not a model: it reads the skill",
        "whenever pi lists it and writes `result.json` whenever the skill was delivered, for the",
        "baseline and the candidate alike, so every comparison reads `pass-to-pass`. That proves",
        "the plumbing (paths, Git baseline, prompts, expectations, evidence), nothing about the skill.",
        "",
        "## What to edit to use a real model",
        "",
        "1. In each `groups/*.json`, replace the `model`, and pass the provider's key through",
        "   `runtime` (it reaches pi only this way and is never written to evidence):",
        "",
        "   ```json",
        '   "model": {"model": "anthropic/claude-sonnet-4-5", "thinking": "low"},',
        '   "runtime": {"host": "pi", "session": false, "extensions": [],',
        '               "environment": {"literal": {}, "inherit": ["ANTHROPIC_API_KEY"]}}',
        "   ```",
        "",
        "   Or drop `model` to let pi pick a model it has a credential for, or pass",
        "   `--skill-eval-auth auth.json` / `--skill-eval-models models.json` (a local",
        "   OpenAI-compatible server). The `scripts/` directory is then unused; delete it.",
        "2. Replace the prompts (`input.turns`) with requests your users make. The description",
        "   group's second turn holds a `[placeholder: ...]` (`skill-eval check` warns until it is",
        "   gone): write the task as a user would ask for it, without naming the skill and without",
        "   pasting the description (that would test nothing, and go stale when the description",
        "   changes). Its first turn is unrelated on purpose (the skill should stay unread there).",
        "3. Make the body group test what the body says: give it a `fixture` (a directory of input",
        "   files outside `.skill-eval/`, copied into the workspace), and expectations on what the",
        f"   skill should make the agent produce instead of the `{RESULT_FILE}` that turn two asks for",
        "   (`file-text`, `json`, `tool-call`, `changed-paths`, `response-text`; see the grading docs).",
        f"4. Check before paying for a run: `skill-eval check {directory}/suite.json`.",
        "",
        "Results go to `.skill-eval/runs/<result-id>/` (ignored by Git); `skill-eval view latest`",
        "shows the newest.",
    ]
    return "\n".join(lines) + "\n"
