"""Whether a stored baseline run had provably the same inputs as the baseline about to run (pure).

``--skill-eval-reuse-baseline <result>`` (issue 29) takes stored baseline runs instead of running
the baseline again, only where nothing that reaches the baseline's pi process or its grading
differs. This module compares the two sides' :class:`BaselineInputs` field by field, in a
fixed order, and names the **first** differing field (with its JSON pointer inside the
field, and both values, digests shortened), so a refusal says exactly why:

1. ``model``, ``thinking``: the group's declared model and thinking level;
2. ``host``, ``version``: the pi host's version and the plugin's version;
3. ``tools``, ``runtime``: the declared tools and runtime profile (environment names and
   literal values, extensions, session);
4. ``skills``, ``context``, ``fixture``, ``bundles``: the SHA-256 and mode of every file the
   baseline got (its snapshotted skills and context, the fixture's initial workspace,
   extension bundles), by the path ``run.json``'s ``snapshot`` gives it;
5. ``input``: the prompt or turns;
6. ``script``, ``seed``: the scripted stand-in's script digest and seed (the draws depend on
   the seed, group, variant and trial: another seed is another sample);
7. ``definition``: everything else of the group definition apart from candidate-only fields
   (``variants.candidate`` and the candidate's expectations), plus ``observer``: whether any
   expectation is a ``context-text`` check (that switches the observer extension on for both
   variants, so a candidate expectation can change the baseline's launch).

Values are plain JSON (the definitions' raw documents, digests from ``run.json`` snapshots and
manifests), so the stored side can come from a hostile result once its records were read
through their schemas; nothing here does I/O.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from pytest_skill_eval.jsonpointer import child
from pytest_skill_eval.safe_text import neutralise

__all__ = ["FIELDS", "BaselineInputs", "Difference", "baseline_definition", "first_difference"]

#: the order in which fields are compared (the first differing one is named)
FIELDS = ("model", "thinking", "host", "version", "tools", "runtime", "skills", "context", "fixture", "bundles",
          "input", "script", "seed", "definition")

#: definition keys compared as their own fields (left out of ``definition``)
_OWN = ("model", "tools", "runtime", "input")


def baseline_definition(definition: Mapping[str, Any]) -> dict[str, Any]:
    """The group definition as the baseline sees it: candidate-only fields removed, ``observer`` added."""
    out = {k: v for k, v in definition.items() if k not in _OWN}
    variants = definition.get("variants")
    if isinstance(variants, Mapping):
        out["variants"] = {k: v for k, v in variants.items() if k != "candidate"}
    expectations = definition.get("expectations")
    if isinstance(expectations, list):
        out["expectations"] = [e for e in expectations if not (isinstance(e, Mapping) and e.get("variant") == "candidate")]
        out["observer"] = any(isinstance(e, Mapping) and e.get("kind") == "context-text" for e in expectations)
    return out


@dataclass(frozen=True, slots=True)
class BaselineInputs:
    """Everything that reaches one baseline run (see the module docstring for the order)."""

    definition: Mapping[str, Any]
    host: str | None
    version: str | None
    #: ``path -> (sha256, mode)`` of every file the baseline got, as ``run.json``'s ``snapshot``
    #: names them: ``workspace/...`` (the fixture), ``resources/skills/...``,
    #: ``resources/context/...``, ``extensions/...`` (the bundles)
    files: Mapping[str, tuple[str, str]] = field(default_factory=dict)
    script: str | None = None
    seed: str | None = None

    def value(self, name: str) -> Any:
        """The field *name* of :data:`FIELDS` as a JSON value."""
        model = self.definition.get("model")
        model = model if isinstance(model, Mapping) else {}
        prefix = {"skills": "resources/skills/", "context": "resources/context/", "fixture": "workspace/",
                  "bundles": "extensions/"}
        if name == "model":
            return model.get("model")
        if name == "thinking":
            return model.get("thinking")
        if name in ("tools", "runtime", "input"):
            return self.definition.get(name)
        if name in prefix:
            return {k: f"{sha} {mode}" for k, (sha, mode) in sorted(self.files.items()) if k.startswith(prefix[name])}
        if name == "definition":
            return baseline_definition(self.definition)
        if name in ("host", "version", "script", "seed"):
            return getattr(self, name)
        raise ValueError(f"expected one of {', '.join(FIELDS)}, found {name!r}")


@dataclass(frozen=True, slots=True)
class Difference:
    """The first field whose values differ: its name, where inside it, and both values (shortened)."""

    field: str
    pointer: str
    stored: str
    current: str

    def text(self) -> str:
        """``baseline not reused: skills differ at /resources~1skills~10~1x~1SKILL.md: stored 60144b06…, now 9f0c…``."""
        where = f" at {self.pointer}" if self.pointer else ""
        return neutralise(f"baseline not reused: {self.field} differs{where}: stored {self.stored}, now {self.current}",
                          one_line=True)


def _shown(value: Any) -> str:
    if value is _ABSENT:
        return "nothing"
    if isinstance(value, str):
        digest = re.fullmatch(r"([0-9a-f]{64})((?: [0-7]+)?)", value)
        return f"{digest.group(1)[:12]}…{digest.group(2)}" if digest else repr(value)
    if isinstance(value, (Mapping, list)):
        return f"{type(value).__name__} of {len(value)}"
    return repr(value)


_ABSENT: Any = object()


def _diff(a: Any, b: Any, pointer: str = "") -> tuple[str, Any, Any] | None:
    """The first place (pointer, a's value, b's value) where *a* and *b* differ, keys in sorted order."""
    if isinstance(a, Mapping) and isinstance(b, Mapping):
        for key in sorted(set(a) | set(b), key=str):
            found = _diff(a.get(key, _ABSENT), b.get(key, _ABSENT), child(pointer, str(key)))
            if found is not None:
                return found
        return None
    if isinstance(a, list) and isinstance(b, list):
        for i in range(max(len(a), len(b))):
            found = _diff(a[i] if i < len(a) else _ABSENT, b[i] if i < len(b) else _ABSENT, child(pointer, str(i)))
            if found is not None:
                return found
        return None
    # bool is an int in Python: True and 1 are different inputs
    if a is _ABSENT or b is _ABSENT or type(a) is not type(b) or a != b:
        return pointer, a, b
    return None


def first_difference(stored: BaselineInputs, current: BaselineInputs) -> Difference | None:
    """The first field of :data:`FIELDS` in which *stored* and *current* differ, or None when they are the same."""
    for name in FIELDS:
        found = _diff(stored.value(name), current.value(name))
        if found is not None:
            pointer, a, b = found
            return Difference(name, pointer, _shown(a), _shown(b))
    return None
