"""The Neo4j store's schema: numbered migrations, the vector indexes and the meta rows.

Migrations 3 and 6 go through the dialect (ArcadeDB creates full-text indexes with SQL), 5 and
the first step of 6 are backfills in Python; the others run the same Cypher on every server.
Vector indexes are not numbered: their dimension is the embedder's, known once the facade
records it (``set_meta("embedder", …)``) or, for direct store use, once a write carries a
vector; ``Schema`` remembers the dimension it has indexed (per store instance).
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Sequence
from typing import Any

from neo4j import ManagedTransaction

from ..._errors import SchemaError, StoreError
from ..._time import to_ms, utcnow
from .._base import MigrationInfo, Vector
from .rows import episode_speaker, float_list
from .runner import BoltRunner, chunks, run
from .search import backfill_group_tokens

__all__ = ["MIGRATIONS", "Schema", "embedder_dim"]

# Ordered schema migrations: (version, name, Cypher file).
MIGRATIONS: list[tuple[int, str, str]] = [
    (1, "uniqueness constraints", "schema/001_constraints"),
    (2, "range indexes for group lookups and temporal filters", "schema/002_range_indexes"),
    (
        3,
        "full-text indexes on statements, entity names and episodes",
        "schema/003_fulltext_indexes",
    ),
    (4, "arrival-order index on episodes by group", "schema/004_episode_order"),
    (5, "episode speakers derived from metadata", "episodes/speaker_set"),
    (
        6,
        "group-scoped full-text indexes (group tokens)",
        "schema/006_group_fulltext_indexes",
    ),
    (7, "entity name and alias lookups by group and key", "schema/007_group_key_indexes"),
    (8, "a group's episodes by kind (experience recall)", "schema/008_episode_kind_index"),
    (9, "experience index entries in arrival order", "schema/009_experience_order"),
]
_FULLTEXT_MIGRATION = "schema/003_fulltext_indexes"
_GROUP_FULLTEXT_MIGRATION = "schema/006_group_fulltext_indexes"
_SPEAKER_MIGRATION = "episodes/speaker_set"


def embedder_dim(value: str) -> int | None:
    """The dimension in a recorded embedder (``{"dim": …}``), None when unreadable."""
    try:
        info = json.loads(value)
        return int(info["dim"])
    except (ValueError, KeyError, TypeError):
        return None


class Schema:
    """Migrations, vector indexes and ``GraphmemMeta`` rows, over the store's runner.

    ``forget_speakers`` is called once the speaker backfill has changed episodes (the store's
    speakers cache starts over).
    """

    def __init__(self, bolt: BoltRunner, forget_speakers: Callable[[], None]) -> None:
        self._bolt = bolt
        self._forget_speakers = forget_speakers
        self.vector_dim: int | None = None  # the dimension the vector indexes were made for

    def forget(self) -> None:
        """The store closed: the next connection checks the vector indexes again."""
        self.vector_dim = None

    # ------------------------------------------------------------------ migrations
    def migrate(self) -> list[str]:
        bolt = self._bolt
        applied: list[str] = []
        with bolt.lock:
            done = self._applied()
            newest = max(version for version, _, _ in MIGRATIONS)
            if done and max(done) > newest:
                raise SchemaError(
                    f"{bolt.config.url} was written by a newer graphmem (schema v{max(done)}, "
                    f"this one knows v{newest}); upgrade graphmem"
                )
            for version, name, file in MIGRATIONS:
                if version in done:
                    continue
                try:
                    if file == _FULLTEXT_MIGRATION:
                        bolt.dialect.fulltext_indexes(bolt.schema)
                    elif file == _GROUP_FULLTEXT_MIGRATION:
                        backfill_group_tokens(bolt.stream, bolt.write_tx)
                        bolt.dialect.group_fulltext_indexes(bolt.schema)
                    elif file == _SPEAKER_MIGRATION:
                        self._backfill_speakers()
                    else:
                        bolt.schema(file, {})
                except SchemaError:
                    raise
                except StoreError as exc:
                    raise SchemaError(f"migration {version} ({name}) failed: {exc}") from exc
                self._record_migration(version, name)
                applied.append(f"{version}: {name}")
            if applied:
                bolt.dialect.await_indexes(bolt.schema)
            embedder = self.get_meta("embedder")
            if embedder is not None:
                self.ensure_vector_indexes(embedder_dim(embedder))
        return applied

    def _backfill_speakers(self) -> None:
        """Migration 5: write the derived ``speaker`` of the episodes stored before it existed
        (idempotent: only episodes without one are read, and the value is a pure function of
        the metadata)."""
        rows: list[dict[str, Any]] = []
        for r in self._bolt.stream("episodes/speaker_missing"):
            try:
                metadata = json.loads(r["metadata"] or "{}")
            except (TypeError, ValueError):
                continue
            who = episode_speaker(metadata)
            if who is not None:
                rows.append({"id": str(r["id"]), "speaker": who})

        def write(tx: ManagedTransaction, batch: Sequence[dict[str, Any]]) -> None:
            run(tx, "episodes/speaker_set", rows=list(batch))

        for chunk in chunks(rows):
            self._bolt.write_tx(functools.partial(write, batch=chunk), "backfill episode speakers")
        self._forget_speakers()

    def _record_migration(self, version: int, name: str) -> None:
        def work(tx: ManagedTransaction) -> None:
            run(
                tx,
                "schema/record_migration",
                version=version,
                name=name,
                applied_at=to_ms(utcnow()),
            )

        self._bolt.write_tx(work, f"record migration {version}")

    def _applied(self) -> dict[int, int]:
        return {
            int(r["version"]): int(r["applied_at"])
            for r in self._bolt.read("schema/migrations_applied")
            if r["applied_at"] is not None
        }

    def migration_status(self) -> list[MigrationInfo]:
        done = self._applied()
        newest = max(version for version, _, _ in MIGRATIONS)
        if done and max(done) > newest:
            raise SchemaError(
                f"{self._bolt.config.url} was written by a newer graphmem (schema "
                f"v{max(done)}, this one knows v{newest}); upgrade graphmem"
            )
        return [MigrationInfo(v, name, done.get(v)) for v, name, _ in MIGRATIONS]

    # ------------------------------------------------------------------ meta
    def get_meta(self, key: str) -> str | None:
        rows = self._bolt.read("meta/get", key=key)
        return None if not rows or rows[0]["value"] is None else str(rows[0]["value"])

    def set_meta(self, key: str, value: str) -> None:
        self._bolt.write_tx(
            lambda tx: run(tx, "meta/set", key=key, value=value), f"set meta {key}"
        )
        if key == "embedder":
            self._reset_vector_indexes(embedder_dim(value))

    # ------------------------------------------------------------------ vector indexes
    def ensure_vector_indexes(self, dim: int | None) -> None:
        bolt = self._bolt
        if dim is None or dim <= 0 or self.vector_dim == dim:
            return
        with bolt.lock:
            try:
                bolt.dialect.vector_indexes(bolt.schema, dim)
            except SchemaError:
                # An index of another size (ArcadeDB says so): rebuild it if nothing uses it.
                if self._has_embeddings():
                    raise
                bolt.dialect.drop_vector_indexes(bolt.schema)
                bolt.dialect.vector_indexes(bolt.schema, dim)
            bolt.dialect.await_indexes(bolt.schema)
            self.vector_dim = dim

    def drop_vector_indexes(self) -> None:
        """Before the vectors change size (a move to another embedder): no index of the old
        size may hold them."""
        with self._bolt.lock:
            self._bolt.dialect.drop_vector_indexes(self._bolt.schema)
            self.vector_dim = None

    def _has_embeddings(self) -> bool:
        rows = self._bolt.read("admin/has_embeddings")
        return bool(rows and rows[0]["embedded"])

    def _reset_vector_indexes(self, dim: int | None) -> None:
        """A store records its embedder once (or again after a wipe): while no node holds an
        embedding the vector indexes are rebuilt for this embedder's size, unless the server
        already holds them at that size; afterwards they stay."""
        if dim is None:
            return
        with self._bolt.lock:
            if not self._has_embeddings() and not self._indexed_for(dim):
                self._bolt.dialect.drop_vector_indexes(self._bolt.schema)
                self.vector_dim = None
            self.ensure_vector_indexes(dim)

    def _indexed_for(self, dim: int) -> bool:
        """Whether the server holds all of the dialect's vector indexes at size ``dim``. The
        same embedder recorded again then changes no schema: Neo4j plans every query anew
        after a schema change (tens of milliseconds each)."""
        dialect = self._bolt.dialect
        sizes = dialect.vector_index_dims(self._bolt.read)
        roles = ("fact_embedding", "entity_embedding", "episode_embedding")
        return all(sizes.get(dialect.index_name(role)) == dim for role in roles)

    def _vectors_ready(self) -> bool:
        if self.vector_dim is None:
            recorded = self.get_meta("embedder")
            if recorded is not None:
                self.ensure_vector_indexes(embedder_dim(recorded))
        return self.vector_dim is not None

    def query_vector(self, vector: Vector) -> list[float] | None:
        """``vector`` as the vector searches take it; None when there is nothing to search
        (no vector index yet, or a zero vector, which has no cosine). A vector of another size
        than the indexes' is an error."""
        if not self._vectors_ready():
            return None
        if self.vector_dim is not None and vector.shape[0] != self.vector_dim:
            raise StoreError(
                f"query vector has {vector.shape[0]} dimensions, the store's vector indexes "
                f"{self.vector_dim}; open the store with the embedder it was built with"
            )
        values = float_list(vector)
        assert values is not None
        return values if any(values) else None
