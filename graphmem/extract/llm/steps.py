"""The LLM extractor's I/O as steps: one implementation of an extraction (prompt, budget, rate
limit, retries, the json_schema fallback, the repair call, accounting) written as a generator
that *yields* what it needs done (``Send`` a request, ``Wait`` before a retry, ``Acquire`` room
from the rate limiter) and gets the answer back. ``drive`` runs it with blocking calls (the
``openai.OpenAI`` client, ``time.sleep``), ``adrive`` with awaited ones (``openai.AsyncOpenAI``,
``asyncio.sleep``): the two paths cannot drift, and an exception (a cancellation too) is thrown
into the generator at the step that failed, so its own handlers release what it reserved."""

from __future__ import annotations

import sys
from collections.abc import Awaitable, Callable, Generator
from dataclasses import dataclass, field
from typing import Any, TypeVar

from tenacity import DoAttempt, DoSleep, RetryCallState, Retrying

__all__ = ["Acquire", "Send", "Step", "Steps", "Wait", "adrive", "drive", "retried"]

T = TypeVar("T")


@dataclass(frozen=True)
class Send:
    """One chat-completion request (the keyword arguments of ``chat.completions.create``)."""

    request: dict[str, Any] = field(hash=False)


@dataclass(frozen=True)
class Wait:
    """A pause before the next attempt (backoff, ``Retry-After``)."""

    seconds: float


@dataclass(frozen=True)
class Acquire:
    """Room for one request of about ``tokens`` tokens from the rate limiter."""

    tokens: int


Step = Send | Wait | Acquire
Steps = Generator[Step, Any, T]


def drive(steps: Steps[T], perform: Callable[[Step], Any]) -> T:
    """Run ``steps`` to the end, each step done by the blocking ``perform``."""
    reply: Any = None
    error: BaseException | None = None
    while True:
        try:
            step = steps.send(reply) if error is None else steps.throw(error)
        except StopIteration as done:
            return done.value  # type: ignore[no-any-return]
        reply, error = None, None
        try:
            reply = perform(step)
        except BaseException as exc:  # thrown back in: the steps' own handlers decide
            error = exc


async def adrive(steps: Steps[T], perform: Callable[[Step], Awaitable[Any]]) -> T:
    """``drive`` with an awaited ``perform``; a cancellation is thrown into the steps too."""
    reply: Any = None
    error: BaseException | None = None
    while True:
        try:
            step = steps.send(reply) if error is None else steps.throw(error)
        except StopIteration as done:
            return done.value  # type: ignore[no-any-return]
        reply, error = None, None
        try:
            reply = await perform(step)
        except BaseException as exc:
            error = exc


def retried(retrying: Retrying, attempt: Callable[[], Steps[T]]) -> Steps[T]:
    """tenacity's own loop (``Retrying.__iter__``: its stop, wait, retry and before_sleep
    decide), with its sleeps yielded as ``Wait`` steps."""
    retrying.begin()
    state = RetryCallState(retrying, fn=None, args=(), kwargs={})
    while True:
        do = retrying.iter(retry_state=state)
        if isinstance(do, DoAttempt):
            try:
                result = yield from attempt()
            except BaseException:
                state.set_exception(sys.exc_info())  # type: ignore[arg-type]
            else:
                return result
        elif isinstance(do, DoSleep):
            state.prepare_for_next_attempt()
            yield Wait(float(do))
        else:  # pragma: no cover - tenacity returns the result only after a success
            return do  # type: ignore[no-any-return]
