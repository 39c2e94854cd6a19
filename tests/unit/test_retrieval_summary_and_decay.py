"""Two context rules of episode ranking (on each store): a request for a summary gets no
first-person cue, and in a chat with an assistant a turn two places from a hit takes half the
lift an adjacent turn takes (between people, all of it)."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from graphmem import GraphMemory, HashEmbedder, InputError
from graphmem.retrieve.passages import asks_for_a_summary
from graphmem.retrieve.reads import time_view
from graphmem.retrieve.retriever import RetrievalConfig, Retriever
from tests.helpers.chat_memory import chat_memory, turn_order
from tests.unit.test_retrieval_length_fair import TURNS

T0 = datetime(2024, 3, 15, 9, 0, tzinfo=UTC)


def test_summary_requests() -> None:
    for query in (
        "Can you give me a comprehensive summary of how my budget tracker has progressed?",
        "Summarize what I decided about the launch.",
        "Could you summarise my plans?",
        "Give me an overview of my sprint work.",
        "A quick recap of our talks about my resume, please.",
    ):
        assert asks_for_a_summary(query), query
    for query in (
        "When does my first sprint end?",
        "What did I say about my summer plans?",
        "How did you recommend I review my sprint?",
    ):
        assert not asks_for_a_summary(query), query


@pytest.fixture
def chat(store_kind: str, tmp_path: Path) -> Iterator[GraphMemory]:
    yield from chat_memory(store_kind, tmp_path, TURNS, T0)


def test_a_summary_request_gets_no_first_person_cue(chat: GraphMemory) -> None:
    # The long reply (1) holds every word of the request; the user's short turn (2) some.
    query = "Summarize my first sprint budget plan."
    summary = turn_order(chat, query, RetrievalConfig())
    assert summary == turn_order(chat, query, RetrievalConfig(self_speaker_weight=0.0))
    assert summary.index(1) < summary.index(2)
    # With the cue asked for, the user's own turn comes first, as for any first-person
    # question.
    cued = turn_order(chat, query, RetrievalConfig(self_cue_on_summaries=True))
    assert cued.index(2) < cued.index(1)


def _lifted(speakers: tuple[str, str], store_kind: str, tmp_path: Path) -> dict[int, float]:
    """The episode scores around one hit (place 3) in a chat of seven turns whose other turns
    hold no word of the query, the speakers alternating."""
    texts = [
        "hello there", "good morning", "tell me more", "The zebra migration crosses the river.",
        "thanks a lot", "anything else", "bye for now",
    ]
    turns = [(speakers[i % 2], text) for i, text in enumerate(texts)]
    tmp_path.mkdir(parents=True, exist_ok=True)
    out: dict[int, float] = {}
    for mem in chat_memory(store_kind, tmp_path, turns, T0):
        place = {row["id"]: int(row["metadata"]["turn"])
                 for row in mem.export(group_id="c") if row.get("type") == "episode"}
        retriever = Retriever(mem.store, HashEmbedder(64), RetrievalConfig())
        raw = retriever.raw_search(
            "zebra migration", group_id="c", view=time_view(None, None), k=10, hops=2,
            filters=None,
        )
        out = {place[eid]: score for eid, score in raw.episode_scores.items() if eid in place}
    return out


def test_in_a_chat_with_an_assistant_two_places_away_takes_half(
    store_kind: str, tmp_path: Path
) -> None:
    chat = _lifted(("user", "assistant"), store_kind, tmp_path / "chat")
    assert chat[2] == pytest.approx(chat[4])
    assert chat[1] == pytest.approx(0.5 * chat[2])
    assert chat[5] == pytest.approx(0.5 * chat[4])
    # Between people, a speaker's turn two places on continues the same story: the full share.
    people = _lifted(("Ann", "Bob"), store_kind, tmp_path / "people")
    assert people[1] == pytest.approx(people[2])
    assert people[5] == pytest.approx(people[4])
    assert people[3] == pytest.approx(chat[3])


@pytest.mark.parametrize("field", ["context_decay", "chat_context_decay"])
@pytest.mark.parametrize("value", [-0.5, 1.5, float("nan"), True])
def test_a_context_decay_out_of_range_is_an_input_error(
    tmp_path: Path, field: str, value: float
) -> None:
    config = RetrievalConfig(**{field: value})  # type: ignore[arg-type]
    with GraphMemory(tmp_path / "m.db", embedder=HashEmbedder(64), retrieval=config) as mem:
        mem.add_episode("The zebra migration crosses the river.", group_id="c")
        with pytest.raises(InputError, match=field):
            mem.recall("zebra", group_id="c")
