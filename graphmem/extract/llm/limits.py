"""Client-side limits for LLM calls: a thread-safe rate limiter and a call/token budget.

Both are shared by every thread that extracts through one extractor (bulk ingest runs
``Settings.llm_concurrency`` of them), and ``shared_rate_limiter`` shares one limiter between
extractors that talk to the same endpoint and model in one process.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from ..._errors import BudgetExceededError, ConfigError

__all__ = ["Budget", "RateLimiter", "shared_rate_limiter"]

Clock = Callable[[], float]
_EPSILON = 1e-6  # float slack when comparing bucket levels
_MIN_SLEEP = 1e-3  # every wait moves the clock forward
Sleep = Callable[[float], None]


@dataclass
class _Bucket:
    """A token bucket holding up to one minute's allowance, refilled continuously."""

    per_minute: float
    level: float
    updated: float

    @property
    def rate(self) -> float:
        return self.per_minute / 60.0

    def refill(self, now: float) -> None:
        if now > self.updated:
            self.level = min(self.per_minute, self.level + (now - self.updated) * self.rate)
            self.updated = now

    def delay(self, amount: float) -> float:
        """Seconds until ``amount`` (at most one minute's allowance) is available."""
        amount = min(amount, self.per_minute)
        if self.level >= amount - _EPSILON:
            return 0.0
        return max((amount - self.level) / self.rate, _MIN_SLEEP)


class RateLimiter:
    """Requests per minute and tokens per minute, across threads.

    ``acquire(tokens)`` blocks until one request and ``tokens`` (the estimated size of the call)
    fit in both budgets, then takes them; ``settle(estimated, actual)`` corrects the token bucket
    once the response's usage is known; ``hold(seconds)`` pauses every caller (a 429's
    ``Retry-After``). Either limit may be ``None`` (unlimited). ``clock``/``sleep`` are
    injectable for tests.
    """

    def __init__(
        self,
        requests_per_minute: float | None = None,
        tokens_per_minute: float | None = None,
        *,
        clock: Clock = time.monotonic,
        sleep: Sleep = time.sleep,
    ) -> None:
        for label, limit in (
            ("requests_per_minute", requests_per_minute),
            ("tokens_per_minute", tokens_per_minute),
        ):
            if limit is not None and not (limit > 0 and math.isfinite(limit)):
                raise ConfigError(f"{label} must be a positive number, got {limit!r}")
        self._clock = clock
        self._sleep = sleep
        self._lock = threading.Lock()
        now = clock()
        self._requests = (
            _Bucket(float(requests_per_minute), float(requests_per_minute), now)
            if requests_per_minute
            else None
        )
        self._tokens = (
            _Bucket(float(tokens_per_minute), float(tokens_per_minute), now)
            if tokens_per_minute
            else None
        )
        self._hold_until = -math.inf
        self.waited = 0.0  # total seconds callers spent waiting here

    @property
    def requests_per_minute(self) -> float | None:
        return None if self._requests is None else self._requests.per_minute

    @property
    def tokens_per_minute(self) -> float | None:
        return None if self._tokens is None else self._tokens.per_minute

    def _delay(self, now: float, tokens: float) -> float:
        delay = max(0.0, self._hold_until - now)
        if self._requests is not None:
            self._requests.refill(now)
            delay = max(delay, self._requests.delay(1.0))
        if self._tokens is not None:
            self._tokens.refill(now)
            delay = max(delay, self._tokens.delay(tokens))
        return delay

    def acquire(self, tokens: int = 0) -> float:
        """Wait until one request of about ``tokens`` tokens may go; returns seconds waited."""
        waited = 0.0
        while (delay := self.take(tokens, waited)) > 0.0:
            self._sleep(delay)
            waited += delay
        return waited

    def take(self, tokens: int = 0, waited: float = 0.0) -> float:
        """Take one request of about ``tokens`` tokens now and return 0.0, or take nothing and
        return the seconds to wait before asking again (``acquire`` sleeps them; the async
        extractor awaits them). ``waited``: what the caller has waited so far (counted once
        the request is taken)."""
        with self._lock:
            now = self._clock()
            delay = self._delay(now, float(max(tokens, 0)))
            if delay <= _EPSILON:
                if self._requests is not None:
                    self._requests.level -= 1.0
                if self._tokens is not None:
                    self._tokens.level -= min(float(max(tokens, 0)), self._tokens.per_minute)
                self.waited += waited
                return 0.0
        return max(delay, _MIN_SLEEP)

    def settle(self, estimated: int, actual: int) -> None:
        """Give back (or take more of) the token allowance once the real usage is known."""
        if self._tokens is None:
            return
        with self._lock:
            self._tokens.refill(self._clock())
            self._tokens.level = min(
                self._tokens.per_minute, self._tokens.level + float(estimated - actual)
            )

    def hold(self, seconds: float) -> None:
        """Let no request through for ``seconds`` (the server said to back off)."""
        if seconds <= 0:
            return
        with self._lock:
            self._hold_until = max(self._hold_until, self._clock() + seconds)


_SHARED: dict[tuple[str, str, float | None, float | None], RateLimiter] = {}
_SHARED_LOCK = threading.Lock()


def shared_rate_limiter(
    endpoint: str,
    model: str,
    requests_per_minute: float | None,
    tokens_per_minute: float | None,
) -> RateLimiter:
    """One limiter per (endpoint, model, limits) in this process."""
    key = (endpoint, model, requests_per_minute, tokens_per_minute)
    with _SHARED_LOCK:
        limiter = _SHARED.get(key)
        if limiter is None:
            limiter = RateLimiter(requests_per_minute, tokens_per_minute)
            _SHARED[key] = limiter
        return limiter


class Budget:
    """A cap on LLM calls and tokens; ``reserve`` refuses a call *before* it is made.

    The token cap is checked against the tokens already used plus the estimated prompt of the
    next call, so one answer may overshoot it by its completion. Totals (``calls``,
    ``prompt_tokens``, ``completion_tokens``) count every answered call.
    """

    def __init__(self, max_calls: int | None = None, max_tokens: int | None = None) -> None:
        if max_calls is not None and max_calls < 0:
            raise ConfigError(f"max_calls must be >= 0, got {max_calls}")
        if max_tokens is not None and max_tokens < 0:
            raise ConfigError(f"max_tokens must be >= 0, got {max_tokens}")
        self.max_calls = max_calls
        self.max_tokens = max_tokens
        self.calls = 0
        self.prompt_tokens = 0
        self.completion_tokens = 0
        self._in_flight = 0
        self._lock = threading.Lock()

    @property
    def tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    @property
    def exhausted(self) -> bool:
        with self._lock:
            return (self.max_calls is not None and self.calls >= self.max_calls) or (
                self.max_tokens is not None and self.tokens >= self.max_tokens
            )

    def reserve(self, estimated_tokens: int) -> None:
        """Claim one call; raises ``BudgetExceededError`` if it would pass a cap."""
        with self._lock:
            if self.max_calls is not None and self.calls + self._in_flight + 1 > self.max_calls:
                raise BudgetExceededError(
                    f"LLM budget exhausted: {self.calls} of max_calls={self.max_calls} used"
                )
            if self.max_tokens is not None and self.tokens + estimated_tokens > self.max_tokens:
                raise BudgetExceededError(
                    f"LLM budget exhausted: {self.tokens} tokens used, the next call needs about "
                    f"{estimated_tokens} more (max_tokens={self.max_tokens})"
                )
            self._in_flight += 1

    def commit(self, prompt_tokens: int, completion_tokens: int) -> None:
        """A reserved call was answered: count it and its tokens."""
        with self._lock:
            self._in_flight = max(0, self._in_flight - 1)
            self.calls += 1
            self.prompt_tokens += prompt_tokens
            self.completion_tokens += completion_tokens

    def release(self) -> None:
        """A reserved call was never answered (it failed): free its slot."""
        with self._lock:
            self._in_flight = max(0, self._in_flight - 1)
