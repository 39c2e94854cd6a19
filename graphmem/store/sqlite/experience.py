"""The SQLite store's experience index (migration 6): an entry written with each experience
episode, and the column reads recall makes from it (``store._experience``)."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from ..._errors import StoreError
from ..._models import EpisodeRecord
from .._base import EpisodeRow, episode_record
from .._experience import (
    ExperienceCounts,
    ExperienceEntry,
    ValueColumn,
    pack_values,
)
from .rows import chunks, episode_row, qmarks


def _columns(row: Any, width: int) -> npt.NDArray[np.int64]:
    """``count, group_concat(a), group_concat(b), …`` as an (n, width) array."""
    if row is None or not row[0]:
        return np.zeros((0, width), dtype=np.int64)
    parts = [np.fromstring(text, dtype=np.int64, sep=",") for text in row[1 : width + 1]]
    if any(part.size != row[0] for part in parts):
        raise StoreError("the experience index returned columns of different lengths")
    return np.stack(parts, axis=1)

if TYPE_CHECKING:
    from .db import SQLiteDB

__all__ = ["PACK_MIN", "ExperienceIndex", "write_entry"]

# A whole-column read that met at least this many rows not yet packed packs the column.
PACK_MIN = 1000


def write_entry(
    conn: sqlite3.Connection, episode_id: str, group_id: str, at: int, entry: ExperienceEntry
) -> None:
    """An episode's index entry, inside the caller's transaction (none if it has one)."""
    cur = conn.execute(
        "INSERT OR IGNORE INTO experiences (episode_id, group_id, at, success, length, paths, "
        "terms) VALUES (?,?,?,?,?,?,?)",
        (
            episode_id,
            group_id,
            at,
            entry.success,
            entry.length,
            json.dumps(list(entry.values), ensure_ascii=False),
            json.dumps(entry.terms, ensure_ascii=False),
        ),
    )
    if cur.rowcount != 1:
        return
    seq = cur.lastrowid
    conn.executemany(
        "INSERT INTO experience_values (group_id, path, seq, data) VALUES (?,?,?,?)",
        [(group_id, path, seq, pack_values(v)) for path, v in entry.values.items()],
    )
    conn.executemany(
        "INSERT INTO experience_terms (group_id, term, seq, tf) VALUES (?,?,?,?)",
        [(group_id, term, seq, tf) for term, tf in entry.terms.items()],
    )


class ExperienceIndex:
    """Reads (and the backfill write) of the experience index.

    A whole-column read (``after == 0``) takes the column's pack (migration 7: the column up to
    some seq as a few blobs) and the rows after it; when those rows are many (``PACK_MIN``) the
    pack is written again to cover them, so a new process reads a large group's columns as
    blobs, not row by row. Packs are a derived copy: removing an entry drops its group's packs.
    """

    def __init__(self, db: SQLiteDB) -> None:
        self._db = db

    def counts(self, group_id: str) -> ExperienceCounts:
        with self._db.lock:
            conn = self._db.conn
            found = conn.execute(
                "SELECT episodes, indexed FROM experience_groups WHERE group_id = ?", (group_id,)
            ).fetchone()
            (last,) = conn.execute(
                "SELECT coalesce(max(seq), 0) FROM experiences INDEXED BY experiences_group "
                "WHERE group_id = ?",
                (group_id,),
            ).fetchone()
        episodes, indexed = found if found is not None else (0, 0)
        return ExperienceCounts(int(indexed), int(last), int(episodes))

    # ------------------------------------------------------------------ packs
    def _removed(self) -> int:
        row = self._db.fetch_one("SELECT removed FROM experience_removals WHERE id = 0")
        return int(row[0]) if row is not None else 0

    def _pack(self, group_id: str, name: str) -> tuple[int, bytes, bytes, bytes] | None:
        row = self._db.fetch_one(
            "SELECT upto, seqs, sizes, data FROM experience_packs WHERE group_id = ? AND name = ?",
            (group_id, name),
        )
        return None if row is None else (int(row[0]), row[1], row[2], row[3])

    def _save_pack(
        self, group_id: str, name: str, removed: int, seqs: npt.NDArray[np.int64],
        sizes: bytes, data: bytes,
    ) -> None:
        """Write a pack if nothing was removed since the read began (``removed``); a cache, so
        a store that is busy (another writer), read-only or failing is simply not packed."""
        db = self._db
        if db.read_only or not seqs.size:
            return
        with db.lock:
            conn = db.conn
            if conn.in_transaction:
                return
            try:
                conn.execute("PRAGMA busy_timeout = 0")  # never wait on a writer for a cache
                conn.execute("BEGIN IMMEDIATE")
            except sqlite3.Error:
                conn.execute("PRAGMA busy_timeout = 60000")
                return
            try:
                if self._removed() == removed:
                    conn.execute(
                        "INSERT OR REPLACE INTO experience_packs VALUES (?,?,?,?,?,?)",
                        (group_id, name, int(seqs[-1]), seqs.astype("<i8").tobytes(), sizes,
                         data),
                    )
                conn.execute("COMMIT")
            except sqlite3.Error:
                conn.execute("ROLLBACK")
            finally:
                conn.execute("PRAGMA busy_timeout = 60000")

    # ------------------------------------------------------------------ columns
    def rows(self, group_id: str, after: int) -> npt.NDArray[np.int64]:
        if after > 0:  # a top-up: a few rows
            found = self._db.fetch_all(
                "SELECT seq, at, success, length FROM experiences INDEXED BY experiences_group "
                "WHERE group_id = ? AND seq > ? ORDER BY seq",
                (group_id, after),
            )
            return np.asarray(found, dtype=np.int64).reshape(-1, 4)
        removed = self._removed()
        pack = self._pack(group_id, "rows")
        start = 0
        packed = np.zeros((0, 4), dtype=np.int64)
        if pack is not None:
            start, seqs, _, data = pack
            packed = np.column_stack([
                np.frombuffer(seqs, dtype="<i8"), np.frombuffer(data, dtype="<i8").reshape(-1, 3)
            ]).astype(np.int64)
        # The rows after the pack: each column as one text SQLite joins and numpy parses, not
        # a Python tuple per attempt.
        row = self._db.fetch_one(
            "SELECT count(*), group_concat(seq), group_concat(at), group_concat(success), "
            "group_concat(length) FROM (SELECT seq, at, success, length FROM experiences "
            "INDEXED BY experiences_group WHERE group_id = ? AND seq > ? ORDER BY seq)",
            (group_id, start),
        )
        tail = _columns(row, 4)
        out = np.concatenate([packed, tail]) if len(packed) else tail
        if len(tail) >= PACK_MIN:
            self._save_pack(group_id, "rows", removed, out[:, 0], b"",
                            np.ascontiguousarray(out[:, 1:]).astype("<i8").tobytes())
        return out

    def values(self, group_id: str, path: str, after: int) -> ValueColumn:
        whole = after == 0
        removed = self._removed() if whole else 0
        pack = self._pack(group_id, f"v:{path}") if whole else None
        packed: ValueColumn | None = None
        if pack is not None:
            after, seqs, sizes, data = pack
            packed = ValueColumn(np.frombuffer(seqs, dtype="<i8").astype(np.int64),
                                 np.frombuffer(sizes, dtype="<i8").astype(np.int64), data)
        # One row: seqs, sizes (text as -1 - its UTF-8 length) and the data as hex, so SQLite
        # joins the column and no Python object is made per attempt.
        row = self._db.fetch_one(
            "SELECT count(*), group_concat(seq), group_concat(CASE WHEN typeof(data) = 'blob' "
            "THEN length(data) ELSE -1 - length(CAST(data AS BLOB)) END), "
            "group_concat(hex(data), '') FROM (SELECT seq, data FROM experience_values "
            "WHERE group_id = ? AND path = ? AND seq > ? ORDER BY seq)",
            (group_id, path, after),
        )
        if row is None or not row[0]:
            tail = ValueColumn(np.zeros(0, np.int64), np.zeros(0, np.int64), b"")
        else:
            heads = _columns((row[0], row[1], row[2]), 2)
            tail = ValueColumn(heads[:, 0].copy(), heads[:, 1].copy(), bytes.fromhex(row[3]))
        out = ValueColumn.concat([packed, tail] if packed is not None else [tail])
        if whole and len(tail) >= PACK_MIN:
            self._save_pack(group_id, f"v:{path}", removed, out.seqs,
                            out.sizes.astype("<i8").tobytes(), out.data)
        return out

    def postings(
        self, group_id: str, terms: Sequence[str], after: int
    ) -> dict[str, npt.NDArray[np.int64]]:
        wanted = list(dict.fromkeys(terms))
        out: dict[str, npt.NDArray[np.int64]] = {}
        if after > 0:
            # A top-up after writes: the few new attempts' own term lists, in one range read.
            pairs: dict[str, list[tuple[int, int]]] = {term: [] for term in wanted}
            for seq, held in self._db.fetch_all(
                "SELECT seq, terms FROM experiences INDEXED BY experiences_group "
                "WHERE group_id = ? AND seq > ? ORDER BY seq",
                (group_id, after),
            ):
                for term, tf in json.loads(held).items():
                    if term in pairs:
                        pairs[term].append((int(seq), int(tf)))
            return {t: np.asarray(p, dtype=np.int64).reshape(-1, 2) for t, p in pairs.items()}
        removed = self._removed()
        for term in wanted:
            pack = self._pack(group_id, f"t:{term}")
            start = 0
            packed = np.zeros((0, 2), dtype=np.int64)
            if pack is not None:
                start, seqs, _, data = pack
                packed = np.column_stack([np.frombuffer(seqs, dtype="<i8"),
                                          np.frombuffer(data, dtype="<i8")]).astype(np.int64)
            row = self._db.fetch_one(
                "SELECT count(*), group_concat(seq), group_concat(tf) FROM experience_terms "
                "WHERE group_id = ? AND term = ? AND seq > ?",
                (group_id, term, start),
            )
            tail = _columns(row, 2)
            out[term] = np.concatenate([packed, tail]) if len(packed) else tail
            if len(tail) >= PACK_MIN:
                found = out[term]
                self._save_pack(group_id, f"t:{term}", removed, found[:, 0], b"",
                                found[:, 1].astype("<i8").tobytes())
        return out

    def ids(self, group_id: str, seqs: Sequence[int]) -> dict[int, str]:
        out: dict[int, str] = {}
        for chunk in chunks(list(dict.fromkeys(int(s) for s in seqs))):
            for seq, episode_id in self._db.fetch_all(
                f"SELECT seq, episode_id FROM experiences WHERE seq IN ({qmarks(len(chunk))}) "
                "AND group_id = ?",
                [*chunk, group_id],
            ):
                out[int(seq)] = str(episode_id)
        return out

    def unindexed(self, group_id: str, limit: int) -> list[EpisodeRecord]:
        found = self._db.fetch_all(
            "SELECT e.* FROM episodes e INDEXED BY episodes_group_kind "
            "WHERE e.group_id = ? AND e.kind = 'experience' AND NOT EXISTS "
            "(SELECT 1 FROM experiences x WHERE x.episode_id = e.id) ORDER BY e.rowid LIMIT ?",
            (group_id, limit),
        )
        return [episode_record(episode_row(r)) for r in found]

    def add(self, entries: Sequence[tuple[str, ExperienceEntry]]) -> None:
        db = self._db
        with db.lock:
            db.require_writable()
            conn = db.conn
            try:
                conn.execute("BEGIN IMMEDIATE")
                for episode_id, entry in entries:
                    stored: EpisodeRow | None = None
                    row = conn.execute(
                        "SELECT * FROM episodes WHERE id = ?", (episode_id,)
                    ).fetchone()
                    if row is not None:
                        stored = episode_row(row)
                    if stored is not None and stored.kind == "experience":
                        write_entry(conn, stored.id, stored.group_id, stored.reference_time, entry)
                conn.execute("COMMIT")
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            db.write_count += 1
