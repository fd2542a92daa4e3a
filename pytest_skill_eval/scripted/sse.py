"""A reply as server-sent-event records, with the streaming faults applied (pure, any wire)."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar

from pytest_skill_eval.scripted.replies import Reply

Event = TypeVar("Event")

#: the faults whose stream breaks or ends wrongly (the others fail the request, or are no fault)
BROKEN = ("stall", "disconnect", "no-finish-reason")


def fault_records(reply: Reply, events: Callable[[], Sequence[Event]],
                  broken: Callable[[], Mapping[str, Sequence[Event]]], encode: Callable[[Event], bytes],
                  malformed: bytes) -> list[bytes]:
    """The encoded records of a streamed reply; a streaming fault's stream breaks or ends wrongly.

    ``malformed`` puts a record that is not JSON after the first; ``stall`` and
    ``disconnect`` are the records sent before the server waits or hangs up.
    """
    chosen = broken()[reply.fault] if reply.fault in BROKEN else events()
    records = [encode(event) for event in chosen]
    if reply.fault == "malformed":
        records.insert(1, malformed)
    return records


def payload_of(record: bytes) -> Any:
    """The JSON of an encoded record's ``data:`` line (``None`` when it has none or it is not JSON)."""
    for line in record.split(b"\n"):
        if line.startswith(b"data: "):
            try:
                return json.loads(line[len(b"data: "):])
            except ValueError:
                return None
    return None
