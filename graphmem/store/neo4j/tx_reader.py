"""The Neo4j store's ``StoreReader``: the reads a unit of work makes inside its write
transaction (``Neo4jStore.write``), so that it sees the writes made before it in the same
transaction. ``Neo4jStore.find_entities`` uses it in a read transaction too.
"""

from __future__ import annotations

from collections.abc import Sequence

from neo4j import ManagedTransaction

from ..._ids import entity_key
from .._base import EntityRow, EpisodeRow, FactRow, LinkRow, ProvenanceRow, Timeline
from .rows import entity_row, episode_row, fact_row, link, link_order
from .runner import chunks, run

__all__ = ["TxReader"]


class TxReader:
    """``StoreReader`` on an open managed transaction: sees the writes made before it."""

    def __init__(self, tx: ManagedTransaction, write_seq: int = 0) -> None:
        self.tx = tx
        self.write_seq = write_seq

    def get_episode(self, episode_id: str) -> EpisodeRow | None:
        rows = run(self.tx, "episodes/by_ids", ids=[episode_id])
        return episode_row(rows[0]["e"]) if rows else None

    def entities_by_keys(self, group_id: str, keys: Sequence[str]) -> list[EntityRow]:
        out: dict[str, EntityRow] = {}
        for chunk in chunks(list(dict.fromkeys(keys))):
            for r in run(self.tx, "entities/by_keys", group_id=group_id, keys=list(chunk)):
                row = entity_row(r["e"])
                out[row.id] = row
        ordered = [out[i] for i in sorted(out)]
        return sorted(ordered, key=lambda e: e.created_at)

    def episodes_sharing_terms(
        self, group_id: str, terms: Sequence[str], min_shared: int, exclude: str, at: int,
        limit: int,
    ) -> list[EpisodeRow]:
        wanted = sorted(set(terms))
        if not wanted:
            return []
        rows = run(
            self.tx,
            "episodes/sharing_terms",
            group_id=group_id,
            terms=wanted,
            min_shared=min_shared,
            exclude=exclude,
            at=at,
            limit=limit,
        )
        return [episode_row(r["e"]) for r in rows]

    def timelines(
        self,
        group_id: str,
        pairs: Sequence[tuple[str, str]],
        *,
        include_expired: bool = False,
    ) -> dict[tuple[str, str], Timeline]:
        result: dict[tuple[str, str], Timeline] = {pair: Timeline() for pair in pairs}
        unique = list(dict.fromkeys(pairs))
        if not unique:
            return result
        ids: list[str] = []
        for chunk in chunks(unique):
            rows = run(
                self.tx,
                "facts/timelines",
                group_id=group_id,
                include_expired=include_expired,
                pairs=[{"subject_id": s, "predicate": p} for s, p in chunk],
            )
            for r in rows:
                fact = fact_row(r["f"])
                result[(r["subject_id"], r["predicate"])].facts.append(fact)
                ids.append(fact.id)
        if ids:
            owner = {f.id: pair for pair, tl in result.items() for f in tl.facts}
            links: dict[tuple[str, str, str], LinkRow] = {}
            for id_chunk in chunks(ids):
                for r in run(self.tx, "facts/links_touching", ids=list(id_chunk)):
                    found = link(r)
                    links[(found.kind, found.src, found.dst)] = found
            for lk in sorted(links.values(), key=link_order):  # unique by (kind, src, dst)
                pair = owner.get(lk.src) or owner.get(lk.dst)
                if pair is not None:
                    result[pair].links.append(lk)
        return result

    def facts_by_ids(self, fact_ids: Sequence[str]) -> list[FactRow]:
        out: list[FactRow] = []
        for chunk in chunks(list(fact_ids)):
            out.extend(fact_row(r["f"]) for r in run(self.tx, "facts/by_ids", ids=list(chunk)))
        return out

    def fact_claims(
        self, fact_ids: Sequence[str]
    ) -> tuple[list[ProvenanceRow], list[ProvenanceRow]]:
        provenance: list[ProvenanceRow] = []
        endings: list[ProvenanceRow] = []
        for chunk in chunks(list(fact_ids)):
            for r in run(self.tx, "facts/claims", ids=list(chunk)):
                row = ProvenanceRow(
                    str(r["fact_id"]), str(r["episode_id"]), r["span"], r["claim"]
                )
                (provenance if r["kind"] == "FROM_EPISODE" else endings).append(row)
        return provenance, endings

    def episode_ended_fact_ids(self, episode_ids: Sequence[str]) -> list[str]:
        return [
            str(r["id"])
            for chunk in chunks(list(episode_ids))
            for r in run(self.tx, "episodes/ended_fact_ids", ids=list(chunk))
        ]

    def episode_fact_ids(self, episode_ids: Sequence[str]) -> dict[str, int]:
        out: dict[str, int] = {}
        for chunk in chunks(list(episode_ids)):
            for r in run(self.tx, "episodes/fact_support", ids=list(chunk)):
                out[str(r["id"])] = int(r["n"])
        return out

    def entity_fact_ids(self, entity_id: str) -> list[str]:
        return [str(r["id"]) for r in run(self.tx, "facts/about_entity", entity_id=entity_id)]

    def group_episode_ids(self, group_id: str) -> list[str]:
        return [str(r["id"]) for r in run(self.tx, "episodes/group_ids", group_id=group_id)]

    def group_fact_ids(self, group_id: str) -> list[str]:
        return [str(r["id"]) for r in run(self.tx, "facts/group_ids", group_id=group_id)]

    def group_entity_ids(self, group_id: str) -> list[str]:
        return [str(r["id"]) for r in run(self.tx, "entities/group_ids", group_id=group_id)]

    def episode_entity_ids(self, episode_ids: Sequence[str]) -> list[str]:
        out: list[str] = []
        for chunk in chunks(list(episode_ids)):
            out.extend(
                str(r["id"])
                for r in run(self.tx, "episodes/mentioned_entity_ids", ids=list(chunk))
            )
        return out

    def speaker_episode_ids(self, group_id: str, speaker_keys: Sequence[str]) -> list[str]:
        keys = set(speaker_keys)
        match: dict[str, bool] = {}  # a group has few speakers and many turns
        out: list[str] = []
        for r in run(self.tx, "episodes/speaker_ids", group_id=group_id):
            who = r["speaker"]
            if isinstance(who, str):
                if who not in match:
                    match[who] = entity_key(who) in keys
                if match[who]:
                    out.append(str(r["id"]))
        return out

    def subject_episode_ids(self, group_id: str, entity_ids: Sequence[str]) -> list[str]:
        out: dict[str, None] = {}
        for chunk in chunks(list(entity_ids)):
            rows = run(self.tx, "facts/subject_episode_ids", group_id=group_id, ids=list(chunk))
            out.update((str(r["id"]), None) for r in rows)
        return list(out)
