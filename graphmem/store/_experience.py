"""The experience index a store keeps beside each experience episode: what recall ranks by
(time, success, text terms, field values), written with the episode and read back by column,
so a new process ranks a group's attempts without re-reading their records.

The experience stage computes an ``ExperienceEntry`` from the record; the store persists it
and answers the column reads below. ``seq`` is the store's arrival order of indexed attempts
(never reused), so a reader that holds rows up to some ``seq`` reads only what came after.
"""

from __future__ import annotations

import json
import struct
from dataclasses import dataclass, field
from typing import Any

__all__ = ["ExperienceCounts", "ExperienceEntry", "pack_values", "unpack_values"]


@dataclass
class ExperienceEntry:
    """One attempt as the index holds it. ``terms``: text term -> count; ``values``: every
    filterable path (``state.object_pos``, ``meta.seed``) -> its values (a vector's numbers in
    order); ``success``: 1, 0, or -1 when the record has no success flag."""

    success: int
    terms: dict[str, int] = field(default_factory=dict)
    values: dict[str, list[Any]] = field(default_factory=dict)

    @property
    def length(self) -> int:
        return sum(self.terms.values())


@dataclass(frozen=True)
class ExperienceCounts:
    """Enough to tell a reader holding ``indexed`` rows up to ``last_seq`` what changed:
    rows after it were added; fewer in all than it holds plus those means some were removed;
    ``episodes`` above ``indexed`` means attempts written without an entry (an import, an older
    graphmem) wait to be indexed."""

    indexed: int
    last_seq: int
    episodes: int


def pack_values(values: list[Any]) -> bytes | str:
    """A path's values as stored: numbers (no booleans) as little-endian float64 bytes when
    each survives the trip, anything else as JSON text."""
    numeric = bool(values) and all(
        isinstance(v, int | float) and not isinstance(v, bool) and float(v) == v
        and (not isinstance(v, int) or abs(v) <= 2**53)
        for v in values
    )
    if numeric:
        return struct.pack(f"<{len(values)}d", *values)
    return json.dumps(values, ensure_ascii=False, separators=(",", ":"))


def unpack_values(data: bytes | str) -> list[Any]:
    """``pack_values`` undone (numbers come back as floats)."""
    if isinstance(data, bytes | bytearray | memoryview):
        raw = bytes(data)
        return list(struct.unpack(f"<{len(raw) // 8}d", raw))
    loaded: list[Any] = json.loads(data)
    return loaded
