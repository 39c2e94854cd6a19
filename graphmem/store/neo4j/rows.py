"""The Neo4j store's conversions between stored node properties and the store's rows.

Reading: node property maps (and query records) into ``EpisodeRow``/``EntityRow``/``FactRow``/
``LinkRow``/``FactRecord``, exactly as the SQLite store builds them. Writing: rows into the
property maps the ``create`` queries take (times as epoch milliseconds, JSON maps as JSON text,
embeddings rounded as SQLite keeps them, each node's ``seq`` and ``group_token``). Filter
conditions into the parameters of ``facts/filter_candidates``.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import numpy as np
from neo4j import Record

from ..._filters import Condition, equal_texts, finite_number, value_texts, widen
from ..._ids import entity_key
from ..._models import FactRecord
from ..._time import from_ms
from .._base import EntityRow, EpisodeRow, FactRow, LinkRow, TimeView, Vector
from .._experience import ExperienceEntry
from .._links import EpisodeLinkRow
from .._vectors import quantize
from .search import group_token

__all__ = [
    "alias_keys",
    "alias_text",
    "cypher_condition",
    "entity_params",
    "entity_row",
    "episode_link",
    "episode_params",
    "episode_row",
    "episode_speaker",
    "fact_props",
    "fact_record",
    "fact_row",
    "float_list",
    "json_dump",
    "link",
    "link_order",
    "opt_int",
    "stored_list",
    "view_params",
]


def float_list(vector: Vector | None) -> list[float] | None:
    if vector is None:
        return None
    return [float(x) for x in np.asarray(vector, dtype=np.float32)]


def stored_list(vector: Vector | None) -> list[float] | None:
    """A vector to store: rounded as the SQLite store keeps it (``_vectors.quantize``: int8 with
    a per-vector scale), so that both stores rank and export alike. Still a float list: that is
    what the vector index reads (Neo4j's compact VECTOR type needs Cypher 25 and the block store
    format; Community Edition and the ArcadeDB test server have neither)."""
    return float_list(quantize(vector))


def _vector(values: Any) -> Vector | None:
    if values is None:
        return None
    return np.asarray(values, dtype=np.float32)


def json_dump(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, default=str)


def alias_keys(aliases: Sequence[str]) -> list[str]:
    return list(dict.fromkeys(entity_key(a) for a in aliases if a.strip()))


def alias_text(aliases: Sequence[str]) -> str:
    return " ".join(aliases)


def opt_int(value: Any) -> int | None:
    return None if value is None else int(value)


# ---------------------------------------------------------------------- stored -> rows
def episode_row(p: dict[str, Any]) -> EpisodeRow:
    return EpisodeRow(
        id=p["id"],
        group_id=p["group_id"],
        source=p.get("source"),
        kind=p["kind"],
        content=p["content"],
        reference_time=int(p["reference_time"]),
        ingested_at=int(p["ingested_at"]),
        content_hash=p["content_hash"],
        status=p.get("status") or "pending",
        extractor=p.get("extractor"),
        error=p.get("error"),
        metadata=json.loads(p.get("metadata") or "{}"),
        embedding=_vector(p.get("embedding")),  # only the export reads it (as on SQLite)
    )


def entity_row(p: dict[str, Any]) -> EntityRow:
    return EntityRow(
        id=p["id"],
        group_id=p["group_id"],
        name=p["name"],
        key=p["key"],
        type=p["type"],
        aliases=list(p.get("aliases") or []),
        summary=p.get("summary"),
        embedding=_vector(p.get("embedding")),
        created_at=int(p.get("created_at") or 0),
        attributes=json.loads(p.get("attributes") or "{}"),
    )


def fact_row(p: dict[str, Any]) -> FactRow:
    return FactRow(
        id=p["id"],
        group_id=p["group_id"],
        subject_id=p["subject_id"],
        predicate=p["predicate"],
        object_id=p.get("object_id"),
        value_json=p.get("value_json"),
        statement=p["statement"],
        valid_from=int(p["valid_from"]),
        valid_to=opt_int(p.get("valid_to")),
        recorded_at=int(p["recorded_at"]),
        expired_at=opt_int(p.get("expired_at")),
        ended_at=opt_int(p.get("ended_at")),
        end_reason=p.get("end_reason"),
        confidence=float(p.get("confidence", 1.0)),
        decided_by=p.get("decided_by") or "rule",
        embedding=_vector(p.get("embedding")),
    )


def fact_record(row: Record | dict[str, Any], view: TimeView | None) -> FactRecord:
    """Exactly the SQLite store's ``_fact_record`` on the row of ``facts/records``."""
    f: dict[str, Any] = row["f"]
    valid_to = f.get("valid_to")
    ended_at = f.get("ended_at")
    if view is not None and valid_to is not None and ended_at is not None and ended_at > view.known:
        valid_to = None  # not yet known at `known`
    superseded_by: str | None = row["superseded_by"]
    reason: str | None = row["superseded_reason"] if superseded_by is not None else None
    if superseded_by is not None and reason is None:
        reason = ""
    if reason is None and f.get("end_reason"):
        reason = f["end_reason"]
    raw = f.get("value_json")
    episode_ids = sorted(str(e) for e in (row["episode_ids"] or []))
    return FactRecord(
        id=f["id"],
        statement=f["statement"],
        subject=row["subject_name"],
        predicate=f["predicate"],
        object=row["object_name"],
        value=None if raw is None else json.loads(raw),
        valid_from=from_ms(int(f["valid_from"])),
        valid_to=None if valid_to is None else from_ms(int(valid_to)),
        recorded_at=from_ms(int(f["recorded_at"])),
        expired_at=None if f.get("expired_at") is None else from_ms(int(f["expired_at"])),
        confidence=float(f.get("confidence", 1.0)),
        superseded_by=superseded_by,
        reason=reason,
        episode_ids=episode_ids,
        group_id=f["group_id"],
        subject_id=f["subject_id"],
        object_id=f.get("object_id"),
        decided_by=f.get("decided_by") or "rule",
    )


def link(row: Record | dict[str, Any]) -> LinkRow:
    return LinkRow(
        kind=row["kind"],
        src=row["src"],
        dst=row["dst"],
        reason=row["reason"],
        decided_by=row["decided_by"],
        decided_at=int(row["decided_at"]),
    )


def episode_link(row: Record | dict[str, Any]) -> EpisodeLinkRow:
    return EpisodeLinkRow(
        kind=row["kind"],
        src=row["src"],
        dst=row["dst"],
        group_id=row["group_id"],
        reason=row["reason"],
        terms=tuple(row["terms"] or ()),
        decided_at=int(row["decided_at"]),
    )


def link_order(lk: LinkRow) -> tuple[str, str, str, str, str, int]:
    # SQLite answers these UNION queries in column order; keep the same order here.
    return (lk.kind, lk.src, lk.dst, lk.reason, lk.decided_by, lk.decided_at)


# ---------------------------------------------------------------------- query parameters
def view_params(view: TimeView | None) -> dict[str, int | None]:
    if view is None:
        return {"at": None, "known": None}
    return {"at": int(view.at), "known": int(view.known)}


def cypher_condition(cond: Condition) -> dict[str, Any]:
    """A filter condition as the parameters of ``facts/filter_candidates``: a test on the stored
    JSON text that accepts every value ``_filters.matches`` accepts (and may accept a few more:
    a number within SLACK, any string for a string range)."""
    texts: list[str] = []
    ranges: list[list[float | None]] = []
    exclude: list[str] = []  # texts of the bound of a strict range: fail for sure
    numbers = strings = False
    if cond.op in ("$eq", "$in"):
        for operand in cond.operand if cond.op == "$in" else (cond.operand,):
            if isinstance(operand, bool | str):
                found = value_texts(operand)
                texts += found
                strings = strings or not found  # a string the server cannot take
            elif (number := finite_number(operand)) is not None:
                ranges.append(list(widen(number)))
            else:
                numbers = True
    elif isinstance(cond.operand, str):
        strings = True  # string order: matches() decides
    elif (number := finite_number(cond.operand)) is not None:
        lo, hi = widen(number)
        ranges.append([None, hi] if cond.op in ("$lt", "$lte") else [lo, None])
        if cond.op in ("$lt", "$gt"):
            exclude = equal_texts(cond.operand)
    else:
        numbers = True
    return {
        "path": cond.path,
        "texts": texts,
        "ranges": ranges,
        "exclude": exclude,
        "numbers": numbers,
        "strings": strings,
    }


# ---------------------------------------------------------------------- rows -> stored
def episode_speaker(metadata: Any) -> str | None:
    """The derived ``speaker`` property of an episode: ``metadata.speaker``, else
    ``metadata.name``, as text, read the way the SQLite store's ``coalesce(json_extract(…))``
    reads it (a JSON object or list is its compact JSON text; a number or a boolean is no
    speaker)."""
    if not isinstance(metadata, dict):
        return None
    value = metadata.get("speaker")
    if value is None:
        value = metadata.get("name")
    if isinstance(value, str):
        return value
    if isinstance(value, dict | list):
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)
    return None


def episode_params(ep: EpisodeRow, seq: int) -> dict[str, Any]:
    return {
        "id": ep.id,
        "group_id": ep.group_id,
        "source": ep.source,
        "kind": ep.kind,
        "content": ep.content,
        "reference_time": int(ep.reference_time),
        "ingested_at": int(ep.ingested_at),
        "content_hash": ep.content_hash,
        "status": ep.status,
        "extractor": ep.extractor,
        "error": ep.error,
        "metadata": json_dump(ep.metadata),
        "speaker": episode_speaker(ep.metadata),
        "seq": seq,
        "group_token": group_token(ep.group_id),
        "embedding": stored_list(ep.embedding),
        **experience_params(ep.experience if ep.kind == "experience" else None),
    }


def experience_params(entry: ExperienceEntry | None) -> dict[str, Any]:
    """An experience's index entry as episode properties (all null without one)."""
    if entry is None:
        return dict.fromkeys(("x_success", "x_length", "x_terms", "x_tfs", "x_values"))
    return {
        "x_success": entry.success,
        "x_length": entry.length,
        "x_terms": list(entry.terms),
        "x_tfs": list(entry.terms.values()),
        "x_values": json_dump(entry.values),
    }


def entity_params(e: EntityRow, seq: int) -> dict[str, Any]:
    return {
        "id": e.id,
        "group_id": e.group_id,
        "name": e.name,
        "key": e.key,
        "type": e.type,
        "aliases": list(e.aliases),
        "alias_text": alias_text(e.aliases),
        "summary": e.summary,
        "embedding": stored_list(e.embedding),
        "created_at": int(e.created_at),
        "attributes": json_dump(e.attributes),
        "seq": seq,
        "group_token": group_token(e.group_id),
    }


def fact_props(f: FactRow, seq: int) -> dict[str, Any]:
    return {
        "id": f.id,
        "group_id": f.group_id,
        "subject_id": f.subject_id,
        "predicate": f.predicate,
        "object_id": f.object_id,
        "value_json": f.value_json,
        "statement": f.statement,
        "embedding": stored_list(f.embedding),
        "valid_from": int(f.valid_from),
        "valid_to": opt_int(f.valid_to),
        "recorded_at": int(f.recorded_at),
        "expired_at": opt_int(f.expired_at),
        "ended_at": opt_int(f.ended_at),
        "end_reason": f.end_reason,
        "confidence": float(f.confidence),
        "decided_by": f.decided_by,
        "seq": seq,
        "group_token": group_token(f.group_id),
    }
