"""The rules extractor: offline English patterns → facts, table-driven."""

from __future__ import annotations

import hashlib
import time
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from graphmem._models import EpisodeRecord, Extraction, FactRecord, Scalar
from graphmem._predicates import PredicateRegistry, normalize_predicate
from graphmem.extract._base import ExtractionContext, Extractor
from graphmem.extract.rules import RulesExtractor

REF = datetime(2024, 6, 15, 12, 0, tzinfo=UTC)
EXTRACTOR = RulesExtractor()


def episode(content: str, *, kind: str = "message", ref: datetime = REF) -> EpisodeRecord:
    return EpisodeRecord(
        id="ep_" + hashlib.sha1(f"{content}|{ref.isoformat()}".encode()).hexdigest()[:16],
        group_id="test",
        source="unit",
        kind=kind,
        content=content,
        reference_time=ref,
        ingested_at=ref,
        content_hash="0" * 64,
        status="pending",
    )


def context(**kwargs: Any) -> ExtractionContext:
    return ExtractionContext(speaker="Alice", predicates=PredicateRegistry(), **kwargs)


def run(content: str, ctx: ExtractionContext | None = None, **kwargs: Any) -> Extraction:
    return EXTRACTOR.extract(episode(content, **kwargs), ctx or context())


Row = tuple[str, str, Scalar, str, str | None]  # subject, predicate, target, kind, replaces


def rows(result: Extraction) -> list[Row]:
    out: list[Row] = []
    for fact in result.facts:
        target: Scalar = fact.object if fact.object is not None else fact.value  # type: ignore[assignment]
        out.append((fact.subject, fact.predicate, target, fact.kind, fact.replaces))
    return out


def A(subject: str, predicate: str, target: Scalar) -> Row:
    return (subject, predicate, target, "assert", None)


def N(subject: str, predicate: str, target: Scalar) -> Row:
    return (subject, predicate, target, "negate", None)


def C(subject: str, predicate: str, target: Scalar, replaces: str | None = None) -> Row:
    return (subject, predicate, target, "correct", replaces)


# (message, expected facts in order, expected valid_from: one for every fact, or one per fact)
When = datetime | None | list[datetime | None]
CASES: list[tuple[str, list[Row], When]] = [
    # ---------------------------------------------------------------- lives_in
    ("I live in Osaka with my cat", [A("Alice", "lives_in", "Osaka")], None),
    ("I moved to Berlin last week", [A("Alice", "lives_in", "Berlin")], REF - timedelta(days=7)),
    ("I relocated to New York City in 2019.", [A("Alice", "lives_in", "New York City")],
     datetime(2019, 1, 1, tzinfo=UTC)),
    ("I've just moved to Lisbon!", [A("Alice", "lives_in", "Lisbon")], None),
    ("Osaka is where I live", [A("Alice", "lives_in", "Osaka")], None),
    ("Bob lives in Rome", [A("Bob", "lives_in", "Rome")], None),
    ("Carol moved to Paris yesterday", [A("Carol", "lives_in", "Paris")],
     REF - timedelta(days=1)),
    ("My sister Jane lives in Madrid", [A("Jane", "lives_in", "Madrid")], None),
    ("I live in the Bay Area these days", [A("Alice", "lives_in", "the Bay Area")], None),
    ("Since March 2021, I have lived in Tokyo.", [A("Alice", "lives_in", "Tokyo")],
     datetime(2021, 3, 1, tzinfo=UTC)),
    ("I've lived in Osaka for 3 years", [A("Alice", "lives_in", "Osaka")],
     REF - timedelta(days=3 * 365)),
    ("We moved to Denver 2 months ago", [A("Alice", "lives_in", "Denver")],
     REF - timedelta(days=60)),
    # ---------------------------------------------------------------- works_at / has_role
    ("I work at Acme", [A("Alice", "works_at", "Acme")], None),
    ("I work for Globex Corporation now.", [A("Alice", "works_at", "Globex Corporation")], None),
    ("I joined Initech last month", [A("Alice", "works_at", "Initech")],
     REF - timedelta(days=30)),
    ("I started at Hooli since 2019", [A("Alice", "works_at", "Hooli")],
     datetime(2019, 1, 1, tzinfo=UTC)),
    ("Dave works at Umbrella", [A("Dave", "works_at", "Umbrella")], None),
    ("I was hired by Globex last year", [A("Alice", "works_at", "Globex")],
     REF - timedelta(days=365)),
    ("I'm a software engineer at Acme",
     [A("Alice", "has_role", "software engineer"), A("Alice", "works_at", "Acme")], None),
    ("I work as a nurse at St. Mary's Hospital.",
     [A("Alice", "has_role", "nurse"), A("Alice", "works_at", "St. Mary's Hospital")], None),
    ("I left Acme", [N("Alice", "works_at", "Acme")], None),
    ("I quit Globex", [N("Alice", "works_at", "Globex")], None),
    ("I no longer work at Acme", [N("Alice", "works_at", "Acme")], None),
    ("I left Acme and joined Globex",
     [N("Alice", "works_at", "Acme"), A("Alice", "works_at", "Globex")], None),
    # ---------------------------------------------------------------- preferences
    ("I like coffee", [A("Alice", "likes", "coffee")], None),
    ("I love hiking, cooking and jazz",
     [A("Alice", "likes", "hiking"), A("Alice", "likes", "cooking"), A("Alice", "likes", "jazz")],
     None),
    ("I enjoy to swim", [A("Alice", "likes", "swimming")], None),
    ("I'm into jazz these days", [A("Alice", "likes", "jazz")], None),
    ("I'm a big fan of Studio Ghibli", [A("Alice", "likes", "Studio Ghibli")], None),
    ("I love rock and roll", [A("Alice", "likes", "rock and roll")], None),
    ("I hate mornings", [A("Alice", "dislikes", "mornings")], None),
    ("I can't stand cilantro", [A("Alice", "dislikes", "cilantro")], None),
    ("I prefer tea over coffee", [A("Alice", "prefers", "tea")], None),
    ("I'd rather have green tea", [A("Alice", "prefers", "green tea")], None),
    ("My favorite color is blue", [A("Alice", "favorite_color", "blue")], None),
    ("My favourite band is Radiohead", [A("Alice", "favorite_band", "Radiohead")], None),
    ("Sushi is my favorite food.", [A("Alice", "favorite_food", "Sushi")], None),
    # ---------------------------------------------------------------- name, is_a, pets
    ("My name is Sam", [A("Alice", "name", "Sam")], None),
    ("Call me Sam", [A("Alice", "name", "Sam")], None),
    ("Hi, I'm Sam", [A("Alice", "name", "Sam")], None),
    ("Hey there! I'm Sam Lee and I live in Denver.",
     [A("Alice", "name", "Sam Lee"), A("Alice", "lives_in", "Denver")], None),
    ("I'm tired", [], None),
    ("I'm American", [], None),
    ("Rex is a golden retriever", [A("Rex", "is_a", "golden retriever")], None),
    ("Walked my dog Rex this morning", [A("Alice", "has_pet", "Rex")], None),
    ("I have a cat called Tama and a dog named Pochi.",
     [A("Alice", "has_pet", "Tama"), A("Alice", "has_pet", "Pochi")], None),
    ("I'm 34 years old", [A("Alice", "age", 34)], None),
    # ---------------------------------------------------------------- status, versions, endpoints
    ("Ticket ABC-12 is blocked", [A("Ticket ABC-12", "has_status", "blocked")], None),
    ("Project Apollo is in progress", [A("Project Apollo", "has_status", "in progress")], None),
    ("The build is broken again", [A("build", "has_status", "broken")], None),
    ("Bob is done", [], None),
    ("Ticket ABC-12 isn't blocked anymore.", [N("Ticket ABC-12", "has_status", "blocked")], None),
    ("We use Postgres version 15", [A("Postgres", "uses_version", "15")], None),
    ("Postgres is on version 16", [A("Postgres", "uses_version", "16")], None),
    ("We're using Python 3.11", [A("Python", "uses_version", "3.11")], None),
    ("Redis runs version v7.2", [A("Redis", "uses_version", "7.2")], None),
    ("The endpoint is /v2/users.", [A("endpoint", "has_endpoint", "/v2/users")], None),
    ("The endpoint for billing is /v2/charge", [A("billing", "has_endpoint", "/v2/charge")],
     None),
    # ---------------------------------------------------------------- negations
    ("I no longer live in Paris", [N("Alice", "lives_in", "Paris")], None),
    ("I don't live in Paris anymore", [N("Alice", "lives_in", "Paris")], None),
    ("I don't like coffee anymore", [N("Alice", "likes", "coffee")], None),
    ("I'm not a fan of country music", [N("Alice", "likes", "country music")], None),
    ("I used to live in Paris", [N("Alice", "lives_in", "Paris")], None),
    ("I moved out of London last year", [N("Alice", "lives_in", "London")],
     REF - timedelta(days=365)),
    ("I like coffee. Not anymore.", [N("Alice", "likes", "coffee")], None),
    ("I stopped eating meat", [], None),
    # ---------------------------------------------------------------- corrections
    ("Actually, I live in Kyoto", [C("Alice", "lives_in", "Kyoto")], None),
    ("Correction: I work at Globex", [C("Alice", "works_at", "Globex")], None),
    ("Actually I moved to Lyon", [A("Alice", "lives_in", "Lyon")], None),
    ("I live in Lyon, not Paris", [C("Alice", "lives_in", "Lyon", "Paris")], None),
    ("I live in Paris, actually Lyon.", [C("Alice", "lives_in", "Lyon", "Paris")], None),
    ("I live in Paris. Sorry, I meant Lyon.", [C("Alice", "lives_in", "Lyon", "Paris")], None),
    ("I live in Paris. It was never Paris, it was always Lyon.",
     [C("Alice", "lives_in", "Lyon", "Paris")], None),
    ("I never lived in Paris, I've always lived in Lyon.",
     [C("Alice", "lives_in", "Lyon", "Paris")], None),
    ("The endpoint was never /v1, it was always /v2",
     [C("endpoint", "has_endpoint", "/v2", "/v1")], None),
    ("The payments API endpoint was never /v1. It was always /v2.",
     [C("payments API", "has_endpoint", "/v2", "/v1")], None),
    ("The version was never 2.1, it was always 2.2", [C("version", "uses_version", "2.2", "2.1")],
     None),
    ("My favorite color was never red, it was always blue",
     [C("Alice", "favorite_color", "blue", "red")], None),
    ("Rex was never a poodle, he was always a golden retriever",
     [C("Rex", "is_a", "golden retriever", "poodle")], None),
    ("The meeting was never on Monday, it was always on Tuesday",
     [C("meeting", "is", "Tuesday", "Monday")], None),
    ("It's not clear, but it's fine.", [], None),
    # ---------------------------------------------------------------- several facts, splitting
    ("I moved to Lisbon last month and I work at Acme now.",
     [A("Alice", "lives_in", "Lisbon"), A("Alice", "works_at", "Acme")],
     [REF - timedelta(days=30), None]),
    ("I work at Acme and live in Rome, but my wife Emma works at Globex.",
     [A("Alice", "works_at", "Acme"), A("Alice", "lives_in", "Rome"),
      A("Emma", "works_at", "Globex")], None),
    ("I'm a huge fan of Studio Ghibli and I hate horror movies",
     [A("Alice", "likes", "Studio Ghibli"), A("Alice", "dislikes", "horror movies")], None),
    # ---------------------------------------------------------------- questions, hypotheticals
    ("Do you live in Paris?", [], None),
    ("Where do you work?", [], None),
    ("Do you like coffee", [], None),
    ("If I lived in Paris, I would be happy.", [], None),
    ("I want to move to Paris", [], None),
    ("I might move to Paris", [], None),
    ("I'd love to live in Paris", [], None),
    ("I'd love to work at Google.", [], None),
    ("I'm moving to Paris next month", [], None),
    ("I will start at Google tomorrow", [], None),
    ("I think I live in Paris.", [], None),
    ("My friend thinks I work at Google.", [], None),
    ("You live in Paris", [], None),
    ("She lives in Rome", [], None),
    ("I love it", [], None),
    ("I moved to a new apartment", [], None),
    ("I live in Osaka, what about you?", [A("Alice", "lives_in", "Osaka")], None),
]


@pytest.mark.parametrize(
    ("message", "expected", "valid_from"), CASES, ids=[c[0][:50] for c in CASES]
)
def test_table(message: str, expected: list[Row], valid_from: When) -> None:
    result = run(message)
    assert rows(result) == expected
    times = valid_from if isinstance(valid_from, list) else [valid_from] * len(result.facts)
    for fact, when in zip(result.facts, times, strict=True):
        assert fact.valid_from == when, fact
        assert fact.statement and fact.statement[0].isupper() and fact.statement.endswith(".")
        assert fact.evidence and fact.evidence in message
        assert normalize_predicate(fact.predicate) == fact.predicate
        if fact.kind != "correct":
            assert fact.replaces is None


def test_osaka_example_exactly() -> None:
    result = run("I live in Osaka with my cat")
    assert len(result.facts) == 1
    fact = result.facts[0]
    assert (fact.subject, fact.predicate, fact.object, fact.value) == (
        "Alice", "lives_in", "Osaka", None
    )
    assert fact.subject_type == "Person" and fact.object_type == "Place"
    assert fact.statement == "Alice lives in Osaka."
    assert fact.evidence == "I live in Osaka with my cat"
    assert fact.kind == "assert" and fact.valid_from is None
    assert [(e.name, e.type) for e in result.entities] == [("Alice", "Person"), ("Osaka", "Place")]


def test_types_statements_and_entities() -> None:
    result = run("I'm a software engineer at Acme. Rex is a golden retriever.")
    by_predicate = {f.predicate: f for f in result.facts}
    assert by_predicate["works_at"].object_type == "Organization"
    assert by_predicate["works_at"].statement == "Alice works at Acme."
    assert by_predicate["has_role"].value == "software engineer"
    assert by_predicate["has_role"].object is None
    assert by_predicate["is_a"].subject_type == "entity"
    assert by_predicate["is_a"].statement == "Rex is a golden retriever."
    names = {(e.name, e.type) for e in result.entities}
    assert names == {("Alice", "Person"), ("Acme", "Organization"), ("Rex", "entity"),
                     ("golden retriever", "entity")}
    negated = run("I don't like coffee anymore").facts[0]
    assert negated.statement == "Alice no longer likes coffee."
    corrected = run("The endpoint was never /v1, it was always /v2").facts[0]
    assert corrected.statement == "The endpoint is /v2."
    assert corrected.value == "/v2" and corrected.object is None
    favorite = run("My favorite color is blue").facts[0]
    assert favorite.statement == "Alice's favorite color is blue."
    if "functional" in type(favorite).model_fields:  # cardinality hint for coined predicates
        assert favorite.functional is True
        assert corrected.functional is None  # has_endpoint is in the registry


def test_time_phrases_resolve_against_reference_time() -> None:
    cases = {
        "I moved to Rome yesterday": REF - timedelta(days=1),
        "I moved to Rome last month": REF - timedelta(days=30),
        "I moved to Rome last year": REF - timedelta(days=365),
        "I moved to Rome 3 days ago": REF - timedelta(days=3),
        "I moved to Rome a week ago": REF - timedelta(days=7),
        "I moved to Rome in 2019": datetime(2019, 1, 1, tzinfo=UTC),
        "I have lived in Rome since 2019": datetime(2019, 1, 1, tzinfo=UTC),
        "I moved to Rome in March 2021": datetime(2021, 3, 1, tzinfo=UTC),
        "I moved to Rome in September": datetime(2023, 9, 1, tzinfo=UTC),
        "I moved to Rome on 2022-05-04": datetime(2022, 5, 4, tzinfo=UTC),
        "I moved to Rome last Monday": datetime(2024, 6, 10, 12, 0, tzinfo=UTC),
        "Last week, I moved to Rome.": REF - timedelta(days=7),
        "I moved to Rome": None,
    }
    for message, expected in cases.items():
        facts = run(message).facts
        assert [(f.predicate, f.object) for f in facts] == [("lives_in", "Rome")], message
        assert facts[0].valid_from == expected, message
        assert facts[0].valid_from is None or facts[0].valid_from.tzinfo is not None
    assert run("I will move to Rome in 2030").facts == []
    assert run("I moved to Rome in 2030").facts == []  # after the reference time: not yet true


def test_bare_corrections_use_previous_episodes() -> None:
    earlier = episode("I live in Paris", ref=REF - timedelta(days=2))
    other = episode("I like tea", ref=REF - timedelta(days=5))
    ctx = context(previous=[earlier, other])
    for message in ("Sorry, I meant Lyon.", "Correction: Lyon, not Paris",
                    "It was never Paris, it was always Lyon.", "It's not Paris, it's Lyon."):
        assert rows(run(message, ctx)) == [C("Alice", "lives_in", "Lyon", "Paris")], message
    assert rows(run("I left Paris", ctx)) == [N("Alice", "lives_in", "Paris")]
    assert run("Sorry, I meant Lyon.").facts == []  # nothing to correct without context


def test_pronoun_correction_uses_context_facts() -> None:
    known = FactRecord(
        id="fact_1", statement="The billing API endpoint is /v1.", subject="billing API",
        predicate="has_endpoint", value="/v1", valid_from=REF - timedelta(days=9),
        recorded_at=REF - timedelta(days=9),
    )
    result = run("It was never /v1, it was always /v2", context(facts=[known]))
    assert rows(result) == [C("billing API", "has_endpoint", "/v2", "/v1")]


def test_episode_kinds_and_chat_shapes() -> None:
    assert run('{"temperature": 3}', kind="json").facts == []
    assert run("I live in Oslo", kind="event").facts == []
    assert rows(run("I live in Oslo", kind="text")) == [A("Alice", "lives_in", "Oslo")]
    assert rows(run('{"role": "user", "content": "I live in Oslo"}')) == [
        A("Alice", "lives_in", "Oslo")
    ]
    assert run('{"role": "assistant", "content": "I live in Oslo"}').facts == []
    transcript = (
        "user: I moved to Rome last year\n"
        "assistant: Great! I live in the cloud, do you like it?\n"
        "Bob: I work at Ferrari now."
    )
    assert rows(run(transcript, kind="text")) == [
        A("Alice", "lives_in", "Rome"), A("Bob", "works_at", "Ferrari")
    ]
    assert run("", kind="text").facts == []


def test_protocol_and_determinism() -> None:
    assert isinstance(EXTRACTOR, Extractor)
    assert RulesExtractor.name == "rules" and RulesExtractor.needs_context is False
    message = "I moved to Lisbon last month and I work at Acme now. My dog Rex likes bones."
    first = run(message)
    second = RulesExtractor().extract(episode(message), context())
    assert first.model_dump() == second.model_dump()
    assert first.llm_calls == 0 and first.prompt_tokens == 0


MESSAGES = [
    "I live in Osaka with my cat",
    "I moved to Lisbon last month and I work at Acme now.",
    "Do you live in Paris?",
    "Honestly the weather has been terrible this week, I can't wait for summer to come back.",
    "I love hiking, cooking and jazz",
    "The endpoint was never /v1, it was always /v2",
    "Hey there! I'm Sam and I live in Denver.",
    "Ticket ABC-12 is blocked",
    "Can you help me write an email to my boss about the quarterly report? Keep it short.",
    "I don't like coffee anymore",
]


def test_speed_of_one_thousand_messages() -> None:
    episodes = [episode(f"{MESSAGES[i % len(MESSAGES)]}") for i in range(1000)]
    ctx = context()
    EXTRACTOR.extract(episodes[0], ctx)  # warm caches
    start = time.perf_counter()
    facts = sum(len(EXTRACTOR.extract(ep, ctx).facts) for ep in episodes)
    elapsed = time.perf_counter() - start
    print(f"\nrules extractor: 1000 messages, {facts} facts in {elapsed * 1000:.1f} ms "
          f"({elapsed * 1e6 / 1000:.0f} µs/message)")
    assert facts > 0
    assert elapsed < 5.0  # sanity bound only; typically ~0.15 s
