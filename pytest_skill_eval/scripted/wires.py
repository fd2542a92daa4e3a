"""Which wire format a request speaks, and what the server needs of each wire module (pure).

The server routes by path: ``/v1/chat/completions`` (:mod:`.chat_completions`),
``/v1/messages`` (:mod:`.anthropic_messages`) and ``/v1/responses`` (:mod:`.openai_responses`);
each of the three modules is a :class:`Wire`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Literal, Protocol, get_args

from pytest_skill_eval.scripted import anthropic_messages, chat_completions, openai_responses
from pytest_skill_eval.scripted.conversation import Conversation
from pytest_skill_eval.scripted.replies import Reply

Api = Literal["openai-completions", "anthropic-messages", "openai-responses"]
"""The wire formats the server speaks, by pi's ``api`` name; a request's path says which."""
APIS: tuple[Api, ...] = get_args(Api)
PATHS: dict[str, Api] = {
    chat_completions.PATH: "openai-completions",
    anthropic_messages.PATH: "anthropic-messages",
    openai_responses.PATH: "openai-responses",
}
ID_PREFIX: dict[Api, str] = {
    "openai-completions": "chatcmpl-scripted-", "anthropic-messages": "msg_scripted_",
    "openai-responses": "resp_scripted_",
}

class Wire(Protocol):
    """What the server needs of a wire module (:mod:`.chat_completions`, :mod:`.anthropic_messages`,
    :mod:`.openai_responses`): how to read a request, the records of a streamed reply (a
    streaming fault's broken stream included), the whole non-streamed answer, and the HTTP
    error of a fault that fails the request."""

    @property
    def FAULT_STATUS(self) -> Mapping[str, int]: ...  # noqa: N802 (a module constant)

    def request_problem(self, body: Any) -> str | None: ...
    def read_request(self, body: Mapping[str, Any]) -> Conversation: ...
    def stream_records(self, reply: Reply, model: str, response_id: str) -> Iterable[bytes]: ...
    def whole(self, reply: Reply, model: str, response_id: str) -> dict[str, Any]: ...
    def truncated_whole(self, response_id: str) -> bytes | None: ...
    def fault_error(self, fault: str) -> tuple[int, dict[str, Any]]: ...
    def output_chars(self, record: bytes) -> int: ...


WIRES: dict[Api, Wire] = {"openai-completions": chat_completions, "anthropic-messages": anthropic_messages,
                          "openai-responses": openai_responses}


def request_problem(api: Api, body: Any) -> str | None:
    return WIRES[api].request_problem(body)


def fault_status(api: Api, fault: str | None) -> int:
    status = WIRES[api].FAULT_STATUS
    return status[fault] if fault is not None and fault in status else 200
