"""Neo4j store schema on a real Bolt server: ordered, idempotent migrations recorded in the
graph, constraints enforced, full-text and vector indexes present (through the dialect seam).

Needs a Bolt server: ``python scripts/bolt_server.py start --dir .bolt --bolt-port 0`` and
``. .bolt/env.sh`` (ArcadeDB), or ``NEO4J_URI`` (+ ``NEO4J_USERNAME``/``NEO4J_PASSWORD``).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator

import pytest

from graphmem import GraphMemory, HashEmbedder, SchemaError

BOLT_URI = os.environ.get("NEO4J_URI") or os.environ.get("GRAPHMEM_TEST_BOLT_URI")
pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(
        not BOLT_URI,
        reason="no Bolt server configured: run `python scripts/bolt_server.py start --dir .bolt "
        "--bolt-port 0` and `. .bolt/env.sh` (GRAPHMEM_TEST_BOLT_URI), or set NEO4J_URI",
    ),
]

if BOLT_URI:
    from graphmem.store.neo4j import MIGRATIONS, Neo4jStore


@pytest.fixture
def store() -> Iterator[Neo4jStore]:
    assert BOLT_URI
    s = Neo4jStore(BOLT_URI, max_retry_time=5)
    s.connect()
    s.wipe_all_for_tests()
    yield s
    s.wipe_all_for_tests()
    s.close()


def cypher(store: Neo4jStore, text: str, **params: object) -> list[dict[str, object]]:
    """Test-only raw Cypher (the store itself only runs named files)."""
    records, _, _ = store.driver.execute_query(text, parameters_=params, database_=store._database)
    return [dict(r) for r in records]


def index_names(store: Neo4jStore) -> set[str]:
    rows = cypher(store, "SHOW INDEXES YIELD name RETURN name")
    return {str(r["name"]) for r in rows}


def test_migrations_are_ordered_idempotent_and_recorded(store: Neo4jStore) -> None:
    # wipe_all_for_tests removed the records (not the schema): the DDL re-runs as no-ops
    assert [m.applied_at for m in store.migration_status()] == [None] * len(MIGRATIONS)
    applied = store.migrate()
    assert applied == [f"{v}: {name}" for v, name, _ in MIGRATIONS]
    assert store.migrate() == []
    status = store.migration_status()
    versions = [m.version for m in status]
    assert versions == [v for v, _, _ in MIGRATIONS] == [1, 2, 3, 4, 5, 6, 7, 8, 9]
    assert all(isinstance(m.applied_at, int) and m.applied_at > 0 for m in status)
    rows = cypher(
        store,
        "MATCH (m:GraphmemMigration) RETURN m.version AS v, m.name AS n ORDER BY v",
    )
    assert [(r["v"], r["n"]) for r in rows] == [(v, n) for v, n, _ in MIGRATIONS]
    # a third run, after a half-applied state (one record lost), applies only that one
    cypher(store, "MATCH (m:GraphmemMigration {version: 2}) DELETE m")
    assert store.migrate() == [f"2: {MIGRATIONS[1][1]}"]


def test_indexes_and_constraints_exist(store: Neo4jStore) -> None:
    store.migrate()
    names = index_names(store)
    dialect = store.dialect
    for role in ("fact_text", "entity_text", "episode_text"):
        assert dialect.index_name(role) in names, (role, sorted(names))
    # migration 7: names and alias keys looked up by (group_id, key); the key-only ones dropped
    assert {"graphmem_entity_group_key", "graphmem_alias_group_key"} <= names, sorted(names)
    assert not {"graphmem_entity_key_only", "graphmem_alias_key"} & names, sorted(names)
    from neo4j.exceptions import ConstraintError

    cypher(store, "CREATE (:Entity {id: 'e1', group_id: 'g', key: 'k', type: 't'})")
    cypher(store, "CREATE (:Entity {id: 'e2', group_id: 'g', key: 'k', type: 'u'})")
    with pytest.raises(ConstraintError):
        cypher(store, "CREATE (:Entity {id: 'e3', group_id: 'g', key: 'k', type: 't'})")
    with pytest.raises(ConstraintError):
        cypher(store, "CREATE (:Entity {id: 'e1', group_id: 'g', key: 'other', type: 't'})")


def test_vector_indexes_follow_the_embedder(store: Neo4jStore) -> None:
    mem = GraphMemory(store, embedder=HashEmbedder(64))
    mem.connect()
    names = index_names(store)
    for role in ("fact_embedding", "entity_embedding", "episode_embedding"):
        assert store.dialect.index_name(role) in names
    assert store.get_meta("embedder") is not None
    mem.add_fact("Alice", "lives_in", "Paris")
    hits = store.vector_facts("default", HashEmbedder(64).embed(["Alice lives in Paris"])[0], 5)
    assert len(hits) == 1 and -1.0 <= hits[0][1] <= 1.0001


def test_speaker_migration_backfills_older_episodes(store: Neo4jStore) -> None:
    """Migration 5 derives ``Episode.speaker`` for episodes written before it existed, and
    is idempotent; the export does not show the derived property."""
    mem = GraphMemory(store, embedder=HashEmbedder(64))
    with mem:
        mem.add_episode("Hi there.", group_id="g", metadata={"speaker": "Ana"})
        mem.add_episode("Hello.", group_id="g", metadata={"name": "Ben"})
        mem.add_episode("Ok.", group_id="g", metadata={"speaker": 7, "name": "Cy"})
        mem.add_episode("Plain.", group_id="g")
        before = list(store.export_rows("g"))
        cypher(store, "MATCH (e:Episode) REMOVE e.speaker")
        cypher(store, "MATCH (m:GraphmemMigration {version: 5}) DELETE m")
        fresh = Neo4jStore(BOLT_URI or "", max_retry_time=5)
        try:
            assert fresh.speakers("g") == {}
            assert fresh.migrate() == [f"5: {MIGRATIONS[4][1]}"]
            assert fresh.speakers("g") == {"ana": "Ana", "ben": "Ben"}
            cypher(store, "MATCH (m:GraphmemMigration {version: 5}) DELETE m")
            assert fresh.migrate() == [f"5: {MIGRATIONS[4][1]}"]  # again: no change
            assert fresh.speakers("g") == {"ana": "Ana", "ben": "Ben"}
        finally:
            fresh.close()
        rows = cypher(store, "MATCH (e:Episode) RETURN e.speaker AS s ORDER BY e.seq")
        assert [r["s"] for r in rows] == ["Ana", "Ben", None, None]
        assert list(store.export_rows("g")) == before
        assert all("speaker" not in r for r in before)


def test_newer_schema_is_refused(store: Neo4jStore) -> None:
    store.migrate()
    cypher(store, "CREATE (:GraphmemMigration {version: 99, name: 'future', applied_at: 1})")
    with pytest.raises(SchemaError, match="newer graphmem"):
        store.migrate()


def test_facade_reports_pending_migrations_without_auto_migrate(store: Neo4jStore) -> None:
    from graphmem import Settings

    mem = GraphMemory(store, embedder=HashEmbedder(64), settings=Settings(auto_migrate=False))
    with pytest.raises(SchemaError, match="needs migrations"):
        mem.connect()
    assert [n.split(":")[0] for n in mem.migrate()] == ["1", "2", "3", "4", "5", "6", "7", "8", "9"]
    mem.connect()
    assert mem.stats()["episodes"] == 0


def vector_indexes(store: Neo4jStore) -> dict[str, tuple[object, object]]:
    """Each graphmem vector index: (its id, which a rebuilt index changes; its size)."""
    rows = cypher(
        store,
        "SHOW INDEXES YIELD name, id, type, options WHERE type = 'VECTOR' "
        "RETURN name, id, options.indexConfig['vector.dimensions'] AS dim",
    )
    return {str(r["name"]): (r["id"], r["dim"]) for r in rows}


def test_a_wipe_that_keeps_the_schema_leaves_a_migrated_store(store: Neo4jStore) -> None:
    """``keep_schema`` keeps the migration records beside the schema: the next connection
    applies nothing, and the same embedder recorded again keeps the vector indexes (on Neo4j a
    rebuilt index would make the server plan every query again); another size rebuilds them."""
    embedder = json.dumps({"name": "hash", "dim": 64})
    mem = GraphMemory(store, embedder=HashEmbedder(64))
    mem.connect()
    mem.add_fact("Alice", "lives_in", "Paris")
    before = vector_indexes(store)
    store.wipe_all_for_tests(keep_schema=True)
    assert list(store.export_rows(None)) == []
    assert store.get_meta("embedder") is None
    assert all(m.applied_at is not None for m in store.migration_status())
    assert store.migrate() == []
    store.set_meta("embedder", embedder)
    if store.dialect.name == "neo4j":  # ArcadeDB's sizes are not read back: it rebuilds
        assert vector_indexes(store) == before
        assert {dim for _, dim in before.values()} == {64}
    store.wipe_all_for_tests(keep_schema=True)
    store.set_meta("embedder", json.dumps({"name": HashEmbedder(32).name, "dim": 32}))
    if store.dialect.name == "neo4j":
        after = vector_indexes(store)
        assert set(after) == set(before) and {dim for _, dim in after.values()} == {32}
    # The 32-d store stays usable by a 32-d memory (ArcadeDB refuses a 64-d vector in it).
    small = GraphMemory(store, embedder=HashEmbedder(32))
    small.connect()
    small.add_fact("Alice", "lives_in", "Paris")
