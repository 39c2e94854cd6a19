"""Offline replay of a real model's answers: what broke (or nearly broke) with a real model.

``tests/fixtures/llm_real/*.json`` hold the raw ``message.content`` that a real model
(Qwen2.5-Coder-1.5B-Instruct Q4_K_M, temperature 0, behind llama.cpp's server with graphmem's
strict JSON schema as a grammar) returned for each episode of ``bench/llm_real.py``, recorded by
``scripts/llm_server.py serve --record`` and cut with ``bench/llm_real.py --make-fixture``. Here
the test suite's fake OpenAI server (``tests/fakes/openai_server.py``) plays them back to the real
``LLMExtractor`` and ``openai`` client: no model, no network, a few hundred milliseconds.

Each fixture is replayed from its first episode in recorded order, so graphmem builds the same
prompts (the same known facts, so the same ``F1``… aliases the answers cite). The responder
finds the recorded answer by the episode text in the prompt and by the attempt (first call or
the repair call), so a change to the prompt's wording does not break the replay; a change that
makes graphmem send a different number of calls does, on purpose.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from graphmem import GraphMemory, HashEmbedder, Settings
from graphmem._time import parse_datetime
from tests.fakes.openai_server import FakeOpenAIServer, _Reply, reject_json_schema

pytest.importorskip("openai")
pytest.importorskip("tenacity")

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "llm_real"


def load(name: str) -> dict[str, Any]:
    return json.loads((FIXTURES / name).read_text(encoding="utf-8"))


def _episode_text(body: dict[str, Any]) -> str:
    user = next(m["content"] for m in body["messages"] if m["role"] == "user")
    return str(user).rpartition("\nEpisode:\n")[2]


class _ReplayServer(FakeOpenAIServer):
    """The fake server, with the recorded ``finish_reason`` and ``usage`` put back."""

    recorded: Any = None  # (episode text, attempt) -> the recorded call
    json_schema_reply: tuple[int, Any] | None = None  # a recorded refusal of json_schema

    def _chat(self, body: dict[str, Any], text: str, fault: Any) -> Any:
        fmt = body.get("response_format") or {}
        if self.json_schema_reply is not None and fmt.get("type") == "json_schema":
            status, payload = self.json_schema_reply
            return _Reply(status, payload)
        reply = super()._chat(body, text, fault)
        call = self.recorded(body) if self.recorded is not None else None
        if call is not None and reply.status == 200:
            for choice in reply.body["choices"]:
                choice["finish_reason"] = call.get("finish_reason") or "stop"
            if call.get("usage"):
                reply.body["usage"] = {
                    k: call["usage"][k]
                    for k in ("prompt_tokens", "completion_tokens", "total_tokens")
                }
        return reply


def _attempt(body: dict[str, Any]) -> int:
    return 0 if len(body["messages"]) <= 2 else 1


@dataclass
class Replay:
    """Plays a fixture's recorded answers back through the fake server."""

    server: _ReplayServer
    fixture: dict[str, Any]
    asked: list[tuple[str, int]] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.calls: dict[tuple[str, int], dict[str, Any]] = {}
        for episode in self.fixture["episodes"]:
            served = [c for c in episode["calls"] if c["status"] == 200]
            for attempt, call in enumerate(served):
                self.calls[(episode["content"], attempt)] = call
            if any(c["status"] == 400 for c in episode["calls"]):
                self.server.inject(reject_json_schema)  # the recorded server refused it
        self.server.default = self.respond
        self.server.recorded = self.lookup

    def lookup(self, body: dict[str, Any]) -> dict[str, Any] | None:
        return self.calls.get((_episode_text(body), _attempt(body)))

    def respond(self, body: dict[str, Any]) -> str:
        text, attempt = _episode_text(body), _attempt(body)
        self.asked.append((text, attempt))
        call = self.calls.get((text, attempt))
        if call is None:
            raise AssertionError(f"no recorded answer for attempt {attempt} of {text!r}")
        return str(call["content"])

    def ingest(self, mem: GraphMemory, last: int | None = None) -> list[Any]:
        results = []
        for episode in self.fixture["episodes"][: None if last is None else last + 1]:
            results.append(
                mem.add_episode(
                    episode["content"],
                    source=episode.get("source"),
                    kind=episode.get("kind") or "message",
                    metadata={"speaker": episode["speaker"]},
                    reference_time=parse_datetime(episode["reference_time"]),
                )
            )
        return results


@pytest.fixture
def replay_server() -> Iterator[_ReplayServer]:
    with _ReplayServer() as server:
        yield server


def memory(tmp_path: Path, server: FakeOpenAIServer, **extra: Any) -> GraphMemory:
    settings = Settings(
        llm_model="qwen1.5b",
        llm_base_url=server.base_url,
        llm_max_retries=0,
        llm_concurrency=1,
    )
    return GraphMemory(
        tmp_path / "m.db", embedder=HashEmbedder(64), settings=settings, extractor="llm", **extra
    )


# ----------------------------------------------------------------------------- SmolLM2: runaway
def test_runaway_answer_fails_the_episode_after_one_doubled_repair(
    replay_server: _ReplayServer, tmp_path: Path
) -> None:
    """A 135M model under the strict schema loops on one array until the token limit.

    Recorded: ``{"entities": [{"name": "Mario", "type": "person|place|…"}, …`` repeated, cut at
    200 tokens, and again at 400 in the repair call. graphmem must spend exactly two calls, give
    the repair twice the completion limit, mark the episode ``failed`` with the reason, keep
    its input for ``reprocess()``, and count every token the server reported.
    """
    from graphmem.extract.llm import LLMExtractor

    replay = Replay(replay_server, load("smollm2_runaway.json"))
    extractor = LLMExtractor(
        "smollm2",
        base_url=replay_server.base_url,
        max_retries=0,
        max_completion_tokens=200,
        sleep=lambda _: None,
    )
    with GraphMemory(tmp_path / "m.db", embedder=HashEmbedder(64), extractor=extractor) as mem:
        (result,) = replay.ingest(mem)
        assert result.status == "failed"
        assert result.llm_calls == 2
        assert "cut off" in (result.error or "")
        assert result.completion_tokens == 200 + 400
        assert result.prompt_tokens == 724 + 965
        sent = [r.body for r in replay_server.calls("chat/completions")]
        assert [b["max_tokens"] for b in sent] == [200, 400]
        assert mem.facts() == []
        episodes = [r for r in mem.export() if r.get("type") == "episode"]
        assert [e["status"] for e in episodes] == ["failed"]
        assert episodes[0]["content"] == "Hi! I live in Lisbon."
    assert replay.asked == [("Hi! I live in Lisbon.", 0), ("Hi! I live in Lisbon.", 1)]


# ----------------------------------------------------------------------------- Qwen 1.5B: Maya
MAYA = "qwen1.5b_examples_maya.json"


def test_real_answers_replay_one_call_each_with_the_recorded_usage(
    replay_server: _ReplayServer, tmp_path: Path
) -> None:
    fixture = load(MAYA)
    replay = Replay(replay_server, fixture)
    with memory(tmp_path, replay_server) as mem:
        results = replay.ingest(mem)
        assert [r.status for r in results] == ["extracted"] * len(results)
        assert [r.llm_calls for r in results] == [1] * len(results)
        for result, episode in zip(results, fixture["episodes"], strict=True):
            usage = episode["calls"][0]["usage"]
            assert result.prompt_tokens == usage["prompt_tokens"]
            assert result.completion_tokens == usage["completion_tokens"]
    assert [a for _, a in replay.asked] == [0] * len(fixture["episodes"])


def test_restated_known_facts_do_not_move_or_duplicate_them(
    replay_server: _ReplayServer, tmp_path: Path
) -> None:
    """The 1.5B model repeats the prompt's known facts in later episodes, as ``relation:
    "new"`` with ``fact_id: "F1"`` and ``valid_from`` = that episode's time (09:13:40 for a fact
    stated at 09:12:00). Memory must keep one fact each, with the first valid time, and follow
    Maya's moves (Lisbon -> Porto, Atlas Robotics -> Tidewater Labs, coffee -> tea)."""
    replay = Replay(replay_server, load(MAYA))
    with memory(tmp_path, replay_server) as mem:
        results = replay.ingest(mem)
        assert [r.facts_added for r in results[:4]] == [1, 0, 1, 1]
        history = [f for f in mem.facts(include_history=True) if f.subject == "Maya"]
        keys = [(f.predicate, f.object) for f in history]
        assert len(keys) == len(set(keys)), keys
        first = {(f.predicate, f.object): f for f in history}
        assert first["lives_at", "Lisbon"].valid_from == parse_datetime("2024-01-08T09:12:00Z")
        current = {(f.predicate, f.object) for f in mem.facts(entity="Maya")}
        assert current == {
            ("lives_at", "Porto"),
            ("prefers", "Tea"),
            ("works_at", "Tidewater Labs"),
        }
        lisbon = first["lives_at", "Lisbon"]
        assert lisbon.superseded_by == first["lives_at", "Porto"].id


def test_where_does_maya_live_finds_porto(replay_server: _ReplayServer, tmp_path: Path) -> None:
    """The 1.5B model copies the episode as the fact's statement ("Quick update: I moved to
    Porto last month."), which recall's word-coverage gate cannot match to "where does Maya
    live?"; graphmem builds the statement from subject, predicate and object instead."""
    replay = Replay(replay_server, load(MAYA))
    with memory(tmp_path, replay_server) as mem:
        replay.ingest(mem)
        assert any(f.object == "Porto" for f in mem.facts(entity="Maya"))  # it is stored
        facts = mem.recall("where does Maya live?", k=3).facts
        assert facts and "Porto" in facts[0].statement


def test_provenance_spans_come_from_their_episode(
    replay_server: _ReplayServer, tmp_path: Path
) -> None:
    """Recorded: for "Nice to meet you, Maya. What can I help you with today?" (the assistant)
    the model answers Maya lives_at Lisbon with evidence "Hi! I live in Lisbon."; for "I'm
    planning my mornings. I prefer coffee." it adds lives_at Lisbon and works_at Atlas Robotics
    with their first episodes' words. As provenance links from the later episode they would
    point recall at turns that never said it: such facts are left out, with a warning."""
    replay = Replay(replay_server, load(MAYA))
    with memory(tmp_path, replay_server) as mem:
        replay.ingest(mem)
        rows = list(mem.export())
        content = {r["id"]: r["content"] for r in rows if r.get("type") == "episode"}
        wrong = [
            (content[p["episode_id"]], p["span"])
            for p in rows
            if p.get("type") == "provenance"
            and p.get("span")
            and p["span"].lower() not in content[p["episode_id"]].lower()
        ]
        assert wrong == []
        links = {
            (p["fact_id"], content[p["episode_id"]]) for p in rows if p.get("type") == "provenance"
        }
        lisbon = [f.id for f in mem.facts(include_history=True) if f.object == "Lisbon"]
        assert [e for f, e in links if f in lisbon] == ["Hi! I live in Lisbon."]


# ----------------------------------------------------------------------------- llama-cpp-python
LLAMA_CPP_PYTHON = "llama_cpp_python_server.json"


def test_llama_cpp_python_500_for_json_schema_falls_back_to_json_object(
    replay_server: _ReplayServer, tmp_path: Path
) -> None:
    recorded = load(LLAMA_CPP_PYTHON)["json_schema_response"]
    assert recorded["status"] == 500
    replay_server.json_schema_reply = (recorded["status"], recorded["body"])
    replay_server.script(
        "",
        {
            "entities": [{"name": "Maya", "type": "person"}, {"name": "Lisbon", "type": "place"}],
            "facts": [
                {
                    "subject": "Maya",
                    "predicate": "lives_in",
                    "object": "Lisbon",
                    "statement": "Maya lives in Lisbon.",
                    "evidence": "I live in Lisbon.",
                }
            ],
        },
    )
    with memory(tmp_path, replay_server) as mem:
        result = mem.add_episode(
            "I live in Lisbon.",
            metadata={"speaker": "Maya"},
            reference_time=parse_datetime("2024-01-08T09:12:00Z"),
        )
        formats = [
            (r.body.get("response_format") or {}).get("type")
            for r in replay_server.calls("chat/completions")
        ]
        assert result.status == "extracted", result.error
        assert formats == ["json_schema", "json_object"]


def _patterns(node: Any) -> list[str]:
    if isinstance(node, dict):
        found = [node["pattern"]] if isinstance(node.get("pattern"), str) else []
        return found + [p for v in node.values() for p in _patterns(v)]
    if isinstance(node, list):
        return [p for v in node for p in _patterns(v)]
    return []


def _arrays(node: Any) -> list[dict[str, Any]]:
    if isinstance(node, dict):
        found = [node] if node.get("type") == "array" else []
        return found + [a for v in node.values() for a in _arrays(v)]
    if isinstance(node, list):
        return [a for v in node for a in _arrays(v)]
    return []


def test_every_array_of_the_schema_is_capped_and_the_validator_keeps_to_the_cap() -> None:
    """Recorded runaways repeat entities until the token cap (45 in 640 tokens for the 1.5B
    model, one 'Mario' after another for SmolLM2). Under a grammar, ``maxItems`` ends the array;
    a server without a grammar may still send more, and the validator keeps the first ones."""
    from graphmem.extract.llm.answer import (
        MAX_ENTITIES,
        MAX_FACTS,
        answer_json_schema,
        parse_answer,
    )

    schema = answer_json_schema()
    assert {a["maxItems"] for a in _arrays(schema)} == {MAX_ENTITIES, MAX_FACTS}
    assert len(_arrays(schema)) == 2
    (looping,) = load("qwen1.5b_runaway.json")["episodes"]
    repeated = looping["calls"][0]["content"].count('"name"')
    assert repeated > MAX_ENTITIES  # what the cap would have cut short
    fact = {"subject": "Maya", "predicate": "lives_at", "object": "Porto"}
    answer = parse_answer(
        json.dumps(
            {
                "entities": [{"name": "Maya", "type": "person"}] * (MAX_ENTITIES + 5),
                "facts": [fact] * (MAX_FACTS + 1),
            }
        )
    )
    assert (len(answer.entities), len(answer.facts)) == (MAX_ENTITIES, MAX_FACTS)
    assert [w.split(":")[0] for w in answer.warnings] == ["entities", "facts"]


def test_answer_schema_patterns_have_no_backslash_escapes() -> None:
    """Servers turn the JSON schema into a grammar with their own regex translators; a pattern
    without backslash escapes (``[.]`` for a dot, ``[0-9]`` for a digit) is safe in all of
    them. Recorded grammar error: see ``tests/fixtures/llm_real/llama_cpp_python_server.json``."""
    from graphmem.extract.llm.answer import answer_json_schema

    assert load(LLAMA_CPP_PYTHON)["grammar_error"].startswith("parse: error parsing grammar")
    escaped = [p for p in _patterns(answer_json_schema()) if "\\" in p]
    assert escaped == []


# ----------------------------------------------------------------------------- Qwen 1.5B: a loop
def test_looping_answer_fails_after_the_repair_and_keeps_the_input(
    replay_server: _ReplayServer, tmp_path: Path
) -> None:
    """Recorded: the 1.5B model, shown Maya's known facts, lists the same seven entities until
    the 640-token cap, and again (temperature 0) in the repair call. The episode must end
    ``failed`` with the reason after exactly two calls, spend 640 + 1,280 completion tokens, and
    leave nothing half-written; ``reprocess()`` finds it again."""
    from graphmem.extract.llm import LLMExtractor

    fixture = load("qwen1.5b_runaway.json")
    (episode,) = fixture["episodes"]
    assert [c["finish_reason"] for c in episode["calls"]] == ["length", "length"]
    replay = Replay(replay_server, fixture)
    extractor = LLMExtractor(
        "qwen1.5b",
        base_url=replay_server.base_url,
        max_retries=0,
        max_completion_tokens=640,
        sleep=lambda _: None,
    )
    with GraphMemory(tmp_path / "m.db", embedder=HashEmbedder(64), extractor=extractor) as mem:
        (result,) = replay.ingest(mem)
        assert result.status == "failed"
        assert result.llm_calls == 2
        assert "cut off" in (result.error or "")
        assert result.completion_tokens == 640 + 1280
        sent = [r.body for r in replay_server.calls("chat/completions")]
        assert [b["max_tokens"] for b in sent] == [640, 1280]
        # Recorded at temperature 0 both times, the same loop; the repair is now sampled.
        assert [b.get("temperature") for b in sent] == [None, 0.7]
        schema = sent[0]["response_format"]["json_schema"]["schema"]
        assert _arrays(schema) and all("maxItems" in a for a in _arrays(schema))
        assert mem.facts() == [] and mem.stats()["entities"] == 0
        again = mem.reprocess()
        assert [r.status for r in again] == ["failed"]  # the same loop, replayed
    assert [a for _, a in replay.asked] == [0, 1, 0, 1]
