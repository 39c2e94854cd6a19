"""Moving a Neo4j store to another embedder (``graphmem.ingest.reembed`` drives it).

New vectors are staged on each node as ``embedding_next`` (a committed batch at a time) while
searches keep using ``embedding``; a killed run leaves them for the next run to continue from.
The move ends by swapping them in, in batches, and recording the new embedder; when the
dimension changes the vector indexes are rebuilt for it (searches read no vectors meanwhile).
"""

from __future__ import annotations

from collections.abc import Sequence

from neo4j import ManagedTransaction

from .._base import Vector
from .._reembed import EmbeddingItem
from .rows import stored_list
from .runner import BoltRunner, run
from .schema import Schema, embedder_dim

__all__ = ["Reembedding"]

_KINDS = ("episode", "fact", "entity")
_BACKLOG = {
    "episode": "reembed/backlog_episodes",
    "fact": "reembed/backlog_facts",
    "entity": "reembed/backlog_entities",
}
_COUNT = {
    "episode": "reembed/count_episodes",
    "fact": "reembed/count_facts",
    "entity": "reembed/count_entities",
}
_STAGE = {
    "episode": "reembed/stage_episodes",
    "fact": "reembed/stage_facts",
    "entity": "reembed/stage_entities",
}
_APPLY = {
    "episode": "reembed/apply_episodes",
    "fact": "reembed/apply_facts",
    "entity": "reembed/apply_entities",
}
_SWAP_BATCH = 2000


class Reembedding:
    def __init__(self, bolt: BoltRunner, schema: Schema) -> None:
        self._bolt = bolt
        self._schema = schema

    def backlog(self, limit: int) -> list[EmbeddingItem]:
        out: list[EmbeddingItem] = []
        for kind in _KINDS:
            if len(out) >= limit:
                break
            for r in self._bolt.read(_BACKLOG[kind], limit=limit - len(out)):
                episode_kind = r["kind"] if kind == "episode" else None
                out.append(EmbeddingItem(kind, str(r["id"]), str(r["text"] or ""), episode_kind))
        return out

    def counts(self) -> tuple[int, int]:
        staged = todo = 0
        for kind in _KINDS:
            rows = self._bolt.read(_COUNT[kind])
            if rows:
                staged += int(rows[0]["staged"])
                todo += int(rows[0]["todo"])
        return staged, todo

    def stage(self, rows: Sequence[tuple[str, str, Vector]]) -> None:
        by_kind: dict[str, list[dict[str, object]]] = {}
        for kind, item_id, vector in rows:
            by_kind.setdefault(kind, []).append({"id": item_id, "embedding": stored_list(vector)})

        def work(tx: ManagedTransaction) -> None:
            for kind, batch in by_kind.items():
                run(tx, _STAGE[kind], rows=batch)

        self._bolt.write_tx(work, "stage re-embedded vectors")

    def apply(self, embedder_meta: str) -> bool:
        if any(self.backlog(1)):
            return False
        dim = embedder_dim(embedder_meta)
        recorded = self._schema.get_meta("embedder")
        moved = dim is not None and (recorded is None or embedder_dim(recorded) != dim)
        if moved:
            self._schema.drop_vector_indexes()
        self._swap(apply=True)
        self._bolt.write_tx(
            lambda tx: _set_meta(tx, embedder_meta), "record the new embedder"
        )
        if moved:
            self._schema.ensure_vector_indexes(dim)
        return True

    def clear(self) -> None:
        self._swap(apply=False)

    def _swap(self, *, apply: bool) -> None:
        for kind in _KINDS:

            def batch(tx: ManagedTransaction, name: str = _APPLY[kind]) -> int:
                rows = run(tx, name, limit=_SWAP_BATCH, apply=apply)
                return int(rows[0]["moved"]) if rows else 0

            while self._bolt.write_tx(batch, "swap re-embedded vectors"):
                pass


def _set_meta(tx: ManagedTransaction, embedder_meta: str) -> None:
    run(tx, "meta/set", key="embedder", value=embedder_meta)
    run(tx, "meta/delete", key="reembed")

