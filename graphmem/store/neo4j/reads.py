"""The Neo4j store's reads outside a write: episodes, entities, facts and their links, graph
expansion and value filters, each one or a few named read queries routed to readers, batched by
``CHUNK`` ids, answering exactly what the SQLite store answers (same rows, same order).
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from typing import Any

from ..._filters import Condition, driving, equal_texts
from ..._models import EntityRecord, EpisodeRecord, FactRecord
from .._base import EpisodeRow, LinkRow, TimeView, breadth_first, episode_record
from .._links import EpisodeLinkRow
from .rows import (
    cypher_condition,
    episode_link,
    episode_row,
    fact_record,
    link,
    link_order,
    view_params,
)
from .runner import BoltRunner, chunks
from .tx_reader import TxReader

__all__ = ["Reads"]


class Reads:
    """Read queries over the store's runner (no state of their own)."""

    def __init__(self, bolt: BoltRunner) -> None:
        self._bolt = bolt

    def get_episode(self, episode_id: str) -> EpisodeRow | None:
        rows = self._bolt.read("episodes/by_ids", ids=[episode_id])
        return episode_row(rows[0]["e"]) if rows else None

    def episodes(self, episode_ids: Sequence[str]) -> list[EpisodeRecord]:
        found: dict[str, EpisodeRow] = {}
        for chunk in chunks(list(dict.fromkeys(episode_ids))):
            for r in self._bolt.read("episodes/by_ids", ids=list(chunk)):
                ep = episode_row(r["e"])
                found[ep.id] = ep
        return [episode_record(found[i]) for i in episode_ids if i in found]

    def episodes_by_status(self, group_id: str | None, statuses: Sequence[str]) -> list[EpisodeRow]:
        rows = self._bolt.read("episodes/by_status", group_id=group_id, statuses=list(statuses))
        return [episode_row(r["e"]) for r in rows]

    def episode_ids_by_kind(self, group_id: str, kind: str) -> list[str]:
        rows = self._bolt.read("episodes/ids_by_kind", group_id=group_id, kind=kind)
        return [str(r["id"]) for r in rows]

    def recent_episodes(
        self, group_id: str, source: str | None, before: int, limit: int
    ) -> list[EpisodeRow]:
        rows = self._bolt.read(
            "episodes/recent",
            group_id=group_id,
            source=source,
            before=int(before),
            limit=int(limit),
        )
        return [episode_row(r["e"]) for r in reversed(rows)]

    def find_entities(self, group_id: str, keys: Sequence[str]) -> list[EntityRecord]:
        rows = self._bolt.read_tx(
            lambda tx: TxReader(tx).entities_by_keys(group_id, keys), "find entities"
        )
        return [
            EntityRecord(id=r.id, name=r.name, type=r.type, aliases=r.aliases, summary=r.summary)
            for r in rows
        ]

    def find_entities_by_ids(self, group_id: str, entity_ids: Sequence[str]) -> list[EntityRecord]:
        out: list[EntityRecord] = []
        for chunk in chunks(list(dict.fromkeys(entity_ids))):
            out.extend(
                EntityRecord(
                    id=r["id"],
                    name=r["name"],
                    type=r["type"],
                    aliases=list(r["aliases"] or []),
                    summary=r["summary"],
                )
                for r in self._bolt.read("entities/by_ids", ids=list(chunk), group_id=group_id)
            )
        return out

    def expand(
        self, group_id: str, entity_ids: Sequence[str], hops: int, view: TimeView, limit: int
    ) -> list[tuple[str, int, str]]:
        def fetch(ids: list[str]) -> Iterator[tuple[str, str, str | None]]:
            for chunk in chunks(ids, 400):
                rows = self._bolt.read(
                    "facts/expand_hop",
                    ids=list(chunk),
                    group_id=group_id,
                    limit=2 * int(limit),
                    **view_params(view),
                )
                # subject matches first, then object matches, up to the limit (as SQLite)
                rows = sorted(rows, key=lambda r: not r["as_subject"])[: int(limit)]
                for r in rows:
                    yield r["id"], r["subject_id"], r["object_id"]

        return breadth_first(entity_ids, hops, limit, fetch)

    # ------------------------------------------------------------------ fact reads
    def fact_records(
        self, fact_ids: Sequence[str], view: TimeView | None = None
    ) -> list[FactRecord]:
        wanted = list(dict.fromkeys(fact_ids))
        found: dict[str, FactRecord] = {}
        for chunk in chunks(wanted):
            for row in self._bolt.read("facts/records", ids=list(chunk), **view_params(view)):
                record = fact_record(row, view)
                found[record.id] = record
        return [found[i] for i in wanted if i in found]

    def episode_mentions(self, episode_ids: Sequence[str]) -> list[tuple[str, str]]:
        """(episode id, entity id) for each entity the episodes mention."""
        return [
            (str(r["episode_id"]), str(r["entity_id"]))
            for chunk in chunks(list(dict.fromkeys(episode_ids)))
            for r in self._bolt.read("episodes/mentions", ids=list(chunk))
        ]

    def record_facts(self, episode_ids: Sequence[str]) -> list[tuple[str, str]]:
        """(episode id, fact id) for each fact that those of the episodes which are JSON
        records support (FROM_EPISODE), in any view: callers narrow them with
        ``fact_stubs``."""
        return [
            (str(r["episode_id"]), str(r["fact_id"]))
            for chunk in chunks(list(dict.fromkeys(episode_ids)))
            for r in self._bolt.read("episodes/record_facts", ids=list(chunk))
        ]

    def fact_stubs(
        self, fact_ids: Sequence[str], view: TimeView
    ) -> list[tuple[str, str, str | None, int, float]]:
        out: list[tuple[str, str, str | None, int, float]] = []
        for chunk in chunks(list(dict.fromkeys(fact_ids))):
            out.extend(
                (
                    str(r["id"]),
                    str(r["subject_id"]),
                    r["object_id"],
                    int(r["valid_from"]),
                    float(r["confidence"]),
                )
                for r in self._bolt.read("facts/stubs", ids=list(chunk), **view_params(view))
            )
        return out

    def links(self, fact_ids: Sequence[str]) -> list[LinkRow]:
        out: dict[tuple[str, str, str], LinkRow] = {}
        for chunk in chunks(list(dict.fromkeys(fact_ids))):
            for row in self._bolt.read("facts/links_touching", ids=list(chunk)):
                found = link(row)
                out[(found.kind, found.src, found.dst)] = found
        return sorted(out.values(), key=link_order)

    def episode_links(self, episode_ids: Sequence[str]) -> list[EpisodeLinkRow]:
        out: dict[tuple[str, str, str], EpisodeLinkRow] = {}
        for chunk in chunks(list(dict.fromkeys(episode_ids))):
            for row in self._bolt.read("episodes/links_touching", ids=list(chunk)):
                found = episode_link(row)
                out[(found.kind, found.src, found.dst)] = found
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
        params: dict[str, Any] = {"group_id": group_id, "predicate": predicate}
        params.update(view_params(view))
        if entity_ids is not None:
            if not entity_ids:
                return []
            rows = self._bolt.read(
                "facts/list_entities",
                entity_ids=list(entity_ids[:400]),
                subject_only=bool(subject_only),
                **params,
            )
        else:
            rows = self._bolt.read("facts/list_group", **params)
        return [fact_record(row, view) for row in rows]

    def facts_with_values(
        self,
        group_id: str,
        predicates: Sequence[str],
        view: TimeView,
        subject_ids: Sequence[str] | None = None,
    ) -> dict[str, dict[str, Any]]:
        if not predicates or (subject_ids is not None and not subject_ids):
            return {}
        params = {"group_id": group_id, "predicates": list(predicates), **view_params(view)}
        if subject_ids is None:
            rows = self._bolt.read("facts/values", **params)
        else:
            unique = list(dict.fromkeys(subject_ids))
            rows = self._bolt.read("facts/values_of", subject_ids=unique, **params)
        out: dict[str, dict[str, Any]] = {}
        for r in rows:
            values = out.setdefault(r["subject_id"], {}).setdefault(r["predicate"], [])
            values.append(json.loads(r["value_json"]))
        return out

    def filter_candidates(
        self, group_id: str, conditions: Sequence[Condition], view: TimeView, limit: int
    ) -> list[str]:
        if limit <= 0 or not conditions:
            return []
        drive = driving(conditions)
        rows = self._bolt.read(
            "facts/filter_candidates",
            group_id=group_id,
            paths=sorted({c.path for c in conditions}) if drive is None else [drive.path],
            drive=None if drive is None else cypher_condition(drive),
            present=[cypher_condition(c) for c in conditions if c.op != "$ne" and c is not drive],
            absent=[
                {"path": c.path, "texts": texts}
                for c in conditions
                if c.op == "$ne" and (texts := equal_texts(c.operand))
            ],
            limit=int(limit),
            **view_params(view),
        )
        return [str(r["subject_id"]) for r in rows]
