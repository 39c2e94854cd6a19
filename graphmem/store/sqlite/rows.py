"""What every part of the SQLite store shares: chunking of bound parameters, the time-view SQL,
and the conversion of result rows into the ``_base`` rows and the public records."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator, Sequence
from typing import Any

from ..._models import FactRecord
from ..._time import from_ms
from .._base import EntityRow, EpisodeRow, FactRow, TimeView
from .._links import EpisodeLinkRow
from .._vectors import from_blob

__all__ = [
    "FACT_SELECT",
    "MAX_VARS",
    "VIEW_SQL",
    "alias_keys",
    "chunks",
    "entity_row",
    "episode_row",
    "fact_record",
    "fact_row",
    "qmarks",
    "search_text",
]

MAX_VARS = 900  # stay well below SQLite's bound-parameter limit

# A fact is visible in a view when memory believed it at `known` and it held in the world at
# `at`. Its valid_to only counts if memory had learned it by `known` (ended_at).
VIEW_SQL = (
    "f.recorded_at <= :known AND (f.expired_at IS NULL OR f.expired_at > :known) "
    "AND f.valid_from <= :at AND (f.valid_to IS NULL OR f.valid_to > :at "
    "OR (f.ended_at IS NOT NULL AND f.ended_at > :known))"
)

FACT_SELECT = """
SELECT f.id, f.group_id, f.subject_id, f.predicate, f.object_id, f.value_json, f.statement,
       f.valid_from, f.valid_to, f.recorded_at, f.expired_at, f.ended_at, f.end_reason,
       f.confidence, f.decided_by, s.name AS subject_name, o.name AS object_name,
       (SELECT group_concat(fe.episode_id, ',') FROM fact_episodes fe
         WHERE fe.fact_id = f.id) AS episode_ids,
       (SELECT l.src || '|' || l.reason FROM fact_links l
         WHERE l.dst = f.id AND l.kind = 'SUPERSEDES'
         ORDER BY l.decided_at DESC LIMIT 1) AS superseded
FROM facts f JOIN entities s ON s.id = f.subject_id LEFT JOIN entities o ON o.id = f.object_id
"""


def chunks(items: Sequence[Any], size: int = MAX_VARS) -> Iterator[Sequence[Any]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


def qmarks(n: int) -> str:
    return ",".join("?" * n)


def alias_keys(aliases: Sequence[str]) -> list[str]:
    from ..._ids import entity_key

    return list(dict.fromkeys(entity_key(a) for a in aliases if a.strip()))


def search_text(name: str, aliases: Sequence[str]) -> str:
    return " ".join([name, *aliases])


def episode_row(row: sqlite3.Row | tuple[Any, ...]) -> EpisodeRow:
    return EpisodeRow(
        id=row[0],
        group_id=row[1],
        source=row[2],
        kind=row[3],
        content=row[4],
        reference_time=row[5],
        ingested_at=row[6],
        content_hash=row[7],
        status=row[8],
        extractor=row[9],
        error=row[10],
        metadata=json.loads(row[11] or "{}"),
        embedding=from_blob(row[12]) if len(row) > 12 else None,
    )


def episode_link_row(row: sqlite3.Row | tuple[Any, ...]) -> EpisodeLinkRow:
    """An ``episode_links`` row, its columns in table order (``terms`` a JSON list)."""
    return EpisodeLinkRow(
        row[0], row[1], row[2], row[3], row[4], tuple(json.loads(row[5])), row[6]
    )


def entity_row(row: sqlite3.Row) -> EntityRow:
    return EntityRow(
        id=row["id"],
        group_id=row["group_id"],
        name=row["name"],
        key=row["key"],
        type=row["type"],
        aliases=json.loads(row["aliases"]),
        summary=row["summary"],
        embedding=from_blob(row["embedding"]),
        created_at=row["created_at"],
        attributes=json.loads(row["attributes"]),
    )


def fact_row(row: sqlite3.Row) -> FactRow:
    return FactRow(
        id=row["id"],
        group_id=row["group_id"],
        subject_id=row["subject_id"],
        predicate=row["predicate"],
        object_id=row["object_id"],
        value_json=row["value_json"],
        statement=row["statement"],
        valid_from=row["valid_from"],
        valid_to=row["valid_to"],
        recorded_at=row["recorded_at"],
        expired_at=row["expired_at"],
        ended_at=row["ended_at"],
        end_reason=row["end_reason"],
        confidence=row["confidence"],
        decided_by=row["decided_by"],
        embedding=from_blob(row["embedding"]),
    )


def fact_record(row: sqlite3.Row, view: TimeView | None) -> FactRecord:
    valid_to = row["valid_to"]
    ended_at = row["ended_at"]
    if view is not None and valid_to is not None and ended_at is not None and ended_at > view.known:
        valid_to = None  # not yet known at `known`
    superseded_by = reason = None
    if row["superseded"]:
        superseded_by, _, reason = str(row["superseded"]).partition("|")
    if reason is None and row["end_reason"]:
        reason = row["end_reason"]
    raw = row["value_json"]
    return FactRecord(
        id=row["id"],
        statement=row["statement"],
        subject=row["subject_name"],
        predicate=row["predicate"],
        object=row["object_name"],
        value=None if raw is None else json.loads(raw),
        valid_from=from_ms(row["valid_from"]),
        valid_to=None if valid_to is None else from_ms(valid_to),
        recorded_at=from_ms(row["recorded_at"]),
        expired_at=None if row["expired_at"] is None else from_ms(row["expired_at"]),
        confidence=row["confidence"],
        superseded_by=superseded_by,
        reason=reason,
        episode_ids=sorted((row["episode_ids"] or "").split(",")) if row["episode_ids"] else [],
        group_id=row["group_id"],
        subject_id=row["subject_id"],
        object_id=row["object_id"],
        decided_by=row["decided_by"],
    )
