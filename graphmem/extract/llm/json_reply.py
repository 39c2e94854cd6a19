"""Getting one JSON object out of a model's reply: ``<think>`` blocks, code fences, chatter.

Only what is safe is repaired here (reasoning preambles, a Markdown fence, text around the object).
Broken or cut-off JSON is *not* patched up, because a guessed closing bracket would silently
drop facts: the caller asks the model once more instead (the validate-and-repair retry).
"""

from __future__ import annotations

import json
import re
from typing import Any

__all__ = ["AnswerFormatError", "loads_object", "strip_think"]

_THINK_BLOCK = re.compile(r"<(think|thinking|reasoning)>.*?</\1>", re.DOTALL | re.IGNORECASE)
_THINK_OPEN = re.compile(r"<(think|thinking|reasoning)>", re.IGNORECASE)
_THINK_CLOSE = re.compile(r"</(think|thinking|reasoning)>", re.IGNORECASE)
_FENCE = re.compile(r"^```[a-zA-Z0-9_-]*\s*\n?(.*?)\n?```\s*$", re.DOTALL)


class AnswerFormatError(ValueError):
    """The reply holds no usable JSON object; the message says why (shown to the model)."""


def strip_think(text: str) -> str:
    """Remove reasoning blocks: ``<think>…</think>`` anywhere, a dangling ``…</think>`` prefix
    (templates that open the block in the prompt), and an unclosed ``<think>`` tail."""
    text = _THINK_BLOCK.sub("", text)
    closes = list(_THINK_CLOSE.finditer(text))
    if closes:
        text = text[closes[-1].end() :]
    opened = _THINK_OPEN.search(text)
    if opened:
        text = text[: opened.start()]
    return text.strip()


def loads_object(text: str | None) -> Any:
    """The JSON object in a reply, after ``strip_think`` and code-fence removal.

    Raises ``AnswerFormatError`` when there is none.
    """
    if text is None or not text.strip():
        raise AnswerFormatError("the answer was empty")
    body = strip_think(text)
    if not body:
        raise AnswerFormatError("the answer held only reasoning, no JSON object")
    fenced = _FENCE.match(body)
    if fenced:
        body = fenced.group(1).strip()
    try:
        value = json.loads(body)
    except json.JSONDecodeError as first:
        start = body.find("{")
        if start < 0:
            raise AnswerFormatError(f"the answer is not JSON ({first.msg})") from None
        try:
            value, _ = json.JSONDecoder().raw_decode(body, start)
        except json.JSONDecodeError as exc:
            raise AnswerFormatError(
                f"the answer is not valid JSON: {exc.msg} at character {exc.pos}"
            ) from None
    if not isinstance(value, dict):
        raise AnswerFormatError(f"the answer must be a JSON object, not {type(value).__name__}")
    return value
