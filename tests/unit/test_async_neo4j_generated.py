"""The async Neo4j store is generated from the sync one (scripts/gen_async_neo4j.py): the
checked-in twin must be what the generator makes of the sync source today, and it must offer
the sync store's methods, as coroutines where they do I/O."""

from __future__ import annotations

import asyncio
import inspect
import subprocess
import sys
from pathlib import Path

from graphmem.store.neo4j._async import AsyncNeo4jStore
from graphmem.store.neo4j.async_support import AsyncRLock
from graphmem.store.neo4j.store import Neo4jStore

ROOT = Path(__file__).resolve().parents[2]
TWIN = ROOT / "graphmem" / "store" / "neo4j" / "_async"
# Methods that do no I/O in either store.
SYNC_IN_BOTH = {"change_token", "export_rows"}


def test_the_checked_in_twin_is_what_the_generator_makes(tmp_path: Path) -> None:
    subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "gen_async_neo4j.py"), "--out", str(tmp_path)],
        check=True,
        cwd=ROOT,
    )
    made = {p.name: p.read_text(encoding="utf-8") for p in tmp_path.glob("*.py")}
    kept = {p.name: p.read_text(encoding="utf-8") for p in TWIN.glob("*.py")}
    assert sorted(made) == sorted(kept), "regenerate: python scripts/gen_async_neo4j.py"
    stale = sorted(name for name in made if made[name] != kept[name])
    assert not stale, f"stale generated files {stale}: run python scripts/gen_async_neo4j.py"


def test_the_twin_has_every_method_of_the_sync_store_awaitable_where_it_does_io() -> None:
    public = [
        name
        for name, value in vars(Neo4jStore).items()
        if not name.startswith("_") and inspect.isfunction(value)
    ]
    assert len(public) > 40
    for name in public:
        sync, twin = getattr(Neo4jStore, name), getattr(AsyncNeo4jStore, name)
        assert list(inspect.signature(sync).parameters) == list(
            inspect.signature(twin).parameters
        ), name
        assert inspect.iscoroutinefunction(twin) is (name not in SYNC_IN_BOTH), name
        assert not inspect.iscoroutinefunction(sync), name


def test_the_twin_constructor_does_no_io() -> None:
    store = AsyncNeo4jStore("bolt://user:secret@127.0.0.1:1", max_retry_time=0.1)
    assert "secret" not in store.url
    assert store.server_agent is None


def test_the_reentrant_lock_lets_its_holder_in_again_and_keeps_others_out() -> None:
    async def body() -> list[str]:
        lock = AsyncRLock()
        order: list[str] = []
        inside = asyncio.Event()

        async def holder() -> None:
            async with lock, lock:  # the same task: no deadlock
                order.append("holder in")
                inside.set()
                await asyncio.sleep(0)
                await asyncio.sleep(0)
                order.append("holder out")

        async def other() -> None:
            await inside.wait()
            async with lock:
                order.append("other in")

        await asyncio.wait_for(asyncio.gather(holder(), other()), 10)
        return order

    assert asyncio.run(body()) == ["holder in", "holder out", "other in"]


def test_the_loop_store_starts_nothing_until_a_call() -> None:
    import threading

    from graphmem.store import GraphStore
    from graphmem.store.neo4j.loop_store import LoopStore

    store = LoopStore("bolt://127.0.0.1:1", max_retry_time=0.1)
    assert isinstance(store, GraphStore)  # looks every method of the protocol up
    assert callable(store.change_token) and callable(store.get_meta)
    assert not any(t.name == "graphmem-neo4j-async" for t in threading.enumerate())
    store.close()  # nothing opened: nothing to close
