"""The recall filter in the store: ``filter_candidates`` narrows the subjects down (in SQL on
SQLite, in one parameterised Cypher file on Bolt), ``facts_with_values(subject_ids=...)`` reads
the values of a few subjects, and ``_filters.matches`` decides. The reference is what recall did
before: every value of the filtered predicates in the group, matched in Python."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from graphmem import GraphMemory, HashEmbedder
from graphmem._filters import matches, parse_filters
from graphmem.retrieve.retriever import RetrievalConfig, Retriever

G = "flt"
NUL_TEXT = 'é😀 "q" \\ \x00 nul'
HUGE = 10**20
ODD = 2**53 + 1  # not a float

# subject, predicate, value; unknown predicates are multi-valued, so "force" holds two values
# for "delta" and "zeta"
ROWS: list[tuple[str, str, Any]] = [
    ("alpha", "success", True),
    ("alpha", "force", 11.0),
    ("alpha", "label", "red"),
    ("alpha", "tags", "lab"),
    ("alpha", "tags", "table"),
    ("beta", "success", False),
    ("beta", "force", 18),
    ("beta", "label", "Red"),
    ("beta", "tags", "lab"),
    ("gamma", "success", 1),
    ("gamma", "force", "12"),
    ("gamma", "label", NUL_TEXT),
    ("delta", "force", 13),
    ("delta", "force", 12.999999999),
    ("delta", "label", "red"),
    ("epsilon", "success", "true"),
    ("epsilon", "force", HUGE),
    ("zeta", "force", float("inf")),
    ("zeta", "force", -0.0),
    ("eta", "force", ODD),
    ("eta", "tags", "table"),
    ("theta", "label", ""),
    ("mu", "force", 13.0),  # the bound of "< 13" itself: a store knows it fails
]

FILTERS: list[dict[str, Any]] = [
    {"success": True},
    {"success": False},
    {"success": 1},
    {"success": "true"},
    {"success": {"$ne": True}},
    {"success": {"$in": [True, 1]}},
    {"force": 13},
    {"force": 13.0},
    {"force": "12"},
    {"force": {"$lt": 13}},
    {"force": {"$lte": 13}},
    {"force": {"$gt": 12.999999999}},
    {"force": {"$gte": 12.999999999, "$lt": 13}},
    {"force": {"$gt": -1, "$lt": 12}},
    {"force": {"$gte": 1e20}},
    {"force": HUGE},
    {"force": {"$gt": HUGE - 1}},
    {"force": ODD},
    {"force": ODD - 1},
    {"force": {"$gt": ODD - 1}},
    {"force": {"$lt": float("inf")}},
    {"force": {"$gt": 1e308}},
    {"force": float("nan")},
    {"force": {"$ne": float("nan")}},
    {"force": 10**400},
    {"force": {"$lt": 10**400}},
    {"force": 0},
    {"force": -0.0},
    {"force": {"$in": [11, "12", True]}},
    {"force": {"$ne": 13}},
    {"force": {"$ne": 11}},
    {"force": {"$lt": "2"}},
    {"label": "red"},
    {"label": "Red"},
    {"label": NUL_TEXT},
    {"label": "é😀"},
    {"label": ""},
    {"label": {"$gt": ""}},
    {"label": {"$lt": "b"}},
    {"label": {"$gte": "é"}},
    {"label": {"$lt": 5}},
    {"label": {"$in": ["red", "nope"]}},
    {"label": {"$ne": "red"}},
    {"label": "\ud800"},
    {"label": {"$lt": "\ud800"}},
    {"label": {"$ne": "\ud800"}},
    {"label": {"$in": ["\ud800", "red"]}},
    {"label": "red' OR '1'='1"},
    {"label": {"$in": ["') OR 1=1 --", "red"]}, "force": {"$lt": "\" OR true //"}},
    {"tags": "lab"},
    {"tags": "table"},
    {"tags": {"$ne": "table"}},
    {"tags": "lab", "success": True},
    {"tags": {"$ne": "lab"}, "force": {"$gt": 0}},
    {"missing": 1},
    {"missing": {"$ne": 1}},
    {"missing": {"$ne": 1}, "success": {"$ne": False}},
    {"label": {"$ne": "red"}, "force": {"$ne": 13}},
]


@pytest.fixture
def filled(memory: GraphMemory) -> GraphMemory:
    for subject, predicate, value in ROWS:
        memory.add_fact(subject, predicate, value=value, group_id=G)
    # Not current: a value that ended, and one in another group.
    memory.add_fact(
        "kappa",
        "force",
        value=12.0,
        group_id=G,
        valid_from=datetime(2020, 1, 1, tzinfo=UTC),
        valid_to=datetime(2021, 1, 1, tzinfo=UTC),
    )
    memory.add_fact("alpha", "success", value=True, group_id="elsewhere")
    # An object fact has no value: "iota" is in no filter's reach.
    memory.add_fact("iota", "tags", "the lab", group_id=G)
    return memory


def _name_of(mem: GraphMemory, ids: list[str]) -> dict[str, str]:
    return {e.id: e.name for e in mem.store.find_entities_by_ids(G, ids)}


def _names(mem: GraphMemory, ids: set[str]) -> set[str]:
    return set(_name_of(mem, sorted(ids)).values())


def _reference(mem: GraphMemory, spec: dict[str, Any]) -> set[str]:
    conditions = parse_filters(spec)
    paths = sorted({c.path for c in conditions})
    values = mem.store.facts_with_values(G, paths, mem._view(None, None))
    return {sid for sid, vals in values.items() if matches(vals, conditions)}


@pytest.mark.parametrize("spec", FILTERS, ids=[repr(f)[:60] for f in FILTERS])
def test_store_narrowing_never_drops_a_subject_that_passes(
    filled: GraphMemory, spec: dict[str, Any]
) -> None:
    store, view = filled.store, filled._view(None, None)
    conditions = parse_filters(spec)
    paths = sorted({c.path for c in conditions})
    expected = _reference(filled, spec)
    candidates = store.filter_candidates(G, conditions, view, 1000)
    assert len(candidates) == len(set(candidates))
    assert expected <= set(candidates)
    values = store.facts_with_values(G, paths, view, candidates)
    assert {s for s in candidates if s in values and matches(values[s], conditions)} == expected


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ({"success": True}, {"alpha"}),
        ({"success": 1}, {"gamma"}),  # 1 is not True
        ({"success": "true"}, {"epsilon"}),  # nor is "true"
        ({"success": {"$ne": True}}, {"beta", "gamma", "epsilon"}),
        ({"force": 13}, {"delta", "mu"}),
        ({"force": 13.0}, {"delta", "mu"}),  # 13 == 13.0
        ({"force": "12"}, {"gamma"}),  # a string is not a number
        ({"force": {"$lt": 13}}, {"alpha", "delta", "zeta"}),  # any value; -0.0 < 13
        ({"force": {"$gt": 12.999999999}}, {"beta", "delta", "epsilon", "eta", "zeta", "mu"}),
        # Each condition on its own: zeta has Infinity >= 12.999999999 and -0.0 < 13.
        ({"force": {"$gte": 12.999999999, "$lt": 13}}, {"delta", "zeta"}),
        ({"force": HUGE}, {"epsilon"}),
        ({"force": ODD}, {"eta"}),
        ({"force": ODD - 1}, set()),  # exact, though equal as floats
        ({"force": {"$gt": 1e308}}, {"zeta"}),  # Infinity
        ({"force": float("nan")}, set()),
        ({"force": 0}, {"zeta"}),  # -0.0 == 0
        ({"force": {"$in": [11, "12", True]}}, {"alpha", "gamma"}),
        ({"force": {"$ne": 13}}, {"alpha", "beta", "gamma", "epsilon", "zeta", "eta"}),
        ({"force": {"$lt": "2"}}, {"gamma"}),  # strings compare with strings only
        ({"label": "red"}, {"alpha", "delta"}),  # case matters
        ({"label": NUL_TEXT}, {"gamma"}),
        ({"label": "é😀"}, set()),
        ({"label": ""}, {"theta"}),
        ({"label": {"$gt": ""}}, {"alpha", "beta", "gamma", "delta"}),
        ({"label": {"$gte": "é"}}, {"gamma"}),
        ({"label": {"$lt": "\ud800"}}, {"alpha", "beta", "gamma", "delta", "theta"}),
        ({"label": {"$ne": "\ud800"}}, {"alpha", "beta", "gamma", "delta", "theta"}),
        ({"tags": "table"}, {"alpha", "eta"}),  # any of the values
        ({"tags": {"$ne": "table"}}, {"beta"}),  # none of the values
        ({"tags": "lab", "success": True}, {"alpha"}),
        ({"missing": 1}, set()),
        ({"missing": {"$ne": 1}}, set()),  # a subject needs some value of a filtered path
        ({"missing": {"$ne": 1}, "success": {"$ne": False}}, {"alpha", "gamma", "epsilon"}),
    ],
    ids=lambda v: repr(v)[:50],
)
def test_filter_semantics_on_both_stores(
    filled: GraphMemory, spec: dict[str, Any], expected: set[str]
) -> None:
    assert _names(filled, _reference(filled, spec)) == expected
    result = filled.recall("force label success tags", group_id=G, filters=spec, k=100)
    assert {h.subject for h in result.facts} <= expected
    if expected:
        assert {h.subject for h in result.facts} == expected
    # Every returned item passes (issue 12): entities, and episodes through what they mention.
    assert {e.name for e in result.entities} <= expected
    mentioned: dict[str, set[str]] = {}
    for episode_id, entity_id in filled.store.episode_mentions([e.id for e in result.episodes]):
        mentioned.setdefault(episode_id, set()).add(entity_id)
    names = _name_of(filled, sorted({i for ids in mentioned.values() for i in ids}))
    for episode in result.episodes:
        assert {names[i] for i in mentioned.get(episode.id, set())} & expected, episode.content


def test_sqlite_narrows_plain_filters_exactly(tmp_path: Any) -> None:
    """SQLite evaluates every condition in SQL: for values without escapes or rounding edges the
    candidates are exactly the subjects that pass, so the check in Python drops none."""
    with GraphMemory(tmp_path / "m.db", embedder=HashEmbedder(32)) as mem:
        for subject, predicate, value in ROWS:
            if value not in (float("inf"), NUL_TEXT, 12.999999999):  # SQLite may keep these
                mem.add_fact(subject, predicate, value=value, group_id=G)
        view = mem._view(None, None)
        for spec in (
            {"success": True},
            {"force": {"$lt": 13}},  # 13.0 is not a candidate
            {"force": {"$gt": 13}},
            {"force": {"$lt": 13.0, "$ne": 11.0}},
            {"force": {"$in": [11, "12", True]}},
            {"label": {"$in": ["red", "nope"]}},
            {"tags": "lab", "success": True},
            {"tags": {"$ne": "table"}},
            {"label": {"$ne": "red"}, "force": {"$ne": 13}},
        ):
            conditions = parse_filters(spec)
            got = set(mem.store.filter_candidates(G, conditions, view, 1000))
            assert got == _reference(mem, spec), spec


def test_candidates_are_newest_first_and_limited(memory: GraphMemory) -> None:
    for i in range(6):
        memory.add_fact(f"run {i}", "ok", value=i % 2 == 0, group_id=G)
        memory.add_fact(f"run {i}", "force", value=float(i), group_id=G)
    memory.add_fact("run 0", "ok", value=True, group_id=G)  # a duplicate: no newer fact
    memory.add_fact("run 1", "force", value=9.0, group_id=G)  # multi-valued: a newer value
    store, view = memory.store, memory._view(None, None)
    ids = store.filter_candidates(G, parse_filters({"ok": True}), view, 10)
    names = _name_of(memory, ids)
    assert [names[i] for i in ids] == ["run 4", "run 2", "run 0"]
    assert store.filter_candidates(G, parse_filters({"ok": True}), view, 2) == ids[:2]
    assert store.filter_candidates(G, parse_filters({"ok": True}), view, 0) == []
    # Only $ne: by the newest value of any filtered path.
    ne = store.filter_candidates(G, parse_filters({"force": {"$ne": 4.0}}), view, 3)
    names = _name_of(memory, ne)
    assert [names[i] for i in ne] == ["run 1", "run 5", "run 3"]


def test_the_first_positive_condition_drives(memory: GraphMemory) -> None:
    """Candidates come newest first by the fact of the first condition that is not $ne."""
    memory.add_fact("old", "ok", value=True, group_id=G)
    memory.add_fact("new", "ok", value=True, group_id=G)
    memory.add_fact("new", "force", value=1.0, group_id=G)
    memory.add_fact("old", "force", value=2.0, group_id=G)
    store, view = memory.store, memory._view(None, None)
    ok_first = parse_filters({"x": {"$ne": 1}, "ok": True, "force": {"$gt": 0}})
    by_ok = store.filter_candidates(G, ok_first, view, 5)
    force_first = parse_filters({"force": {"$gt": 0}, "ok": True})
    by_force = store.filter_candidates(G, force_first, view, 5)
    names = _name_of(memory, by_ok)
    assert [names[i] for i in by_ok] == ["new", "old"]
    assert [names[i] for i in by_force] == ["old", "new"]


def test_recall_seeds_the_newest_passing_subjects(memory: GraphMemory) -> None:
    """A query that matches nothing still returns facts of subjects that pass: the newest
    expand_limit of them seed the expansion."""
    for i in range(8):
        memory.add_fact(f"probe {i}", "ok", value=i >= 2, group_id=G)
    config = RetrievalConfig(use_vectors=False, expand_limit=3)
    few = GraphMemory(memory.store, embedder=HashEmbedder(64), retrieval=config)
    result = few.recall("zzqx", group_id=G, filters={"ok": True}, k=20)
    assert {h.subject for h in result.facts} == {"probe 7", "probe 6", "probe 5"}
    config = RetrievalConfig(use_vectors=False)
    every = GraphMemory(memory.store, embedder=HashEmbedder(64), retrieval=config)
    result = every.recall("zzqx", group_id=G, filters={"ok": True}, k=20)
    assert {h.subject for h in result.facts} == {f"probe {i}" for i in range(2, 8)}


def test_a_loose_store_still_gives_exact_seeds(
    filled: GraphMemory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The retriever asks again, for more, when the store's candidates hold subjects that fail."""
    store = filled.store
    spec = {"force": {"$gt": 12.5}}
    passing = _names(filled, _reference(filled, spec))
    assert len(passing) == 6
    config = RetrievalConfig(use_vectors=False)
    before = GraphMemory(store, embedder=HashEmbedder(64), retrieval=config)
    assert {h.subject for h in before.recall("zzqx", group_id=G, filters=spec, k=50).facts} == (
        passing
    )
    everyone = sorted(store.facts_with_values(G, ["force", "label"], filled._view(None, None)))
    asked: list[int] = []

    def loose(group_id: str, conditions: Any, view: Any, limit: int) -> list[str]:
        asked.append(limit)
        return everyone[:limit]

    monkeypatch.setattr(store, "filter_candidates", loose)
    config = RetrievalConfig(use_vectors=False, expand_limit=2)
    conditions = parse_filters(spec)
    view = filled._view(None, None)
    seeds = Retriever(store, HashEmbedder(64), config)._passing_seeds(
        G, conditions, ["force"], view
    )
    passing_ids = _reference(filled, spec)
    assert asked[:2] == [2, 8]
    # Values are read once per candidate, not again when the retriever asks for more.
    read: list[str] = []
    real = store.facts_with_values

    def counting(group_id: str, predicates: Any, view: Any, subject_ids: Any = None) -> Any:
        read.extend(subject_ids or [])
        return real(group_id, predicates, view, subject_ids)

    monkeypatch.setattr(store, "facts_with_values", counting)
    Retriever(store, HashEmbedder(64), config)._passing_seeds(G, conditions, ["force"], view)
    assert len(read) == len(set(read))
    monkeypatch.setattr(store, "facts_with_values", real)
    assert seeds == [s for s in everyone if s in passing_ids][:2]
    after = GraphMemory(store, embedder=HashEmbedder(64), retrieval=config)
    got = {h.subject for h in after.recall("zzqx", group_id=G, filters=spec, k=50).facts}
    assert got and got <= set(_name_of(filled, seeds).values())


def test_sqlite_filter_queries_use_the_indexes(tmp_path: Any) -> None:
    with GraphMemory(tmp_path / "m.db", embedder=HashEmbedder(32)) as mem:
        for subject, predicate, value in ROWS:
            mem.add_fact(subject, predicate, value=value, group_id=G)
        store = mem.store
        conn = store.conn  # type: ignore[attr-defined]
        seen: list[str] = []
        conn.set_trace_callback(seen.append)
        view = mem._view(None, None)
        store.filter_candidates(G, parse_filters({"tags": "lab", "force": {"$lt": 3}}), view, 5)
        store.facts_with_values(G, ["force", "tags"], view, ["a", "b"])
        conn.set_trace_callback(None)
        plans = []
        for sql in seen:
            if "value_json" in sql and sql.lstrip().upper().startswith("SELECT"):
                rows = conn.execute("EXPLAIN QUERY PLAN " + sql)
                plans.append(" | ".join(str(r[3]) for r in rows))
        assert len(plans) == 2, seen
        candidates, values = plans
        assert "facts_group_predicate" in candidates and "facts_timeline" in candidates
        assert "TEMP B-TREE FOR ORDER BY" not in candidates  # stops at the limit
        assert "facts_timeline" in values and "facts_group_predicate" not in values
