"""The frozen values a loaded definition becomes: groups, suites, variants, sources, expectations."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

VariantName = Literal["baseline", "candidate"]
VARIANTS: tuple[VariantName, VariantName] = ("baseline", "candidate")


@dataclass(frozen=True, slots=True)
class Source:
    """Where a variant's skills and context come from: the working tree or one Git ref."""

    kind: Literal["working-tree", "git"]
    ref: str | None = None


@dataclass(frozen=True, slots=True)
class Variant:
    """One side of the comparison: ordered skills, the target index and ordered context."""

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
    """A ``provider/model`` name and optional thinking level."""

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
    """An extension entry file and the directories copied with it."""

    entry: str
    resources: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class RuntimeEnvironment:
    """Recorded literal variables (sorted by name) and names inherited unrecorded."""

    literal: tuple[tuple[str, str], ...] = ()
    inherit: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Runtime:
    """The host profile shared by both variants; the default is a plain ``pi`` host."""

    host: Literal["pi", "piflow"] = "pi"
    session: bool = False
    extensions: tuple[ExtensionBundle, ...] = ()
    environment: RuntimeEnvironment = RuntimeEnvironment()


@dataclass(frozen=True, slots=True)
class Group:
    """A loaded, validated group definition; declared paths are kept as written."""

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
    #: Whether the definition declared ``runtime`` (``runtime`` holds defaults when not).

    def variant(self, name: VariantName) -> Variant:
        return self.baseline if name == "baseline" else self.candidate

    def candidate_against_itself(self) -> Group:
        """This group as an A/A calibration run (``--skill-eval-aa``): the baseline arm gets the
        candidate's source, skills, target and context; prompts, fixture, tools, model,
        runtime and expectations stay as declared (``raw`` too: the definition as written)."""
        return replace(self, baseline=replace(self.candidate, name="baseline"))


@dataclass(frozen=True, slots=True)
class GroupRef:
    """One entry of a suite's ``groups``: its one-based position and resolved file.

    ``path`` is the definition root joined with the normalized root-relative path;
    ``group_id`` is known once the group was loaded (see :func:`load_suite_groups`).
    """

    position: int
    ref: str
    path: Path
    group_id: str | None = None


@dataclass(frozen=True, slots=True)
class Suite:
    """A loaded suite: its id and ordered group references."""

    path: Path
    id: str
    groups: tuple[GroupRef, ...]
