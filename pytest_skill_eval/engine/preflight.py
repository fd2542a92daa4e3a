"""What a run would find wrong with a group, found before any subject starts.

A paid run should not be the way to learn that an expectation has a typo, a skill path
or Git ref does not exist, or no credential reaches pi. :func:`preflight_group` asks
the same questions a run asks, with the run's own code: sources are resolved and
snapshotted into a scratch directory by :mod:`.isolation` and :mod:`.sources` (the
symlink, containment and Git rules are theirs), expectations go through the grading
shape check, the model through :mod:`.models` and :mod:`.credentials`.

It never starts a host or a model server. Both ``skill-eval check`` and the plugin's
collection-time check (warnings, ``--skill-eval-strict``) use it. Each problem carries
the JSON pointer of the definition field it is about.
"""

from __future__ import annotations

import tempfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from pytest_skill_eval.definitions.model import VARIANTS, Group, VariantName
from pytest_skill_eval.errors import ScriptError, SkillEvalError
from pytest_skill_eval.paths import shown

__all__ = ["Finding", "PreflightContext", "preflight_group", "problems_of"]


GRADE_ERROR = "would be grade-error: "


@dataclass(frozen=True, slots=True)
class Finding:
    """One checked thing: ``ok`` is False for a problem, None for something not checked.

    A ``warning`` (with ``ok`` None) stops nothing and spoils no run, but makes what the run
    shows meaningless: baseline and candidate with identical inputs.
    """

    ok: bool | None
    subject: str
    detail: str
    #: the JSON pointer of the definition field the finding is about
    pointer: str | None = None
    warning: bool = False

    def located(self, file: str) -> str:
        """``<file>: <pointer>: <detail>``, the definition-error format."""
        detail, note = self.detail, ""
        if detail.startswith(GRADE_ERROR):
            detail, note = detail[len(GRADE_ERROR):], " (it would be a grade-error after the run)"
        if self.pointer is not None and detail.startswith(f"{self.pointer}: "):
            detail = detail[len(self.pointer) + 2:]
        return f"{file}: {self.pointer or '/'}: {detail}{note}"


@dataclass(frozen=True, slots=True)
class PreflightContext:
    """What a run would have: the definition root, environment, auth and models files, selection."""

    root: Path
    env: Mapping[str, str] = field(default_factory=dict)
    auth_file: Path | None = None
    user_models: Path | None = None
    selected: frozenset[str] = frozenset(VARIANTS)


def problems_of(findings: list[Finding]) -> list[Finding]:
    return [f for f in findings if f.ok is False]


def preflight_group(group: Group, ctx: PreflightContext) -> list[Finding]:
    """Every finding about *group*: expectations and comparisons, model, sources, environment."""
    findings = expectation_findings(group) + model_findings(group, ctx) + environment_findings(group, ctx)
    findings += placeholder_findings(group)
    with tempfile.TemporaryDirectory(prefix="skill-eval-check-") as scratch:
        findings += source_findings(group, ctx, Path(scratch))
    return findings


# -- expectations ------------------------------------------------------------------------


def expectation_findings(group: Group) -> list[Finding]:
    """Shape problems of every expectation (any variant: each is a grade-error whatever runs)."""
    from pytest_skill_eval.grading import check_expectation, grade_group

    findings: list[Finding] = []
    pointers: dict[str, str] = {}
    for expectation in group.expectations:
        subject = f"expectation {expectation.id}"
        if expectation.comparison and expectation.comparison not in pointers:
            pointers[expectation.comparison] = f"{expectation.pointer}/comparison"
        problems = check_expectation(group, expectation)
        if problems:
            findings += [Finding(False, subject, f"{GRADE_ERROR}{p}", _pointer_of(p, expectation.pointer))
                         for p in problems]
        else:
            findings.append(Finding(True, subject, f"{expectation.variant} {expectation.kind} {expectation.expect}",
                                    expectation.pointer))
    # Grading with no runs leaves every well-formed expectation not-graded, so the only
    # errors left are the ones no evidence can fix: comparison pairing and the like.
    grade = grade_group(group, {})
    for error in grade.errors:
        if error.scope == "expectation":
            continue  # reported above with its pointer
        subject = f"{error.scope} {error.owner}" if error.owner else error.scope
        pointer = pointers.get(error.owner or "", "/expectations") if error.scope == "comparison" else "/expectations"
        findings.append(Finding(False, subject, f"{GRADE_ERROR}{error.message}", pointer))
    broken = {e.owner for e in grade.errors if e.scope == "comparison"}
    for comparison in grade.comparisons:
        if comparison.id not in broken:
            findings.append(Finding(True, f"comparison {comparison.id}", f"{comparison.baseline} -> {comparison.candidate}",
                                    pointers.get(comparison.id)))
    return findings


def _pointer_of(problem: str, fallback: str) -> str:
    head = problem.split(": ", 1)[0]
    return head if head.startswith("/") else fallback


def placeholder_findings(group: Group) -> list[Finding]:
    """A warning for every ``[placeholder: …]`` of ``skill-eval init`` still in a prompt."""
    from pytest_skill_eval.scaffold import placeholders

    return [Finding(None, "placeholder", f"{pointer} still holds skill-eval init's {text}: write the request "
                    "as a user would make it (the run sends the placeholder to the model as it is)", pointer,
                    warning=True)
            for pointer, text in placeholders(group.prompts, group.input_kind)]


# -- model and credentials ---------------------------------------------------------------


def model_findings(group: Group, ctx: PreflightContext) -> list[Finding]:
    from pytest_skill_eval.credentials import credential_for, credentialed_providers
    from pytest_skill_eval.host.models import SCRIPTED, ModelRouter
    from pytest_skill_eval.scripted.format import load_script

    inherit = group.runtime.environment.inherit
    if group.model is None:
        subject = "model (omitted)"
        meaning = ("pi's own default, not the scripted stand-in: pi picks a model of a provider it has a "
                   "credential for")
        found = credentialed_providers(inherit, ctx.env, auth_file=ctx.auth_file, user_models=ctx.user_models)
        if not found:
            return [Finding(False, subject, f"{meaning}, and no provider gets a credential here: name the model "
                            "(e.g. \"scripted/<name>\" for the stand-in, or \"<provider>/<model>\"), and add the "
                            "provider's key variable to runtime.environment.inherit or pass --skill-eval-auth FILE",
                            "/model")]
        among = ", ".join(f"{c.provider} ({c.found})" for c in found)
        return [Finding(True, subject, f"{meaning}; here: {among}", "/model")]

    provider, name = group.model.provider, group.model.model_id
    subject = f"model {group.model.model}"
    if provider != SCRIPTED:
        credential = credential_for(provider, inherit, ctx.env, auth_file=ctx.auth_file, user_models=ctx.user_models)
        if credential is None:
            return [Finding(None, subject, f"not checked: pi resolves provider {provider} at run time", "/model/model")]
        if credential.found is None:
            return [Finding(False, subject, f"provider {provider} gets no credential: {credential.fix}", "/model/model")]
        return [Finding(True, subject, f"credential from {credential.found}", "/model/model")]
    router = ModelRouter(ctx.root)
    try:
        path = router.find_script(group, name)
    except ScriptError as exc:
        return [Finding(False, subject, str(exc), "/model/model")]
    try:
        script = load_script(path)
    except ScriptError as exc:
        return [Finding(False, subject, f"script {shown(path, ctx.root)} does not parse: {exc}", "/model/model")]
    turns = len(script.turns)
    return [Finding(True, subject, f"script {shown(path, ctx.root)} parses ({turns} turn{'s' if turns != 1 else ''})",
                    "/model/model")]


def environment_findings(group: Group, ctx: PreflightContext) -> list[Finding]:
    """Inherited variables a run would refuse (missing, or not redactable). Values are never shown."""
    from pytest_skill_eval.sources.isolation import inherit_problems

    if not any(name in ctx.selected for name in VARIANTS):
        return []
    return [Finding(False, f"inherit {group.runtime.environment.inherit[i]}", f"{message} (the variants would be invalid)",
                    f"/runtime/environment/inherit/{i}")
            for i, message in inherit_problems(group, ctx.env)] + _exec_size_findings(group, ctx)


def _exec_size_findings(group: Group, ctx: PreflightContext) -> list[Finding]:
    """The environment a run would hand pi, against this machine's ``ARG_MAX``: over it,
    ``execve`` refuses to start pi (E2BIG) and both variants would be infrastructure-failed."""
    from pytest_skill_eval.execlimits import exec_size
    from pytest_skill_eval.host.launch import arg_max

    environment = group.runtime.environment
    env = {**dict(environment.literal), **{n: ctx.env[n] for n in environment.inherit if n in ctx.env}}
    if not env:
        return []
    size, limit = exec_size([], env), arg_max()
    if size <= limit:
        return []
    return [Finding(False, "environment", f"the literal and inherited variables take {size} bytes, over this machine's "
                    f"ARG_MAX of {limit} (getconf ARG_MAX): the kernel would refuse to start pi (E2BIG) and the "
                    "variants would be infrastructure-failed; put long texts in fixture files", "/runtime/environment")]


# -- sources -------------------------------------------------------------------------------


def source_findings(group: Group, ctx: PreflightContext, scratch: Path) -> list[Finding]:
    """Snapshot the fixture, bundles and each selected variant's skills and context as a run would."""
    from pytest_skill_eval.sources.isolation import (
        RevisionCheck,
        check_description_revision,
        snapshot_bundle,
        snapshot_fixture,
    )

    root = ctx.root
    findings: list[Finding] = []
    if group.fixture is not None:
        try:
            snapshot_fixture(root, group.fixture, scratch / "fixture")
            findings.append(Finding(True, "fixture", group.fixture, "/fixture"))
        except (SkillEvalError, OSError) as exc:
            findings.append(Finding(False, "fixture", f"{exc} (the group would be invalid)", "/fixture"))
    for i, bundle in enumerate(group.runtime.extensions):
        try:
            snapshot_bundle(root, i, bundle, scratch / "bundles" / str(i))
            findings.append(Finding(True, f"extension {i}", bundle.entry, f"/runtime/extensions/{i}"))
        except (SkillEvalError, OSError) as exc:
            findings.append(Finding(False, f"extension {i}", f"{exc} (the group would be invalid)",
                                    f"/runtime/extensions/{i}"))
    sources_ok = True
    for name in VARIANTS:
        if name not in ctx.selected:
            continue
        ok = _variant_findings(group, name, root, scratch / name, findings)
        sources_ok = sources_ok and ok
    if sources_ok and all(name in ctx.selected for name in VARIANTS):
        findings += _identical_findings(group, scratch)
    if sources_ok:
        # a run checks the revision whatever is selected (both targets are snapshotted);
        # a target that cannot be snapshotted is its own variant's problem (reported above
        # when selected), which leaves the rule not checkable rather than broken
        try:
            revision = check_description_revision(group, scratch / "revision-check", root)
        except (SkillEvalError, OSError) as exc:
            revision = RevisionCheck("not-checkable", str(exc))
        if revision is not None and revision.state == "not-checkable":
            findings.append(Finding(None, "description revision", f"not checkable: {revision.reason}", "/variants"))
        elif revision is not None and revision.state == "failed":
            findings.append(Finding(False, "description revision", f"{revision.reason} (the group would be invalid)",
                                    "/variants"))
    return findings


def _identical_findings(group: Group, scratch: Path) -> list[Finding]:
    """A warning when both variants' snapshotted skills and context are byte-identical."""
    from pytest_skill_eval.evidence.trees import fingerprint_tree
    from pytest_skill_eval.sameness import IDENTICAL, identical_advice, identical_inputs

    baseline, candidate = group.baseline, group.candidate
    prints = {name: {".": fingerprint_tree(scratch / name)} for name in VARIANTS}
    if not identical_inputs(prints["baseline"], prints["candidate"], baseline.target, candidate.target):
        return []
    advice = identical_advice(baseline.source.kind, baseline.source.ref, candidate.source.kind)
    return [Finding(None, "identical variants", f"{IDENTICAL}; {advice}", "/variants", warning=True)]


def _variant_findings(group: Group, name: VariantName, root: Path, scratch: Path, findings: list[Finding]) -> bool:
    """Findings of one variant's source, skills and context; False when any is a problem."""
    from pytest_skill_eval.sources.isolation import context_files as read_context
    from pytest_skill_eval.sources.isolation import materialise_skill as snapshot_skill
    from pytest_skill_eval.sources.isolation import open_source as resolve

    variant = group.variant(name)
    base = f"/variants/{name}"
    try:
        copy, identity = resolve(variant, root)
    except (SkillEvalError, OSError) as exc:
        findings.append(Finding(False, f"{name} source", f"{exc} (the variant would be invalid)", f"{base}/source/ref"))
        return False
    if identity.kind == "git":
        findings.append(Finding(True, f"{name} source",
                                f"git ref {identity.ref} resolves to commit {(identity.commit or '')[:12]}",
                                f"{base}/source/ref"))
    ok = True
    for i, rel in enumerate(variant.skills):
        try:
            snapshot_skill(copy, rel, i, scratch / "skills" / str(i) / Path(rel).name, identity.kind)
            findings.append(Finding(True, f"{name} skill {i}", rel, f"{base}/skills/{i}"))
        except (SkillEvalError, OSError) as exc:
            ok = False
            findings.append(Finding(False, f"{name} skill {i}", f"{exc} (the variant would be invalid)", f"{base}/skills/{i}"))
    for i, rel in enumerate(variant.context):
        dest = scratch / "context" / str(i) / Path(rel).name
        try:
            copy(rel, dest)
            read_context([dest])
            findings.append(Finding(True, f"{name} context {i}", rel, f"{base}/context/{i}"))
        except (SkillEvalError, OSError) as exc:
            ok = False
            findings.append(Finding(False, f"{name} context {i}", f"{exc} (the variant would be invalid)",
                                    f"{base}/context/{i}"))
    return ok
