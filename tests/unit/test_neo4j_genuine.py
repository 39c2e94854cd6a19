"""What genuine Neo4j needs from the store and the test tooling, checked without a server: the
notifications the store asks Neo4j to leave out, the candidates a filtered vector search asks
for, full-text ties in insertion order, and scripts/neo4j_server.py's pure parts (hermetic)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("neo4j")

from graphmem.store.neo4j import Neo4jStore
from graphmem.store.neo4j import cypher as _cypher
from graphmem.store.neo4j.dialect import select_dialect
from graphmem.store.neo4j.search import MAX_CANDIDATES, filtered_candidates

REPO = Path(__file__).resolve().parents[2]


def _dialect(agent: str) -> Any:
    return select_dialect(agent, bolt_host="db", user="neo4j", password="x", database=None)


def test_neo4j_is_asked_to_leave_out_unrecognized_name_warnings() -> None:
    assert _dialect("Neo4j/5.26.30").muted_notifications == ("UNRECOGNIZED",)
    assert _dialect("Neo4j/2026.08.1").muted_notifications == ("UNRECOGNIZED",)
    # before Neo4j 5.7 (Bolt 5.2) the driver refuses notification filters: none are asked
    assert _dialect("Neo4j/5.6.0").muted_notifications == ()
    assert _dialect("Neo4j/5.26.0 compatible (ArcadeDB 26.10.2)").muted_notifications == ()


class _FakeDriver:
    def __init__(self, agent: str, calls: list[dict[str, Any]], **kwargs: Any) -> None:
        self.agent, self.closed = agent, False
        calls.append(kwargs)

    def verify_connectivity(self) -> None:
        return None

    def get_server_info(self) -> Any:
        return type("Info", (), {"agent": self.agent})()

    def close(self) -> None:
        self.closed = True


@pytest.mark.parametrize(
    ("agent", "muted"),
    [("Neo4j/5.26.30", ["UNRECOGNIZED"]), ("Neo4j/5.26.0 compatible (ArcadeDB 26.10.2)", None)],
)
def test_the_driver_is_opened_with_the_dialects_notification_filter(
    monkeypatch: pytest.MonkeyPatch, agent: str, muted: list[str] | None
) -> None:
    from graphmem.store.neo4j import runner

    calls: list[dict[str, Any]] = []
    monkeypatch.setattr(
        runner.GraphDatabase,
        "driver",
        lambda url, **kw: _FakeDriver(agent, calls, **kw),
    )
    store = Neo4jStore("bolt://db.invalid:7687", username="neo4j", password="secret-pw")
    store.connect()
    assert calls[-1].get("notifications_disabled_classifications") == muted
    assert store.dialect.muted_notifications == tuple(muted or ())


def test_a_filtered_vector_search_asks_the_index_for_more_than_it_keeps() -> None:
    assert filtered_candidates(10) == 64
    assert filtered_candidates(20) == 80
    assert filtered_candidates(5_000) == MAX_CANDIDATES
    for kind in ("facts", "entities", "episodes"):
        text = _cypher.query(f"search/vector_by_group_{kind}")
        assert "LIMIT $candidates" in text and text.rstrip().endswith("LIMIT $limit")


def test_fulltext_ties_come_in_insertion_order() -> None:
    """Lucene orders equal scores differently for different limits; SQLite's FTS tables give
    them in rowid (insertion) order: the store sorts ties by seq."""
    assert _cypher.query("search/fulltext").rstrip().endswith("ORDER BY score DESC, node.seq")


@pytest.fixture
def neo4j_server() -> Any:
    sys.path.insert(0, str(REPO / "scripts"))
    try:
        import neo4j_server as module
    finally:
        sys.path.remove(str(REPO / "scripts"))
    return module


def test_server_script_writes_the_variables_the_tests_read(
    neo4j_server: Any, tmp_path: Path
) -> None:
    info = neo4j_server.ServerInfo(
        dir=tmp_path, pid=1, bolt_port=7711, http_port=7722, password="pw-12345", version="5.26.30"
    )
    env = info.env()
    assert env["GRAPHMEM_TEST_BOLT_URI"] == "bolt://127.0.0.1:7711"
    assert env["GRAPHMEM_TEST_BOLT_USER"] == "neo4j"
    assert env["GRAPHMEM_TEST_BOLT_PASSWORD"] == "pw-12345"
    assert env["GRAPHMEM_TEST_BOLT_SERVER"] == "neo4j-5.26.30"
    assert env["GRAPHMEM_TEST_NEO4J_BROWSER"] == "http://127.0.0.1:7722/browser/"
    neo4j_server._write_env_sh(info)
    text = (tmp_path / "env.sh").read_text()
    assert "export GRAPHMEM_TEST_BOLT_URI=bolt://127.0.0.1:7711" in text


def test_server_script_picks_a_java_new_enough_for_the_version(
    neo4j_server: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    features = {"/jdk17/bin/java": 17, "/jdk25/bin/java": 25}
    monkeypatch.setattr(neo4j_server, "_java_feature", lambda java: features.get(java, 0))
    monkeypatch.setenv("GRAPHMEM_NEO4J_JAVA", "/jdk17/bin/java")
    assert neo4j_server.find_java("5.26.30") == ("/jdk17/bin/java", 17)
    with pytest.raises(neo4j_server.ServerError, match="Java 21"):
        neo4j_server.find_java("2026.08.1")
    assert neo4j_server.find_java("2026.08.1", "/jdk25/bin/java") == ("/jdk25/bin/java", 25)
    with pytest.raises(neo4j_server.ServerError, match="not a Neo4j version"):
        neo4j_server.find_java("latest")


def test_server_script_never_signals_a_process_that_is_not_its_server(
    neo4j_server: Any, tmp_path: Path
) -> None:
    import os

    (tmp_path / "server.pid").write_text(f"{os.getpid()}\n")  # this pytest, not a Neo4j
    assert neo4j_server.server_status(tmp_path) is None
    assert neo4j_server.stop_server(tmp_path) is False
