"""Model-backed extraction of a batch on an event loop (``AsyncGraphMemory``): each episode's
extraction is a task on the caller's loop, ``extractor.aextract`` on ``openai.AsyncOpenAI``,
at most ``Settings.llm_max_concurrency`` in flight (a semaphore shared by all of one memory's
calls on that loop), so a batch's LLM calls overlap with the loop's other work instead of
holding threads. The ingest itself (sync code) runs in a worker thread and waits for the batch.

``LoopExtraction.cancel()`` (the caller's call was cancelled) cancels the batch: its LLM
requests are abandoned (the connections closed), each extraction's reservations released, and
the ingest stops with ``IngestCancelled`` before the chunk's write (the episodes of the chunk
stay stored and ``pending``; ``reprocess()`` completes them) and before any later chunk.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import threading
from collections.abc import Coroutine, Iterator
from contextvars import ContextVar
from typing import Any, TypeVar

__all__ = ["IngestCancelled", "LoopExtraction", "current", "on_loop"]

T = TypeVar("T")


class IngestCancelled(Exception):
    """The ingest call was cancelled: nothing more of it runs (see the module)."""


class LoopExtraction:
    """The loop (and its semaphore) that one ingest call's extractions run on."""

    def __init__(self, loop: asyncio.AbstractEventLoop, semaphore: asyncio.Semaphore) -> None:
        self.loop = loop
        self.semaphore = semaphore
        self._cancelled = threading.Event()
        self._lock = threading.Lock()
        self._running: set[concurrent.futures.Future[Any]] = set()

    @property
    def cancelled(self) -> bool:
        return self._cancelled.is_set()

    def check(self) -> None:
        """``IngestCancelled`` once the call was cancelled."""
        if self._cancelled.is_set():
            raise IngestCancelled("the ingest call was cancelled")

    def run(self, batch: Coroutine[Any, Any, T]) -> T:
        """Run ``batch`` on the loop and wait for it (from a worker thread); when the call is
        cancelled meanwhile, wait until the batch has wound down, then ``IngestCancelled``."""
        finished = threading.Event()

        async def tracked() -> T:
            try:
                return await batch
            finally:
                finished.set()

        if self._cancelled.is_set():
            batch.close()
            self.check()
        future = asyncio.run_coroutine_threadsafe(tracked(), self.loop)
        with self._lock:
            self._running.add(future)
        try:
            return future.result()
        except concurrent.futures.CancelledError:
            finished.wait()  # its requests abandoned, its reservations released
            raise IngestCancelled("the ingest call was cancelled") from None
        finally:
            with self._lock:
                self._running.discard(future)

    def cancel(self) -> None:
        self._cancelled.set()
        with self._lock:
            running = list(self._running)
        for future in running:
            future.cancel()


_CURRENT: ContextVar[LoopExtraction | None] = ContextVar("graphmem_loop_extraction", default=None)


def current() -> LoopExtraction | None:
    """The loop this thread's ingest extracts on, if its call came from ``AsyncGraphMemory``."""
    return _CURRENT.get()


@contextlib.contextmanager
def on_loop(extraction: LoopExtraction) -> Iterator[None]:
    token = _CURRENT.set(extraction)
    try:
        yield
    finally:
        _CURRENT.reset(token)
