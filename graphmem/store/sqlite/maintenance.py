"""Upkeep of the SQLite store: what a forget does beyond deleting rows (full-text residue, a
new vector epoch, the WAL), statistics, and export / import."""

from __future__ import annotations

import json
import logging
import os
import sqlite3
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

from ..._ids import make_id
from ..._time import to_ms, utcnow
from .._base import EpisodeRow, LinkRow, ProvenanceRow, StoreReader, WritePlan
from .._links import EpisodeLinkRow
from .rows import chunks, entity_row, episode_row, fact_row, qmarks

if TYPE_CHECKING:
    from .db import SQLiteDB

__all__ = ["Maintenance", "purge_deleted", "truncate_wal"]

_log = logging.getLogger("graphmem")
# ``._export`` (the JSONL row format) is imported by export and import only: a process that
# recalls never loads it.

_GROUPS_SQL = "SELECT DISTINCT group_id FROM episodes ORDER BY 1"


# ---------------------------------------------------------------------- forget
def purge_deleted(conn: sqlite3.Connection, plans: Sequence[WritePlan]) -> bool:
    """Inside the write transaction, after the plans: when they deleted rows, a new vector
    epoch and the full-text indexes merged. Returns whether they deleted any."""
    purge = _purged_tables(plans)
    if purge:
        # Deleted rows invalidate every process's cached vector matrix.
        conn.execute(
            "INSERT INTO graphmem_meta VALUES ('vector_epoch', ?) "
            "ON CONFLICT(key) DO UPDATE SET value = excluded.value",
            (make_id("epoch", str(utcnow()), str(os.getpid())),),
        )
        _purge_fts(conn, purge)
    return bool(purge)


def truncate_wal(db: SQLiteDB, wait_ms: int) -> None:
    """Copy the WAL into the database and truncate it to 0 bytes after a deletion: the WAL
    keeps every page image written since the last checkpoint, forgotten text included. A
    reader of another connection that holds an older snapshot makes this wait (``wait_ms``)
    and, past it, leave the WAL to the next checkpoint."""
    if db.path == ":memory:":
        return
    conn = db.conn
    try:
        conn.execute(f"PRAGMA busy_timeout = {int(wait_ms)}")
        busy = conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()[0]
    except sqlite3.DatabaseError as exc:
        busy, why = 1, str(exc)
    else:
        why = "another connection is reading an older snapshot"
    finally:
        conn.execute("PRAGMA busy_timeout = 60000")
    if busy:
        # The next checkpoint (at the latest, the last connection's close) copies it over.
        _log.warning(
            "forget: %s still holds the deleted rows' old pages in its WAL (%s)",
            db.path,
            why,
        )


def _purged_tables(plans: Sequence[WritePlan]) -> list[str]:
    """The content tables whose rows these plans delete (a forget): their full-text indexes
    still hold the deleted text until they are merged."""
    tables: list[str] = []
    if any(p.delete_fact_ids for p in plans):
        tables.append("facts")
    if any(p.delete_entity_ids or p.prune_entity_ids for p in plans):
        tables.append("entities")
    if any(p.delete_episode_ids for p in plans):
        tables.append("episodes")
    return tables


def _purge_fts(conn: sqlite3.Connection, tables: Sequence[str]) -> None:
    """Merge each full-text index into one segment, inside the deleting transaction.

    An FTS5 'delete' only appends a tombstone (holding the deleted row's terms) in a new
    segment; the terms stay in the old segment until a merge drops them. 'optimize' merges
    every segment, and ``secure_delete`` zeroes the pages and cells the old ones leave. Its
    cost grows with the index (the whole index is rewritten), not with what was deleted.
    """
    for table in tables:
        conn.execute(f"INSERT INTO {table}_fts({table}_fts) VALUES ('optimize')")


# ---------------------------------------------------------------------- stats, export, import
class Maintenance:
    def __init__(self, db: SQLiteDB) -> None:
        self._db = db

    def stats(self, group_id: str | None) -> dict[str, Any]:
        where, params = ("WHERE group_id = ?", [group_id]) if group_id is not None else ("", [])
        now = to_ms(utcnow())

        def count(sql: str, extra: Sequence[Any] = ()) -> int:
            return int(self._db.fetch_one(sql, [*params, *extra])[0])

        and_ = "AND" if where else "WHERE"
        facts_where = where.replace("group_id", "f.group_id")
        facts_and = "AND" if facts_where else "WHERE"
        return {
            "store": self._db.url,
            "group_id": group_id,
            "episodes": count(f"SELECT count(*) FROM episodes {where}"),
            "episodes_failed": count(
                f"SELECT count(*) FROM episodes {where} {and_} status = ?", ["failed"]
            ),
            "episodes_pending": count(
                f"SELECT count(*) FROM episodes {where} {and_} status = ?", ["pending"]
            ),
            "entities": count(f"SELECT count(*) FROM entities {where}"),
            "facts": count(f"SELECT count(*) FROM facts {where}"),
            "facts_current": count(
                f"SELECT count(*) FROM facts {where} {and_} expired_at IS NULL "
                "AND valid_from <= ? AND (valid_to IS NULL OR valid_to > ?)",
                [now, now],
            ),
            "facts_expired": count(
                f"SELECT count(*) FROM facts {where} {and_} expired_at IS NOT NULL"
            ),
            "supersedes_links": count(
                f"SELECT count(*) FROM fact_links l JOIN facts f ON f.id = l.src {facts_where} "
                f"{facts_and} l.kind = 'SUPERSEDES'"
            ),
            "contradicts_links": count(
                f"SELECT count(*) FROM fact_links l JOIN facts f ON f.id = l.src {facts_where} "
                f"{facts_and} l.kind = 'CONTRADICTS'"
            ),
            "groups": [r[0] for r in self._db.fetch_all(_GROUPS_SQL)]
            if group_id is None
            else [group_id],
            "embedder": self._db.get_meta("embedder"),
        }

    def table_counts(self, group_id: str | None = None) -> dict[str, int]:
        """Row counts per table, FTS tables included (for residue checks after forget)."""
        out: dict[str, int] = {}
        for table in (
            "episodes",
            "entities",
            "entity_aliases",
            "facts",
            "fact_episodes",
            "fact_endings",
            "fact_links",
            "mentions",
            "experiences",
            "experience_values",
            "experience_terms",
            "experience_packs",
        ):
            out[table] = int(self._db.fetch_one(f"SELECT count(*) FROM {table}")[0])
        for table in ("facts_fts", "entities_fts", "episodes_fts"):
            # Rows the index really holds: count(*) on an external-content FTS5 table reads the
            # content table, so it would always equal the table's count and hide residue.
            out[table] = int(self._db.fetch_one(f"SELECT count(*) FROM {table}_docsize")[0])
        out["fact_vectors"] = int(
            self._db.fetch_one("SELECT count(*) FROM facts WHERE embedding IS NOT NULL")[0]
        )
        return out

    def export_rows(self, group_id: str | None) -> Iterator[dict[str, Any]]:
        from .._export import (
            entity_export,
            episode_export,
            episode_link_export,
            fact_export,
            link_export,
            provenance_export,
        )

        where, params = ("WHERE group_id = ?", [group_id]) if group_id is not None else ("", [])
        for row in self._db.fetch_all(f"SELECT * FROM episodes {where} ORDER BY rowid", params):
            yield episode_export(episode_row(row))
        for row in self._db.fetch_all(f"SELECT * FROM entities {where} ORDER BY rowid", params):
            yield entity_export(entity_row(row))
        for row in self._db.fetch_all(f"SELECT * FROM facts {where} ORDER BY rowid", params):
            yield fact_export(fact_row(row))
        join = "JOIN facts f ON f.id = x.fact_id" if group_id is not None else ""
        fwhere = "WHERE f.group_id = ?" if group_id is not None else ""
        for table, kind in (("fact_episodes", "provenance"), ("fact_endings", "ending")):
            for row in self._db.fetch_all(
                f"SELECT x.fact_id, x.episode_id, x.span, x.claim FROM {table} x {join} {fwhere} "
                "ORDER BY x.rowid",
                params,
            ):
                yield provenance_export(kind, ProvenanceRow(row[0], row[1], row[2], row[3]))
        join = "JOIN facts f ON f.id = x.src" if group_id is not None else ""
        for row in self._db.fetch_all(
            f"SELECT x.* FROM fact_links x {join} {fwhere} ORDER BY x.rowid", params
        ):
            yield link_export(LinkRow(row[0], row[1], row[2], row[3], row[4], row[5]))
        join = "JOIN episodes f ON f.id = x.episode_id" if group_id is not None else ""
        for row in self._db.fetch_all(
            f"SELECT x.* FROM mentions x {join} {fwhere} ORDER BY x.rowid", params
        ):
            yield {"type": "mention", "episode_id": row[0], "entity_id": row[1]}
        lwhere = "WHERE group_id = ?" if group_id is not None else ""
        for row in self._db.fetch_all(
            f"SELECT * FROM episode_links {lwhere} ORDER BY src, dst", params
        ):
            yield episode_link_export(
                EpisodeLinkRow(
                    row[0], row[1], row[2], row[3], row[4], tuple(json.loads(row[5])), row[6]
                )
            )

    def import_rows(
        self,
        rows: Sequence[dict[str, Any]],
        write: Callable[[Callable[[StoreReader], WritePlan]], WritePlan],
        insert_episode: Callable[[sqlite3.Connection, EpisodeRow], tuple[EpisodeRow, bool]],
    ) -> dict[str, int]:
        """Insert an export's rows; what the store already holds is left alone (and not
        counted), so importing twice changes nothing. ``write`` and ``insert_episode`` are the
        store's own."""
        from .._export import episode_from_export, plan_from_export

        plan = plan_from_export(rows)
        episodes = [episode_from_export(r) for r in rows if r.get("type") == "episode"]
        counts = {"episodes": 0, "entities": 0, "facts": 0, "links": 0}

        def present(table: str, ids: list[str]) -> set[str]:
            return {
                r[0]
                for chunk in chunks(ids)
                for r in self._db.conn.execute(
                    f"SELECT id FROM {table} WHERE id IN ({qmarks(len(chunk))})", chunk
                )
            }

        def work(reader: StoreReader) -> WritePlan:
            counts["episodes"] = sum(insert_episode(self._db.conn, ep)[1] for ep in episodes)
            known = present("facts", [f.id for f in plan.facts_new])
            plan.facts_new = [f for f in plan.facts_new if f.id not in known]
            known = present("entities", [e.id for e in plan.entities_new])
            plan.entities_new = [e for e in plan.entities_new if e.id not in known]
            plan.links_add = [
                lk
                for lk in plan.links_add
                if self._db.conn.execute(
                    "SELECT 1 FROM fact_links WHERE kind = ? AND src = ? AND dst = ?",
                    (lk.kind, lk.src, lk.dst),
                ).fetchone()
                is None
            ]
            counts.update(
                facts=len(plan.facts_new),
                entities=len(plan.entities_new),
                links=len(plan.links_add),
            )
            return plan

        write(work)
        return counts
