"""Moving a SQLite store to another embedder (``graphmem.ingest.reembed`` drives it).

New vectors are staged in a side table, ``reembed_staged``, one committed batch at a time: the
store keeps searching its current vectors meanwhile, a killed run leaves its batches there for
the next run to continue from, and the move ends with one write transaction that copies the
staged vectors over the current ones and records the new embedder (refused while any item is
still unstaged, e.g. one written meanwhile).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from ..._errors import StoreError
from ..._ids import make_id
from ..._time import utcnow
from .._base import Vector
from .._reembed import EmbeddingItem
from .._vectors import to_blob

if TYPE_CHECKING:
    from .db import SQLiteDB

__all__ = ["Reembedding"]

_TABLE = """CREATE TABLE IF NOT EXISTS reembed_staged (
    kind TEXT NOT NULL, id TEXT NOT NULL, embedding BLOB, PRIMARY KEY (kind, id)
) WITHOUT ROWID"""

# What is embedded (as ingest embeds it): every fact, entity and episode that holds a vector,
# and the extracted episodes that have none (stored before episode vectors existed; add_fact's
# own episodes, extractor 'direct', carry no vector of their own).
_WANTED = {
    "episode": (
        "episodes",
        "t.content, t.kind",
        "(t.embedding IS NOT NULL OR (t.status = 'extracted' AND "
        "coalesce(t.extractor, '') <> 'direct'))",
    ),
    "fact": ("facts", "t.statement, NULL", "t.embedding IS NOT NULL"),
    "entity": ("entities", "t.name, NULL", "t.embedding IS NOT NULL"),
}
_UNSTAGED = (
    "NOT EXISTS (SELECT 1 FROM reembed_staged s WHERE s.kind = '{kind}' AND s.id = t.id)"
)


def _backlog_sql(kind: str, select: str) -> str:
    table, columns, wanted = _WANTED[kind]
    unstaged = _UNSTAGED.format(kind=kind)
    return f"SELECT {select.format(columns=columns)} FROM {table} t WHERE {wanted} AND {unstaged}"


class Reembedding:
    """The staging table's reads and writes over the store's connection (under its lock)."""

    def __init__(self, db: SQLiteDB) -> None:
        self._db = db

    def _exists(self) -> bool:
        row = self._db.conn.execute(
            "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'reembed_staged'"
        ).fetchone()
        return row is not None

    def backlog(self, limit: int) -> list[EmbeddingItem]:
        db = self._db
        out: list[EmbeddingItem] = []
        with db.lock:
            if not self._exists():
                self._write(lambda conn: conn.execute(_TABLE))
            for kind in _WANTED:
                if len(out) >= limit:
                    break
                sql = _backlog_sql(kind, "t.id, {columns}") + " ORDER BY t.id LIMIT ?"
                rows = db.conn.execute(sql, (limit - len(out),)).fetchall()
                out.extend(EmbeddingItem(kind, r[0], r[1] or "", r[2]) for r in rows)
        return out

    def counts(self) -> tuple[int, int]:
        """(staged, still to embed)."""
        db = self._db
        with db.lock:
            if not self._exists():
                todo = 0
                for table, _columns, wanted in _WANTED.values():
                    sql = f"SELECT count(*) FROM {table} t WHERE {wanted}"
                    todo += int(db.conn.execute(sql).fetchone()[0])
                return 0, todo
            staged = int(db.conn.execute("SELECT count(*) FROM reembed_staged").fetchone()[0])
            todo = sum(
                int(db.conn.execute(_backlog_sql(kind, "count(*)")).fetchone()[0])
                for kind in _WANTED
            )
        return staged, todo

    def stage(self, rows: Sequence[tuple[str, str, Vector]]) -> None:
        values = [(kind, item_id, to_blob(vector)) for kind, item_id, vector in rows]
        self._write(
            lambda conn: conn.executemany(
                "INSERT OR REPLACE INTO reembed_staged VALUES (?, ?, ?)", values
            )
        )

    def apply(self, embedder_meta: str) -> bool:
        """Copy the staged vectors over the current ones and record ``embedder_meta``, in one
        transaction; ``False`` (nothing changed) while an item is still unstaged."""
        done = [False]

        def swap(conn: sqlite3.Connection) -> None:
            for kind in _WANTED:
                if conn.execute(_backlog_sql(kind, "1") + " LIMIT 1").fetchone() is not None:
                    return
            for kind, (table, _columns, _wanted) in _WANTED.items():
                conn.execute(
                    f"UPDATE {table} SET embedding = (SELECT s.embedding FROM reembed_staged s "
                    f"WHERE s.kind = ? AND s.id = {table}.id) "
                    f"WHERE id IN (SELECT id FROM reembed_staged WHERE kind = ?)",
                    (kind, kind),
                )
            _set_meta(conn, "embedder", embedder_meta)
            # Every cached vector matrix is stale now (the rows changed in place).
            _set_meta(conn, "vector_epoch", make_id("epoch", str(utcnow()), "reembed"))
            conn.execute("DELETE FROM graphmem_meta WHERE key = 'reembed'")
            conn.execute("DROP TABLE reembed_staged")
            done[0] = True

        with self._db.lock:
            if not self._exists():
                self._write(lambda conn: conn.execute(_TABLE))
            self._write(swap)
        return done[0]

    def clear(self) -> None:
        self._write(lambda conn: conn.execute("DROP TABLE IF EXISTS reembed_staged"))

    def _write(self, work: Callable[[sqlite3.Connection], object]) -> None:
        db = self._db
        with db.lock:
            db.require_writable()
            conn = db.conn
            try:
                conn.execute("BEGIN IMMEDIATE")
                work(conn)
                conn.execute("COMMIT")
                db.write_count += 1
            except sqlite3.DatabaseError as exc:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                raise StoreError(f"re-embedding failed on {db.path}: {exc}") from exc
            except BaseException:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                raise


def _set_meta(conn: sqlite3.Connection, key: str, value: str) -> None:
    conn.execute(
        "INSERT INTO graphmem_meta VALUES (?, ?) "
        "ON CONFLICT(key) DO UPDATE SET value = excluded.value",
        (key, value),
    )
