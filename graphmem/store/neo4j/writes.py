"""The Neo4j store's write path: episodes, the write unit (``write``/``write_many``), a plan's
application in one transaction, and imports.

Every write is one managed write transaction through ``BoltRunner.write_tx`` (serialised by
the lock node; the driver re-runs the unit after a transient failure, so units are pure). A
plan is applied in the SQLite store's order: deletions first (forget), then inserts and
updates; ``seq`` numbers keep SQLite's insertion order. ``write_many`` and ``import_rows`` take
the plan applier as an argument: the store passes its own ``_apply``, looked up per call.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Sequence
from typing import Any

from neo4j import ManagedTransaction

from ..._errors import StoreError
from ..._ids import make_id
from ..._time import to_ms, utcnow
from .._base import EpisodeRow, StoreReader, WritePlan
from .._export import episode_from_export, plan_from_export
from .rows import (
    alias_keys,
    alias_text,
    entity_params,
    episode_params,
    episode_row,
    fact_props,
    json_dump,
    opt_int,
    stored_list,
)
from .runner import BoltRunner, chunks, run
from .schema import Schema
from .speakers import EPISODE_EPOCH
from .tx_reader import TxReader

__all__ = ["Applier", "Writes"]

# Applies one plan inside the write transaction (the store's ``_apply``).
Applier = Callable[[ManagedTransaction, WritePlan], None]
_LINK_QUERIES = {"SUPERSEDES": "facts/supersedes_add", "CONTRADICTS": "facts/contradicts_add"}


class Writes:
    """Everything that changes the graph, over the store's runner."""

    def __init__(self, bolt: BoltRunner, schema: Schema) -> None:
        self._bolt = bolt
        self._schema = schema

    # ------------------------------------------------------------------ episodes
    def insert_episodes(self, episodes: Sequence[EpisodeRow]) -> list[tuple[EpisodeRow, bool]]:
        if not episodes:
            return []

        def work(tx: ManagedTransaction) -> list[tuple[EpisodeRow, bool]]:
            ids = list(dict.fromkeys(e.id for e in episodes))
            stored: dict[str, EpisodeRow] = {}
            for chunk in chunks(ids):
                for r in run(tx, "episodes/by_ids", ids=list(chunk)):
                    row = episode_row(r["e"])
                    stored[row.id] = row
            out: list[tuple[EpisodeRow, bool]] = []
            fresh: list[EpisodeRow] = []
            for ep in episodes:
                if ep.id in stored:
                    out.append((stored[ep.id], False))
                    continue
                stored[ep.id] = ep
                fresh.append(ep)
                out.append((ep, True))
            if fresh:
                base = self._bolt.seq(len(fresh))
                run(
                    tx,
                    "episodes/create",
                    rows=[episode_params(ep, base + i) for i, ep in enumerate(fresh)],
                )
            return out

        return self._bolt.write_tx(work, "store episodes")

    def set_episode_status(
        self, episode_id: str, status: str, extractor: str | None, error: str | None
    ) -> None:
        self._bolt.write_tx(
            lambda tx: run(
                tx,
                "episodes/set_status",
                id=episode_id,
                status=status,
                extractor=extractor,
                error=error,
            ),
            "set an episode's status",
        )

    # ------------------------------------------------------------------ the write unit
    def write_many(
        self, works: Sequence[Callable[[StoreReader], WritePlan]], apply: Applier
    ) -> list[WritePlan]:
        if not works:
            return []

        def unit(tx: ManagedTransaction) -> list[WritePlan]:
            # The driver may run this again after a transient failure: each work is pure, and
            # each sees the plans applied before it in this transaction.
            reader = TxReader(tx, self._bolt.write_seq)
            plans: list[WritePlan] = []
            for work in works:
                plan = work(reader)
                apply(tx, plan)
                plans.append(plan)
            return plans

        plans = self._bolt.write_tx(unit, "write")
        self._after_write(plans)
        return plans

    def _after_write(self, plans: Sequence[WritePlan]) -> None:
        """Direct store use without a recorded embedder: index vectors once their size is known."""
        if self._schema.vector_dim is not None:
            return
        for plan in plans:
            vectors = [
                plan.episode_embedding,
                *(f.embedding for f in plan.facts_new),
                *(e.embedding for e in plan.entities_new),
            ]
            for vector in vectors:
                if vector is not None and vector.shape[0] > 0:
                    self._schema.ensure_vector_indexes(int(vector.shape[0]))
                    return

    def apply(self, tx: ManagedTransaction, plan: WritePlan) -> None:
        # The SQLite store's order: deletions first (forget), then inserts and updates.
        for chunk in chunks(plan.delete_fact_ids):
            run(tx, "facts/delete", ids=list(chunk))
        for chunk in chunks(plan.delete_episode_ids):
            run(tx, "episodes/delete", ids=list(chunk))
        if plan.delete_episode_ids:
            # Cached speakers (here and in other processes) start over.
            run(tx, "meta/set", key=EPISODE_EPOCH, value=str(self._bolt.seq(1)))
        for chunk in chunks(plan.delete_entity_ids):
            run(tx, "entities/delete_alias_keys", ids=list(chunk))
            run(tx, "entities/delete", ids=list(chunk))
        if plan.entities_new:
            base = self._bolt.seq(len(plan.entities_new))
            run(
                tx,
                "entities/create",
                rows=[entity_params(e, base + i) for i, e in enumerate(plan.entities_new)],
            )
            alias_rows = [
                {"group_id": e.group_id, "key": k, "entity_id": e.id}
                for e in plan.entities_new
                for k in alias_keys(e.aliases)
            ]
            if alias_rows:
                run(tx, "entities/alias_keys_add", rows=alias_rows)
        if plan.entity_aliases:
            updated = run(
                tx,
                "entities/aliases_set",
                rows=[
                    {"id": eid, "aliases": list(aliases), "alias_text": alias_text(aliases)}
                    for eid, aliases in plan.entity_aliases.items()
                ],
            )
            alias_rows = [
                {"group_id": r["group_id"], "key": k, "entity_id": r["id"]}
                for r in updated
                for k in alias_keys(plan.entity_aliases[r["id"]])
            ]
            if alias_rows:
                run(tx, "entities/alias_keys_add", rows=alias_rows)
        if plan.facts_new:
            base = self._bolt.seq(len(plan.facts_new))
            run(
                tx,
                "facts/create",
                rows=[{"props": fact_props(f, base + i)} for i, f in enumerate(plan.facts_new)],
            )
        if plan.facts_update:
            run(
                tx,
                "facts/update",
                rows=[
                    {
                        "id": u.id,
                        "valid_from": int(u.valid_from),
                        "valid_to": opt_int(u.valid_to),
                        "expired_at": opt_int(u.expired_at),
                        "ended_at": opt_int(u.ended_at),
                        "end_reason": u.end_reason,
                        "confidence": float(u.confidence),
                    }
                    for u in plan.facts_update
                ],
            )
        for chunk in chunks(plan.claims_reset):
            run(tx, "facts/claims_reset", ids=list(chunk))
        for name, prov_rows in (
            ("facts/provenance_add", plan.provenance),
            ("facts/endings_add", plan.endings),
        ):
            if prov_rows:
                base = self._bolt.seq(len(prov_rows))
                run(
                    tx,
                    name,
                    rows=[
                        {
                            "fact_id": r.fact_id,
                            "episode_id": r.episode_id,
                            "span": r.span,
                            "claim": r.claim,
                            "seq": base + i,
                        }
                        for i, r in enumerate(prov_rows)
                    ],
                )
        if plan.links_remove:
            run(
                tx,
                "facts/links_remove",
                rows=[{"kind": k, "src": s, "dst": d} for k, s, d in plan.links_remove],
            )
        if plan.links_add:
            base = self._bolt.seq(len(plan.links_add))
            by_kind: dict[str, list[dict[str, Any]]] = {}
            for i, lk in enumerate(plan.links_add):
                if lk.kind not in _LINK_QUERIES:
                    raise StoreError(
                        f"unknown fact link kind {lk.kind!r}: expected SUPERSEDES or CONTRADICTS"
                    )
                by_kind.setdefault(lk.kind, []).append(
                    {
                        "src": lk.src,
                        "dst": lk.dst,
                        "reason": lk.reason,
                        "decided_by": lk.decided_by,
                        "decided_at": int(lk.decided_at),
                        "seq": base + i,
                    }
                )
            for kind, rows in by_kind.items():
                run(tx, _LINK_QUERIES[kind], rows=rows)
        if plan.mentions:
            base = self._bolt.seq(len(plan.mentions))
            run(
                tx,
                "episodes/mentions_add",
                rows=[
                    {"episode_id": ep, "entity_id": ent, "seq": base + i}
                    for i, (ep, ent) in enumerate(plan.mentions)
                ],
            )
        if plan.prune_entity_ids:
            orphans = [
                str(r["deleted"])
                for r in run(tx, "entities/prune", ids=list(dict.fromkeys(plan.prune_entity_ids)))
            ]
            if orphans:
                run(tx, "entities/delete_alias_keys", ids=orphans)
            if orphans and plan.audit is not None:
                plan.audit["entities_removed"] = plan.audit.get("entities_removed", 0) + len(
                    orphans
                )
        # An ingested turn sets its embedding, link terms and status together: one statement
        # (each statement is a round trip, most of a turn's write time on Neo4j). The three
        # touch only the episode's own properties, so running them after its links is the same.
        finished = (
            plan.episode_id is not None
            and plan.episode_embedding is not None
            and plan.episode_terms is not None
            and plan.episode_status is not None
        )
        if not finished:
            self._episode_parts(tx, plan)
        if plan.episode_links_remove:
            run(
                tx,
                "episodes/links_remove",
                rows=[{"src": s, "dst": d} for _, s, d in plan.episode_links_remove],
            )
        if plan.episode_links_add:
            run(
                tx,
                "episodes/links_add",
                rows=[
                    {
                        "src": lk.src,
                        "dst": lk.dst,
                        "group_id": lk.group_id,
                        "reason": lk.reason,
                        "terms": list(lk.terms),
                        "decided_at": int(lk.decided_at),
                    }
                    for lk in plan.episode_links_add
                ],
            )
        if finished:
            assert plan.episode_terms is not None and plan.episode_status is not None
            status, extractor, error = plan.episode_status
            run(
                tx,
                "episodes/extracted_set",
                id=plan.episode_id,
                embedding=stored_list(plan.episode_embedding),
                terms=list(plan.episode_terms),
                status=status,
                extractor=extractor,
                error=error,
            )
        elif plan.episode_id is not None and plan.episode_status is not None:
            status, extractor, error = plan.episode_status
            run(
                tx,
                "episodes/set_status",
                id=plan.episode_id,
                status=status,
                extractor=extractor,
                error=error,
            )
        if plan.audit is not None:
            audit = dict(plan.audit)
            audit_id = make_id("audit", json.dumps(audit, sort_keys=True, default=str))
            audit["id"] = audit_id
            plan.audit["id"] = audit_id
            run(
                tx,
                "audit/record",
                id=audit_id,
                at=int(audit.get("at", to_ms(utcnow()))),
                group_id=str(audit.get("group_id", "")),
                action=str(audit.get("action", "")),
                details=json_dump(audit),
            )

    @staticmethod
    def _episode_parts(tx: ManagedTransaction, plan: WritePlan) -> None:
        """The episode's embedding and link terms, each alone (a plan without all three)."""
        if plan.episode_id is not None and plan.episode_embedding is not None:
            run(
                tx,
                "episodes/embedding_set",
                id=plan.episode_id,
                embedding=stored_list(plan.episode_embedding),
            )
        if plan.episode_id is not None and plan.episode_terms is not None:
            run(tx, "episodes/link_terms_set", id=plan.episode_id, terms=list(plan.episode_terms))

    # ------------------------------------------------------------------ import
    def import_rows(self, rows: Sequence[dict[str, Any]], apply: Applier) -> dict[str, int]:
        """Insert an export's rows; what the store already holds is left alone (and not
        counted), so importing twice changes nothing (the SQLite store's rule)."""
        plan = plan_from_export(rows)
        episodes = [episode_from_export(r) for r in rows if r.get("type") == "episode"]

        def present(tx: ManagedTransaction, name: str, ids: list[str]) -> set[str]:
            return {str(r["id"]) for chunk in chunks(ids) for r in run(tx, name, ids=list(chunk))}

        def work(tx: ManagedTransaction) -> dict[str, int]:
            known = present(tx, "episodes/existing", [ep.id for ep in episodes])
            fresh: list[EpisodeRow] = []
            for ep in episodes:
                if ep.id not in known:
                    known.add(ep.id)
                    fresh.append(ep)
            if fresh:
                base = self._bolt.seq(len(fresh))
                run(
                    tx,
                    "episodes/create",
                    rows=[episode_params(ep, base + i) for i, ep in enumerate(fresh)],
                )
            facts = present(tx, "facts/existing", [f.id for f in plan.facts_new])
            entities = present(tx, "entities/existing", [e.id for e in plan.entities_new])
            links = {
                (str(r["kind"]), str(r["src"]), str(r["dst"]))
                for chunk in chunks(plan.links_add)
                for r in run(
                    tx,
                    "facts/links_existing",
                    rows=[{"kind": lk.kind, "src": lk.src, "dst": lk.dst} for lk in chunk],
                )
            }
            todo = dataclasses.replace(
                plan,
                facts_new=[f for f in plan.facts_new if f.id not in facts],
                entities_new=[e for e in plan.entities_new if e.id not in entities],
                links_add=[lk for lk in plan.links_add if (lk.kind, lk.src, lk.dst) not in links],
                audit=None,
            )
            apply(tx, todo)
            return {
                "episodes": len(fresh),
                "entities": len(todo.entities_new),
                "facts": len(todo.facts_new),
                "links": len(todo.links_add),
            }

        counts = self._bolt.write_tx(work, "import")
        vector = next((ep.embedding for ep in episodes if ep.embedding is not None), None)
        self._after_write([dataclasses.replace(plan, episode_embedding=vector)])
        return counts
