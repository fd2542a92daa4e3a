"""What the scripted model can see of one OpenAI chat-completions request.

pi sends the whole conversation with every request; :func:`read_conversation` extracts
what script conditions and placeholders need: the system prompt, the skills pi listed
and delivered, the messages so far, the workspace (``<cwd>``), and which turn and step
of the script the request is.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

# ----------------------------------------------------------------------- conversation


@dataclass(frozen=True, slots=True)
class ListedSkill:
    """A skill as pi lists it in the system prompt (values XML-unescaped)."""

    name: str
    description: str
    location: str

    @property
    def dir(self) -> str:
        return posixpath.dirname(self.location)


@dataclass(frozen=True, slots=True)
class DeliveredSkill:
    """A ``<skill name=… location=…>`` block pi expanded ``/skill:<name>`` into."""

    name: str
    location: str

    @property
    def dir(self) -> str:
        return posixpath.dirname(self.location)


@dataclass(frozen=True, slots=True)
class Conversation:
    """What conditions and placeholders can see of one chat-completions request.

    ``turn`` counts user messages (1 for the first); ``step`` counts assistant messages
    after the last user message (0 for the first model request of a turn).
    """

    system_prompt: str
    user_messages: tuple[str, ...]
    tool_results: tuple[str, ...]
    latest_tool_results: tuple[str, ...]
    skills: tuple[ListedSkill, ...]
    delivered: tuple[DeliveredSkill, ...]
    cwd: str | None
    turn: int
    step: int

    @property
    def current_user_message(self) -> str:
        return self.user_messages[-1] if self.user_messages else ""


# ------------------------------------------------------------------------- reading

_SKILL_ENTRY = re.compile(
    r"<skill>\s*<name>(.*?)</name>\s*<description>(.*?)</description>\s*"
    r"<location>(.*?)</location>\s*</skill>",
    re.DOTALL,
)
_AVAILABLE_SKILLS = re.compile(r"<available_skills>(.*?)</available_skills>", re.DOTALL)
# pi renders the section as "<cwd>\n<path>\n</cwd>" without escaping; custom sections may
# follow it, so the last single-line match is the one pi wrote.
_CWD = re.compile(r"^<cwd>\n([^\n]*)\n</cwd>$", re.MULTILINE)
# pi does not escape the attributes of the expanded block; the location runs to '">' at
# the end of the line.
_DELIVERED = re.compile(r'^<skill name="([^"\n]*)" location="([^\n]*)">$', re.MULTILINE)
_XML_ENTITIES = {"&amp;": "&", "&lt;": "<", "&gt;": ">", "&quot;": '"', "&apos;": "'"}
_XML_ENTITY = re.compile("|".join(_XML_ENTITIES))


def _unescape_xml(text: str) -> str:
    # Exactly the five entities pi's escapeXml produces, in one pass (so "&amp;lt;" → "&lt;").
    return _XML_ENTITY.sub(lambda m: _XML_ENTITIES[m.group(0)], text)


def content_text(content: Any) -> str:
    """The text of an OpenAI message ``content`` (a string, null, or a list of parts)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            part["text"]
            for part in content
            if isinstance(part, dict) and isinstance(part.get("text"), str)
        )
    return ""


Role = Literal["user", "assistant", "tool"]
"""What a message is to the script: a user turn, a model reply, or one tool result."""


def read_conversation(request_body: Mapping[str, Any]) -> Conversation:
    """Extract prompt, messages, listed and delivered skills, cwd, turn and step
    from an OpenAI chat-completions request (the other wires have their own readers)."""
    raw_messages = request_body.get("messages")
    if not isinstance(raw_messages, list):
        raw_messages = []
    system_parts: list[str] = []
    entries: list[tuple[Role, str]] = []
    for message in (m for m in raw_messages if isinstance(m, dict)):
        role = message.get("role")
        text = content_text(message.get("content"))
        if role in ("system", "developer"):
            system_parts.append(text)
        elif role == "user":
            entries.append(("user", text))
        elif role == "assistant":
            entries.append(("assistant", ""))
        elif role == "tool":
            entries.append(("tool", text))
    return build_conversation(system_parts, entries)


def build_conversation(system_parts: Sequence[str], entries: Iterable[tuple[Role, str]]) -> Conversation:
    """The :class:`Conversation` of a system prompt and the messages in request order.

    Each wire module reads its own request shape into these entries: one ``assistant``
    entry per model reply, one ``tool`` entry per tool result, one ``user`` entry per
    user message (the turns of the script).
    """
    user_messages: list[str] = []
    tool_results: list[str] = []
    latest_tool_results: list[str] = []
    step = 0
    for role, text in entries:
        if role == "user":
            user_messages.append(text)
            step = 0
            latest_tool_results = []
        elif role == "assistant":
            step += 1
            latest_tool_results = []
        elif role == "tool":
            tool_results.append(text)
            latest_tool_results.append(text)
    system_prompt = "\n\n".join(system_parts)
    skills: list[ListedSkill] = []
    for block in _AVAILABLE_SKILLS.findall(system_prompt):
        skills.extend(
            ListedSkill(*(_unescape_xml(value) for value in entry))
            for entry in _SKILL_ENTRY.findall(block)
        )
    cwd_matches = _CWD.findall(system_prompt)
    delivered = tuple(
        DeliveredSkill(name, location)
        for message in user_messages
        for name, location in _DELIVERED.findall(message)
    )
    return Conversation(
        system_prompt=system_prompt,
        user_messages=tuple(user_messages),
        tool_results=tuple(tool_results),
        latest_tool_results=tuple(latest_tool_results),
        skills=tuple(skills),
        delivered=delivered,
        cwd=cwd_matches[-1].replace("\\", "/") if cwd_matches else None,
        turn=len(user_messages),
        step=step,
    )
