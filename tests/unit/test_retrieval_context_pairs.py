"""Context in episode ranking: a turn ranked by its neighbour's match brings that neighbour in
right after it (on each store), and the lift and pairing rules on their own."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from graphmem import GraphMemory
from graphmem.retrieve.context import PAIR_GAP, neighbour_lift, pair_with_sources
from graphmem.retrieve.retriever import RetrievalConfig
from tests.helpers.chat_memory import chat_memory, turn_order

T0 = datetime(2024, 3, 15, 9, 0, tzinfo=UTC)

# The assistant's reply (turn 1) holds the question's words; the user's turns beside it hold one
# each. Under the first-person cue both user turns outrank the reply they take their context from.
REPLY = (
    "For the greenhouse heater schedule, run the heater from dusk to dawn while the tomato "
    "seedlings are small, keep the greenhouse above ten degrees, and check the heater "
    "schedule each week as the seedlings grow."
)
TURNS = [
    ("user", "I am planning the tomato bed this week."),
    ("assistant", REPLY),
    ("user", "Thanks! The seedlings are in pots now."),
    ("assistant", "Great, pots are easy to move around."),
    ("user", "I also bought a watering can."),
    ("assistant", "A watering can with a fine rose suits small plants."),
]
QUERY = "How did my greenhouse heater schedule for the tomato seedlings work?"


@pytest.fixture
def chat(store_kind: str, tmp_path: Path) -> Iterator[GraphMemory]:
    yield from chat_memory(store_kind, tmp_path, TURNS, T0)


_turns = turn_order


def test_the_reply_that_matched_follows_the_turn_it_lifted(chat: GraphMemory) -> None:
    paired = _turns(chat, QUERY, RetrievalConfig(context_pairs=True))
    assert paired[:2] in ([0, 1], [2, 1])
    # Without pairing both user turns come first and the reply that matched comes third.
    unpaired = _turns(chat, QUERY, RetrievalConfig(context_pairs=False))
    assert set(unpaired[:2]) == {0, 2}
    assert unpaired[2] == 1


def test_no_pairing_without_context(chat: GraphMemory) -> None:
    # Without neighbours nothing is lifted, so nothing is paired: the reply leads on its words.
    config = RetrievalConfig(use_context=False, context_pairs=True)
    assert _turns(chat, QUERY, config)[0] == 1
    assert _turns(chat, QUERY, config) == _turns(
        chat, QUERY, RetrievalConfig(use_context=False, context_pairs=False)
    )


def test_neighbour_lift_takes_the_best_neighbour_and_remembers_it() -> None:
    base = {"a": 1.0, "b": 0.5}
    neighbours = {"a": [("x", 1), ("y", 2)], "b": [("x", 2), ("z", 1)]}
    lift, source = neighbour_lift(base, neighbours, 0.6, 0.5)
    assert lift == pytest.approx({"x": 0.6, "y": 0.3, "z": 0.3})
    assert source == {"x": "a", "y": "a", "z": "b"}


def test_a_source_moves_up_to_just_below_the_turn_it_lifted() -> None:
    base = {"reply": 1.0, "user": 0.2}
    lift = {"user": 0.6}
    scores = {"reply": 1.0, "user": 1.2, "other": 1.1}
    paired = pair_with_sources(scores, base, lift, {"user": "reply"})
    assert paired["reply"] == pytest.approx(PAIR_GAP * 1.2)
    assert sorted(paired, key=lambda e: -paired[e]) == ["user", "reply", "other"]


def test_a_turn_ranked_by_its_own_words_pulls_nothing() -> None:
    base = {"reply": 1.0, "user": 0.7}
    scores = {"reply": 1.0, "user": 1.5}
    assert pair_with_sources(scores, base, {"user": 0.6}, {"user": "reply"}) == scores


@given(
    st.dictionaries(
        st.sampled_from("abcdef"), st.floats(0.0, 3.0, allow_nan=False), min_size=1
    ),
    st.dictionaries(st.sampled_from("abcdef"), st.sampled_from("abcdef")),
    st.dictionaries(st.sampled_from("abcdef"), st.floats(0.0, 2.0, allow_nan=False)),
)
def test_pairing_never_lowers_a_score_nor_lifts_a_source_above_its_turn(
    scores: dict[str, float], source: dict[str, str], lift: dict[str, float]
) -> None:
    base = {e: s / 2 for e, s in scores.items()}
    paired = pair_with_sources(scores, base, lift, source)
    assert paired.keys() == scores.keys()
    for eid, score in scores.items():
        assert paired[eid] >= score
        if paired[eid] > score:  # raised: only to just below a turn it lifted
            assert any(
                hit == eid and paired[eid] == pytest.approx(PAIR_GAP * scores[other])
                for other, hit in source.items()
                if other in scores
            )
