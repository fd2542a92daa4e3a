"""Running one pi process to settlement: JSON mode (one shot) and RPC mode (turn by turn).

This module owns the host process and nothing else. It keeps every stdout record it
saw, whatever happens, so a crash or a cancellation still leaves the directly observed
partial evidence to persist. The process tree is always reaped.

With a *sink* (the engine's ``events.jsonl`` writer), every record is handed to the sink
as it arrives, whole, and the run keeps one form of it: the parsed object (the raw text
only of a record that did not parse), and of the records nothing reads afterwards
(:data:`SLIM_TYPES`: streaming deltas, ``turn_end`` and ``agent_end``, which repeat the
conversation) only their type. Without a sink every record is kept as text and parsed.
"""

from __future__ import annotations

import errno
import functools
import json
import os
import queue
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Literal

from pytest_skill_eval.execlimits import MAX_ARG_STRLEN, exec_size, exec_string_size
from pytest_skill_eval.host.launch import EMERGENCY_CEILING_S, LaunchPlan, arg_max
from pytest_skill_eval.host.process import kill_process_tree
from pytest_skill_eval.host.protocol import (
    LineSplitter,
    Record,
    TurnSpan,
    parse_record,
    provider_error,
    provider_error_reason,
)
from pytest_skill_eval.host.repetition import DEFAULT_REPEAT_LIMIT, Repetition, RepetitionDetector
from pytest_skill_eval.host.treedigest import TreeDigest

Outcome = Literal["complete", "infrastructure-failed", "cancelled"]

#: Called with every stdout record as it arrives (live progress); runs on the reader thread.
Observer = Callable[[Record], None]

#: Record types a run keeps only the type of when a sink has the whole record: nothing
#: after the run reads their content (turns, usage, models and the prompt's sections come
#: from ``message_start``/``message_end`` and the tool execution records).
SLIM_TYPES = frozenset({"message_update", "tool_execution_update", "turn_end", "agent_end"})
_SLIM = {t: {"type": t} for t in SLIM_TYPES}


def retained(rec: Record) -> Record:
    """The one form of *rec* a run keeps once a sink has the whole record."""
    if rec.data is None:
        return rec  # the raw text is all there is of it
    kind = rec.data.get("type")
    slim = _SLIM.get(kind) if isinstance(kind, str) else None
    return Record(rec.index, slim if slim is not None else rec.data, "")

#: Defaults for the safeguards: no-progress detection (a silent host; a subject repeating
#: the same tool calls with the same results and an unchanged workspace,
#: :mod:`~pytest_skill_eval.host.repetition`) and an emergency ceiling. They stop runaway
#: subjects; they are deliberately far above any normal turn.
DEFAULT_STALL_SECONDS = 900.0
DEFAULT_CEILING_SECONDS = EMERGENCY_CEILING_S


@dataclass(frozen=True, slots=True)
class Safeguards:
    stall_seconds: float = DEFAULT_STALL_SECONDS
    ceiling_seconds: float = DEFAULT_CEILING_SECONDS
    #: repetitions of a whole cycle of tool calls that stop the run; 0: never
    repeat_limit: int = DEFAULT_REPEAT_LIMIT


@dataclass(slots=True)
class HostRun:
    """What was observed of one process; filled in as it goes, so it is valid mid-run."""

    records: list[Record] = field(default_factory=list)
    stderr: bytearray = field(default_factory=bytearray)
    spans: list[TurnSpan] = field(default_factory=list)
    commands: list[dict[str, Any]] | None = None
    outcome: Outcome = "complete"
    failure: str | None = None
    returncode: int | None = None
    started_at: float = 0.0
    ended_at: float = 0.0
    pid: int | None = None
    turn_times: list[tuple[float, float]] = field(default_factory=list)
    #: the repeated cycle that stopped the run (``Repetition.to_json``), if one did
    no_progress: dict[str, Any] | None = None

    def raw_events(self) -> bytes:
        """The records as the host wrote them (empty lines for a run driven with a sink)."""
        return b"".join(r.raw.encode("utf-8") + b"\n" for r in self.records)


class _Stream:
    """Reads the child's stdout/stderr continuously (pi stalls on stdout backpressure)."""

    def __init__(self, proc: subprocess.Popen[bytes], run: HostRun, observe: Observer | None = None,
                 sink: Observer | None = None, detector: RepetitionDetector | None = None) -> None:
        self.run = run
        self.detector = detector
        #: set on the reader thread when the subject repeats itself; the waiting side stops the run
        self.repetition: Repetition | None = None
        self.observe = observe
        self.sink = sink
        self.events: queue.Queue[Record | None] = queue.Queue()
        self.last_progress = time.monotonic()
        self._lock = threading.Lock()
        self._threads = [
            threading.Thread(target=self._read_stdout, args=(proc,), daemon=True),
            threading.Thread(target=self._read_stderr, args=(proc,), daemon=True),
        ]
        for t in self._threads:
            t.start()

    def _read_stdout(self, proc: subprocess.Popen[bytes]) -> None:
        assert proc.stdout is not None
        splitter = LineSplitter()
        for chunk in self._chunks(proc.stdout.fileno()):
            for line in splitter.feed(chunk):
                self._push(line)
        if splitter.rest():
            self._push(splitter.rest())
        self.events.put(None)

    def _push(self, line: bytes) -> None:
        with self._lock:
            rec = parse_record(len(self.run.records), line)
            queued = rec
            if self.sink is not None:
                self.sink(rec)  # in order, on the reader thread; it must not raise
                kept = retained(rec)
                self.run.records.append(kept)
                # the waiting side reads types (and a response's text for its faults): a
                # queue that runs behind must not hold whole snapshots of a long reply
                queued = rec if rec.type == "response" else kept
            else:
                self.run.records.append(rec)
            self.last_progress = time.monotonic()
        if self.detector is not None and self.repetition is None:
            # here, as the record is read: the workspace digest is taken as close to the call as can be
            try:
                self.repetition = self.detector.observe(rec.data, rec.index)
            except (ValueError, RecursionError):  # arguments no JSON spelling takes: not a cycle
                pass
        self.events.put(queued)
        if self.observe is not None:
            self.observe(rec)  # on the reader thread: must be quick and thread-safe

    def _read_stderr(self, proc: subprocess.Popen[bytes]) -> None:
        assert proc.stderr is not None
        for chunk in self._chunks(proc.stderr.fileno()):
            self.run.stderr += chunk

    def _chunks(self, fd: int) -> Iterator[bytes]:
        """Raw reads until EOF; any output counts as progress for stall detection."""
        while chunk := os.read(fd, 65536):
            self.last_progress = time.monotonic()
            yield chunk

    def join(self, timeout: float) -> None:
        for t in self._threads:
            t.join(timeout)


class _Session:
    def __init__(self, plan: LaunchPlan, safeguards: Safeguards, sent: list[str] | None = None,
                 observe: Observer | None = None, cancel: threading.Event | None = None,
                 sink: Observer | None = None) -> None:
        self.plan = plan
        #: set by another thread to cancel this run as Ctrl-C would (``--skill-eval-jobs``)
        self.cancel = cancel
        self.observe = observe
        self.sink = sink
        self.sent = list(sent) if sent is not None else list(plan.prompts)
        #: Where the turn being driven began (RPC mode), for a turn that never settles.
        self.turn_start: int | None = None
        self.safeguards = safeguards
        self.run = HostRun()
        self.proc: subprocess.Popen[bytes] | None = None
        self.stream: _Stream | None = None
        self._next_id = 0
        self._eof = False
        #: a safeguard stopped the subject: reap it at once, with no grace period to run on
        self._stop_now = False

    def start(self) -> None:
        self._check_cancel()  # cancellation starts no queued subject
        _libc()  # loaded here: the child between fork and exec must not import anything
        self.run.started_at = time.time()
        argv, env = self.plan.argv(), self.plan.env()
        try:
            self.proc = subprocess.Popen(
                argv,
                cwd=self.plan.workspace,
                env=env,
                stdin=subprocess.PIPE if self.plan.mode == "rpc" else subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                start_new_session=True,  # Ctrl-C reaches pytest only; we decide how pi ends
                preexec_fn=_die_with_parent,
            )
        except (OSError, ValueError, subprocess.SubprocessError) as exc:
            # execve's refusal (E2BIG, ENOENT, EACCES, ENOEXEC), or a string no execve can take
            raise _HostFaultError(f"the host could not be started: {launch_failure(exc, argv, env)}") from None
        self.run.pid = self.proc.pid
        limit = self.safeguards.repeat_limit
        detector = RepetitionDetector(limit, TreeDigest(self.plan.workspace)) if limit > 0 else None
        self.stream = _Stream(self.proc, self.run, self.observe, self.sink, detector)
        self._deadline = time.monotonic() + self.safeguards.ceiling_seconds

    # -- waiting -------------------------------------------------------------
    def next_record(self) -> Record | None:
        """Next stdout record; None at EOF. Raises on stall or emergency ceiling."""
        assert self.stream is not None
        if self._eof:
            return None
        while True:
            self._check_cancel()
            try:
                rec = self.stream.events.get(timeout=0.5)
            except queue.Empty:
                now = time.monotonic()
                if now - self.stream.last_progress > self.safeguards.stall_seconds:
                    raise _HostFaultError(f"no progress from the host for {self.safeguards.stall_seconds:g} s (stalled subject)") from None
                if now > self._deadline:
                    raise _HostFaultError(f"emergency ceiling of {self.safeguards.ceiling_seconds:g} s reached") from None
                continue
            if rec is None:
                self._eof = True
            elif (repeated := self.stream.repetition) is not None:
                self.run.no_progress, self._stop_now = repeated.to_json(), True
                raise _HostFaultError(repeated.reason())
            return rec

    def _check_cancel(self) -> None:
        """A cancellation from another thread arrives as the KeyboardInterrupt a Ctrl-C raises."""
        if self.cancel is not None and self.cancel.is_set():
            raise KeyboardInterrupt

    # -- RPC -----------------------------------------------------------------
    def send(self, command: dict[str, Any]) -> str:
        assert self.proc is not None and self.proc.stdin is not None
        self._next_id += 1
        cid = f"skill-eval-{self._next_id}"
        payload = json.dumps({**command, "id": cid}, ensure_ascii=False).encode("utf-8") + b"\n"
        try:
            self.proc.stdin.write(payload)
            self.proc.stdin.flush()
        except (BrokenPipeError, OSError) as exc:
            raise _HostFaultError(f"the host closed its input: {exc}") from None
        return cid

    def await_response(self, cid: str) -> Record:
        while True:
            rec = self.next_record()
            if rec is None:
                raise _HostFaultError(f"the host exited before answering command {cid}")
            data = rec.data
            if data is None:
                raise _HostFaultError(f"malformed host output at record {rec.index}: {rec.error}")
            if data.get("type") == "response":
                if "id" not in data:
                    raise _HostFaultError(f"protocol fault: response without id: {data.get('error', rec.raw)}")
                if data["id"] == cid:
                    return rec

    def await_settled(self) -> Record:
        while True:
            rec = self.next_record()
            if rec is None:
                raise _HostFaultError("the host exited before the turn settled")
            if rec.data is None:
                raise _HostFaultError(f"malformed host output at record {rec.index}: {rec.error}")
            if rec.data.get("type") == "response" and "id" not in rec.data:
                raise _HostFaultError(f"protocol fault: response without id: {rec.data.get('error', rec.raw)}")
            if rec.data.get("type") == "agent_settled":
                return rec

    def close(self) -> None:
        """End the process: close stdin (RPC), wait briefly, then reap the whole tree."""
        proc = self.proc
        if proc is None:
            return
        if proc.stdin is not None:
            try:
                proc.stdin.close()
            except OSError:
                pass
        try:
            proc.wait(timeout=0 if self._stop_now else 10)
        except subprocess.TimeoutExpired:
            pass
        kill_process_tree(proc.pid)
        try:
            self.run.returncode = proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.run.returncode = None
        if self.stream is not None:
            self.stream.join(timeout=5)
        self.run.ended_at = time.time()


@functools.cache
def _libc() -> Any:
    """The C library (for ``prctl``), loaded once in the evaluator; None where there is none."""
    try:
        import ctypes

        return ctypes.CDLL(None, use_errno=True)
    except (OSError, AttributeError, ImportError):
        return None


def _die_with_parent() -> None:
    """In the child: if the evaluator itself is killed (SIGKILL), take pi down with it.

    Runs between fork and exec; Linux only (prctl PR_SET_PDEATHSIG), a no-op elsewhere.
    It imports and loads nothing (:func:`_libc` did that in the parent): with
    ``--skill-eval-jobs`` other threads run while a child forks. Linux sends the signal
    when the *thread* that started pi ends; every thread that starts one reaps it first.
    """
    libc = _libc()
    try:
        if libc is not None:
            libc.prctl(1, signal.SIGKILL, 0, 0, 0)  # 1 = PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


def launch_failure(exc: BaseException, argv: list[str], env: dict[str, str]) -> str:
    """Why ``execve`` (or Python before it) refused to start *argv* with *env*, with the sizes
    the kernel judged when it was E2BIG."""
    if isinstance(exc, OSError) and exc.errno == errno.E2BIG:
        strings = [*argv, *(f"{name}={value}" for name, value in env.items())]
        longest = max((exec_string_size(s) for s in strings), default=0)
        return (f"{exc} (argv and environment take {exec_size(argv, env)} bytes of this machine's ARG_MAX "
                f"{arg_max()}; the longest string takes {longest} of the kernel's {MAX_ARG_STRLEN} per string)")
    if isinstance(exc, ValueError) and not isinstance(exc, UnicodeError):
        return f"its argv or environment holds a string no execve can take ({exc})"
    return str(exc) or type(exc).__name__


class _HostFaultError(Exception):
    """An infrastructure failure observed while driving the host."""


TurnHook = Callable[[int], None]


def run_json(plan: LaunchPlan, safeguards: Safeguards = Safeguards(), *, observe: Observer | None = None,
             cancel: threading.Event | None = None, sink: Observer | None = None) -> HostRun:
    """One-shot JSON mode: prompts are argv; each is its own run ending in ``agent_settled``.

    *cancel*, set by another thread, cancels the run as a Ctrl-C in this thread would.
    """
    session = _Session(plan, safeguards, observe=observe, cancel=cancel, sink=sink)
    with _driving(session):
        session.start()
        start, turn_started = 0, time.time()
        for index, prompt in enumerate(plan.prompts, start=1):
            settled = session.await_settled()
            session.run.spans.append(TurnSpan(index, prompt, prompt, start, settled.index + 1, True))
            session.run.turn_times.append((turn_started, time.time()))
            _check_provider(session, index, start, settled.index + 1)
            start, turn_started = settled.index + 1, time.time()
        while session.next_record() is not None:
            pass
    return session.run


def run_rpc(
    plan: LaunchPlan,
    sent: list[str],
    safeguards: Safeguards = Safeguards(),
    *,
    before_first_turn: Callable[[list[dict[str, Any]]], str | None] | None = None,
    after_turn: TurnHook | None = None,
    observe: Observer | None = None,
    cancel: threading.Event | None = None,
    sink: Observer | None = None,
) -> HostRun:
    """Persistent RPC mode: one prompt per declared turn, each awaited to settlement.

    ``before_first_turn`` gets the host's command list (registered skills) and may veto
    the run by returning a reason (e.g. the target resolves to another SKILL.md).
    *cancel* as in :func:`run_json`.
    """
    session = _Session(plan, safeguards, sent, observe, cancel, sink)
    run = session.run
    with _driving(session):
        session.start()
        response = session.await_response(session.send({"type": "get_commands"})).data or {}
        if not response.get("success"):
            raise _HostFaultError(f"get_commands failed: {response.get('error')}")
        run.commands = list((response.get("data") or {}).get("commands") or [])
        if before_first_turn is not None:
            veto = before_first_turn(run.commands)
            if veto:
                run.outcome, run.failure = "complete", veto
                return run
        for index, (prompt, message) in enumerate(zip(plan.prompts, sent, strict=False), start=1):
            start = len(run.records)
            # what is sent is known only now: delivery rewrites the first message
            session.sent[index - 1], session.turn_start = message, start
            turn_started = time.time()
            rec = session.await_response(session.send({"type": "prompt", "message": message}))
            data = rec.data or {}
            if not data.get("success"):
                raise _HostFaultError(f"turn {index}: prompt rejected by the host: {data.get('error')}")
            disposition = (data.get("data") or {}).get("disposition")
            if disposition != "handled":
                settled = session.await_settled()
                end = settled.index + 1
            else:
                end = rec.index + 1
            run.spans.append(TurnSpan(index, prompt, message, start, end, True))
            run.turn_times.append((turn_started, time.time()))
            _check_provider(session, index, start, end)
            if after_turn is not None:
                after_turn(index)
    return run


@contextmanager
def _driving(session: _Session) -> Iterator[None]:
    """Whatever happens while driving: record a fault or a cancellation, always reap pi."""
    try:
        yield
    except _HostFaultError as exc:
        _fail(session, str(exc))
    except KeyboardInterrupt:
        # the caller persists what was observed, then stops queued work
        _cancel(session)
    finally:
        session.close()


def _open_span(session: _Session) -> None:
    """Record the unfinished turn so its partial records are kept as that turn's evidence."""
    run = session.run
    index = len(run.spans) + 1
    if index <= len(session.plan.prompts):
        start = session.turn_start if session.turn_start is not None else (run.spans[-1].end if run.spans else 0)
        prompt = session.plan.prompts[index - 1]
        run.spans.append(TurnSpan(index, prompt, session.sent[index - 1], start, len(run.records), False))


def _check_provider(session: _Session, index: int, start: int, end: int) -> None:
    """A turn whose model call failed did not test the subject: that is infrastructure."""
    error = provider_error(session.run.records[start:end])
    if error is not None:
        actionable = provider_error_reason(error)
        detail = f"model provider error: {error}"
        raise _HostFaultError(f"turn {index}: {actionable} ({detail})" if actionable else f"turn {index}: {detail}")


def _fail(session: _Session, reason: str) -> None:
    session.run.outcome, session.run.failure = "infrastructure-failed", reason
    _open_span(session)


def _cancel(session: _Session) -> None:
    session.run.outcome, session.run.failure = "cancelled", "cancelled by the user (KeyboardInterrupt)"
    _open_span(session)
