"""The invalid-definition corpus: one broken rule per case, each with its exact error text.

Every case starts from one of the spec's own examples (see ``valid/``), applies
JSON-pointer edits (or replaces the text outright), loads it from a real file, and
compares the complete rendered DefinitionError. The messages are part of the
contract: authors read them to fix their files.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from pytest_skill_eval.definitions.loading import load_definition, load_group, load_suite
from pytest_skill_eval.errors import DefinitionError

from .support import DELETE, apply_edits, spec_doc, write_json, write_suite_tree

ID = "an id (a lowercase letter, then lowercase letters, digits or single hyphens, no trailing hyphen, at most 64 characters)"
GROUP_FIELDS = (
    '"schema_version", "kind", "id", "type", "input", "fixture", "tools", "variants", '
    '"expectations", "review_questions", "model", "runtime"'
)
KINDS = '"skill-read", "resource-read", "path", "changed-paths", "file-text", "json", "response-text", "tool-call", "context-text"'
BODY_TOOLS = 'one of "read", "write", "edit" (custom tools need a runtime extension bundle)'
DESCRIPTION_TOOLS = '"read" (description groups allow no tools or only "read")'
RESERVED = "expected a name the evaluator does not control, found {} ({} reserved (launch-control): {})"
# (label as the message names it, reason) from pytest_skill_eval/host/env-names.json
BASELINE = "the host-runtime baseline the evaluator supplies itself (private HOME and temp dir, PATH with the pinned node first)"
NODE = "node's runtime, module loading, TLS and diagnostics; NODE_OPTIONS can load code into pi"
LOADER = ("dynamic loader", "the dynamic loader, shells and language runtimes that pi's bash tool and its children start: "
          "they load code from these")
PI = ("pi's own settings (agent dir, session, provider, model, offline mode, telemetry, OAuth callback, installer): "
      "the evaluator owns them")
AGENT_DIR = "pi's agent and session directories (named after the app: PI_CODING_AGENT_DIR)"
EVALUATOR = "the evaluator's own settings (its cache, its guard's, observer's and tool gate's configuration)"
JITI = "how pi loads and transforms extension code (jiti, babel) or where npm installs packages"
LOCALE = "the host-runtime baseline the evaluator supplies itself (a fixed locale)"
PROXY = "routes the host's requests through a proxy or exempts hosts from it; the evaluator sets NO_PROXY itself"
ENDPOINT = ("where a provider's requests go: a definition must not point a built-in provider at another server "
            "(custom endpoints belong in --skill-eval-models)")


def _name(label: str, reason: str) -> tuple[str, str]:
    return (f"{label} is", reason)


def _family(label: str, reason: str) -> tuple[str, str]:
    return (f"{label} names are", reason)


SECRET = (
    'expected a non-secret name (literal values are recorded in evidence; pass secrets with "inherit"), '
    "found {} containing {}"
)
TOOL_NAME = 'a tool name (a letter, then letters, digits, "_" or "-", at most 64 characters)'
CONTROL = "expected a path without control or bidirectional-formatting characters, found {} with {}"
COMMAND = (
    'expected a prompt that does not start with "/" (pi would run it as a command: /skill:, a prompt template or an '
    "extension command, which is explicit delivery), found {}"
)
EVIDENCE = 'expected a path outside the evidence tree, found {} inside ".skill-eval/"'
ENV_NAME = "an environment variable name (a letter or underscore, then letters, digits or underscores)"


@dataclass(frozen=True)
class Case:
    """One broken rule: a base example, how to break it, and every expected error line."""

    name: str
    base: str
    edits: dict[str, Any]
    expected: list[str]
    text: str | None = field(default=None)


def _ascii(doc: dict[str, Any], edits: dict[str, Any]) -> str:
    """The edited document as ASCII JSON: lone surrogates survive only as escapes."""
    return json.dumps(apply_edits(doc, edits))


def case(name: str, base: str, edits: dict[str, Any], *expected: str) -> Case:
    return Case(name, base, edits, list(expected))


def raw(name: str, base: str, text: str, *expected: str) -> Case:
    return Case(name, base, {}, list(expected), text)


CASES = [
    # --- file level -------------------------------------------------------------------
    raw("json-syntax", "body", '{"kind": "group",,}',
        "/: expected JSON, found invalid JSON at line 1 column 18: Expecting property name enclosed in double quotes"),
    raw("json-syntax-multiline", "body", '{\n  "kind": "group",\n  "id": oops\n}',
        "/: expected JSON, found invalid JSON at line 3 column 9: Expecting value"),
    raw("json-trailing-data", "body", '{"kind": "group"} {}',
        "/: expected JSON, found invalid JSON at line 1 column 19: Extra data"),
    raw("json-not-object", "body", "[]", "/: expected a JSON object, found an empty array"),
    raw("json-string-document", "body", '"group"', '/: expected a JSON object, found "group"'),
    raw("json-duplicate-field", "body", '{"kind": "group", "id": "a", "id": "b"}',
        '/id: expected each field name once, found "id" more than once'),
    raw("json-nested-duplicate-field", "body", '{"input": {"prompt": "a", "prompt": "b"}}',
        '/input/prompt: expected each field name once, found "prompt" more than once'),
    raw("json-nan", "body", '{"schema_version": NaN}', "/: expected standard JSON, found the non-standard constant NaN"),
    # --- common fields ----------------------------------------------------------------
    case("schema-version-2", "body", {"/schema_version": 2}, "/schema_version: expected 1, found 2"),
    case("schema-version-string", "body", {"/schema_version": "1"}, '/schema_version: expected 1, found "1"'),
    case("schema-version-missing", "body", {"/schema_version": DELETE}, '/schema_version: expected 1, found no "schema_version" field'),
    case("kind-suite-in-group", "body", {"/kind": "suite"}, '/kind: expected "group", found "suite"'),
    case("kind-missing", "body", {"/kind": DELETE}, '/kind: expected "group", found no "kind" field'),
    case("unknown-field-typo", "common", {"/modle": {}},
         f'/modle: expected one of the fields {GROUP_FIELDS}, found unknown field "modle" (did you mean "model"?)'),
    case("unknown-field", "body", {"/criteria": []}, f'/criteria: expected one of the fields {GROUP_FIELDS}, found unknown field "criteria"'),
    case("id-uppercase", "body", {"/id": "Retained"}, f'/id: expected {ID}, found "Retained"'),
    case("id-digit-first", "body", {"/id": "1-group"}, f'/id: expected {ID}, found "1-group"'),
    case("id-double-hyphen", "body", {"/id": "a--b"}, f'/id: expected {ID}, found "a--b"'),
    case("id-trailing-hyphen", "body", {"/id": "ab-"}, f'/id: expected {ID}, found "ab-"'),
    case("id-underscore", "body", {"/id": "a_b"}, f'/id: expected {ID}, found "a_b"'),
    case("id-too-long", "body", {"/id": "a" * 65}, f'/id: expected {ID}, found "{"a" * 65}" (65 characters)'),
    case("id-empty", "body", {"/id": ""}, f'/id: expected {ID}, found ""'),
    case("id-number", "body", {"/id": 7}, f"/id: expected {ID}, found 7"),
    case("type-typo", "body", {"/type": "bodyy"}, '/type: expected one of "description", "body", found "bodyy" (did you mean "body"?)'),
    case("type-end-to-end", "body", {"/type": "end-to-end"},
         '/type: expected one of "description", "body", found "end-to-end" (a reserved type that is not executable)'),
    case("type-missing", "body", {"/type": DELETE}, '/type: expected one of "description", "body", found no "type" field'),
    # --- input ------------------------------------------------------------------------
    case("input-missing", "common", {"/input": DELETE}, '/input: expected an object with exactly one of "prompt" or "turns", found no "input" field'),
    case("input-string", "common", {"/input": "Do it."}, '/input: expected an object with exactly one of "prompt" or "turns", found "Do it."'),
    case("input-empty", "common", {"/input": {}}, '/input: expected exactly one of "prompt" or "turns", found neither'),
    case("input-both", "common", {"/input/turns": ["again"]}, '/input: expected exactly one of "prompt" or "turns", found both "prompt" and "turns"'),
    case("input-prompt-empty", "common", {"/input/prompt": ""}, '/input/prompt: expected a non-empty prompt string, found ""'),
    case("input-prompt-array", "common", {"/input/prompt": ["a"]}, "/input/prompt: expected a non-empty prompt string, found an array"),
    case("input-turns-empty", "description", {"/input/turns": []}, "/input/turns: expected a non-empty array of turn strings, found an empty array"),
    case("input-turn-empty", "description", {"/input/turns/1": ""}, '/input/turns/1: expected a non-empty turn string, found ""'),
    case("input-turn-number", "description", {"/input/turns/0": 1}, "/input/turns/0: expected a non-empty turn string, found 1"),
    case("input-unknown-field", "common", {"/input/system": "x"}, '/input/system: expected one of the fields "prompt", "turns", found unknown field "system"'),
    # --- fixture ----------------------------------------------------------------------
    case("fixture-missing", "body", {"/fixture": DELETE}, '/fixture: expected null or a relative fixture path, found no "fixture" field'),
    case("fixture-number", "body", {"/fixture": 0}, "/fixture: expected null or a relative fixture path, found 0"),
    case("fixture-empty", "body", {"/fixture": ""}, '/fixture: expected null or a relative fixture path, found ""'),
    case("fixture-absolute", "body", {"/fixture": "/etc"}, '/fixture: expected a relative path, found absolute path "/etc"'),
    case("fixture-drive", "body", {"/fixture": "C:/fixtures"}, '/fixture: expected a relative path, found drive-qualified path "C:/fixtures"'),
    case("fixture-backslash", "body", {"/fixture": "fixtures\\task"}, '/fixture: expected a path with "/" separators, found "fixtures\\\\task" with a backslash'),
    case("fixture-escape", "body", {"/fixture": "../fixtures/task"}, '/fixture: expected a path inside the definition root, found "../fixtures/task" leaving it through ".."'),
    case("fixture-escape-deep", "body", {"/fixture": "fixtures/../../task"}, '/fixture: expected a path inside the definition root, found "fixtures/../../task" leaving it through ".."'),
    case("fixture-empty-segment", "body", {"/fixture": "fixtures//task"}, '/fixture: expected a path without empty segments, found "fixtures//task"'),
    case("fixture-trailing-slash", "body", {"/fixture": "fixtures/task/"}, '/fixture: expected a path without empty segments, found "fixtures/task/"'),
    case("fixture-root", "body", {"/fixture": "."}, '/fixture: expected a path below the definition root, found "." naming the root itself'),
    case("fixture-root-by-dotdot", "body", {"/fixture": "fixtures/.."}, '/fixture: expected a path below the definition root, found "fixtures/.." naming the root itself'),
    case("fixture-nul", "body", {"/fixture": "fix\u0000ture"}, '/fixture: expected a path without NUL characters, found "fix\\u0000ture"'),
    case("fixture-bidi-override", "body", {"/fixture": "fixtures/\u202etxt.exe"}, "/fixture: " + CONTROL.format('"fixtures/\\u202etxt.exe"', "U+202E")),
    case("fixture-newline", "body", {"/fixture": "fixtures/task\n"}, "/fixture: " + CONTROL.format('"fixtures/task\\n"', "U+000A")),
    case("fixture-escape-character", "body", {"/fixture": "fix\u001b[31mture"}, "/fixture: " + CONTROL.format('"fix\\u001b[31mture"', "U+001B")),
    case("fixture-delete-character", "body", {"/fixture": "fix\u007fture"}, "/fixture: " + CONTROL.format('"fix\\u007fture"', "U+007F")),
    case("fixture-c1-control", "body", {"/fixture": "fix\u0085ture"}, "/fixture: " + CONTROL.format('"fix\\u0085ture"', "U+0085")),
    case("fixture-bidi-isolate", "body", {"/fixture": "fix\u2067ture"}, "/fixture: " + CONTROL.format('"fix\\u2067ture"', "U+2067")),
    case("fixture-rtl-mark", "body", {"/fixture": "fix\u200fture"}, "/fixture: " + CONTROL.format('"fix\\u200fture"', "U+200F")),
    case("fixture-arabic-letter-mark", "body", {"/fixture": "fix\u061cture"}, "/fixture: " + CONTROL.format('"fix\\u061cture"', "U+061C")),
    case("fixture-long-segment", "body", {"/fixture": "fixtures/" + "x" * 256},
         '/fixture: expected path segments of at most 255 bytes (UTF-8), found "fixtures/' + "x" * 51 + '"… (265 characters) with a segment of 256 bytes'),
    case("fixture-long-segment-multibyte", "body", {"/fixture": "\u00e9" * 128},
         '/fixture: expected path segments of at most 255 bytes (UTF-8), found "' + "\u00e9" * 60 + '"… (128 characters) with a segment of 256 bytes'),
    case("fixture-evidence-tree", "body", {"/fixture": ".skill-eval"}, "/fixture: " + EVIDENCE.format('".skill-eval"')),
    case("fixture-inside-evidence-tree", "body", {"/fixture": "./.skill-eval/runs/x"}, "/fixture: " + EVIDENCE.format('"./.skill-eval/runs/x"')),
    case("fixture-evidence-tree-by-dotdot", "body", {"/fixture": "fixtures/../.Skill-Eval/runs"}, "/fixture: " + EVIDENCE.format('"fixtures/../.Skill-Eval/runs"')),
    case("context-evidence-tree", "body", {"/variants/candidate/context/-": ".skill-eval/runs/r1/result.json"},
         "/variants/candidate/context/1: " + EVIDENCE.format('".skill-eval/runs/r1/result.json"')),
    case("bundle-resource-evidence-tree", "runtime", {"/runtime/extensions/0/resources/-": ".skill-eval"},
         "/runtime/extensions/0/resources/1: " + EVIDENCE.format('".skill-eval"')),
    case("skills-duplicate", "body", {"/variants/candidate/skills/-": "skills/target"},
         '/variants/candidate/skills/2: expected each path once, found "skills/target" again (first at /variants/candidate/skills/1)'),
    case("skills-duplicate-spelled-differently", "body", {"/variants/baseline/skills/-": "./skills/x/../support"},
         '/variants/baseline/skills/2: expected each path once, found "./skills/x/../support" naming the same path as /variants/baseline/skills/0'),
    case("context-duplicate", "body", {"/variants/candidate/context/-": "context/contract.md"},
         '/variants/candidate/context/1: expected each path once, found "context/contract.md" again (first at /variants/candidate/context/0)'),
    case("context-duplicate-empty-segment", "body", {"/variants/baseline/context/-": "context//contract.md"},
         '/variants/baseline/context/1: expected a path without empty segments, found "context//contract.md"'),
    case("context-duplicate-dot-prefix", "body", {"/variants/baseline/context/-": "./context/contract.md"},
         '/variants/baseline/context/1: expected each path once, found "./context/contract.md" naming the same path as /variants/baseline/context/0'),
    case("prompt-skill-command-description", "description", {"/input/turns/0": "/skill:target please"},
         "/input/turns/0: " + COMMAND.format('"/skill:target please"')),
    case("prompt-template-description-later-turn", "description", {"/input/turns/1": "/deploy now"},
         "/input/turns/1: " + COMMAND.format('"/deploy now"')),
    case("prompt-command-single", "common", {"/input/prompt": "/skill:target"},
         "/input/prompt: " + COMMAND.format('"/skill:target"')),
    case("prompt-skill-command-body-later-turn", "body", {"/input/turns/1": "/skill:support finish"},
         "/input/turns/1: " + COMMAND.format('"/skill:support finish"')),
    case("prompt-command-body-first-turn", "body", {"/input/turns/0": "/review"},
         "/input/turns/0: " + COMMAND.format('"/review"')),
    raw("surrogate-in-question", "body", _ascii(spec_doc("body"), {"/review_questions/0": "Why\ud800?"}),
        '/review_questions/0: expected valid Unicode text, found "Why\\ud800?" with a lone surrogate'),
    raw("surrogate-in-prompt-and-fixture", "body", _ascii(spec_doc("body"), {"/input/turns/1": "\udfff", "/fixture": "fix\ud800"}),
        '/fixture: expected valid Unicode text, found "fix\\ud800" with a lone surrogate',
        '/input/turns/1: expected valid Unicode text, found "\\udfff" with a lone surrogate'),
    raw("surrogate-in-key", "body", _ascii(spec_doc("body"), {"/runtime": {"host": "pi", "environment": {"literal": {"A\ud800": "1"}}}}),
        '/runtime/environment/literal/A\\ud800: expected a field name of valid Unicode text, found "A\\ud800" with a lone surrogate'),
    raw("surrogate-in-suite-group", "suite", _ascii(spec_doc("suite"), {"/groups/0": "groups/\udc80.json"}),
        '/groups/0: expected valid Unicode text, found "groups/\\udc80.json" with a lone surrogate'),
    raw("surrogate-in-id", "description", _ascii(spec_doc("description"), {"/id": "\ud83d"}),
        '/id: expected valid Unicode text, found "\\ud83d" with a lone surrogate'),
    # --- tools ------------------------------------------------------------------------
    case("tools-missing", "body", {"/tools": DELETE}, '/tools: expected an array of tool names, found no "tools" field'),
    case("tools-string", "body", {"/tools": "read"}, '/tools: expected an array of tool names, found "read"'),
    case("tools-duplicate", "body", {"/tools/-": "read"}, '/tools/3: expected each item once, found "read" again (first at /tools/0)'),
    case("tools-empty-name", "body", {"/tools/-": ""}, f'/tools/3: expected {TOOL_NAME}, found ""'),
    case("tools-comma-list-with-bundle", "runtime", {"/tools/-": "noop,bash"}, f'/tools/4: expected {TOOL_NAME}, found "noop,bash"'),
    case("tools-comma-list", "body", {"/tools/-": "noop,bash"}, f'/tools/3: expected {TOOL_NAME}, found "noop,bash"'),
    case("tools-space", "runtime", {"/tools/-": "my tool"}, f'/tools/4: expected {TOOL_NAME}, found "my tool"'),
    case("tools-trailing-newline", "runtime", {"/tools/-": "probe\n"}, f'/tools/4: expected {TOOL_NAME}, found "probe\\n"'),
    case("tools-leading-digit", "runtime", {"/tools/-": "1probe"}, f'/tools/4: expected {TOOL_NAME}, found "1probe"'),
    case("tools-too-long", "runtime", {"/tools/-": "p" * 65}, f'/tools/4: expected {TOOL_NAME}, found "{"p" * 65}"'),
    case("tools-custom-duplicate", "runtime", {"/tools/-": "probe"}, '/tools/4: expected each item once, found "probe" again (first at /tools/3)'),
    case("description-tool-write", "description", {"/tools/-": "write"}, f'/tools/1: expected {DESCRIPTION_TOOLS}, found "write"'),
    case("description-tool-bash", "description", {"/tools/0": "bash"}, f'/tools/0: expected {DESCRIPTION_TOOLS}, found "bash" (native "bash" is unsupported)'),
    case("description-custom-tool-with-bundle", "description",
         {"/runtime": {"host": "pi", "extensions": [{"entry": "extensions/probe.mjs", "resources": ["extensions"]}]}, "/tools/-": "probe"},
         f'/tools/1: expected {DESCRIPTION_TOOLS}, found "probe"'),
    case("body-tool-bash", "body", {"/tools/-": "bash"}, f'/tools/3: expected {BODY_TOOLS}, found "bash" (native "bash" is unsupported)'),
    case("body-tool-powershell", "body", {"/tools/-": "powershell"}, f'/tools/3: expected {BODY_TOOLS}, found "powershell" (native "powershell" is unsupported)'),
    case("body-tool-grep-with-bundle", "runtime", {"/tools/-": "grep"},
         '/tools/4: expected one of "read", "write", "edit" or a custom tool of a declared extension bundle, found "grep" (native "grep" is unsupported)'),
    case("body-tool-find", "body", {"/tools/-": "find"}, f'/tools/3: expected {BODY_TOOLS}, found "find" (native "find" is unsupported)'),
    case("body-tool-ls", "body", {"/tools/-": "ls"}, f'/tools/3: expected {BODY_TOOLS}, found "ls" (native "ls" is unsupported)'),
    case("body-custom-tool-without-bundle", "body", {"/tools/-": "probe"}, f'/tools/3: expected {BODY_TOOLS}, found "probe"'),
    case("body-custom-tool-empty-bundles", "runtime", {"/runtime/extensions": []}, f'/tools/3: expected {BODY_TOOLS}, found "probe"'),
    # --- variants ---------------------------------------------------------------------
    case("variants-missing", "body", {"/variants": DELETE}, '/variants: expected an object with "baseline" and "candidate", found no "variants" field'),
    case("variants-array", "body", {"/variants": []}, '/variants: expected an object with "baseline" and "candidate", found an empty array'),
    case("variants-no-candidate", "body", {"/variants/candidate": DELETE}, '/variants/candidate: expected a variant object, found no "candidate" field'),
    case("variants-third", "body", {"/variants/control": {}}, '/variants/control: expected one of the fields "baseline", "candidate", found unknown field "control"'),
    case("variant-null", "body", {"/variants/baseline": None}, "/variants/baseline: expected a variant object, found null"),
    case("variant-no-source", "body", {"/variants/baseline/source": DELETE}, '/variants/baseline/source: expected a source object, found no "source" field'),
    case("variant-unknown-field", "body", {"/variants/candidate/model": "x"},
         '/variants/candidate/model: expected one of the fields "source", "skills", "target", "context", found unknown field "model"'),
    case("source-string", "body", {"/variants/candidate/source": "working-tree"}, '/variants/candidate/source: expected a source object, found "working-tree"'),
    case("source-kind-unknown", "body", {"/variants/baseline/source/kind": "svn"}, '/variants/baseline/source/kind: expected one of "working-tree", "git", found "svn"'),
    case("source-kind-missing", "body", {"/variants/candidate/source": {}}, '/variants/candidate/source/kind: expected one of "working-tree", "git", found no "kind" field'),
    case("source-git-no-ref", "body", {"/variants/baseline/source/ref": DELETE}, '/variants/baseline/source/ref: expected a non-empty Git ref, found no "ref" field'),
    case("source-git-empty-ref", "body", {"/variants/baseline/source/ref": ""}, '/variants/baseline/source/ref: expected a non-empty Git ref, found ""'),
    case("source-working-tree-ref", "body", {"/variants/candidate/source/ref": "main"},
         '/variants/candidate/source/ref: expected no "ref" in a working-tree source, found "main"'),
    case("source-unknown-field", "body", {"/variants/baseline/source/commit": "abc"},
         '/variants/baseline/source/commit: expected one of the fields "kind", "ref", found unknown field "commit"'),
    case("skills-string", "body", {"/variants/baseline/skills": "skills/target"},
         '/variants/baseline/skills: expected an array of skill directory paths, found "skills/target"'),
    case("skills-item-number", "body", {"/variants/baseline/skills/0": 0}, "/variants/baseline/skills/0: expected a relative path, found 0"),
    case("skills-item-absolute", "body", {"/variants/candidate/skills/0": "/home/me/skills/support"},
         '/variants/candidate/skills/0: expected a relative path, found absolute path "/home/me/skills/support"'),
    case("skills-item-escape", "body", {"/variants/baseline/skills/0": "../skills/support"},
         '/variants/baseline/skills/0: expected a path inside the definition root, found "../skills/support" leaving it through ".."'),
    case("context-item-backslash", "body", {"/variants/candidate/context/0": "context\\contract.md"},
         '/variants/candidate/context/0: expected a path with "/" separators, found "context\\\\contract.md" with a backslash'),
    case("context-null", "body", {"/variants/candidate/context": None}, "/variants/candidate/context: expected an array of context paths, found null"),
    case("target-missing", "body", {"/variants/baseline/target": DELETE},
         '/variants/baseline/target: expected null or a zero-based index into "skills", found no "target" field'),
    case("target-negative", "body", {"/variants/baseline/target": -1}, '/variants/baseline/target: expected null or a zero-based index into "skills", found -1'),
    case("target-string", "body", {"/variants/baseline/target": "1"}, '/variants/baseline/target: expected null or a zero-based index into "skills", found "1"'),
    case("target-boolean", "body", {"/variants/baseline/target": True}, '/variants/baseline/target: expected null or a zero-based index into "skills", found true'),
    case("target-fraction", "body", {"/variants/baseline/target": 0.5}, '/variants/baseline/target: expected null or a zero-based index into "skills", found 0.5'),
    case("baseline-target-out-of-range", "body", {"/variants/baseline/target": 2},
         '/variants/baseline/target: expected null or an index from 0 to 1 into "skills", found 2'),
    case("baseline-target-single-skill", "description", {"/variants/baseline/target": 1},
         '/variants/baseline/target: expected null or index 0 into "skills", found 1'),
    case("baseline-target-no-skills", "common", {"/variants/baseline/target": 0}, '/variants/baseline/target: expected null ("skills" is empty), found 0'),
    case("candidate-target-out-of-range", "body", {"/variants/candidate/target": 2}, '/variants/candidate/target: expected an index from 0 to 1 into "skills", found 2'),
    case("candidate-target-null", "body", {"/variants/candidate/target": None},
         '/variants/candidate/target: expected an index from 0 to 1 into "skills" (a candidate that declares skills must identify its target), found null'),
    case("candidate-no-skills-no-runtime", "common", {"/variants/candidate/skills": [], "/variants/candidate/target": None},
         '/variants/candidate/target: expected an index into "skills", which is empty (only a candidate of a group with a "runtime" profile may have no target), found null'),
    case("candidate-runtime-only-target", "runtime", {"/variants/candidate/skills": [], "/variants/candidate/target": 0},
         '/variants/candidate/target: expected null ("skills" is empty), found 0'),
    # --- expectations -----------------------------------------------------------------
    case("expectations-missing", "body", {"/expectations": DELETE}, '/expectations: expected an array of expectation objects, found no "expectations" field'),
    case("expectations-object", "body", {"/expectations": {}}, "/expectations: expected an array of expectation objects, found an empty object"),
    case("expectation-string", "body", {"/expectations/0": "baseline-result"}, '/expectations/0: expected an expectation object, found "baseline-result"'),
    case("expectation-no-id", "body", {"/expectations/2/id": DELETE}, f'/expectations/2/id: expected {ID}, found no "id" field'),
    case("expectation-bad-id", "body", {"/expectations/2/id": "Candidate status"}, f'/expectations/2/id: expected {ID}, found "Candidate status"'),
    case("expectation-duplicate-id", "body", {"/expectations/3/id": "candidate-status"},
         '/expectations/3/id: expected an id no earlier expectation uses, found "candidate-status" again (first at /expectations/2)'),
    case("expectation-kind-unknown", "body", {"/expectations/0/kind": "file-exists"}, f'/expectations/0/kind: expected one of {KINDS}, found "file-exists" (did you mean "file-text"?)'),
    case("expectation-kind-missing", "body", {"/expectations/0/kind": DELETE}, f'/expectations/0/kind: expected one of {KINDS}, found no "kind" field'),
    case("expectation-variant-unknown", "body", {"/expectations/1/variant": "both"}, '/expectations/1/variant: expected one of "baseline", "candidate", found "both"'),
    case("expectation-variant-missing", "body", {"/expectations/1/variant": DELETE}, '/expectations/1/variant: expected one of "baseline", "candidate", found no "variant" field'),
    case("expectation-comparison-bad-id", "body", {"/expectations/0/comparison": "result exists"}, f'/expectations/0/comparison: expected {ID}, found "result exists"'),
    case("expectation-turn-zero", "body", {"/expectations/0/turn": 0}, "/expectations/0/turn: expected a one-based turn number, found 0"),
    case("expectation-turn-string", "body", {"/expectations/0/turn": "2"}, '/expectations/0/turn: expected a one-based turn number, found "2"'),
    case("expectation-turn-beyond-turns", "body", {"/expectations/3/turn": 3}, "/expectations/3/turn: expected a turn from 1 to 2, found 3"),
    case("expectation-turn-beyond-prompt", "common",
         {"/expectations/-": {"id": "late", "kind": "response-text", "variant": "candidate", "expect": "contains", "value": "x", "turn": 2}},
         "/expectations/0/turn: expected turn 1 (the input has one turn), found 2"),
    case("expectation-expect-number", "body", {"/expectations/0/expect": 1}, "/expectations/0/expect: expected an expected-predicate string, found 1"),
    # --- review questions -------------------------------------------------------------
    case("review-questions-missing", "body", {"/review_questions": DELETE}, '/review_questions: expected an array of question strings, found no "review_questions" field'),
    case("review-questions-string", "body", {"/review_questions": "Why?"}, '/review_questions: expected an array of question strings, found "Why?"'),
    case("review-question-object", "body", {"/review_questions/0": {"q": "Why?"}}, "/review_questions/0: expected a question string, found an object"),
    # --- model ------------------------------------------------------------------------
    case("model-string", "common", {"/model": "openai-codex/gpt-5.6-sol"}, '/model: expected an object with "model" and optional "thinking", found "openai-codex/gpt-5.6-sol"'),
    case("model-missing-name", "common", {"/model/model": DELETE}, '/model/model: expected a "provider/model" name, found no "model" field'),
    case("model-no-provider", "common", {"/model/model": "gpt-5.6-sol"}, '/model/model: expected a "provider/model" name, found "gpt-5.6-sol"'),
    case("model-empty-model", "common", {"/model/model": "openai-codex/"}, '/model/model: expected a "provider/model" name, found "openai-codex/"'),
    case("model-thinking-unknown", "common", {"/model/thinking": "max"},
         '/model/thinking: expected one of "off", "minimal", "low", "medium", "high", "xhigh", found "max"'),
    case("model-unknown-field", "common", {"/model/temperature": 0},
         '/model/temperature: expected one of the fields "model", "thinking", found unknown field "temperature"'),
    # --- runtime ----------------------------------------------------------------------
    case("runtime-null", "runtime", {"/runtime": None, "/tools": ["read"]}, "/runtime: expected a runtime profile object, found null"),
    case("runtime-host-missing", "runtime", {"/runtime/host": DELETE}, '/runtime/host: expected one of "pi", "piflow", found no "host" field'),
    case("runtime-host-unknown", "runtime", {"/runtime/host": "claude"}, '/runtime/host: expected one of "pi", "piflow", found "claude"'),
    case("runtime-session-string", "runtime", {"/runtime/session": "false"}, '/runtime/session: expected true or false, found "false"'),
    case("runtime-unknown-field", "runtime", {"/runtime/sessions": True},
         '/runtime/sessions: expected one of the fields "host", "session", "extensions", "environment", found unknown field "sessions" (did you mean "session"?)'),
    case("runtime-extensions-object", "runtime", {"/runtime/extensions": {}, "/tools": ["read"]},
         "/runtime/extensions: expected an array of extension bundles, found an empty object"),
    case("bundle-string", "runtime", {"/runtime/extensions/0": "extensions/probe.mjs"},
         '/runtime/extensions/0: expected an extension bundle object, found "extensions/probe.mjs"'),
    case("bundle-no-entry", "runtime", {"/runtime/extensions/0/entry": DELETE}, '/runtime/extensions/0/entry: expected a relative entry file path, found no "entry" field'),
    case("bundle-entry-absolute", "runtime", {"/runtime/extensions/0/entry": "/opt/probe.mjs"},
         '/runtime/extensions/0/entry: expected a relative path, found absolute path "/opt/probe.mjs"'),
    case("bundle-resources-empty", "runtime", {"/runtime/extensions/0/resources": []},
         "/runtime/extensions/0/resources: expected a non-empty array of resource directory paths, found an empty array"),
    case("bundle-resource-escape", "runtime", {"/runtime/extensions/0/resources/0": "extensions/../.."},
         '/runtime/extensions/0/resources/0: expected a path inside the definition root, found "extensions/../.." leaving it through ".."'),
    case("bundle-unknown-field", "runtime", {"/runtime/extensions/0/config": {}},
         '/runtime/extensions/0/config: expected one of the fields "entry", "resources", found unknown field "config"'),
    case("environment-unknown-field", "runtime", {"/runtime/environment/secret": {}},
         '/runtime/environment/secret: expected one of the fields "literal", "inherit", found unknown field "secret"'),
    case("literal-value-number", "runtime", {"/runtime/environment/literal/PROBE_MODE": 1}, "/runtime/environment/literal/PROBE_MODE: expected a string value, found 1"),
    case("literal-name-syntax", "runtime", {"/runtime/environment/literal/PROBE-MODE": "x"},
         f'/runtime/environment/literal/PROBE-MODE: expected {ENV_NAME}, found "PROBE-MODE"'),
    case("literal-path", "runtime", {"/runtime/environment/literal/PATH": "/usr/bin"}, "/runtime/environment/literal/PATH: " + RESERVED.format('"PATH"', *_name("PATH", BASELINE))),
    case("literal-home-lowercase", "runtime", {"/runtime/environment/literal/home": "/tmp"}, "/runtime/environment/literal/home: " + RESERVED.format('"home"', *_name("HOME", BASELINE))),
    case("literal-node-options", "runtime", {"/runtime/environment/literal/NODE_OPTIONS": "--require x"},
         "/runtime/environment/literal/NODE_OPTIONS: " + RESERVED.format('"NODE_OPTIONS"', *_name("NODE_OPTIONS", NODE))),
    case("literal-ld-preload", "runtime", {"/runtime/environment/literal/LD_PRELOAD": "x.so"}, "/runtime/environment/literal/LD_PRELOAD: " + RESERVED.format('"LD_PRELOAD"', *_family("LD_*", LOADER[1]))),
    case("literal-dyld", "runtime", {"/runtime/environment/literal/DYLD_INSERT_LIBRARIES": "x.dylib"},
         "/runtime/environment/literal/DYLD_INSERT_LIBRARIES: " + RESERVED.format('"DYLD_INSERT_LIBRARIES"', *_family("DYLD_*", LOADER[1]))),
    case("inherit-agent-dir", "runtime", {"/runtime/environment/inherit": ["PI_CODING_AGENT_DIR"]},
         "/runtime/environment/inherit/0: " + RESERVED.format('"PI_CODING_AGENT_DIR"', *_family("*_CODING_AGENT_DIR", AGENT_DIR))),
    case("inherit-pythonpath", "runtime", {"/runtime/environment/inherit": ["PYTHONPATH"]}, "/runtime/environment/inherit/0: " + RESERVED.format('"PYTHONPATH"', *_family("PYTHON*", LOADER[1]))),
    case("inherit-ld-library-path", "runtime", {"/runtime/environment/inherit": ["LD_LIBRARY_PATH"]},
         "/runtime/environment/inherit/0: " + RESERVED.format('"LD_LIBRARY_PATH"', *_family("LD_*", LOADER[1]))),
    case("inherit-node-path", "runtime", {"/runtime/environment/inherit": ["NODE_PATH"]}, "/runtime/environment/inherit/0: " + RESERVED.format('"NODE_PATH"', *_name("NODE_PATH", NODE))),
    case("literal-guard-config", "runtime", {"/runtime/environment/literal/SKILL_EVAL_GUARD_CONFIG": "open.json"},
         "/runtime/environment/literal/SKILL_EVAL_GUARD_CONFIG: " + RESERVED.format('"SKILL_EVAL_GUARD_CONFIG"', *_family("SKILL_EVAL_*", EVALUATOR))),
    case("literal-observer-out", "runtime", {"/runtime/environment/literal/skill_eval_observer_out": "x"},
         "/runtime/environment/literal/skill_eval_observer_out: " + RESERVED.format('"skill_eval_observer_out"', *_family("SKILL_EVAL_*", EVALUATOR))),
    case("literal-compile-cache", "runtime", {"/runtime/environment/literal/NODE_COMPILE_CACHE": "/tmp/c"},
         "/runtime/environment/literal/NODE_COMPILE_CACHE: " + RESERVED.format('"NODE_COMPILE_CACHE"', *_name("NODE_COMPILE_CACHE", NODE))),
    case("literal-jiti", "runtime", {"/runtime/environment/literal/JITI_ALIAS": "{}"},
         "/runtime/environment/literal/JITI_ALIAS: " + RESERVED.format('"JITI_ALIAS"', *_name("JITI_ALIAS", JITI))),
    case("literal-perl5opt", "runtime", {"/runtime/environment/literal/PERL5OPT": "-Mx"},
         "/runtime/environment/literal/PERL5OPT: " + RESERVED.format('"PERL5OPT"', *_family("PERL*", LOADER[1]))),
    case("literal-lc-all", "runtime", {"/runtime/environment/literal/LC_ALL": "C"},
         "/runtime/environment/literal/LC_ALL: " + RESERVED.format('"LC_ALL"', *_family("LC_*", LOCALE))),
    case("literal-proxy-lowercase", "runtime", {"/runtime/environment/literal/https_proxy": "http://127.0.0.1:1"},
         "/runtime/environment/literal/https_proxy: " + RESERVED.format('"https_proxy"', *_name("HTTPS_PROXY", PROXY))),
    case("inherit-base-url", "runtime", {"/runtime/environment/inherit": ["OPENAI_BASE_URL"]},
         "/runtime/environment/inherit/0: " + RESERVED.format('"OPENAI_BASE_URL"', *_name("OPENAI_BASE_URL", ENDPOINT))),
    case("inherit-offline", "runtime", {"/runtime/environment/inherit": ["PI_OFFLINE"]},
         "/runtime/environment/inherit/0: " + RESERVED.format('"PI_OFFLINE"', *_name("PI_OFFLINE", PI))),
    case("inherit-name-syntax", "runtime", {"/runtime/environment/inherit": ["1PASS"]}, f'/runtime/environment/inherit/0: expected {ENV_NAME}, found "1PASS"'),
    case("inherit-string", "runtime", {"/runtime/environment/inherit": "OPENAI_API_KEY"},
         '/runtime/environment/inherit: expected an array of environment names, found "OPENAI_API_KEY"'),
    case("inherit-duplicate", "runtime", {"/runtime/environment/inherit": ["OPENAI_API_KEY", "OPENAI_API_KEY"]},
         '/runtime/environment/inherit/1: expected each item once, found "OPENAI_API_KEY" again (first at /runtime/environment/inherit/0)'),
    case("literal-inherit-overlap", "runtime", {"/runtime/environment/inherit": ["PROBE_MODE"]},
         '/runtime/environment/inherit/0: expected a name not also set in "literal", found "PROBE_MODE"'),
    case("secret-key", "runtime", {"/runtime/environment/literal/PROBE_API_KEY": "sk-x"},
         "/runtime/environment/literal/PROBE_API_KEY: " + SECRET.format('"PROBE_API_KEY"', '"KEY"')),
    case("literal-host-credential", "runtime", {"/runtime/environment/literal/OPENAI_API_KEY": "sk-x"},
         '/runtime/environment/literal/OPENAI_API_KEY: expected a name the evaluator does not control, found "OPENAI_API_KEY" '
         "(OPENAI_API_KEY is reserved for the user's own value: a credential the host sends to a provider; "
         'pass it with "inherit" instead)'),
    case("secret-token-lowercase", "runtime", {"/runtime/environment/literal/github_token": "x"},
         "/runtime/environment/literal/github_token: " + SECRET.format('"github_token"', '"TOKEN"')),
    case("secret-secret", "runtime", {"/runtime/environment/literal/CLIENT_SECRET": "x"},
         "/runtime/environment/literal/CLIENT_SECRET: " + SECRET.format('"CLIENT_SECRET"', '"SECRET"')),
    case("secret-password", "runtime", {"/runtime/environment/literal/DB_PASSWORD": "x"},
         "/runtime/environment/literal/DB_PASSWORD: " + SECRET.format('"DB_PASSWORD"', '"PASSWORD"')),
    case("secret-passwd", "runtime", {"/runtime/environment/literal/PASSWD": "x"}, "/runtime/environment/literal/PASSWD: " + SECRET.format('"PASSWD"', '"PASSWD"')),
    case("secret-credential", "runtime", {"/runtime/environment/literal/PROBE_CREDENTIALS": "x"},
         "/runtime/environment/literal/PROBE_CREDENTIALS: " + SECRET.format('"PROBE_CREDENTIALS"', '"CREDENTIAL"')),
    case("secret-auth", "runtime", {"/runtime/environment/literal/BASIC_AUTH": "x"}, "/runtime/environment/literal/BASIC_AUTH: " + SECRET.format('"BASIC_AUTH"', '"AUTH"')),
    case("secret-private", "runtime", {"/runtime/environment/literal/PRIVATE_PEM": "x"},
         "/runtime/environment/literal/PRIVATE_PEM: " + SECRET.format('"PRIVATE_PEM"', '"PRIVATE"')),
    # --- suites -----------------------------------------------------------------------
    case("suite-schema-version", "suite", {"/schema_version": 0}, "/schema_version: expected 1, found 0"),
    case("suite-kind-group", "suite", {"/kind": "group"}, '/kind: expected "suite", found "group"'),
    case("suite-bad-id", "suite", {"/id": "Workflow"}, f'/id: expected {ID}, found "Workflow"'),
    case("suite-unknown-field", "suite", {"/variants": {}},
         '/variants: expected one of the fields "schema_version", "kind", "id", "groups", found unknown field "variants"'),
    case("suite-groups-missing", "suite", {"/groups": DELETE}, '/groups: expected a non-empty array of group definition paths, found no "groups" field'),
    case("suite-groups-empty", "suite", {"/groups": []}, "/groups: expected a non-empty array of group definition paths, found an empty array"),
    case("suite-group-number", "suite", {"/groups/-": 3}, "/groups/2: expected a relative group definition path, found 3"),
    case("suite-group-duplicate", "suite", {"/groups/-": "groups/natural-activation.json"},
         '/groups/2: expected each item once, found "groups/natural-activation.json" again (first at /groups/0)'),
    case("suite-group-same-file", "suite", {"/groups/-": "./groups/../groups/body-behavior.json"},
         '/groups/2: expected each group file once, found "./groups/../groups/body-behavior.json" naming the same file as /groups/1'),
    case("suite-group-absolute", "suite", {"/groups/0": "/groups/natural-activation.json"},
         '/groups/0: expected a relative path, found absolute path "/groups/natural-activation.json"'),
    case("suite-group-escape", "suite", {"/groups/0": "../x.json"},
         '/groups/0: expected a path inside the definition root, found "../x.json" leaving it through ".."'),
    case("suite-group-missing-file", "suite", {"/groups/1": "groups/missing.json"},
         '/groups/1: expected an existing group definition file, found "groups/missing.json" naming none'),
    case("suite-group-directory", "suite", {"/groups/1": "groups"},
         '/groups/1: expected an existing group definition file, found "groups" naming a directory'),
    case("suite-lists-itself", "suite", {"/groups/1": "suite.json"},
         '/groups/1: expected a group definition file, found "suite.json" naming this suite itself'),
    case("suite-lists-itself-spelled-differently", "suite", {"/groups/-": "groups/../suite.json"},
         '/groups/2: expected a group definition file, found "groups/../suite.json" naming this suite itself'),
    case("suite-group-in-evidence-tree", "suite", {"/groups/1": ".skill-eval/runs/r/group.json"},
         '/groups/1: expected a path outside the evidence tree, found ".skill-eval/runs/r/group.json" inside ".skill-eval/runs/"'),
    case("suite-group-in-evidence-tree-case", "suite", {"/groups/1": "groups/../.Skill-Eval/RUNS/r/group.json"},
         '/groups/1: expected a path outside the evidence tree, found "groups/../.Skill-Eval/RUNS/r/group.json" inside ".skill-eval/runs/"'),
    case("suite-group-bidi", "suite", {"/groups/1": "groups/\u202enosj.json"},
         "/groups/1: " + CONTROL.format('"groups/\\u202enosj.json"', "U+202E")),
    case("suite-group-long-segment", "suite", {"/groups/1": "y" * 300 + ".json"},
         '/groups/1: expected path segments of at most 255 bytes (UTF-8), found "' + "y" * 60 + '"… (305 characters) with a segment of 305 bytes'),
]


@pytest.mark.parametrize("broken", CASES, ids=[c.name for c in CASES])
def test_invalid_definition_reports_exact_error(tmp_path: Path, broken: Case) -> None:
    write_suite_tree(tmp_path)
    path = tmp_path / ("suite.json" if broken.base == "suite" else "group.json")
    if broken.text is not None:
        path.write_text(broken.text, encoding="utf-8")
    else:
        write_json(path, apply_edits(spec_doc(broken.base), broken.edits))
    load = load_suite if broken.base == "suite" else load_group
    with pytest.raises(DefinitionError) as caught:
        load(path, tmp_path)
    assert str(caught.value) == "\n".join(f"{path}: {line}" for line in broken.expected)


def test_corpus_is_large_and_names_are_unique() -> None:
    assert len(CASES) >= 80
    assert len({c.name for c in CASES}) == len(CASES)


def test_every_problem_in_a_file_is_reported_at_once_in_pointer_order(tmp_path: Path) -> None:
    doc = apply_edits(
        spec_doc("body"),
        {
            "/type": "end-to-end",
            "/fixture": "../outside",
            "/tools/-": "bash",
            "/variants/candidate/target": None,
            "/expectations/1/id": "baseline-result",
            "/schema_version": 2,
        },
    )
    path = write_json(tmp_path / "group.json", doc)
    with pytest.raises(DefinitionError) as caught:
        load_definition(path, tmp_path)
    assert str(caught.value).splitlines() == [
        f'{path}: /expectations/1/id: expected an id no earlier expectation uses, found "baseline-result" again (first at /expectations/0)',
        f'{path}: /fixture: expected a path inside the definition root, found "../outside" leaving it through ".."',
        f"{path}: /schema_version: expected 1, found 2",
        f'{path}: /tools/3: expected a supported tool, found "bash" (native "bash" is unsupported)',
        f'{path}: /type: expected one of "description", "body", found "end-to-end" (a reserved type that is not executable)',
        f'{path}: /variants/candidate/target: expected an index from 0 to 1 into "skills" '
        "(a candidate that declares skills must identify its target), found null",
    ]
    assert [p.pointer for p in caught.value.problems][0] == "/expectations/1/id"


@pytest.mark.parametrize(
    ("edits", "expected"),
    [
        ({"/kind": DELETE}, '/kind: expected one of "group", "suite", found no "kind" field'),
        ({"/kind": "end-to-end"}, '/kind: expected one of "group", "suite", found "end-to-end"'),
    ],
)
def test_load_definition_needs_a_known_kind(tmp_path: Path, edits: dict[str, Any], expected: str) -> None:
    path = write_json(tmp_path / "group.json", apply_edits(spec_doc("body"), edits))
    with pytest.raises(DefinitionError) as caught:
        load_definition(path, tmp_path)
    assert str(caught.value) == f"{path}: {expected}"


def test_invalid_utf8_names_the_offending_byte(tmp_path: Path) -> None:
    path = tmp_path / "group.json"
    path.write_bytes(b'{"id": "caf\xe9"}')
    with pytest.raises(DefinitionError) as caught:
        load_definition(path, tmp_path)
    assert str(caught.value) == f"{path}: /: expected UTF-8 text, found byte 0xe9 at offset 11"


def test_missing_file_is_a_definition_error(tmp_path: Path) -> None:
    path = tmp_path / "absent.json"
    with pytest.raises(DefinitionError) as caught:
        load_definition(path, tmp_path)
    assert str(caught.value) == f"{path}: /: expected a readable file, found an OS error: No such file or directory"


def test_no_message_leaks_raw_jsonschema_wording(tmp_path: Path) -> None:
    for broken in CASES:
        text = "\n".join(broken.expected)
        for raw_phrase in ("is not valid under", "is a required property", "should be non-empty", "does not match", "is not of type"):
            assert raw_phrase not in text, broken.name


def test_pointer_tokens_are_escaped(tmp_path: Path) -> None:
    doc = apply_edits(spec_doc("runtime"), {"/runtime/environment/literal/A~1B~0C": "x"})
    path = write_json(tmp_path / "group.json", doc)
    with pytest.raises(DefinitionError) as caught:
        load_definition(path, tmp_path)
    assert str(caught.value) == f'{path}: /runtime/environment/literal/A~1B~0C: expected {ENV_NAME}, found "A/B~C"'


def test_json_error_names_line_and_column(tmp_path: Path) -> None:
    path = tmp_path / "group.json"
    path.write_text(json.dumps(spec_doc("body"), indent=2)[:-2] + ",\n}", encoding="utf-8")
    with pytest.raises(DefinitionError) as caught:
        load_definition(path, tmp_path)
    (problem,) = caught.value.problems
    assert problem.pointer == ""
    assert "found invalid JSON at line " in problem.message and " column " in problem.message
