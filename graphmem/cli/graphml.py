"""GraphML export (``graphmem export --format graphml``; opens in Gephi, yEd, Cytoscape).

The graph is ``GraphMemory.to_networkx``'s (every fact, history included: the rows of
``export()`` go through the same ``graph_from_rows``), written by ``networkx.write_graphml``.
GraphML holds strings, numbers and booleans only, so before writing: times become ISO-8601
strings (``2024-03-01T00:00:00.000Z``, as in the JSONL export), lists and dicts JSON text, a
fact's ``value`` text beside its ``value_type``, and characters XML 1.0 cannot hold are dropped.
Edges get document-unique ids (``e0``, ``e1``, …) with the relationship type as ``label``.
"""

from __future__ import annotations

import io
import json
import re
from collections import Counter
from collections.abc import Iterable
from datetime import UTC, datetime
from typing import IO, TYPE_CHECKING, Any

from ..views.graph import graph_from_rows, require_networkx

if TYPE_CHECKING:
    import networkx as nx

__all__ = ["graphml_graph", "write_graphml"]

_INVALID_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def _text(value: str) -> str:
    return _INVALID_XML.sub("", value)


def _value_type(value: Any) -> str:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    return "string"


def _flat(value: Any) -> str | int | float | bool:
    if isinstance(value, datetime):
        utc = value.astimezone(UTC)
        return utc.isoformat(timespec="milliseconds").replace("+00:00", "Z")
    if isinstance(value, str):
        return _text(value)
    if isinstance(value, bool | int | float):
        return value
    return _text(json.dumps(value, ensure_ascii=False, sort_keys=True, default=str))


def _flat_attrs(data: dict[str, Any]) -> dict[str, str | int | float | bool]:
    out = {key: _flat(value) for key, value in data.items() if value is not None}
    if "value" in data and data["value"] is not None:
        # one GraphML key has one type: the value as text, its type beside it
        value = data["value"]
        out["value"] = _text(value if isinstance(value, str) else json.dumps(value))
        out["value_type"] = _value_type(value)
    return out


def graphml_graph(rows: Iterable[dict[str, Any]]) -> tuple[nx.MultiDiGraph[str], dict[str, int]]:
    """The export graph of ``export()`` rows with GraphML-ready attributes, and its counts."""
    networkx = require_networkx()
    typed: nx.MultiDiGraph[str] = graph_from_rows(rows, networkx.MultiDiGraph())
    flat: nx.MultiDiGraph[str] = networkx.MultiDiGraph(name="graphmem")
    for node, data in typed.nodes(data=True):
        flat.add_node(node, **_flat_attrs(data))
    for index, (src, dst, data) in enumerate(typed.edges(data=True)):
        flat.add_edge(src, dst, key=f"e{index}", **_flat_attrs(data))
    kinds = Counter(data.get("kind") for _, data in flat.nodes(data=True))
    counts = {
        "entities": kinds["Entity"],
        "facts": kinds["Fact"],
        "episodes": kinds["Episode"],
        "edges": flat.number_of_edges(),
    }
    return flat, counts


def write_graphml(rows: Iterable[dict[str, Any]], out: IO[str]) -> dict[str, int]:
    """Write export rows as GraphML to a text stream; returns what was written."""
    networkx = require_networkx()
    graph, counts = graphml_graph(rows)
    buffer = io.BytesIO()  # networkx writes bytes; the CLI hands a text stream (or stdout)
    networkx.write_graphml(graph, buffer, encoding="utf-8")
    out.write(buffer.getvalue().decode("utf-8"))
    if not buffer.getvalue().endswith(b"\n"):
        out.write("\n")
    return counts
