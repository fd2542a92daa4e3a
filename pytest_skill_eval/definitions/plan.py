"""What a run would start, said before anything starts (pure): ``skill-eval check`` and
``pytest --collect-only -v`` print the same line from here.

``2 group(s) × 2 variant(s) × 1 trial(s) = 4 pi run(s); models: scripted/a, openai/gpt-4.1``:
every selected variant of every group is one pi run per trial; the models are the
``provider/model`` ids the groups declare (``pi's default`` for a group that declares none:
pi then picks its own default, see docs/real-models.md).
"""

from __future__ import annotations

from collections.abc import Sequence

from pytest_skill_eval.definitions.model import Group

__all__ = ["DEFAULT_MODEL", "plan_line"]

#: how the plan names the model of a group that declares none
DEFAULT_MODEL = "pi's default"


def plan_line(groups: Sequence[Group], variants: int, trials: int) -> str:
    """``N group(s) × V variant(s) × T trial(s) = R pi run(s); models: …`` (nothing is started)."""
    models = sorted({g.model.model if g.model and g.model.model else DEFAULT_MODEL for g in groups})
    return (f"{len(groups)} group(s) × {variants} variant(s) × {trials} trial(s) = "
            f"{len(groups) * variants * trials} pi run(s); models: {', '.join(models) or 'none'}")
