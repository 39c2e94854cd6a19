"""The generated async Neo4j store on a real Bolt server: used directly (awaiting its methods,
an async unit of work reading inside its transaction), behind the sync protocol (LoopStore),
and as AsyncGraphMemory's store for a Bolt URL, with calls overlapping.

Every store-parametrized test runs on it too with ``GRAPHMEM_TEST_BOLT_ASYNC=1``."""

from __future__ import annotations

import asyncio
import os
from datetime import UTC, datetime

import pytest

from graphmem import AsyncGraphMemory, GraphMemory, HashEmbedder
from graphmem.store._base import EpisodeRow, WritePlan

BOLT_URI = os.environ.get("NEO4J_URI") or os.environ.get("GRAPHMEM_TEST_BOLT_URI")
pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(not BOLT_URI, reason="no Bolt server configured (GRAPHMEM_TEST_BOLT_URI)"),
]


def _episode(episode_id: str, content: str) -> EpisodeRow:
    now = int(datetime(2026, 1, 1, tzinfo=UTC).timestamp() * 1000)
    return EpisodeRow(
        id=episode_id, group_id="g", source="test", kind="message", content=content,
        reference_time=now, ingested_at=now, content_hash=episode_id,
    )


def _wipe() -> None:
    from graphmem.store.neo4j.loop_store import LoopStore

    assert BOLT_URI
    store = LoopStore(BOLT_URI, max_retry_time=5)
    try:
        store.connect()
        store.wipe_all_for_tests()
    finally:
        store.close()


def test_the_async_store_used_directly() -> None:
    from graphmem.store.neo4j._async import AsyncNeo4jStore
    from graphmem.store.neo4j._async.tx_reader import TxReader

    assert BOLT_URI
    _wipe()

    async def body() -> None:
        store = AsyncNeo4jStore(BOLT_URI, max_retry_time=5)
        await store.connect()
        try:
            await store.migrate()
            assert all(m.applied_at is not None for m in await store.migration_status())
            stored = await store.insert_episodes([_episode("e1", "Alice lives in Paris.")])
            assert [(row.id, created) for row, created in stored] == [("e1", True)]
            seen: list[str | None] = []

            async def work(reader: TxReader) -> WritePlan:
                row = await reader.get_episode("e1")  # inside the write transaction
                seen.append(row.status if row else None)
                return WritePlan(episode_id="e1", episode_status=("extracted", "test", None))

            plans = await store.write_many([work])
            assert seen == ["pending"] and len(plans) == 1
            after = await store.get_episode("e1")
            assert after is not None and after.status == "extracted"
            rows = [row async for row in store.export_rows("g")]
            assert [r["type"] for r in rows] == ["episode"]
            assert (await store.stats("g"))["episodes"] == 1
        finally:
            await store.wipe_all_for_tests()
            await store.close()

    asyncio.run(body())


def test_a_graphmemory_on_the_loop_store() -> None:
    from graphmem.store.neo4j.loop_store import LoopStore

    assert BOLT_URI
    _wipe()
    store = LoopStore(BOLT_URI, max_retry_time=5)
    with GraphMemory(store, embedder=HashEmbedder(64)) as memory:  # type: ignore[arg-type]
        memory.add_episode("Alice lives in Paris.", group_id="g")
        memory.add_episode("Alice moved to Berlin.", group_id="g")
        current = memory.facts(group_id="g")
        assert [f.statement for f in current] == ["Alice lives in Berlin."]
        assert len(memory.history("Alice", group_id="g")) == 2
        exported = list(memory.export(group_id="g"))
        assert sum(r["type"] == "episode" for r in exported) == 2
        memory.store.wipe_all_for_tests()


def test_async_graphmemory_on_a_bolt_url_uses_the_async_store_and_overlaps_calls() -> None:
    from graphmem.store.neo4j.loop_store import LoopStore

    assert BOLT_URI
    _wipe()

    async def body() -> None:
        async with AsyncGraphMemory(BOLT_URI, embedder=HashEmbedder(64)) as memory:
            assert isinstance(memory.store, LoopStore)
            names = [f"Person{i}" for i in range(12)]
            results = await asyncio.gather(
                *(memory.add_episode(f"{n} lives in Oslo.", group_id="g") for n in names)
            )
            assert {r.status for r in results} == {"extracted"}
            found = await asyncio.gather(
                *(memory.recall(f"Where does {n} live?", group_id="g") for n in names)
            )
            for name, result in zip(names, found, strict=True):
                assert any(name in f.statement for f in result.facts), name
            assert (await memory.stats(group_id="g"))["episodes"] == len(names)
            await asyncio.to_thread(memory.store.wipe_all_for_tests)

    asyncio.run(body())


def test_native_false_keeps_the_sync_driver() -> None:
    from graphmem.store.neo4j.store import Neo4jStore

    assert BOLT_URI
    memory = AsyncGraphMemory(BOLT_URI, native=False)
    assert isinstance(memory.store, Neo4jStore)
