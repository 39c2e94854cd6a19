"""Embeddings at rest, and exact top-k over a cached float32 matrix (measured fastest here for
≤1M × 384 on 2 cores).

**Blob formats** (the SQLite store's ``embedding`` columns). A blob says its own format, so a
store may hold several and stores written before compact blobs still read:

- *float32* (every blob before compact blobs, and any vector the others cannot hold: non-finite
  values, more than 65,535 dimensions): the raw little-endian floats, ``4 x dim`` bytes.
- *compact*: a 6-byte header — ``code, 0x8F, 0xC3, 0x7F`` (read as a float32, a NaN, which no
  stored embedding starts with) and the dimension as a little-endian uint16 — then:

  - ``INT8`` (2): a float32 scale, then ``dim`` int8 values; value = int8 x scale, scale =
    max |x| / 127. ``10 + dim`` bytes (394 at 384 dimensions, 3.9x less than float32).
  - ``SPARSE_INT8`` (3): the same scale, a bitmap of the non-zero positions (``ceil(dim / 8)``
    bytes, least significant bit first), then the non-zero int8 values in position order.
    Chosen instead of ``INT8`` whenever it is smaller: the hashed n-gram vectors of the default
    embedder have a few dozen non-zero slots out of 384 (a fact's statement: about 90 bytes).
  - ``FLOAT16`` (1): ``dim`` IEEE half floats (``6 + 2 x dim`` bytes), for when int8 is judged
    too coarse; not the default.

``to_blob`` writes ``DEFAULT_FORMAT`` ("int8": ``INT8`` or ``SPARSE_INT8``). Re-encoding a
decoded vector gives the same blob (so export → import → export is exact). ``quantize`` is
what a vector becomes once stored: the Neo4j store keeps that (as a float list, which its
vector index needs) so that both stores rank and export alike. Searches decode into one float32
matrix per group (``VectorMatrix``): search speed is the same for every format, only loading
decodes (``bench/storage.py`` measures both, and the recall quality against float32).
"""

from __future__ import annotations

import struct
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

import numpy as np
import numpy.typing as npt

__all__ = [
    "DEFAULT_FORMAT",
    "FORMATS",
    "VectorMatrix",
    "blob_dim",
    "decode_rows",
    "from_blob",
    "quantize",
    "to_blob",
    "top_k",
]

Vector = npt.NDArray[np.float32]
Format = Literal["float32", "float16", "int8"]
FORMATS: tuple[Format, ...] = ("float32", "float16", "int8")
DEFAULT_FORMAT: Format = "int8"

FLOAT16, INT8, SPARSE_INT8 = 1, 2, 3
_MAGIC = b"\x8f\xc3\x7f"  # bytes 1-3 of the header: with byte 0, a float32 NaN
_HEAD = 6  # code, magic, uint16 dim
_SCALED = _HEAD + 4  # then a float32 scale (INT8, SPARSE_INT8)
_MAX_DIM = 0xFFFF


def _bitmap_bytes(dim: int) -> int:
    return (dim + 7) // 8


def _header(code: int, dim: int) -> bytes:
    return bytes((code,)) + _MAGIC + struct.pack("<H", dim)


def _head(blob: bytes) -> tuple[int, int]:
    """``(code, dim)``: code 0 for a raw float32 blob."""
    if len(blob) >= _HEAD and blob[1:4] == _MAGIC and blob[0] in (FLOAT16, INT8, SPARSE_INT8):
        return blob[0], struct.unpack_from("<H", blob, 4)[0]
    return 0, len(blob) // 4


def blob_dim(blob: bytes) -> int:
    """The number of dimensions a blob holds (any format)."""
    return _head(blob)[1]


def _int8(x: npt.NDArray[np.float32]) -> tuple[np.float32, npt.NDArray[np.int8]]:
    """Scale and int8 values of ``x`` (finite). When ``x`` already is a decoded int8 vector the
    same scale and values come back, so storing a vector twice changes nothing."""
    peak = float(np.max(np.abs(x))) if x.size else 0.0
    if peak == 0.0:
        return np.float32(0.0), np.zeros(x.shape, dtype=np.int8)
    scale = np.float32(peak / 127.0)
    q = np.clip(np.rint(x / scale), -127, 127)
    miss = float(np.max(np.abs(q.astype(np.float32) * scale - x)))
    if 0.0 < miss < float(scale) * 1e-3:
        # A decoded vector whose scale ``peak / 127`` missed the stored one by an ulp.
        for near in (np.nextafter(scale, np.float32(0)), np.nextafter(scale, np.float32(np.inf))):
            candidate = np.clip(np.rint(x / near), -127, 127)
            if np.array_equal(candidate.astype(np.float32) * near, x):
                scale, q = near, candidate
                break
    return scale, q.astype(np.int8)


def to_blob(vector: Vector | None, fmt: Format | None = None) -> bytes | None:
    """The blob a vector is stored as (see the module docstring); ``fmt`` defaults to
    ``DEFAULT_FORMAT``, read at each call (``bench/storage.py`` sets it to compare formats)."""
    if vector is None:
        return None
    fmt = fmt or DEFAULT_FORMAT
    x = np.ascontiguousarray(vector, dtype=np.float32).reshape(-1)
    dim = int(x.shape[0])
    if fmt == "float32" or dim > _MAX_DIM or not np.isfinite(x).all():
        return x.astype("<f4", copy=False).tobytes()
    if fmt == "float16":
        if dim and float(np.max(np.abs(x))) > 65504.0:  # beyond half floats: keep float32
            return x.astype("<f4", copy=False).tobytes()
        half: bytes = x.astype("<f2").tobytes()
        return _header(FLOAT16, dim) + half
    if fmt != "int8":
        raise ValueError(f"unknown embedding format {fmt!r} (expected one of {FORMATS})")
    scale, q = _int8(x)
    scale_bytes = struct.pack("<f", float(scale))
    nonzero = q != 0
    nnz = int(nonzero.sum())
    nb = _bitmap_bytes(dim)
    if nb + nnz < dim:
        bitmap: bytes = np.packbits(nonzero, bitorder="little").tobytes()
        values: bytes = q[nonzero].tobytes()
        return _header(SPARSE_INT8, dim) + scale_bytes + bitmap + values
    return _header(INT8, dim) + scale_bytes + q.tobytes()


def _corrupt(blob: bytes, code: int, dim: int) -> ValueError:
    return ValueError(f"corrupt embedding blob ({len(blob)} bytes, format {code}, dim {dim})")


def from_blob(blob: bytes | None) -> Vector | None:
    """The float32 vector a blob holds (any format)."""
    if blob is None:
        return None
    code, dim = _head(blob)
    if code == 0:
        return np.frombuffer(blob, dtype="<f4").astype(np.float32)
    if code == FLOAT16:
        if len(blob) != _HEAD + 2 * dim:
            raise _corrupt(blob, code, dim)
        return np.frombuffer(blob, dtype="<f2", offset=_HEAD).astype(np.float32)
    if len(blob) < _SCALED:
        raise _corrupt(blob, code, dim)
    (scale,) = struct.unpack_from("<f", blob, _HEAD)
    if code == INT8:
        if len(blob) != _SCALED + dim:
            raise _corrupt(blob, code, dim)
        values = np.frombuffer(blob, dtype=np.int8, offset=_SCALED).astype(np.float32)
        return values * np.float32(scale)
    nb = _bitmap_bytes(dim)
    bits = np.frombuffer(blob, dtype=np.uint8, count=nb, offset=_SCALED)
    mask = np.unpackbits(bits, bitorder="little", count=dim).astype(bool)
    values = np.frombuffer(blob, dtype=np.int8, offset=_SCALED + nb)
    if len(blob) < _SCALED + nb or values.shape[0] != int(mask.sum()):
        raise _corrupt(blob, code, dim)
    out = np.zeros(dim, dtype=np.float32)
    out[mask] = values
    out *= np.float32(scale)
    return out


def quantize(vector: Vector | None, fmt: Format | None = None) -> Vector | None:
    """``vector`` as stored: what ``from_blob(to_blob(vector))`` gives back."""
    return from_blob(to_blob(vector, fmt))


def _classify(
    blobs: Sequence[bytes], lengths: npt.NDArray[np.int64]
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    """Each blob's format code (0: raw float32) and, for compact ones, its header's dimension:
    from the first 6 bytes of each blob only."""
    n = len(blobs)
    code = np.zeros(n, dtype=np.int64)
    dims = np.zeros(n, dtype=np.int64)
    rows = np.flatnonzero(lengths >= _HEAD)
    if not rows.size:
        return code, dims
    head = np.frombuffer(
        b"".join([blobs[i][:_HEAD] for i in rows.tolist()]), dtype=np.uint8
    ).reshape(-1, _HEAD)
    compact = (head[:, 1:4] == np.frombuffer(_MAGIC, dtype=np.uint8)).all(axis=1) & np.isin(
        head[:, 0], (FLOAT16, INT8, SPARSE_INT8)
    )
    code[rows[compact]] = head[compact, 0]
    dims[rows[compact]] = head[compact, 4].astype(np.int64) | (
        head[compact, 5].astype(np.int64) << 8
    )
    return code, dims


def decode_rows(blobs: Sequence[bytes], dim: int) -> tuple[Vector, npt.NDArray[np.bool_]]:
    """The vectors of ``dim`` dimensions among ``blobs`` (any mix of formats) as one
    ``(kept, dim)`` float32 matrix, and which blobs they are (a blob of another dimension — a
    store re-embedded under another embedder — or a damaged one is left out).

    Vectorised: the blobs are joined once and classified, checked and decoded by numpy passes
    over the whole batch, not by a Python loop per row (loading a group's vectors stays about
    as cheap as for raw float32 blobs)."""
    n = len(blobs)
    if n == 0:
        return np.empty((0, dim), dtype=np.float32), np.zeros(0, dtype=bool)
    lengths = np.fromiter(map(len, blobs), dtype=np.int64, count=n)
    code, compact_dim = _classify(blobs, lengths)
    nb = _bitmap_bytes(dim)
    expected = np.select(
        [code == 0, code == FLOAT16, code == INT8],
        [np.full(n, 4 * dim), np.full(n, _HEAD + 2 * dim), np.full(n, _SCALED + dim)],
        default=-1,
    )
    keep = (lengths == expected) & ((code == 0) | (compact_dim == dim))
    out = np.empty((n, dim), dtype=np.float32)
    for c in (0, FLOAT16, INT8):
        rows = np.flatnonzero(keep & (code == c))
        if not rows.size:
            continue
        whole = rows.size == n
        block = np.frombuffer(
            b"".join(blobs if whole else [blobs[i] for i in rows.tolist()]), dtype=np.uint8
        ).reshape(rows.size, -1)
        at = slice(None) if whole else rows
        if c == 0:
            out[at] = block.view("<f4")
        elif c == FLOAT16:
            out[at] = block[:, _HEAD:].copy().view("<f2")
        else:
            scale = block[:, _HEAD:_SCALED].copy().view("<f4")
            out[at] = block[:, _SCALED:].view(np.int8) * scale
    sparse = np.flatnonzero(
        (code == SPARSE_INT8) & (compact_dim == dim) & (lengths >= _SCALED + nb)
    )
    if sparse.size:
        part = [blobs[i] for i in sparse.tolist()] if sparse.size < n else list(blobs)
        joined = np.frombuffer(b"".join(part), dtype=np.uint8)
        starts = np.zeros(sparse.size, dtype=np.int64)
        np.cumsum(lengths[sparse][:-1], out=starts[1:])
        bits = joined[starts[:, None] + np.arange(_SCALED, _SCALED + nb)]
        mask = np.unpackbits(bits, axis=1, bitorder="little", count=dim).astype(bool)
        nnz = lengths[sparse] - _SCALED - nb
        good = mask.sum(axis=1) == nnz
        if not good.all():
            sparse, mask, nnz, starts = sparse[good], mask[good], nnz[good], starts[good]
        keep[sparse] = True
        # The rows' values, gathered in order, fill the set bits of the stacked bitmaps in
        # row-major order.
        first = starts + _SCALED + nb
        before = np.cumsum(nnz) - nnz
        at_byte = np.arange(int(nnz.sum()), dtype=np.int64) + np.repeat(first - before, nnz)
        scale = joined[starts[:, None] + np.arange(_HEAD, _SCALED)].copy().view("<f4")
        if sparse.size == n:  # the usual case: decode in place
            out[:] = 0.0
            out[mask] = joined[at_byte].view(np.int8)
            out *= scale
        else:
            dense = np.zeros((sparse.size, dim), dtype=np.float32)
            dense[mask] = joined[at_byte].view(np.int8)
            out[sparse] = dense * scale
    return (out if keep.all() else out[keep]), keep


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
    """Rows appended in rowid order into one preallocated float32 buffer; rebuilt whole when
    rows are deleted.

    ``reserve`` before a large load makes the buffer the only copy of the vectors: the rows
    arrive in batches, each decoded (``decode_rows``) and copied into place, so loading 1M × 384
    vectors peaks at about the matrix's own size plus one batch instead of the fetched rows and
    a stacked copy at once.
    Appends beyond the capacity grow it by a quarter (a copy, not a doubling of memory).
    """

    dim: int
    ids: list[str] = field(default_factory=list)
    high_rowid: int = 0
    epoch: str = ""
    seen: tuple[int, int] = (-1, -1)
    _buffer: Vector | None = None
    _rows: int = 0

    def reserve(self, extra: int) -> None:
        """Room for ``extra`` more rows."""
        need = self._rows + extra
        capacity = 0 if self._buffer is None else self._buffer.shape[0]
        if need <= capacity:
            return
        # Small first: a store of many small groups holds one matrix per group searched.
        grown = np.empty((max(need, capacity + capacity // 4, 64), self.dim), dtype=np.float32)
        if self._buffer is not None and self._rows:
            grown[: self._rows] = self._buffer[: self._rows]
        self._buffer = grown

    def append(self, rows: list[tuple[int, str, bytes]]) -> None:
        """Rows ``(rowid, id, blob)`` in rowid order, blobs of any format; a blob of another
        dimension (a store re-embedded under another embedder) is skipped (``decode_rows``)."""
        if not rows:
            return
        self.high_rowid = max(self.high_rowid, rows[-1][0])
        block, keep = decode_rows([blob for _, _, blob in rows], self.dim)
        if not block.shape[0]:
            return
        self.reserve(block.shape[0])
        assert self._buffer is not None
        place = self._buffer[self._rows : self._rows + block.shape[0]]
        place[:] = block
        # Unit rows, so that a product is the cosine Neo4j's vector index scores: a quantized
        # row is a unit vector only up to its rounding, and products of such rows ordered
        # near-ties unlike the Neo4j store (bench/side_by_side.py: 13 of 495 LoCoMo questions).
        norms = np.linalg.norm(place, axis=1, keepdims=True)
        np.divide(place, norms, out=place, where=norms > 0)
        self._rows += block.shape[0]
        self.ids.extend(row[1] for row, kept in zip(rows, keep.tolist(), strict=True) if kept)

    @property
    def capacity(self) -> int:
        """Rows the buffer holds room for (what it costs in memory)."""
        return 0 if self._buffer is None else int(self._buffer.shape[0])

    def matrix(self) -> Vector:
        """The rows so far (a view: later appends write past its end, never into it)."""
        if self._buffer is None:
            return np.zeros((0, self.dim), dtype=np.float32)
        return self._buffer[: self._rows]
