"""One group's experience index in memory: numpy columns read from the store's persisted index
(``store._experience``), topped up with what was written since, never built from records.

A new process reads a group's fixed columns (time, success, text length) at once; the text
postings and field values it ranks by are read per term and per path, the first time a recall
asks for them, and kept (on SQLite each such column is a pack, a few blobs, plus the rows
written after it: ``store/sqlite/experience.py``). After a write only the new attempts are
read (rows after the last ``seq`` held). Every structure is a numpy array or a dict of a few
of them, so a large group costs its bytes and nothing for Python's garbage collector to walk.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from .._errors import StoreError
from ..store import GraphStore
from ..store._experience import unpack_values
from .entry import experience_entry
from .record import parse_experience

__all__ = ["GroupColumns", "read_group"]

_BACKFILL_CHUNK = 500
_TOPUP_ROWS = 2000  # more new rows than this: cached postings are read again, not topped up

Ints = npt.NDArray[np.int64]
Floats = npt.NDArray[np.float64]


class GroupColumns:
    """A group's indexed attempts, in ``seq`` order (row ``i`` is ``seqs[i]``)."""

    def __init__(self, store: GraphStore, group_id: str) -> None:
        self.store = store
        self.group_id = group_id
        self.token: object = None
        self.last_seq = 0
        self.seqs: Ints = np.zeros(0, dtype=np.int64)
        self.times: Ints = np.zeros(0, dtype=np.int64)
        self.outcomes: npt.NDArray[np.int8] = np.zeros(0, dtype=np.int8)
        self.lengths: Floats = np.zeros(0)
        self.postings: dict[str, tuple[Ints, Floats]] = {}
        self.vectors: dict[tuple[str, int], Floats] = {}
        self.values: dict[str, FilterColumn] = {}

    def __len__(self) -> int:
        return int(self.seqs.size)

    @property
    def nbytes(self) -> int:
        held = self.seqs.nbytes + self.times.nbytes + self.outcomes.nbytes + self.lengths.nbytes
        held += sum(a.nbytes + b.nbytes for a, b in self.postings.values())
        held += sum(v.nbytes for v in self.vectors.values())
        return held + sum(v.nbytes for v in self.values.values())

    # ------------------------------------------------------------------ reading
    def _append_rows(self, rows: Ints) -> None:
        if not len(rows):
            return
        block = np.asarray(rows, dtype=np.int64).reshape(-1, 4)
        if block.shape[0] > 1 and np.any(np.diff(block[:, 0]) < 0):
            block = block[np.argsort(block[:, 0], kind="stable")]
        self.seqs = np.concatenate([self.seqs, block[:, 0]])
        self.times = np.concatenate([self.times, block[:, 1]])
        self.outcomes = np.concatenate([self.outcomes, block[:, 2].astype(np.int8)])
        self.lengths = np.concatenate([self.lengths, block[:, 3].astype(np.float64)])
        self.last_seq = int(self.seqs[-1])

    def _rows_of(self, seqs: Sequence[int] | Ints) -> tuple[Ints, npt.NDArray[np.bool_]]:
        """Row numbers of ``seqs`` and which of them this group holds (a seq read after the
        rows were, or since removed, is not held)."""
        wanted = np.asarray(seqs, dtype=np.int64)
        rows = np.searchsorted(self.seqs, wanted)
        held = rows < self.seqs.size
        held[held] = self.seqs[rows[held]] == wanted[held]
        return rows, held

    def posting(self, term: str) -> tuple[Ints, Floats]:
        """(rows, counts) of the attempts whose text has ``term``."""
        found = self.postings.get(term)
        if found is None:
            pairs = self.store.experience_postings(self.group_id, [term], 0).get(term)
            block = np.asarray(pairs if pairs is not None else [], dtype=np.int64).reshape(-1, 2)
            rows, held = self._rows_of(block[:, 0])
            found = (rows[held], block[held, 1].astype(np.float64))
            self.postings[term] = found
        return found

    def _path_values(self, path: str, after: int = 0) -> list[tuple[int, bytes | str]]:
        """(row, packed values) of the attempts after ``after`` that have ``path`` (those this
        group holds: a seq read after the rows were, or since removed, is not held)."""
        column = self.store.experience_values(self.group_id, path, after)
        rows, held = self._rows_of(column.seqs)
        return [(row, data) for row, keep, (_, data)
                in zip(rows.tolist(), held.tolist(), column.pairs(), strict=True) if keep]

    def _numbers(self, path: str, dim: int, after: int) -> tuple[Ints, Floats]:
        column = self.store.experience_values(self.group_id, path, after)
        seqs, matrix = column.numbers(dim)
        rows, held = self._rows_of(seqs)
        return rows[held], matrix[held]

    def vector(self, path: str, dim: int) -> Floats:
        """Every attempt's value at ``path`` as a row of ``dim`` numbers (NaN: missing, or not
        ``dim`` numbers)."""
        found = self.vectors.get((path, dim))
        if found is None:
            found = np.full((len(self), dim), np.nan)
            rows, matrix = self._numbers(path, dim, 0)
            found[rows] = matrix
            self.vectors[(path, dim)] = found
        return found

    def filter_values(self, path: str) -> FilterColumn:
        """Every attempt's values at ``path``, for the filter language; a path ``a.b.2`` that
        is not stored is element 2 of the vector at ``a.b``."""
        found = self.values.get(path)
        if found is None:
            found = FilterColumn(len(self))
            found.set_packed(self._path_values(path))
            parent, _, index = path.rpartition(".")
            if parent and index.isdigit():
                element = int(index)
                for row, data in self._path_values(parent):
                    if found.codes[row] < 0 and isinstance(data, bytes) and len(data) > 8 * element:
                        found.set(row, [unpack_values(data)[element]])
            self.values[path] = found
        return found

    # ------------------------------------------------------------------ topping up
    def top_up(self, rows: Ints) -> None:
        """Append attempts written after ``last_seq`` and extend the cached columns."""
        if not len(rows):
            return
        after, start = self.last_seq, len(self)
        self._append_rows(rows)
        grown = len(self) - start
        for key, old in list(self.vectors.items()):
            path, dim = key
            extra = np.full((grown, dim), np.nan)
            got, matrix = self._numbers(path, dim, after)
            extra[got - start] = matrix
            self.vectors[key] = np.vstack([old, extra])
        for path, column in self.values.items():
            column.grow(grown)
            column.set_packed(self._path_values(path, after))
        # A path read through its parent vector is read again whole (rare: element filters).
        for path in [p for p in self.values if p.rpartition(".")[2].isdigit()]:
            del self.values[path]
        if not self.postings:
            return
        if grown > _TOPUP_ROWS:
            self.postings.clear()
            return
        new = self.store.experience_postings(self.group_id, list(self.postings), after)
        for term, fresh in new.items():
            if not len(fresh) or term not in self.postings:
                continue
            block = np.asarray(fresh, dtype=np.int64).reshape(-1, 2)
            got, held = self._rows_of(block[:, 0])
            docs, tfs = self.postings[term]
            self.postings[term] = (
                np.concatenate([docs, got[held]]),
                np.concatenate([tfs, block[held, 1].astype(np.float64)]),
            )


class FilterColumn:
    """One path's values for filters: each row's code into the distinct value lists (-1: the
    row has none), so a condition is decided once per distinct value, and a column of 100,000
    attempts is one integer array beside a list as long as the values that differ."""

    def __init__(self, size: int) -> None:
        self.codes: npt.NDArray[np.int32] = np.full(size, -1, dtype=np.int32)
        self.distinct: list[list[Any]] = []
        self._lookup: dict[tuple[Any, ...], int] = {}

    def set(self, row: int, values: list[Any]) -> None:
        key = tuple((type(v).__name__, v) for v in values)  # 1 and True stay apart
        code = self._lookup.get(key)
        if code is None:
            code = self._lookup[key] = len(self.distinct)
            self.distinct.append(values)
        self.codes[row] = code

    @property
    def nbytes(self) -> int:
        # The codes, and about 64 bytes for each distinct value held as Python objects.
        return int(self.codes.nbytes) + 64 * sum(len(v) + 1 for v in self.distinct)

    def set_packed(self, pairs: Sequence[tuple[int, bytes | str]]) -> None:
        """Each (row, packed values): one decoding per distinct stored value, not per row."""
        raw: dict[bytes | str, int] = {}
        for row, data in pairs:
            code = raw.get(data)
            if code is None:
                self.set(row, unpack_values(data))
                code = raw[data] = int(self.codes[row])
            self.codes[row] = code

    def grow(self, rows: int) -> None:
        self.codes = np.concatenate([self.codes, np.full(rows, -1, dtype=np.int32)])


def _backfill(store: GraphStore, group_id: str) -> None:
    """Index the group's experience episodes that have no entry yet (stored by an import or a
    graphmem from before the index)."""
    while True:
        missing = store.unindexed_experiences(group_id, _BACKFILL_CHUNK)
        if not missing:
            return
        if getattr(store, "read_only", False):
            raise StoreError(
                f"{len(missing)}+ experiences of group {group_id!r} are not indexed yet and "
                "this store is open read-only: open it writable once to index them"
            )
        entries = []
        for episode in missing:
            meta = episode.metadata.get("meta")
            entries.append(
                (
                    episode.id,
                    experience_entry(
                        parse_experience(episode.content), meta if isinstance(meta, dict) else {}
                    ),
                )
            )
        store.index_experiences(entries)
        if len(missing) < _BACKFILL_CHUNK:
            return


def read_group(store: GraphStore, group_id: str, held: GroupColumns | None) -> GroupColumns:
    """``held`` brought up to date with the store (or read anew when something it holds was
    removed, or when nothing is held)."""
    token = store.change_token()
    if held is not None and token is not None and held.token == token:
        return held
    counts = store.experience_counts(group_id)
    if counts.episodes > counts.indexed:
        _backfill(store, group_id)
        counts = store.experience_counts(group_id)
    if held is not None:
        rows = store.experience_rows(group_id, held.last_seq)
        if len(held) + len(rows) == counts.indexed:
            held.top_up(rows)
            held.token = token
            return held
        # Fewer than held plus new: some were removed (forget); read the group again.
    fresh = GroupColumns(store, group_id)
    fresh._append_rows(store.experience_rows(group_id, 0))
    fresh.token = token
    return fresh
