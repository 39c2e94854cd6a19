"""AsyncGraphMemory: GraphMemory's surface, awaitable, on the same code; the loop is never
blocked; a cancelled call either did nothing or did everything. No timings: the blocking tests
hold a worker on a threading.Event that only the event loop can release."""

from __future__ import annotations

import asyncio
import inspect
import threading
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar

import pytest

from graphmem import (
    AsyncGraphMemory,
    ConfigError,
    ExtractedEntity,
    ExtractedFact,
    Extraction,
    GraphMemory,
    HashEmbedder,
    InputError,
)
from graphmem._models import EpisodeRecord
from graphmem.extract import ExtractionContext

T = TypeVar("T")
WAIT = 60.0  # seconds a test waits for an event before it fails (never reached when it passes)

# GraphMemory's public names that are not calls on the store, or have an async form of their own.
NOT_WRAPPED = {"embedder", "retriever", "store", "connect", "close", "settings", "predicates",
               "default_extractor"}


def run(body: Callable[[], Awaitable[T]]) -> T:
    return asyncio.run(body())  # type: ignore[arg-type]


class Gate:
    """An extractor that says it started, then waits until the test opens it."""

    name = "gate"
    needs_context = False

    def __init__(self) -> None:
        self.started = threading.Event()
        self.open = threading.Event()

    def extract(self, episode: EpisodeRecord, context: ExtractionContext) -> Extraction:
        self.started.set()
        if not self.open.wait(WAIT):
            raise AssertionError("the gate was never opened")
        who = episode.content.split()[0]
        return Extraction(
            entities=[ExtractedEntity(name=who, type="person")],
            facts=[ExtractedFact(subject=who, predicate="lives_in", object="Porto",
                                 statement=f"{who} lives in Porto.")],
        )


async def wait_for(event: threading.Event) -> None:
    assert await asyncio.to_thread(event.wait, WAIT), "the worker never started"


def test_every_public_graphmemory_call_is_awaitable_with_the_same_signature() -> None:
    names = {n for n in dir(GraphMemory) if not n.startswith("_")} - NOT_WRAPPED
    for name in sorted(names):
        method = getattr(AsyncGraphMemory, name, None)
        assert method is not None and inspect.iscoroutinefunction(method), name
        assert inspect.signature(method) == inspect.signature(getattr(GraphMemory, name)), name
        assert method.__doc__ == getattr(GraphMemory, name).__doc__
    for name in ("connect", "aclose", "__aenter__", "__aexit__"):
        assert inspect.iscoroutinefunction(getattr(AsyncGraphMemory, name))


def test_round_trip_on_each_store(memory: GraphMemory) -> None:
    when = datetime(2024, 1, 8, tzinfo=UTC)

    async def body() -> dict[str, Any]:
        amem = AsyncGraphMemory(memory)
        await amem.connect()
        first, moved = await asyncio.gather(
            amem.add_episode("I live in Lisbon.", group_id="maya", reference_time=when,
                             metadata={"speaker": "Maya"}),
            amem.add_episode("Leo said hi.", group_id="maya", reference_time=when),
        )
        later = await amem.add_episode(
            "I moved to Porto last month.", group_id="maya", metadata={"speaker": "Maya"},
            reference_time=datetime(2024, 3, 14, tzinfo=UTC))
        batch = await amem.add_episodes([{"content": "I prefer tea.", "group_id": "maya",
                                          "metadata": {"speaker": "Maya"}}])
        await amem.add_fact("Maya", "works_at", "Atlas Robotics", group_id="maya")
        recalled = await amem.recall("Where does Maya live?", group_id="maya", k=3)
        history = await amem.history("Maya", predicate="lives_in", group_id="maya")
        facts = await amem.facts(group_id="maya")
        tea = next(f for f in facts if f.predicate == "prefers")
        pinned = await amem.pin(tea.id)
        pins = await amem.pins("maya")
        await amem.feedback(tea.id, True)
        unpinned = await amem.unpin(tea.id)
        exp = await amem.add_experience("grasp the mug", params={"force": 8.0},
                                        outcome={"success": True}, group_id="robot")
        found = await amem.recall_experiences("grasp mug", group_id="robot")
        rows = await amem.export(group_id="maya")
        stats = await amem.stats("maya")
        episode = await amem.episode(first.episode_id)
        forgot = await amem.forget(group_id="maya", episode_id=moved.episode_id)
        return {"first": first, "later": later, "batch": batch, "recalled": recalled,
                "history": history, "pinned": pinned, "pins": pins, "unpinned": unpinned,
                "exp": exp, "found": found, "rows": rows, "stats": stats, "episode": episode,
                "forgot": forgot}

    out = run(body)
    assert out["later"].superseded and out["batch"][0].facts_added == 1
    assert out["recalled"].facts[0].statement == "Maya lives in Porto."
    assert [f.statement for f in out["history"]] == ["Maya lives in Lisbon.",
                                                     "Maya lives in Porto."]
    assert out["pinned"].statement == "Maya prefers tea." and len(out["pins"]) == 1
    assert out["unpinned"] is True
    assert out["exp"].status == "extracted" and out["found"][0].params == {"force": 8.0}
    assert isinstance(out["rows"], list) and {r["type"] for r in out["rows"]} >= {"fact"}
    assert out["stats"]["facts_current"] >= 3
    assert out["episode"].content == "I live in Lisbon."
    assert out["forgot"].episodes_removed == 1
    # The same memory, read through the sync API: one implementation, one store.
    assert "Maya lives in Porto." in [f.statement for f in memory.facts(group_id="maya")]


def test_the_event_loop_runs_while_a_call_works(tmp_path: Path) -> None:
    gate = Gate()

    async def body() -> str:
        async with AsyncGraphMemory(tmp_path / "m.db", embedder=HashEmbedder(64)) as amem:
            call = asyncio.create_task(amem.add_episode("Maya is here.", extractor=gate))
            await wait_for(gate.started)
            assert not call.done()
            # Only this coroutine can open the gate: had the call blocked the loop, the
            # worker would wait forever (and fail the test after WAIT seconds).
            gate.open.set()
            result = await call
            return result.status

    assert run(body) == "extracted"


def test_a_running_call_cancelled_finishes_before_the_caller_hears(tmp_path: Path) -> None:
    gate = Gate()

    async def body() -> list[str]:
        async with AsyncGraphMemory(tmp_path / "m.db", embedder=HashEmbedder(64)) as amem:
            call = asyncio.create_task(amem.add_episode("Maya moved.", extractor=gate))
            await wait_for(gate.started)
            call.cancel()
            await asyncio.sleep(0)  # the cancellation reaches the call
            assert not call.done()  # it waits for the worker, which is still in the gate
            gate.open.set()
            with pytest.raises(asyncio.CancelledError):
                await call
            # The store holds the whole call: its episode, extracted, and its fact.
            facts = await amem.facts()
            stats = await amem.stats()
            return [*(f.statement for f in facts), f"episodes {stats['episodes']}"]

    assert run(body) == ["Maya lives in Porto.", "episodes 1"]


def test_a_waiting_call_cancelled_never_runs(tmp_path: Path) -> None:
    gate = Gate()

    async def body() -> list[str]:
        amem = AsyncGraphMemory(tmp_path / "m.db", embedder=HashEmbedder(64), max_workers=1)
        await amem.connect()
        first = asyncio.create_task(amem.add_episode("Maya moved.", extractor=gate))
        await wait_for(gate.started)
        second = asyncio.create_task(amem.add_episode("Leo moved.", extractor=gate))
        await asyncio.sleep(0)  # submitted, queued behind the first
        second.cancel()
        with pytest.raises(asyncio.CancelledError):
            await second  # at once: the only worker is still in the gate
        assert not first.done()
        gate.open.set()
        await first
        facts = [f.statement for f in await amem.facts()]
        await amem.aclose()
        return facts

    assert run(body) == ["Maya lives in Porto."]


def test_aclose_waits_for_running_calls(tmp_path: Path) -> None:
    gate = Gate()
    path = tmp_path / "m.db"

    async def body() -> None:
        amem = AsyncGraphMemory(path, embedder=HashEmbedder(64))
        call = asyncio.create_task(amem.add_episode("Maya moved.", extractor=gate))
        await wait_for(gate.started)
        closing = asyncio.create_task(amem.aclose())
        await asyncio.sleep(0)
        assert not closing.done()
        gate.open.set()
        await asyncio.gather(call, closing)

    run(body)
    with GraphMemory(path) as memory:
        assert [f.statement for f in memory.facts()] == ["Maya lives in Porto."]


def test_errors_and_arguments(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="max_workers"):
        AsyncGraphMemory(tmp_path / "m.db", max_workers=0)
    with GraphMemory(tmp_path / "m.db") as memory, pytest.raises(ConfigError, match="options"):
        AsyncGraphMemory(memory, embedder=HashEmbedder(64))

    async def body() -> None:
        async with AsyncGraphMemory(tmp_path / "n.db") as amem:
            with pytest.raises(InputError):
                await amem.recall("x", k=0)

    run(body)
