"""Schema-version-1 group and suite definitions, loaded into frozen dataclasses.

Loading validates common structure (JSON Schema files under ``schemas/``) and the
cross-field rules; kind-specific expectation fields are kept raw and checked at
grade time, as the spec requires.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from .errors import DefinitionError, Problem

VariantName = Literal["baseline", "candidate"]
VARIANTS: tuple[VariantName, VariantName] = ("baseline", "candidate")


@dataclass(frozen=True, slots=True)
class Source:
    kind: Literal["working-tree", "git"]
    ref: str | None = None


@dataclass(frozen=True, slots=True)
class Variant:
    name: VariantName
    source: Source
    skills: tuple[str, ...]
    target: int | None
    context: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Expectation:
    """Common expectation fields; ``raw`` keeps the whole object for grade-time checks."""

    id: str
    kind: str
    variant: VariantName
    expect: str
    comparison: str | None
    turn: int | None
    pointer: str
    raw: dict[str, Any] = field(compare=False, hash=False)


@dataclass(frozen=True, slots=True)
class ModelSpec:
    model: str
    thinking: str | None = None

    @property
    def provider(self) -> str:
        return self.model.split("/", 1)[0]

    @property
    def model_id(self) -> str:
        return self.model.split("/", 1)[1] if "/" in self.model else self.model


@dataclass(frozen=True, slots=True)
class ExtensionBundle:
    entry: str
    resources: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class RuntimeEnvironment:
    literal: tuple[tuple[str, str], ...] = ()
    inherit: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Runtime:
    host: Literal["pi", "piflow"] = "pi"
    session: bool = False
    extensions: tuple[ExtensionBundle, ...] = ()
    environment: RuntimeEnvironment = RuntimeEnvironment()


@dataclass(frozen=True, slots=True)
class Group:
    path: Path
    id: str
    type: Literal["description", "body"]
    prompts: tuple[str, ...]
    input_kind: Literal["prompt", "turns"]
    fixture: str | None
    tools: tuple[str, ...]
    baseline: Variant
    candidate: Variant
    expectations: tuple[Expectation, ...]
    review_questions: tuple[str, ...]
    model: ModelSpec | None
    runtime: Runtime
    raw: dict[str, Any] = field(compare=False, hash=False)

    def variant(self, name: VariantName) -> Variant:
        return self.baseline if name == "baseline" else self.candidate


@dataclass(frozen=True, slots=True)
class GroupRef:
    """One entry of a suite's ``groups``: its one-based position and resolved file."""

    position: int
    ref: str
    path: Path


@dataclass(frozen=True, slots=True)
class Suite:
    path: Path
    id: str
    groups: tuple[GroupRef, ...]


def read_document(path: Path) -> dict[str, Any]:
    """Read one JSON object from *path* or raise DefinitionError naming the file."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise DefinitionError(str(path), [Problem("", f"cannot read file: {exc}")]) from None
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise DefinitionError(
            str(path), [Problem("", f"expected JSON, found invalid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}")]
        ) from None
    if not isinstance(doc, dict):
        raise DefinitionError(str(path), [Problem("", f"expected an object, found {type(doc).__name__}")])
    return doc


def definition_kind(path: Path) -> str | None:
    """Return ``"group"``/``"suite"`` if *path* looks like a definition, else None (not ours)."""
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return None
    if isinstance(doc, dict) and doc.get("kind") in ("group", "suite") and "schema_version" in doc:
        return str(doc["kind"])
    return None


def load_group(path: Path, root: Path) -> Group:
    """Load and validate one group definition file; *root* is the definition root."""
    doc = read_document(path)
    return _build_group(path, doc)


def load_suite(path: Path, root: Path) -> Suite:
    """Load and validate one suite file; group refs are resolved from the suite's directory."""
    doc = read_document(path)
    refs = tuple(
        GroupRef(position=i + 1, ref=ref, path=(path.parent / ref)) for i, ref in enumerate(doc["groups"])
    )
    return Suite(path=path, id=doc["id"], groups=refs)


def _build_variant(name: VariantName, raw: dict[str, Any]) -> Variant:
    src = raw["source"]
    return Variant(
        name=name,
        source=Source(kind=src["kind"], ref=src.get("ref")),
        skills=tuple(raw["skills"]),
        target=raw["target"],
        context=tuple(raw["context"]),
    )


def _build_group(path: Path, doc: dict[str, Any]) -> Group:
    inp = doc["input"]
    prompts = (inp["prompt"],) if "prompt" in inp else tuple(inp["turns"])
    runtime_raw = doc.get("runtime")
    runtime = Runtime()
    if runtime_raw is not None:
        env = runtime_raw.get("environment", {})
        runtime = Runtime(
            host=runtime_raw.get("host", "pi"),
            session=runtime_raw.get("session", False),
            extensions=tuple(
                ExtensionBundle(entry=b["entry"], resources=tuple(b["resources"]))
                for b in runtime_raw.get("extensions", [])
            ),
            environment=RuntimeEnvironment(
                literal=tuple(sorted(env.get("literal", {}).items())),
                inherit=tuple(env.get("inherit", [])),
            ),
        )
    model_raw = doc.get("model")
    return Group(
        path=path,
        id=doc["id"],
        type=doc["type"],
        prompts=prompts,
        input_kind="prompt" if "prompt" in inp else "turns",
        fixture=doc["fixture"],
        tools=tuple(doc["tools"]),
        baseline=_build_variant("baseline", doc["variants"]["baseline"]),
        candidate=_build_variant("candidate", doc["variants"]["candidate"]),
        expectations=tuple(
            Expectation(
                id=e["id"],
                kind=e["kind"],
                variant=e["variant"],
                expect=e.get("expect", ""),
                comparison=e.get("comparison"),
                turn=e.get("turn"),
                pointer=f"/expectations/{i}",
                raw=e,
            )
            for i, e in enumerate(doc["expectations"])
        ),
        review_questions=tuple(doc["review_questions"]),
        model=ModelSpec(model_raw["model"], model_raw.get("thinking")) if model_raw else None,
        runtime=runtime,
        raw=doc,
    )
