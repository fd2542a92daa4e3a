"""The scripted stand-in's HTTP side: one request in, one scripted reply (or fault) out.

:class:`ScriptedHTTPServer` is the socket a
:class:`~pytest_skill_eval.scripted.server.ScriptedModelServer` serves on; its request
handler routes each ``POST`` by path to a wire (:mod:`.wires`), plans the reply from the
owner's script (:func:`~pytest_skill_eval.scripted.replies.plan_reply`), paces it by the
emulated latency, and records it as a :class:`RequestRecord`. Streams use chunked transfer
encoding on keep-alive connections, so a scripted ``disconnect`` is an unmistakably broken
response rather than an ordinary end of body.
"""

from __future__ import annotations

import json
import select
import socket
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import TYPE_CHECKING, Any

from pytest_skill_eval.scripted import anthropic_messages
from pytest_skill_eval.scripted.chat_completions import SERVER_NAME
from pytest_skill_eval.scripted.connections import TrackingHTTPServer
from pytest_skill_eval.scripted.pacing import Latency, due_times, model_seconds
from pytest_skill_eval.scripted.replies import RETRY_AFTER_SECONDS, Arm, Reply, plan_reply
from pytest_skill_eval.scripted.wires import PATHS, WIRES, Api, Wire, fault_status, request_problem

if TYPE_CHECKING:
    from pytest_skill_eval.scripted.server import ScriptedModelServer

HANDLER_THREAD_NAME = "scripted-model-request"
#: the request header naming the arm a request comes from: ``<group>/<variant>/<trial>``
ARM_HEADER = "x-skill-eval-arm"
#: The faults that fail a request with an HTTP error before anything is streamed.
_STATUS_FAULTS = ("http-500", "rate-limit", "overloaded")
_STALL_POLL_SECONDS = 0.05


@dataclass(frozen=True, slots=True)
class RequestRecord:
    """One request the server answered, kept in memory for tests and diagnostics.

    ``reply`` is ``None`` when the request never reached a script (bad path, bad body,
    unregistered model); ``error`` then says why. ``body`` is the decoded request when the
    server was asked to keep bodies (``keep_bodies=True``, for tests), else ``None``: every
    request repeats the whole conversation, so keeping them all grows with calls squared.
    """

    model: str | None
    status: int
    reply: Reply | None
    error: str | None
    body: Any
    #: the wire format of the request's path
    api: Api = "openai-completions"
    #: the request headers, names in lower case (tests check the credential pi sent)
    headers: dict[str, str] = field(default_factory=dict, compare=False, repr=False)
    #: the ``x-skill-eval-arm`` header the request carried (``<group>/<variant>/<trial>``)
    arm: str | None = None
    #: ``time.monotonic()`` when the request's body had been read
    received_at: float = 0.0
    #: ``time.monotonic()`` after each write of the reply: every stream record, or the whole
    #: body (filled while the reply is sent; the pacing of emulated latency shows here)
    sent_at: list[float] = field(default_factory=list, compare=False, repr=False)


class ScriptedHTTPServer(TrackingHTTPServer):
    """The server's socket: connection tracking, with the :class:`ScriptedModelServer` it serves."""

    def __init__(self, owner: ScriptedModelServer) -> None:
        super().__init__(_Handler, HANDLER_THREAD_NAME)
        self.owner = owner


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = SERVER_NAME
    sys_version = ""
    timeout = 600  # an idle keep-alive connection whose client vanished is closed eventually
    server: ScriptedHTTPServer
    _api: Api = "openai-completions"
    _current: RequestRecord | None = None
    _received = 0.0
    _latency = Latency()

    def log_message(self, format: str, *args: Any) -> None:
        """Requests are recorded in memory (``requests()``), not printed."""

    # ------------------------------------------------------------------ routing

    def do_GET(self) -> None:
        self._api = "openai-completions"
        self._current = None
        if self.path.rstrip("/") == "/v1/models":
            owner = self.server.owner
            models = [
                {"id": name, "object": "model", "owned_by": SERVER_NAME}
                for name in owner._registered()
            ]
            self._send_json(200, {"object": "list", "data": models})
        else:
            self._send_error(404, f"no such endpoint: GET {self.path}", "not_found")

    def do_POST(self) -> None:
        owner = self.server.owner
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length > 0 else b""
        self._received = time.monotonic()
        self._current = None
        self._latency = Latency()
        self._api = api = PATHS.get(self.path.split("?")[0], "openai-completions")
        if self.path.split("?")[0] not in PATHS:
            self._reject(404, None, None, f"no such endpoint: POST {self.path}", "not_found")
            return
        try:
            body = json.loads(raw)
        except (json.JSONDecodeError, UnicodeDecodeError) as error:
            self._reject(
                400, None, None, f"request body is not JSON: {error}", "invalid_request_error"
            )
            return
        problem = request_problem(api, body)
        if problem is not None:
            self._reject(400, None, body, problem, "invalid_request_error")
            return
        model = body["model"]
        script = owner._script_for(model)
        if script is None:
            registered = ", ".join(owner._registered()) or "none"
            self._reject(
                404, model, body,
                f"model {model!r} is not registered with the scripted stand-in server "
                f"(registered: {registered})",
                "model_not_found",
            )
            return
        arm = self.headers.get(ARM_HEADER)
        reply = plan_reply(script, body, WIRES[api].read_request(body),
                           arm=arm_of(arm, owner.seed))
        status = fault_status(api, reply.fault) if reply.fault in _STATUS_FAULTS else 200
        self._current = record = RequestRecord(model, status, reply, None, body, api, self._header_record(), arm,
                                               self._received)
        owner._record(record)
        response_id = owner._next_response_id(api)
        # faults are never delayed; a message reply takes the server's settings where the script set none
        self._latency = reply.latency if reply.fault is not None else reply.latency.over(owner.latency)
        if self._wait_until(self._latency.first_token_delay or 0.0):
            self._abandon()  # the server is stopping: no reply at all
            return
        self._answer(api, reply, model, response_id, stream=body.get("stream") is True)

    def _header_record(self) -> dict[str, str]:
        return {name.lower(): value for name, value in self.headers.items()}

    # ------------------------------------------------------------------ replies

    def _answer(self, api: Api, reply: Reply, model: str, response_id: str, *, stream: bool) -> None:
        """A reply in *api*'s wire format, faults included: a fault that fails the request is
        an HTTP error; a streaming fault breaks the stream as the wire's records say."""
        wire = WIRES[api]
        if reply.fault in _STATUS_FAULTS:
            self._send_fault(reply)
            return
        if not stream and reply.fault == "malformed" and (truncated := wire.truncated_whole(response_id)) is not None:
            self._send_bytes(200, truncated, "application/json")
            return
        if reply.fault in ("stall", "disconnect") or (reply.fault == "malformed" and not stream):
            if stream:
                self._start_stream()
            try:
                for record in wire.stream_records(reply, model, response_id) if stream else ():
                    self._send_chunk(record)
                if reply.fault == "stall":
                    self._wait_for_hang_up()
            except OSError:
                pass
            self._abandon()
            return
        if not stream:
            if self._wait_until(self._whole_due(reply)):
                self._abandon()
                return
            self._send_json(200, wire.whole(reply, model, response_id))
            return
        self._start_stream()
        try:
            for record, due in _paced(wire, wire.stream_records(reply, model, response_id), self._latency):
                if self._wait_until(due):
                    self._abandon()
                    return
                self._send_chunk(record)
            self.wfile.write(b"0\r\n\r\n")
        except OSError:
            self.close_connection = True

    def _wait_until(self, offset: float) -> bool:
        """Wait until *offset* seconds after the request arrived; True when the server is stopping."""
        remaining = self._received + offset - time.monotonic()
        return self.server.owner._stopping.wait(remaining) if remaining > 0 else self.server.owner._stopping.is_set()

    def _whole_due(self, reply: Reply) -> float:
        """When a non-streamed reply is due: once its last token would have been streamed."""
        chars = len(reply.text) + sum(len(call.name) + len(call.arguments) for call in reply.tool_calls)
        return model_seconds(chars, self._latency)

    def _start_stream(self) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()

    def _send_fault(self, reply: Reply) -> None:
        """The HTTP error of a ``rate-limit``, ``overloaded`` or ``http-500`` fault in this wire's words."""
        assert reply.fault is not None
        status, body = WIRES[self._api].fault_error(reply.fault)
        extra = {"retry-after": str(RETRY_AFTER_SECONDS)} if reply.fault == "rate-limit" else {}
        self._send_json(status, body, extra)

    def _reject(self, status: int, model: str | None, body: Any, message: str, code: str) -> None:
        self.server.owner._record(RequestRecord(model, status, None, message, body, self._api, self._header_record()))
        self._send_error(status, message, code)

    # -------------------------------------------------------------------- wire

    def _send_error(self, status: int, message: str, code: str) -> None:
        if self._api == "anthropic-messages":
            self._send_json(status, anthropic_messages.error_body(status, message))
            return
        kind = "server_error" if status >= 500 else "invalid_request_error"
        self._send_json(status, {"error": {"message": message, "type": kind, "code": code}})

    def _send_json(self, status: int, payload: Any, headers: dict[str, str] | None = None) -> None:
        data = json.dumps(payload, ensure_ascii=False).encode()
        self._send_bytes(status, data, "application/json", headers)

    def _send_bytes(self, status: int, data: bytes, content_type: str, headers: dict[str, str] | None = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)
        self._sent()

    def _send_chunk(self, data: bytes) -> None:
        self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
        self._sent()

    def _sent(self) -> None:
        if self._current is not None:
            self._current.sent_at.append(time.monotonic())

    def _wait_for_hang_up(self) -> None:
        """Block until the client closes the connection or the server stops."""
        stopping = self.server.owner._stopping
        while not stopping.is_set():
            readable, _, _ = select.select([self.connection], [], [], _STALL_POLL_SECONDS)
            if readable:
                try:
                    if not self.connection.recv(1, socket.MSG_PEEK):
                        return
                except OSError:
                    return
                return  # the client sent something mid-stall; treat it as giving up

    def _abandon(self) -> None:
        """Drop the connection without ending the response (no terminating chunk)."""
        self.close_connection = True
        try:
            self.connection.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass


def _paced(wire: Wire, records: Iterable[bytes], latency: Latency) -> Iterator[tuple[bytes, float]]:
    """Each record of a stream with the time it is due (:func:`~.pacing.due_times`), the
    stream read as it is sent: a long reply is never built whole."""
    items = iter(records)
    pending: list[bytes] = []

    def chars() -> Iterator[int]:
        for record in items:
            pending.append(record)
            yield wire.output_chars(record)

    for due in due_times(chars(), latency):
        yield pending.pop(), due


def arm_of(header: str | None, seed: str) -> Arm:
    """The arm an ``x-skill-eval-arm: <group>/<variant>/<trial>`` header names (an arm with
    only the seed when the header is absent or not of that form)."""
    parts = (header or "").rsplit("/", 2)
    if len(parts) == 3 and parts[2].isascii() and parts[2].isdigit():
        return Arm(seed, parts[0], parts[1], int(parts[2]))
    return Arm(seed)
