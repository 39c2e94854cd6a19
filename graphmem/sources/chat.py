"""Chat messages: OpenAI-style and LangChain message dicts, recognised and read."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from .records import Invalid, json_type
from .times import CHAT_TIME_KEYS, find_time

__all__ = ["chat_message", "looks_like_chat", "looks_like_message"]

_ROLE_ALIASES = {
    "human": "user",
    "user": "user",
    "ai": "assistant",
    "assistant": "assistant",
    "system": "system",
    "developer": "developer",
    "tool": "tool",
    "function": "function",
}
_LANGCHAIN_TYPES = (
    "human", "ai", "system", "tool", "function", "chat", "generic",
    "HumanMessage", "AIMessage", "SystemMessage", "ToolMessage", "FunctionMessage",
    "ChatMessage",
)
_SKIPPED_ROLES = ("system", "developer")


def looks_like_message(item: Any) -> bool:
    if not isinstance(item, dict):
        return False
    if "role" in item and ("content" in item or "tool_calls" in item):
        return True
    kind = item.get("type")
    return kind in _LANGCHAIN_TYPES and ("data" in item or "content" in item)


def looks_like_chat(data: Any) -> bool:
    if isinstance(data, dict):
        return isinstance(data.get("messages"), list)
    if isinstance(data, list) and data:
        return all(looks_like_message(item) for item in data)
    return False


def _message_text(content: Any, where: str) -> str | None:
    if content is None:
        return None
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # OpenAI content parts
        parts: list[str] = []
        for i, part in enumerate(content):
            if isinstance(part, str):
                parts.append(part)
            elif isinstance(part, dict) and isinstance(part.get("text"), str):
                parts.append(part["text"])
            elif isinstance(part, dict) and part.get("type") not in (None, "text"):
                continue  # images, audio: not memory text
            else:
                raise Invalid(f"{where}.content[{i}]", "expected a text part")
        return "\n".join(parts)
    raise Invalid(f"{where}.content", f"expected a string, got {json_type(content)}")


def chat_message(item: Any, where: str, names: Mapping[str, str],
                  assume_utc: bool) -> tuple[str, str, str, datetime | None] | None:
    """(role, speaker, text, time) of a chat message, or None when it is skipped."""
    if not isinstance(item, dict):
        raise Invalid(where, f"expected a message object, got {json_type(item)}")
    body: Mapping[str, Any] = item
    prefix = where
    if "role" not in item and isinstance(item.get("data"), dict):  # LangChain messages_to_dict
        body = item["data"]
        prefix = f"{where}.data"
    raw_role = item.get("role") or body.get("role")
    if raw_role is None:
        raw_role = item.get("type") or body.get("type")
    if not isinstance(raw_role, str) or not raw_role.strip():
        raise Invalid(f"{where}.role", "missing (expected user, assistant, human, ai, ...)")
    role_key = raw_role.strip()
    for suffix in ("MessageChunk", "Message"):
        if role_key.endswith(suffix) and role_key != suffix:
            role_key = role_key[: -len(suffix)]
    role = _ROLE_ALIASES.get(role_key.lower(), role_key.lower())
    if role in ("chat", "generic") and isinstance(body.get("role"), str):
        role = _ROLE_ALIASES.get(body["role"].lower(), body["role"].lower())
    if role in _SKIPPED_ROLES:
        return None
    if "content" not in body:
        if body.get("tool_calls") or body.get("function_call"):
            return None
        raise Invalid(f"{prefix}.content", "missing")
    text = _message_text(body.get("content"), prefix)
    if text is None or not text.strip():
        if body.get("tool_calls") or body.get("function_call"):
            return None
        raise Invalid(f"{prefix}.content", "is empty")
    name = body.get("name") or item.get("name")
    if name is not None and (not isinstance(name, str) or not name.strip()):
        raise Invalid(f"{prefix}.name", "must be a non-empty string")
    speaker = (name or names.get(role) or names.get(role_key.lower()) or role).strip()
    when = find_time(item, CHAT_TIME_KEYS, assume_utc, f"{where}.")
    if when is None and body is not item:
        when = find_time(body, CHAT_TIME_KEYS, assume_utc, f"{prefix}.")
    if when is None:
        extra = body.get("additional_kwargs") or body.get("response_metadata")
        if isinstance(extra, dict):
            when = find_time(extra, CHAT_TIME_KEYS, assume_utc, f"{prefix}.")
    return role, speaker, text.strip(), when
