"""The prompt around the answer: the chat messages for one episode (known facts as short
aliases, a few earlier episodes, the episode), a token estimate, and the repair call's turn."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import UTC, datetime

from ..._models import EpisodeRecord
from .._base import ExtractionContext
from .answer import InvalidAnswer
from .prompts import Prompt

__all__ = ["ContextLimits", "build_messages", "clip", "estimate_tokens", "repair_message"]

log = logging.getLogger("graphmem")


@dataclass(frozen=True)
class ContextLimits:
    """Caps on what goes into the prompt besides the episode (small models, small windows)."""

    max_facts: int = 20
    max_fact_chars: int = 3000
    max_previous: int = 3
    max_previous_chars: int = 1500
    max_episode_chars: int = 24000


def _iso(when: datetime) -> str:
    text = when.astimezone(UTC).isoformat().replace("+00:00", "Z")
    return text.replace(".000Z", "Z")


def clip(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: max(0, limit - 1)] + "…"


def build_messages(
    prompt: Prompt,
    episode: EpisodeRecord,
    context: ExtractionContext,
    limits: ContextLimits | None = None,
) -> tuple[list[dict[str, str]], dict[str, str]]:
    """The chat messages for one episode, and the short fact aliases (``F1`` → fact id) used."""
    limits = limits or ContextLimits()
    aliases: dict[str, str] = {}
    lines: list[str] = []
    used = 0
    for fact in context.facts[: limits.max_facts]:
        alias = f"F{len(aliases) + 1}"
        since = fact.valid_from.date().isoformat()
        until = f" until {fact.valid_to.date().isoformat()}" if fact.valid_to else ""
        line = f"[{alias}] ({fact.predicate}) {clip(fact.statement, 200)} since {since}{until}"
        if used + len(line) > limits.max_fact_chars:
            break
        aliases[alias] = fact.id
        lines.append(line)
        used += len(line) + 1
    known = "\n".join(lines) or "(none)"

    previous: list[str] = []
    used = 0
    recent = context.previous[-limits.max_previous :] if limits.max_previous > 0 else []
    for earlier in reversed(recent):
        line = f"- {_iso(earlier.reference_time)}: {clip(earlier.content, 400)}"
        if used + len(line) > limits.max_previous_chars:
            break
        previous.insert(0, line)
        used += len(line) + 1
    content = episode.content
    if len(content) > limits.max_episode_chars:
        log.warning(
            "graphmem: episode %s is %d characters; the prompt carries the first %d",
            episode.id,
            len(content),
            limits.max_episode_chars,
        )
        content = content[: limits.max_episode_chars]
    functional = [p.name for p in context.predicates if p.cardinality == "one"]
    messages = prompt.render(
        speaker=context.speaker,
        reference_time=_iso(episode.reference_time),
        functional_predicates=", ".join(functional) or "(none)",
        known_facts=known,
        previous="\n".join(previous) or "(none)",
        episode=content,
    )
    return messages, aliases


def estimate_tokens(messages: list[dict[str, str]], extra_chars: int = 0) -> int:
    """About four characters a token, plus a few tokens of framing per message."""
    chars = sum(len(m.get("content") or "") for m in messages) + extra_chars
    return chars // 4 + 4 * len(messages) + 1


def repair_message(error: InvalidAnswer) -> str:
    """The user turn of the repair call: what was wrong, and what to do."""
    if error.truncated:
        return (
            "Your answer was cut off before the JSON was complete. Answer again with the complete "
            "JSON object only: fewer, shorter facts; short statements and evidence."
        )
    return (
        f"Your answer could not be used: {error}\n"
        'Answer again with only the JSON object: {"entities": [...], "facts": [...]}, every '
        "field as described. No other text."
    )
