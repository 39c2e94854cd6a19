"""Predicate families and the functional defaults (issue 13, item 3).

A family is a cardinality across predicates: between the same subject and object at most one
predicate of the family holds at a time. "Ana is my cousin, not my sister" corrects the
``sister_of`` fact although the predicate changed; a later plain ``cousin_of`` ends it where it
starts; forgetting the episode that did either restores it (forget = never ingested). Common
one-valued relations (``has_manager``, ``reports_to``, ``spouse_of``…) are functional by
default, so "Rui is my manager" after "Marta is my manager" leaves only Rui current.

The reconciler tests run on every store of the ``memory`` fixture (SQLite; Bolt when
``GRAPHMEM_TEST_BOLT_URI`` is set).
"""

from __future__ import annotations

import itertools
import os
import random
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from graphmem import GraphMemory, HashEmbedder
from graphmem._errors import PredicateError
from graphmem._models import EpisodeRecord
from graphmem._predicates import Predicate, PredicateRegistry, default_families
from graphmem.extract._base import ExtractionContext
from graphmem.extract.rules import RulesExtractor
from tests.helpers.reliability import diff_canonical, per_group

pytestmark = pytest.mark.timeout(180)


def t(year: int, month: int = 1) -> datetime:
    return datetime(year, month, 1, tzinfo=UTC)


def rows(memory: GraphMemory, group_id: str = "default") -> list[tuple[Any, ...]]:
    """(subject, predicate, target, from, to, believed) of every fact, sorted."""
    return sorted(
        (f.subject, f.predicate, f.target, f.valid_from, f.valid_to, f.expired_at is None)
        for f in memory.facts(group_id=group_id, include_history=True)
    )


def current(memory: GraphMemory, group_id: str = "default") -> list[tuple[str, str, str]]:
    return sorted((f.subject, f.predicate, f.target) for f in memory.facts(group_id=group_id))


def one(memory: GraphMemory, predicate: str, target: str) -> Any:
    (found,) = [
        f
        for f in memory.facts(include_history=True)
        if f.predicate == predicate and f.target == target
    ]
    return found


# ----------------------------------------------------------------------------- the registry

FUNCTIONAL_DEFAULTS = [
    "has_manager", "reports_to", "has_boss", "employed_by", "works_for", "spouse_of",
    "married_to", "born_in", "located_at", "lives_at", "timezone", "lives_in", "works_at",
]
MANY_ON_PURPOSE = ["manager_of", "manages", "sister_of", "cousin_of", "partner_of", "friend_of",
                   "knows", "member_of"]


@pytest.mark.parametrize("name", FUNCTIONAL_DEFAULTS)
def test_common_one_valued_relations_are_functional_and_described(name: str) -> None:
    registry = PredicateRegistry()
    assert registry.is_functional(name)
    assert registry.get(name).description


@pytest.mark.parametrize("name", MANY_ON_PURPOSE)
def test_relations_that_hold_several_times_stay_multi_valued(name: str) -> None:
    assert not PredicateRegistry().is_functional(name)


def test_built_in_families() -> None:
    registry = PredicateRegistry()
    assert registry.family("sister_of") == registry.family("cousin_of") == "kinship"
    assert registry.family("married_to") == registry.family("ex_of") == "relationship"
    assert registry.family("has_manager") == registry.family("manages") == "reporting"
    for loose in ("friend_of", "knows", "lives_in", "works_at", "likes", "colleague_of"):
        assert registry.family(loose) is None, loose
    reporting = registry.family_of("reports_to")
    assert reporting is not None
    assert reporting.functional("has_manager") and not reporting.functional("manages")
    assert set(registry.families()) == {"kinship", "relationship", "reporting"}
    assert all(registry.get(p).description for f in registry.families().values()
               for p in f.members)


def test_a_user_family_and_its_checks() -> None:
    registry = PredicateRegistry(
        [Predicate(name="mentor_of", family="mentoring"),
         Predicate(name="mentee_of", family="mentoring", cardinality="one")]
    )
    family = registry.family_of("mentee_of")
    assert family is not None and set(family.members) == {"mentor_of", "mentee_of"}
    assert family.functional("mentee_of") and not family.functional("mentor_of")
    registry.register(Predicate(name="sister_of"))  # a re-registration without family leaves it
    assert registry.family("sister_of") is None
    with pytest.raises(PredicateError, match="family"):
        registry.register(Predicate(name="x_of", family="Not A Name"))


def test_default_families_take_the_callers_cardinality() -> None:
    assert default_families()["manages"].functional("manages") is False
    assert default_families({"manages": True})["has_manager"].functional("manages") is True


# ----------------------------------------------------------------------------- functional defaults


def test_a_new_manager_replaces_the_old_one(memory: GraphMemory) -> None:
    memory.add_fact("Maya", "has_manager", "Marta", valid_from=t(2023))
    result = memory.add_fact("Maya", "has_manager", "Rui", valid_from=t(2024))
    assert len(result.superseded) == 1
    assert current(memory) == [("Maya", "has_manager", "Rui")]
    assert one(memory, "has_manager", "Marta").valid_to == t(2024)


def test_back_to_an_earlier_manager(memory: GraphMemory) -> None:
    for name, year in (("Rui", 2022), ("Marta", 2023), ("Rui", 2024)):
        memory.add_fact("Maya", "has_manager", name, valid_from=t(year))
    assert current(memory) == [("Maya", "has_manager", "Rui")]
    assert rows(memory) == [
        ("Maya", "has_manager", "Marta", t(2023), t(2024), True),
        ("Maya", "has_manager", "Rui", t(2022), t(2023), True),
        ("Maya", "has_manager", "Rui", t(2024), None, True),
    ]


# ----------------------------------------------------------------------------- families


def test_a_correction_that_changes_the_predicate_expires_the_fact(memory: GraphMemory) -> None:
    memory.add_fact("Ana", "sister_of", "Maya", valid_from=t(2020))
    result = memory.add_fact("Ana", "cousin_of", "Maya", correction=True)
    assert result.facts_added == 1
    sister, cousin = one(memory, "sister_of", "Maya"), one(memory, "cousin_of", "Maya")
    assert sister.expired_at is not None and sister.valid_to is None  # never true; valid time kept
    assert cousin.is_current() and cousin.valid_from == t(2020)  # takes over its start
    assert sister.superseded_by == cousin.id and sister.reason == "correction"
    assert current(memory) == [("Ana", "cousin_of", "Maya")]


def test_a_later_member_of_the_family_ends_the_earlier_one(memory: GraphMemory) -> None:
    memory.add_fact("Ana", "sister_of", "Maya", valid_from=t(2020))
    result = memory.add_fact("Ana", "cousin_of", "Maya", valid_from=t(2022))
    sister, cousin = one(memory, "sister_of", "Maya"), one(memory, "cousin_of", "Maya")
    assert result.superseded == [(sister.id, cousin.id)]
    assert sister.valid_to == t(2022) and sister.expired_at is None
    assert sister.superseded_by == cousin.id and sister.reason == "update"
    assert current(memory) == [("Ana", "cousin_of", "Maya")]
    assert [h.target for h in memory.recall("Ana sister", as_of=t(2021)).facts
            if h.predicate == "sister_of"] == ["Maya"]


def test_other_entity_pairs_are_left_alone(memory: GraphMemory) -> None:
    """The family limits each pair of entities: a cousin of Bea is no correction of a sister of
    Maya, and a person has several cousins (``cousin_of`` stays multi-valued)."""
    memory.add_fact("Ana", "sister_of", "Maya", valid_from=t(2020))
    memory.add_fact("Ana", "cousin_of", "Bea", valid_from=t(2021), correction=True)
    memory.add_fact("Ana", "cousin_of", "Carl", valid_from=t(2022))
    memory.add_fact("Ana", "friend_of", "Maya", valid_from=t(2023))  # not in the family
    assert current(memory) == [
        ("Ana", "cousin_of", "Bea"), ("Ana", "cousin_of", "Carl"), ("Ana", "friend_of", "Maya"),
        ("Ana", "sister_of", "Maya"),
    ]


def test_same_start_in_one_family_is_a_conflict(memory: GraphMemory) -> None:
    memory.add_fact("Ana", "sister_of", "Maya", valid_from=t(2020), source="a")
    result = memory.add_fact("Ana", "cousin_of", "Maya", valid_from=t(2020), source="b")
    assert len(result.contradictions) == 1
    assert len(current(memory)) == 2


def test_a_negation_ends_only_its_own_predicate(memory: GraphMemory) -> None:
    memory.add_fact("Ana", "sister_of", "Maya", valid_from=t(2020))
    memory.add_fact("Ana", "cousin_of", "Maya", valid_from=t(2022))
    memory.add_fact("Ana", "cousin_of", "Maya", valid_from=t(2023), negated=True)
    assert current(memory) == []
    assert one(memory, "sister_of", "Maya").valid_to == t(2022)
    assert one(memory, "cousin_of", "Maya").valid_to == t(2023)


def test_a_relation_that_comes_back_is_its_own_fact(memory: GraphMemory) -> None:
    memory.add_fact("Maya", "married_to", "Bob", valid_from=t(2010))
    memory.add_fact("Maya", "ex_of", "Bob", valid_from=t(2015))
    memory.add_fact("Maya", "married_to", "Bob", valid_from=t(2020), source="again")
    assert rows(memory) == [
        ("Maya", "ex_of", "Bob", t(2015), t(2020), True),
        ("Maya", "married_to", "Bob", t(2010), t(2015), True),
        ("Maya", "married_to", "Bob", t(2020), None, True),
    ]


def test_a_functional_member_is_one_value_and_one_relation(memory: GraphMemory) -> None:
    """``has_manager`` is one manager at a time (across people) and, in the reporting family,
    one relation per pair (across predicates)."""
    memory.add_fact("Maya", "has_manager", "Rui", valid_from=t(2020))
    memory.add_fact("Maya", "manages", "Rui", valid_from=t(2022))  # Rui now reports to Maya
    memory.add_fact("Maya", "has_manager", "Marta", valid_from=t(2021))
    assert rows(memory) == [
        ("Maya", "has_manager", "Marta", t(2021), None, True),
        ("Maya", "has_manager", "Rui", t(2020), t(2021), True),
        ("Maya", "manages", "Rui", t(2022), None, True),
    ]


FAMILY_STEPS = [("sister_of", 2019), ("cousin_of", 2020), ("sister_of", 2022)]


def test_family_timelines_do_not_depend_on_ingest_order(memory: GraphMemory) -> None:
    results: dict[str, list[tuple[int, ...]]] = {}
    for number, order in enumerate(itertools.permutations(range(len(FAMILY_STEPS)))):
        group = f"order-{number}"
        for index in order:
            predicate, year = FAMILY_STEPS[index]
            memory.add_fact("Ana", predicate, "Maya", valid_from=t(year), source=f"s{index}",
                            group_id=group)
        results.setdefault(repr(rows(memory, group)), []).append(order)
    assert len(results) == 1, results
    (only,) = results
    assert only == repr([
        ("Ana", "cousin_of", "Maya", t(2020), t(2022), True),
        ("Ana", "sister_of", "Maya", t(2019), t(2020), True),
        ("Ana", "sister_of", "Maya", t(2022), None, True),
    ])


# ----------------------------------------------------------------------------- forget


def test_forgetting_the_cross_predicate_correction_restores_the_fact(memory: GraphMemory) -> None:
    memory.add_fact("Ana", "sister_of", "Maya", valid_from=t(2020))
    correction = memory.add_fact("Ana", "cousin_of", "Maya", correction=True)
    memory.forget(episode_id=correction.episode_id)
    assert rows(memory) == [("Ana", "sister_of", "Maya", t(2020), None, True)]
    assert current(memory) == [("Ana", "sister_of", "Maya")]


def test_forgetting_the_later_member_reopens_the_earlier_one(memory: GraphMemory) -> None:
    memory.add_fact("Ana", "sister_of", "Maya", valid_from=t(2020))
    later = memory.add_fact("Ana", "cousin_of", "Maya", valid_from=t(2022))
    memory.forget(episode_id=later.episode_id)
    assert rows(memory) == [("Ana", "sister_of", "Maya", t(2020), None, True)]
    assert one(memory, "sister_of", "Maya").superseded_by is None


def test_forgetting_the_corrected_fact_leaves_the_correction_as_a_plain_fact(
    memory: GraphMemory,
) -> None:
    first = memory.add_fact("Ana", "sister_of", "Maya", valid_from=t(2020), group_id="full")
    memory.add_fact("Ana", "cousin_of", "Maya", valid_from=t(2021), correction=True,
                    group_id="full")
    memory.forget(episode_id=first.episode_id, group_id="full")
    memory.add_fact("Ana", "cousin_of", "Maya", valid_from=t(2021), correction=True,
                    group_id="without")
    left, right = per_group(memory, "full"), per_group(memory, "without")
    assert left == right, diff_canonical(left, right)


def test_forgetting_a_second_source_keeps_the_supersession(memory: GraphMemory) -> None:
    """The later member stays while any episode still supports it."""
    memory.add_fact("Ana", "sister_of", "Maya", valid_from=t(2020))
    memory.add_fact("Ana", "cousin_of", "Maya", valid_from=t(2022), source="a")
    again = memory.add_fact("Ana", "cousin_of", "Maya", valid_from=t(2022), source="b")
    memory.forget(episode_id=again.episode_id)
    assert current(memory) == [("Ana", "cousin_of", "Maya")]
    assert one(memory, "sister_of", "Maya").valid_to == t(2022)


def _family_plan(seed: int, size: int) -> list[dict[str, Any]]:
    """A random history of two families for one person: kinship between Ana and two people
    (multi-valued members) and reporting (``has_manager`` functional, ``manages`` not)."""
    rng = random.Random(seed)
    base = datetime(2020, 1, 1, tzinfo=UTC)
    steps: list[dict[str, Any]] = []
    for number in range(size):
        if rng.random() < 0.6:
            subject = "Ana"
            predicate = rng.choice(["sister_of", "cousin_of", "brother_of"])
            target = rng.choice(["Maya", "Maya", "Bea"])
        else:
            subject = "Maya"
            predicate = rng.choice(["has_manager", "has_manager", "manages"])
            target = rng.choice(["Rui", "Marta"])
        kind = rng.choices(["assert", "negate", "correct"], weights=[6, 1, 2])[0]
        steps.append({
            "subject": subject,
            "predicate": predicate,
            "object": target,
            "valid_from": base + timedelta(days=365 * rng.randrange(4)),
            "negated": kind == "negate",
            "correction": kind == "correct",
            "source": f"s{number}",
        })
    return steps


# A wider sweep: GRAPHMEM_FAMILY_SEEDS=300 GRAPHMEM_FAMILY_STEPS=6.
FAMILY_SEEDS = int(os.environ.get("GRAPHMEM_FAMILY_SEEDS", "6"))
FAMILY_STEP_COUNT = int(os.environ.get("GRAPHMEM_FAMILY_STEPS", "5"))


@pytest.mark.parametrize("seed", range(FAMILY_SEEDS))
def test_forgetting_a_family_episode_equals_never_ingesting_it(
    memory: GraphMemory, seed: int
) -> None:
    """Forget's contract across predicates: every episode of a random family history is
    forgotten in turn and compared with a group that never ingested it."""
    steps = _family_plan(seed, FAMILY_STEP_COUNT)
    for skip in range(len(steps)):
        full, without = f"full-{seed}-{skip}", f"without-{seed}-{skip}"
        ids = [memory.add_fact(**step, group_id=full).episode_id for step in steps]
        memory.forget(episode_id=ids[skip], group_id=full)
        for index, step in enumerate(steps):
            if index != skip:
                memory.add_fact(**step, group_id=without)
        left, right = per_group(memory, full), per_group(memory, without)
        assert left == right, f"forgetting step {skip} of {steps}:\n" + diff_canonical(left, right)


def test_a_user_family_is_reconciled_on_ingest(tmp_path: Any) -> None:
    predicates = [Predicate(name="mentor_of", family="mentoring"),
                  Predicate(name="mentee_of", family="mentoring")]
    with GraphMemory(tmp_path / "m.db", embedder=HashEmbedder(32),
                     predicates=predicates) as mem:
        mem.add_fact("Ana", "mentee_of", "Rui", valid_from=t(2020))
        mem.add_fact("Ana", "mentor_of", "Rui", valid_from=t(2023))
        assert current(mem) == [("Ana", "mentor_of", "Rui")]


def test_a_user_family_is_replayed_by_the_forget_plan(tmp_path: Any) -> None:
    """The forget plan replays a user family's members together when given the registry's
    families (``plan_forget_episodes(..., families=)``)."""
    from graphmem._time import record_ms
    from graphmem.forget.plan import plan_forget_episodes

    predicates = [Predicate(name="mentor_of", family="mentoring"),
                  Predicate(name="mentee_of", family="mentoring")]
    with GraphMemory(tmp_path / "m.db", embedder=HashEmbedder(32),
                     predicates=predicates) as mem:
        mem.add_fact("Ana", "mentee_of", "Rui", valid_from=t(2020))
        later = mem.add_fact("Ana", "mentor_of", "Rui", valid_from=t(2023))
        families = mem.predicates.families_by_predicate()
        functional = {p.name: p.cardinality == "one" for p in mem.predicates}
        mem.store.write(lambda r: plan_forget_episodes(
            r, "default", [later.episode_id], functional, record_ms(), families))
        assert current(mem) == [("Ana", "mentee_of", "Rui")]


def test_forget_honours_a_user_family(tmp_path: Any) -> None:
    predicates = [Predicate(name="mentor_of", family="mentoring"),
                  Predicate(name="mentee_of", family="mentoring")]
    with GraphMemory(tmp_path / "m.db", embedder=HashEmbedder(32),
                     predicates=predicates) as mem:
        mem.add_fact("Ana", "mentee_of", "Rui", valid_from=t(2020))
        later = mem.add_fact("Ana", "mentor_of", "Rui", valid_from=t(2023))
        mem.forget(episode_id=later.episode_id)
        assert current(mem) == [("Ana", "mentee_of", "Rui")]


# ----------------------------------------------------------------------------- rules extractor


def extract(text: str, speaker: str = "Maya") -> list[tuple[Any, ...]]:
    now = t(2024)
    episode = EpisodeRecord(id="e", group_id="g", source=None, kind="message", content=text,
                            reference_time=now, ingested_at=now, content_hash="h",
                            status="pending")
    context = ExtractionContext(speaker=speaker, predicates=PredicateRegistry())
    found = RulesExtractor().extract(episode, context).facts
    return [(f.subject, f.predicate, f.object, f.kind) for f in found]


@pytest.mark.parametrize(
    ("text", "facts"),
    [
        ("Ana is my sister.", [("Ana", "sister_of", "Maya", "assert")]),
        ("My sister is Ana.", [("Ana", "sister_of", "Maya", "assert")]),
        ("Ana is my cousin, not my sister.", [("Ana", "cousin_of", "Maya", "correct")]),
        ("Actually, Ana is my cousin.", [("Ana", "cousin_of", "Maya", "correct")]),
        ("Marta is my manager.", [("Maya", "has_manager", "Marta", "assert")]),
        ("My boss is Rui.", [("Maya", "has_manager", "Rui", "assert")]),
        ("Marta left, Rui is my manager again.", [("Maya", "has_manager", "Rui", "assert")]),
        ("She is my sister.", []),
        ("Ana is my old manager.", []),
    ],
)
def test_rules_read_relatives_and_managers(text: str, facts: list[tuple[Any, ...]]) -> None:
    assert extract(text) == facts


def say(memory: GraphMemory, text: str, when: datetime) -> Any:
    result = memory.add_episode(text, metadata={"speaker": "Maya"}, reference_time=when)
    assert result.status == "extracted"
    return result


def test_rules_kinship_correction_across_predicates(memory: GraphMemory) -> None:
    say(memory, "Ana is my sister.", t(2024, 1))
    correction = say(memory, "Ana is my cousin, not my sister.", t(2024, 3))
    sister, cousin = one(memory, "sister_of", "Maya"), one(memory, "cousin_of", "Maya")
    assert sister.expired_at is not None and sister.superseded_by == cousin.id
    assert sister.reason == "correction"
    assert cousin.is_current() and cousin.valid_from == t(2024, 1)
    assert current(memory) == [("Ana", "cousin_of", "Maya")]
    assert "Ana is Maya's cousin." in memory.recall("Who is Ana?").to_context()
    memory.forget(episode_id=correction.episode_id)
    assert current(memory) == [("Ana", "sister_of", "Maya")]
    assert one(memory, "sister_of", "Maya").expired_at is None


def test_rules_manager_change_and_back(memory: GraphMemory) -> None:
    say(memory, "Marta is my manager.", t(2024, 1))
    say(memory, "Rui is my manager.", t(2024, 3))
    assert current(memory) == [("Maya", "has_manager", "Rui")]
    assert one(memory, "has_manager", "Marta").valid_to == t(2024, 3)
    say(memory, "Marta is my manager.", t(2024, 5))
    back = say(memory, "Marta left, Rui is my manager again.", t(2024, 7))
    assert current(memory) == [("Maya", "has_manager", "Rui")]
    assert [(f.target, f.valid_to) for f in memory.history("Maya", predicate="has_manager")] == [
        ("Marta", t(2024, 3)), ("Rui", t(2024, 5)), ("Marta", t(2024, 7)), ("Rui", None),
    ]
    memory.forget(episode_id=back.episode_id)
    assert current(memory) == [("Maya", "has_manager", "Marta")]
