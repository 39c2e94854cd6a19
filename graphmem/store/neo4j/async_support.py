"""What the generated async Neo4j store (``_async/``) needs that asyncio lacks: a reentrant
lock, the twin of the sync store's ``threading.RLock`` (a writer holding the store's lock runs
migrations that take it again)."""

from __future__ import annotations

import asyncio
from types import TracebackType

__all__ = ["AsyncRLock"]


class AsyncRLock:
    """A lock the task holding it may take again (``async with``)."""

    def __init__(self) -> None:
        self._lock = asyncio.Lock()
        self._owner: asyncio.Task[object] | None = None
        self._depth = 0

    async def __aenter__(self) -> AsyncRLock:
        task = asyncio.current_task()
        if self._owner is not task or task is None:
            await self._lock.acquire()
            self._owner = task
        self._depth += 1
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._depth -= 1
        if self._depth == 0:
            self._owner = None
            self._lock.release()
