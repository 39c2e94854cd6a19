"""to_networkx over Bolt gives the graph SQLite gives for the same input: the same nodes (by
what they are, since ids of entities and facts are the same on both stores), attributes and
edges, apart from record times (when memory learned something: the client clock)."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from graphmem import GraphMemory, HashEmbedder
from tests.helpers.bolt import RECORD_TIME, empty_bolt_memory, requires_bolt

nx = pytest.importorskip("networkx")

pytestmark = [pytest.mark.integration, requires_bolt]

def t(year: int, month: int = 1, day: int = 1) -> datetime:
    return datetime(year, month, day, tzinfo=UTC)


@pytest.fixture
def memories(tmp_path: Path) -> Iterator[tuple[GraphMemory, GraphMemory]]:
    lite = GraphMemory(tmp_path / "memory.db", embedder=HashEmbedder(64))
    lite.connect()
    bolt = empty_bolt_memory()
    yield lite, bolt
    lite.close()
    bolt.store.wipe_all_for_tests(keep_schema=True)  # type: ignore[attr-defined]
    bolt.close()


def fill(memory: GraphMemory) -> None:
    memory.add_fact("Ana", "lives_in", "Lisbon", valid_from=t(2024, 1), source="chat")
    memory.add_fact("Ana", "lives_in", "Porto", valid_from=t(2024, 3), source="chat")
    memory.add_fact("Bob", "lives_in", "Braga", valid_from=t(2024, 3), source="a")
    memory.add_fact("Bob", "lives_in", "Faro", valid_from=t(2024, 3), source="b")
    memory.add_fact("gripper", "grip_force_for", value=12.5, valid_from=t(2024, 2))
    memory.add_episode("I live in Lisbon.", metadata={"speaker": "Maya"},
                       reference_time=t(2024, 4))


def shape(graph: Any) -> tuple[dict[str, dict[str, Any]], set[tuple[str, str, str]]]:
    nodes = {
        node: {k: v for k, v in data.items() if k not in RECORD_TIME}
        for node, data in graph.nodes(data=True)
    }
    edges = {(u, v, k) for u, v, k in graph.edges(keys=True)}
    return nodes, edges


@pytest.mark.parametrize(
    "view",
    [{}, {"include_history": True}, {"as_of": t(2024, 2)}],
    ids=["current", "history", "as_of"],
)
def test_bolt_graph_equals_sqlite_graph(
    memories: tuple[GraphMemory, GraphMemory], view: dict[str, Any]
) -> None:
    lite, bolt = memories
    fill(lite)
    fill(bolt)
    lite_graph, bolt_graph = lite.to_networkx(**view), bolt.to_networkx(**view)
    assert isinstance(bolt_graph, nx.MultiDiGraph)
    assert shape(bolt_graph) == shape(lite_graph)
    kinds = {d["kind"] for _, d in bolt_graph.nodes(data=True)}
    assert kinds == {"Entity", "Fact", "Episode"}
    keys = {k for _, _, k in bolt_graph.edges(keys=True)}
    if view.get("include_history"):
        assert {"SUPERSEDES", "CONTRADICTS", "FROM_EPISODE"} <= keys
    for _, data in bolt_graph.nodes(data=True):
        for name in RECORD_TIME:
            if name in data:
                assert isinstance(data[name], datetime) and data[name].tzinfo is not None
