"""Exact top-k over a cached float32 matrix (measured fastest here for ≤1M × 384 on 2 cores)."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

__all__ = ["VectorMatrix", "from_blob", "to_blob", "top_k"]

Vector = npt.NDArray[np.float32]


def to_blob(vector: Vector | None) -> bytes | None:
    if vector is None:
        return None
    return np.ascontiguousarray(vector, dtype=np.float32).tobytes()


def from_blob(blob: bytes | None) -> Vector | None:
    if blob is None:
        return None
    return np.frombuffer(blob, dtype=np.float32)


def top_k(matrix: Vector, query: Vector, n: int) -> list[tuple[int, float]]:
    """Row indices and cosine scores of the ``n`` best rows (rows and query are unit vectors)."""
    if matrix.shape[0] == 0 or n <= 0:
        return []
    scores = matrix @ query
    n = min(n, scores.shape[0])
    idx = np.argpartition(-scores, n - 1)[:n] if n < scores.shape[0] else np.arange(scores.shape[0])
    idx = idx[np.argsort(-scores[idx], kind="stable")]
    return [(int(i), float(scores[i])) for i in idx]


@dataclass
class VectorMatrix:
    """Rows appended in rowid order; rebuilt whole when rows are deleted."""

    dim: int
    ids: list[str] = field(default_factory=list)
    high_rowid: int = 0
    epoch: str = ""
    seen: tuple[int, int] = (-1, -1)
    _chunks: list[Vector] = field(default_factory=list)
    _matrix: Vector | None = None

    def append(self, rows: list[tuple[int, str, bytes]]) -> None:
        if not rows:
            return
        block = np.frombuffer(b"".join(blob for _, _, blob in rows), dtype=np.float32)
        block = block.reshape(len(rows), self.dim)
        self._chunks.append(block)
        self.ids.extend(fact_id for _, fact_id, _ in rows)
        self.high_rowid = max(self.high_rowid, rows[-1][0])
        self._matrix = None

    def matrix(self) -> Vector:
        if self._matrix is None:
            if not self._chunks:
                self._matrix = np.zeros((0, self.dim), dtype=np.float32)
            else:
                self._matrix = np.ascontiguousarray(np.vstack(self._chunks))
                self._chunks = [self._matrix]
        return self._matrix
