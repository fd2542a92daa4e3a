"""The scripted stand-in model: a deterministic streaming server for pi, in three wire formats.

It replays declared scripts (``docs/scripted-model.md``) so the real pi host can run end
to end with no network and no keys. It is a testing aid, never a real model.
"""

from __future__ import annotations

from pytest_skill_eval.scripted.conversation import Conversation, read_conversation
from pytest_skill_eval.scripted.format import FAULTS, SCHEMA, Script, load_script, parse_script
from pytest_skill_eval.scripted.pacing import Latency
from pytest_skill_eval.scripted.replies import STAND_IN_TAG, Reply, plan_reply
from pytest_skill_eval.scripted.server import API_KEY, APIS, PROVIDER, Api, RequestRecord, ScriptedModelServer

__all__ = [
    "APIS",
    "API_KEY",
    "FAULTS",
    "Latency",
    "PROVIDER",
    "SCHEMA",
    "STAND_IN_TAG",
    "Api",
    "Conversation",
    "Reply",
    "RequestRecord",
    "Script",
    "ScriptedModelServer",
    "load_script",
    "parse_script",
    "plan_reply",
    "read_conversation",
]
