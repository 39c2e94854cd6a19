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
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

__all__ = ["ExperienceCounts", "ExperienceEntry", "ValueColumn", "pack_values", "unpack_values"]


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


@dataclass(frozen=True)
class ValueColumn:
    """One path's stored values over a group's attempts, packed: ``seqs`` (ascending), each
    entry's size in ``data`` (``n`` bytes of float64 numbers, or ``-1 - n`` for ``n`` bytes of
    UTF-8 JSON text) and the entries back to back. A column of 100,000 vectors is three
    buffers, not 100,000 Python objects; ``numbers`` reads it as a matrix."""

    seqs: npt.NDArray[np.int64]
    sizes: npt.NDArray[np.int64]
    data: bytes

    @classmethod
    def from_pairs(cls, pairs: Sequence[tuple[int, Any]]) -> ValueColumn:
        """From (seq, packed value) pairs in ``seq`` order (``pack_values``'s bytes or text)."""
        chunks = [d if isinstance(d, bytes) else str(d).encode() for _, d in pairs]
        sizes = [len(c) if isinstance(d, bytes) else -1 - len(c)
                 for c, (_, d) in zip(chunks, pairs, strict=True)]
        return cls(
            np.asarray([s for s, _ in pairs], dtype=np.int64),
            np.asarray(sizes, dtype=np.int64),
            b"".join(chunks),
        )

    @classmethod
    def concat(cls, parts: Sequence[ValueColumn]) -> ValueColumn:
        parts = [p for p in parts if len(p)]
        if len(parts) == 1:
            return parts[0]
        if not parts:
            return cls(np.zeros(0, np.int64), np.zeros(0, np.int64), b"")
        return cls(
            np.concatenate([p.seqs for p in parts]),
            np.concatenate([p.sizes for p in parts]),
            b"".join(p.data for p in parts),
        )

    def __len__(self) -> int:
        return int(self.seqs.size)

    def _offsets(self) -> npt.NDArray[np.int64]:
        widths = np.where(self.sizes >= 0, self.sizes, -1 - self.sizes)
        return np.concatenate([[0], np.cumsum(widths)]).astype(np.int64)

    def numbers(self, dim: int) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float64]]:
        """(seqs, values) of the entries that are exactly ``dim`` numbers, as an (n, dim)
        float64 matrix (one buffer view, no per-entry object)."""
        width = 8 * dim
        fit = self.sizes == width
        if not fit.any():
            return np.zeros(0, np.int64), np.zeros((0, dim))
        if fit.all():
            flat = np.frombuffer(self.data, dtype="<f8")
            return self.seqs, flat.reshape(-1, dim).astype(np.float64)
        raw = np.frombuffer(self.data, dtype=np.uint8)
        starts = self._offsets()[:-1][fit]
        picked = raw[starts[:, None] + np.arange(width)]
        return self.seqs[fit], picked.view("<f8").reshape(-1, dim).astype(np.float64)

    def pairs(self) -> Iterator[tuple[int, bytes | str]]:
        """(seq, packed value) per entry, as ``unpack_values`` reads them."""
        offsets = self._offsets().tolist()
        for i, (seq, size) in enumerate(zip(self.seqs.tolist(), self.sizes.tolist(),
                                            strict=True)):
            chunk = self.data[offsets[i]:offsets[i + 1]]
            yield seq, (chunk if size >= 0 else chunk.decode())
