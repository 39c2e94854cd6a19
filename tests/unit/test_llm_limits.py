"""Rate limiter and budget, on an injected clock (no wall-clock assertions)."""

from __future__ import annotations

import threading

import pytest

from graphmem._errors import BudgetExceededError, ConfigError, GraphMemError
from graphmem.extract.llm.limits import Budget, RateLimiter, shared_rate_limiter


class FakeClock:
    """A clock that only moves when someone sleeps; thread-safe."""

    def __init__(self) -> None:
        self.now = 1000.0
        self.sleeps: list[float] = []
        self._lock = threading.Lock()

    def __call__(self) -> float:
        with self._lock:
            return self.now

    def sleep(self, seconds: float) -> None:
        with self._lock:
            self.sleeps.append(seconds)
            self.now += seconds


def limiter(rpm: float | None = None, tpm: float | None = None) -> tuple[RateLimiter, FakeClock]:
    clock = FakeClock()
    return RateLimiter(rpm, tpm, clock=clock, sleep=clock.sleep), clock


def test_requests_per_minute_allows_a_burst_then_paces() -> None:
    rl, clock = limiter(rpm=60)
    for _ in range(60):
        assert rl.acquire() == 0.0
    assert clock.sleeps == []
    waited = rl.acquire()
    assert waited == pytest.approx(1.0)  # 60/min refills one request a second
    assert rl.acquire() == pytest.approx(1.0)
    assert clock.now == pytest.approx(1002.0)


def test_requests_refill_with_time() -> None:
    rl, clock = limiter(rpm=6)
    for _ in range(6):
        rl.acquire()
    clock.now += 30  # half a minute: three requests back
    for _ in range(3):
        assert rl.acquire() == 0.0
    assert rl.acquire() == pytest.approx(10.0)


def test_tokens_per_minute() -> None:
    rl, _clock = limiter(tpm=600)
    assert rl.acquire(300) == 0.0
    assert rl.acquire(300) == 0.0
    assert rl.acquire(300) == pytest.approx(30.0)  # 10 tokens/s
    # a call larger than a minute's allowance waits for a full bucket, never forever
    assert rl.acquire(5000) == pytest.approx(60.0)


def test_settle_refunds_and_charges_the_difference() -> None:
    rl, _ = limiter(tpm=600)
    rl.acquire(600)
    rl.settle(estimated=600, actual=100)  # the call was smaller than feared
    assert rl.acquire(500) == 0.0
    rl.settle(estimated=0, actual=300)  # usage above the estimate is a debt
    assert rl.acquire(1) == pytest.approx(30.1)


def test_hold_pauses_everyone() -> None:
    rl, _clock = limiter()
    rl.hold(2.5)
    assert rl.acquire() == pytest.approx(2.5)
    assert rl.acquire() == 0.0
    rl.hold(0)
    assert rl.acquire() == 0.0
    assert rl.waited == pytest.approx(2.5)


def test_both_limits_the_stricter_wins() -> None:
    rl, _ = limiter(rpm=600, tpm=60)
    assert rl.acquire(60) == 0.0
    assert rl.acquire(6) == pytest.approx(6.0)


def test_unlimited_never_waits() -> None:
    rl, clock = limiter()
    for _ in range(10_000):
        rl.acquire(10_000)
    assert clock.sleeps == []


def test_threads_share_the_limit() -> None:
    rl, clock = limiter(rpm=60)
    start = clock.now
    granted: list[int] = []
    lock = threading.Lock()

    def worker(index: int) -> None:
        for _ in range(10):
            rl.acquire()
            with lock:
                granted.append(index)

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=30)
    assert len(granted) == 80
    # 60 in the burst, the other 20 need at least 20 seconds of refill at one a second
    assert clock.now - start >= 20.0 - 1e-6


@pytest.mark.parametrize("bad", [0, -1, float("inf"), float("nan")])
def test_bad_limits_are_config_errors(bad: float) -> None:
    with pytest.raises(ConfigError):
        RateLimiter(requests_per_minute=bad)
    with pytest.raises(ConfigError):
        RateLimiter(tokens_per_minute=bad)


def test_shared_rate_limiter_is_per_endpoint_and_model() -> None:
    a = shared_rate_limiter("http://x/v1", "m", 10, None)
    assert shared_rate_limiter("http://x/v1", "m", 10, None) is a
    assert shared_rate_limiter("http://x/v1", "other", 10, None) is not a
    assert shared_rate_limiter("http://y/v1", "m", 10, None) is not a


# ----------------------------------------------------------------------------- budget


def test_call_budget_refuses_before_the_call() -> None:
    budget = Budget(max_calls=2)
    budget.reserve(10)
    budget.commit(10, 5)
    budget.reserve(10)
    with pytest.raises(BudgetExceededError, match="max_calls=2"):
        budget.reserve(10)  # one call in flight + one done = 2
    budget.commit(10, 5)
    assert budget.exhausted
    with pytest.raises(BudgetExceededError) as info:
        budget.reserve(10)
    assert isinstance(info.value, GraphMemError) and info.value.code == "budget"
    assert (budget.calls, budget.prompt_tokens, budget.completion_tokens) == (2, 20, 10)


def test_released_calls_free_their_slot() -> None:
    budget = Budget(max_calls=1)
    budget.reserve(1)
    budget.release()  # the call failed; it never counted
    budget.reserve(1)
    budget.commit(1, 1)
    assert budget.calls == 1


def test_token_budget_uses_the_estimate_of_the_next_call() -> None:
    budget = Budget(max_tokens=1000)
    budget.reserve(400)
    budget.commit(400, 200)
    with pytest.raises(BudgetExceededError, match="max_tokens=1000"):
        budget.reserve(401)
    budget.reserve(400)
    budget.commit(400, 300)  # one answer may overshoot by its completion
    assert budget.tokens == 1300 and budget.exhausted


def test_budget_is_thread_safe() -> None:
    budget = Budget(max_calls=50)
    refused: list[int] = []

    def worker() -> None:
        for _ in range(20):
            try:
                budget.reserve(1)
            except BudgetExceededError:
                refused.append(1)
                continue
            budget.commit(1, 1)

    threads = [threading.Thread(target=worker) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=30)
    assert budget.calls == 50
    assert len(refused) == 8 * 20 - 50


def test_negative_budget_is_a_config_error() -> None:
    with pytest.raises(ConfigError):
        Budget(max_calls=-1)
    with pytest.raises(ConfigError):
        Budget(max_tokens=-5)
