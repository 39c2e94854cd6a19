"""The Cypher query registry, the Lucene escaping, the dialect seam and the Browser kit
(hermetic: no server). The Bolt behaviour itself is in tests/integration/test_neo4j_*.py."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

pytest.importorskip("neo4j")

from graphmem.store.neo4j import MIGRATIONS, Neo4jStore, lucene_query
from graphmem.store.neo4j import cypher as _cypher
from graphmem.store.neo4j.browser import (
    BROWSER_QUERIES,
    browser_instructions,
    browser_url,
    grass_path,
)
from graphmem.store.neo4j.dialect import (
    TEXT_FIELDS,
    ArcadeDBDialect,
    Neo4jDialect,
    neo4j_version,
    select_dialect,
)
from graphmem.store.neo4j.search import group_lucene_query, group_token

REPO = Path(__file__).resolve().parents[2]
CYPHER = REPO / "cypher"
# The Neo4j store and every part of it (the split modules too: a new part is checked the day
# it is added).
STORE_SOURCES = [
    *sorted((REPO / "graphmem" / "store" / "neo4j").glob("*.py")),
]


def test_every_shipped_file_is_listed_and_loads() -> None:
    names = _cypher.available()
    on_disk = sorted(str(p.relative_to(CYPHER).with_suffix("")) for p in CYPHER.rglob("*.cypher"))
    assert names == on_disk and len(names) > 40
    for name in names:
        pieces = _cypher.statements(name)
        assert pieces, name
        for piece in pieces:
            assert not piece.rstrip().endswith(";"), name


def test_query_is_cached_and_single_statement() -> None:
    first = _cypher.query("facts/records")
    assert first is _cypher.query("facts/records") or first == _cypher.query("facts/records")
    assert "UNWIND $ids AS id" in first
    with pytest.raises(_cypher.UnknownQueryError, match="holds 9 statements"):
        _cypher.query("schema/001_constraints")
    assert len(_cypher.statements("schema/001_constraints")) == 9


@pytest.mark.parametrize(
    "name",
    ["facts/nope", "nope", "../sqlite", "facts/records.cypher", "Facts/Records", "", "a//b"],
)
def test_unknown_or_bad_names_fail_clearly(name: str) -> None:
    with pytest.raises(_cypher.UnknownQueryError) as info:
        _cypher.query(name)
    assert repr(name) in str(info.value) or "bad Cypher query name" in str(info.value)


def test_unknown_name_lists_its_neighbours() -> None:
    with pytest.raises(_cypher.UnknownQueryError, match=r"queries under facts/: .*facts/records"):
        _cypher.query("facts/recordz")


def test_every_query_the_store_names_exists() -> None:
    """Each literal 'dir/name' the store passes to the registry is a shipped file."""
    shipped = set(_cypher.available())
    used: set[str] = set()
    for source in STORE_SOURCES:
        text = source.read_text()
        used.update(
            re.findall(
                r'"((?:schema|meta|admin|episodes|entities|facts|search|stats|'
                r'export|audit|browser|reembed)/[a-z0-9_]+)"',
                text,
            )
        )
    assert used, "no query names found"
    assert used <= shipped, sorted(used - shipped)
    assert {f for _, _, f in MIGRATIONS} <= shipped


def test_queries_never_interpolate_values() -> None:
    """Values reach Cypher only as $parameters: no Python formatting markers in the files and
    no f-string/format/% applied to query text in the store."""
    for name in _cypher.available():
        for piece in _cypher.statements(name):
            assert "%s" not in piece and "{0}" not in piece, name
    for source in (p.read_text() for p in STORE_SOURCES if p.name != "dialect.py"):
        assert "query(name).format" not in source and ".format(" not in source


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Where does Bob work?", '"bob" OR "work"'),
        ("the", '"the"'),
        ("", None),
        ("!!! ??? :::", None),
        ('Bob" OR name:* AND (x) MATCH (n) DETACH DELETE n //', None),
    ],
)
def test_lucene_query_quotes_words_only(text: str, expected: str | None) -> None:
    result = lucene_query(text)
    if expected is not None:
        assert result == expected
        return
    if result is None:
        assert not re.search(r"\w", text)
        return
    # every term is a quoted word: no operators, wildcards, fields or groups leak through
    for term in result.split(" OR "):
        assert re.fullmatch(r'"\w+"', term), term


def test_dialect_selection_from_the_agent_string(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GRAPHMEM_ARCADEDB_HTTP", raising=False)
    monkeypatch.delenv("GRAPHMEM_TEST_BOLT_HTTP", raising=False)
    neo = select_dialect("Neo4j/5.26.0", bolt_host="db", user="neo4j", password="x", database=None)
    assert isinstance(neo, Neo4jDialect)
    assert neo.index_name("fact_embedding") == "graphmem_fact_embedding"
    assert not neo.filtered_vectors and not neo.raw_cosine and neo.version == (5, 26)
    new = select_dialect("Neo4j/2026.01.2", bolt_host="db", user="n", password="x", database=None)
    assert isinstance(new, Neo4jDialect) and new.filtered_vectors
    assert new.index_name("episode_embedding") == "graphmem_episode_embedding_by_group"
    assert new.index_name("episode_text") == neo.index_name("episode_text")
    arcade = select_dialect(
        "Neo4j/5.26.0 compatible (ArcadeDB 26.10.2)",
        bolt_host="db",
        user="root",
        password="pw",
        database=None,
    )
    assert isinstance(arcade, ArcadeDBDialect)
    assert arcade.http_url == "http://db:2480" and arcade.database == "neo4j"
    assert arcade.index_name("entity_text") == "Entity[name,alias_text,group_token]"
    assert arcade.raw_cosine and not arcade.filtered_vectors
    monkeypatch.setenv("GRAPHMEM_ARCADEDB_HTTP", "http://elsewhere:1234")
    arcade = select_dialect("ArcadeDB", bolt_host="db", user="root", password="", database="d")
    assert isinstance(arcade, ArcadeDBDialect)
    assert arcade.http_url == "http://elsewhere:1234" and arcade.database == "d"


@pytest.mark.parametrize(
    ("agent", "version"),
    [
        ("Neo4j/5.26.0", (5, 26)),
        ("Neo4j/2025.10.1", (2025, 10)),
        ("Neo4j/2026.01.0", (2026, 1)),
        ("Neo4j/5.27-aura", (5, 27)),
        ("something else", (5, 0)),
    ],
)
def test_neo4j_version_from_the_agent(agent: str, version: tuple[int, int]) -> None:
    assert neo4j_version(agent) == version


def test_group_scoped_lucene_query() -> None:
    """The group's token is a required, zero-weight clause; the words are field-qualified,
    quoted and escaped; the token is digits only (no analyzer splits or stems it)."""
    token = group_token("tenant-42")
    assert token.isdigit() and token == group_token("tenant-42") != group_token("tenant-43")
    assert group_lucene_query("Where does Bob work?", "tenant-42", TEXT_FIELDS["fact_text"]) == (
        f'+group_token:"{token}"^0 +(statement:"bob" OR statement:"work")'
    )
    entity = group_lucene_query("Bob", "g", TEXT_FIELDS["entity_text"])
    assert entity == f'+group_token:"{group_token("g")}"^0 +(name:"bob" OR alias_text:"bob")'
    assert group_lucene_query("!!! ???", "g", ("content",)) is None
    hostile = group_lucene_query('x" OR group_token:* (', "g", ("content",))
    assert hostile is not None and hostile.endswith('+(content:"x" OR content:"group_token")')


def test_filtered_vector_queries_name_the_filtered_indexes() -> None:
    """SEARCH cannot take the index name as a parameter: each Cypher 25 query names the index
    the Neo4j 2026.01+ dialect creates (with group_id as its filter property)."""
    new = Neo4jDialect(version=(2026, 1), filtered_vectors=True)
    ddl = "\n".join(_cypher.statements("schema/vector_indexes_by_group"))
    for role, kind in (
        ("fact_embedding", "facts"),
        ("entity_embedding", "entities"),
        ("episode_embedding", "episodes"),
    ):
        name = new.index_name(role)
        search = _cypher.query(f"search/vector_by_group_{kind}")
        assert search.startswith("CYPHER 25") and f"VECTOR INDEX {name}\n" in search
        assert "WHERE n.group_id = $group_id" in search
        assert f"CREATE VECTOR INDEX {name} IF NOT EXISTS" in ddl
    assert ddl.count("WITH [") == 3


def test_constructor_does_no_io_and_hides_the_password(monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ("NEO4J_USERNAME", "NEO4J_PASSWORD", "NEO4J_DATABASE", "NEO4J_USER"):
        monkeypatch.delenv(var, raising=False)
    store = Neo4jStore("bolt://alice:s3cret@db.invalid:7687", max_retry_time=0.5)
    assert store.url == "bolt://db.invalid:7687"
    assert "s3cret" not in repr(vars(store).get("url"))
    monkeypatch.setenv("NEO4J_USERNAME", "bob")
    monkeypatch.setenv("NEO4J_PASSWORD", "pw")
    monkeypatch.setenv("NEO4J_DATABASE", "memory")
    store = Neo4jStore("neo4j://db.invalid")
    assert (store._username, store._password, store._database) == ("bob", "pw", "memory")
    store = Neo4jStore("neo4j://db.invalid", username="u", password="p", database="x")
    assert (store._username, store._password, store._database) == ("u", "p", "x")


def test_unreachable_server_is_a_store_error() -> None:
    from graphmem import StoreError

    store = Neo4jStore(
        "bolt://127.0.0.1:9",
        username="neo4j",
        password="x",
        max_retry_time=0.2,
        connection_timeout=1.0,
    )
    with pytest.raises(StoreError, match="unreachable"):
        store.connect()


def test_browser_kit_is_one_copy_that_docker_mounts() -> None:
    """cypher/browser/ is the only copy of the style sheet and saved queries; compose mounts it
    (a second copy under docker/ drifted before)."""
    assert not (REPO / "docker" / "browser").exists()
    assert not (REPO / "graphmem" / "cypher").exists()
    compose = (REPO / "docker" / "compose.yml").read_text()
    mount = re.search(r"- (\S+):/graphmem/browser:ro", compose)
    assert mount, compose
    assert (REPO / "docker" / mount.group(1)).resolve() == (CYPHER / "browser").resolve()
    assert sorted(p.stem for p in (CYPHER / "browser").glob("*.cypher")) == sorted(BROWSER_QUERIES)
    assert Path(grass_path()).resolve() == (CYPHER / "browser" / "graphmem.grass").resolve()
    grass = (CYPHER / "browser" / "graphmem.grass").read_text()
    for label in ("node.Entity", "node.Fact", "node.Episode"):
        assert label + " {" in grass
    supersedes = re.search(r"relationship\.SUPERSEDES \{([^}]*)\}", grass)
    contradicts = re.search(r"relationship\.CONTRADICTS \{([^}]*)\}", grass)
    assert supersedes and contradicts
    assert supersedes.group(1) != contradicts.group(1)
    fact_style = re.search(r"node\.Fact \{(.*?)\n\}", grass, re.S)
    assert fact_style and "{predicate}" in fact_style.group(1)
    assert "{statement}" in fact_style.group(1)


def test_browser_instructions() -> None:
    text = browser_instructions("neo4j://localhost:7687")
    assert "http://localhost:7474/browser/" in text and ":style" in text
    assert "graphmem.grass" in text
    for name, (title, params) in BROWSER_QUERIES.items():
        assert title in text and f"{name}.cypher" in text
        for key in params:
            assert f":param {key} =>" in text
    assert browser_url("neo4j+s://abc.databases.neo4j.io").startswith("https://browser.neo4j.io/")
