"""Group scoping inside the Neo4j store's indexes, on a real Bolt server, and episode embeddings.

Full-text search requires the group's token inside the index (migration 6), so another group's
rows are never returned, even when it holds a thousand far better matches, and the group's own
best ``n`` come back in full, from one query. Vectors: a group is scanned exactly through its
group_id index (one query, no other group's row read); a group too large to scan goes to the
vector index (filtered in the index on Neo4j 2026.01+, widened and filtered after elsewhere) and
still never answers with another group's rows. An episode's embedding is written with its plan.
Entity names and alias keys are looked up through (group_id, key) indexes (migration 7): a name
that 200 other groups share is found in its own group only, reading only that group's rows.

Needs a Bolt server: ``python scripts/bolt_server.py start --dir .bolt --bolt-port 0`` and
``. .bolt/env.sh`` (ArcadeDB), or ``NEO4J_URI`` (+ ``NEO4J_USERNAME``/``NEO4J_PASSWORD``).
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pytest

from graphmem._ids import entity_key
from graphmem.store._base import EntityRow, EpisodeRow, FactRow, StoreReader, Vector, WritePlan
from graphmem.store._vectors import quantize

BOLT_URI = os.environ.get("NEO4J_URI") or os.environ.get("GRAPHMEM_TEST_BOLT_URI")
pytestmark = [
    pytest.mark.integration,
    pytest.mark.timeout(600),
    pytest.mark.skipif(
        not BOLT_URI,
        reason="no Bolt server configured: run `python scripts/bolt_server.py start --dir .bolt "
        "--bolt-port 0` and `. .bolt/env.sh` (GRAPHMEM_TEST_BOLT_URI), or set NEO4J_URI",
    ),
]

if BOLT_URI:
    from graphmem.store.neo4j import Neo4jStore
    from graphmem.store.neo4j import cypher as _cypher
    from graphmem.store.neo4j import search as _neo4j_search

MINE, THEIRS = "mine", "theirs"
QUERY = "violet harbor lantern"
DIM = 16
T0 = 1_700_000_000_000


@pytest.fixture
def store() -> Iterator[Neo4jStore]:
    assert BOLT_URI
    s = Neo4jStore(BOLT_URI, max_retry_time=5)
    s.connect()
    s.wipe_all_for_tests(keep_schema=True)
    s.migrate()
    s.set_meta("embedder", json.dumps({"name": "test", "dim": DIM}))
    yield s
    s.wipe_all_for_tests(keep_schema=True)
    s.close()


def cypher(store: Neo4jStore, text: str, **params: object) -> list[dict[str, object]]:
    """Test-only raw Cypher (the store itself only runs named files)."""
    records, _, _ = store.driver.execute_query(text, parameters_=params, database_=store._database)
    return [dict(r) for r in records]


def unit(seed: int) -> Vector:
    v = np.random.default_rng(seed).normal(size=DIM).astype(np.float32)
    return np.asarray(v / np.linalg.norm(v), dtype=np.float32)


def episode(group: str, i: int, content: str) -> EpisodeRow:
    return EpisodeRow(
        id=f"{group}-ep-{i}",
        group_id=group,
        source="chat",
        kind="message",
        content=content,
        reference_time=T0 + i,
        ingested_at=T0 + i,
        content_hash=f"{group}-{i}",
        metadata={"speaker": f"{group}-speaker-{i % 3}"},
    )


def entity(group: str, i: int, name: str) -> EntityRow:
    return EntityRow(
        id=f"{group}-ent-{i}", group_id=group, name=name, key=name.lower(), type="thing"
    )


def fact(group: str, i: int, subject: str, statement: str, vector: Vector | None = None) -> FactRow:
    return FactRow(
        id=f"{group}-fact-{i}",
        group_id=group,
        subject_id=subject,
        predicate="says",
        object_id=None,
        value_json=json.dumps(i),
        statement=statement,
        valid_from=T0,
        valid_to=None,
        recorded_at=T0 + i,
        embedding=vector,
    )


def mine_text(i: int) -> str:
    """Group "mine": 5 rows name all three query words, 10 name one, 35 none; all of the same
    length, so a row with more query words ranks higher."""
    if i < 5:
        return f"violet harbor lantern seen by keeper number {i:03d} today"
    if i < 15:
        return f"violet stones counted by keeper number {i:03d} at dusk today"
    return f"grey stones counted by keeper number {i:03d} at dusk today"


def theirs_text(i: int) -> str:
    """Group "theirs": 1,000 rows, each a far better match (the three words, twice, short)."""
    return f"violet harbor lantern violet harbor lantern {i}"


def reads(store: Neo4jStore, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The names of the read queries the store's searches run from now on."""
    names: list[str] = []
    search = store._search
    real: Callable[..., Any] = search._read

    def counting(name: str, /, **params: Any) -> Any:
        names.append(name)
        return real(name, **params)

    monkeypatch.setattr(search, "_read", counting)
    return names


# ---------------------------------------------------------------------- full text
@pytest.fixture
def texts(store: Neo4jStore) -> Neo4jStore:
    """Episodes, entities and facts: 50 of "mine" (mine_text), 1,000 of "theirs"."""
    store.insert_episodes([episode(MINE, i, mine_text(i)) for i in range(50)])
    store.insert_episodes([episode(THEIRS, i, theirs_text(i)) for i in range(1000)])
    for group, n, text in ((MINE, 50, mine_text), (THEIRS, 1000, theirs_text)):
        # entity 0 is the facts' subject; entities 1..n are named like the texts
        entities = [entity(group, 0, f"{group} keeper")]
        entities += [entity(group, i + 1, text(i)) for i in range(n)]
        facts = [fact(group, i, f"{group}-ent-0", text(i)) for i in range(n)]
        store.write(lambda _, e=entities, f=facts: WritePlan(entities_new=e, facts_new=f))
    return store


def prefixed(group: str, kind: str, ids: range) -> set[str]:
    return {f"{group}-{kind}-{i}" for i in ids}


@pytest.mark.parametrize(
    ("search", "kind", "shift"),
    [("text_episodes", "ep", 0), ("text_facts", "fact", 0), ("text_entities", "ent", 1)],
)
def test_fulltext_keeps_to_the_group_inside_the_index(
    texts: Neo4jStore, monkeypatch: pytest.MonkeyPatch, search: str, kind: str, shift: int
) -> None:
    store = texts
    run = getattr(store, search)
    names = reads(store, monkeypatch)
    best = run(MINE, QUERY, 5)  # 1,000 better rows of "theirs" match first
    assert names == ["search/fulltext"]  # one query: no widening, no filtering after
    assert {i for i, _ in best} == prefixed(MINE, kind, range(shift, 5 + shift))
    more = run(MINE, QUERY, 15)
    assert [i for i, _ in more[:5]] == [i for i, _ in best]
    assert {i for i, _ in more} == prefixed(MINE, kind, range(shift, 15 + shift))
    every = run(MINE, QUERY, 100)
    assert len(every) == 15 and all(i.startswith(f"{MINE}-") for i, _ in every)
    scores = [s for _, s in every]
    assert scores == sorted(scores, reverse=True) and scores[-1] > 0
    assert scores[0] > scores[5]  # three words beat one: the group clause adds nothing
    theirs = run(THEIRS, QUERY, 20)
    assert len(theirs) == 20 and all(i.startswith(f"{THEIRS}-") for i, _ in theirs)
    assert run("nobody", QUERY, 5) == []


def test_statements_and_episodes_are_stemmed_names_are_not(store: Neo4jStore) -> None:
    """Migration 6's indexes use Neo4j's analyzers on every server: english (stemming) for
    statements and episodes, none for entity names."""
    store.insert_episodes([episode(MINE, 0, "We painted the harbor walls")])
    store.write(
        lambda _: WritePlan(
            entities_new=[entity(MINE, 0, "Painters Guild")],
            facts_new=[fact(MINE, 0, f"{MINE}-ent-0", "Alice lives in Rome")],
        )
    )
    assert [i for i, _ in store.text_episodes(MINE, "paint", 5)] == [f"{MINE}-ep-0"]
    assert [i for i, _ in store.text_facts(MINE, "live", 5)] == [f"{MINE}-fact-0"]
    assert store.text_entities(MINE, "painter", 5) == []
    assert [i for i, _ in store.text_entities(MINE, "painters", 5)] == [f"{MINE}-ent-0"]


def test_a_query_no_word_scores_in_finds_nothing(
    texts: Neo4jStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Neo4j's english analyzer drops a query made only of its stop words ("is it the"),
    leaving the group clause alone, which matches every row of the group with score 0: such
    hits are no hits."""

    def group_clause_only(text: str, group_id: str, fields: object) -> str:
        return f'+group_token:"{_neo4j_search.group_token(group_id)}"^0'

    monkeypatch.setattr(_neo4j_search, "group_lucene_query", group_clause_only)
    assert texts.text_episodes(MINE, "is it the", 5) == []
    assert texts.text_facts(MINE, "is it the", 5) == []


def test_group_tokens_of_older_nodes_are_written_by_migration_6(texts: Neo4jStore) -> None:
    store = texts
    for label in ("Episode", "Fact", "Entity"):
        cypher(store, f"MATCH (n:{label}) WHERE n.group_id = $g REMOVE n.group_token", g=MINE)
    assert store.text_episodes(MINE, QUERY, 5) == []
    cypher(store, "MATCH (m:GraphmemMigration {version: 6}) DELETE m")
    assert store.migrate() == ["6: group-scoped full-text indexes (group tokens)"]
    assert {i for i, _ in store.text_episodes(MINE, QUERY, 5)} == prefixed(MINE, "ep", range(5))
    assert {i for i, _ in store.text_facts(MINE, QUERY, 5)} == prefixed(MINE, "fact", range(5))
    assert {i for i, _ in store.text_entities(MINE, QUERY, 5)} == prefixed(MINE, "ent", range(1, 6))
    assert store.migrate() == []


def test_speakers_and_context_read_only_the_group(texts: Neo4jStore) -> None:
    store = texts
    assert store.speakers(MINE) == {f"mine-speaker-{i}": f"mine-speaker-{i}" for i in range(3)}
    speakers, neighbours = store.episode_context([f"{MINE}-ep-0", f"{MINE}-ep-49"], window=2)
    assert neighbours[f"{MINE}-ep-0"] == [(f"{MINE}-ep-1", 1), (f"{MINE}-ep-2", 2)]
    assert neighbours[f"{MINE}-ep-49"] == [(f"{MINE}-ep-48", 1), (f"{MINE}-ep-47", 2)]
    assert all(e.startswith(f"{MINE}-") for e in speakers)


# ---------------------------------------------------------------------- vectors
def embed_episodes(store: Neo4jStore, vectors: dict[str, Vector]) -> None:
    def plan(episode_id: str, vector: Vector) -> Callable[[object], WritePlan]:
        return lambda _: WritePlan(
            episode_id=episode_id,
            episode_status=("extracted", "test", None),
            episode_embedding=vector,
        )

    store.write_many([plan(eid, v) for eid, v in vectors.items()])


@pytest.fixture
def embedded(store: Neo4jStore) -> tuple[Neo4jStore, Vector, dict[str, Vector]]:
    """30 episodes of "mine" and 200 of "theirs" with embeddings; "theirs" holds the query
    vector itself and 199 vectors nearer to it than any of "mine"."""
    query = unit(0)
    mine = {f"{MINE}-ep-{i}": unit(100 + i) for i in range(30)}
    theirs: dict[str, Vector] = {f"{THEIRS}-ep-0": query}
    for i in range(1, 200):
        near = query + 0.05 * unit(1000 + i)
        theirs[f"{THEIRS}-ep-{i}"] = np.asarray(near / np.linalg.norm(near), dtype=np.float32)
    store.insert_episodes([episode(MINE, i, f"turn {i}") for i in range(30)])
    store.insert_episodes([episode(THEIRS, i, f"turn {i}") for i in range(200)])
    embed_episodes(store, mine)
    embed_episodes(store, theirs)
    return store, query, mine


def nearest(query: Vector, vectors: dict[str, Vector], n: int) -> list[tuple[str, float]]:
    scored = sorted(((eid, float(v @ query)) for eid, v in vectors.items()), key=lambda h: -h[1])
    return scored[:n]


def test_episode_embedding_is_stored_with_its_plan(
    embedded: tuple[Neo4jStore, Vector, dict[str, Vector]],
) -> None:
    store, _, mine = embedded
    (row,) = cypher(
        store,
        "MATCH (e:Episode {id: $id}) RETURN e.embedding AS v, e.status AS s",
        id=f"{MINE}-ep-3",
    )
    assert row["s"] == "extracted"
    # Stored as the SQLite store keeps it (int8 with a scale, issue 14): exactly its rounding.
    stored = quantize(mine[f"{MINE}-ep-3"])
    assert stored is not None
    assert np.allclose(np.asarray(row["v"], dtype=np.float32), stored, atol=1e-6)
    rows = list(store.export_rows(None))
    exported = {r["id"]: r for r in rows if r["type"] == "episode"}
    assert exported[f"{MINE}-ep-3"]["embedding"]  # base64 float32, like facts
    before = store.vector_episodes(MINE, mine[f"{MINE}-ep-3"], 5)
    store.wipe_all_for_tests(keep_schema=True)
    store.migrate()
    assert store.import_rows(rows)["episodes"] == 230
    assert list(store.export_rows(None)) == rows
    assert store.vector_episodes(MINE, mine[f"{MINE}-ep-3"], 5) == before


def test_vector_episodes_returns_the_groups_nearest_only(
    embedded: tuple[Neo4jStore, Vector, dict[str, Vector]], monkeypatch: pytest.MonkeyPatch
) -> None:
    store, query, mine = embedded
    names = reads(store, monkeypatch)
    hits = store.vector_episodes(MINE, query, 5)
    assert names == ["search/vector_scan_episodes"]  # exact, through the group's index only
    expected = nearest(query, mine, 5)
    assert [h[0] for h in hits] == [e[0] for e in expected]
    # cosine of the stored (int8-rounded) vectors: within the rounding of the unrounded ones
    assert np.allclose([h[1] for h in hits], [e[1] for e in expected], atol=2e-2)
    assert len(store.vector_episodes(MINE, query, 100)) == 30
    theirs = store.vector_episodes(THEIRS, query, 3)
    assert theirs[0][0] == f"{THEIRS}-ep-0" and theirs[0][1] == pytest.approx(1.0, abs=1e-2)
    assert store.vector_episodes("nobody", query, 5) == []


def test_a_zero_vector_is_skipped(store: Neo4jStore) -> None:
    """A zero embedding (e.g. a hashing embedder's answer to text with no words) has no cosine:
    the scan skips it, as the vector indexes do."""
    store.insert_episodes([episode(MINE, i, f"turn {i}") for i in range(3)])
    zero = np.zeros(DIM, dtype=np.float32)
    embed_episodes(store, {f"{MINE}-ep-0": unit(1), f"{MINE}-ep-1": zero, f"{MINE}-ep-2": unit(2)})
    hits = store.vector_episodes(MINE, unit(1), 5)
    assert [h[0] for h in hits][:1] == [f"{MINE}-ep-0"]
    assert {h[0] for h in hits} == {f"{MINE}-ep-0", f"{MINE}-ep-2"}


def test_a_group_too_large_to_scan_still_keeps_to_itself(
    embedded: tuple[Neo4jStore, Vector, dict[str, Vector]], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Above SCAN_MAX rows the vector index answers (filtered in the index on Neo4j 2026.01+,
    widened and filtered after elsewhere): still only the group's rows, and the same best."""
    store, query, mine = embedded
    monkeypatch.setattr(_neo4j_search, "SCAN_MAX", 10)
    names = reads(store, monkeypatch)
    hits = store.vector_episodes(MINE, query, 5)
    assert names[0] == "search/vector_scan_episodes" and len(names) >= 2
    assert all(h[0] in mine for h in hits) and len(hits) == 5
    assert hits[0][0] == nearest(query, mine, 1)[0][0]  # approximate index: the best at least
    names.clear()
    store.vector_episodes(MINE, query, 5)
    assert "search/vector_scan_episodes" not in names  # remembered as large


def test_vector_facts_and_entities_keep_to_the_group(
    store: Neo4jStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    query = unit(0)
    for group, base in ((MINE, 100), (THEIRS, 0)):
        rows = [entity(group, i, f"{group} thing {i}") for i in range(20)]
        for i, row in enumerate(rows):
            row.embedding = query if group == THEIRS and i == 0 else unit(base + 50 + i)
        facts = [
            fact(group, i, f"{group}-ent-0", f"{group} fact {i}", unit(base + i)) for i in range(20)
        ]
        if group == THEIRS:
            facts[0].embedding = query
        store.write(lambda _, rows=rows, facts=facts: WritePlan(entities_new=rows, facts_new=facts))
    names = reads(store, monkeypatch)
    facts_hit = store.vector_facts(MINE, query, 5)
    entities_hit = store.vector_entities(MINE, query, 5)
    assert names == ["search/vector_scan_facts", "search/vector_scan_entities"]
    assert len(facts_hit) == 5 and all(f.startswith(f"{MINE}-fact-") for f, _ in facts_hit)
    assert len(entities_hit) == 5 and all(e.startswith(f"{MINE}-ent-") for e, _ in entities_hit)
    assert store.vector_facts(THEIRS, query, 1)[0][0] == f"{THEIRS}-fact-0"
    assert store.vector_entities(THEIRS, query, 1)[0][0] == f"{THEIRS}-ent-0"


# ---------------------------------------------------------------------- entity names
OTHERS = [f"other-{i:03d}" for i in range(200)]
NAME, ALIAS, BEACON, TOWER, LIGHT = "Harbor Lantern", "Lamp", "Old Beacon", "Far Tower", "Light"
KEY_MIGRATION = "7: entity name and alias lookups by group and key"
GROUP_KEY_INDEXES = {"graphmem_entity_group_key", "graphmem_alias_group_key"}
KEY_ONLY_INDEXES = {"graphmem_entity_key_only", "graphmem_alias_key"}


def named(group: str, i: int, name: str, aliases: list[str]) -> EntityRow:
    return EntityRow(
        id=f"{group}-ent-{i}",
        group_id=group,
        name=name,
        key=entity_key(name),
        type="thing",
        aliases=aliases,
        created_at=T0 + i,
    )


@pytest.fixture
def shared_names(store: Neo4jStore) -> Neo4jStore:
    """201 groups, each with an entity "Harbor Lantern" (alias "Lamp"). In the 200 others,
    "Old Beacon" and "Far Tower" (alias "Light") are entities too; in "mine", "Old Beacon" is
    only an alias of "Violet Keeper", added after the entity was written."""
    rows = [named(MINE, 0, NAME, [ALIAS]), named(MINE, 1, "Violet Keeper", [])]
    for group in OTHERS:
        rows += [
            named(group, 0, NAME, [ALIAS]),
            named(group, 1, BEACON, []),
            named(group, 2, TOWER, [LIGHT]),
        ]
    store.write(lambda _: WritePlan(entities_new=rows))
    store.write(lambda _: WritePlan(entity_aliases={f"{MINE}-ent-1": [BEACON]}))
    return store


def found(store: Neo4jStore, group: str, *names: str) -> set[str]:
    return {e.id for e in store.find_entities(group, [entity_key(n) for n in names])}


def assert_names_keep_to_their_group(store: Neo4jStore) -> None:
    assert found(store, MINE, NAME) == {f"{MINE}-ent-0"}  # 200 other groups share the name
    assert found(store, MINE, ALIAS) == {f"{MINE}-ent-0"}  # and the alias
    assert found(store, MINE, BEACON) == {f"{MINE}-ent-1"}  # an alias here, a name elsewhere
    assert found(store, MINE, TOWER, LIGHT) == set()  # only the other groups have these
    assert found(store, MINE, NAME, ALIAS, BEACON, TOWER, LIGHT) == {
        f"{MINE}-ent-0",
        f"{MINE}-ent-1",
    }
    other = OTHERS[123]
    assert found(store, other, NAME, BEACON) == {f"{other}-ent-0", f"{other}-ent-1"}
    assert found(store, other, LIGHT) == {f"{other}-ent-2"}
    assert found(store, "nobody", NAME, ALIAS, BEACON) == set()
    # the write path's lookup (inside the write transaction) is the same query
    seen: list[EntityRow] = []

    def look(reader: StoreReader) -> WritePlan:
        seen.extend(reader.entities_by_keys(MINE, [entity_key(NAME), entity_key(BEACON)]))
        return WritePlan()

    store.write(look)
    assert sorted(e.id for e in seen) == [f"{MINE}-ent-0", f"{MINE}-ent-1"]
    assert {e.group_id for e in seen} == {MINE}
    assert next(e for e in seen if e.id == f"{MINE}-ent-1").aliases == [BEACON]


def lookup_seeks(store: Neo4jStore, group: str, keys: list[str]) -> list[tuple[str, str, int]]:
    """(label, index, rows) of each node lookup in ArcadeDB's PROFILE of entities/by_keys, one
    UNION branch at a time (ArcadeDB profiles a UNION as a whole without its steps)."""
    text = "\n".join(
        line
        for line in _cypher.query("entities/by_keys").splitlines()
        if not line.lstrip().startswith("//")
    )
    branches = text.split("\nUNION\n")
    assert len(branches) == 2, text
    seeks: list[tuple[str, str, int]] = []
    for branch in branches:
        _, summary, _ = store.driver.execute_query(
            "PROFILE " + branch,
            parameters_={"group_id": group, "keys": keys},
            database_=store._database,
        )
        plan = str(((summary.profile or {}).get("args") or {}).get("string-representation", ""))
        steps = re.findall(
            r"MATCH NODE \(\w+:(\w+)\) \[index: (.+?\])\].*\([^()]*, (\d+) rows\)", plan
        )
        assert steps, plan
        seeks += [(label, index, int(rows)) for label, index, rows in steps]
    return seeks


def assert_lookups_seek_group_key_indexes(store: Neo4jStore) -> None:
    if store.dialect.name != "arcadedb":
        return  # the plan text checked here is ArcadeDB's
    keys = [entity_key(n) for n in (NAME, ALIAS, BEACON)]
    assert lookup_seeks(store, MINE, keys) == [
        ("Entity", "Entity[group_id, key]", 1),  # not the 201 rows named "harbor lantern"
        ("EntityAlias", "EntityAlias[group_id, key]", 2),  # not the 201 "lamp" aliases
        ("Entity", "Entity[id]", 2),
    ]


def index_names(store: Neo4jStore) -> set[str]:
    return {str(r["name"]) for r in cypher(store, "SHOW INDEXES YIELD name RETURN name")}


def test_a_name_shared_by_200_groups_is_found_in_its_group_only(
    shared_names: Neo4jStore,
) -> None:
    store = shared_names
    names = index_names(store)
    assert names >= GROUP_KEY_INDEXES and not names & KEY_ONLY_INDEXES
    assert_names_keep_to_their_group(store)
    assert_lookups_seek_group_key_indexes(store)


def test_migration_7_upgrades_a_store_written_before_it(shared_names: Neo4jStore) -> None:
    """A store as graphmem left it before migration 7: the key-only indexes of migration 2,
    no (group_id, key) indexes, no record of 7. Migrating adds 7 alone, idempotently."""
    store = shared_names
    for name in sorted(GROUP_KEY_INDEXES):
        cypher(store, f"DROP INDEX {name} IF EXISTS")
    store._schema("schema/002_range_indexes", {})
    cypher(store, "MATCH (m:GraphmemMigration {version: 7}) DELETE m")
    names = index_names(store)
    assert names >= KEY_ONLY_INDEXES and not names & GROUP_KEY_INDEXES
    fresh = Neo4jStore(BOLT_URI or "", max_retry_time=5)
    try:
        status = {m.version: m.applied_at for m in fresh.migration_status()}
        assert status[7] is None and all(status[v] for v in range(1, 7))
        assert found(fresh, MINE, NAME) == {f"{MINE}-ent-0"}  # right before, just not indexed
        assert fresh.migrate() == [KEY_MIGRATION]
        names = index_names(fresh)
        assert names >= GROUP_KEY_INDEXES and not names & KEY_ONLY_INDEXES
        assert_names_keep_to_their_group(fresh)
        assert_lookups_seek_group_key_indexes(fresh)
        assert fresh.migrate() == []
    finally:
        fresh.close()
