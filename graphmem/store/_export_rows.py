"""Rows to export records and back: one function per record type (see ``_export`` for the
format), and ``plan_from_export`` turning an export's records into one ``WritePlan``."""

from __future__ import annotations

import base64
import json
from collections.abc import Sequence
from typing import Any

import numpy as np

from .._errors import InputError
from .._time import from_ms, parse_datetime, to_ms
from ._base import EntityRow, EpisodeRow, FactRow, LinkRow, ProvenanceRow, Vector, WritePlan
from ._links import EpisodeLinkRow

__all__ = [
    "entity_export",
    "episode_export",
    "episode_from_export",
    "episode_link_export",
    "fact_export",
    "iso",
    "link_export",
    "plan_from_export",
    "provenance_export",
]


def iso(ms: int | None) -> str | None:
    if ms is None:
        return None
    return from_ms(ms).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _ms(text: str | None) -> int | None:
    if text is None:
        return None
    return to_ms(parse_datetime(text, "export time"))


def _b64(vector: Vector | None) -> str | None:
    if vector is None:
        return None
    data = np.ascontiguousarray(vector, dtype="<f4").tobytes()
    return base64.b64encode(data).decode("ascii")


def _unb64(text: str | None) -> Vector | None:
    if text is None:
        return None
    return np.frombuffer(base64.b64decode(text), dtype="<f4").astype(np.float32)


def episode_export(ep: EpisodeRow) -> dict[str, Any]:
    return {
        "type": "episode",
        "id": ep.id,
        "group_id": ep.group_id,
        "source": ep.source,
        "kind": ep.kind,
        "content": ep.content,
        "reference_time": iso(ep.reference_time),
        "ingested_at": iso(ep.ingested_at),
        "content_hash": ep.content_hash,
        "status": ep.status,
        "extractor": ep.extractor,
        "error": ep.error,
        "metadata": ep.metadata,
        "embedding": _b64(ep.embedding),
    }


def entity_export(e: EntityRow) -> dict[str, Any]:
    return {
        "type": "entity",
        "id": e.id,
        "group_id": e.group_id,
        "name": e.name,
        "key": e.key,
        "entity_type": e.type,
        "aliases": list(e.aliases),
        "summary": e.summary,
        "embedding": _b64(e.embedding),
        "created_at": iso(e.created_at),
        "attributes": e.attributes,
    }


def fact_export(f: FactRow) -> dict[str, Any]:
    return {
        "type": "fact",
        "id": f.id,
        "group_id": f.group_id,
        "subject_id": f.subject_id,
        "predicate": f.predicate,
        "object_id": f.object_id,
        "value": None if f.value_json is None else json.loads(f.value_json),
        "statement": f.statement,
        "embedding": _b64(f.embedding),
        "valid_from": iso(f.valid_from),
        "valid_to": iso(f.valid_to),
        "recorded_at": iso(f.recorded_at),
        "expired_at": iso(f.expired_at),
        "ended_at": iso(f.ended_at),
        "end_reason": f.end_reason,
        "confidence": float(f.confidence),
        "decided_by": f.decided_by,
    }


def link_export(link: LinkRow) -> dict[str, Any]:
    return {
        "type": "link",
        "kind": link.kind,
        "src": link.src,
        "dst": link.dst,
        "reason": link.reason,
        "decided_by": link.decided_by,
        "decided_at": iso(link.decided_at),
    }


def episode_link_export(link: EpisodeLinkRow) -> dict[str, Any]:
    return {
        "type": "episode_link",
        "kind": link.kind,
        "src": link.src,
        "dst": link.dst,
        "group_id": link.group_id,
        "reason": link.reason,
        "terms": list(link.terms),
        "decided_at": iso(link.decided_at),
    }


def episode_from_export(r: dict[str, Any]) -> EpisodeRow:
    return EpisodeRow(
        id=r["id"],
        group_id=r["group_id"],
        source=r.get("source"),
        kind=r["kind"],
        content=r["content"],
        reference_time=_ms(r["reference_time"]) or 0,
        ingested_at=_ms(r["ingested_at"]) or 0,
        content_hash=r["content_hash"],
        status=r.get("status", "extracted"),
        extractor=r.get("extractor"),
        error=r.get("error"),
        metadata=r.get("metadata") or {},
        embedding=_unb64(r.get("embedding")),
    )


def provenance_export(kind: str, row: ProvenanceRow) -> dict[str, Any]:
    """A provenance (FROM_EPISODE) or ending (ENDED_BY) record."""
    return {
        "type": kind,
        "fact_id": row.fact_id,
        "episode_id": row.episode_id,
        "span": row.span,
        "claim": None if row.claim is None else json.loads(row.claim),
    }


def _provenance_from_export(r: dict[str, Any]) -> ProvenanceRow:
    from ..reconcile.claims import StatedClaim  # the claims module imports the store's rows

    claim = r.get("claim")
    if claim is not None:
        claim = StatedClaim.from_dict(claim).to_json()
    elif r["type"] == "ending":
        raise InputError("ending: claim: missing (a negation needs its time)")
    return ProvenanceRow(r["fact_id"], r["episode_id"], r.get("span"), claim)


def plan_from_export(rows: Sequence[dict[str, Any]]) -> WritePlan:
    """The entities, facts, links, provenance and mentions of an export, as one plan."""
    plan = WritePlan()
    for r in rows:
        kind = r.get("type")
        if kind == "entity":
            plan.entities_new.append(
                EntityRow(
                    id=r["id"],
                    group_id=r["group_id"],
                    name=r["name"],
                    key=r["key"],
                    type=r["entity_type"],
                    aliases=list(r.get("aliases") or []),
                    summary=r.get("summary"),
                    embedding=_unb64(r.get("embedding")),
                    created_at=_ms(r.get("created_at")) or 0,
                    attributes=r.get("attributes") or {},
                )
            )
        elif kind == "fact":
            value = r.get("value")
            plan.facts_new.append(
                FactRow(
                    id=r["id"],
                    group_id=r["group_id"],
                    subject_id=r["subject_id"],
                    predicate=r["predicate"],
                    object_id=r.get("object_id"),
                    value_json=None if value is None else json.dumps(value, ensure_ascii=False),
                    statement=r["statement"],
                    valid_from=_ms(r["valid_from"]) or 0,
                    valid_to=_ms(r.get("valid_to")),
                    recorded_at=_ms(r["recorded_at"]) or 0,
                    expired_at=_ms(r.get("expired_at")),
                    ended_at=_ms(r.get("ended_at")),
                    end_reason=r.get("end_reason"),
                    confidence=float(r.get("confidence", 1.0)),
                    decided_by=r.get("decided_by", "rule"),
                    embedding=_unb64(r.get("embedding")),
                )
            )
        elif kind == "provenance":
            plan.provenance.append(_provenance_from_export(r))
        elif kind == "ending":
            plan.endings.append(_provenance_from_export(r))
        elif kind == "link":
            plan.links_add.append(
                LinkRow(
                    kind=r["kind"],
                    src=r["src"],
                    dst=r["dst"],
                    reason=r["reason"],
                    decided_by=r["decided_by"],
                    decided_at=_ms(r["decided_at"]) or 0,
                )
            )
        elif kind == "mention":
            plan.mentions.append((r["episode_id"], r["entity_id"]))
        elif kind == "episode_link":
            plan.episode_links_add.append(
                EpisodeLinkRow(
                    kind=r["kind"],
                    src=r["src"],
                    dst=r["dst"],
                    group_id=r["group_id"],
                    reason=r["reason"],
                    terms=tuple(r.get("terms") or ()),
                    decided_at=_ms(r["decided_at"]) or 0,
                )
            )
    return plan
