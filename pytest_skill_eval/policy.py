"""The outcome policy: how a group's states and grade become a pytest outcome (pure).

- invalid, infrastructure-failed and grade-error are errors, never passes;
- ``--skill-eval-fail-on`` decides which failed expectations fail the item:
  ``candidate`` (default) any selected candidate expectation, ``regression`` only
  ``pass-to-fail`` comparisons, ``any`` any expectation, ``never`` none;
- not-selected variants are reported, never failed.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

FAIL_ON_CHOICES = ("candidate", "regression", "any", "never")
STATUS_PROPERTY = "skill_eval.status"


@dataclass(frozen=True, slots=True)
class ItemVerdict:
    group_id: str
    group_state: str
    group_dir: str
    variant_states: tuple[tuple[str, str, str | None], ...]
    expectations: tuple[dict[str, Any], ...]
    comparisons: tuple[dict[str, Any], ...]
    grade_errors: tuple[dict[str, Any], ...]
    fail_on: str

    @property
    def error(self) -> bool:
        bad_run = any(state in ("invalid", "infrastructure-failed") for _n, state, _r in self.variant_states)
        return bad_run or bool(self.grade_errors)

    @property
    def failing(self) -> list[dict[str, Any]]:
        """The expectations (or comparisons) that fail the item under the policy."""
        if self.fail_on == "never":
            return []
        if self.fail_on == "regression":
            return [c for c in self.comparisons if c["transition"] == "pass-to-fail"]
        return [
            e
            for e in self.expectations
            if e["status"] == "fail" and (self.fail_on == "any" or e["variant"] == "candidate")
        ]

    @property
    def failed(self) -> bool:
        return bool(self.failing)

    def words(self) -> str:
        """Status words for the terminal, e.g. ``fail-to-pass`` or ``candidate 2/3 pass``."""
        if self.comparisons:
            return ", ".join(f"{c['transition']}" for c in self.comparisons)
        cand = [e for e in self.expectations if e["variant"] == "candidate" and e["status"] in ("pass", "fail")]
        if cand:
            return f"candidate {sum(e['status'] == 'pass' for e in cand)}/{len(cand)} pass"
        return self.group_state

    def properties(self) -> list[tuple[str, str]]:
        """JUnit properties: states, every expectation and comparison, where the evidence is."""
        props = [(STATUS_PROPERTY, self.words()), ("skill_eval.group_state", self.group_state),
                 ("skill_eval.evidence", self.group_dir)]
        props += [(f"skill_eval.variant.{n}", state) for n, state, _r in self.variant_states]
        props += [(f"skill_eval.expectation.{e['id']}", f"{e['variant']} {e['status']}") for e in self.expectations]
        props += [(f"skill_eval.comparison.{c['id']}", c["transition"]) for c in self.comparisons]
        return props

    def _explain(self, e: dict[str, Any]) -> str:
        where = "; ".join(e.get("locations") or []) or "no location"
        return (f"  [{e['variant']}] {e['id']} ({e['kind']}): {e['status']}\n"
                f"      expected: {e['expected']}\n      observed: {e['observed']}\n      evidence: {where}")

    def failure_text(self) -> str:
        lines = [f"group {self.group_id}: expectations failed under --skill-eval-fail-on={self.fail_on}"]
        for item in self.failing:
            if "transition" in item:
                lines.append(f"  comparison {item['id']}: {item['transition']}")
            else:
                lines.append(self._explain(item))
        lines.append(self.summary_lines())
        return "\n".join(lines)

    def error_text(self) -> str:
        lines = [f"group {self.group_id}: {self.group_state}"]
        for name, state, reason in self.variant_states:
            if state in ("invalid", "infrastructure-failed"):
                lines.append(f"  {name}: {state}: {reason}")
        for err in self.grade_errors:
            owner = f" {err.get('owner')}" if err.get("owner") else ""
            lines.append(f"  grade-error ({err.get('scope')}{owner}): {err.get('message')}")
        lines.append(self.summary_lines())
        return "\n".join(lines)

    def summary_lines(self) -> str:
        lines = [f"  evidence: {self.group_dir}"]
        lines += [f"  {n}: {s}" + (f" ({r})" if r and s != "complete" else "") for n, s, r in self.variant_states]
        lines += [f"  {e['variant']:9} {e['status']:11} {e['id']}" for e in self.expectations]
        lines += [f"  comparison {c['id']}: {c['transition']}" for c in self.comparisons]
        return "\n".join(lines)


def judge_group(outcome: Any, fail_on: str) -> ItemVerdict:
    """Turn an engine ``GroupOutcome`` into the item's verdict."""
    grade = outcome.grade.to_json()
    return ItemVerdict(
        group_id=outcome.group.id,
        group_state=outcome.state,
        group_dir=str(outcome.group_dir),
        variant_states=tuple((n, v.state, v.reason) for n, v in outcome.variants.items()),
        expectations=tuple(grade.get("expectations", [])),
        comparisons=tuple(grade.get("comparisons", [])),
        grade_errors=tuple(grade.get("errors", [])),
        fail_on=fail_on,
    )
