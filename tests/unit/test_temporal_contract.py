"""DESIGN.md §3, row by row, on every store (the `memory` fixture is parametrized by store)."""

from __future__ import annotations

import itertools
from datetime import UTC, datetime, timedelta

import pytest

from graphmem import FactRecord, GraphMemory, InputError, NaiveDatetimeError


def t(year: int, month: int = 1, day: int = 1) -> datetime:
    return datetime(year, month, day, tzinfo=UTC)


def current(mem: GraphMemory, entity: str = "Alice", predicate: str | None = None) -> list[str]:
    return sorted(
        f.target for f in mem.facts(entity=entity) if predicate is None or f.predicate == predicate
    )


def canonical(mem: GraphMemory) -> tuple[object, ...]:
    """The graph without ids or record times: what must not depend on ingest order."""
    facts = mem.facts(include_history=True)
    by_id = {f.id: f for f in facts}
    rows = sorted(
        (f.subject, f.predicate, f.target, f.valid_from, f.valid_to, f.expired_at is None)
        for f in facts
    )
    links = sorted(
        (by_id[f.superseded_by].target, f.target, f.reason)
        for f in facts
        if f.superseded_by and f.superseded_by in by_id
    )
    return tuple(rows), tuple(links)


def test_duplicate_adds_provenance_not_a_fact(memory: GraphMemory) -> None:
    first = memory.add_fact("Alice", "lives_in", "Paris", valid_from=t(2020), source="chat")
    second = memory.add_fact("Alice", "lives_in", "Paris", valid_from=t(2020), source="email")
    assert first.facts_added == 1
    assert second.facts_added == 0 and second.facts_duplicate == 1
    facts = memory.facts(entity="Alice")
    assert len(facts) == 1
    assert sorted(facts[0].episode_ids) == sorted([first.episode_id, second.episode_id])


def test_same_call_twice_is_idempotent(memory: GraphMemory) -> None:
    first = memory.add_fact("Alice", "lives_in", "Paris", valid_from=t(2020))
    again = memory.add_fact("Alice", "lives_in", "Paris", valid_from=t(2020))
    assert again.already_present and again.episode_id == first.episode_id
    assert memory.stats("default")["episodes"] == 1
    assert len(memory.facts(entity="Alice")[0].episode_ids) == 1


def test_functional_predicate_later_value_supersedes(memory: GraphMemory) -> None:
    memory.add_fact("Alice", "lives_in", "Paris", valid_from=t(2020))
    result = memory.add_fact("Alice", "lives_in", "Berlin", valid_from=t(2022))
    assert len(result.superseded) == 1
    history = memory.history("Alice", predicate="lives_in")
    assert [f.target for f in history] == ["Paris", "Berlin"]
    paris, berlin = history
    assert paris.valid_to == berlin.valid_from == t(2022)
    assert paris.superseded_by == berlin.id and paris.reason == "update"
    assert current(memory) == ["Berlin"]


def test_multi_valued_predicate_accumulates(memory: GraphMemory) -> None:
    memory.add_fact("Alice", "likes", "jazz", valid_from=t(2020))
    memory.add_fact("Alice", "likes", "hiking", valid_from=t(2021))
    assert current(memory) == ["hiking", "jazz"]
    assert all(f.superseded_by is None for f in memory.history("Alice"))


def test_late_arriving_earlier_fact(memory: GraphMemory) -> None:
    memory.add_fact("Alice", "lives_in", "Berlin", valid_from=t(2022))
    result = memory.add_fact("Alice", "lives_in", "Paris", valid_from=t(2020))
    assert result.facts_added == 1
    paris, berlin = memory.history("Alice", predicate="lives_in")
    assert paris.target == "Paris" and paris.valid_to == t(2022)
    assert paris.superseded_by == berlin.id
    assert current(memory) == ["Berlin"]


STEPS = [("Paris", 2019), ("Rome", 2020), ("Berlin", 2022)]


@pytest.mark.parametrize("order", list(itertools.permutations(range(3))))
def test_final_graph_does_not_depend_on_ingest_order(
    memory: GraphMemory, order: tuple[int, int, int]
) -> None:
    for index in order:
        city, year = STEPS[index]
        memory.add_fact("Alice", "lives_in", city, valid_from=t(year), source=f"s{index}")
    rows, links = canonical(memory)
    assert rows == tuple(
        sorted(
            [
                ("Alice", "lives_in", "Paris", t(2019), t(2020), True),
                ("Alice", "lives_in", "Rome", t(2020), t(2022), True),
                ("Alice", "lives_in", "Berlin", t(2022), None, True),
            ]
        )
    )
    assert links == (("Berlin", "Rome", "update"), ("Rome", "Paris", "update"))
    assert [f.target for f in memory.history("Alice")] == ["Paris", "Rome", "Berlin"]


def test_same_time_different_values_contradict(memory: GraphMemory) -> None:
    memory.add_fact("Bob", "works_at", "Acme", valid_from=t(2023), source="hr")
    result = memory.add_fact("Bob", "works_at", "Globex", valid_from=t(2023), source="linkedin")
    assert len(result.contradictions) == 1
    assert current(memory, "Bob") == ["Acme", "Globex"]
    hits = memory.recall("Where does Bob work?", k=5).facts
    flagged = [h for h in hits if h.predicate == "works_at"]
    assert flagged and all(len(h.contradicts) == 1 for h in flagged)
    assert "CONFLICT" in memory.recall("Where does Bob work?").to_context()


def test_negation_ends_the_fact_without_replacement(memory: GraphMemory) -> None:
    memory.add_fact("Alice", "lives_in", "Paris", valid_from=t(2020))
    memory.add_fact("Alice", "lives_in", "Paris", valid_from=t(2023), negated=True)
    assert current(memory) == []
    (paris,) = memory.history("Alice")
    assert paris.valid_to == t(2023) and paris.expired_at is None
    assert paris.reason is not None and paris.reason.startswith("negated")
    assert [f.target for f in memory.facts(entity="Alice", include_history=True)] == ["Paris"]
    # The world in 2021 still had Alice in Paris.
    assert [h.target for h in memory.recall("Alice", as_of=t(2021)).facts] == ["Paris"]


def test_correction_expires_old_keeps_valid_time(memory: GraphMemory) -> None:
    memory.add_fact("api", "has_endpoint", value="/v1", valid_from=t(2021))
    result = memory.add_fact("api", "has_endpoint", value="/v2", correction=True)
    assert result.facts_added == 1
    old, new = memory.history("api")
    assert old.value == "/v1" and old.expired_at is not None
    assert old.valid_from == t(2021) and old.valid_to is None  # valid time untouched
    assert old.superseded_by == new.id and old.reason == "correction"
    assert new.value == "/v2" and new.valid_from == t(2021)  # takes over valid_from
    assert [f.target for f in memory.facts(entity="api")] == ["/v2"]


def test_as_of_gives_the_world_at_that_time(memory: GraphMemory) -> None:
    memory.add_fact("Alice", "lives_in", "Paris", valid_from=t(2020))
    memory.add_fact("Alice", "lives_in", "Berlin", valid_from=t(2022))
    assert [h.target for h in memory.recall("Alice lives", as_of=t(2021)).facts] == ["Paris"]
    assert [h.target for h in memory.recall("Alice lives", as_of=t(2023)).facts] == ["Berlin"]
    assert memory.recall("Alice lives", as_of=t(2019)).facts == []


def test_known_at_gives_what_memory_believed(memory: GraphMemory) -> None:
    memory.add_fact("Alice", "lives_in", "Paris", valid_from=t(2020))
    between = datetime.now(UTC)
    import time

    time.sleep(0.01)
    memory.add_fact("Alice", "lives_in", "Berlin", valid_from=t(2022))
    then = memory.recall("Alice lives", as_of=t(2024), known_at=between).facts
    assert [h.target for h in then] == ["Paris"]
    assert then[0].valid_to is None  # at that time memory did not know Paris had ended
    now = memory.recall("Alice lives", as_of=t(2024)).facts
    assert [h.target for h in now] == ["Berlin"]
    before_all = memory.recall("Alice", known_at=between - timedelta(days=1)).facts
    assert before_all == []


def test_known_at_sees_corrected_value_before_correction(memory: GraphMemory) -> None:
    memory.add_fact("api", "has_endpoint", value="/v1", valid_from=t(2021))
    before = datetime.now(UTC)
    import time

    time.sleep(0.01)
    memory.add_fact("api", "has_endpoint", value="/v2", correction=True)
    believed = memory.recall("api endpoint", known_at=before, as_of=t(2022)).facts
    assert [h.target for h in believed] == ["/v1"]


def test_forget_episode_is_provenance_refcounted(memory: GraphMemory) -> None:
    a = memory.add_fact("Alice", "lives_in", "Paris", valid_from=t(2020), source="a")
    memory.add_fact("Alice", "lives_in", "Paris", valid_from=t(2020), source="b")
    c = memory.add_fact("Carol", "knows", "Dave", valid_from=t(2020), source="c")
    result = memory.forget(episode_id=a.episode_id)
    assert result.facts_removed == 0 and result.facts_kept == 1 and result.episodes_removed == 1
    assert current(memory) == ["Paris"]
    result = memory.forget(episode_id=c.episode_id)
    assert result.facts_removed == 1
    assert result.audit_id
    assert memory.facts(entity="Carol") == []
    names = {e for f in memory.facts(include_history=True) for e in (f.subject, f.object)}
    assert "Dave" not in names
    stats = memory.stats("default")
    assert stats["entities"] == 2  # Alice and Paris; Carol and Dave were left without facts


def test_forget_repairs_the_timeline(memory: GraphMemory) -> None:
    memory.add_fact("Alice", "lives_in", "Paris", valid_from=t(2020))
    berlin = memory.add_fact("Alice", "lives_in", "Berlin", valid_from=t(2022))
    memory.forget(episode_id=berlin.episode_id)
    (paris,) = memory.history("Alice")
    assert paris.valid_to is None and paris.superseded_by is None
    assert current(memory) == ["Paris"]


def test_forget_entity_and_group(memory: GraphMemory) -> None:
    memory.add_fact("Alice", "lives_in", "Paris", valid_from=t(2020))
    memory.add_fact("Alice", "knows", "Bob", valid_from=t(2020))
    memory.add_fact("Zed", "lives_in", "Oslo", group_id="other")
    result = memory.forget(entity="Bob")
    assert result.facts_removed == 1 and result.entities_removed == 1
    assert current(memory) == ["Paris"]
    gone = memory.forget(all=True)
    assert gone.facts_removed == 1 and gone.episodes_removed == 2
    assert memory.stats("default")["facts"] == 0 and memory.stats("default")["entities"] == 0
    assert current(memory, "Zed") == [] and memory.facts(group_id="other")
    with pytest.raises(InputError):
        memory.forget()
    with pytest.raises(InputError):
        memory.forget(entity="Nobody")


def test_history_is_oldest_first_with_reasons(memory: GraphMemory) -> None:
    memory.add_fact("Alice", "works_at", "Initech", valid_from=t(2019))
    memory.add_fact("Alice", "works_at", "Acme", valid_from=t(2021))
    memory.add_fact("Alice", "likes", "tea", valid_from=t(2018))
    history = memory.history("Alice")
    assert [(f.predicate, f.target) for f in history] == [
        ("likes", "tea"),
        ("works_at", "Initech"),
        ("works_at", "Acme"),
    ]
    assert [f.target for f in memory.history("alice", predicate="works_at")] == ["Initech", "Acme"]
    assert memory.history("Nobody") == []
    assert isinstance(history[0], FactRecord)


def test_literal_values_keep_their_type(memory: GraphMemory) -> None:
    memory.add_fact("gripper", "grip_force_for", value=12.5, valid_from=t(2024))
    memory.add_fact("gripper", "has_status", value=True, valid_from=t(2024))
    facts = {f.predicate: f.value for f in memory.facts(entity="gripper")}
    assert facts == {"grip_force_for": 12.5, "has_status": True}
    assert isinstance(facts["has_status"], bool)


def test_naive_datetimes_are_rejected_naming_the_argument(memory: GraphMemory) -> None:
    naive = datetime(2024, 1, 1)
    with pytest.raises(NaiveDatetimeError, match="valid_from"):
        memory.add_fact("Alice", "lives_in", "Paris", valid_from=naive)
    with pytest.raises(ValueError, match="reference_time"):
        memory.add_episode("I live in Paris", reference_time=naive)
    with pytest.raises(NaiveDatetimeError, match="as_of"):
        memory.recall("x", as_of=naive)
    assert memory.stats("default")["episodes"] == 0


def test_timestamps_keep_milliseconds(memory: GraphMemory) -> None:
    when = datetime(2024, 5, 1, 10, 0, 0, 123000, tzinfo=UTC)
    memory.add_fact("Alice", "lives_in", "Paris", valid_from=when)
    (fact,) = memory.facts(entity="Alice")
    assert fact.valid_from == when


def test_context_marks_replaced_values_and_respects_as_of(memory: GraphMemory) -> None:
    memory.add_fact("Alice", "lives_in", "Paris", valid_from=t(2020))
    memory.add_fact("Alice", "lives_in", "Berlin", valid_from=t(2022))
    now = memory.recall("Where does Alice live?").to_context()
    assert "Alice lives in Berlin." in now and "replaced: Alice lives in Paris." in now
    then = memory.recall("Where does Alice live?", as_of=t(2021)).to_context()
    assert "Alice lives in Paris." in then and "no longer true" not in then


def test_a_write_is_visible_to_the_next_read(memory: GraphMemory) -> None:
    """Read-your-writes: record times are strictly increasing (two writes in one millisecond
    stay ordered), so one may run a millisecond ahead of the clock; reads must still see it.

    Was a bug: a fact written in the same millisecond as the previous write got the next
    millisecond as record time, and a read in between did not see it.
    """
    for i in range(40):
        memory.add_fact(f"probe{i}", "has_status", value="ok")
        assert [f.subject for f in memory.facts(entity=f"probe{i}")] == [f"probe{i}"]
