"""``AsyncGraphMemory``: ``GraphMemory``'s public surface, awaitable.

One implementation: each coroutine method *is* the ``GraphMemory`` method of the same name
(same signature, same docstring, the same code run), called in a worker thread of a bounded pool
owned by this object, so the event loop never waits on SQLite, the Neo4j driver, an embedding or
an LLM call. On Neo4j the store itself is the driver's async API: the async store generated
from the sync one (``scripts/gen_async_neo4j.py``), run on an event loop of its own
(``store/neo4j/loop_store.py``); the workers then only run graphmem's logic. A batch's LLM
extractions (the ``llm`` extractor) run on this event loop, ``aextract`` on ``openai.AsyncOpenAI``
(``ingest/loop_extraction.py``), at most ``Settings.llm_max_concurrency`` requests in flight
across all of this object's calls, with the sync extractor's accounting, retries, rate limiter
and budget (the same steps, ``extract/llm/steps.py``) and the same results.

Cancelling a call never leaves anything half written:

- a call still waiting for a worker is dropped: nothing of it runs;
- a call already running stops what can stop: its outstanding LLM requests are abandoned and
  no further chunk of a batch starts; a store write already under way is never interrupted
  (each is one transaction). The cancelled caller waits until the worker has stopped, then gets
  its ``CancelledError``. Episodes whose extraction was cut off stay stored and ``pending``
  (``reprocess()`` completes them); no episode has part of its facts.

``aclose()`` (or leaving ``async with``) waits for running calls before closing the store.
"""

from __future__ import annotations

import asyncio
import functools
import os
import weakref
from collections.abc import Callable, Coroutine, Iterable
from concurrent.futures import Future, ThreadPoolExecutor
from threading import Lock
from types import TracebackType
from typing import Any, Concatenate, ParamSpec, TypeVar, cast
from urllib.parse import urlparse

from ._errors import ConfigError
from ._memory import GraphMemory
from .ingest.loop_extraction import LoopExtraction, on_loop
from .store import _BOLT_SCHEMES, GraphStore

__all__ = ["AsyncGraphMemory"]

P = ParamSpec("P")
R = TypeVar("R")
T = TypeVar("T")


def _awaitable(
    method: Callable[Concatenate[GraphMemory, P], R],
) -> Callable[Concatenate[AsyncGraphMemory, P], Coroutine[Any, Any, R]]:
    """The coroutine method that runs ``method`` on the wrapped memory in a worker."""

    @functools.wraps(method)
    async def call(self: AsyncGraphMemory, /, *args: P.args, **kwargs: P.kwargs) -> R:
        return await self.run(functools.partial(method, self.sync, *args, **kwargs))

    return call


def _collected(
    method: Callable[Concatenate[GraphMemory, P], Iterable[T]],
) -> Callable[Concatenate[AsyncGraphMemory, P], Coroutine[Any, Any, list[T]]]:
    """Like ``_awaitable`` for a method returning an iterator: read to the end in the worker
    (a lazy iterator would read the store on the event loop)."""

    @functools.wraps(method)
    async def call(self: AsyncGraphMemory, /, *args: P.args, **kwargs: P.kwargs) -> list[T]:
        return await self.run(lambda: list(method(self.sync, *args, **kwargs)))

    return call


def _is_bolt(url: str) -> bool:
    return urlparse(url.strip()).scheme.lower() in _BOLT_SCHEMES


class AsyncGraphMemory:
    """Long-term memory as a temporal knowledge graph, for asyncio code.

    ``AsyncGraphMemory("memory.db")`` takes what ``GraphMemory`` takes (``embedder=``,
    ``extractor=``, ``settings=``...), or wraps an existing ``GraphMemory``
    (``AsyncGraphMemory(memory)``; the two then share one store and its state).
    ``max_workers``: how many calls run at once (default 4); more wait their turn.
    ``native`` (default True): a ``neo4j://``/``bolt://`` URL opens the store on the driver's
    async API (``graphmem.store.neo4j.loop_store``: the generated async store on an event loop
    of its own); False keeps the sync driver. SQLite always runs in the workers.
    Nothing touches the store until the first call or ``await connect()``.
    """

    def __init__(
        self,
        store: str | os.PathLike[str] | GraphStore | GraphMemory | None = None,
        *,
        max_workers: int = 4,
        native: bool = True,
        **options: Any,
    ) -> None:
        if not isinstance(max_workers, int) or isinstance(max_workers, bool) or max_workers < 1:
            raise ConfigError(f"max_workers must be an integer >= 1, got {max_workers!r}")
        if isinstance(store, GraphMemory):
            if options:
                raise ConfigError(
                    "options go to the GraphMemory being wrapped, not to AsyncGraphMemory: "
                    f"got {sorted(options)}"
                )
            self.sync = store
        elif native and isinstance(store, str) and _is_bolt(store):
            from .store.neo4j.loop_store import LoopStore

            self.sync = GraphMemory(cast(GraphStore, LoopStore(store.strip())), **options)
        else:
            self.sync = GraphMemory(store, **options)
        self.max_workers = max_workers
        self._pool: ThreadPoolExecutor | None = None
        self._pool_lock = Lock()
        self._semaphores: weakref.WeakKeyDictionary[
            asyncio.AbstractEventLoop, asyncio.Semaphore
        ] = weakref.WeakKeyDictionary()

    # ------------------------------------------------------------------ running a call
    def _executor(self) -> ThreadPoolExecutor:
        with self._pool_lock:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(
                    max_workers=self.max_workers, thread_name_prefix="graphmem-async"
                )
            return self._pool

    def _semaphore(self, loop: asyncio.AbstractEventLoop) -> asyncio.Semaphore:
        with self._pool_lock:
            semaphore = self._semaphores.get(loop)
            if semaphore is None:
                semaphore = asyncio.Semaphore(self.sync.settings.llm_max_concurrency)
                self._semaphores[loop] = semaphore
            return semaphore

    async def run(self, work: Callable[[], R]) -> R:
        """Run ``work`` (a sync call on ``self.sync``) in a worker, its LLM extractions on this
        loop; cancellation as described in the module: a waiting call is dropped, a running
        one stops its LLM calls and later chunks, and is waited for."""
        loop = asyncio.get_running_loop()
        extraction = LoopExtraction(loop, self._semaphore(loop))

        def bound() -> R:
            with on_loop(extraction):
                return work()

        future: Future[R] = self._executor().submit(bound)
        try:
            return await asyncio.wrap_future(future)
        except asyncio.CancelledError:
            if future.cancel():  # had not started: nothing of it ran
                raise
            extraction.cancel()  # its LLM requests stop; no later chunk starts
            while not future.done():  # running: let it finish before we give up
                try:
                    await asyncio.shield(asyncio.wrap_future(future))
                except asyncio.CancelledError:
                    continue
                except Exception:  # its own failure; the caller asked to cancel
                    break
            raise

    # ------------------------------------------------------------------ lifecycle
    @property
    def store(self) -> GraphStore:
        return self.sync.store

    async def connect(self) -> AsyncGraphMemory:
        """Open the store, apply migrations and check the embedder (``GraphMemory.connect``)."""
        await self.run(self.sync.connect)
        return self

    async def aclose(self) -> None:
        """Wait for running calls, then close the store (and the LLM extractors' connections
        this loop opened)."""
        pool, self._pool = self._pool, None
        if pool is not None:
            await asyncio.to_thread(pool.shutdown, wait=True, cancel_futures=False)
        for extractor in [self.sync.default_extractor, *self.sync._extractors.values()]:
            close = getattr(extractor, "aclose", None)
            if close is not None:
                await close()
        await asyncio.to_thread(self.sync.close)

    async def __aenter__(self) -> AsyncGraphMemory:
        return await self.connect()

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()

    # ------------------------------------------------------------------ GraphMemory's surface
    migrate = _awaitable(GraphMemory.migrate)
    add_episode = _awaitable(GraphMemory.add_episode)
    add_episodes = _awaitable(GraphMemory.add_episodes)
    add_fact = _awaitable(GraphMemory.add_fact)
    reprocess = _awaitable(GraphMemory.reprocess)
    recall = _awaitable(GraphMemory.recall)
    history = _awaitable(GraphMemory.history)
    facts = _awaitable(GraphMemory.facts)
    get_facts = _awaitable(GraphMemory.get_facts)
    episode = _awaitable(GraphMemory.episode)
    forget = _awaitable(GraphMemory.forget)
    stats = _awaitable(GraphMemory.stats)
    export = _collected(GraphMemory.export)
    import_rows = _awaitable(GraphMemory.import_rows)
    reembed = _awaitable(GraphMemory.reembed)
    to_networkx = _awaitable(GraphMemory.to_networkx)
    add_experience = _awaitable(GraphMemory.add_experience)
    recall_experiences = _awaitable(GraphMemory.recall_experiences)
    pin = _awaitable(GraphMemory.pin)
    unpin = _awaitable(GraphMemory.unpin)
    pins = _awaitable(GraphMemory.pins)
    feedback = _awaitable(GraphMemory.feedback)
