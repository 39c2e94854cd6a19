"""The SQLite store's write path: a ``WritePlan`` (and an episode) as rows, inside the
transaction that ``SQLiteStore`` opens and commits."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from typing import Any

from ..._ids import make_id
from ..._time import to_ms, utcnow
from .._base import EpisodeRow, WritePlan
from .._vectors import to_blob
from .experience import write_entry
from .reader import Reader
from .rows import alias_keys, chunks, qmarks, search_text

__all__ = ["apply_plan", "delete_entities", "insert_episode"]


def insert_episode(conn: sqlite3.Connection, episode: EpisodeRow) -> tuple[EpisodeRow, bool]:
    """Insert one episode inside the caller's transaction: (the episode, True), or (the
    stored one, False) when its id is there already."""
    cur = conn.execute(
        "INSERT OR IGNORE INTO episodes (id, group_id, source, kind, content, "
        "reference_time, ingested_at, content_hash, status, extractor, error, metadata, "
        "embedding) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)",
        (
            episode.id,
            episode.group_id,
            episode.source,
            episode.kind,
            episode.content,
            episode.reference_time,
            episode.ingested_at,
            episode.content_hash,
            episode.status,
            episode.extractor,
            episode.error,
            json.dumps(episode.metadata, ensure_ascii=False, default=str),
            to_blob(episode.embedding),
        ),
    )
    created = cur.rowcount == 1
    if created:
        entry = episode.experience
        if entry is not None and episode.kind == "experience":
            write_entry(conn, episode.id, episode.group_id, episode.reference_time, entry)
        return episode, True
    stored = Reader(conn).get_episode(episode.id)
    assert stored is not None
    return stored, False


def apply_plan(conn: sqlite3.Connection, plan: WritePlan) -> None:
    """One plan's rows, inside the caller's write transaction: deletions first (forget), then
    inserts and updates, then the episode's own row and the audit entry."""
    _delete(conn, plan)
    _entities(conn, plan)
    _facts(conn, plan)
    _claims_links_mentions(conn, plan)
    if plan.prune_entity_ids:
        _prune(conn, plan)
    _episode(conn, plan)
    _episode_links(conn, plan)
    if plan.audit is not None:
        _audit(conn, plan.audit)


def _delete(conn: sqlite3.Connection, plan: WritePlan) -> None:
    for chunk in chunks(plan.delete_fact_ids):
        marks = qmarks(len(chunk))
        conn.execute(f"DELETE FROM fact_links WHERE src IN ({marks})", chunk)
        conn.execute(f"DELETE FROM fact_links WHERE dst IN ({marks})", chunk)
        conn.execute(f"DELETE FROM fact_episodes WHERE fact_id IN ({marks})", chunk)
        conn.execute(f"DELETE FROM fact_endings WHERE fact_id IN ({marks})", chunk)
        conn.execute(f"DELETE FROM facts WHERE id IN ({marks})", chunk)
    for chunk in chunks(plan.delete_episode_ids):
        marks = qmarks(len(chunk))
        conn.execute(f"DELETE FROM fact_episodes WHERE episode_id IN ({marks})", chunk)
        conn.execute(f"DELETE FROM fact_endings WHERE episode_id IN ({marks})", chunk)
        conn.execute(f"DELETE FROM mentions WHERE episode_id IN ({marks})", chunk)
        conn.execute(f"DELETE FROM episodes WHERE id IN ({marks})", chunk)
    for chunk in chunks(plan.delete_entity_ids):
        delete_entities(conn, chunk)


def _entities(conn: sqlite3.Connection, plan: WritePlan) -> None:
    if plan.entities_new:
        conn.executemany(
            "INSERT INTO entities VALUES (?,?,?,?,?,?,?,?,?,?,?) "
            "ON CONFLICT(group_id, key, type) DO NOTHING",
            [
                (
                    e.id,
                    e.group_id,
                    e.name,
                    e.key,
                    e.type,
                    json.dumps(e.aliases, ensure_ascii=False),
                    search_text(e.name, e.aliases),
                    e.summary,
                    to_blob(e.embedding),
                    e.created_at,
                    json.dumps(e.attributes, ensure_ascii=False, default=str),
                )
                for e in plan.entities_new
            ],
        )
        conn.executemany(
            "INSERT OR IGNORE INTO entity_aliases VALUES (?,?,?)",
            [
                (e.group_id, alias_key, e.id)
                for e in plan.entities_new
                for alias_key in alias_keys(e.aliases)
            ],
        )
    for entity_id, aliases in plan.entity_aliases.items():
        row = conn.execute(
            "SELECT group_id, name FROM entities WHERE id = ?", (entity_id,)
        ).fetchone()
        if row is None:
            continue
        conn.execute(
            "UPDATE entities SET aliases = ?, search_text = ? WHERE id = ?",
            (json.dumps(aliases, ensure_ascii=False), search_text(row[1], aliases), entity_id),
        )
        conn.executemany(
            "INSERT OR IGNORE INTO entity_aliases VALUES (?,?,?)",
            [(row[0], k, entity_id) for k in alias_keys(aliases)],
        )


def _facts(conn: sqlite3.Connection, plan: WritePlan) -> None:
    if plan.facts_new:
        conn.executemany(
            "INSERT INTO facts VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
            [
                (
                    f.id,
                    f.group_id,
                    f.subject_id,
                    f.predicate,
                    f.object_id,
                    f.value_json,
                    f.statement,
                    to_blob(f.embedding),
                    f.valid_from,
                    f.valid_to,
                    f.recorded_at,
                    f.expired_at,
                    f.ended_at,
                    f.end_reason,
                    f.confidence,
                    f.decided_by,
                )
                for f in plan.facts_new
            ],
        )
    if plan.facts_update:
        conn.executemany(
            "UPDATE facts SET valid_from = ?, valid_to = ?, expired_at = ?, ended_at = ?, "
            "end_reason = ?, confidence = ? WHERE id = ?",
            [
                (
                    u.valid_from,
                    u.valid_to,
                    u.expired_at,
                    u.ended_at,
                    u.end_reason,
                    u.confidence,
                    u.id,
                )
                for u in plan.facts_update
            ],
        )


def _claims_links_mentions(conn: sqlite3.Connection, plan: WritePlan) -> None:
    for chunk in chunks(plan.claims_reset):
        marks = qmarks(len(chunk))
        conn.execute(f"DELETE FROM fact_episodes WHERE fact_id IN ({marks})", chunk)
        conn.execute(f"DELETE FROM fact_endings WHERE fact_id IN ({marks})", chunk)
    if plan.provenance:
        conn.executemany(
            "INSERT OR IGNORE INTO fact_episodes (fact_id, episode_id, span, claim) "
            "VALUES (?,?,?,?)",
            [(r.fact_id, r.episode_id, r.span, r.claim) for r in plan.provenance],
        )
    if plan.endings:
        conn.executemany(
            "INSERT OR IGNORE INTO fact_endings (fact_id, episode_id, span, claim) "
            "VALUES (?,?,?,?)",
            [(r.fact_id, r.episode_id, r.span, r.claim) for r in plan.endings],
        )
    if plan.links_remove:
        conn.executemany(
            "DELETE FROM fact_links WHERE kind = ? AND src = ? AND dst = ?", plan.links_remove
        )
    if plan.links_add:
        conn.executemany(
            "INSERT INTO fact_links VALUES (?,?,?,?,?,?) ON CONFLICT(kind, src, dst) DO UPDATE "
            "SET reason = excluded.reason, decided_by = excluded.decided_by, "
            "decided_at = excluded.decided_at",
            [
                (lk.kind, lk.src, lk.dst, lk.reason, lk.decided_by, lk.decided_at)
                for lk in plan.links_add
            ],
        )
    if plan.mentions:
        conn.executemany("INSERT OR IGNORE INTO mentions VALUES (?,?)", plan.mentions)


def _prune(conn: sqlite3.Connection, plan: WritePlan) -> None:
    """Delete the entities left unreferenced (no fact, no mention) among those to prune."""
    orphans: list[str] = []
    for entity_id in dict.fromkeys(plan.prune_entity_ids):
        used = conn.execute(
            "SELECT 1 FROM facts WHERE subject_id = ?1 OR object_id = ?1 "
            "UNION ALL SELECT 1 FROM mentions WHERE entity_id = ?1 LIMIT 1",
            (entity_id,),
        ).fetchone()
        if used is None:
            orphans.append(entity_id)
    for chunk in chunks(orphans):
        delete_entities(conn, chunk)
    if orphans and plan.audit is not None:
        plan.audit["entities_removed"] = plan.audit.get("entities_removed", 0) + len(orphans)


def _episode(conn: sqlite3.Connection, plan: WritePlan) -> None:
    # One UPDATE: an episode row is large (content, metadata, embedding), and each UPDATE
    # rewrites it whole, overflow pages included.
    if plan.episode_id is not None and plan.episode_status is not None:
        status, extractor, error = plan.episode_status
        conn.execute(
            "UPDATE episodes SET status = ?, extractor = ?, error = ?, "
            "embedding = coalesce(?, embedding) WHERE id = ?",
            (status, extractor, error, to_blob(plan.episode_embedding), plan.episode_id),
        )
    elif plan.episode_id is not None and plan.episode_embedding is not None:
        conn.execute(
            "UPDATE episodes SET embedding = ? WHERE id = ?",
            (to_blob(plan.episode_embedding), plan.episode_id),
        )


def _episode_links(conn: sqlite3.Connection, plan: WritePlan) -> None:
    if plan.episode_id is not None and plan.episode_terms is not None:
        row = conn.execute(
            "SELECT group_id, reference_time FROM episodes WHERE id = ?", (plan.episode_id,)
        ).fetchone()
        if row is not None:
            conn.execute("DELETE FROM episode_terms WHERE episode_id = ?", (plan.episode_id,))
            conn.executemany(
                "INSERT OR IGNORE INTO episode_terms VALUES (?,?,?,?)",
                [(row[0], term, row[1], plan.episode_id) for term in plan.episode_terms],
            )
    if plan.episode_links_add:
        # Both ends must exist: an import names them; ingest read them in this transaction.
        ids = sorted({e for lk in plan.episode_links_add for e in (lk.src, lk.dst)})
        present = {
            r[0]
            for chunk in chunks(ids)
            for r in conn.execute(f"SELECT id FROM episodes WHERE id IN ({qmarks(len(chunk))})",
                                  chunk)
        }
        conn.executemany(
            "INSERT OR IGNORE INTO episode_links VALUES (?,?,?,?,?,?,?)",
            [
                (lk.kind, lk.src, lk.dst, lk.group_id, lk.reason, json.dumps(list(lk.terms)),
                 int(lk.decided_at))
                for lk in plan.episode_links_add
                if lk.src in present and lk.dst in present
            ],
        )


def _audit(conn: sqlite3.Connection, entry: dict[str, Any]) -> None:
    audit = dict(entry)
    audit_id = make_id("audit", json.dumps(audit, sort_keys=True, default=str))
    audit["id"] = audit_id
    entry["id"] = audit_id
    conn.execute(
        "INSERT OR REPLACE INTO audit_log VALUES (?,?,?,?,?)",
        (
            audit_id,
            int(audit.get("at", to_ms(utcnow()))),
            str(audit.get("group_id", "")),
            str(audit.get("action", "")),
            json.dumps(audit, ensure_ascii=False, default=str),
        ),
    )


def delete_entities(conn: sqlite3.Connection, ids: Sequence[str]) -> None:
    marks = qmarks(len(ids))
    conn.execute(f"DELETE FROM entity_aliases WHERE entity_id IN ({marks})", ids)
    conn.execute(f"DELETE FROM mentions WHERE entity_id IN ({marks})", ids)
    conn.execute(f"DELETE FROM entities WHERE id IN ({marks})", ids)
