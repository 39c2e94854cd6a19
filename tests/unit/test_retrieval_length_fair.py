"""Length-fair episode scoring: a long reply competes through its best passage, and a question in
the first person hears the asker's own turns (on each store)."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from graphmem import GraphMemory
from graphmem.retrieve.passages import asks_about_self, best_passage_scores, passages
from graphmem.retrieve.retriever import RetrievalConfig
from tests.helpers.chat_memory import chat_memory, turn_order

T0 = datetime(2024, 3, 15, 9, 0, tzinfo=UTC)

# A long assistant reply that holds every word of the question many times, each word in its own
# part of the reply, and the short user turn that states the answer.
# The question's words are spread over the reply, a block each, with other words between the
# blocks: the whole reply holds them all, no one passage holds more than one of them.
LONG_REPLY = " ".join(
    [f"Plan the sprint board item {i} with care." for i in range(20)]
    + [f"Track the budget line {i} every week." for i in range(10)]
    + [f"Keep the first draft of note {i} short." for i in range(20)]
    + [f"Track the budget line {i} every week." for i in range(10, 20)]
    + [f"Tasks {i} should end with a review." for i in range(20)]
)
SHORT_USER = "My first sprint ends on March 29."
TURNS = [
    ("user", "Can you help me plan the budget tracker project?"),
    ("assistant", LONG_REPLY),
    ("user", SHORT_USER),
    ("assistant", "Sounds good, March 29 gives you two weeks for login and registration."),
]


def test_passages_are_half_overlapping_windows() -> None:
    text = "one two three four five six seven eight"
    assert passages(text, 4) == [
        "one two three four", "three four five six", "five six seven eight"
    ]
    assert passages("just a few words", 60) == ["just a few words"]
    assert passages("", 60) == [""]


def test_a_short_turn_outscores_a_long_one_through_its_best_passage() -> None:
    scores = best_passage_scores(
        "When does my first sprint end?", {"long": LONG_REPLY, "short": SHORT_USER}, 60
    )
    assert scores["short"] > scores["long"] > 0
    assert best_passage_scores("the of and", {"a": SHORT_USER}, 60) == {}


def test_first_person_questions() -> None:
    assert asks_about_self("When does my first sprint end?")
    assert asks_about_self("Have I worked with Flask routes?")
    assert not asks_about_self("When did Caroline go to the support group?")
    assert not asks_about_self("Is it in the Midwest?")


@pytest.fixture
def chat(store_kind: str, tmp_path: Path) -> Iterator[GraphMemory]:
    yield from chat_memory(store_kind, tmp_path, TURNS, T0)


_turns = turn_order


def test_the_users_statement_ranks_above_a_long_reply(chat: GraphMemory) -> None:
    query = "When does my first sprint end?"
    assert _turns(chat, query, RetrievalConfig())[0] == 2
    # Whole-episode scores and no first-person cue: the long reply, which holds every word.
    before = _turns(chat, query, RetrievalConfig(passage_weight=0.0, self_speakers=()))
    assert before.index(1) < before.index(2)


def test_each_part_alone_lifts_the_short_turn(chat: GraphMemory) -> None:
    query = "When does my first sprint end?"
    passages_only = _turns(chat, query, RetrievalConfig(self_speakers=()))
    speaker_only = _turns(chat, query, RetrievalConfig(passage_weight=0.0))
    assert passages_only.index(2) < passages_only.index(1)
    assert speaker_only.index(2) < speaker_only.index(1)
    # The first-person cue has its own weight; 0 is the same as no self speakers.
    assert _turns(
        chat, query, RetrievalConfig(passage_weight=0.0, self_speaker_weight=0.0)
    ) == _turns(chat, query, RetrievalConfig(passage_weight=0.0, self_speakers=()))


def test_a_third_person_question_gets_no_self_cue(chat: GraphMemory) -> None:
    # No "I"/"my": the user's turns are not the asker's own statements.
    with_cue = _turns(chat, "sprint review demo", RetrievalConfig(passage_weight=0.0))
    without = _turns(
        chat, "sprint review demo", RetrievalConfig(passage_weight=0.0, self_speakers=())
    )
    assert with_cue == without
