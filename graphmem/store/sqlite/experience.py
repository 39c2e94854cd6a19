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

__all__ = ["ExperienceIndex", "write_entry"]


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
    """Reads (and the backfill write) of the experience index."""

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

    def rows(self, group_id: str, after: int) -> npt.NDArray[np.int64]:
        if after > 0:  # a top-up: a few rows
            found = self._db.fetch_all(
                "SELECT seq, at, success, length FROM experiences INDEXED BY experiences_group "
                "WHERE group_id = ? AND seq > ? ORDER BY seq",
                (group_id, after),
            )
            return np.asarray(found, dtype=np.int64).reshape(-1, 4)
        # A whole group: each column as one text SQLite joins and numpy parses, not a Python
        # tuple per attempt (at 100,000 attempts the tuples cost more than the read).
        row = self._db.fetch_one(
            "SELECT count(*), group_concat(seq), group_concat(at), group_concat(success), "
            "group_concat(length) FROM (SELECT seq, at, success, length FROM experiences "
            "INDEXED BY experiences_group WHERE group_id = ? ORDER BY seq)",
            (group_id,),
        )
        return _columns(row, 4)

    def values(self, group_id: str, path: str, after: int) -> list[tuple[int, Any]]:
        return self._db.fetch_all(
            "SELECT seq, data FROM experience_values WHERE group_id = ? AND path = ? "
            "AND seq > ? ORDER BY seq",
            (group_id, path, after),
        )

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
        for term in wanted:
            row = self._db.fetch_one(
                "SELECT count(*), group_concat(seq), group_concat(tf) FROM experience_terms "
                "WHERE group_id = ? AND term = ?",
                (group_id, term),
            )
            out[term] = _columns(row, 2)
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
