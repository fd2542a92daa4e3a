"""Running one variant: its sources, its launch, the host run, and its persisted evidence."""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, cast

from pytest_skill_eval.credentials import explain_host_failure
from pytest_skill_eval.definitions.model import Group, Variant, VariantName
from pytest_skill_eval.engine.config import GUARD_PREFIX, EngineConfig, VariantOutcome
from pytest_skill_eval.errors import (
    HostError,
    InvalidVariant,
    LaunchRefused,
    ScriptError,
    SourceError,
)
from pytest_skill_eval.evidence import records, store
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
    build_turn,
    models_used,
    registered_context,
    registered_skills,
    turn_to_json,
    usage_totals,
)
from pytest_skill_eval.sources.isolation import (
    context_files,
    inherited_values,
    materialise_resources,
)
from pytest_skill_eval.sources.redaction import Redactor, redact_events


def _inherited(group: Group, env: Mapping[str, str]) -> dict[str, str]:
    """The inherited variables' values, or :class:`InvalidVariant` (shared with the pre-run check)."""
    return inherited_values(group, env)


def _persist_state(run_dir: Path, group: Group, name: VariantName, state: str, reason: str) -> VariantOutcome:
    record = records.RunRecord(variant=name, group=group.id, state=cast(records.RunState, state), reason=reason)
    store.write_json(run_dir / "run.json", record.to_json())
    return VariantOutcome(name, state, reason, run_dir)


def _run_variant(group: Group, variant: Variant, fixture: Path, bundles: Path, base: Path, run_dir: Path, cfg: EngineConfig,
                 redactor: Redactor) -> VariantOutcome:
    name = variant.name
    cfg.progress(f"{group.id} [{name}] preparing")
    workspace, agent_dir, home = base / "workspace", base / "agent", base / "home"
    shutil.copytree(fixture, workspace)
    redactions: dict[str, int] = {}

    def snapshot(src: Path, rel: str) -> None:
        """A workspace or session copy into evidence, each file redacted as it is written."""
        counts = store.copy_tree_atomic(src, run_dir / rel, redactor.data if redactor.active else None)
        redactions.update({f"{rel}/{k}": v for k, v in counts.items()})

    def write_record(value: dict[str, Any]) -> None:
        if redactions:
            value["redactions"] = dict(sorted(redactions.items()))
        store.write_json(run_dir / "run.json", redactor.json(value)[0])

    snapshot(workspace, "workspace-initial")
    record: dict[str, Any] = {
        "variant": name, "group": group.id, "state": "invalid", "reason": None, "paths": {},
        "runtime": {
            "host": group.runtime.host,
            "session": group.runtime.session,
            "extensions": [{"entry": b.entry, "resources": list(b.resources)} for b in group.runtime.extensions],
            "environment": {"literal": dict(group.runtime.environment.literal), "inherit": list(group.runtime.environment.inherit)},
        },
    }
    try:
        skills, contexts, source = materialise_resources(variant, base, cfg.root)
        record["source"] = source
        inherited = _inherited(group, cfg.env)
        contexts_text = context_files(contexts)
        provider, model_id, providers = cfg.models.providers_for(group)
        host = _select_host(group.runtime.host, cfg)
    except (InvalidVariant, SourceError, ScriptError) as exc:
        record["reason"] = str(exc)
        write_record(record)
        return VariantOutcome(name, "invalid", str(exc), run_dir)
    except HostError as exc:
        record.update(state="infrastructure-failed", reason=str(exc))
        write_record(record)
        return VariantOutcome(name, "infrastructure-failed", str(exc), run_dir)

    target_file = skills[variant.target] / "SKILL.md" if variant.target is not None else None
    extension_root = base / "extensions"
    if bundles.exists():
        shutil.copytree(bundles, extension_root)
    bundle_entries = [extension_root / str(i) / b.entry for i, b in enumerate(group.runtime.extensions)]
    resources = skills + contexts + ([extension_root] if bundles.exists() else [])
    before = {str(p): store.fingerprint_tree(p) for p in resources}
    observe = any(e.kind == "context-text" for e in group.expectations)
    observer_out = base / "observations.jsonl"
    # configuration is inlined into per-variant copies of the extensions, outside the workspace
    host_ext = base / "host-extensions"
    private = [os.path.realpath(p) for p in (host_ext, agent_dir, home, observer_out)]
    guard_config = {**allowed_roots_config(workspace, skills + contexts), "deny": private, "context": contexts_text}
    write_agent_config(agent_dir, home, providers, user_models=cfg.user_models, auth_file=cfg.auth_file)
    session_dir = base / "session" if group.runtime.session else None
    try:
        gate = write_tool_gate(host_ext, group.tools)
        extensions = [configured_extension("guard.mjs", host_ext, guard_config), gate, *bundle_entries]
        if observe:
            extensions.append(configured_extension("observer.mjs", host_ext, {"out": str(observer_out)}))
        plan = LaunchPlan(
            host=host,
            mode=launch_mode(group.type == "description", group.prompts),
            workspace=workspace,
            agent_dir=agent_dir,
            home=home,
            skills=tuple(skills),
            extensions=tuple(extensions),
            tools=group.tools,
            provider=provider,
            model=model_id,
            thinking=group.model.thinking if group.model else None,
            session_dir=session_dir,
            prompts=group.prompts,
            literal_env=group.runtime.environment.literal,
            inherited_env=inherited,
            compile_cache=None if os.environ.get("SKILL_EVAL_NO_COMPILE_CACHE") else cache_dir() / "node-compile-cache" / host.version,
        )
    except LaunchRefused as exc:
        record["reason"] = f"launch refused: {exc}"
        write_record(record)
        return VariantOutcome(name, "invalid", record["reason"], run_dir)
    turn_scoped = any(e.turn is not None and e.variant == name and e.kind in WORKSPACE_KINDS for e in group.expectations)

    live = {"turn": 1, "calls": 0}

    def after_turn(index: int) -> None:
        if turn_scoped:
            snapshot(workspace, f"turns/{index}/workspace")
        cfg.progress(f"{group.id} [{name}] turn {index}/{len(group.prompts)} settled")

    def watch(rec: Any) -> None:
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
        run = run_json(plan, cfg.safeguards, observe=watch)
        if run.outcome == "complete":
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

        run = run_rpc(plan, sent, cfg.safeguards, before_first_turn=deliver, after_turn=after_turn, observe=watch)
    active = _active_tools(gate.parent / "active-tools.jsonl")
    record["registered_tools"] = active
    mismatch = [a for a in active if sorted(a) != sorted(group.tools)]
    if veto:
        record.update(state="invalid", reason=veto[0])
    elif mismatch:
        record.update(state="invalid", reason=f"the host registered tools {sorted(mismatch[0])} but the group declares {sorted(group.tools)}")
    if observe:
        _persist_observations(observer_out, run_dir / "context-observations.json", redactor, redactions)
    if session_dir is not None and session_dir.exists():
        snapshot(session_dir, "session")
    record["context_files"] = [c["path"] for c in contexts_text]
    _persist_run(plan, run, record, before, resources, target_file, contexts, skills, workspace, run_dir, started,
                 redactor, snapshot, write_record, redactions)
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


def _persist_run(plan: LaunchPlan, run: HostRun, record: dict[str, Any], before: dict[str, dict[str, str]],
                 resources: list[Path], target_file: Path | None, contexts: list[Path], skills: list[Path],
                 workspace: Path, run_dir: Path, started: float, redactor: Redactor,
                 snapshot: Callable[[Path, str], None], write_record: Callable[[dict[str, Any]], None],
                 redactions: dict[str, int]) -> None:
    """Persist one run's evidence; every secret is redacted before anything is serialised.

    Host output is redacted on its decoded strings (events per record, streamed deltas over
    their assembled block), JSON values recursively; workspace files byte-wise as they are
    copied. Each file that held a secret is listed with its count in ``run.json``
    ``redactions``.
    """

    def count(rel: str, n: int) -> None:
        if n:
            redactions[rel] = redactions.get(rel, 0) + n

    turns = [build_turn(span, run.records, (GUARD_PREFIX,)) for span in run.spans]
    after = {str(p): store.fingerprint_tree(p) for p in resources}
    changed = sorted(p for p in before if before[p] != after.get(p))
    if record["reason"] is None:
        # pi's "/login" advice does not work here: the reason names the fix that does
        record["state"] = run.outcome
        record["reason"] = explain_host_failure(run.failure, bytes(run.stderr).decode("utf-8", "replace"))
        if run.outcome == "complete" and changed:
            record["state"] = "invalid"
            record["reason"] = "declared resources changed during the run: " + ", ".join(changed)
    record.update(
        host=plan.host.to_json(),
        mode=plan.mode,
        model=_model_record(plan, models_used(run.records)),
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
        registered_context=registered_context(run.records),
        returncode=run.returncode,
        started_at=run.started_at or started,
        ended_at=run.ended_at or time.time(),
        turn_times=run.turn_times,
        usage=usage_totals(run.records),
        fingerprints_changed=changed,
    )
    # run.json is written last, with the one directory fsync that makes every rename durable
    lines, n = redact_events(redactor, [(r.data, r.raw) for r in run.records])
    count("events.jsonl", n)
    store.write_atomic(run_dir / "events.jsonl", "".join(line + "\n" for line in lines).encode("utf-8"), sync_dir=False)
    stderr, n = redactor.stream_text(bytes(run.stderr))
    count("stderr.txt", n)
    store.write_atomic(run_dir / "stderr.txt", stderr, sync_dir=False)
    transcript = []
    for span, turn, times in zip(run.spans, turns, run.turn_times + [(None, None)] * len(turns), strict=False):
        transcript.append({**turn_to_json(turn), "usage": usage_totals(run.records, span.start, span.end),
                           "started_at": times[0], "ended_at": times[1], "events": [span.start, span.end]})
    clean_transcript, n = redactor.json({"turns": transcript})
    count("transcript.json", n)
    store.write_json(run_dir / "transcript.json", clean_transcript, sync_dir=False)
    response, n = redactor.text(turns[-1].response if turns else "")
    count("final-response.txt", n)
    store.write_atomic(run_dir / "final-response.txt", response.encode("utf-8"), sync_dir=False)
    store.write_json(run_dir / "fingerprints.json", redactor.json({"before": before, "after": after})[0], sync_dir=False)
    snapshot(workspace, "workspace")
    write_record(record)


def _model_record(plan: LaunchPlan, used: list[dict[str, str]]) -> dict[str, Any]:
    """The model the run used: pi's own answer when it chose (an omitted ``model``)."""
    declared = f"{plan.provider}/{plan.model}" if plan.provider else None
    first = used[0] if used else {"provider": plan.provider, "model": plan.model}
    return {"provider": first["provider"], "model": first["model"], "thinking": plan.thinking,
            "declared": declared, "used": used}


def _active_tools(source: Path) -> list[list[str]]:
    """The tool sets pi had active before each model request, as the tool gate recorded them."""
    import json

    if not source.exists():
        return []
    return [list(json.loads(line)["active"]) for line in source.read_text(encoding="utf-8").splitlines() if line]


def _persist_observations(source: Path, dest: Path, redactor: Redactor, redactions: dict[str, int]) -> None:
    """The observer's per-request records, as grading reads them (system prompt per request)."""
    import json

    requests = []
    if source.exists():
        for line in source.read_text(encoding="utf-8").splitlines():
            item = json.loads(line)
            if item.get("kind") == "request":
                requests.append({k: item[k] for k in ("turn", "request", "system_prompt", "provider_context")})
    clean, n = redactor.json(requests)
    if n:
        redactions[dest.name] = n
    store.write_json(dest, clean)
