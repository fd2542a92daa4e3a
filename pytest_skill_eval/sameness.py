"""Whether baseline and candidate get the same inputs, so no comparison can show a change (pure).

What can differ between a group's two variants is their skills (the bytes of every file,
their order, which one is the target) and their declared context; the prompts, model,
tools, fixture and environment belong to the group and are the same for both. After the
usual commit, the baseline (Git ``HEAD``) and the candidate (the working tree) are
byte-identical: every comparison then reads ``pass-to-pass`` or ``fail-to-fail`` whatever
the skill says. ``skill-eval check``, the run's terminal summary and the HTML report warn
of it, from the snapshots (check) or the recorded fingerprints (run, report).
"""

from __future__ import annotations

from collections.abc import Mapping

__all__ = ["IDENTICAL", "Prints", "identical_advice", "identical_inputs", "resource_key"]

#: ``{resource: {file: sha256}}``: a variant's fingerprints (``fingerprints.json`` ``before``)
Prints = Mapping[str, Mapping[str, str]]

IDENTICAL = "baseline and candidate get byte-identical skills and context: these comparisons cannot show a change"


def resource_key(path: str) -> str:
    """``skills/0/rollback`` from a fingerprinted scratch path ``…/<variant>/resources/skills/0/rollback``."""
    marker = "/resources/"
    cut = path.rfind(marker)
    return path[cut + len(marker):] if cut >= 0 else path


def identical_inputs(baseline: Prints, candidate: Prints, baseline_target: int | None,
                     candidate_target: int | None) -> bool:
    """Whether the two variants' skills and context are byte-identical, with the same target.

    The keys may be scratch paths (they differ per variant only above ``resources/``).
    """
    def keyed(prints: Prints) -> dict[str, dict[str, str]]:
        return {resource_key(k): dict(v) for k, v in prints.items()}

    return baseline_target == candidate_target and keyed(baseline) == keyed(candidate)


def identical_advice(baseline_kind: str, baseline_ref: str | None, candidate_kind: str) -> str:
    """What to do about identical inputs, for the variants' declared sources."""
    if baseline_kind == "git" and baseline_ref == "HEAD" and candidate_kind == "working-tree":
        return ("the working tree holds what HEAD holds: edit the skill without committing to compare the edit "
                "with HEAD, or point the baseline's \"ref\" at an earlier commit (HEAD~1, a branch or a tag)")
    return "point the baseline at an earlier version of the skill, or change the candidate's skills or context"
