"""Injection: names, predicates, group ids, sources, contents and metadata keys/values full of
quotes, backticks, braces, ``//``, ``$``, and whole Cypher/SQL statements are stored and read
back verbatim, and never change what a query does (a sentinel group stays untouched). Runs on
both stores: SQLite always, Bolt when a server is configured.
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from graphmem import GraphMemory, HashEmbedder, InputError
from graphmem._ids import entity_key

BOLT_URI = os.environ.get("NEO4J_URI") or os.environ.get("GRAPHMEM_TEST_BOLT_URI")
NO_BOLT = (
    "no Bolt server configured: run `python scripts/bolt_server.py start --dir .bolt "
    "--bolt-port 0` and `. .bolt/env.sh` (GRAPHMEM_TEST_BOLT_URI), or set NEO4J_URI"
)
pytestmark = pytest.mark.integration

PAYLOADS = [
    "MATCH (n) DETACH DELETE n",
    "'}) MATCH (n) DETACH DELETE n //",
    '"}) WITH 1 AS x MATCH (n) DETACH DELETE n RETURN 1 //',
    "`) DETACH DELETE n //",
    "x` }) RETURN 1 UNION MATCH (n) DETACH DELETE n //",
    "{id: 'x'}",
    "$group_id",
    "// comment",
    "/* block */",
    "\\'",
    '\\"',
    "'; DROP TABLE facts; --",
    "Robert'); DROP TABLE episodes;--",
    '" OR name:* AND (x) ~2 ^3 [a TO z]',
    "Label[prop]",
    "ÄÖü 東京 🚀",
]
NASTY = st.text(alphabet=st.sampled_from("'\"`{}[]()$/\\*:;|-~^%,.!?ab Z09_\n\té"), max_size=24)
TEXT = st.one_of(
    st.sampled_from(PAYLOADS),
    NASTY,
    st.builds(lambda a, b: a + b, st.sampled_from(PAYLOADS), NASTY),
)
# names are stored stripped (the facade's rule), so hostile names come without outer spaces
NAME = TEXT.map(str.strip).filter(bool)
PREDICATE = st.one_of(
    st.sampled_from(["match_n_detach_delete_n", "drop_table_facts", "return_1", "lives_in"]),
    st.from_regex(r"\A[a-z][a-z0-9_]{0,15}\Z"),
)
_counter = itertools.count()


def stores() -> list[object]:
    params: list[object] = ["sqlite"]
    params.append(pytest.param("bolt", marks=pytest.mark.skipif(not BOLT_URI, reason=NO_BOLT)))
    return params


@pytest.fixture(scope="module", params=stores())
def memory(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[GraphMemory]:
    if request.param == "sqlite":
        path: Path = tmp_path_factory.mktemp("injection") / "memory.db"
        mem = GraphMemory(path, embedder=HashEmbedder(64))
        mem.connect()
        yield mem
        mem.close()
        return
    from graphmem.store.neo4j import Neo4jStore

    assert BOLT_URI
    store = Neo4jStore(BOLT_URI, max_retry_time=5)
    mem = GraphMemory(store, embedder=HashEmbedder(64))
    mem.connect()
    store.wipe_all_for_tests(keep_schema=True)
    mem.close()
    mem = GraphMemory(Neo4jStore(BOLT_URI, max_retry_time=5), embedder=HashEmbedder(64))
    mem.connect()
    yield mem
    wipe = getattr(mem.store, "wipe_all_for_tests", None)
    if wipe is not None:
        wipe(keep_schema=True)
    mem.close()


@pytest.fixture(scope="module")
def sentinel(memory: GraphMemory) -> dict[str, object]:
    memory.add_fact("Sentinel", "guards", "Everything", group_id="sentinel-group")
    return snapshot(memory)


def snapshot(memory: GraphMemory) -> dict[str, object]:
    facts = memory.facts(group_id="sentinel-group", include_history=True)
    stats = memory.stats("sentinel-group")
    return {
        "facts": [(f.id, f.subject, f.predicate, f.object, f.statement) for f in facts],
        "episodes": stats["episodes"],
        "entities": stats["entities"],
    }


@settings(
    max_examples=int(os.environ.get("GRAPHMEM_INJECTION_EXAMPLES", "40")),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    group=TEXT,
    subject=NAME,
    predicate=PREDICATE,
    target=NAME,
    source=TEXT,
    key=TEXT,
    value=TEXT,
    content=NAME,
)
def test_hostile_strings_round_trip_and_alter_nothing(
    memory: GraphMemory,
    sentinel: dict[str, object],
    group: str,
    subject: str,
    predicate: str,
    target: str,
    source: str,
    key: str,
    value: str,
    content: str,
) -> None:
    assume(entity_key(subject) != entity_key(target))
    group_id = f"g{next(_counter)}:{group}"  # unique per example, hostile text kept
    fact = memory.add_fact(subject, predicate, target, group_id=group_id, source=source)
    assert fact.facts_added == 1
    (stored,) = memory.facts(group_id=group_id, entity=subject)
    assert (stored.subject, stored.predicate, stored.object) == (subject, predicate, target)
    assert stored.group_id == group_id
    episode = memory.episode(fact.episode_id)
    assert episode is not None and episode.source == source and episode.group_id == group_id

    literal = memory.add_fact(subject, "has_note", value=value, group_id=group_id)
    assert literal.facts_added == 1
    notes = [
        f.value
        for f in memory.facts(group_id=group_id, entity=subject)
        if f.predicate == "has_note"
    ]
    assert notes == [value]

    ingested = memory.add_episode(
        content, group_id=group_id, source=source, metadata={key: value, "k": [key, value]}
    )
    raw = memory.episode(ingested.episode_id)
    assert raw is not None
    assert raw.content == content and raw.metadata == {key: value, "k": [key, value]}

    # searches with the hostile text as the query run as plain searches (a blank query is an
    # input error, checked before any store is touched)
    for query in (subject, target, value, content, group):
        if not query.strip():
            with pytest.raises(InputError):
                memory.recall(query, group_id=group_id, k=3)
            continue
        memory.recall(query, group_id=group_id, k=3)
        memory.recall(query, group_id="sentinel-group", k=3)
    assert memory.history(subject, group_id=group_id)
    assert snapshot(memory) == sentinel
    export = [r for r in memory.export(group_id=group_id) if r["type"] == "entity"]
    assert {r["name"] for r in export} >= {subject, target}
