"""The JUnit XML of a run: one ``<testcase>`` per group, the details in a second test suite.

pytest writes the XML; this plugin rewrites the file pytest just wrote, so that it

- validates against the schema of the JUnit family in force: ``xunit2`` (pytest's default,
  the Jenkins xunit plugin's ``junit-10.xsd``) and ``xunit1``/``legacy`` (its ``junit-9.xsd``).
  Neither allows ``<properties>`` inside a ``<testcase>``, so the properties of each group's
  testcase move to a block of their own in the details suite;
- counts what the terminal counts: the first suite keeps exactly pytest's testcases, one per
  group item. The per-variant, per-expectation, per-comparison and grade entries of each
  group are properties of a second suite named ``skill-eval details``, which holds no
  testcase, so no failure is counted twice;
- names classes without the empty components hidden directories give them
  (``.skill-eval/suite.json`` is class ``skill-eval.suite.json``, not ``.skill-eval.suite.json``);
- gives evidence paths relative to the rootdir;
- gives the details suite the result's decision as its own properties (``skill_eval.decision``
  and its figures, each comparison's line);
- neutralises every attribute and text of a group's testcase and of its details
  (:func:`~pytest_skill_eval.safe_text.neutralise`): pytest escapes only what XML cannot
  hold, so bidi overrides, zero-width and other format characters, C1 controls and line
  separators the subject wrote would otherwise reach whatever renders the report raw.

Registered only on the process that writes the XML (the xdist controller, or the only process).
"""

from __future__ import annotations

import os
from collections.abc import Generator, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from xml.etree import ElementTree

import pytest

from pytest_skill_eval.evidence.decision_records import DecisionRecord
from pytest_skill_eval.plugin.pytest_internals import bin_xml_escape, mangle_test_address, xml_key
from pytest_skill_eval.plugin.session import SkillEvalSession
from pytest_skill_eval.policy import Entry
from pytest_skill_eval.safe_text import neutralise

#: the name of the second test suite, which holds the details and no testcase
DETAILS_SUITE = "skill-eval details"
#: property holding an entry's outcome and status word, ``skill_eval.entry.<entry name>``
ENTRY_PREFIX = "skill_eval.entry."
_BASE_PROPS = ("skill_eval.result_id", "skill_eval.group")


@dataclass(frozen=True, slots=True)
class GroupCase:
    """What the rewrite needs of one reported group item."""

    nodeid: str
    entries: tuple[Entry, ...]


class JUnitEntries:
    """Rewrites pytest's JUnit XML once pytest has written it (see the module docstring)."""

    def __init__(self, session: SkillEvalSession) -> None:
        self.session = session

    @pytest.hookimpl(wrapper=True)
    def pytest_sessionfinish(self, session: pytest.Session) -> Generator[None, object, object]:
        result = yield
        xml = session.config.stash.get(xml_key, None)
        if xml is not None and os.path.exists(xml.logfile):
            cases = [GroupCase(r.nodeid, r.verdict.entries() if r.verdict is not None else ())
                     for r in self.session.reported.values()]
            rewrite_file(Path(xml.logfile), cases, prefix=xml.prefix, rootdir=session.config.rootpath,
                         decision=stored_decision(self.session.result_dir))
        return result


def stored_decision(result_dir: Path) -> DecisionRecord | None:
    """The decision ``result.json`` holds (None: no result.json, or none in it)."""
    from pytest_skill_eval.errors import EvidenceError
    from pytest_skill_eval.evidence import store

    try:
        stored = store.read_json(result_dir / "result.json")
        return DecisionRecord.from_json(stored["decision"]) if "decision" in stored else None
    except (OSError, EvidenceError, KeyError, TypeError, ValueError):
        return None


def decision_properties(decision: DecisionRecord) -> list[tuple[str, str]]:
    """The result-level properties: the decision line and its figures, then each comparison's line."""
    props = [("skill_eval.decision", decision.line), ("skill_eval.decision.test", decision.test),
             ("skill_eval.decision.counts", f"{decision.higher} higher, {decision.lower} lower, {decision.ties} ties"),
             ("skill_eval.decision.p_value", "" if decision.p_value is None else f"{decision.p_value:.4g}"),
             ("skill_eval.decision.power", "" if decision.power is None else f"{decision.power:.4g}"),
             ("skill_eval.decision.adjustment", str(decision.rules.get("adjustment"))),
             ("skill_eval.decision.lost_runs", str(decision.lost_runs))]
    props += [(f"skill_eval.decision.comparison.{c.group}/{c.comparison}", c.line) for c in decision.comparisons]
    if decision.flips is not None:
        props.append(("skill_eval.decision.aa_flips", decision.flips.flip_rate.text()))
    return props


def rewrite_file(path: Path, cases: Sequence[GroupCase], *, prefix: str | None, rootdir: Path,
                 decision: DecisionRecord | None = None) -> None:
    root = ElementTree.parse(path).getroot()
    rewrite(root, cases, prefix=prefix, rootdir=rootdir, decision=decision)
    text = ElementTree.tostring(root, encoding="unicode")
    path.write_text('<?xml version="1.0" encoding="utf-8"?>' + text, encoding="utf-8")


def clean_classname(classname: str) -> str:
    """``.skill-eval.suite.json`` -> ``skill-eval.suite.json``: no empty dotted components."""
    return ".".join(part for part in classname.split(".") if part)


def relative_path(value: str, rootdir: Path) -> str:
    """An absolute path under *rootdir* as a POSIX path relative to it; anything else unchanged."""
    path = Path(value)
    if not path.is_absolute():
        return value
    try:
        return path.relative_to(rootdir).as_posix() or "."
    except ValueError:
        return value


def _key(nodeid: str, prefix: str | None) -> tuple[str, str]:
    names = mangle_test_address(nodeid)
    classnames = names[:-1]
    if prefix:
        classnames.insert(0, prefix)
    return ".".join(classnames), names[-1]


def entry_properties(entry: Entry, rootdir: Path) -> list[tuple[str, str]]:
    """``skill_eval.entry.<name>`` = ``<outcome>: <word>``, then the entry's own properties under that name."""
    name = ENTRY_PREFIX + entry.name
    props = [(name, f"{entry.outcome}: {entry.word}")]
    for key, value in entry.properties:
        if key in _BASE_PROPS:
            continue
        if key.endswith("evidence"):
            value = relative_path(value, rootdir)
        props.append((f"{name}.{key.removeprefix('skill_eval.')}", value))
    return props


def _properties(props: Iterable[tuple[str, str]]) -> ElementTree.Element:
    node = ElementTree.Element("properties")
    for name, value in props:
        node.append(ElementTree.Element("property", name=bin_xml_escape(neutralise(name, one_line=True)),
                                        value=bin_xml_escape(neutralise(value))))
    return node


def neutralise_tree(node: ElementTree.Element) -> None:
    """Every attribute value, text and tail under *node* (itself included) neutralised, in place."""
    for element in node.iter():
        for key, value in element.attrib.items():
            element.set(key, neutralise(value))
        if element.text:
            element.text = neutralise(element.text)
        if element.tail:
            element.tail = neutralise(element.tail)


def rewrite(root: ElementTree.Element, cases: Sequence[GroupCase], *, prefix: str | None, rootdir: Path,
            decision: DecisionRecord | None = None) -> None:
    """Rewrite pytest's ``<testsuites>`` in place (see the module docstring); the result's
    *decision* is the details suite's own properties."""
    by_key = {_key(c.nodeid, prefix): c for c in cases}
    details: list[ElementTree.Element] = []
    for suite in list(root.iter("testsuite")):
        for testcase in suite.findall("testcase"):
            case = by_key.get((testcase.get("classname", ""), testcase.get("name", "")))
            if case is None:
                continue
            testcase.set("classname", clean_classname(testcase.get("classname", "")))
            neutralise_tree(testcase)
            moved: list[tuple[str, str]] = []
            for node in testcase.findall("properties"):
                testcase.remove(node)
                for prop in node.iter("property"):
                    name, value = prop.get("name", ""), prop.get("value", "")
                    moved.append((name, relative_path(value, rootdir) if name.endswith("evidence") else value))
            for entry in case.entries:
                moved += entry_properties(entry, rootdir)
            block = ElementTree.Element("testsuite", name=neutralise(case.nodeid, one_line=True), tests="0", failures="0", errors="0", skipped="0")
            if moved:
                block.append(_properties(moved))
            details.append(block)
    if not details:
        return
    outer = ElementTree.SubElement(root, "testsuite", name=DETAILS_SUITE, tests="0", failures="0", errors="0",
                                   skipped="0")
    if decision is not None:
        outer.append(_properties(decision_properties(decision)))
    outer.extend(details)
