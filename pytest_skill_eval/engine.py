"""Running one group: fixture, variants in order, persistence, grading.

The engine is the imperative shell shared by the pytest items and ``skill-eval run``.
Order is the spec's: each selected run is persisted before its counterpart starts;
grade and group evidence are persisted before the caller moves to the next group.
"""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, cast

from . import evidence, records
from .credentials import explain_host_failure
from .definitions import VARIANTS, Group, Suite, Variant, VariantName
from .errors import (
    EvidenceError,
    HostError,
    InvalidVariant,
    LaunchRefused,
    ScriptError,
    SkillEvalError,
    SourceError,
)
from .grading.kinds import WORKSPACE_KINDS
from .host.driver import HostRun, Safeguards, run_json, run_rpc
from .host.install import HostInstallation, cache_dir
from .host.launch import (
    LaunchPlan,
    allowed_roots_config,
    configured_extension,
    launch_mode,
    write_agent_config,
    write_tool_gate,
)
from .host.protocol import (
    build_turn,
    models_used,
    registered_context,
    registered_skills,
    turn_to_json,
    usage_totals,
)
from .isolation import (
    RevisionCheck,
    auth_secrets,
    check_description_revision,
    context_files,
    inherited_values,
    materialise_resources,
    snapshot_bundles,
    snapshot_fixture,
)
from .redaction import Redactor, redact_events, unsafe_reason
from .scratch import new_run_dir

GUARD_PREFIX = "skill-eval guard blocked"
Progress = Callable[[str], None]


class ModelBackend(Protocol):
    """Chooses the provider for a group and supplies its ``models.json`` entries."""

    def providers_for(self, group: Group) -> tuple[str | None, str | None, dict[str, Any]]: ...


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
    #: where the ``piflow`` host lives (a pi-compatible CLI); default: ``piflow`` on PATH
    piflow: str | None = None
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


def run_group(group: Group, position: int, cfg: EngineConfig, *, suite: Suite | None = None) -> GroupOutcome:
    """Run the selected variants of *group*, persist everything, grade, persist the grade."""
    group_dir = cfg.result_dir / "groups" / evidence.group_dir_name(position, group.id)
    redactor = group_redactor(group, cfg)
    definition = records.DefinitionRecord(str(group.path), group.raw)
    evidence.write_json(group_dir / "definition.json", redactor.json(definition.to_json())[0])
    scratch = new_run_dir()
    outcomes: dict[str, VariantOutcome] = {}
    try:
        shared_error: str | None = None
        fixture = scratch / "fixture"
        fixture.mkdir()
        bundles = scratch / "bundles"
        try:
            if group.fixture is not None:
                snapshot_fixture(cfg.root, group.fixture, fixture)
        except (SkillEvalError, OSError) as exc:
            shared_error = f"fixture {group.fixture!r}: {exc}"
        try:
            snapshot_bundles(cfg.root, group, bundles)
        except (SkillEvalError, OSError) as exc:
            shared_error = shared_error or str(exc)
        revision = check_description_revision(group, scratch / "revision-check", cfg.root) if shared_error is None else None
        if revision is not None and revision.state == "failed" and shared_error is None:
            shared_error = revision.reason
        cancelled = False
        for name in VARIANTS:
            run_dir = group_dir / name
            if name not in cfg.selected:
                outcomes[name] = _persist_state(run_dir, group, name, "not-selected", "excluded by variant selection")
            elif cancelled:
                outcomes[name] = _persist_state(run_dir, group, name, "cancelled", "cancelled before it started")
            elif shared_error is not None:
                outcomes[name] = _persist_state(run_dir, group, name, "invalid", shared_error)
            else:
                try:
                    outcomes[name] = _run_variant(group, group.variant(name), fixture, bundles, scratch / name, run_dir, cfg,
                                                  redactor)
                    # nothing of a finished variant may be reachable while its counterpart runs
                    shutil.rmtree(scratch / name, ignore_errors=True)
                except KeyboardInterrupt:
                    # the run's observed evidence is already persisted; no queued subject starts
                    cancelled = True
                    if (run_dir / "run.json").exists():
                        run = evidence.read_json(run_dir / "run.json")
                        outcomes[name] = VariantOutcome(name, run["state"], run.get("reason"), run_dir)
                    else:
                        outcomes[name] = _persist_state(run_dir, group, name, "cancelled", "cancelled while preparing")
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    suite_ref = {"id": suite.id, "path": str(suite.path)} if suite is not None else None
    outcome = _publish_group(group, position, group_dir, outcomes, shared_error, suite_ref, redactor, revision)
    if cancelled:
        raise KeyboardInterrupt
    return outcome


def _publish_group(group: Group, position: int, group_dir: Path, outcomes: dict[str, VariantOutcome],
                   shared_error: str | None, suite: dict[str, str] | None, redactor: Redactor,
                   revision: RevisionCheck | None = None) -> GroupOutcome:
    """Grade from persisted evidence, then write grade.json and group.json (in that order).

    Spec: a recoverable grade/group publication failure becomes explicit ``grade-error``
    fallback evidence. A grade that cannot be written as ``grade.json`` goes to
    ``grade-fallback.json`` as a ``grade-error``; a group record that cannot be written as
    ``group.json`` goes to ``group-fallback.json`` (with a fallback grade-error grade).
    When a fallback cannot be written either, the error propagates: queued work stops.
    """
    grade = grade_persisted(group, group_dir)
    grade_json: dict[str, Any] = redactor.json(grade.to_json())[0]
    grade_name = evidence.GRADE_FILE
    problems: list[str] = []

    def publish_fallback_grade(problem: str) -> None:
        nonlocal grade_json, grade_name
        problems.append(problem)
        grade_json = fallback_grade(grade_json, problem)
        evidence.write_json(group_dir / evidence.GRADE_FALLBACK, grade_json)
        grade_name = evidence.GRADE_FALLBACK

    try:
        evidence.write_json(group_dir / evidence.GRADE_FILE, grade_json)
    except _PUBLICATION_ERRORS as exc:
        publish_fallback_grade(f"grade.json could not be written: {exc}; the grade is in {evidence.GRADE_FALLBACK}")
    state = group_state([o.state for o in outcomes.values()], fixture_failed=shared_error is not None)

    def record() -> dict[str, Any]:
        value = records.GroupRecord(
            id=group.id,
            position=position,
            path=str(group.path),
            suite=records.SuiteRef(suite["id"], suite["path"]) if suite is not None else None,
            type=group.type,
            state=cast(records.GroupState, state),
            grade_state=grade_json["state"],
            variants={cast(VariantName, n): records.VariantState(cast(records.RunState, o.state), o.reason)
                      for n, o in outcomes.items()},
            review_questions=group.review_questions,
            grade_file=grade_name,
            revision_check=records.RevisionState(revision.state, revision.reason) if revision is not None else None,
            publication_errors=tuple(problems),
        )
        clean: dict[str, Any] = redactor.json(value.to_json())[0]
        return clean

    try:
        evidence.write_json(group_dir / evidence.GROUP_FILE, record())
    except _PUBLICATION_ERRORS as exc:
        problem = f"group.json could not be written: {exc}; the group record is in {evidence.GROUP_FALLBACK}"
        if grade_name == evidence.GRADE_FILE:
            publish_fallback_grade(problem)
        else:
            problems.append(problem)
        evidence.write_json(group_dir / evidence.GROUP_FALLBACK, record())
    return GroupOutcome(group, position, state, group_dir, outcomes, grade)


#: what a failed write of grade.json or group.json raises (serialising included)
_PUBLICATION_ERRORS = (OSError, EvidenceError, TypeError, ValueError)


def fallback_grade(grade: Mapping[str, Any], problem: str) -> dict[str, Any]:
    """*grade* as an explicit ``grade-error``: its results kept, *problem* added as a system error."""
    errors = [*grade.get("errors", []), {"scope": "system", "owner": None, "variant": None, "message": problem}]
    return {**grade, "state": "grade-error", "errors": errors}


def grade_persisted(group: Group, group_dir: Path) -> Any:
    """Grade from persisted evidence; a thrown failure becomes explicit grade-error evidence.

    The one grading entry point for a run and for ``skill-eval regrade``, so a regrade of
    untouched evidence reproduces ``grade.json`` byte for byte.
    """
    from .grading import GradeError, GroupGrade, grade_group

    try:
        observations = {
            name: evidence.load_observation(group_dir / name)
            for name in VARIANTS
            if (group_dir / name / "run.json").exists()
        }
        return grade_group(group, observations)
    except Exception as exc:  # noqa: BLE001 - any grading crash must become evidence, not a traceback
        error = GradeError(scope="system", owner=None, variant=None, message=f"grading failed: {type(exc).__name__}: {exc}")
        return GroupGrade(group_id=group.id, state="grade-error", expectations=(), comparisons=(), errors=(error,))


def persist_invalid_definition(result_dir: Path, position: int, ref: str, error: SkillEvalError) -> Path:
    """Evidence for a suite entry whose group definition cannot be loaded: state ``invalid``.

    No group id is known, so the directory is named after the referenced file.
    """
    group_dir = result_dir / "groups" / invalid_definition_dir_name(position, ref)
    reason = f"invalid group definition: {error}"
    invalid = records.VariantState("invalid", reason)
    record = records.InvalidGroupRecord(ref=ref, position=position, variants={"baseline": invalid, "candidate": invalid},
                                        definition_errors=tuple(str(error).splitlines()))
    evidence.write_json(group_dir / "group.json", record.to_json())
    return group_dir


def invalid_definition_dir_name(position: int, ref: str) -> str:
    """``NNN-invalid-<file stem>``: the directory of a suite entry whose definition does not load."""
    return evidence.group_dir_name(position, f"invalid-{Path(ref).stem.lower() or 'group'}")


def group_state(states: Iterable[str], *, fixture_failed: bool = False) -> str:
    """Group state from its run states (spec: complete, partially-complete, invalid, cancelled).

    ``partially-complete`` needs at least one complete selected run: a group none of whose
    selected runs completed (each invalid or infrastructure-failed) is ``invalid``, since
    nothing of it can be compared.
    """
    states = list(states)
    if "cancelled" in states:
        return "cancelled"
    if fixture_failed:
        return "invalid"
    selected = [s for s in states if s != "not-selected"]
    if selected and "complete" not in selected:
        return "invalid"
    if all(s == "complete" for s in selected):
        return "complete"
    return "partially-complete"


def group_redactor(group: Group, cfg: EngineConfig) -> Redactor:
    """The values no evidence of *group* may hold: its inherited values and the auth file's secrets.

    An inherited value too short or too common to redact reliably is not a secret to
    redact: the variant is made invalid before the subject starts (see :func:`_inherited`).
    """
    values = [cfg.env[n] for n in group.runtime.environment.inherit if n in cfg.env and unsafe_reason(cfg.env[n]) is None]
    return Redactor.of([*values, *auth_secrets(cfg.auth_file).values()])


def _inherited(group: Group, env: Mapping[str, str]) -> dict[str, str]:
    """The inherited variables' values, or :class:`InvalidVariant` (shared with the pre-run check)."""
    return inherited_values(group, env)


def _persist_state(run_dir: Path, group: Group, name: VariantName, state: str, reason: str) -> VariantOutcome:
    record = records.RunRecord(variant=name, group=group.id, state=cast(records.RunState, state), reason=reason)
    evidence.write_json(run_dir / "run.json", record.to_json())
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
        counts = evidence.copy_tree_atomic(src, run_dir / rel, redactor.data if redactor.active else None)
        redactions.update({f"{rel}/{k}": v for k, v in counts.items()})

    def write_record(value: dict[str, Any]) -> None:
        if redactions:
            value["redactions"] = dict(sorted(redactions.items()))
        evidence.write_json(run_dir / "run.json", redactor.json(value)[0])

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
    before = {str(p): evidence.fingerprint_tree(p) for p in resources}
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
    from .host.install import from_explicit

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
    after = {str(p): evidence.fingerprint_tree(p) for p in resources}
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
    evidence.write_atomic(run_dir / "events.jsonl", "".join(line + "\n" for line in lines).encode("utf-8"), sync_dir=False)
    stderr, n = redactor.stream_text(bytes(run.stderr))
    count("stderr.txt", n)
    evidence.write_atomic(run_dir / "stderr.txt", stderr, sync_dir=False)
    transcript = []
    for span, turn, times in zip(run.spans, turns, run.turn_times + [(None, None)] * len(turns), strict=False):
        transcript.append({**turn_to_json(turn), "usage": usage_totals(run.records, span.start, span.end),
                           "started_at": times[0], "ended_at": times[1], "events": [span.start, span.end]})
    clean_transcript, n = redactor.json({"turns": transcript})
    count("transcript.json", n)
    evidence.write_json(run_dir / "transcript.json", clean_transcript, sync_dir=False)
    response, n = redactor.text(turns[-1].response if turns else "")
    count("final-response.txt", n)
    evidence.write_atomic(run_dir / "final-response.txt", response.encode("utf-8"), sync_dir=False)
    evidence.write_json(run_dir / "fingerprints.json", redactor.json({"before": before, "after": after})[0], sync_dir=False)
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
    evidence.write_json(dest, clean)
