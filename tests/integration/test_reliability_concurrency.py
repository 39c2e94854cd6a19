"""4 concurrent ingest processes on overlapping entities (SQLite and Bolt).

Every worker ingests its own share of one corpus (a quarter, plus every tenth episode of its
neighbour's quarter, so that some episodes are ingested by two processes at once) about the same
people, places, employers and robot episodes. Afterwards: no duplicate entity per
(group, key, type), no lost fact, and a graph equal to one sequential run of the distinct
episodes: the canonical export (facts with their times, confidence and supporting episodes,
SUPERSEDES/CONTRADICTS links, entities, mentions) and every per-table row count.

On Bolt (``GRAPHMEM_TEST_BOLT_URI`` or ``NEO4J_URI``; skipped without one) each worker opens its
own driver on the shared server; the database is wiped before and after (as the ``memory``
fixture does) and each case writes its own group. The sequential reference run goes to a
SQLite file with the same group (so the episode ids match), and the Bolt graph's node and
relationship counts are compared with that file's row counts.

The corpus never moves a functional timeline back to a value it had before (see
``tests/helpers/reliability.corpus``): with that, the reconciler promises an order-independent
result, which is what makes a concurrent run comparable to a sequential one.
"""

from __future__ import annotations

import uuid
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from graphmem import GraphMemory, HashEmbedder
from tests.helpers.reliability import (
    canonical,
    connect_ro,
    corpus,
    diff_canonical,
    export_problems,
    ingest,
    row_counts,
    sqlite_problems,
)
from tests.helpers.workers import run_workers, worker_store

pytestmark = [pytest.mark.integration, pytest.mark.timeout(150)]

WORKERS, N, DIM = 4, 240, 64
# ArcadeDB ingests ~150-180 facts/s on 2 cores and 4 writers serialise on the lock node: a
# smaller corpus keeps a Bolt case well under a minute.
N_BY_KIND = {"sqlite": N, "bolt": 160}


def shares(n: int) -> list[list[int]]:
    """Worker w gets i % 4 == w, and also every tenth episode of worker w-1's share."""
    out: list[list[int]] = [[] for _ in range(WORKERS)]
    for i in range(n):
        out[i % WORKERS].append(i)
        if i % 10 == 0:
            out[(i + 1) % WORKERS].append(i)
    return [sorted(s) for s in out]


@pytest.fixture
def store_target(kind: str, tmp_path: Path) -> Iterator[str]:
    """Where the workers write: a SQLite file, or the (wiped) Bolt test server."""
    yield from worker_store(kind, tmp_path / "concurrent.db")


def bolt_counts(target: str, group_id: str) -> dict[str, int]:
    """The Bolt graph's nodes and relationships of one group, under the SQLite table names."""
    from graphmem.store.neo4j import Neo4jStore

    store = Neo4jStore(target)
    queries = {
        "episodes": "MATCH (n:Episode {group_id: $g}) RETURN count(n) AS n",
        "entities": "MATCH (n:Entity {group_id: $g}) RETURN count(n) AS n",
        "entity_aliases": "MATCH (n:EntityAlias {group_id: $g}) RETURN count(n) AS n",
        "facts": "MATCH (n:Fact {group_id: $g}) RETURN count(n) AS n",
        "fact_episodes": "MATCH (f:Fact {group_id: $g})-[r:FROM_EPISODE]->(:Episode) "
        "RETURN count(r) AS n",
        "fact_links": "MATCH (f:Fact {group_id: $g})-[r:SUPERSEDES|CONTRADICTS]->(:Fact) "
        "RETURN count(r) AS n",
        "mentions": "MATCH (e:Episode {group_id: $g})-[r:MENTIONS]->(:Entity) "
        "RETURN count(r) AS n",
        "fact_vectors": "MATCH (n:Fact {group_id: $g}) WHERE n.embedding IS NOT NULL "
        "RETURN count(n) AS n",
        "entity_vectors": "MATCH (n:Entity {group_id: $g}) WHERE n.embedding IS NOT NULL "
        "RETURN count(n) AS n",
    }
    store.connect()
    try:
        out: dict[str, int] = {}
        for name, text in queries.items():
            records, _, _ = store.driver.execute_query(
                text, parameters_={"g": group_id}, database_=store._database
            )
            out[name] = int(records[0]["n"])
        return out
    finally:
        store.close()


def duplicate_entities(rows: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
    keys = Counter(
        (r["group_id"], r["key"], r["entity_type"]) for r in rows if r["type"] == "entity"
    )
    return sorted(k for k, n in keys.items() if n > 1)


@pytest.mark.parametrize("kind", ["sqlite", "bolt"])
@pytest.mark.parametrize("seed", [7, 8])
def test_concurrent_ingest_equals_sequential(
    tmp_path: Path, kind: str, seed: int, store_target: str
) -> None:
    n = N_BY_KIND[kind]
    group = f"concurrency-{seed}-{uuid.uuid4().hex[:8]}"
    episodes = corpus(seed, n, group_id=group)
    target = store_target
    run_workers(
        tmp_path,
        target,
        [[episodes[i] for i in share] for share in shares(n)],
        bulk_divisor=2,
        chunk=8,
        dim=DIM,
        timeout=100,
    )

    if kind == "sqlite":
        assert sqlite_problems(target) == []  # includes: no duplicate (group, key, type) entity
    with GraphMemory(target, embedder=HashEmbedder(DIM)) as mem:
        rows = list(mem.export(group_id=group))
        stats = mem.stats(group_id=group)
    assert duplicate_entities(rows) == []
    assert export_problems(rows) == []
    concurrent = canonical(rows)
    assert stats["episodes"] == n
    assert stats["episodes_pending"] == 0 and stats["episodes_failed"] == 0

    sequential_db = tmp_path / "sequential.db"
    with GraphMemory(sequential_db, embedder=HashEmbedder(DIM)) as mem:
        ingest(mem, episodes, bulk=n // 2, chunk=8)
        sequential = canonical(mem.export())
    assert concurrent == sequential, diff_canonical(sequential, concurrent)
    conn = connect_ro(sequential_db)
    try:
        want = row_counts(conn)
    finally:
        conn.close()
    if kind == "sqlite":
        conn = connect_ro(target)
        try:
            assert row_counts(conn) == want
        finally:
            conn.close()
    else:
        got = bolt_counts(target, group)
        assert got == {k: want[k] for k in got}
