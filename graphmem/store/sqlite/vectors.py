"""Vector search in the SQLite store: one float32 matrix per (table, group) held in memory and
brought up to date by reading the group's new rows only; exact top-k, with a sign-bit
prefilter above a size. Deletions, this connection's or another's (a new ``vector_epoch``),
drop the matrices they make stale."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from .._base import Vector
from .._vectors import VectorMatrix

if TYPE_CHECKING:
    from .db import SQLiteDB

__all__ = ["VectorIndex", "VectorLimits", "hamming", "pack_signs"]


@dataclass(frozen=True)
class VectorLimits:
    """Read at each search (``graphmem.store.sqlite`` holds the values, which tests and benches
    change there)."""

    exact_rows: int  # top-k is exact up to this many rows, sign-bit prefiltered above
    oversample: int  # candidates per wanted row for the exact rescoring above exact_rows
    min_candidates: int
    cache_rows: int  # vectors held across groups beside the one being searched


def pack_signs(matrix: np.ndarray) -> np.ndarray:
    """Rows' sign bits packed as (dimensions / 64, rows) uint64: one array per word, so that the
    Hamming distance is a few vectorised XOR + popcount passes."""
    packed = np.packbits(matrix > 0, axis=1)
    return np.ascontiguousarray(packed.view(np.uint64).T)


def hamming(bits: np.ndarray, query: np.ndarray) -> np.ndarray:
    distance: np.ndarray = np.bitwise_count(bits[0] ^ query[0]).astype(np.uint16)
    for word in range(1, bits.shape[0]):
        distance += np.bitwise_count(bits[word] ^ query[word])
    return distance


class VectorIndex:
    def __init__(self, db: SQLiteDB, limits: Callable[[], VectorLimits]) -> None:
        self._db = db
        self._limits = limits
        self.matrices: dict[tuple[str, str], VectorMatrix] = {}
        self._data_version = -1
        # Packed sign bits of the large matrices: (id of the matrix, rows packed, bits).
        self._bits: dict[tuple[str, str], tuple[int, int, np.ndarray]] = {}

    def clear(self) -> None:
        """Drop every matrix (after this connection deleted rows, or closed)."""
        self.matrices.clear()

    def _sync(self) -> None:
        version = self._db.data_version()
        if version != self._data_version:
            # Another connection committed: deletions may have happened there.
            epoch = self._db.get_meta("vector_epoch") or ""
            for key in list(self.matrices):
                if self.matrices[key].epoch != epoch:
                    del self.matrices[key]
            self._data_version = version

    def _matrix(
        self, table: str, group_id: str, dim: int, limits: VectorLimits
    ) -> VectorMatrix:
        key = (table, group_id)
        cache = self.matrices.get(key)
        if cache is None or cache.dim != dim:
            cache = VectorMatrix(dim=dim, epoch=self._db.get_meta("vector_epoch") or "")
            self.matrices[key] = cache
        seen = (self._data_version, self._db.write_count)
        if cache.seen == seen:
            return cache  # nothing committed since the last look
        # The group's new rows only, through its (group_id) index in rowid order: other
        # groups' rows are never read. Read in batches into a buffer sized first, so a first
        # load of 1M vectors does not hold every fetched row at once.
        start = cache.high_rowid
        (count,) = self._db.execute(
            f"SELECT count(*) FROM {table} INDEXED BY {table}_group "
            "WHERE group_id = ? AND rowid > ?",
            (group_id, start),
        ).fetchone()
        cache.reserve(int(count))
        cursor = self._db.execute(
            f"SELECT rowid, id, embedding FROM {table} INDEXED BY {table}_group "
            "WHERE group_id = ? AND rowid > ? ORDER BY rowid",
            (group_id, start),
        )
        while batch := cursor.fetchmany(20_000):
            # Blobs of any format (``_vectors``); another dimension's are skipped there.
            cache.append([(r[0], r[1], r[2]) for r in batch if r[2] is not None])
            cache.high_rowid = max(cache.high_rowid, batch[-1][0])
        cache.seen = seen
        self._evict(key, limits.cache_rows)
        return cache

    def _evict(self, keep: tuple[str, str], cache_rows: int) -> None:
        """Hold room for at most ``cache_rows`` vectors: the least recently searched
        groups' matrices go first (never the one being searched), so memory follows the group
        being searched and a few recent ones, not the store."""
        self.matrices[keep] = self.matrices.pop(keep)  # most recent last
        held = sum(m.capacity for m in self.matrices.values())
        for key in list(self.matrices):
            if held <= cache_rows or key == keep:
                break
            held -= self.matrices.pop(key).capacity
            self._bits.pop(key, None)

    def search(self, table: str, group_id: str, vector: Vector, n: int) -> list[tuple[str, float]]:
        """Top ``n`` rows by cosine. Exact up to ``exact_rows`` rows; above, the rows' sign bits
        (48 bytes a row at 384 dimensions, 32x less memory to read) pick ``oversample`` x n
        (at least ``min_candidates``) candidates by Hamming distance, which are then scored exactly.

        The products use numpy's own single-threaded loop, not BLAS: on a busy machine a
        multi-threaded BLAS call waits for a second core (measured p95 16 ms for 10k rows).
        """
        limits = self._limits()
        with self._db.lock:
            self._sync()
            cache = self._matrix(table, group_id, vector.shape[0], limits)
            ids, matrix = cache.ids, cache.matrix()
            bits = self._sign_bits((table, group_id), cache, matrix, limits.exact_rows)
        # The products run outside the lock (numpy releases the GIL): full-text queries of the
        # same recall proceed on the connection meanwhile.
        rows = min(len(ids), matrix.shape[0])
        if rows == 0 or n <= 0:
            return []
        query = np.array(vector, dtype=np.float32)  # an own, aligned copy
        # The rows are unit vectors (``VectorMatrix``); a unit query makes the products cosines.
        norm = float(np.linalg.norm(query))
        if norm > 0:
            query /= norm
        if bits is None:
            scores = np.einsum("ij,j->i", matrix[:rows], query)
            candidates = None
        else:
            distance = hamming(bits[:, :rows], pack_signs(query[None, :])[:, 0])
            want = min(rows, max(limits.oversample * n, limits.min_candidates))
            counts = np.cumsum(np.bincount(distance, minlength=distance.max(initial=0) + 1))
            cut = int(np.searchsorted(counts, want))
            candidates = np.flatnonzero(distance <= cut)
            scores = np.einsum("ij,j->i", matrix[candidates], query)
        k = min(n, scores.shape[0])
        best = np.argpartition(-scores, k - 1)[:k] if k < scores.shape[0] else np.arange(k)
        best = best[np.argsort(-scores[best], kind="stable")]
        rows_of = best if candidates is None else candidates[best]
        return [(ids[int(r)], float(scores[b])) for r, b in zip(rows_of, best, strict=True)]

    def _sign_bits(
        self, key: tuple[str, str], cache: VectorMatrix, matrix: Vector, exact_rows: int
    ) -> np.ndarray | None:
        """Packed sign bits of a large matrix, (words, rows) uint64, extended as rows append."""
        if matrix.shape[0] <= exact_rows or matrix.shape[1] % 64:
            return None
        store = self._bits
        held = store.get(key)
        if held is not None and held[0] == id(cache) and held[1] == matrix.shape[0]:
            return held[2]
        start = held[1] if held is not None and held[0] == id(cache) else 0
        fresh = pack_signs(matrix[start:])
        bits = fresh if start == 0 or held is None else np.hstack([held[2], fresh])
        store[key] = (id(cache), matrix.shape[0], np.ascontiguousarray(bits))
        return store[key][2]
