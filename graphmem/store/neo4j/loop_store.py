"""``LoopStore``: the generated async Neo4j store (``_async/``) behind the sync ``GraphStore``
protocol, so the one implementation of ingest, recall and forgetting (sync code) runs on it.

The async store lives on an event loop of its own, in one daemon thread per ``LoopStore``: the
driver's connections, its transactions and the store's locks belong to that loop, whatever loop
(or thread) the caller uses. A call from any other thread submits the coroutine to that loop and
waits for it. A unit of work (``write``/``write_many``) is sync code that reads through a
``StoreReader``: it runs in a worker thread while its transaction stays open on the loop, and
each read it makes is one more coroutine on that transaction.

``AsyncGraphMemory`` uses it for ``neo4j://``/``bolt://`` URLs (``native=True``). ``close()``
closes the driver and stops the loop; the next call starts a fresh loop and store.
"""

from __future__ import annotations

import asyncio
import functools
import inspect
import threading
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine, Iterator, Sequence
from typing import Any, TypeVar

from ..._errors import StoreError
from .._base import StoreReader, WritePlan
from ._async import AsyncNeo4jStore
from ._async.tx_reader import TxReader

__all__ = ["LoopStore"]

T = TypeVar("T")


class _Loop:
    """An event loop running in a daemon thread."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(
            target=self.loop.run_forever, name="graphmem-neo4j-async", daemon=True
        )
        self.thread.start()

    def run(self, coro: Coroutine[Any, Any, T]) -> T:
        if threading.current_thread() is self.thread:
            coro.close()
            raise StoreError("a sync store call from the store's own event loop would deadlock")
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result()

    def stop(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join()
        self.loop.close()


class _Reader:
    """The ``StoreReader`` a sync unit of work gets: each read runs on the open transaction."""

    def __init__(self, reader: TxReader, loop: _Loop) -> None:
        self._reader = reader
        self._loop = loop
        self.write_seq = reader.write_seq

    def __getattr__(self, name: str) -> Any:
        method = getattr(self._reader, name)
        if not asyncio.iscoroutinefunction(method):
            return method
        return lambda *args, **kwargs: self._loop.run(method(*args, **kwargs))


class LoopStore:
    """A sync ``GraphStore`` over ``AsyncNeo4jStore(url, **options)`` (the constructor does no
    I/O); ``aio`` is the async store (on ``loop``) while one is open."""

    def __init__(self, url: str, **options: Any) -> None:
        self._url = url
        self._options = options
        self._lock = threading.Lock()
        self._open: tuple[_Loop, AsyncNeo4jStore] | None = None
        self.url = AsyncNeo4jStore(url, **options).url  # checks the URL, never shows a password

    def _current(self) -> tuple[_Loop, AsyncNeo4jStore]:
        with self._lock:
            if self._open is None:
                self._open = (_Loop(), AsyncNeo4jStore(self._url, **self._options))
            return self._open

    @property
    def aio(self) -> AsyncNeo4jStore:
        return self._current()[1]

    def run(self, call: Callable[[AsyncNeo4jStore], Awaitable[T]]) -> T:
        """``call(async store)`` awaited on the store's loop, from this (another) thread."""
        loop, store = self._current()

        async def job() -> T:
            return await call(store)

        return loop.run(job())

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        value = getattr(AsyncNeo4jStore, name, None)
        if inspect.isfunction(value) and not asyncio.iscoroutinefunction(value):
            # A sync method: bound when called (looking it up starts nothing).
            return lambda *args, **kwargs: getattr(self.aio, name)(*args, **kwargs)
        if not asyncio.iscoroutinefunction(value):
            return getattr(self.aio, name)  # a property or an attribute: no I/O

        @functools.wraps(value)
        def call(*args: Any, **kwargs: Any) -> Any:
            return self.run(lambda store: getattr(store, name)(*args, **kwargs))

        return call

    # ------------------------------------------------------------------ what differs
    def close(self) -> None:
        with self._lock:
            opened, self._open = self._open, None
        if opened is not None:
            loop, store = opened
            try:
                loop.run(store.close())
            finally:
                loop.stop()

    def write(self, work: Callable[[StoreReader], WritePlan]) -> WritePlan:
        return self.write_many([work])[0]

    def write_many(self, works: Sequence[Callable[[StoreReader], WritePlan]]) -> list[WritePlan]:
        loop, _ = self._current()

        def threaded(work: Callable[[StoreReader], WritePlan]) -> Callable[[TxReader], Any]:
            async def unit(reader: TxReader) -> WritePlan:
                # Sync code: in a worker, so the loop stays free for the reads it makes.
                return await asyncio.to_thread(work, _Reader(reader, loop))

            return unit

        return self.run(lambda store: store.write_many([threaded(w) for w in works]))

    def export_rows(self, group_id: str | None) -> Iterator[dict[str, Any]]:
        loop, store = self._current()
        rows: AsyncIterator[dict[str, Any]] = store.export_rows(group_id)

        async def following() -> tuple[bool, dict[str, Any]]:
            try:
                return True, await rows.__anext__()
            except StopAsyncIteration:
                return False, {}

        while True:
            more, row = loop.run(following())
            if not more:
                return
            yield row
