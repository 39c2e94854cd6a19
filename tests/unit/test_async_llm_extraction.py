"""AsyncGraphMemory's LLM extraction: a batch's calls run on the event loop through
``openai.AsyncOpenAI`` (the local fake OpenAI server answers), at most ``llm_max_concurrency``
in flight, with the sync path's results, accounting, retries and fault handling; cancelling a
call stops its outstanding requests and leaves no half-written episode. Store-parametrized
(SQLite; Bolt when configured). No timings: the blocking tests hold the fake server's answers
on a threading.Event."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import pytest

from graphmem import AsyncGraphMemory, GraphMemory
from graphmem.extract.llm import LLMExtractor
from tests.fakes.openai_server import (
    FakeOpenAIServer,
    malformed_json,
    rate_limit,
    refusal,
    server_error,
)
from tests.unit.test_llm_extractor import PARIS, Script, answer, episode_of, fact, when

pytest_plugins = ["tests.fakes.pytest_plugin"]

T = TypeVar("T")
WAIT = 60.0  # seconds a test waits for an event before it fails (never reached when it passes)

EPISODES = [
    "Alice lives in Paris.",
    "Bob works at Acme.",
    "Carol lives in Rome.",
    "Dan lives in Oslo.",
    "Erin works at Globex.",
    "Frank says hello.",  # refused: the episode fails
    "Alice moved to Berlin.",
]


def run(body: Callable[[], Awaitable[T]]) -> T:
    return asyncio.run(body())  # type: ignore[arg-type]


def extractor(fake: FakeOpenAIServer, **overrides: Any) -> LLMExtractor:
    options: dict[str, Any] = {
        "base_url": fake.base_url, "api_key": "x", "timeout": 10.0, "max_retries": 2,
        "backoff_initial": 0.01, "backoff_max": 0.02,
    }
    options.update(overrides)
    return LLMExtractor("test-model", **options)


def scripted(fake: FakeOpenAIServer) -> None:
    def works_at(body: dict[str, Any]) -> dict[str, Any]:
        who, _, rest = episode_of(body).partition(" works at ")
        return answer(fact(who, "works_at", rest.rstrip(".")))

    def lives_in(body: dict[str, Any]) -> dict[str, Any]:
        who, _, rest = episode_of(body).partition(" lives in ")
        return answer(fact(who, "lives_in", rest.rstrip("."), evidence=f"lives in {rest}"))

    def moved(body: dict[str, Any]) -> dict[str, Any]:
        return answer(fact("Alice", "lives_in", "Berlin", evidence="moved to Berlin"))

    fake.default = (
        Script().on("Alice lives in Paris", PARIS).on(" works at ", works_at)
        .on(" lives in ", lives_in).on("moved to Berlin", moved)
    )


def faults(fake: FakeOpenAIServer) -> None:
    """The same faults for each path, each tied to one episode's own request (a later prompt
    quotes earlier episodes)."""
    fake.inject(rate_limit(retry_after=0.01), match="Episode:\nCarol lives")
    fake.inject(server_error(503), match="Episode:\nBob works")
    fake.inject(malformed_json, match="Episode:\nDan lives")  # one repair call
    fake.inject(refusal, match="Episode:\nFrank says")


def outcome(memory: GraphMemory, results: list[Any], group: str) -> dict[str, Any]:
    usage = ("status", "error", "warnings", "llm_calls", "llm_retries", "llm_repairs",
             "llm_failed_calls", "prompt_tokens", "completion_tokens")
    facts = memory.facts(group_id=group, include_history=True)
    return {
        "results": [{name: getattr(r, name) for name in usage} for r in results],
        "facts": sorted(
            (f.subject, f.predicate, f.object, f.statement, f.valid_from, f.valid_to,
             f.expired_at is None, f.superseded_by is not None, f.confidence)
            for f in facts
        ),
    }


def test_async_extraction_gives_the_sync_results(
    memory: GraphMemory, fake_openai: FakeOpenAIServer
) -> None:
    scripted(fake_openai)
    items = [
        {"content": text, "reference_time": when(1, i + 1), "metadata": {"speaker": "me"}}
        for i, text in enumerate(EPISODES)
    ]
    faults(fake_openai)
    memory.default_extractor = extractor(fake_openai)
    sync_results = memory.add_episodes(items, group_id="sync")
    sync_requests = fake_openai.calls("chat/completions")
    assert not fake_openai.pending_faults()

    faults(fake_openai)
    aextractor = extractor(fake_openai)
    memory.default_extractor = aextractor

    async def body() -> list[Any]:
        wrapped = AsyncGraphMemory(memory)
        try:
            return await wrapped.add_episodes(items, group_id="async")
        finally:
            await asyncio.to_thread(wrapped._executor().shutdown)

    async_results = run(body)
    async_requests = fake_openai.calls("chat/completions")[len(sync_requests):]
    assert not fake_openai.pending_faults()

    # The async path's requests came from openai.AsyncOpenAI, the sync path's from OpenAI.
    assert {r.headers.get("user-agent", "").split("/")[0] for r in async_requests} == {
        "AsyncOpenAI"
    }
    assert {r.headers.get("user-agent", "").split("/")[0] for r in sync_requests} == {"OpenAI"}
    assert len(async_requests) == len(sync_requests)

    sync, done = outcome(memory, sync_results, "sync"), outcome(memory, async_results, "async")
    for a, b in zip(done["results"], sync["results"], strict=True):
        assert a == b, (a, b)
    assert done == sync
    statuses = [r["status"] for r in sync["results"]]
    assert statuses == ["extracted"] * 5 + ["failed", "extracted"]
    by_text = dict(zip(EPISODES, sync["results"], strict=True))
    assert by_text["Carol lives in Rome."]["llm_retries"] == 1
    assert by_text["Bob works at Acme."]["llm_retries"] == 1
    assert by_text["Dan lives in Oslo."]["llm_repairs"] == 1


def test_llm_max_concurrency_bounds_requests_in_flight_across_calls(
    tmp_path: Any, fake_openai: FakeOpenAIServer
) -> None:
    lock = threading.Lock()
    state = {"now": 0, "peak": 0}
    two_in = threading.Event()

    def held(body: dict[str, Any]) -> dict[str, Any]:
        with lock:
            state["now"] += 1
            state["peak"] = max(state["peak"], state["now"])
            if state["now"] >= 2:
                two_in.set()
        two_in.wait(WAIT)  # the first requests wait until two are in flight at once
        with lock:
            state["now"] -= 1
        who = episode_of(body).split()[0]
        return answer(fact(who, "has_status", "ready"))

    fake_openai.default = held
    from graphmem import HashEmbedder, Settings

    settings = Settings(llm_concurrency=4, llm_max_concurrency=2)
    chosen = extractor(fake_openai)

    async def body() -> list[list[Any]]:
        async with AsyncGraphMemory(
            tmp_path / "m.db", embedder=HashEmbedder(32), settings=settings, max_workers=4,
            extractor=chosen,
        ) as memory:
            batches = [
                [{"content": f"Robot{b}x{i} is ready."} for i in range(4)] for b in range(4)
            ]
            done = await asyncio.gather(*(memory.add_episodes(batch) for batch in batches))
            assert len(chosen._async_clients) == 1  # one AsyncOpenAI client for this loop
        assert len(chosen._async_clients) == 0, "aclose() closed it before the loop ends"
        return done

    results = run(body)
    assert [r.status for batch in results for r in batch] == ["extracted"] * 16
    assert len(fake_openai.calls("chat/completions")) == 16
    assert state["peak"] == 2, "two at once, never more (llm_max_concurrency=2)"


def test_cancelling_stops_outstanding_llm_calls_and_leaves_no_half_written_episode(
    memory: GraphMemory, fake_openai: FakeOpenAIServer
) -> None:
    gate = threading.Event()
    arrived = threading.Semaphore(0)
    scripted(fake_openai)
    answers = fake_openai.default

    def held(body: dict[str, Any]) -> Any:
        arrived.release()
        gate.wait(WAIT)  # opened only after the cancellation has reached the caller
        return answers(body)

    fake_openai.default = held
    memory.settings.llm_concurrency = 2
    chosen = extractor(fake_openai)
    memory.default_extractor = chosen
    items = [{"content": text, "reference_time": when(1, i + 1)}
             for i, text in enumerate(EPISODES[:5])]

    async def body() -> None:
        wrapped = AsyncGraphMemory(memory)
        task = asyncio.create_task(wrapped.add_episodes(items, group_id="g"))
        for _ in range(2):  # the first chunk's two requests are at the server, unanswered
            assert await asyncio.to_thread(arrived.acquire, True, WAIT)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        # The caller heard of the cancellation while the server still held both answers:
        # the requests were abandoned, not waited for.
        assert not gate.is_set()
        gate.set()
        await asyncio.to_thread(wrapped._executor().shutdown)

    run(body)
    assert len(fake_openai.calls("chat/completions")) == 2, "no later chunk started"
    # The first chunk's episodes are stored (input is never lost), pending, without a fact;
    # the rest of the batch never started.
    pending = memory.store.episodes_by_status("g", ["pending"])
    assert sorted(e.content for e in pending) == sorted(EPISODES[:2])
    assert memory.store.episodes_by_status("g", ["extracted", "failed"]) == []
    assert memory.facts(group_id="g", include_history=True) == []
    assert memory.stats(group_id="g")["episodes"] == 2
    assert chosen.budget._in_flight == 0 and chosen.budget.calls == 0  # reservations released

    fake_openai.default = answers
    done = memory.reprocess(group_id="g")
    assert [r.status for r in done] == ["extracted", "extracted"]
    assert len(memory.facts(group_id="g")) == 2
