"""The SQLite store's reads outside a write: episodes and their conversational context,
entities and the graph walk, facts in a time view."""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any

from ..._models import EntityRecord, EpisodeRecord, FactRecord
from .._base import EpisodeRow, LinkRow, TimeView, breadth_first, episode_record
from .._links import EpisodeLinkRow
from .reader import Reader
from .rows import (
    FACT_SELECT,
    MAX_VARS,
    VIEW_SQL,
    chunks,
    episode_link_row,
    episode_row,
    fact_record,
    qmarks,
)

if TYPE_CHECKING:
    from .db import SQLiteDB

__all__ = ["Reads"]


class Reads:
    def __init__(self, db: SQLiteDB) -> None:
        self._db = db
        # Speakers by group: {"epoch", "high" (rowid read up to), "names", "seen"}.
        self._speakers: dict[str, dict[str, Any]] = {}

    # ------------------------------------------------------------------ episodes
    def get_episode(self, episode_id: str) -> EpisodeRow | None:
        row = self._db.fetch_one("SELECT * FROM episodes WHERE id = ?", (episode_id,))
        return None if row is None else episode_row(row)

    def episodes(self, episode_ids: Sequence[str]) -> list[EpisodeRecord]:
        found: dict[str, EpisodeRow] = {}
        for chunk in chunks(list(dict.fromkeys(episode_ids))):
            for row in self._db.fetch_all(
                f"SELECT * FROM episodes WHERE id IN ({qmarks(len(chunk))})", chunk
            ):
                ep = episode_row(row)
                found[ep.id] = ep
        return [episode_record(found[i]) for i in episode_ids if i in found]

    def episodes_by_status(self, group_id: str | None, statuses: Sequence[str]) -> list[EpisodeRow]:
        sql = f"SELECT * FROM episodes WHERE status IN ({qmarks(len(statuses))})"
        params: list[Any] = list(statuses)
        if group_id is not None:
            sql += " AND group_id = ?"
            params.append(group_id)
        sql += " ORDER BY reference_time, rowid"
        return [episode_row(r) for r in self._db.fetch_all(sql, params)]

    def episode_ids_by_kind(self, group_id: str, kind: str) -> list[str]:
        rows = self._db.fetch_all(
            "SELECT id FROM episodes INDEXED BY episodes_group_kind "
            "WHERE group_id = ? AND kind = ? ORDER BY rowid",
            (group_id, kind),
        )
        return [r[0] for r in rows]

    def recent_episodes(
        self, group_id: str, source: str | None, before: int, limit: int
    ) -> list[EpisodeRow]:
        rows = self._db.fetch_all(
            "SELECT * FROM episodes WHERE group_id = ? AND source IS ? AND reference_time <= ? "
            "ORDER BY reference_time DESC, rowid DESC LIMIT ?",
            (group_id, source, before, limit),
        )
        return [episode_row(r) for r in reversed(rows)]

    # ------------------------------------------------------------------ conversations
    def speakers(self, group_id: str) -> dict[str, str]:
        """The speakers of the group's episodes (``metadata.speaker`` or ``.name``) by name key.

        Kept in memory per group and brought up to date by a scan of the group's new episodes
        only (its (group_id) index, in rowid order), like the vector matrices; a deletion
        elsewhere (new vector epoch) rebuilds it.
        """
        from ..._ids import entity_key

        with self._db.lock:
            seen = (self._db.data_version(), self._db.write_count)
            epoch = self._db.get_meta("vector_epoch") or ""
            groups = self._speakers
            cache = groups.get(group_id)
            if cache is None or cache["epoch"] != epoch:
                cache = {"epoch": epoch, "high": 0, "names": {}, "seen": None}
                if len(groups) > 10_000:
                    groups.clear()
                groups[group_id] = cache
            if cache["seen"] != seen:
                rows = self._db.execute(
                    "SELECT rowid, coalesce(json_extract(metadata, '$.speaker'), "
                    "json_extract(metadata, '$.name')) FROM episodes INDEXED BY episodes_group "
                    "WHERE group_id = ? AND rowid > ? ORDER BY rowid",
                    (group_id, cache["high"]),
                ).fetchall()
                for _rowid, name in rows:
                    if isinstance(name, str) and name.strip():
                        cache["names"][entity_key(name)] = name.strip()
                if rows:
                    cache["high"] = rows[-1][0]
                cache["seen"] = seen
            return dict(cache["names"])

    def episode_context(
        self, episode_ids: Sequence[str], window: int = 1
    ) -> tuple[dict[str, tuple[str | None, int]], dict[str, list[tuple[str, int]]]]:
        """Each episode's speaker and reference time, and its neighbours: the ``window`` episodes
        before and after it in arrival order within the same group and source (a conversation's
        adjacent turns).

        Returns ((speaker, reference_time ms) by episode id, for the episodes and their
        neighbours; (neighbour id, distance) by episode id). Index lookups only: cheap at any
        store size.
        """
        wanted = list(dict.fromkeys(episode_ids))
        speaker_sql = (
            "coalesce(json_extract(metadata, '$.speaker'), json_extract(metadata, '$.name'))"
        )
        base: dict[str, tuple[int, str, str | None]] = {}
        speakers: dict[str, tuple[str | None, int]] = {}
        for chunk in chunks(wanted):
            for rowid, eid, gid, source, who, when in self._db.fetch_all(
                f"SELECT rowid, id, group_id, source, {speaker_sql}, reference_time "
                f"FROM episodes WHERE id IN ({qmarks(len(chunk))})",
                chunk,
            ):
                base[eid] = (rowid, gid, source)
                speakers[eid] = (who if isinstance(who, str) else None, when)
        neighbours: dict[str, list[tuple[str, int]]] = {eid: [] for eid in base}
        if window <= 0 or not base:
            return speakers, neighbours
        # The group's and source's previous and next turns, through the (group_id, source)
        # index in rowid order: other groups' or sources' episodes written in between (another
        # tenant's ingest, another conversation) are never read.
        side = (
            f"SELECT rowid, id, {speaker_sql}, reference_time FROM episodes "
            "INDEXED BY episodes_group_source WHERE group_id = ? AND source IS ? AND rowid {op} ? "
            "ORDER BY rowid {order} LIMIT ?"
        )
        before = side.format(op="<", order="DESC")
        after = side.format(op=">", order="ASC")
        sql = f"SELECT * FROM ({before}) UNION ALL SELECT * FROM ({after})"
        with self._db.lock:
            for eid, (rowid, gid, source) in base.items():
                rows = self._db.execute(
                    sql, (gid, source, rowid, window, gid, source, rowid, window)
                ).fetchall()
                steps = {-1: 0, 1: 0}
                for near_rowid, near_id, who, when in rows:
                    step = -1 if near_rowid < rowid else 1
                    steps[step] += 1
                    neighbours[eid].append((near_id, steps[step]))
                    speakers.setdefault(near_id, (who if isinstance(who, str) else None, when))
        return speakers, neighbours

    # ------------------------------------------------------------------ entities
    def find_entities(self, group_id: str, keys: Sequence[str]) -> list[EntityRecord]:
        with self._db.lock:
            rows = Reader(self._db.conn).entities_by_keys(group_id, keys)
        return [
            EntityRecord(id=r.id, name=r.name, type=r.type, aliases=r.aliases, summary=r.summary)
            for r in rows
        ]

    def find_entities_by_ids(self, group_id: str, entity_ids: Sequence[str]) -> list[EntityRecord]:
        out: list[EntityRecord] = []
        for chunk in chunks(list(dict.fromkeys(entity_ids))):
            # By primary key only: a group_id condition makes SQLite scan the group's index.
            rows = self._db.fetch_all(
                "SELECT id, group_id, name, type, aliases, summary FROM entities "
                f"WHERE id IN ({qmarks(len(chunk))})",
                chunk,
            )
            out.extend(
                EntityRecord(
                    id=r["id"],
                    name=r["name"],
                    type=r["type"],
                    aliases=json.loads(r["aliases"]),
                    summary=r["summary"],
                )
                for r in rows
                if r["group_id"] == group_id
            )
        return out

    def expand(
        self, group_id: str, entity_ids: Sequence[str], hops: int, view: TimeView, limit: int
    ) -> list[tuple[str, int, str]]:
        params = {"at": view.at, "known": view.known, "g": group_id}

        def fetch(ids: list[str]) -> Iterator[tuple[str, str, str | None]]:
            for chunk in chunks(ids, 400):
                names = {f"e{i}": v for i, v in enumerate(chunk)}
                marks = ",".join(f":{k}" for k in names)
                # Two indexed lookups (subject, object) instead of an OR that scans. The unary
                # "+" keeps SQLite from answering the object half from the (group_id, predicate)
                # index, a scan of the whole group (1 s at 100k facts, found by bench/scale.py).
                yield from self._db.fetch_all(
                    f"SELECT f.id, f.subject_id, f.object_id FROM facts f "
                    f"WHERE f.group_id = :g AND f.subject_id IN ({marks}) AND {VIEW_SQL} "
                    f"UNION ALL SELECT f.id, f.subject_id, f.object_id FROM facts f "
                    f"WHERE f.object_id IN ({marks}) AND +f.group_id = :g AND {VIEW_SQL} "
                    f"LIMIT :lim",
                    {**params, **names, "lim": limit},
                )

        return breadth_first(entity_ids, hops, limit, fetch)

    # ------------------------------------------------------------------ facts
    def fact_records(
        self, fact_ids: Sequence[str], view: TimeView | None = None
    ) -> list[FactRecord]:
        wanted = list(dict.fromkeys(fact_ids))
        found: dict[str, FactRecord] = {}
        for chunk in chunks(wanted, 400):
            names = {f"i{i}": v for i, v in enumerate(chunk)}
            sql = FACT_SELECT + f" WHERE f.id IN ({','.join(':' + k for k in names)})"
            params: dict[str, Any] = dict(names)
            if view is not None:
                sql += f" AND {VIEW_SQL}"
                params.update(at=view.at, known=view.known)
            for row in self._db.fetch_all(sql, params):
                record = fact_record(row, view)
                found[record.id] = record
        return [found[i] for i in wanted if i in found]

    def _episode_pairs(self, sql: str, episode_ids: Sequence[str]) -> list[tuple[str, str]]:
        """(episode id, other id) rows of ``sql``, whose ``{marks}`` takes the episode ids."""
        out: list[tuple[str, str]] = []
        for chunk in chunks(list(dict.fromkeys(episode_ids))):
            rows = self._db.fetch_all(sql.format(marks=qmarks(len(chunk))), chunk)
            out.extend((r[0], r[1]) for r in rows)
        return out

    def episode_mentions(self, episode_ids: Sequence[str]) -> list[tuple[str, str]]:
        """(episode id, entity id) for each entity the episodes mention."""
        return self._episode_pairs(
            "SELECT episode_id, entity_id FROM mentions WHERE episode_id IN ({marks}) "
            "ORDER BY episode_id, entity_id",
            episode_ids,
        )

    def record_facts(self, episode_ids: Sequence[str]) -> list[tuple[str, str]]:
        """(episode id, fact id) for each fact that those of the episodes which are JSON
        records support (FROM_EPISODE), in any view: callers narrow them with ``fact_stubs``."""
        return self._episode_pairs(
            "SELECT fe.episode_id, fe.fact_id FROM fact_episodes fe "
            "JOIN episodes e ON e.id = fe.episode_id "
            "WHERE fe.episode_id IN ({marks}) AND e.kind = 'json' "
            "ORDER BY fe.episode_id, fe.fact_id",
            episode_ids,
        )

    def fact_stubs(
        self, fact_ids: Sequence[str], view: TimeView
    ) -> list[tuple[str, str, str | None, int, float]]:
        out: list[tuple[str, str, str | None, int, float]] = []
        for chunk in chunks(list(dict.fromkeys(fact_ids)), 400):
            names = {f"i{i}": v for i, v in enumerate(chunk)}
            rows = self._db.fetch_all(
                "SELECT f.id, f.subject_id, f.object_id, f.valid_from, f.confidence FROM facts f "
                f"WHERE f.id IN ({','.join(':' + k for k in names)}) AND {VIEW_SQL}",
                {**names, "at": view.at, "known": view.known},
            )
            out.extend((r[0], r[1], r[2], r[3], r[4]) for r in rows)
        return out

    def links(self, fact_ids: Sequence[str]) -> list[LinkRow]:
        out: dict[tuple[str, str, str], LinkRow] = {}
        for chunk in chunks(list(dict.fromkeys(fact_ids)), 400):
            marks = qmarks(len(chunk))
            for row in self._db.fetch_all(
                f"SELECT * FROM fact_links WHERE src IN ({marks}) "
                f"UNION SELECT * FROM fact_links WHERE dst IN ({marks})",
                [*chunk, *chunk],
            ):
                link = LinkRow(row[0], row[1], row[2], row[3], row[4], row[5])
                out[(link.kind, link.src, link.dst)] = link
        return list(out.values())

    def episode_links(self, episode_ids: Sequence[str]) -> list[EpisodeLinkRow]:
        out: dict[tuple[str, str, str], EpisodeLinkRow] = {}
        for chunk in chunks(list(dict.fromkeys(episode_ids)), 400):
            marks = qmarks(len(chunk))
            for row in self._db.fetch_all(
                f"SELECT * FROM episode_links WHERE src IN ({marks}) "
                f"UNION SELECT * FROM episode_links WHERE dst IN ({marks})",
                [*chunk, *chunk],
            ):
                link = episode_link_row(row)
                out[(link.kind, link.src, link.dst)] = link
        return sorted(out.values(), key=lambda lk: (lk.kind, lk.src, lk.dst))

    def list_facts(
        self,
        group_id: str,
        *,
        entity_ids: Sequence[str] | None = None,
        predicate: str | None = None,
        view: TimeView | None = None,
        subject_only: bool = False,
    ) -> list[FactRecord]:
        sql = FACT_SELECT + " WHERE f.group_id = :g"
        params: dict[str, Any] = {"g": group_id}
        if entity_ids is not None:
            if not entity_ids:
                return []
            names = {f"e{i}": v for i, v in enumerate(entity_ids[:400])}
            marks = ",".join(":" + k for k in names)
            params.update(names)
            if subject_only:
                sql += f" AND f.subject_id IN ({marks})"
            else:
                sql += f" AND (f.subject_id IN ({marks}) OR f.object_id IN ({marks}))"
        if predicate is not None:
            sql += " AND f.predicate = :p"
            params["p"] = predicate
        if view is not None:
            sql += f" AND {VIEW_SQL}"
            params.update(at=view.at, known=view.known)
        sql += " ORDER BY f.valid_from, f.recorded_at, f.rowid"
        return [fact_record(row, view) for row in self._db.fetch_all(sql, params)]

    def facts_with_values(
        self,
        group_id: str,
        predicates: Sequence[str],
        view: TimeView,
        subject_ids: Sequence[str] | None = None,
    ) -> dict[str, dict[str, Any]]:
        if not predicates or (subject_ids is not None and not subject_ids):
            return {}
        names = {f"p{i}": v for i, v in enumerate(predicates)}
        sql = (
            f"SELECT f.subject_id, f.predicate, f.value_json FROM facts f WHERE f.group_id = :g "
            f"AND f.predicate IN ({','.join(':' + k for k in names)}) "
            f"AND f.value_json IS NOT NULL AND {VIEW_SQL}"
        )
        params = {"g": group_id, "at": view.at, "known": view.known, **names}
        if subject_ids is None:
            rows = self._db.fetch_all(sql, params)
        else:  # (group_id, subject_id, predicate) index: a few rows per subject
            rows = []
            unique = list(dict.fromkeys(subject_ids))
            for chunk in chunks(unique, max(MAX_VARS - len(names), 1)):
                ids = {f"s{i}": v for i, v in enumerate(chunk)}
                marks = ",".join(":" + k for k in ids)
                rows += self._db.fetch_all(f"{sql} AND f.subject_id IN ({marks})", params | ids)
        out: dict[str, dict[str, Any]] = {}
        for subject_id, predicate, raw in rows:
            values = out.setdefault(subject_id, {}).setdefault(predicate, [])
            values.append(json.loads(raw))
        return out
