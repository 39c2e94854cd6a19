"""Tenant isolation: nothing done in one group ever reads or changes another group.

Seeded random sessions over groups with look-alike and hostile names that all hold the *same*
people, statements and episode texts. After every operation in a group, every other group's
export is byte-for-byte what it was; every read (recall, history, facts, export, stats) only
returns rows of its own group.
"""

from __future__ import annotations

import random
from collections.abc import Iterable
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from graphmem import GraphMemError, GraphMemory
from tests.helpers.reliability import (
    CITIES,
    EMPLOYERS,
    HOBBIES,
    SUBJECTS,
    export_counts,
    export_problems,
    snapshot,
)

pytestmark = pytest.mark.timeout(120)

GROUPS = [
    "default",
    "Default",
    "tenant a",
    "tenant-a",
    "tenant_a",
    "ténant",
    "te\u0301nant",  # the same word, decomposed
    "a\x1fb",  # the separator make_id joins parts with
    "'; DROP TABLE facts; --",
    "}) MATCH (n) DETACH DELETE n //",
    "%",
    "*",
    "g" * 300,
]
BASE = datetime(2024, 1, 1, tzinfo=UTC)


def seed_group(mem: GraphMemory, group: str, rng: random.Random) -> None:
    """The same story in every group, plus a little of the group's own."""
    for i, subject in enumerate(SUBJECTS[:4]):
        when = BASE + timedelta(days=i)
        mem.add_episode(f"{subject} lives in {CITIES[i]}.", group_id=group, reference_time=when,
                        source="chat")
        mem.add_fact(subject, "works_at", EMPLOYERS[i], valid_from=when, group_id=group)
    mem.add_episode('{"episode": 1, "success": true, "params": {"force": 3.5}}', kind="json",
                    group_id=group, reference_time=BASE)
    own = rng.choice(SUBJECTS)
    mem.add_fact(own, "likes", rng.choice(HOBBIES), group_id=group,
                 valid_from=BASE + timedelta(days=rng.randrange(30)))


def ids_of(rows: Iterable[dict[str, Any]]) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {"episode": set(), "entity": set(), "fact": set()}
    for r in rows:
        if r["type"] in out:
            out[r["type"]].add(r["id"])
    return out


def check_export_is_own(mem: GraphMemory, group: str) -> dict[str, set[str]]:
    rows = list(mem.export(group_id=group))
    for r in rows:
        if "group_id" in r:
            assert r["group_id"] == group, r
    assert export_problems(rows) == []  # every reference stays inside the group's own rows
    return ids_of(rows)


def check_recall_is_own(mem: GraphMemory, group: str, query: str, rng: random.Random) -> None:
    own = check_export_is_own(mem, group)
    result = mem.recall(query, group_id=group, k=rng.choice([1, 5, 50, 1000]),
                        hops=rng.randrange(4),
                        as_of=rng.choice([None, BASE + timedelta(days=2)]))
    assert result.group_id == group
    for hit in result.facts:
        assert hit.group_id == group and hit.id in own["fact"]
        assert set(hit.episode_ids) <= own["episode"]
        assert {e.id for e in hit.episodes} <= own["episode"]
        for other in [*hit.superseded, *hit.contradicts]:
            assert other.group_id == group and other.id in own["fact"]
    assert {e.id for e in result.entities} <= own["entity"]
    assert {e.id for e in result.episodes} <= own["episode"]


def random_query(rng: random.Random) -> str:
    words = rng.sample([*SUBJECTS, *CITIES, *EMPLOYERS, *HOBBIES, "lives", "works", "force",
                        "success", "episode"], 3)
    return " ".join(words) + rng.choice(["?", "", " * NEAR(", ' " OR 1=1'])


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_random_operations_never_cross_groups(memory: GraphMemory, seed: int) -> None:
    rng = random.Random(seed)
    groups = rng.sample(GROUPS, 6)
    for group in groups:
        seed_group(memory, group, rng)
    before = {g: snapshot(memory, g) for g in groups}
    total = export_counts(memory.export())
    per_group = [export_counts(memory.export(group_id=g)) for g in groups]
    assert {k: sum(c[k] for c in per_group) for k in total} == total  # no row outside a group

    for _step in range(30):
        group = rng.choice(groups)
        action = rng.choice(
            ["fact", "fact", "episode", "recall", "recall", "history", "facts", "stats",
             "forget_episode", "forget_entity", "forget_all"]
        )
        subject = rng.choice(SUBJECTS)
        try:
            if action == "fact":
                memory.add_fact(subject, rng.choice(["lives_in", "likes", "works_at"]),
                                rng.choice(CITIES + HOBBIES), group_id=group,
                                valid_from=BASE + timedelta(days=rng.randrange(60)))
            elif action == "episode":
                memory.add_episode(f"{subject} works at {rng.choice(EMPLOYERS)}.",
                                   group_id=group, reference_time=BASE + timedelta(days=70))
            elif action == "recall":
                check_recall_is_own(memory, group, random_query(rng), rng)
            elif action == "history":
                own = check_export_is_own(memory, group)
                for fact in memory.history(subject, group_id=group):
                    assert fact.group_id == group and fact.id in own["fact"]
            elif action == "facts":
                own = check_export_is_own(memory, group)
                found = memory.facts(group_id=group, entity=rng.choice([None, subject]),
                                     include_history=rng.random() < 0.5)
                assert all(f.group_id == group and f.id in own["fact"] for f in found)
            elif action == "stats":
                stats = memory.stats(group)
                counts = export_counts(memory.export(group_id=group))
                assert stats["episodes"] == counts["episode"]
                assert stats["facts"] == counts["fact"]
                assert stats["entities"] == counts["entity"]
            elif action == "forget_episode":
                episodes = [r["id"] for r in memory.export(group_id=group)
                            if r["type"] == "episode"]
                if episodes:
                    memory.forget(group_id=group, episode_id=rng.choice(episodes))
                # Someone else's episode id is not found in this group.
                other = rng.choice([g for g in groups if g != group])
                foreign = [r["id"] for r in memory.export(group_id=other)
                           if r["type"] == "episode"]
                if foreign:
                    with pytest.raises(GraphMemError):
                        memory.forget(group_id=group, episode_id=foreign[0])
            elif action == "forget_entity":
                memory.forget(group_id=group, entity=subject)
            elif action == "forget_all":
                memory.forget(group_id=group, all=True)
        except GraphMemError as exc:
            # Only "nothing to forget here" is expected.
            assert "no entity" in str(exc) or "no episode" in str(exc), exc
        for other in groups:
            if other != group:
                assert snapshot(memory, other) == before[other], (action, group, other)
        before[group] = snapshot(memory, group)
        check_export_is_own(memory, group)


def test_same_content_in_two_groups_is_two_episodes(memory: GraphMemory) -> None:
    a = memory.add_episode("Alice lives in Paris.", group_id="a", reference_time=BASE)
    b = memory.add_episode("Alice lives in Paris.", group_id="b", reference_time=BASE)
    assert a.episode_id != b.episode_id and not b.already_present
    assert memory.forget(group_id="a", episode_id=a.episode_id).episodes_removed == 1
    assert [f.target for f in memory.facts(group_id="b", entity="Alice")] == ["Paris"]
    assert memory.facts(group_id="a") == []
    with pytest.raises(GraphMemError):
        memory.forget(group_id="a", episode_id=b.episode_id)
    assert memory.episode(b.episode_id) is not None


def test_forgetting_an_entity_is_per_group(memory: GraphMemory) -> None:
    for group in ("a", "b"):
        memory.add_fact("Alice", "lives_in", "Paris", group_id=group, valid_from=BASE)
    before = snapshot(memory, "b")
    memory.forget(group_id="a", entity="Alice")
    assert snapshot(memory, "b") == before
    assert memory.history("Alice", group_id="a") == []
    assert [f.target for f in memory.history("Alice", group_id="b")] == ["Paris"]
