"""Where JSON values sit in a document, so problems name the line a record is on."""

from __future__ import annotations

import json
import re
from typing import Any

__all__ = ["Lines", "array_items", "object_members"]

_WS = re.compile(r"[ \t\n\r]*")
_DECODER = json.JSONDecoder()


def _skip_ws(text: str, pos: int) -> int:
    match = _WS.match(text, pos)
    return match.end() if match else pos


def array_items(text: str, pos: int) -> list[tuple[int, Any]]:
    """(offset, value) of each item of the JSON array starting at ``pos``."""
    pos = _skip_ws(text, pos)
    if pos >= len(text) or text[pos] != "[":
        return []
    pos = _skip_ws(text, pos + 1)
    out: list[tuple[int, Any]] = []
    if pos < len(text) and text[pos] == "]":
        return out
    while pos < len(text):
        start = pos
        value, pos = _DECODER.raw_decode(text, pos)
        out.append((start, value))
        pos = _skip_ws(text, pos)
        if pos < len(text) and text[pos] == ",":
            pos = _skip_ws(text, pos + 1)
            continue
        break
    return out


def object_members(text: str, pos: int) -> dict[str, int]:
    """Key -> offset of the value, for the JSON object starting at ``pos``."""
    pos = _skip_ws(text, pos)
    out: dict[str, int] = {}
    if pos >= len(text) or text[pos] != "{":
        return out
    pos = _skip_ws(text, pos + 1)
    while pos < len(text) and text[pos] != "}":
        key, pos = _DECODER.raw_decode(text, pos)
        pos = _skip_ws(text, pos)
        pos = _skip_ws(text, pos + 1)  # the colon
        out[str(key)] = pos
        _, pos = _DECODER.raw_decode(text, pos)
        pos = _skip_ws(text, pos)
        if pos < len(text) and text[pos] == ",":
            pos = _skip_ws(text, pos + 1)
    return out


class Lines:
    """Offset -> 1-based line number."""

    def __init__(self, text: str) -> None:
        self.starts = [0]
        for match in re.finditer("\n", text):
            self.starts.append(match.end())

    def line(self, offset: int) -> int:
        lo, hi = 0, len(self.starts)
        while lo + 1 < hi:
            mid = (lo + hi) // 2
            if self.starts[mid] <= offset:
                lo = mid
            else:
                hi = mid
        return lo + 1
