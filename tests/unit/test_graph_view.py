"""GraphMemory.to_networkx: entities, facts and episodes as a networkx.MultiDiGraph, on every
store the ``memory`` fixture opens (SQLite; Bolt too when a server is configured)."""

from __future__ import annotations

import sys
from datetime import UTC, datetime

import pytest

from graphmem import ConfigError, GraphMemory, InputError, NaiveDatetimeError

nx = pytest.importorskip("networkx")


def t(year: int, month: int = 1, day: int = 1) -> datetime:
    return datetime(year, month, day, tzinfo=UTC)


def fill(memory: GraphMemory) -> None:
    memory.add_fact("Ana", "lives_in", "Lisbon", valid_from=t(2024, 1), source="chat")
    memory.add_fact("Ana", "lives_in", "Porto", valid_from=t(2024, 3), source="chat")
    memory.add_fact("Bob", "lives_in", "Braga", valid_from=t(2024, 3), source="a")
    memory.add_fact("Bob", "lives_in", "Faro", valid_from=t(2024, 3), source="b")
    memory.add_fact("gripper", "grip_force_for", value=12.5, valid_from=t(2024, 2))
    memory.add_episode("I live in Lisbon.", metadata={"speaker": "Maya"},
                       reference_time=t(2024, 4))
    memory.add_fact("Zoe", "lives_in", "Oslo", valid_from=t(2024, 1), group_id="other")


def by_statement(graph: nx.MultiDiGraph) -> dict[str, str]:
    return {d["statement"]: n for n, d in graph.nodes(data=True) if d["kind"] == "Fact"}


def labels(graph: nx.MultiDiGraph) -> set[str]:
    return {key for _, _, key in graph.edges(keys=True)}


def test_history_holds_every_fact_and_both_links(memory: GraphMemory) -> None:
    fill(memory)
    graph = memory.to_networkx(include_history=True)
    assert isinstance(graph, nx.MultiDiGraph)
    assert graph.graph["group_id"] == "default" and graph.graph["include_history"] is True
    facts = by_statement(graph)
    assert set(facts) == {
        "Ana lives in Lisbon.", "Ana lives in Porto.", "Bob lives in Braga.",
        "Bob lives in Faro.", "gripper grip force for 12.5.", "Maya lives in Lisbon.",
    }
    lisbon, porto = facts["Ana lives in Lisbon."], facts["Ana lives in Porto."]
    supersedes = graph.edges[porto, lisbon, "SUPERSEDES"]
    assert supersedes["label"] == "SUPERSEDES" and supersedes["reason"]
    assert isinstance(supersedes["decided_at"], datetime)
    faro, braga = facts["Bob lives in Faro."], facts["Bob lives in Braga."]
    assert graph.has_edge(faro, braga, "CONTRADICTS")
    assert labels(graph) == {
        "SUBJECT_OF", "OBJECT", "FROM_EPISODE", "SUPERSEDES", "CONTRADICTS", "MENTIONS",
    }
    kinds = {d["kind"] for _, d in graph.nodes(data=True)}
    assert kinds == {"Entity", "Fact", "Episode"}
    assert all(d["group_id"] == "default" for _, d in graph.nodes(data=True))

    # typed attributes: aware datetimes, float confidence, the value as stored
    old = graph.nodes[lisbon]
    assert old["valid_from"] == t(2024, 1) and old["valid_to"] == t(2024, 3)
    assert old["recorded_at"].tzinfo is not None and isinstance(old["confidence"], float)
    assert "valid_to" not in graph.nodes[porto]  # unknown values are left out, not None
    grip = graph.nodes[facts["gripper grip force for 12.5."]]
    assert grip["value"] == 12.5 and grip["predicate"] == "grip_force_for"

    # the edges join the right kinds of node
    ana = next(n for n, d in graph.nodes(data=True) if d.get("name") == "Ana")
    assert graph.has_edge(ana, porto, "SUBJECT_OF")
    (episode,) = [v for _, v, k in graph.out_edges(porto, keys=True) if k == "FROM_EPISODE"]
    assert graph.nodes[episode]["kind"] == "Episode"
    assert graph.nodes[episode]["reference_time"] == t(2024, 3)
    maya = facts["Maya lives in Lisbon."]
    (spoken,) = [d for _, _, k, d in graph.out_edges(maya, keys=True, data=True)
                 if k == "FROM_EPISODE"]
    assert spoken["span"] == "I live in Lisbon"
    said = next(v for _, v, k in graph.out_edges(maya, keys=True) if k == "FROM_EPISODE")
    assert graph.nodes[said]["metadata"] == {"speaker": "Maya"}
    assert graph.nodes[said]["episode_kind"] == "message"


def test_current_and_as_of_views_filter_facts_only(memory: GraphMemory) -> None:
    fill(memory)
    now = memory.to_networkx()
    facts = by_statement(now)
    assert "Ana lives in Porto." in facts and "Ana lives in Lisbon." not in facts
    assert "SUPERSEDES" not in labels(now)  # its older end is not in this view
    assert "CONTRADICTS" in labels(now)  # both sides still hold
    everything = memory.to_networkx(include_history=True)
    # entities and episodes stay: the episode that stated Lisbon is still memory's input
    not_facts = {n for n, d in everything.nodes(data=True) if d["kind"] != "Fact"}
    assert not_facts <= set(now.nodes)

    then = memory.to_networkx(as_of=t(2024, 2))
    assert set(by_statement(then)) == {"Ana lives in Lisbon.", "gripper grip force for 12.5."}
    assert then.graph["as_of"] == t(2024, 2)
    assert set(by_statement(memory.to_networkx(as_of=t(2023, 1)))) == set()


def test_groups(memory: GraphMemory) -> None:
    fill(memory)
    other = memory.to_networkx(group_id="other")
    assert set(by_statement(other)) == {"Zoe lives in Oslo."}
    every = memory.to_networkx(group_id=None, include_history=True)
    assert {d["group_id"] for _, d in every.nodes(data=True)} == {"default", "other"}
    assert "Zoe lives in Oslo." in by_statement(every)
    assert memory.to_networkx(group_id="nobody").number_of_nodes() == 0


def test_bad_arguments(memory: GraphMemory) -> None:
    with pytest.raises(InputError, match="not both"):
        memory.to_networkx(as_of=t(2024), include_history=True)
    with pytest.raises(NaiveDatetimeError):
        memory.to_networkx(as_of=datetime(2024, 1, 1))
    with pytest.raises(InputError, match="include_history"):
        memory.to_networkx(include_history="yes")  # type: ignore[arg-type]


def test_missing_networkx_names_the_extra(
    memory: GraphMemory, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "networkx", None)  # import networkx -> ImportError
    with pytest.raises(ConfigError, match=r"pip install 'graphmem\[networkx\]'"):
        memory.to_networkx()
