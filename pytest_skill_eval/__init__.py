"""pytest-skill-eval: evaluate Agent Skills through the real pi coding-agent host.

The public API is what ``__all__`` lists: loading definitions, the error tree, grading, and
the typed records of the evidence tree (to read stored results from your own code). The
names are imported on first use, so importing the package (which every pytest run does
through the plugin's entry point) stays cheap.

PYTEST_DONT_REWRITE: the ``skill-eval`` command lives in this package, so the package is
imported before the command starts pytest. From a regular (non-editable) install pytest
marks a plugin's top-level package for assertion rewriting and, finding it imported
already, would warn that it cannot rewrite it. This package is the evaluator, not test
code: its asserts need no rewriting, and the marker above tells pytest so.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

_PUBLIC = {
    "SkillEvalError": "pytest_skill_eval.errors",
    "DefinitionError": "pytest_skill_eval.errors",
    "EvidenceError": "pytest_skill_eval.errors",
    "Problem": "pytest_skill_eval.errors",
    "Group": "pytest_skill_eval.definitions.model",
    "Suite": "pytest_skill_eval.definitions.model",
    "load_definition": "pytest_skill_eval.definitions.loading",
    "load_suite_groups": "pytest_skill_eval.definitions.loading",
    "GroupGrade": "pytest_skill_eval.grading.results",
    "grade_group": "pytest_skill_eval.grading.group",
    "RunObservation": "pytest_skill_eval.observation",
    "RunRecord": "pytest_skill_eval.evidence.records",
    "GroupRecord": "pytest_skill_eval.evidence.records",
    "ResultRecord": "pytest_skill_eval.evidence.records",
    "read_record": "pytest_skill_eval.evidence.reader",
    "load_observation": "pytest_skill_eval.evidence.reader",
}

__all__ = [
    "__version__",
    "DefinitionError",
    "EvidenceError",
    "Group",
    "GroupGrade",
    "GroupRecord",
    "Problem",
    "ResultRecord",
    "RunObservation",
    "RunRecord",
    "SkillEvalError",
    "Suite",
    "grade_group",
    "load_definition",
    "load_observation",
    "load_suite_groups",
    "read_record",
]

if TYPE_CHECKING:
    from pytest_skill_eval.definitions.loading import load_definition, load_suite_groups
    from pytest_skill_eval.definitions.model import Group, Suite
    from pytest_skill_eval.errors import DefinitionError, EvidenceError, Problem, SkillEvalError
    from pytest_skill_eval.evidence.reader import load_observation, read_record
    from pytest_skill_eval.evidence.records import GroupRecord, ResultRecord, RunRecord
    from pytest_skill_eval.grading.group import grade_group
    from pytest_skill_eval.grading.results import GroupGrade
    from pytest_skill_eval.observation import RunObservation


def __getattr__(name: str) -> Any:
    module = _PUBLIC.get(name)
    if module is None:
        raise AttributeError(f"module 'pytest_skill_eval' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value
