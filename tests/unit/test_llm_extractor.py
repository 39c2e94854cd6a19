"""The ``llm`` extractor end to end: real ``openai`` client, real sockets, the fake server, a real
``GraphMemory`` on SQLite. Every fault ends in a correct graph or in a ``failed`` episode that
``reprocess()`` completes once the fault is gone; never in a lost or half-written episode."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from graphmem import GraphMemory, HashEmbedder
from graphmem._config import Settings
from graphmem.extract.llm import LLMExtractor, retry_after_seconds
from tests.fakes.openai_server import (
    FakeOpenAIServer,
    connection_reset,
    malformed_json,
    rate_limit,
    refusal,
    reject_json_schema,
    schema_violation,
    server_error,
    think_preamble,
    timeout,
    truncated_json,
)

pytest_plugins = ["tests.fakes.pytest_plugin"]

Answer = dict[str, Any]


def when(month: int, day: int = 1, year: int = 2024) -> datetime:
    return datetime(year, month, day, tzinfo=UTC)


# ----------------------------------------------------------------------------- scripting


def first_user(body: dict[str, Any]) -> str:
    return next(m["content"] for m in body["messages"] if m["role"] == "user")


def episode_of(body: dict[str, Any]) -> str:
    """The current episode's text (the prompt also quotes earlier episodes and known facts)."""
    return first_user(body).rpartition("\nEpisode:\n")[2]


def alias_for(body: dict[str, Any], text: str) -> str | None:
    """The ``F<n>`` alias the prompt gave to the known fact whose line contains ``text``."""
    for line in first_user(body).splitlines():
        if line.startswith("[F") and text in line:
            return line[1 : line.index("]")]
    return None


def fact(subject: str, predicate: str, obj: str | None = None, **extra: Any) -> dict[str, Any]:
    item: dict[str, Any] = {
        "subject": subject,
        "predicate": predicate,
        "object": obj,
        "value": None,
        "statement": f"{subject} {predicate.replace('_', ' ')} {obj or extra.get('value')}.",
        "valid_from": None,
        "valid_to": None,
        "kind": "assert",
        "replaces": None,
        "relation": "new",
        "fact_id": None,
        "reason": None,
        "evidence": None,
    }
    item.update(extra)
    return item


def answer(*facts: dict[str, Any], entities: list[tuple[str, str]] | None = None) -> Answer:
    names = entities or []
    return {"entities": [{"name": n, "type": t} for n, t in names], "facts": list(facts)}


class Script:
    """Answers keyed by a substring of the *current* episode (not of the whole prompt)."""

    def __init__(self) -> None:
        self.rules: list[tuple[str, Answer | Callable[[dict[str, Any]], Answer]]] = []

    def on(self, text: str, reply: Answer | Callable[[dict[str, Any]], Answer]) -> Script:
        self.rules.append((text, reply))
        return self

    def __call__(self, body: dict[str, Any]) -> Answer:
        episode = episode_of(body)
        for text, reply in self.rules:
            if text in episode:
                return reply(body) if callable(reply) else reply
        return answer()


def moved_to_berlin(body: dict[str, Any]) -> Answer:
    return answer(
        fact(
            "Alice",
            "lives_in",
            "Berlin",
            relation="supersedes",
            fact_id=alias_for(body, "Paris"),
            reason="moved to Berlin",
            evidence="moved to Berlin",
        ),
        entities=[("Alice", "person"), ("Berlin", "city")],
    )


PARIS = answer(
    fact("Alice", "lives_in", "Paris", evidence="lives in Paris"),
    entities=[("Alice", "person"), ("Paris", "city")],
)


@pytest.fixture
def script(fake_openai: FakeOpenAIServer) -> Script:
    s = Script().on("lives in Paris", PARIS).on("moved to Berlin", moved_to_berlin)
    fake_openai.default = s
    return s


def settings_for(fake: FakeOpenAIServer, **overrides: Any) -> Settings:
    values: dict[str, Any] = {
        "llm_model": "test-model",
        "llm_base_url": fake.base_url,
        "llm_api_key": "x",
        "llm_timeout": 5.0,
        "llm_max_retries": 2,
    }
    values.update(overrides)
    return Settings(**values)


@pytest.fixture
def make_memory(
    tmp_path: Path, fake_openai: FakeOpenAIServer
) -> Iterator[Callable[..., GraphMemory]]:
    opened: list[GraphMemory] = []

    def make(**overrides: Any) -> GraphMemory:
        mem = GraphMemory(
            tmp_path / "m.db",
            embedder=HashEmbedder(32),
            settings=settings_for(fake_openai, **overrides),
            extractor="llm",
        )
        mem.connect()
        opened.append(mem)
        return mem

    yield make
    for mem in opened:
        mem.close()


@pytest.fixture
def mem(make_memory: Callable[..., GraphMemory]) -> GraphMemory:
    return make_memory()


def chat_calls(fake: FakeOpenAIServer) -> list[Any]:
    return fake.calls("chat/completions")


def links(mem: GraphMemory) -> list[dict[str, Any]]:
    return [r for r in mem.export() if r["type"] == "link"]


def places(mem: GraphMemory) -> list[tuple[str, bool]]:
    return [(f.target, f.is_current()) for f in mem.history("Alice", predicate="lives_in")]


def assert_failed_and_intact(mem: GraphMemory, episode_id: str, content: str) -> None:
    episode = mem.episode(episode_id)
    assert episode is not None, "the raw episode must never be lost"
    assert episode.status == "failed"
    assert episode.content == content
    assert episode.error
    assert mem.stats()["facts"] == 0, "a failed episode must write no facts"


def paris(mem: GraphMemory) -> str:
    result = mem.add_episode("Alice lives in Paris.", source="chat", reference_time=when(1))
    return result.episode_id


# ----------------------------------------------------------------------------- happy path


def test_one_call_per_episode_and_llm_supersession(
    mem: GraphMemory, fake_openai: FakeOpenAIServer, script: Script
) -> None:
    r1 = mem.add_episode("Alice lives in Paris.", source="chat", reference_time=when(1))
    r2 = mem.add_episode("Alice moved to Berlin.", source="chat", reference_time=when(6))

    calls = chat_calls(fake_openai)
    assert len(calls) == 2, "exactly one chat completion per episode"
    assert (r1.status, r2.status) == ("extracted", "extracted")
    assert places(mem) == [("Paris", False), ("Berlin", True)]
    old, new = mem.history("Alice", predicate="lives_in")
    assert old.valid_to == when(6)
    assert new.decided_by == "llm"
    (link,) = links(mem)
    assert (link["kind"], link["src"], link["dst"]) == ("SUPERSEDES", new.id, old.id)
    assert (link["decided_by"], link["reason"]) == ("llm", "moved to Berlin")
    assert r2.superseded == [(old.id, new.id)]

    # accounting: the fake's usage numbers, one call each
    for result, call in zip((r1, r2), calls, strict=True):
        assert result.llm_calls == 1
        assert result.prompt_tokens > 0 and result.completion_tokens > 0
        assert call.status == 200
    body = calls[1].body
    assert body["model"] == "test-model"
    fmt = body["response_format"]
    assert fmt["type"] == "json_schema" and fmt["json_schema"]["strict"] is True
    assert fmt["json_schema"]["schema"]["additionalProperties"] is False
    prompt = first_user(body)
    assert "Episode time: 2024-06-01T00:00:00Z" in prompt
    assert "Speaker: user" in prompt
    assert "- 2024-01-01T00:00:00Z: Alice lives in Paris." in prompt  # earlier episode
    assert "[F1] (lives_in) Alice lives in Paris." in prompt  # known fact, short alias
    assert "lives_in" in prompt.split("One-value predicates")[1].splitlines()[0]
    assert old.id not in prompt, "fact ids travel as short aliases"


def test_extractor_totals_and_first_person(
    mem: GraphMemory, fake_openai: FakeOpenAIServer, script: Script
) -> None:
    script.on("I like green tea", answer(fact("I", "likes", "green tea")))
    result = mem.add_episode(
        "I like green tea.", metadata={"speaker": "Bob"}, reference_time=when(2)
    )
    assert result.status == "extracted"
    (only,) = mem.facts()
    assert (only.subject, only.predicate, only.object) == ("Bob", "likes", "green tea")
    extractor = mem._extractor("llm", "message")
    assert isinstance(extractor, LLMExtractor)
    assert extractor.usage["llm_calls"] == 1
    assert extractor.usage["prompt_tokens"] == result.prompt_tokens


def test_bulk_ingest_runs_calls_concurrently(
    make_memory: Callable[..., GraphMemory], fake_openai: FakeOpenAIServer
) -> None:
    lock = threading.Lock()
    state = {"now": 0, "peak": 0}

    def slow(body: dict[str, Any]) -> Answer:
        with lock:
            state["now"] += 1
            state["peak"] = max(state["peak"], state["now"])
        time.sleep(0.3)
        with lock:
            state["now"] -= 1
        number = episode_of(body).split()[1]
        return answer(fact(f"robot {number}", "has_status", "ready"))

    fake_openai.default = slow
    mem = make_memory(llm_concurrency=4)
    results = mem.add_episodes(
        {"content": f"Robot {i} is ready.", "reference_time": when(3, i + 1)} for i in range(8)
    )
    assert [r.status for r in results] == ["extracted"] * 8
    assert len(chat_calls(fake_openai)) == 8
    assert state["peak"] >= 2, "calls of one chunk run in parallel"
    assert state["peak"] <= 4, "never more than llm_concurrency at once"
    assert len(mem.facts()) == 8


# ----------------------------------------------------------------------------- transport faults


def test_429_retry_after_is_honoured(
    mem: GraphMemory, fake_openai: FakeOpenAIServer, script: Script
) -> None:
    fake_openai.inject(rate_limit(retry_after=1))
    result = mem.add_episode("Alice lives in Paris.", reference_time=when(1))
    first, second = chat_calls(fake_openai)
    assert first.status == 429 and second.status == 200
    assert first.responded_at is not None
    gap = second.received_at - first.responded_at
    assert gap >= 0.95, f"retried after {gap:.3f}s, before Retry-After: 1"
    # Every request the server saw is counted; one of them was retried.
    assert result.status == "extracted" and result.llm_calls == 2 and result.llm_retries == 1
    assert places(mem) == [("Paris", True)]


@pytest.mark.parametrize("status", [500, 503])
def test_5xx_is_retried(
    mem: GraphMemory, fake_openai: FakeOpenAIServer, script: Script, status: int
) -> None:
    fake_openai.inject(server_error(status))
    result = mem.add_episode("Alice lives in Paris.", reference_time=when(1))
    assert [c.status for c in chat_calls(fake_openai)] == [status, 200]
    assert result.status == "extracted" and result.llm_calls == 2 and result.llm_retries == 1
    assert places(mem) == [("Paris", True)]


def test_read_timeout_is_retried(
    make_memory: Callable[..., GraphMemory], fake_openai: FakeOpenAIServer, script: Script
) -> None:
    mem = make_memory(llm_timeout=0.5)
    fake_openai.inject(timeout(3.0))
    result = mem.add_episode("Alice lives in Paris.", reference_time=when(1))
    assert len(chat_calls(fake_openai)) == 2
    assert result.status == "extracted"
    assert places(mem) == [("Paris", True)]


def test_connection_reset_is_retried(
    mem: GraphMemory, fake_openai: FakeOpenAIServer, script: Script
) -> None:
    fake_openai.inject(connection_reset)
    result = mem.add_episode("Alice lives in Paris.", reference_time=when(1))
    calls = chat_calls(fake_openai)
    assert len(calls) == 2 and calls[0].status is None and calls[1].status == 200
    assert result.status == "extracted"
    assert places(mem) == [("Paris", True)]


def test_persistent_5xx_fails_the_episode_and_reprocess_completes_it(
    make_memory: Callable[..., GraphMemory], fake_openai: FakeOpenAIServer, script: Script
) -> None:
    mem = make_memory(llm_max_retries=1)
    fake_openai.inject(server_error(503), times=2)
    result = mem.add_episode("Alice lives in Paris.", reference_time=when(1))
    assert result.status == "failed"
    assert "503" in (result.error or "") and "2 attempts" in (result.error or "")
    assert len(chat_calls(fake_openai)) == 2
    assert_failed_and_intact(mem, result.episode_id, "Alice lives in Paris.")

    (again,) = mem.reprocess()
    assert again.status == "extracted" and again.episode_id == result.episode_id
    assert places(mem) == [("Paris", True)]
    episode = mem.episode(result.episode_id)
    assert episode is not None and episode.status == "extracted" and episode.error is None


def test_other_4xx_is_not_retried(
    tmp_path: Path, fake_openai: FakeOpenAIServer, script: Script
) -> None:
    settings = settings_for(fake_openai, llm_base_url=fake_openai.base_url + "/wrong")
    with GraphMemory(
        tmp_path / "m.db", embedder=HashEmbedder(32), settings=settings, extractor="llm"
    ) as mem:
        result = mem.add_episode("Alice lives in Paris.", reference_time=when(1))
        assert result.status == "failed" and "404" in (result.error or "")
        assert len(fake_openai.requests) == 1, "a 404 is final: no retry"
        assert_failed_and_intact(mem, result.episode_id, "Alice lives in Paris.")


# ----------------------------------------------------------------------------- content faults


@pytest.mark.parametrize("fault", [malformed_json, schema_violation, truncated_json])
def test_bad_output_gets_one_repair_call(
    mem: GraphMemory, fake_openai: FakeOpenAIServer, script: Script, fault: Any
) -> None:
    fake_openai.inject(fault)
    result = mem.add_episode("Alice lives in Paris.", reference_time=when(1))
    first, second = chat_calls(fake_openai)
    assert first.fault == fault.kind and second.fault is None
    assert result.status == "extracted"
    assert result.llm_calls == 2, "the repair call is counted"
    assert result.llm_repairs == 1 and result.llm_retries == 0
    assert places(mem) == [("Paris", True)]
    repair = second.body["messages"]
    assert repair[-2]["role"] == "assistant"
    assert repair[-1]["role"] == "user" and "Answer again" in repair[-1]["content"]
    if fault is truncated_json:
        assert "cut off" in repair[-1]["content"]
        assert second.body["max_tokens"] == 2 * first.body["max_tokens"]
    if fault is schema_violation:
        assert "entities" in repair[-1]["content"]  # the validation errors are shown


def test_invalid_twice_fails_and_reprocess_completes(
    mem: GraphMemory, fake_openai: FakeOpenAIServer, script: Script
) -> None:
    fake_openai.inject(malformed_json, times=2)
    result = mem.add_episode("Alice lives in Paris.", reference_time=when(1))
    assert result.status == "failed"
    assert "after one repair call" in (result.error or "")
    assert len(chat_calls(fake_openai)) == 2
    assert (result.llm_calls, result.llm_repairs) == (2, 1), "a failed episode's calls count"
    assert result.prompt_tokens > 0
    assert_failed_and_intact(mem, result.episode_id, "Alice lives in Paris.")

    (again,) = mem.reprocess()
    assert again.status == "extracted" and again.llm_calls == 1
    assert places(mem) == [("Paris", True)]


def test_refusal_fails_the_episode_without_repair(
    mem: GraphMemory, fake_openai: FakeOpenAIServer, script: Script
) -> None:
    fake_openai.inject(refusal)
    result = mem.add_episode("Alice lives in Paris.", reference_time=when(1))
    assert result.status == "failed" and "refused" in (result.error or "")
    assert len(chat_calls(fake_openai)) == 1
    assert_failed_and_intact(mem, result.episode_id, "Alice lives in Paris.")
    (again,) = mem.reprocess()
    assert again.status == "extracted"
    assert places(mem) == [("Paris", True)]


def test_think_preamble_is_stripped(
    mem: GraphMemory, fake_openai: FakeOpenAIServer, script: Script
) -> None:
    fake_openai.inject(think_preamble)
    result = mem.add_episode("Alice lives in Paris.", reference_time=when(1))
    assert chat_calls(fake_openai)[0].fault == "think_preamble"
    assert result.status == "extracted" and result.llm_calls == 1
    assert places(mem) == [("Paris", True)]


def test_server_rejecting_json_schema_falls_back_to_json_object_once(
    mem: GraphMemory, fake_openai: FakeOpenAIServer, script: Script
) -> None:
    fake_openai.inject(reject_json_schema)
    r1 = mem.add_episode("Alice lives in Paris.", source="chat", reference_time=when(1))
    r2 = mem.add_episode("Alice moved to Berlin.", source="chat", reference_time=when(6))
    calls = chat_calls(fake_openai)
    assert [c.status for c in calls] == [400, 200, 200]
    assert [c.body["response_format"]["type"] for c in calls] == [
        "json_schema",
        "json_object",
        "json_object",  # remembered for the extractor
    ]
    # The rejected request counts (the server saw it); the mode switch sticks for r2.
    assert (r1.llm_calls, r1.llm_retries, r2.llm_calls) == (2, 1, 1)
    assert places(mem) == [("Paris", False), ("Berlin", True)]


# ----------------------------------------------------------------------------- claims vs rules


def test_unknown_fact_id_claim_is_overridden_by_the_rules(
    mem: GraphMemory, fake_openai: FakeOpenAIServer, script: Script
) -> None:
    script.rules.insert(
        0,
        (
            "moved to Berlin",
            answer(
                fact(
                    "Alice",
                    "lives_in",
                    "Berlin",
                    relation="supersedes",
                    fact_id="fact_000000000000000000000000",
                    reason="made up",
                )
            ),
        ),
    )
    paris(mem)
    mem.add_episode("Alice moved to Berlin.", source="chat", reference_time=when(6))
    assert places(mem) == [("Paris", False), ("Berlin", True)]
    (link,) = links(mem)
    assert (link["kind"], link["decided_by"], link["reason"]) == ("SUPERSEDES", "rule", "update")
    assert all(f.decided_by == "rule" for f in mem.history("Alice"))


def test_supersession_of_a_multi_valued_predicate_is_overridden(
    mem: GraphMemory, fake_openai: FakeOpenAIServer, script: Script
) -> None:
    script.on("likes tea", answer(fact("Alice", "likes", "tea")))
    script.on(
        "likes coffee",
        lambda body: answer(
            fact(
                "Alice",
                "likes",
                "coffee",
                relation="supersedes",
                fact_id=alias_for(body, "tea"),
                reason="new favourite",
            )
        ),
    )
    mem.add_episode("Alice likes tea.", reference_time=when(1))
    mem.add_episode("Alice likes coffee.", reference_time=when(2))
    prompt = first_user(chat_calls(fake_openai)[1].body)
    assert "(likes) Alice likes tea." in prompt, "the claim did point at a real fact"
    likes = mem.history("Alice", predicate="likes")
    assert sorted((f.target, f.is_current()) for f in likes) == [("coffee", True), ("tea", True)]
    assert links(mem) == [], "a multi-valued predicate accumulates; nothing is superseded"
    assert all(f.decided_by == "rule" for f in likes)


def test_same_as_claim_on_a_different_value_is_overridden(
    mem: GraphMemory, fake_openai: FakeOpenAIServer, script: Script
) -> None:
    script.on(
        "lives in Berlin now",
        lambda body: answer(
            fact(
                "Alice",
                "lives_in",
                "Berlin",
                relation="same_as",
                fact_id=alias_for(body, "Paris"),
                reason="already known",
            )
        ),
    )
    paris(mem)
    mem.add_episode("Alice lives in Berlin now.", source="chat", reference_time=when(6))
    assert places(mem) == [("Paris", False), ("Berlin", True)], "the move is not swallowed"
    (link,) = links(mem)
    assert link["decided_by"] == "rule"


def test_negation_claim_ends_the_fact(
    mem: GraphMemory, fake_openai: FakeOpenAIServer, script: Script
) -> None:
    script.on(
        "no longer lives in Berlin",
        lambda body: answer(
            fact(
                "Alice",
                "lives_in",
                "Berlin",
                kind="negate",
                relation="negates",
                fact_id=alias_for(body, "Berlin"),
                reason="moved out",
            )
        ),
    )
    paris(mem)
    mem.add_episode("Alice moved to Berlin.", source="chat", reference_time=when(6))
    mem.add_episode("Alice no longer lives in Berlin.", source="chat", reference_time=when(9))
    history = mem.history("Alice", predicate="lives_in")
    assert [(f.target, f.valid_to) for f in history] == [("Paris", when(6)), ("Berlin", when(9))]
    assert mem.facts(entity="Alice") == []


def test_future_time_without_a_stated_date_is_dropped(
    mem: GraphMemory, fake_openai: FakeOpenAIServer, script: Script
) -> None:
    script.on(
        "works at Acme",
        answer(fact("Alice", "works_at", "Acme", valid_from="2031-01-01")),
    )
    script.on(
        "starts at Initech in March 2025",
        answer(fact("Bob", "works_at", "Initech", valid_from="2025-03-01")),
    )
    mem.add_episode("Alice works at Acme.", reference_time=when(5))
    mem.add_episode("Bob starts at Initech in March 2025.", reference_time=when(5))
    (alice,) = mem.history("Alice", predicate="works_at")
    assert alice.valid_from == when(5), "an invented future date falls back to the episode time"
    (bob,) = mem.history("Bob", predicate="works_at")
    assert bob.valid_from == when(3, 1, 2025), "a stated future date is kept"


# ----------------------------------------------------------------------------- budget


def test_call_budget_stops_before_calling_and_reprocess_resumes(
    make_memory: Callable[..., GraphMemory], fake_openai: FakeOpenAIServer, script: Script
) -> None:
    script.on("likes tea", answer(fact("Alice", "likes", "tea")))
    mem = make_memory(llm_max_calls=2)
    results = mem.add_episodes(
        [
            {"content": "Alice lives in Paris.", "reference_time": when(1)},
            {"content": "Alice likes tea.", "reference_time": when(2)},
            {"content": "Alice moved to Berlin.", "reference_time": when(6)},
        ]
    )
    assert [r.status for r in results].count("extracted") == 2
    (stopped,) = [r for r in results if r.status == "failed"]
    assert "budget" in (stopped.error or "").lower()
    assert len(chat_calls(fake_openai)) == 2, "the refused call was never sent"
    episode = mem.episode(stopped.episode_id)
    assert episode is not None and episode.status == "failed"
    assert mem.reprocess()[0].status == "failed", "still over budget: no call"
    assert len(chat_calls(fake_openai)) == 2
    mem.close()

    more = make_memory(llm_max_calls=10)
    (done,) = more.reprocess()
    assert done.status == "extracted"
    assert more.stats()["episodes_failed"] == 0


def test_token_budget_refuses_a_call_that_would_pass_it(
    make_memory: Callable[..., GraphMemory], fake_openai: FakeOpenAIServer, script: Script
) -> None:
    mem = make_memory(llm_max_tokens=100)  # the prompt alone is ~450 tokens
    result = mem.add_episode("Alice lives in Paris.", reference_time=when(1))
    assert result.status == "failed" and "max_tokens=100" in (result.error or "")
    assert chat_calls(fake_openai) == []
    assert_failed_and_intact(mem, result.episode_id, "Alice lives in Paris.")


# ----------------------------------------------------------------------------- configuration


def test_from_settings_needs_a_model_and_a_key_for_openai(monkeypatch: Any) -> None:
    from graphmem._errors import ConfigError

    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(ConfigError, match="GRAPHMEM_LLM_MODEL"):
        LLMExtractor.from_settings(Settings())
    with pytest.raises(ConfigError, match="OPENAI_API_KEY"):
        LLMExtractor.from_settings(Settings(llm_model="gpt-4o-mini"))
    local = LLMExtractor.from_settings(
        Settings(llm_model="qwen2.5:7b", llm_base_url="http://localhost:11434/v1")
    )
    assert local.name == "llm" and local.needs_context is True
    assert local.client.max_retries == 0, "retries are ours (tenacity), not the SDK's"


def test_from_settings_shares_one_rate_limiter_per_endpoint(monkeypatch: Any) -> None:
    monkeypatch.setenv("GRAPHMEM_LLM_RPM", "120")
    settings = Settings(llm_model="m", llm_base_url="http://127.0.0.1:9/v1")
    a = LLMExtractor.from_settings(settings)
    b = LLMExtractor.from_settings(settings)
    assert a.rate_limiter is b.rate_limiter
    assert a.rate_limiter.requests_per_minute == 120
    assert a.budget is not b.budget


def test_answer_cap_and_temperature_come_from_settings_and_the_environment(
    monkeypatch: Any, fake_openai: FakeOpenAIServer, script: Script, tmp_path: Path
) -> None:
    monkeypatch.setenv("GRAPHMEM_LLM_MAX_COMPLETION_TOKENS", "640")
    monkeypatch.setenv("GRAPHMEM_LLM_TEMPERATURE", "0")
    settings = Settings.from_env(llm_model="m", llm_base_url=fake_openai.base_url)
    assert (settings.llm_max_completion_tokens, settings.llm_temperature) == (640, 0.0)
    extractor = LLMExtractor.from_settings(settings)
    assert (extractor.max_completion_tokens, extractor.temperature) == (640, 0.0)
    fake_openai.inject(truncated_json)  # cut off at the cap: one repair call
    with GraphMemory(
        tmp_path / "m.db", embedder=HashEmbedder(32), settings=settings, extractor="llm"
    ) as mem:
        result = mem.add_episode("Alice lives in Paris.", reference_time=when(1))
    assert result.status == "extracted" and result.llm_repairs == 1
    sent = [(c.body["max_tokens"], c.body["temperature"]) for c in chat_calls(fake_openai)]
    # The repair gets twice the cap and a non-zero temperature: at 0 it repeats the same loop.
    assert sent == [(640, 0.0), (1280, 0.7)]


def test_settings_reject_a_bad_answer_cap_or_temperature(monkeypatch: Any) -> None:
    from graphmem._errors import ConfigError

    monkeypatch.setenv("GRAPHMEM_LLM_TEMPERATURE", "hot")
    with pytest.raises(ConfigError, match="GRAPHMEM_LLM_TEMPERATURE='hot'"):
        Settings.from_env()
    monkeypatch.delenv("GRAPHMEM_LLM_TEMPERATURE")
    with pytest.raises(ConfigError, match="llm_max_completion_tokens"):
        Settings(llm_max_completion_tokens=0)
    with pytest.raises(ConfigError, match="llm_temperature"):
        Settings(llm_temperature=3)


def test_repair_temperature_never_lowers_the_extractors(
    fake_openai: FakeOpenAIServer, script: Script, tmp_path: Path
) -> None:
    def sent_temperatures(**options: Any) -> list[Any]:
        extractor = LLMExtractor(
            "m", base_url=fake_openai.base_url, max_retries=0, sleep=lambda _: None, **options
        )
        before = len(chat_calls(fake_openai))
        fake_openai.inject(malformed_json)
        store = tmp_path / f"m{before}.db"
        with GraphMemory(store, embedder=HashEmbedder(32), extractor=extractor) as mem:
            mem.add_episode("Alice lives in Paris.", reference_time=when(1))
        return [c.body.get("temperature") for c in chat_calls(fake_openai)[before:]]

    assert sent_temperatures() == [None, 0.7]
    assert sent_temperatures(temperature=1.0) == [1.0, 1.0]
    assert sent_temperatures(repair_temperature=None) == [None, None]


def test_a_slow_local_server_times_out_counted_and_reported(
    monkeypatch: Any, fake_openai: FakeOpenAIServer, script: Script, tmp_path: Path
) -> None:
    """A CPU-only server slower than ``llm_timeout`` (set here from the environment, as the
    local-model recipe does): the episode fails with the reason, and every request the server
    saw is counted on the episode and in ``stats()``."""
    monkeypatch.setenv("GRAPHMEM_LLM_TIMEOUT", "0.5")
    monkeypatch.setenv("GRAPHMEM_LLM_CONCURRENCY", "1")
    settings = Settings.from_env(
        llm_model="m", llm_base_url=fake_openai.base_url, llm_max_retries=1
    )
    assert (settings.llm_timeout, settings.llm_concurrency) == (0.5, 1)
    fake_openai.inject(timeout(3.0), times=2)
    with GraphMemory(
        tmp_path / "m.db", embedder=HashEmbedder(32), settings=settings, extractor="llm"
    ) as mem:
        result = mem.add_episode("Alice lives in Paris.", reference_time=when(1))
        assert result.status == "failed"
        assert "timed out (0.5s) after 2 attempts" in (result.error or "")
        assert (result.llm_calls, result.llm_retries, result.llm_failed_calls) == (2, 1, 1)
        assert result.llm_calls == len(chat_calls(fake_openai))
        usage = mem.stats()["llm_usage"]
        assert (usage["llm_calls"], usage["llm_failed_calls"]) == (2, 1)
        again = mem.reprocess()  # the server is fast again
        assert [r.status for r in again] == ["extracted"]
        assert places(mem) == [("Paris", True)]


class _Headers(dict[str, str]):
    pass


class _Response:
    def __init__(self, **headers: str) -> None:
        self.headers = _Headers(headers)


class _Error(Exception):
    def __init__(self, **headers: str) -> None:
        self.response = _Response(**headers)


def test_retry_after_parsing() -> None:
    assert retry_after_seconds(_Error(**{"retry-after": "2"})) == 2.0
    assert retry_after_seconds(_Error(**{"retry-after": "0.5"})) == 0.5
    assert retry_after_seconds(_Error(**{"retry-after-ms": "1500", "retry-after": "9"})) == 1.5
    date = "Wed, 21 Oct 2015 07:28:10 GMT"
    now = datetime(2015, 10, 21, 7, 28, 0, tzinfo=UTC).timestamp()
    assert retry_after_seconds(_Error(**{"retry-after": date}), now=now) == 10.0
    assert retry_after_seconds(_Error(**{"retry-after": "soon"})) is None
    assert retry_after_seconds(_Error()) is None
    assert retry_after_seconds(ValueError()) is None


def test_retry_after_is_capped_and_holds_the_shared_limiter(
    fake_openai: FakeOpenAIServer, script: Script
) -> None:
    slept: list[float] = []
    extractor = LLMExtractor(
        "test-model",
        base_url=fake_openai.base_url,
        api_key="x",
        retry_after_max=0.2,
        sleep=slept.append,
    )
    fake_openai.inject(rate_limit(retry_after=30))
    held: list[float] = []
    original = extractor.rate_limiter.hold
    extractor.rate_limiter.hold = lambda s: (held.append(s), original(s))[1]  # type: ignore[method-assign]
    from graphmem._models import EpisodeRecord
    from graphmem._predicates import PredicateRegistry
    from graphmem.extract import ExtractionContext

    episode = EpisodeRecord(
        id="ep_1",
        group_id="default",
        source=None,
        kind="message",
        content="Alice lives in Paris.",
        reference_time=when(1),
        ingested_at=when(1),
        content_hash="h",
        status="pending",
    )
    got = extractor.extract(episode, ExtractionContext("user", PredicateRegistry()))
    assert got.llm_calls == 2 and got.llm_retries == 1 and got.facts[0].object == "Paris"
    assert held == [0.2]
    assert len(slept) == 1 and 0.2 <= slept[0] <= 0.25
    assert json.loads(json.dumps(extractor.usage))["llm_calls"] == 1
