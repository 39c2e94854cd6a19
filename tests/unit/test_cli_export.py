"""``graphmem export`` / ``graphmem import``: lossless JSONL round trip, GraphML that parses."""

from __future__ import annotations

import io
import json
import sys
import xml.etree.ElementTree as ET
from collections import Counter
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from graphmem import GraphMemory, HashEmbedder
from graphmem.cli import cli
from graphmem.cli.graphml import graphml_graph, write_graphml

ENV_VARS = ("GRAPHMEM_STORE", "GRAPHMEM_GROUP", "GRAPHMEM_EMBEDDER", "GRAPHMEM_LLM_MODEL",
            "GRAPHMEM_LLM_BASE_URL")
GRAPHML_NS = "http://graphml.graphdrawing.org/xmlns"
NS = {"g": GRAPHML_NS}


def invoke(store: Path, *args: str) -> Result:
    return CliRunner().invoke(cli, ["--store", f"sqlite:///{store}", *args],
                              catch_exceptions=False)


def t(year: int, month: int = 1, day: int = 1) -> datetime:
    return datetime(year, month, day, tzinfo=UTC)


@pytest.fixture(autouse=True)
def _env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ENV_VARS:
        monkeypatch.delenv(var, raising=False)
    monkeypatch.chdir(tmp_path)


@pytest.fixture
def source(tmp_path: Path) -> Iterator[Path]:
    """A store with supersession, a contradiction, literal values, tricky text, two groups."""
    path = tmp_path / "a.db"
    with GraphMemory(str(path), embedder=HashEmbedder(64)) as memory:
        memory.add_fact("Ana", "lives_in", "Lisbon", valid_from=t(2024, 1), source="chat")
        memory.add_fact("Ana", "lives_in", "Porto", valid_from=t(2024, 3), source="chat")
        memory.add_fact("Bob", "lives_in", "Braga", valid_from=t(2024, 3), source="a")
        memory.add_fact("Bob", "lives_in", "Faro", valid_from=t(2024, 3), source="b")
        memory.add_fact("Ana", "email", value="ana@example.com", valid_from=t(2024, 2))
        memory.add_episode(
            json.dumps({"id": "arm-1", "force": 12.5, "ok": True,
                        "note": 'a <b> & "c" ünï \U0001F916'}, ensure_ascii=False),
            kind="json", source="robot <log>.jsonl", reference_time=t(2024, 5),
        )
        memory.add_episode("Bell\x07 rang: <ok> & done", kind="text", source="bell")
        memory.add_episode(json.dumps({"id": "arm-2", "force": 3}), kind="json",
                           group_id="other", reference_time=t(2024, 5))
    yield path


def rows_of(text: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in text.splitlines() if line.strip()]


# ------------------------------------------------------------------------------- JSONL
def test_export_import_round_trip_into_a_fresh_store(source: Path, tmp_path: Path) -> None:
    exported = invoke(source, "export", "-o", "dump.jsonl")
    assert exported.exit_code == 0, exported.output
    assert "exported " in exported.stderr and "dump.jsonl" in exported.stderr
    original = rows_of((tmp_path / "dump.jsonl").read_text(encoding="utf-8"))
    kinds = Counter(r["type"] for r in original)
    assert kinds["meta"] == 1 and kinds["episode"] == 8 and kinds["link"] == 2
    assert original[0]["embedder"] == {"name": "hash-ngram-v1-64", "dim": 64}

    fresh = tmp_path / "b.db"
    imported = invoke(fresh, "import", "dump.jsonl", "--json")
    assert imported.exit_code == 0, imported.output
    counts = json.loads(imported.stdout)
    assert counts["episodes"] == 8 and counts["facts"] == kinds["fact"]
    again = invoke(fresh, "export")
    assert rows_of(again.stdout) == original

    # importing twice changes nothing
    assert invoke(fresh, "import", "dump.jsonl").exit_code == 0
    assert rows_of(invoke(fresh, "export").stdout) == original
    # and the imported memory answers like the original
    a = json.loads(invoke(source, "history", "Ana", "--json").stdout)
    b = json.loads(invoke(fresh, "history", "Ana", "--json").stdout)
    assert a == b
    recall = json.loads(invoke(fresh, "recall", "where does Ana live", "--json").stdout)
    assert recall["facts"][0]["statement"] == "Ana lives in Porto."
    assert recall["facts"][0]["superseded"][0]["statement"] == "Ana lives in Lisbon."


def test_recall_marks_open_conflicts(source: Path) -> None:
    table = invoke(source, "recall", "where does Bob live")
    assert table.exit_code == 0, table.output
    assert "[CONFLICT]" in table.stdout and "CONFLICT with: Bob lives in" in table.stdout
    context = invoke(source, "recall", "where does Bob live", "--context").stdout
    assert "CONFLICT with:" in context


def test_export_to_an_unwritable_place_is_a_one_line_error(source: Path, tmp_path: Path) -> None:
    result = invoke(source, "export", "-o", str(tmp_path / "missing" / "dir" / "x.jsonl"))
    assert result.exit_code == 2 and "does not exist" in result.stderr
    (tmp_path / "taken").mkdir()
    result = invoke(source, "export", "-o", str(tmp_path / "taken"))
    assert result.exit_code == 1 and result.stderr.startswith("Error: ")
    assert "Traceback" not in result.stderr


def test_export_one_group(source: Path) -> None:
    rows = rows_of(invoke(source, "--group", "other", "export").stdout)
    groups = {r["group_id"] for r in rows if "group_id" in r}
    assert groups == {"other"}


def test_import_refuses_a_store_with_another_embedder(source: Path, tmp_path: Path) -> None:
    invoke(source, "export", "-o", "dump.jsonl")
    other = tmp_path / "c.db"
    assert invoke(other, "init").exit_code == 0  # default embedder: hash, 384 dimensions
    result = invoke(other, "import", "dump.jsonl")
    assert result.exit_code == 1
    assert "exported from a store with embedder hash-ngram-v1-64" in result.stderr
    assert json.loads(invoke(other, "stats", "--json").stdout)["episodes"] == 0


def test_import_invalid_file_lists_lines_and_writes_nothing(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"type": "episode"}\nnot json\n{"type": "table"}\n[1]\n', encoding="utf-8")
    result = invoke(tmp_path / "b.db", "import", str(bad))
    assert result.exit_code == 2
    lines = result.stderr.splitlines()
    assert lines[0] == f"{bad}:1: an empty episode row (it has only its type)"
    assert lines[1] == f"{bad}:2: invalid JSON: Expecting value"
    assert lines[2].startswith(f"{bad}:3: type: expected an export row")
    assert lines[3].startswith(f"{bad}:4: type:")
    assert "nothing was imported" in lines[4]


def test_import_rows_that_are_not_an_export(tmp_path: Path) -> None:
    bad = tmp_path / "odd.jsonl"
    bad.write_text('{"type": "fact", "id": "f1"}\n', encoding="utf-8")
    result = invoke(tmp_path / "b.db", "import", str(bad))
    assert result.exit_code == 2  # invalid input
    assert "not a graphmem export" in result.stderr and "Traceback" not in result.stderr


def test_import_missing_file_is_a_usage_error(tmp_path: Path) -> None:
    result = invoke(tmp_path / "b.db", "import", "nope.jsonl")
    assert result.exit_code == 2 and "does not exist" in result.stderr


# ------------------------------------------------------------------------------- GraphML
def test_graphml_parses_and_holds_the_graph(source: Path, tmp_path: Path) -> None:
    result = invoke(source, "export", "--format", "graphml", "-o", "g.graphml")
    assert result.exit_code == 0, result.output
    root = ET.parse(tmp_path / "g.graphml").getroot()
    assert root.tag == f"{{{GRAPHML_NS}}}graphml"
    keys = {k.get("id"): k.get("attr.name") for k in root.findall("g:key", NS)}
    graph = root.find("g:graph", NS)
    assert graph is not None and graph.get("edgedefault") == "directed"

    def data(element: ET.Element, name: str) -> str | None:
        for d in element.findall("g:data", NS):
            if keys.get(d.get("key")) == name:
                return d.text
        return None

    nodes = graph.findall("g:node", NS)
    ids = {n.get("id") for n in nodes}
    kinds = Counter(data(n, "kind") for n in nodes)
    exported = rows_of(invoke(source, "export").stdout)
    expected = Counter(r["type"] for r in exported)
    assert kinds == {"Entity": expected["entity"], "Fact": expected["fact"],
                     "Episode": expected["episode"]}
    edges = graph.findall("g:edge", NS)
    labels = Counter(data(e, "label") for e in edges)
    assert {"SUBJECT_OF", "OBJECT", "FROM_EPISODE", "SUPERSEDES", "CONTRADICTS",
            "MENTIONS"} <= set(labels)
    assert labels["SUPERSEDES"] == 1 and labels["CONTRADICTS"] == 1
    assert all(e.get("source") in ids and e.get("target") in ids for e in edges)
    robot = next(n for n in nodes if data(n, "source") == "robot <log>.jsonl")
    content = data(robot, "content") or ""
    assert 'a <b> & \\"c\\" ünï \U0001F916' in content
    bell = next(n for n in nodes if data(n, "source") == "bell")
    assert data(bell, "content") == "Bell rang: <ok> & done"  # \x07 cannot be in XML 1.0
    superseded = next(n for n in nodes if data(n, "statement") == "Ana lives in Lisbon.")
    assert data(superseded, "valid_to") is not None
    assert "<graphml" in invoke(source, "export", "--format", "graphml").stdout


def test_graphml_drops_characters_xml_cannot_hold() -> None:
    rows = [
        {"type": "entity", "id": "e1", "name": "bell\x07 <&>", "key": "bell"},
        {"type": "entity", "id": "e2", "name": "other", "key": "other"},
        {"type": "mention", "episode_id": "missing", "entity_id": "e1"},
        {"type": "link", "kind": "SUPERSEDES", "src": "e1", "dst": "e2", "reason": "x\x00y"},
    ]
    _, counts = graphml_graph(rows)
    out = io.StringIO()
    assert write_graphml(rows, out) == counts
    parsed = ET.fromstring(out.getvalue().split("?>", 1)[1])
    assert counts == {"entities": 2, "facts": 0, "episodes": 0, "edges": 1}
    keys = {
        k.get("id"): k.get("attr.name")
        for k in parsed.findall("g:key", NS)
        if k.get("for") in ("node", "edge")
    }
    values = [
        (keys[d.get("key")], d.text)
        for d in parsed.iter(f"{{{GRAPHML_NS}}}data")
        if d.get("key") in keys
    ]
    assert [v for k, v in values if k == "name"] == ["bell <&>", "other"]
    assert [v for k, v in values if k == "reason"] == ["xy"]
    edges = parsed.findall(".//g:edge", NS)
    assert [(e.get("source"), e.get("target"), e.get("id")) for e in edges] == [("e1", "e2", "e0")]


def test_graphml_round_trips_through_networkx(source: Path, tmp_path: Path) -> None:
    """The file networkx reads back is the memory's to_networkx graph, history included, with
    times as ISO strings and values as text beside their type."""
    nx = pytest.importorskip("networkx")
    result = invoke(source, "--group", "default", "export", "--format", "graphml", "-o", "g.xml")
    assert result.exit_code == 0, result.output
    back = nx.read_graphml(tmp_path / "g.xml", force_multigraph=True)
    assert isinstance(back, nx.MultiDiGraph)
    with GraphMemory(str(source), embedder=HashEmbedder(64)) as memory:
        graph = memory.to_networkx(include_history=True)
    assert set(back.nodes) == set(graph.nodes)

    def triples(g: Any) -> Counter[tuple[str, str, str]]:
        return Counter((u, v, d["label"]) for u, v, d in g.edges(data=True))

    assert triples(back) == triples(graph)
    assert len({key for _, _, key in back.edges(keys=True)}) == back.number_of_edges()
    for node, data in graph.nodes(data=True):
        read = back.nodes[node]
        assert set(read) == set(data) | ({"value_type"} if "value" in data else set()), node
        for name, value in data.items():
            if isinstance(value, datetime):
                assert datetime.fromisoformat(read[name]) == value
            elif name == "value":
                assert read[name] == (value if isinstance(value, str) else json.dumps(value))
            elif isinstance(value, list | dict):
                assert json.loads(read[name]) == value
            elif isinstance(value, str):  # less what XML 1.0 cannot hold (the bell's \x07)
                assert read[name] == value.replace("\x07", ""), (node, name)
            else:
                assert read[name] == value, (node, name)
    email = next(d for _, d in back.nodes(data=True) if d.get("predicate") == "email")
    assert (email["value"], email["value_type"]) == ("ana@example.com", "string")


def test_graphml_without_networkx_names_the_extra(
    source: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "networkx", None)  # import networkx -> ImportError
    result = invoke(source, "export", "--format", "graphml", "-o", "g.graphml")
    assert result.exit_code == 1
    assert "pip install 'graphmem[networkx]'" in result.stderr
    assert "Traceback" not in result.stderr
