"""The reader a write unit's work gets (``StoreReader``): reads on the connection inside the
write transaction. ``find_entities`` and a duplicate episode insert use it too."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence

from .._base import EntityRow, EpisodeRow, FactRow, LinkRow, ProvenanceRow, Timeline
from .._links import EpisodeLinkRow
from .rows import chunks, entity_row, episode_link_row, episode_row, fact_row, qmarks

__all__ = ["Reader", "next_write_seq"]

_TERM_BEFORE = (
    "SELECT episode_id, at FROM episode_terms WHERE group_id = ? AND term = ? AND at <= ? "
    "ORDER BY at DESC, episode_id DESC LIMIT ?"
)
_TERM_AFTER = (
    "SELECT episode_id, at FROM episode_terms WHERE group_id = ? AND term = ? AND at > ? "
    "ORDER BY at, episode_id LIMIT ?"
)


def next_write_seq(conn: sqlite3.Connection) -> int:
    """The next commit sequence number (inside the write transaction: writers are serialised)."""
    conn.execute("INSERT OR IGNORE INTO graphmem_meta VALUES ('write_seq', '0')")
    conn.execute(
        "UPDATE graphmem_meta SET value = CAST(value AS INTEGER) + 1 WHERE key = 'write_seq'"
    )
    (value,) = conn.execute("SELECT value FROM graphmem_meta WHERE key = 'write_seq'").fetchone()
    return int(value)


class Reader:
    """The ``StoreReader`` a write's work reads through: the write transaction's own connection,
    so it sees the transaction's earlier plans."""

    def __init__(self, conn: sqlite3.Connection, write_seq: int = 0) -> None:
        self.conn = conn
        self.write_seq = write_seq

    def get_episode(self, episode_id: str) -> EpisodeRow | None:
        row = self.conn.execute("SELECT * FROM episodes WHERE id = ?", (episode_id,)).fetchone()
        return None if row is None else episode_row(row)

    def entities_by_keys(self, group_id: str, keys: Sequence[str]) -> list[EntityRow]:
        out: dict[str, EntityRow] = {}
        unique = list(dict.fromkeys(keys))
        for chunk in chunks(unique, 400):
            marks = qmarks(len(chunk))
            rows = self.conn.execute(
                f"SELECT * FROM entities WHERE group_id = ? AND key IN ({marks}) "
                f"UNION SELECT e.* FROM entity_aliases a JOIN entities e ON e.id = a.entity_id "
                f"WHERE a.group_id = ? AND a.alias_key IN ({marks})",
                [group_id, *chunk, group_id, *chunk],
            ).fetchall()
            for row in rows:
                out[row["id"]] = entity_row(row)
        return sorted(out.values(), key=lambda e: e.created_at)

    def timelines(
        self,
        group_id: str,
        pairs: Sequence[tuple[str, str]],
        *,
        include_expired: bool = False,
    ) -> dict[tuple[str, str], Timeline]:
        result: dict[tuple[str, str], Timeline] = {pair: Timeline() for pair in pairs}
        ids: list[str] = []
        for subject_id, predicate in dict.fromkeys(pairs):
            rows = self.conn.execute(
                "SELECT * FROM facts WHERE group_id = ? AND subject_id = ? AND predicate = ? "
                "AND (? OR expired_at IS NULL) ORDER BY valid_from, recorded_at, rowid",
                (group_id, subject_id, predicate, include_expired),
            ).fetchall()
            facts = [fact_row(r) for r in rows]
            result[(subject_id, predicate)].facts = facts
            ids.extend(f.id for f in facts)
        if ids:
            owner = {f.id: pair for pair, tl in result.items() for f in tl.facts}
            seen: set[LinkRow] = set()
            for chunk in chunks(ids, 400):
                marks = qmarks(len(chunk))
                for row in self.conn.execute(
                    f"SELECT * FROM fact_links WHERE src IN ({marks}) "
                    f"UNION SELECT * FROM fact_links WHERE dst IN ({marks})",
                    [*chunk, *chunk],
                ):
                    link = LinkRow(row[0], row[1], row[2], row[3], row[4], row[5])
                    pair = owner.get(link.src) or owner.get(link.dst)
                    if pair is not None and link not in seen:
                        seen.add(link)
                        result[pair].links.append(link)
        return result

    def facts_by_ids(self, fact_ids: Sequence[str]) -> list[FactRow]:
        out: list[FactRow] = []
        for chunk in chunks(list(fact_ids)):
            rows = self.conn.execute(
                f"SELECT * FROM facts WHERE id IN ({qmarks(len(chunk))})", chunk
            ).fetchall()
            out.extend(fact_row(r) for r in rows)
        return out

    def episodes_sharing_terms(
        self, group_id: str, terms: Sequence[str], min_shared: int, exclude: str, at: int,
        limit: int,
    ) -> list[EpisodeRow]:
        # Each term's nearest turns in stated time, on both sides (an index range each): the
        # work per new turn is bounded however often a word recurs in the group.
        counts: dict[str, int] = {}
        when: dict[str, int] = {}
        for term in sorted(set(terms)):
            for sql in (_TERM_BEFORE, _TERM_AFTER):
                for episode_id, stated in self.conn.execute(sql, (group_id, term, at, limit)):
                    counts[episode_id] = counts.get(episode_id, 0) + 1
                    when[episode_id] = stated
        found = [e for e, n in counts.items() if n >= min_shared and e != exclude]
        found.sort(key=lambda e: (abs(when[e] - at), e))
        ids = found[:limit]
        by_id: dict[str, EpisodeRow] = {}
        for chunk in chunks(ids, 400):
            # What a link reads of a turn only (not its embedding).
            for r in self.conn.execute(
                "SELECT id, group_id, source, kind, content, reference_time, ingested_at, "
                f"content_hash, metadata FROM episodes WHERE id IN ({qmarks(len(chunk))})",
                chunk,
            ):
                by_id[r[0]] = EpisodeRow(
                    r[0], r[1], r[2], r[3], r[4], r[5], r[6], r[7],
                    metadata=json.loads(r[8]) if r[8] else {},
                )
        return [by_id[e] for e in ids if e in by_id]

    def episode_links_timed(self, episode_ids: Sequence[str]) -> list[tuple[EpisodeLinkRow, int]]:
        out: dict[tuple[str, str, str], tuple[EpisodeLinkRow, int]] = {}
        for chunk in chunks(sorted(set(episode_ids)), 400):
            marks = qmarks(len(chunk))
            for r in self.conn.execute(
                "SELECT l.kind, l.src, l.dst, l.group_id, l.reason, l.terms, l.decided_at, "
                "d.reference_time FROM episode_links l JOIN episodes d ON d.id = l.dst "
                f"WHERE l.src IN ({marks}) OR l.dst IN ({marks})",
                [*chunk, *chunk],
            ):
                link = episode_link_row(r)
                out[(link.kind, link.src, link.dst)] = (link, int(r[7]))
        return [out[k] for k in sorted(out)]

    def fact_claims(
        self, fact_ids: Sequence[str]
    ) -> tuple[list[ProvenanceRow], list[ProvenanceRow]]:
        out: tuple[list[ProvenanceRow], list[ProvenanceRow]] = ([], [])
        for rows, table in zip(out, ("fact_episodes", "fact_endings"), strict=True):
            for chunk in chunks(list(fact_ids)):
                rows.extend(
                    ProvenanceRow(r[0], r[1], r[2], r[3])
                    for r in self.conn.execute(
                        f"SELECT fact_id, episode_id, span, claim FROM {table} "
                        f"WHERE fact_id IN ({qmarks(len(chunk))}) ORDER BY rowid",
                        chunk,
                    )
                )
        return out

    def episode_ended_fact_ids(self, episode_ids: Sequence[str]) -> list[str]:
        out: list[str] = []
        for chunk in chunks(list(episode_ids)):
            out.extend(
                r[0]
                for r in self.conn.execute(
                    "SELECT DISTINCT fact_id FROM fact_endings "
                    f"WHERE episode_id IN ({qmarks(len(chunk))})",
                    chunk,
                )
            )
        return out

    def episode_fact_ids(self, episode_ids: Sequence[str]) -> dict[str, int]:
        out: dict[str, int] = {}
        for chunk in chunks(list(episode_ids)):
            rows = self.conn.execute(
                "SELECT fe.fact_id, (SELECT count(*) FROM fact_episodes x "
                "WHERE x.fact_id = fe.fact_id) FROM fact_episodes fe "
                f"WHERE fe.episode_id IN ({qmarks(len(chunk))})",
                chunk,
            ).fetchall()
            out.update({r[0]: int(r[1]) for r in rows})
        return out

    def entity_fact_ids(self, entity_id: str) -> list[str]:
        rows = self.conn.execute(
            "SELECT id FROM facts WHERE subject_id = ?1 OR object_id = ?1", (entity_id,)
        ).fetchall()
        return [r[0] for r in rows]

    def group_episode_ids(self, group_id: str) -> list[str]:
        rows = self.conn.execute("SELECT id FROM episodes WHERE group_id = ?", (group_id,))
        return [r[0] for r in rows]

    def group_fact_ids(self, group_id: str) -> list[str]:
        rows = self.conn.execute("SELECT id FROM facts WHERE group_id = ?", (group_id,))
        return [r[0] for r in rows]

    def group_entity_ids(self, group_id: str) -> list[str]:
        rows = self.conn.execute("SELECT id FROM entities WHERE group_id = ?", (group_id,))
        return [r[0] for r in rows]

    def episode_entity_ids(self, episode_ids: Sequence[str]) -> list[str]:
        out: list[str] = []
        for chunk in chunks(list(episode_ids)):
            rows = self.conn.execute(
                f"SELECT entity_id FROM mentions WHERE episode_id IN ({qmarks(len(chunk))})",
                chunk,
            ).fetchall()
            out.extend(r[0] for r in rows)
        return out

    def speaker_episode_ids(self, group_id: str, speaker_keys: Sequence[str]) -> list[str]:
        from ..._ids import entity_key

        keys = set(speaker_keys)
        rows = self.conn.execute(
            "SELECT id, coalesce(json_extract(metadata, '$.speaker'), "
            "json_extract(metadata, '$.name')) FROM episodes INDEXED BY episodes_group "
            "WHERE group_id = ? ORDER BY rowid",
            (group_id,),
        )
        match: dict[str, bool] = {}  # a group has few speakers and many turns
        out: list[str] = []
        for eid, who in rows:
            if isinstance(who, str):
                if who not in match:
                    match[who] = entity_key(who) in keys
                if match[who]:
                    out.append(eid)
        return out

    def subject_episode_ids(self, group_id: str, entity_ids: Sequence[str]) -> list[str]:
        out: dict[str, None] = {}
        for chunk in chunks(list(entity_ids)):
            marks = qmarks(len(chunk))
            for table in ("fact_episodes", "fact_endings"):
                rows = self.conn.execute(
                    f"SELECT DISTINCT c.episode_id FROM facts f JOIN {table} c "
                    f"ON c.fact_id = f.id WHERE f.group_id = ? AND f.subject_id IN ({marks})",
                    (group_id, *chunk),
                ).fetchall()
                out.update((r[0], None) for r in rows)
        return list(out)
