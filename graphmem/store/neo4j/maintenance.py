"""The Neo4j store's whole-store operations: counts, the JSONL export and the test wipe.

(``import_rows`` is a write and lives with the write path; forgetting is a ``WritePlan`` whose
deletions the write path applies first.)
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from ..._time import to_ms, utcnow
from .._base import ProvenanceRow
from .._export import (
    entity_export,
    episode_export,
    episode_link_export,
    fact_export,
    link_export,
    provenance_export,
)
from .rows import entity_row, episode_link, episode_row, fact_row, link
from .runner import BoltRunner, run
from .schema import Schema

__all__ = ["Maintenance"]

_COUNTS = (
    "episodes",
    "episodes_failed",
    "episodes_pending",
    "entities",
    "facts",
    "facts_current",
    "facts_expired",
    "supersedes_links",
    "contradicts_links",
)


class Maintenance:
    """Stats, export and wipe over the store's runner."""

    def __init__(self, bolt: BoltRunner, schema: Schema) -> None:
        self._bolt = bolt
        self._schema = schema

    def stats(self, group_id: str | None) -> dict[str, Any]:
        rows = self._bolt.read("stats/counts", group_id=group_id, now=to_ms(utcnow()))
        counts = dict(rows[0]) if rows else {}
        groups = (
            [str(r["group_id"]) for r in self._bolt.read("stats/groups")]
            if group_id is None
            else [group_id]
        )
        return {
            "store": self._bolt.config.url,
            "group_id": group_id,
            **{k: int(counts.get(k) or 0) for k in _COUNTS},
            "groups": groups,
            "embedder": self._schema.get_meta("embedder"),
        }

    def export_rows(self, group_id: str | None) -> Iterator[dict[str, Any]]:
        """The SQLite store's JSONL records, in the same order (insertion order)."""
        stream = self._bolt.stream
        for r in stream("export/episodes", group_id=group_id):
            yield episode_export(episode_row(r["e"]))
        for r in stream("export/entities", group_id=group_id):
            yield entity_export(entity_row(r["e"]))
        for r in stream("export/facts", group_id=group_id):
            yield fact_export(fact_row(r["f"]))
        for name, kind in (("export/provenance", "provenance"), ("export/endings", "ending")):
            for r in stream(name, group_id=group_id):
                yield provenance_export(
                    kind, ProvenanceRow(r["fact_id"], r["episode_id"], r["span"], r["claim"])
                )
        for r in stream("export/links", group_id=group_id):
            yield link_export(link(r))
        for r in stream("export/mentions", group_id=group_id):
            yield {"type": "mention", "episode_id": r["episode_id"], "entity_id": r["entity_id"]}
        for r in stream("export/episode_links", group_id=group_id):
            yield episode_link_export(episode_link(r))

    def wipe(self, *, keep_schema: bool = False) -> int:
        """Delete every node and relationship of the database, in batches (schema is kept;
        with ``keep_schema`` its migration records too). The store's caches are the caller's
        to drop."""
        total = 0
        while True:
            rows = self._bolt.write_tx(
                lambda tx: run(tx, "admin/wipe_batch", batch=5000, keep_schema=keep_schema),
                "wipe the database",
            )
            deleted = int(rows[0]["deleted"]) if rows else 0
            total += deleted
            if deleted == 0:
                return total
