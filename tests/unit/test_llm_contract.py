"""The schema is the contract, and every call is counted (issue 13).

A schema-driven server (what constrained decoding on vLLM, llama.cpp or OpenAI strict mode
gives) answers with whatever the JSON schema allows: here each string field holds a word of the
prompt, so dates are not dates and predicates are not predicates. Every such answer must still
extract (the fields the validator cannot use are dropped with warnings), and the calls the
episodes report must equal the requests the server saw, 429s included.
"""

from __future__ import annotations

import itertools
import re
from pathlib import Path
from typing import Any

import pytest

from graphmem import GraphMemory, HashEmbedder
from graphmem._config import Settings
from graphmem.extract.llm.answer import ISO_DATE, answer_json_schema
from tests.fakes.openai_server import FakeOpenAIServer, rate_limit

pytest_plugins = ["tests.fakes.pytest_plugin"]

EPISODES = [
    "Rui lives in Porto and works at Farfetch.",
    "Ana moved to Lisbon last month.",
    "My manager is Marta since 2023.",
    "Tom started at Atlas Robotics in March.",
    "I prefer tea in the morning.",
] * 4  # 20 episodes


class SchemaFiller:
    """Answers every request with an instance of the requested JSON schema whose strings are
    words of the prompt (patterns ignored: the worst a schema-only contract allows), enums their
    first value, numbers 1, arrays two items."""

    def __init__(self) -> None:
        self.words = itertools.cycle(["Rui"])

    def __call__(self, body: dict[str, Any]) -> Any:
        fmt = body.get("response_format") or {}
        schema = (fmt.get("json_schema") or {}).get("schema") or answer_json_schema()
        text = " ".join(str(m.get("content", "")) for m in body["messages"][-1:])
        self.words = itertools.cycle(re.findall(r"[A-Za-z]{3,}", text) or ["word"])
        return self.instance(schema, schema)

    def instance(self, node: dict[str, Any], root: dict[str, Any]) -> Any:
        if "$ref" in node:
            name = node["$ref"].rsplit("/", 1)[-1]
            return self.instance(root["$defs"][name], root)
        if "anyOf" in node:
            branch = next(b for b in node["anyOf"] if b.get("type") != "null")
            return self.instance(branch, root)
        if "enum" in node:
            return node["enum"][0]
        kind = node.get("type")
        if kind == "object":
            return {k: self.instance(v, root) for k, v in node.get("properties", {}).items()}
        if kind == "array":
            return [self.instance(node["items"], root) for _ in range(2)]
        if kind in ("integer", "number"):
            return 1
        if kind == "boolean":
            return True
        return next(self.words)


@pytest.fixture
def memory(tmp_path: Path, fake_openai: FakeOpenAIServer) -> GraphMemory:
    fake_openai.default = SchemaFiller()
    settings = Settings(
        llm_model="schema-filler",
        llm_base_url=fake_openai.base_url,
        llm_api_key="x",
        llm_timeout=5.0,
        llm_max_retries=2,
    )
    mem = GraphMemory(
        tmp_path / "m.db", embedder=HashEmbedder(32), settings=settings, extractor="llm"
    )
    mem.connect()
    return mem


def test_schema_filled_answers_extract_and_every_call_is_counted(
    memory: GraphMemory, fake_openai: FakeOpenAIServer
) -> None:
    results = []
    for index, text in enumerate(EPISODES):
        # Every 7th request the server answers 429 with Retry-After: 0.
        if (len(fake_openai.calls("chat/completions")) + 1) % 7 == 0:
            fake_openai.inject(rate_limit(retry_after=0))
        results.append(memory.add_episode(text, source=f"s{index}"))
    memory.close()
    failed = [r for r in results if r.status != "extracted"]
    assert failed == [], failed[0].error if failed else ""
    requests = fake_openai.calls("chat/completions")
    assert sum(r.llm_calls for r in results) == len(requests)
    assert sum(r.llm_retries for r in results) == sum(1 for q in requests if q.status == 429)
    assert sum(r.llm_calls for r in results) / len(results) <= 1.2
    assert sum(r.prompt_tokens for r in results) > 0
    # The fields the answer could not use are reported, not silently lost.
    assert all(any("valid_from" in w for w in r.warnings) for r in results)


def test_the_schema_carries_the_validators_constraints() -> None:
    schema = answer_json_schema()
    fact = schema["$defs"]["AnswerFact"]["properties"]
    for name in ("valid_from", "valid_to"):
        (string,) = [b for b in fact[name]["anyOf"] if b.get("type") == "string"]
        assert string["pattern"] == ISO_DATE
    assert fact["kind"]["enum"] == ["assert", "negate", "correct"]
    assert fact["subject"]["minLength"] == 1 and fact["subject"]["maxLength"] == 300
    assert fact["predicate"]["pattern"] == "^[a-z][a-z0-9_]*$"
    entity = schema["$defs"]["AnswerEntity"]["properties"]
    assert entity["name"]["maxLength"] == 300


def test_warnings_are_recorded_on_the_episode(
    memory: GraphMemory, fake_openai: FakeOpenAIServer
) -> None:
    result = memory.add_episode("Rui lives in Porto.")
    assert result.status == "extracted" and result.warnings
    stored = memory.episode(result.episode_id)
    assert stored is not None and stored.status == "extracted"
    assert stored.error is not None
    assert "warning(s)" in stored.error and "valid_from" in stored.error


def test_a_failed_episode_reports_the_calls_it_spent(
    memory: GraphMemory, fake_openai: FakeOpenAIServer
) -> None:
    fake_openai.inject(rate_limit(retry_after=0), times=3)  # 1 try + 2 retries, all 429
    result = memory.add_episode("Rui lives in Porto.")
    assert result.status == "failed"
    assert (result.llm_calls, result.llm_retries, result.llm_failed_calls) == (3, 2, 1)
    assert result.llm_calls == len(fake_openai.calls("chat/completions"))


def test_stats_and_the_cli_summary_count_every_call(
    memory: GraphMemory, fake_openai: FakeOpenAIServer
) -> None:
    fake_openai.inject(rate_limit(retry_after=0), times=3)  # this episode fails
    memory.add_episode("Rui lives in Porto.")
    memory.add_episode("Ana lives in Lisbon.")
    usage = memory.stats()["llm_usage"]
    assert usage["llm_calls"] == len(fake_openai.calls("chat/completions")) == 4
    assert (usage["llm_retries"], usage["llm_failed_calls"]) == (2, 1)
