"""Running one group: fixture, variants in order, persistence, grading.

The engine is the imperative shell shared by the pytest items and ``skill-eval run``.
Order is the spec's: each selected run is persisted before its counterpart starts;
grade and group evidence are persisted before the caller moves to the next group.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping

from . import evidence
from .definitions import VARIANTS, Group, Variant, VariantName
from .errors import HostError, ScriptError, SkillEvalError, SourceError
from .host.driver import HostRun, Safeguards, run_json, run_rpc
from .host.install import HostInstallation
from .host.launch import LaunchPlan, allowed_roots_config, bundled_extension, write_agent_config
from .host.protocol import build_turn, registered_skills, turn_to_json, usage_totals

GUARD_PREFIX = "skill-eval guard blocked"
Progress = Callable[[str], None]


class ModelBackend:
    """Chooses the provider for a group and supplies its ``models.json`` entries."""

    def providers_for(self, group: Group) -> tuple[str, str, dict[str, Any]]:  # pragma: no cover - protocol
        raise NotImplementedError


@dataclass(slots=True)
class EngineConfig:
    root: Path
    result_dir: Path
    host: Callable[[], HostInstallation]
    models: ModelBackend
    selected: frozenset[str] = frozenset(VARIANTS)
    safeguards: Safeguards = Safeguards()
    user_models: Path | None = None
    auth_file: Path | None = None
    progress: Progress = lambda _msg: None
    env: Mapping[str, str] = field(default_factory=lambda: dict(os.environ))


@dataclass(frozen=True, slots=True)
class VariantOutcome:
    variant: VariantName
    state: str
    reason: str | None
    run_dir: Path


@dataclass(frozen=True, slots=True)
class GroupOutcome:
    group: Group
    position: int
    state: str
    group_dir: Path
    variants: Mapping[str, VariantOutcome]
    grade: Any  # grading.GroupGrade


class _Invalid(SkillEvalError):
    """The variant cannot be run as declared (state ``invalid``)."""


def run_group(group: Group, position: int, cfg: EngineConfig) -> GroupOutcome:
    """Run the selected variants of *group*, persist everything, grade, persist the grade."""
    from .grading import grade_group

    group_dir = cfg.result_dir / "groups" / evidence.group_dir_name(position, group.id)
    evidence.write_json(group_dir / "definition.json", {"path": str(group.path), "definition": group.raw})
    scratch = Path(tempfile.mkdtemp(prefix="skill-eval-"))
    outcomes: dict[str, VariantOutcome] = {}
    try:
        fixture_error: str | None = None
        fixture = scratch / "fixture"
        fixture.mkdir()
        if group.fixture is not None:
            try:
                _snapshot_fixture(cfg.root, group.fixture, fixture)
            except (SkillEvalError, OSError) as exc:
                fixture_error = f"fixture {group.fixture!r}: {exc}"
        for name in VARIANTS:
            run_dir = group_dir / name
            if name not in cfg.selected:
                outcomes[name] = _persist_state(run_dir, group, name, "not-selected", "excluded by variant selection")
            elif fixture_error is not None:
                outcomes[name] = _persist_state(run_dir, group, name, "invalid", fixture_error)
            else:
                outcomes[name] = _run_variant(group, group.variant(name), fixture, scratch / name, run_dir, cfg)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    observations = {
        name: evidence.load_observation(group_dir / name)
        for name in VARIANTS
        if (group_dir / name / "run.json").exists()
    }
    grade = grade_group(group, observations)
    evidence.write_json(group_dir / "grade.json", grade.to_json())
    state = group_state([o.state for o in outcomes.values()], fixture_failed=fixture_error is not None)
    evidence.write_json(
        group_dir / "group.json",
        {
            "id": group.id,
            "position": position,
            "path": str(group.path),
            "type": group.type,
            "state": state,
            "grade_state": grade.state,
            "variants": {n: {"state": o.state, "reason": o.reason} for n, o in outcomes.items()},
            "review_questions": list(group.review_questions),
        },
    )
    return GroupOutcome(group, position, state, group_dir, outcomes, grade)


def group_state(states: Iterable[str], *, fixture_failed: bool = False) -> str:
    """Group state from its run states (spec: complete, partially-complete, invalid, cancelled)."""
    states = list(states)
    if "cancelled" in states:
        return "cancelled"
    if fixture_failed:
        return "invalid"
    selected = [s for s in states if s != "not-selected"]
    if selected and all(s == "invalid" for s in selected):
        return "invalid"
    if all(s == "complete" for s in selected):
        return "complete"
    return "partially-complete"


def _snapshot_fixture(root: Path, rel: str, dest: Path) -> None:
    from .sources import copy_working_tree

    src = root / rel
    if src.is_file() or (src.is_symlink() and src.resolve().is_file()):
        copy_working_tree(root, rel, dest / Path(rel).name)
    else:
        copy_working_tree(root, rel, dest)


def _persist_state(run_dir: Path, group: Group, name: VariantName, state: str, reason: str) -> VariantOutcome:
    evidence.write_json(
        run_dir / "run.json",
        {"variant": name, "group": group.id, "state": state, "reason": reason, "paths": {}},
    )
    return VariantOutcome(name, state, reason, run_dir)


def _materialise_resources(group: Group, variant: Variant, base: Path, cfg: EngineConfig) -> tuple[list[Path], list[Path], dict[str, Any]]:
    from .sources import GitSource, SourceIdentity, copy_working_tree

    skills_dir, context_dir = base / "resources" / "skills", base / "resources" / "context"
    if variant.source.kind == "git":
        git = GitSource(cfg.root, variant.source.ref or "")
        identity = git.identity(cfg.root)
        copy: Callable[[str, Path], None] = git.copy
    else:
        identity = SourceIdentity("working-tree", None, None, str(cfg.root))

        def copy(rel: str, dest: Path) -> None:
            copy_working_tree(cfg.root, rel, dest)

    skills: list[Path] = []
    for i, rel in enumerate(variant.skills):
        dest = skills_dir / str(i) / Path(rel).name
        copy(rel, dest)
        if not (dest / "SKILL.md").is_file():
            raise _Invalid(f"skill {rel!r} (index {i}) has no SKILL.md in its {identity.kind} source")
        skills.append(dest)
    contexts: list[Path] = []
    for i, rel in enumerate(variant.context):
        dest = context_dir / str(i) / Path(rel).name
        copy(rel, dest)
        contexts.append(dest)
    return skills, contexts, identity.to_json()


def _run_variant(group: Group, variant: Variant, fixture: Path, base: Path, run_dir: Path, cfg: EngineConfig) -> VariantOutcome:
    name = variant.name
    cfg.progress(f"{group.id} [{name}] preparing")
    workspace, agent_dir, home = base / "workspace", base / "agent", base / "home"
    shutil.copytree(fixture, workspace)
    evidence.copy_tree_atomic(workspace, run_dir / "workspace-initial")
    record: dict[str, Any] = {"variant": name, "group": group.id, "state": "invalid", "reason": None, "paths": {}}
    try:
        skills, contexts, source = _materialise_resources(group, variant, base, cfg)
        record["source"] = source
        missing = [n for n in group.runtime.environment.inherit if n not in cfg.env]
        if missing:
            raise _Invalid(f"inherited environment variable(s) not set: {', '.join(missing)}")
        inherited = {n: cfg.env[n] for n in group.runtime.environment.inherit}
        provider, model_id, providers = cfg.models.providers_for(group)
        host = cfg.host()
    except (_Invalid, SourceError, ScriptError) as exc:
        record["reason"] = str(exc)
        evidence.write_json(run_dir / "run.json", record)
        return VariantOutcome(name, "invalid", str(exc), run_dir)
    except HostError as exc:
        record.update(state="infrastructure-failed", reason=str(exc))
        evidence.write_json(run_dir / "run.json", record)
        return VariantOutcome(name, "infrastructure-failed", str(exc), run_dir)

    target_file = skills[variant.target] / "SKILL.md" if variant.target is not None else None
    resources = skills + contexts
    before = {str(p): evidence.fingerprint_tree(p) for p in resources}
    guard_config = base / "guard.json"
    evidence.write_json(guard_config, allowed_roots_config(workspace, resources))
    write_agent_config(agent_dir, home, providers, user_models=cfg.user_models, auth_file=cfg.auth_file)
    session_dir = base / "session" if group.runtime.session else None
    plan = LaunchPlan(
        host=host,
        mode="json" if group.type == "description" and group.input_kind == "prompt" else "rpc",
        workspace=workspace,
        agent_dir=agent_dir,
        home=home,
        skills=tuple(skills),
        extensions=(bundled_extension("guard.mjs"),),
        tools=group.tools,
        provider=provider,
        model=model_id,
        thinking=group.model.thinking if group.model else None,
        session_dir=session_dir,
        prompts=group.prompts,
        literal_env=group.runtime.environment.literal,
        inherited_env=inherited,
        extra_env=(("SKILL_EVAL_GUARD_CONFIG", str(guard_config)),),
    )
    turn_scoped = any(e.turn is not None and e.variant == name for e in group.expectations)

    def after_turn(index: int) -> None:
        if turn_scoped:
            evidence.copy_tree_atomic(workspace, run_dir / "turns" / str(index) / "workspace")
        cfg.progress(f"{group.id} [{name}] turn {index}/{len(group.prompts)} settled")

    cfg.progress(f"{group.id} [{name}] running pi ({plan.mode} mode)")
    started = time.time()
    veto: list[str] = []
    if plan.mode == "json":
        run = run_json(plan, cfg.safeguards)
        if turn_scoped and run.outcome == "complete":
            after_turn(1)
    else:
        sent = list(group.prompts)

        def deliver(commands: list[dict[str, Any]]) -> str | None:
            # body groups: explicit delivery of the exact snapshotted target on turn one
            if group.type != "body" or target_file is None:
                return None
            skill_name, problem = resolve_skill_command(commands, target_file)
            if problem:
                veto.append(problem)
                return problem
            sent[0] = f"/skill:{skill_name} {group.prompts[0]}"
            return None

        run = run_rpc(plan, sent, cfg.safeguards, before_first_turn=deliver, after_turn=after_turn)
    if veto:
        record.update(state="invalid", reason=veto[0])
    _persist_run(plan, run, record, before, resources, target_file, contexts, skills, workspace, run_dir, started, inherited)
    if run.outcome == "cancelled":
        raise KeyboardInterrupt  # evidence is safe on disk; no queued subject may start
    return VariantOutcome(name, record["state"], record["reason"], run_dir)


def resolve_skill_command(commands: list[dict[str, Any]], target_file: Path) -> tuple[str | None, str | None]:
    """The ``/skill:<name>`` command pi registered for exactly *target_file*, or a problem."""
    target = os.path.realpath(target_file)
    skill_commands = [c for c in commands if c.get("source") == "skill"]
    matches = [c for c in skill_commands if os.path.realpath(str((c.get("sourceInfo") or {}).get("path", ""))) == target]
    if not matches:
        listed = ", ".join(f"{c.get('name')} -> {(c.get('sourceInfo') or {}).get('path')}" for c in skill_commands) or "none"
        return None, f"the host registered no skill command for the target {target} (registered: {listed})"
    name = str(matches[0]["name"]).removeprefix("skill:")
    same_name = [c for c in skill_commands if str(c.get("name")).removeprefix("skill:") == name]
    if len(same_name) > 1:
        return None, f"skill name {name!r} of the target collides with another registered skill"
    return name, None


def _persist_run(plan: LaunchPlan, run: HostRun, record: dict[str, Any], before: dict[str, dict[str, str]],
                 resources: list[Path], target_file: Path | None, contexts: list[Path], skills: list[Path],
                 workspace: Path, run_dir: Path, started: float, inherited: Mapping[str, str]) -> None:
    """Persist one run's evidence; secrets (inherited values) are redacted from every byte."""
    redact = _redactor(inherited.values())
    turns = [build_turn(span, run.records, (GUARD_PREFIX,)) for span in run.spans]
    after = {str(p): evidence.fingerprint_tree(p) for p in resources}
    changed = sorted(p for p in before if before[p] != after.get(p))
    if record["reason"] is None:
        record["state"], record["reason"] = run.outcome, run.failure
        if run.outcome == "complete" and changed:
            record["state"] = "invalid"
            record["reason"] = "declared resources changed during the run: " + ", ".join(changed)
    record.update(
        host=plan.host.to_json(),
        mode=plan.mode,
        model={"provider": plan.provider, "model": plan.model, "thinking": plan.thinking},
        argv=plan.argv(),
        env=plan.redacted_env(),
        tools=list(plan.tools),
        paths={
            "workspace": str(workspace),
            "skills": [str(s) for s in skills],
            "target_file": str(target_file) if target_file else None,
            "context": [str(c) for c in contexts],
        },
        registered_skills=registered_skills(run.records, run.commands),
        returncode=run.returncode,
        started_at=run.started_at or started,
        ended_at=run.ended_at or time.time(),
        turn_times=run.turn_times,
        usage=usage_totals(run.records),
        fingerprints_changed=changed,
    )
    evidence.write_atomic(run_dir / "events.jsonl", redact(run.raw_events()))
    evidence.write_atomic(run_dir / "stderr.txt", redact(bytes(run.stderr)))
    evidence.write_atomic(run_dir / "transcript.json", redact(evidence.dump_json({"turns": [turn_to_json(t) for t in turns]})))
    evidence.write_atomic(run_dir / "final-response.txt", redact((turns[-1].response if turns else "").encode("utf-8")))
    evidence.write_json(run_dir / "fingerprints.json", {"before": before, "after": after})
    evidence.copy_tree_atomic(workspace, run_dir / "workspace")
    if inherited:
        _redact_tree(run_dir, redact)
    evidence.write_atomic(run_dir / "run.json", redact(evidence.dump_json(record)))


def _redactor(values: Iterable[str]) -> Callable[[bytes], bytes]:
    secrets = sorted({v.encode("utf-8") for v in values if v}, key=len, reverse=True)

    def redact(data: bytes) -> bytes:
        for secret in secrets:
            data = data.replace(secret, b"<redacted>")
        return data

    return redact


def _redact_tree(root: Path, redact: Callable[[bytes], bytes]) -> None:
    for dirpath, _dirs, files in os.walk(root):
        for fname in files:
            path = Path(dirpath) / fname
            data = path.read_bytes()
            clean = redact(data)
            if clean != data:
                evidence.write_atomic(path, clean)
