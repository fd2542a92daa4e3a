"""Which environment names a definition may set or inherit: the one reserved-name policy.

The decisions come from ``host/env-names.json``, a table derived from the pinned host:
``tools/scan_host_env.py`` scans the installed pi bundle, every package it ships and the
evaluator's own extensions for each environment variable they read (exact names, and the
prefix and suffix families that code assembles, such as ``AWS_ENDPOINT_URL_`` + a service
id), and a reviewer classified each one. A few families the scan cannot see (the dynamic
loader, shells, node's C++, the evaluator's own settings) are in the same table as reviewed
entries. A CI test fails when the installed host reads a name the table lacks.

Classes:

- ``launch-control``: steers where the host's requests go, which servers it trusts, how it
  authenticates, what code it loads, or is a setting the evaluator owns. Refused in
  ``literal`` and in ``inherit``.
- ``reserved``: read by the host, but only the user's own value makes sense (a credential,
  an account or region, terminal detection). Refused in ``literal`` (a definition must not
  choose it); ``inherit`` passes the user's own value.
- ``safe``: a short list of names that only change how text is drawn. Allowed.
- ``unreviewed``: added by ``--write`` and not yet classified; treated as ``launch-control``.

Names compare case-insensitively. An exact name's entry wins over families; among
families the strictest class wins. A name the host does not read is free for extensions.
The definitions loader reports a refusal as a located error, and the launch layer refuses
and drops the same names again (defence in depth).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from importlib import resources

__all__ = ["CLASSES", "Rule", "inherit_refusal", "literal_refusal", "reserved_reason", "rule_for", "rules"]

#: strictest first
CLASSES = ("launch-control", "unreviewed", "reserved", "safe")
_REFUSED_IN_INHERIT = frozenset({"launch-control", "unreviewed"})
_REFUSED_IN_LITERAL = frozenset({"launch-control", "unreviewed", "reserved"})


@dataclass(frozen=True, slots=True)
class Rule:
    """One entry of the table: a name, a prefix family or a suffix family."""

    kind: str  # "name", "prefix" or "suffix"
    value: str  # upper case
    klass: str
    reason: str

    @property
    def label(self) -> str:
        return {"name": self.value, "prefix": f"{self.value}*", "suffix": f"*{self.value}"}[self.kind]

    def matches(self, upper: str) -> bool:
        if self.kind == "name":
            return upper == self.value
        return upper.startswith(self.value) if self.kind == "prefix" else upper.endswith(self.value)


@cache
def rules() -> tuple[Rule, ...]:
    """Every rule of the committed table (``pytest_skill_eval/host/env-names.json``)."""
    table = json.loads((resources.files("pytest_skill_eval.host") / "env-names.json").read_text(encoding="utf-8"))
    out = []
    for section, kind in (("names", "name"), ("prefixes", "prefix"), ("suffixes", "suffix")):
        for value, entry in table[section].items():
            klass = entry["class"] if entry.get("class") in CLASSES else "unreviewed"
            out.append(Rule(kind, value.upper(), klass, entry.get("reason") or "not reviewed yet"))
    return tuple(out)


@cache
def _exact() -> dict[str, Rule]:
    return {rule.value: rule for rule in rules() if rule.kind == "name"}


def rule_for(name: str) -> Rule | None:
    """The rule that decides *name*, or ``None`` when the host does not read it."""
    upper = name.upper()
    exact = _exact().get(upper)
    if exact is not None:
        return exact
    families = [rule for rule in rules() if rule.kind != "name" and rule.matches(upper)]
    if not families:
        return None
    return min(families, key=lambda rule: (CLASSES.index(rule.klass), -len(rule.value)))


def _why(rule: Rule) -> str:
    noun = rule.label if rule.kind == "name" else f"{rule.label} names"
    verb = "is" if rule.kind == "name" else "are"
    if rule.klass == "reserved":
        return f'{noun} {verb} reserved for the user\'s own value: {rule.reason}; pass it with "inherit" instead'
    klass = "not yet reviewed" if rule.klass == "unreviewed" else rule.klass
    return f"{noun} {verb} reserved ({klass}): {rule.reason}"


def literal_refusal(name: str) -> str | None:
    """Why *name* may not be set in ``environment.literal``; ``None`` if it may."""
    rule = rule_for(name)
    if rule is None or rule.klass not in _REFUSED_IN_LITERAL:
        return None
    return _why(rule)


def inherit_refusal(name: str) -> str | None:
    """Why *name* may not be listed in ``environment.inherit``; ``None`` if it may."""
    rule = rule_for(name)
    if rule is None or rule.klass not in _REFUSED_IN_INHERIT:
        return None
    return _why(rule)


def reserved_reason(name: str) -> str | None:
    """Why *name* is reserved from a literal value (the stricter of the two uses)."""
    return literal_refusal(name)
