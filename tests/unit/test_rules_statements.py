"""The rules extractor's first-person statements of plans, decisions, amounts, dates, versions
and switches, and the supersession they feed (budget, deadline, scheduled_for are functional).

Kept apart from ``test_rules_extractor.py`` on purpose: the golden fixture harvests that file's
sentences, and these would shift its inputs.
"""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from graphmem import GraphMemory
from graphmem._models import EpisodeRecord, ExtractedFact
from graphmem._predicates import PredicateRegistry
from graphmem.extract._base import ExtractionContext
from graphmem.extract.rules import RulesExtractor

REF = datetime(2024, 6, 15, 12, 0, tzinfo=UTC)


def facts(text: str, speaker: str = "Maya") -> list[ExtractedFact]:
    episode = EpisodeRecord(
        id="e", group_id="g", source="s", kind="message", content=text, reference_time=REF,
        ingested_at=REF, content_hash="0" * 64, status="pending",
    )
    context = ExtractionContext(speaker=speaker, predicates=PredicateRegistry())
    return RulesExtractor().extract(episode, context).facts


def triples(text: str, speaker: str = "Maya") -> list[tuple[str, str, object, str]]:
    return [(f.subject, f.predicate, f.object if f.object is not None else f.value, f.kind)
            for f in facts(text, speaker)]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("I set the budget to $5,000.", ("Maya", "budget", "$5,000", "assert")),
        ("Our budget is around $1,500.", ("Maya", "budget", "$1,500", "assert")),
        ("I've got a deadline of May 15, 2024, to finalize my will.",
         ("Maya", "deadline", "May 15, 2024", "assert")),
        ("Our deadline is next Friday.", ("Maya", "deadline", "next Friday", "assert")),
        ("The report is due on June 1.", ("report", "deadline", "June 1", "assert")),
        ("The launch moved to March 3.", ("launch", "scheduled_for", "March 3", "assert")),
        ("We pushed the launch to March 10.", ("launch", "scheduled_for", "March 10", "assert")),
        ("The demo is scheduled for April 8 at 3 pm.",
         ("demo", "scheduled_for", "April 8 at 3 pm", "assert")),
        ("I had to reschedule my writing session from April 6 to April 8.",
         ("Maya's writing session", "scheduled_for", "April 8", "assert")),
        ("My grocery budget went up to $400.", ("Maya", "grocery_budget", "$400", "assert")),
        ("The budget for the wedding is $20,000.", ("wedding", "budget", "$20,000", "assert")),
        ("I've reduced my work hours from 50 to 42 weekly.",
         ("Maya", "work_hours", "42", "assert")),
        ("I paid $153 for the Ultraboost.", ("Ultraboost", "price", "$153", "assert")),
        ("I earn about $85,000 a year.", ("Maya", "salary", "$85,000 a year", "assert")),
        ("We're on version 3.2 now.", ("version", "uses_version", "3.2", "assert")),
        ("I upgraded to v4.", ("Maya", "uses_version", "4", "assert")),
        ("I'm planning to visit Japan next year.",
         ("Maya", "plans_to", "visit Japan next year", "assert")),
        ("My goal is to run a marathon.", ("Maya", "plans_to", "run a marathon", "assert")),
        ("I decided to apply for the senior producer role.",
         ("Maya", "decided_to", "apply for the senior producer role", "assert")),
        ("I went with the $85,000 offer.", ("Maya", "chose", "$85,000 offer", "assert")),
        ("I've decided to go with vanilla JS for simplicity.",
         ("Maya", "chose", "vanilla JS", "assert")),
        ("We switched to Postgres.", ("Maya", "uses", "Postgres", "assert")),
        ("I've completed 40% of my pilot script.",
         ("Maya's pilot script", "progress", "40%", "assert")),
        ("I scored 85% on the geometry quiz.", ("Maya", "geometry_quiz_score", "85%", "assert")),
        ("I'm curious how my quiz score improved from 65% to 82%.",
         ("Maya", "quiz_score", "82%", "assert")),
        ("I'm currently working on the Q3 marketing report.",
         ("Maya", "works_on", "Q3 marketing report", "assert")),
        ("I have a meeting with Laura on Friday at 3 pm.",
         ("Maya's meeting", "scheduled_for", "Friday at 3 pm", "assert")),
        ("I'm planning a movie marathon for April 6-7, 2024.",
         ("Maya's movie marathon", "scheduled_for", "April 6-7, 2024", "assert")),
        ("I'm trying to finalize my will.", ("Maya", "trying_to", "finalize my will", "assert")),
        ("I've allocated $1,500 for relocation expenses.",
         ("relocation expenses", "budget", "$1,500", "assert")),
    ],
)
def test_a_first_person_statement_gives_its_fact(
    text: str, expected: tuple[str, str, object, str]
) -> None:
    assert triples(text) == [expected]


def test_a_switch_ends_the_old_tool_and_keeps_its_time() -> None:
    found = facts("We switched from MySQL to Postgres last month.")
    assert [(f.object, f.kind) for f in found] == [("Postgres", "assert"), ("MySQL", "negate")]
    assert all(f.valid_from is not None and f.valid_from < REF for f in found)


def test_a_future_date_is_the_value_not_a_reason_to_drop_the_statement() -> None:
    # "next week" would drop an ordinary clause; here it is the new date.
    (fact,) = facts("The launch was pushed to next week.")
    assert (fact.subject, fact.predicate, fact.value) == ("launch", "scheduled_for", "next week")
    assert fact.valid_from is None  # valid from the episode's time, not the launch's


@pytest.mark.parametrize(
    "text",
    [
        "I want to set the budget to $5,000.",  # an intention
        "I'll move the launch to March 3.",  # a modal
        "If I set the budget to $5,000, will it be enough?",  # a hypothetical
        "Should I move the launch to March 3?",  # a question
        "The best time to visit is March.",  # no event noun
        "My budget is tight.",  # no amount
        "The meeting is important.",  # no date
        "I decided to postpone it.",  # a pronoun object names nothing
        "I'm planning to ask you about it.",  # about the assistant
        "I paid for the tickets.",  # no amount
        "We switched to a new approach.",  # no name
        "I earn $1 in rewards for every $10 spent.",  # no salary
        "I redeemed points for a $5 Target gift card.",  # a shop, not a target
        "I also picked up a few tops.",  # picked up is no choice
        "I'm working on a project.",  # too vague
        "I'm trying to understand conditional probability.",  # frames a question
        "I had to reschedule my meeting on May 3.",  # May 3 is the old date
    ],
)
def test_no_fact_without_the_shape_a_statement_needs(text: str) -> None:
    assert triples(text) == []


def test_an_assistant_turn_gives_no_first_person_facts() -> None:
    reply = "Here is an example: 'Hi, my name is Crystal and I set the budget to $5,000.'"
    assert triples(reply, speaker="assistant") == []
    assert triples("I love the friendly trash talk!", speaker="assistant") == []


def test_like_as_a_preposition_and_imperatives_give_no_likes() -> None:
    assert triples("I'm studying probability, like drawing two aces in a row.") == []
    assert triples("Tools like Trello can help. Consider using Asana.") == []
    assert triples("Sounds like a plan!") == []
    assert triples("I'll stay calm and use a soft tone.") == []


def test_a_question_presupposes_the_dated_event_it_names() -> None:
    assert triples("Should I raise this with him before our meeting on September 17?") == [
        ("Maya's meeting", "scheduled_for", "September 17", "assert")]


def test_amounts_named_in_passing_stand_beside_the_clause_statement() -> None:
    found = triples("I've completed 40% of my script, which is ahead of my 50% target.")
    assert ("Maya's script", "progress", "40%", "assert") in found
    assert ("Maya", "target", "50%", "assert") in found


def test_a_request_after_a_statement_keeps_the_statement() -> None:
    assert triples("I chose Vite for the build, can you help me set it up?") == [
        ("Maya", "chose", "Vite", "assert")]


def test_the_new_amount_and_date_predicates_are_functional() -> None:
    registry = PredicateRegistry()
    for name in ("budget", "deadline", "scheduled_for", "price", "salary"):
        assert registry.is_functional(name)
    for name in ("plans_to", "decided_to", "chose"):
        assert not registry.is_functional(name)


def test_a_later_budget_supersedes_the_earlier_one(memory: GraphMemory) -> None:
    said = [
        ("I set the budget to $5,000.", datetime(2024, 3, 1, tzinfo=UTC)),
        ("I raised the budget to $6,500.", datetime(2024, 4, 1, tzinfo=UTC)),
        ("The launch moved to March 3.", datetime(2024, 2, 1, tzinfo=UTC)),
        ("The launch moved to March 17.", datetime(2024, 2, 20, tzinfo=UTC)),
    ]
    for text, when in said:
        memory.add_episode(text, reference_time=when, metadata={"speaker": "Maya"})
    assert [f.target for f in memory.facts(entity="Maya") if f.predicate == "budget"] == ["$6,500"]
    history = memory.history("Maya", predicate="budget")
    assert [f.target for f in history] == ["$5,000", "$6,500"]
    assert history[0].superseded_by == history[1].id
    launch = [f.target for f in memory.facts(entity="launch") if f.predicate == "scheduled_for"]
    assert launch == ["March 17"]
