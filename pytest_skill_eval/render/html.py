"""The self-contained HTML report of a stored result (pure: records in, one HTML string out).

Everything the subject produced (agent text, tool arguments and results, file names and
contents, even group ids) is untrusted. It reaches the page only through Jinja2 templates
with autoescaping on, after :func:`~.text.neutralise` (control, format and separator
characters shown as ``\\uXXXX``, as in the text view). The page also carries a content
security policy that allows nothing but its own inline script and style, by hash
(``default-src 'none'``): no network request of any kind, no inline event handler, no
injected script can run even if an escape were missed.

Large results stay usable: the overview is plain HTML, and each group's details are
rendered into an HTML string that is embedded as a JSON string in a
``<script type="application/json">`` element (``<``, ``>`` and ``&`` written as ``\\u003c``
…, so the element cannot be closed early). The browser keeps it as inert text; the inline
script turns one group into DOM only when it is opened.

The loading (files, records, diffs) lives in :mod:`pytest_skill_eval.services.report`.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from jinja2 import Environment, PackageLoader, StrictUndefined
from markupsafe import Markup

from pytest_skill_eval import jsonbounds
from pytest_skill_eval.evidence.decision_records import ComparisonRecord
from pytest_skill_eval.evidence.records import (
    DefinitionRecord,
    GroupRecord,
    InvalidGroupRecord,
    ResultRecord,
    RunRecord,
    TranscriptRecord,
    Usage,
)
from pytest_skill_eval.evidence.stop_records import StoppingRecord
from pytest_skill_eval.grading.aggregate import TrialGrade
from pytest_skill_eval.grading.results import ExpectationResult, GroupGrade
from pytest_skill_eval.observation import ContextRequest, Turn
from pytest_skill_eval.render.diffs import FileDiff
from pytest_skill_eval.safe_text import escape_path, neutralise
from pytest_skill_eval.sameness import IDENTICAL
from pytest_skill_eval.trial_policy import rate_text
from pytest_skill_eval.usage import UNAVAILABLE, VariantUsage, money, total

#: a text longer than this (a tool result, a response, a system prompt) is cut in the page
TEXT_SHOWN = 100_000
#: how much of the end of a run's stderr.txt the page shows
STDERR_SHOWN = 8000
_TURN = re.compile(r"\bturns? (\d+)\b")
_CALL = re.compile(r"\btool call (\S+?)(?:,|\s|$)")


# ------------------------------------------------------------------------------- values


@dataclass(frozen=True, slots=True)
class ResourceFile:
    """One file of a declared resource (skill or context item) in both variants' fingerprints.

    ``baseline``/``candidate`` are the sha256 recorded at run time (``None``: not in that
    variant). ``diff`` is set when the contents could be read now from the variant's source
    and match the recorded fingerprints; ``note`` says where they were read, or why not.
    """

    resource: str
    file: str
    baseline: str | None
    candidate: str | None
    diff: FileDiff | None = None
    note: str | None = None

    @property
    def status(self) -> str:
        if self.baseline is None:
            return "only candidate"
        if self.candidate is None:
            return "only baseline"
        return "same" if self.baseline == self.candidate else "differs"


@dataclass(frozen=True, slots=True)
class AssistantStep:
    """One assistant message of a turn, from ``events.jsonl``: its text and the tool calls it made."""

    text: str
    thinking: str
    call_ids: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class ReportVariant:
    """What the report shows of one variant directory."""

    name: str
    dir: str
    run: RunRecord | None = None
    transcript: TranscriptRecord | None = None
    final_response: str | None = None
    #: the definition's declaration of this variant (skills, target, context, source)
    declared: Mapping[str, Any] = field(default_factory=dict)
    workspace: tuple[FileDiff, ...] = ()
    #: per turn index, ``turns/<n>/workspace/`` against the fixture copy (only turns that have a snapshot)
    turn_workspaces: Mapping[int, tuple[FileDiff, ...]] = field(default_factory=dict)
    #: the end of ``stderr.txt`` (at most STDERR_SHOWN characters), ``None`` when absent or empty
    stderr: str | None = None
    stderr_size: int = 0
    #: ``context-observations.json``: what each model request's system prompt held (context-text groups only)
    context_requests: tuple[ContextRequest, ...] = ()
    #: per turn index, the assistant messages in order (empty when events.jsonl is absent)
    steps: Mapping[int, tuple[AssistantStep, ...]] = field(default_factory=dict)
    problems: tuple[str, ...] = ()

    def anchor(self, location: str) -> tuple[str, str] | None:
        """``(anchor suffix, link text)`` of what an expectation location points at in this variant.

        ``turn 1, tool call call_1_0_0 (read)`` links to that call (``t1-c0``), a location that
        names only a turn (``workspace x after turn 2``) to the turn (``t2``).
        """
        turn = turn_of(location)
        if turn is None:
            return None
        call = _CALL.search(location)
        if call is not None and self.transcript is not None:
            for stored in self.transcript.turns:
                if stored.turn.index == turn:
                    for position, c in enumerate(stored.turn.tool_calls):
                        if c.id == call.group(1):
                            return f"t{turn}-c{position}", f"turn {turn}, {c.name} call"
        return f"t{turn}", f"turn {turn}"

    def timeline(self, turn: Turn) -> tuple[tuple[str, Any], ...]:
        """The turn in order: ``("thinking"|"text", str)`` and ``("call", (position, ToolCall))`` items.

        From the assistant messages of ``events.jsonl`` when they are there; every tool
        call of the transcript appears exactly once (calls no message named come last).
        """
        calls = {c.id: (position, c) for position, c in enumerate(turn.tool_calls)}
        items: list[tuple[str, Any]] = []
        shown: set[str] = set()
        for step in self.steps.get(turn.index, ()):
            if step.thinking:
                items.append(("thinking", step.thinking))
            if step.text:
                items.append(("text", step.text))
            for call_id in step.call_ids:
                if call_id in calls and call_id not in shown:
                    items.append(("call", calls[call_id]))
                    shown.add(call_id)
        items += [("call", (p, c)) for p, c in enumerate(turn.tool_calls) if c.id not in shown]
        return tuple(items)

    @property
    def usage(self) -> Usage | None:
        return self.run.ran.usage if self.run is not None and self.run.ran is not None else None


@dataclass(frozen=True, slots=True)
class ReportGroup:
    """What the report shows of one ``groups/NNN-<id>`` directory."""

    dir: str
    position: int
    record: GroupRecord | InvalidGroupRecord | None = None
    grade: GroupGrade | None = None
    #: when *grade* is a regrade: which file, when, and what the run's own grade said
    regrade: str | None = None
    definition: DefinitionRecord | None = None
    variants: tuple[ReportVariant, ...] = ()
    resources: tuple[ResourceFile, ...] = ()
    problems: tuple[str, ...] = ()
    #: a group run with several trials: what they say together, and which trial is shown in full
    aggregate: TrialGrade | None = None
    trial: int | None = None
    #: what to do when the two variants got byte-identical skills and context (None: they differ)
    identical: str | None = None
    #: a group run with trials: every trial in full (each its own view, loaded when opened)
    trials: tuple[ReportGroup, ...] = ()
    #: the group's pytest outcome (passed, failed, error), as reported or judged again
    outcome: str | None = None
    #: the result's decision of each of the group's comparisons
    decisions: tuple[ComparisonRecord, ...] = ()
    #: a group run with trials: runs that did not complete, and trials never run (``result.json`` ``lost_runs``)
    lost_runs: int = 0
    #: what ``--skill-eval-stop`` looked at (``stopping.json``), for a group run with a stop rule
    stopping: StoppingRecord | None = None
    #: ``baseline reused from …`` or why not (``reuse.json``), for a group run with --skill-eval-reuse-baseline
    reuse: str | None = None

    @property
    def stopping_lines(self) -> list[str]:
        """The stop rule's line, then one line per comparison and look (the view's words)."""
        from pytest_skill_eval.render.views import render_stopping

        return [line.strip().removeprefix("stopping  ") for line in render_stopping(self.stopping)]

    @property
    def identical_warning(self) -> str | None:
        """The warning the page shows when both variants got byte-identical skills and context."""
        return f"{IDENTICAL}; {self.identical}" if self.identical is not None else None

    @property
    def id(self) -> str:
        if self.record is not None and self.record.id is not None:
            return self.record.id
        return self.dir

    @property
    def state(self) -> str:
        return self.record.state if self.record is not None else "unknown"

    @property
    def type(self) -> str:
        return self.record.type if isinstance(self.record, GroupRecord) else "-"

    @property
    def review_questions(self) -> tuple[str, ...]:
        return self.record.review_questions if isinstance(self.record, GroupRecord) else ()

    def variant(self, name: str) -> ReportVariant | None:
        return next((v for v in self.variants if v.name == name), None)

    def variant_state(self, name: str) -> str:
        if self.record is not None and name in self.record.variants:
            return self.record.variants[name].state  # type: ignore[index]
        v = self.variant(name)
        return v.run.state if v is not None and v.run is not None else "unknown"

    @property
    def transitions(self) -> tuple[str, ...]:
        return tuple(c.transition for c in self.grade.comparisons) if self.grade is not None else ()

    @property
    def usage(self) -> VariantUsage:
        """The group's tokens and cost: ``group.json``'s (every trial and rerun), else its shown runs'."""
        if isinstance(self.record, GroupRecord) and self.record.usage is not None:
            return self.record.usage
        found = {name: total(v.usage for v in self.variants if v.name == name and v.usage is not None)
                 for name in ("baseline", "candidate")}
        return VariantUsage(found["baseline"], found["candidate"])

    @property
    def turn_count(self) -> int:
        """The most turns either variant's transcript holds (turns are shown side by side)."""
        return max((len(v.transcript.turns) for v in self.variants if v.transcript is not None), default=0)

    def expectations(self, variant: str) -> tuple[ExpectationResult, ...]:
        return tuple(e for e in self.grade.expectations if e.variant == variant) if self.grade is not None else ()


@dataclass(frozen=True, slots=True)
class Report:
    """A stored result as the HTML report sees it."""

    result_id: str
    path: str
    summary: ResultRecord | None
    groups: tuple[ReportGroup, ...]
    generated_at: str
    version: str
    problems: tuple[str, ...] = ()


# ------------------------------------------------------------------------------ helpers


def assistant_steps(lines: Iterable[str], ranges: Mapping[int, tuple[int, int | None]]) -> dict[int, tuple[AssistantStep, ...]]:
    """The assistant messages of each turn: ``message_end`` records of ``events.jsonl`` lines.

    *ranges* maps a turn index to its ``[first, last]`` line range (``last`` ``None``: to the end).
    Lines that are not JSON objects, and messages of other roles, are skipped.
    """
    found: dict[int, list[AssistantStep]] = {index: [] for index in ranges}
    for number, line in enumerate(lines):
        if '"message_end"' not in line:
            continue
        try:
            record = jsonbounds.loads(line)
        except ValueError:  # not JSON, or too large or deep to read (JSONBoundsError): not a step
            continue
        message = record.get("message") if isinstance(record, dict) and record.get("type") == "message_end" else None
        if not isinstance(message, dict) or message.get("role") != "assistant" or not isinstance(message.get("content"), list):
            continue
        turn = next((i for i, (first, last) in ranges.items() if first <= number and (last is None or number <= last)), None)
        if turn is None:
            continue
        blocks = [b for b in message["content"] if isinstance(b, dict)]
        text = "".join(str(b.get("text", "")) for b in blocks if b.get("type") == "text")
        thinking = "".join(str(b.get("thinking", "")) for b in blocks if b.get("type") == "thinking")
        calls = tuple(str(b.get("id")) for b in blocks if b.get("type") == "toolCall")
        found[turn].append(AssistantStep(text, thinking, calls))
    return {index: tuple(steps) for index, steps in found.items()}


def turn_of(location: str) -> int | None:
    """The turn an expectation location points at (``workspace x after turn 2`` → 2), if it names one."""
    match = _TURN.search(location)
    return int(match.group(1)) if match else None


def script_json(value: Any) -> Markup:
    """*value* as JSON that is safe as the text of a ``<script type="application/json">``."""
    text = json.dumps(value, ensure_ascii=False)
    text = text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
    text = text.replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")
    return Markup(text)


def _finalize(value: Any) -> Any:
    # every {{ }} of untrusted text: no terminal-style control or bidi characters, then escaped
    if isinstance(value, str) and not isinstance(value, Markup):
        return neutralise(value)
    return value


def _pretty(value: Any) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False, sort_keys=False)


def _cut(text: str, where: str = "the evidence") -> str:
    if len(text) <= TEXT_SHOWN:
        return text
    return text[:TEXT_SHOWN] + f"\n[… cut: {len(text) - TEXT_SHOWN:,} more characters; the whole text is in {where}]"


def _number(value: float | None) -> str:
    if value is None:
        return UNAVAILABLE
    return f"{int(value):,}" if float(value).is_integer() else f"{value:,.2f}"


def _cost(value: float | None) -> str:
    return UNAVAILABLE if value is None else money(value)


def _short(sha: str | None) -> str:
    return sha[:12] if sha else "-"


def _duration(run: RunRecord | None) -> str | None:
    if run is None or run.ran is None:
        return None
    return f"{run.ran.ended_at - run.ran.started_at:.2f} s"


def _environment() -> Environment:
    env = Environment(
        loader=PackageLoader("pytest_skill_eval.render", "templates"),
        autoescape=True,
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        finalize=_finalize,
    )
    # path cells as the text view writes them: backslash, tab, CR and LF escaped, one line
    env.filters.update(path=escape_path, cut=_cut, pretty=_pretty, number=_number, cost=_cost, short=_short)
    env.globals.update(turn_of=turn_of, duration=_duration, rate_text=rate_text)
    return env


_ENV: Environment | None = None


def environment() -> Environment:
    global _ENV
    if _ENV is None:
        _ENV = _environment()
    return _ENV


def _static(name: str) -> str:
    loader = environment().loader
    assert loader is not None
    source, _filename, _uptodate = loader.get_source(environment(), name)
    return source


def _csp_hash(text: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode("ascii") + "'"


def content_security_policy(script: str, style: str) -> str:
    """Nothing may load or run but the page's own inline script and style (by hash)."""
    return (f"default-src 'none'; script-src {_csp_hash(script)}; style-src {_csp_hash(style)}; "
            "img-src 'none'; connect-src 'none'; font-src 'none'; base-uri 'none'; form-action 'none'")


@dataclass(frozen=True, slots=True)
class _Glance:
    """The batch at a glance."""

    group_states: Sequence[tuple[str, int]]
    variant_states: Sequence[tuple[str, int]]
    transitions: Sequence[tuple[str, int]]
    usage: Mapping[str, Usage]
    states: Sequence[str]


def _glance(report: Report) -> _Glance:
    groups = report.groups
    group_states = Counter(g.state for g in groups)
    variant_states = Counter(g.variant_state(name) for g in groups for name in ("baseline", "candidate"))
    transitions = Counter(t for g in groups for t in g.transitions)
    overall = sum((g.usage for g in groups), VariantUsage())
    usage = {"baseline": overall.baseline, "candidate": overall.candidate, "total": overall.total}
    states = sorted(set(group_states) | set(variant_states))
    return _Glance(sorted(group_states.items()), sorted(variant_states.items()), sorted(transitions.items()),
                   usage, states)


def render_group(group: ReportGroup, index: int | str) -> Markup:
    """One group's (or one trial's, *index* ``3-t2``) details as an HTML fragment (escaped;
    loaded into the page on demand)."""
    template = environment().get_template("group.html.j2")
    return Markup(template.render(group=group, index=index))


def render_report(report: Report) -> str:
    """The whole self-contained HTML page of *report*."""
    env = environment()
    script, style = _static("report.js"), _static("report.css")
    fragments: list[tuple[str, str]] = []
    for i, g in enumerate(report.groups):
        fragments.append((f"g{i}", script_json(str(render_group(g, i)))))
        fragments += [(f"g{i}-t{t.trial}", script_json(str(render_group(t, f"{i}-t{t.trial}")))) for t in g.trials]
    return env.get_template("report.html.j2").render(
        report=report,
        glance=_glance(report),
        fragments=fragments,
        script=Markup(script),
        style=Markup(style),
        csp=content_security_policy(script, style),
    )
