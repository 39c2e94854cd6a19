"""The answer model, its schema, JSON clean-up and the conversion into an ``Extraction``."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

import pytest

from graphmem._models import EpisodeRecord, FactRecord
from graphmem._predicates import PredicateRegistry
from graphmem.extract import ExtractionContext
from graphmem.extract.llm.answer import Answer, InvalidAnswer, answer_json_schema, parse_answer
from graphmem.extract.llm.convert import states_time, to_extraction
from graphmem.extract.llm.json_reply import AnswerFormatError, loads_object, strip_think
from graphmem.extract.llm.messages import (
    ContextLimits,
    build_messages,
    estimate_tokens,
    repair_message,
)
from graphmem.extract.llm.prompts import load_prompt

T0 = datetime(2024, 5, 1, 9, 30, tzinfo=UTC)


def episode(content: str = "Alice lives in Paris.", **extra: Any) -> EpisodeRecord:
    values: dict[str, Any] = {
        "id": "ep_x",
        "group_id": "default",
        "source": "chat",
        "kind": "message",
        "content": content,
        "reference_time": T0,
        "ingested_at": T0,
        "content_hash": "h",
        "status": "pending",
    }
    values.update(extra)
    return EpisodeRecord(**values)


def context(**extra: Any) -> ExtractionContext:
    return ExtractionContext(speaker="Alice", predicates=PredicateRegistry(), **extra)


def known(i: int, statement: str, predicate: str = "lives_in") -> FactRecord:
    return FactRecord(
        id=f"fact_{i:024d}",
        statement=statement,
        subject="Alice",
        predicate=predicate,
        valid_from=datetime(2023, 1, 1, tzinfo=UTC),
        recorded_at=datetime(2023, 1, 1, tzinfo=UTC),
    )


# ----------------------------------------------------------------------------- JSON clean-up


@pytest.mark.parametrize(
    "text",
    [
        '{"a": 1}',
        '<think>\nhmm {"a": 2}\n</think>\n{"a": 1}',
        'Let me think.</think>{"a": 1}',  # template opened the block in the prompt
        '```json\n{"a": 1}\n```',
        'Here you go: {"a": 1} Hope this helps.',
        '<THINKING>x</THINKING>```\n{"a": 1}\n```',
    ],
)
def test_loads_object_cleans_up_around_the_json(text: str) -> None:
    assert loads_object(text) == {"a": 1}


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (None, "empty"),
        ("   ", "empty"),
        ("<think>still thinking", "only reasoning"),
        ('{"entities": [', "not valid JSON"),
        ("[1, 2]", "JSON object"),
        ("no json at all", "not JSON"),
    ],
)
def test_loads_object_explains_what_is_wrong(text: str | None, message: str) -> None:
    with pytest.raises(AnswerFormatError, match=message):
        loads_object(text)


def test_strip_think_keeps_the_answer() -> None:
    assert strip_think("<think>a</think>B<think>c</think>D") == "BD"
    assert strip_think("plain") == "plain"


# ----------------------------------------------------------------------------- validation


def test_lenient_where_it_is_safe() -> None:
    raw = {
        "entities": [{"name": " Alice ", "type": None}],
        "facts": [
            {
                "subject": "Alice",
                "predicate": "lives_in",
                "object": "null",
                "value": 42,
                "kind": "Negation",
                "relation": "Replaces",
                "valid_from": "2024-03",
                "fact_id": "",
                "unexpected": "ignored",
            }
        ],
    }
    answer = parse_answer(json.dumps(raw))
    (entity,) = answer.entities
    assert (entity.name, entity.type) == ("Alice", "entity")
    (item,) = answer.facts
    assert item.object is None and item.value == 42 and isinstance(item.value, int)
    assert (item.kind, item.relation, item.fact_id) == ("negate", "supersedes", None)
    assert item.valid_from == "2024-03"


@pytest.mark.parametrize(
    ("raw", "where"),
    [
        ({"entities": "Alice", "relations": []}, "entities"),
        ({"entities": []}, "facts"),
        ({"entities": [], "facts": [{"predicate": "x"}]}, "facts.0.subject"),
        ({"entities": [], "facts": [{"subject": "a"}, {"predicate": "b"}]}, "facts.1.subject"),
    ],
)
def test_unusable_answers_name_the_field(raw: dict[str, Any], where: str) -> None:
    with pytest.raises(InvalidAnswer) as info:
        parse_answer(json.dumps(raw))
    assert where in str(info.value)
    assert where in repair_message(info.value)


def test_a_bad_optional_field_or_fact_is_dropped_with_a_warning_not_a_failure() -> None:
    raw = {
        "entities": [{"name": "Rui", "type": "person"}, {"type": "place"}],
        "facts": [
            {
                "subject": "Rui",
                "predicate": "lives_in",
                "object": "Porto",
                "valid_from": "last month",
                "kind": "probably",
                "relation": "maybe",
            },
            {
                "subject": "Rui",
                "predicate": "works_at",
                "object": "Farfetch",
                "valid_to": 2019,
                "statement": "s" * 900,
                "evidence": "e" * 400,
            },
            {"predicate": "orphan"},
        ],
    }
    answer = parse_answer(json.dumps(raw))
    assert [f.predicate for f in answer.facts] == ["lives_in", "works_at"]
    first, second = answer.facts
    assert (first.valid_from, first.kind, first.relation) == (None, "assert", "new")
    assert second.valid_to is None and len(second.statement) == 500
    assert second.evidence is not None and len(second.evidence) == 300
    assert [e.name for e in answer.entities] == ["Rui"]
    text = "\n".join(answer.warnings)
    for expected in (
        "facts.0.valid_from: 'last month' is not an ISO date",
        "facts.0.kind: kind 'probably'",
        "facts.0.relation: relation 'maybe'",
        "facts.1.valid_to: 2019 is not an ISO date",
        "facts.2.subject: Field required; left out",
        "entities.1.name: Field required; left out",
    ):
        assert expected in text, text


def test_truncated_answers_are_invalid_even_when_they_parse() -> None:
    with pytest.raises(InvalidAnswer) as info:
        parse_answer('{"entities": [], "facts": []}', truncated=True)
    assert info.value.truncated
    assert "cut off" in repair_message(info.value)


def test_schema_is_strict_and_small() -> None:
    schema = answer_json_schema()

    def objects(node: Any) -> list[dict[str, Any]]:
        found = []
        if isinstance(node, dict):
            if node.get("type") == "object":
                found.append(node)
            for value in node.values():
                found.extend(objects(value))
        elif isinstance(node, list):
            for value in node:
                found.extend(objects(value))
        return found

    for obj in objects(schema):
        assert obj["additionalProperties"] is False
        assert sorted(obj["required"]) == sorted(obj["properties"])
    text = json.dumps(schema)
    assert '"default"' not in text and '"title"' not in text
    assert "warnings" not in text  # the answer's own bookkeeping, not the model's
    assert len(text) < 2500
    fact = schema["$defs"]["AnswerFact"]["properties"]
    assert fact["relation"]["enum"] == [
        "new",
        "same_as",
        "supersedes",
        "contradicts",
        "corrects",
        "negates",
    ]
    # a fresh copy each time
    schema["x"] = 1
    assert "x" not in answer_json_schema()


# ----------------------------------------------------------------------------- the prompt


def test_build_messages_caps_the_context() -> None:
    facts = [known(i, f"Alice fact number {i} " + "x" * 150) for i in range(40)]
    previous = [episode(f"earlier {i} " + "y" * 600, id=f"ep_{i}") for i in range(5)]
    limits = ContextLimits(max_facts=30, max_fact_chars=1000, max_previous=3)
    messages, aliases = build_messages(
        load_prompt("extract_facts"),
        episode("Alice moved."),
        context(facts=facts, previous=previous),
        limits,
    )
    user = messages[1]["content"]
    assert 0 < len(aliases) < 10, "the character cap wins over the count cap"
    assert aliases["F1"] == facts[0].id
    assert facts[0].id not in user
    assert "earlier 4" in user and "earlier 1" not in user
    assert user.endswith("Episode:\nAlice moved.")
    assert estimate_tokens(messages) > 400


def test_build_messages_without_context() -> None:
    messages, aliases = build_messages(load_prompt("extract_facts"), episode(), context())
    assert aliases == {}
    user = messages[1]["content"]
    assert "Known facts" in user and "(none)" in user
    assert "Episode time: 2024-05-01T09:30:00Z" in user
    assert [m["role"] for m in messages] == ["system", "user"]


# ----------------------------------------------------------------------------- conversion


def convert(raw: dict[str, Any], text: str = "Alice lives in Paris.", **ctx: Any) -> Any:
    aliases = ctx.pop("aliases", {})
    return to_extraction(Answer.model_validate(raw), episode(text), context(**ctx), aliases)


def item(**extra: Any) -> dict[str, Any]:
    base: dict[str, Any] = {"subject": "Alice", "predicate": "lives_in", "object": "Paris"}
    base.update(extra)
    return base


def test_conversion_maps_people_types_and_aliases() -> None:
    got = convert(
        {
            "entities": [{"name": "I", "type": "Human"}, {"name": "Paris", "type": "City"}],
            "facts": [
                item(subject="me", relation="supersedes", fact_id="F1", reason="moved"),
                item(object="Berlin", relation="same_as", fact_id="fact_unknown"),
                item(object="Rome", relation="new", fact_id="F1"),
            ],
        },
        aliases={"F1": "fact_real"},
    )
    assert [(e.name, e.type) for e in got.entities] == [("Alice", "person"), ("Paris", "place")]
    first, second, third = got.facts
    assert (first.subject, first.subject_type, first.object_type) == ("Alice", "person", "place")
    assert (first.relation, first.related_fact_id, first.reason) == (
        "supersedes",
        "fact_real",
        "moved",
    )
    assert (second.relation, second.related_fact_id) == ("same_as", "fact_unknown")
    assert (third.relation, third.related_fact_id) == (None, None)
    assert got.llm_calls == 0


def test_conversion_relation_implies_kind_and_object_beats_value() -> None:
    got = convert(
        {
            "entities": [],
            "facts": [
                item(relation="negates", fact_id="F1"),
                item(relation="corrects", replaces="Lyon"),
                item(value=3),
                item(object=None, predicate="age", value=31),
            ],
        }
    )
    kinds = [(f.kind, f.object, f.value) for f in got.facts]
    assert kinds == [
        ("negate", "Paris", None),
        ("correct", "Paris", None),
        ("assert", "Paris", None),
        ("assert", None, 31),
    ]
    assert got.facts[1].replaces == "Lyon"


def test_conversion_dates() -> None:
    got = convert(
        {"entities": [], "facts": [item(valid_from="2020-02-03", valid_to="2021-01-01T10:00")]}
    )
    (only,) = got.facts
    assert only.valid_from == datetime(2020, 2, 3, tzinfo=UTC)
    assert only.valid_to == datetime(2021, 1, 1, 10, tzinfo=UTC)
    future = {"entities": [], "facts": [item(valid_from="2030-01-01", valid_to="2031-01-01")]}
    (made_up,) = convert(future).facts
    assert made_up.valid_from is None and made_up.valid_to is None
    (stated,) = convert(future, text="Alice moves to Paris in January 2030.").facts
    assert stated.valid_from == datetime(2030, 1, 1, tzinfo=UTC)


def test_a_bad_fact_is_skipped_not_the_episode() -> None:
    got = convert(
        {"entities": [], "facts": [item(confidence=3), item(value=float("nan"), object=None)]}
    )
    assert len(got.facts) == 2  # extra keys ignored; NaN is dropped later by prepare_facts


# ----------------------------------------------------------------------------- grounding


def test_evidence_must_come_from_the_episode() -> None:
    text = "Hi!  I’m Maya and I LIVE in Lisbon... for now."
    got = convert(
        {
            "entities": [],
            "facts": [
                # quoted: case, spacing, quotes and an elision aside
                item(subject="Maya", object="Lisbon", evidence="i'm maya … live in lisbon"),
                # paraphrased, but the object is in the episode: the fact stays, undocumented
                item(subject="Maya", object="Lisbon", evidence="Maya resides in Lisbon"),
                # quoted from another episode, about something this one never says
                item(
                    subject="Maya", predicate="works_at", object="Atlas", evidence="I work at Atlas"
                ),
            ],
        },
        text=text,
    )
    assert [(f.object, f.evidence) for f in got.facts] == [
        ("Lisbon", "i'm maya … live in lisbon"),
        ("Lisbon", None),
    ]
    assert len(got.warnings) == 2
    assert got.warnings[0].startswith("facts.1.evidence:") and "dropped" in got.warnings[0]
    assert got.warnings[1].startswith("facts.2:") and "left out" in got.warnings[1]


def test_a_fact_about_the_speaker_without_quoted_evidence_is_kept() -> None:
    got = convert(
        {
            "entities": [],
            "facts": [item(subject="Leo", predicate="knows", object="I", evidence="x y")],
        },
        text="Leo says hello.",
    )
    (fact,) = got.facts
    assert (fact.object, fact.evidence) == ("Alice", None)


@pytest.mark.parametrize(
    ("statement", "kept"),
    [
        ("Alice lives in Paris.", True),
        ("Alice has lived in Paris since she moved there for work.", True),
        ("Quick update: I moved to Paris last month.", False),  # the episode, copied
        ("Lives in Paris.", False),  # no subject
        ("Alice moved.", False),  # no object
        ("Your friend Alice lives in Paris.", False),
        ("", False),
    ],
)
def test_a_statement_that_is_not_about_the_subject_is_rebuilt(statement: str, kept: bool) -> None:
    (fact,) = convert({"entities": [], "facts": [item(statement=statement)]}).facts
    assert fact.statement == (statement if kept else "Alice lives in Paris.")


def test_rebuilt_statements_for_values_and_negations() -> None:
    got = convert(
        {
            "entities": [],
            "facts": [
                item(
                    object=None, predicate="Favourite Colour", value="green", statement="I love it"
                ),
                item(kind="negate", predicate="works_at", object="Acme", statement="I quit."),
                item(kind="negate", object=None, predicate="smokes", statement="I quit."),
            ],
        }
    )
    assert [f.statement for f in got.facts] == [
        "Alice favourite colour green.",
        "Alice no longer works at Acme.",
        "Alice no longer smokes.",
    ]


@pytest.mark.parametrize(
    ("text", "stated"),
    [
        ("I start at Acme next Monday.", True),
        ("Moving to Rome in 2025.", True),
        ("From March on I work remotely.", True),
        ("The meeting is at 3pm.", True),
        ("In two weeks I'll be in Oslo.", True),
        ("Alice lives in Paris.", False),
        ("I may go there.", False),
    ],
)
def test_states_time(text: str, stated: bool) -> None:
    assert states_time(text) is stated
