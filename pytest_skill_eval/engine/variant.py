"""Running one variant, in steps: prepare -> plan -> drive -> persist.

    prepare  the variant's skills and context snapshotted from its source, inherited values,
             the provider and the host; a problem ends the variant ``invalid`` or
             ``infrastructure-failed`` before anything starts
    plan     the private agent dir, the configured extensions and the :class:`LaunchPlan`
    drive    pi runs (JSON or RPC mode); turn snapshots and progress as it goes
    persist  every evidence file, redacted, then ``run.json`` (a :class:`RunRecord`) last

Each step takes and returns values; :class:`VariantEvidence` owns the run's evidence
directory and the redaction counts, so nothing else writes into it.
"""

from __future__ import annotations

import json
import os
import shutil
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from pytest_skill_eval.credentials import explain_host_failure
from pytest_skill_eval.definitions.model import Group, Variant, VariantName
from pytest_skill_eval.engine import confine
from pytest_skill_eval.engine.config import GUARD_PREFIX, EngineConfig, VariantOutcome
from pytest_skill_eval.engine.events import EventsFile
from pytest_skill_eval.engine.group_run import GroupRun
from pytest_skill_eval.engine.variant_evidence import VariantEvidence
from pytest_skill_eval.errors import (
    HostError,
    InvalidVariantError,
    LaunchRefusedError,
    ScriptError,
    SourceError,
)
from pytest_skill_eval.evidence import records, store, trees
from pytest_skill_eval.evidence.records import RunRecord
from pytest_skill_eval.grading.kinds import WORKSPACE_KINDS
from pytest_skill_eval.host.driver import HostRun, run_json, run_rpc
from pytest_skill_eval.host.install import HostInstallation, cache_dir
from pytest_skill_eval.host.launch import (
    LaunchPlan,
    allowed_roots_config,
    configured_extension,
    launch_mode,
    write_agent_config,
    write_tool_gate,
)
from pytest_skill_eval.host.protocol import (
    Record,
    build_turn,
    models_used,
    registered_context,
    registered_skills,
    usage_totals,
)
from pytest_skill_eval.scripted.handler import ARM_HEADER
from pytest_skill_eval.scripted.server import PROVIDER as SCRIPTED
from pytest_skill_eval.sources.isolation import (
    GroupSources,
    context_files,
    inherited_values,
    materialise_resources,
)


def _inherited(group: Group, env: Mapping[str, str]) -> dict[str, str]:
    """The inherited variables' values, or :class:`InvalidVariantError` (shared with the pre-run check)."""
    return inherited_values(group, env)


def runtime_echo(group: Group) -> dict[str, Any]:
    """The definition's runtime as ``run.json`` echoes it."""
    runtime = group.runtime
    return {
        "host": runtime.host,
        "session": runtime.session,
        "extensions": [{"entry": b.entry, "resources": list(b.resources)} for b in runtime.extensions],
        "environment": {"literal": dict(runtime.environment.literal), "inherit": list(runtime.environment.inherit)},
    }


@dataclass(frozen=True, slots=True)
class Prepared:
    """A variant whose resources are snapshotted and whose provider and host are known."""

    record: RunRecord
    workspace: Path
    skills: list[Path]
    contexts: list[Path]
    contexts_text: list[dict[str, str]]
    inherited: dict[str, str]
    provider: str | None
    model: str | None
    providers: dict[str, Any]
    host: HostInstallation


@dataclass(frozen=True, slots=True)
class Planned:
    """A variant ready to launch: the plan and what the run is checked against afterwards."""

    prepared: Prepared
    plan: LaunchPlan
    target_file: Path | None
    resources: list[Path]
    before: dict[str, dict[str, str]]
    gate_dir: Path
    observer_out: Path | None
    session_dir: Path | None
    provider_timeout_s: float
    #: how the kernel confined the run, as ``run.json`` records it
    confinement: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Driven:
    """What driving pi produced: the observed run, a delivery veto, when it started."""

    run: HostRun
    veto: str | None
    started: float


def run_variant(run: GroupRun, name: VariantName, trial: int) -> VariantOutcome:
    """Run variant *name* of trial *trial* through its steps; its evidence is on disk when this
    returns or raises.

    What the variant gets (its initial workspace, skills, context, bundles and script) is
    stored in the result's object store as it gets it, before pi starts.
    """
    group, cfg, shared = run.group, run.cfg, run.shared
    variant, run_dir, base = group.variant(name), run.run_dir(trial, name), run.base(trial, name)
    cfg.progress(f"{group.id} [{name}] preparing")
    evidence = VariantEvidence(run_dir, run.redactor, result_dir=cfg.result_dir, snapshots=shared.snapshots)
    workspace = base / "workspace"
    shutil.copytree(shared.fixture, workspace)
    evidence.store_snapshot_inputs("workspace-initial", "workspace", evidence.snapshot(workspace, "workspace-initial"))
    start = RunRecord(variant=name, group=group.id, state="invalid", reason=None, runtime=runtime_echo(group))
    prepared = prepare(group, variant, base, cfg, start, shared.sources)
    evidence.store_inputs(base, "resources")
    if isinstance(prepared, RunRecord):
        return evidence.finish(prepared)
    _store_script(group, cfg, evidence)
    planned = plan_launch(group, variant, prepared, shared.bundles, base, cfg, trial)
    evidence.store_inputs(base, "extensions")
    if isinstance(planned, RunRecord):
        return evidence.finish(planned)
    if cfg.cancel is not None and cfg.cancel.is_set():
        raise KeyboardInterrupt  # cancelled while preparing: the subject does not start
    events = EventsFile(base, run_dir, run.redactor)
    try:
        driven = drive(group, name, planned, cfg, evidence, sink=events)
        outcome = evidence.finish(persist(group, planned, driven, evidence, events))
    finally:
        events.discard()
    if driven.run.outcome == "cancelled":
        raise KeyboardInterrupt  # evidence is safe on disk; no queued subject may start
    return outcome


def _store_script(group: Group, cfg: EngineConfig, evidence: VariantEvidence) -> None:
    """The scripted stand-in's script of a scripted group, into the object store."""
    if group.model is None:
        return
    path = cfg.models.script_path(group)  # None: the backend runs no script for this group
    if path is not None:
        evidence.store_script(group.model.model, path, cfg.models.script_origin(path))


def prepare(group: Group, variant: Variant, base: Path, cfg: EngineConfig, start: RunRecord,
            sources: GroupSources | None = None) -> Prepared | RunRecord:
    """Snapshot the variant's resources and resolve what it runs with, or the record of why not."""
    record = start
    try:
        skills, contexts, source = materialise_resources(variant, base, cfg.root, sources)
        record = replace(record, source=records.SourceRecord.from_json(source))
        inherited = _inherited(group, cfg.env)
        contexts_text = context_files(contexts)
        provider, model_id, providers = cfg.models.providers_for(group)
        host = _select_host(group.runtime.host, cfg)
    except (InvalidVariantError, SourceError, ScriptError) as exc:
        return replace(record, reason=str(exc))
    except HostError as exc:
        return replace(record, state="infrastructure-failed", reason=str(exc))
    return Prepared(record, base / "workspace", skills, contexts, contexts_text, inherited, provider, model_id,
                    providers, host)


def plan_launch(group: Group, variant: Variant, prepared: Prepared, bundles: Path, base: Path,
                cfg: EngineConfig, trial: int = 1) -> Planned | RunRecord:
    """Write the private agent dir and the configured extensions; build the launch plan."""
    workspace, agent_dir, home = prepared.workspace, base / "agent", base / "home"
    skills, contexts = prepared.skills, prepared.contexts
    target_file = skills[variant.target] / "SKILL.md" if variant.target is not None else None
    extension_root = base / "extensions"
    if bundles.exists():
        shutil.copytree(bundles, extension_root)
    bundle_entries = [extension_root / str(i) / b.entry for i, b in enumerate(group.runtime.extensions)]
    resources = skills + contexts + ([extension_root] if bundles.exists() else [])
    before = {str(p): trees.fingerprint_tree(p) for p in resources}
    observe = any(e.kind == "context-text" for e in group.expectations)
    observer_out = base / "observations.jsonl"
    # configuration is inlined into per-variant copies of the extensions, outside the workspace
    host_ext = base / "host-extensions"
    private = [os.path.realpath(p) for p in (host_ext, agent_dir, home, observer_out)]
    guard_config = {**allowed_roots_config(workspace, skills + contexts), "deny": private,
                    "context": prepared.contexts_text}
    write_agent_config(agent_dir, home, _with_arm(prepared.providers, f"{group.id}/{variant.name}/{trial}"),
                       user_models=cfg.user_models, auth_file=cfg.auth_file, provider_timeout_s=cfg.provider_timeout_s)
    session_dir = base / "session" if group.runtime.session else None
    try:
        gate = write_tool_gate(host_ext, group.tools)
        guard = [configured_extension("guard.mjs", host_ext, guard_config)] if cfg.confinement.guard else []
        extensions = [*guard, gate, *bundle_entries]
        if observe:
            extensions.append(configured_extension("observer.mjs", host_ext, {"out": str(observer_out)}))
        host = prepared.host
        compile_cache = None if os.environ.get("SKILL_EVAL_NO_COMPILE_CACHE") else cache_dir() / "node-compile-cache" / host.version
        confined = confine.launch(cfg.confinement, base, prepared.workspace, skills, contexts,
                                  extension_root if bundles.exists() else None, session_dir,
                                  [gate.parent / "active-tools.jsonl", *([observer_out] if observe else [])],
                                  host, compile_cache, confine.model_endpoints(
                                      prepared.provider, confine.merged_providers(prepared.providers, cfg.user_models)))
        plan = LaunchPlan(
            host=host,
            mode=launch_mode(group.type == "description", group.prompts),
            workspace=workspace,
            agent_dir=agent_dir,
            home=home,
            skills=tuple(skills),
            extensions=tuple(extensions),
            tools=group.tools,
            provider=prepared.provider,
            model=prepared.model,
            thinking=group.model.thinking if group.model else None,
            session_dir=session_dir,
            prompts=group.prompts,
            literal_env=group.runtime.environment.literal,
            inherited_env=prepared.inherited,
            compile_cache=compile_cache,
            wrapper=confined.wrapper,
        ).fitted()  # a prompt too large for argv goes over RPC
    except LaunchRefusedError as exc:
        return replace(prepared.record, reason=f"launch refused: {exc}")
    except HostError as exc:  # confinement required but not available
        return replace(prepared.record, state="infrastructure-failed", reason=str(exc),
                       confinement={"mechanism": "none", "mode": cfg.confinement.mode, "reason": str(exc)})
    return Planned(prepared, plan, target_file, resources, before, gate.parent, observer_out if observe else None,
                   session_dir, cfg.provider_timeout_s, confined.record)


def _with_arm(providers: dict[str, Any], arm: str) -> dict[str, Any]:
    """The scripted provider's entry with the arm header its weighted alternatives are keyed on."""
    if SCRIPTED not in providers:
        return providers
    return {**providers, SCRIPTED: {**providers[SCRIPTED], "headers": {ARM_HEADER: arm}}}


def drive(group: Group, name: VariantName, planned: Planned, cfg: EngineConfig,
          evidence: VariantEvidence, *, sink: EventsFile) -> Driven:
    """Run pi; after each settled turn, snapshot the workspace when a check is turn-scoped.

    Every record goes to *sink* (``events.jsonl``) as it arrives, and the run keeps one
    slim form of each (see :mod:`pytest_skill_eval.host.driver`).
    """
    plan, workspace = planned.plan, planned.prepared.workspace
    turn_scoped = any(e.turn is not None and e.variant == name and e.kind in WORKSPACE_KINDS for e in group.expectations)
    live = {"turn": 1, "calls": 0}

    def after_turn(index: int) -> None:
        if turn_scoped:
            evidence.snapshot(workspace, f"turns/{index}/workspace")
        cfg.progress(f"{group.id} [{name}] turn {index}/{len(group.prompts)} settled")

    def watch(rec: Record) -> None:
        data = rec.data or {}
        if data.get("type") == "tool_execution_start":
            live["calls"] += 1
            cfg.progress(f"{group.id} [{name}] turn {live['turn']}/{len(group.prompts)}: "
                         f"{live['calls']} tool call(s) so far, now {data.get('toolName')}")
        elif data.get("type") == "agent_settled":
            live["turn"], live["calls"] = live["turn"] + 1, 0

    cfg.progress(f"{group.id} [{name}] running pi ({plan.mode} mode)")
    started = time.time()
    veto: list[str] = []
    if plan.mode == "json":
        run = run_json(plan, cfg.safeguards, observe=watch, cancel=cfg.cancel, sink=sink)
        if run.outcome == "complete":
            after_turn(1)
        return Driven(run, None, started)
    sent = list(group.prompts)
    target_file = planned.target_file

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

    run = run_rpc(plan, sent, cfg.safeguards, before_first_turn=deliver, after_turn=after_turn, observe=watch,
                  cancel=cfg.cancel, sink=sink)
    return Driven(run, veto[0] if veto else None, started)


def persist(group: Group, planned: Planned, driven: Driven, evidence: VariantEvidence,
            events: EventsFile) -> RunRecord:
    """Persist one run's evidence and return its record; every secret is redacted before
    anything is serialised.

    Host output is redacted on its decoded strings (events per record, streamed deltas over
    their assembled block), JSON values recursively; workspace files byte-wise as they are
    copied. Each file that held a secret is listed with its count in ``run.json``
    ``redactions``. ``events.jsonl`` is *events*' file, written as pi ran, moved into place
    here.
    """
    plan, run, prepared = planned.plan, driven.run, planned.prepared
    active = _active_tools(planned.gate_dir / "active-tools.jsonl")
    mismatch = [a for a in active if sorted(a) != sorted(group.tools)]
    state: records.RunState = "invalid"
    reason: str | None = None
    if driven.veto:
        reason = driven.veto
    elif mismatch:
        reason = f"the host registered tools {sorted(mismatch[0])} but the group declares {sorted(group.tools)}"
    if planned.observer_out is not None:
        _persist_observations(planned.observer_out, evidence)
    if planned.session_dir is not None and planned.session_dir.exists():
        evidence.snapshot(planned.session_dir, "session")
    turns = [build_turn(span, run.records, (GUARD_PREFIX,)) for span in run.spans]
    after = {str(p): trees.fingerprint_tree(p) for p in planned.resources}
    changed = sorted(p for p in planned.before if planned.before[p] != after.get(p))
    if reason is None:
        # pi's "/login" advice does not work here: the reason names the fix that does
        state = run.outcome
        reason = explain_host_failure(run.failure, bytes(run.stderr).decode("utf-8", "replace"))
        if run.outcome == "complete" and changed:
            state = "invalid"
            reason = "declared resources changed during the run: " + ", ".join(changed)
    evidence.count("events.jsonl", events.commit())
    stderr, n = evidence.redactor.stream_text(bytes(run.stderr))
    evidence.count("stderr.txt", n)
    store.write_atomic(evidence.run_dir / "stderr.txt", stderr, sync_dir=False)
    times = [*run.turn_times, *[(None, None)] * len(turns)]
    transcript = records.TranscriptRecord(tuple(
        records.TranscriptTurn(turn, usage_totals(run.records, span.start, span.end),
                               started, ended, (span.start, span.end))
        for span, turn, (started, ended) in zip(run.spans, turns, times, strict=False)
    ))
    evidence.write_record("transcript.json", transcript)
    evidence.write_text("final-response.txt", turns[-1].response if turns else "")
    evidence.write_record("fingerprints.json", records.FingerprintsRecord(planned.before, after))
    evidence.snapshot(prepared.workspace, "workspace")
    ran = records.HostRunRecord(
        registered_tools=tuple(tuple(a) for a in active),
        context_files=tuple(c["path"] for c in prepared.contexts_text),
        host=plan.host.to_json(),
        mode=plan.mode,
        model=_model_record(plan, models_used(run.records)),
        argv=tuple(plan.argv()),
        env=plan.redacted_env(),
        tools=tuple(plan.tools),
        registered_skills=registered_skills(run.records, run.commands),
        registered_context=tuple(registered_context(run.records)),
        returncode=run.returncode,
        started_at=run.started_at or driven.started,
        ended_at=run.ended_at or time.time(),
        turn_times=tuple(run.turn_times),
        usage=usage_totals(run.records),
        fingerprints_changed=tuple(changed), no_progress=run.no_progress,
        provider_timeout_s=planned.provider_timeout_s,
    )
    paths = records.RunPaths(str(prepared.workspace), tuple(str(s) for s in prepared.skills),
                             str(planned.target_file) if planned.target_file else None,
                             tuple(str(c) for c in prepared.contexts))
    return replace(prepared.record, state=state, reason=reason, paths=paths, ran=ran,
                   confinement=planned.confinement or None)


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


def _select_host(name: str, cfg: EngineConfig) -> HostInstallation:
    """Map the runtime's ``host`` to an installed host command."""
    if name == "pi":
        return cfg.host()
    from pytest_skill_eval.host.install import from_explicit

    location = cfg.piflow or os.environ.get("SKILL_EVAL_PIFLOW") or shutil.which("piflow")
    if not location:
        raise HostError(
            "host 'piflow' is not installed: looked for the command `piflow` on PATH "
            "(point --skill-eval-piflow or SKILL_EVAL_PIFLOW at it)"
        )
    return from_explicit(location)


def _model_record(plan: LaunchPlan, used: Sequence[Mapping[str, str]]) -> records.ModelRecord:
    """The model the run used: pi's own answer when it chose (an omitted ``model``)."""
    declared = f"{plan.provider}/{plan.model}" if plan.provider else None
    first = used[0] if used else {"provider": plan.provider, "model": plan.model}
    return records.ModelRecord(first["provider"], first["model"], plan.thinking, declared, tuple(used))


def _active_tools(source: Path) -> list[list[str]]:
    """The tool sets pi had active before each model request, as the tool gate recorded them."""
    if not source.exists():
        return []
    return [list(json.loads(line)["active"]) for line in source.read_text(encoding="utf-8").splitlines() if line]


def _persist_observations(source: Path, evidence: VariantEvidence) -> None:
    """The observer's per-request records, as grading reads them (system prompt per request)."""
    requests = []
    if source.exists():
        for line in source.read_text(encoding="utf-8").splitlines():
            item = json.loads(line)
            if item.get("kind") == "request":
                requests.append({k: item[k] for k in ("turn", "request", "system_prompt", "provider_context")})
    # stored as the observer wrote them (the shape ``ContextObservations`` reads), redacted
    evidence.write_json("context-observations.json", requests, sync_dir=True)
