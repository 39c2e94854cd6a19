"""GraphML export of ``GraphMemory.export()`` rows (opens in Gephi, yEd, Cytoscape, NetworkX).

Nodes: ``Entity``, ``Fact`` and ``Episode`` (attribute ``kind``; ``label`` is what a viewer shows).
Edges (attribute ``label``): ``SUBJECT_OF`` entity → fact, ``OBJECT`` fact → entity,
``FROM_EPISODE`` fact → episode, ``SUPERSEDES`` / ``CONTRADICTS`` fact → fact, ``MENTIONS``
episode → entity. Embeddings are left out (they are in the JSONL export). Written with
``xml.etree``, so every value is escaped; characters XML 1.0 cannot hold are dropped.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from typing import IO, TYPE_CHECKING, Any

if TYPE_CHECKING:  # imported where used: only `export --format graphml` needs it
    import xml.etree.ElementTree as ET

__all__ = ["GRAPHML_NS", "to_graphml", "write_graphml"]

GRAPHML_NS = "http://graphml.graphdrawing.org/xmlns"
_XSI = "http://www.w3.org/2001/XMLSchema-instance"
_SCHEMA = "http://graphml.graphdrawing.org/xmlns http://graphml.graphdrawing.org/xmlns/1.0/graphml.xsd"
_INVALID_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")

# (key id, for, attr.name, attr.type)
_NODE_KEYS: list[tuple[str, str, str]] = [
    ("label", "label", "string"),
    ("kind", "kind", "string"),
    ("group_id", "group_id", "string"),
    # Entity
    ("name", "name", "string"),
    ("key", "key", "string"),
    ("entity_type", "entity_type", "string"),
    ("aliases", "aliases", "string"),
    ("summary", "summary", "string"),
    ("created_at", "created_at", "string"),
    ("attributes", "attributes", "string"),
    # Fact
    ("statement", "statement", "string"),
    ("predicate", "predicate", "string"),
    ("value", "value", "string"),
    ("value_type", "value_type", "string"),
    ("valid_from", "valid_from", "string"),
    ("valid_to", "valid_to", "string"),
    ("recorded_at", "recorded_at", "string"),
    ("expired_at", "expired_at", "string"),
    ("ended_at", "ended_at", "string"),
    ("end_reason", "end_reason", "string"),
    ("confidence", "confidence", "double"),
    ("decided_by", "decided_by", "string"),
    # Episode
    ("source", "source", "string"),
    ("episode_kind", "episode_kind", "string"),
    ("content", "content", "string"),
    ("reference_time", "reference_time", "string"),
    ("ingested_at", "ingested_at", "string"),
    ("content_hash", "content_hash", "string"),
    ("status", "status", "string"),
    ("extractor", "extractor", "string"),
    ("error", "error", "string"),
    ("metadata", "metadata", "string"),
]
_EDGE_KEYS: list[tuple[str, str, str]] = [
    ("label", "label", "string"),
    ("reason", "reason", "string"),
    ("decided_by", "decided_by", "string"),
    ("decided_at", "decided_at", "string"),
    ("span", "span", "string"),
]
_LABEL_MAX = 80


def _text(value: Any) -> str:
    if isinstance(value, str):
        text = value
    elif isinstance(value, bool):
        text = "true" if value else "false"
    elif isinstance(value, int | float):
        text = repr(value)
    else:
        text = json.dumps(value, ensure_ascii=False, sort_keys=True)
    return _INVALID_XML.sub("", text)


def _short(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= _LABEL_MAX else text[: _LABEL_MAX - 1] + "…"


def _value_type(value: Any) -> str:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    return "string"


def to_graphml(rows: Iterable[dict[str, Any]]) -> tuple[ET.Element, dict[str, int]]:
    """The GraphML root element of export rows, and counts of what went in."""
    import xml.etree.ElementTree as ET

    root = ET.Element(
        "graphml", {"xmlns": GRAPHML_NS, "xmlns:xsi": _XSI, "xsi:schemaLocation": _SCHEMA}
    )
    for prefix, keys, target in (("n_", _NODE_KEYS, "node"), ("e_", _EDGE_KEYS, "edge")):
        for key_id, name, attr_type in keys:
            ET.SubElement(
                root, "key",
                {"id": prefix + key_id, "for": target, "attr.name": name, "attr.type": attr_type},
            )
    graph = ET.SubElement(root, "graph", {"id": "graphmem", "edgedefault": "directed"})
    nodes: set[str] = set()
    edges: list[tuple[str, str, str, dict[str, Any]]] = []
    counts = {"entities": 0, "facts": 0, "episodes": 0, "edges": 0, "edges_skipped": 0}

    def node(node_id: str, kind: str, label: str, data: dict[str, Any]) -> None:
        element = ET.SubElement(graph, "node", {"id": node_id})
        values = {"label": _short(label), "kind": kind, **data}
        for key_id, _, _ in _NODE_KEYS:
            value = values.get(key_id)
            if value is None:
                continue
            ET.SubElement(element, "data", {"key": "n_" + key_id}).text = _text(value)
        nodes.add(node_id)

    for row in rows:
        kind = row.get("type")
        if kind == "episode":
            node(row["id"], "Episode", f"{row.get('source') or 'episode'}: {row['content']}", {
                "group_id": row.get("group_id"),
                "source": row.get("source"),
                "episode_kind": row.get("kind"),
                "content": row.get("content"),
                "reference_time": row.get("reference_time"),
                "ingested_at": row.get("ingested_at"),
                "content_hash": row.get("content_hash"),
                "status": row.get("status"),
                "extractor": row.get("extractor"),
                "error": row.get("error"),
                "metadata": row.get("metadata") or None,
            })
            counts["episodes"] += 1
        elif kind == "entity":
            node(row["id"], "Entity", row["name"], {
                "group_id": row.get("group_id"),
                "name": row.get("name"),
                "key": row.get("key"),
                "entity_type": row.get("entity_type"),
                "aliases": row.get("aliases") or None,
                "summary": row.get("summary"),
                "created_at": row.get("created_at"),
                "attributes": row.get("attributes") or None,
            })
            counts["entities"] += 1
        elif kind == "fact":
            value = row.get("value")
            node(row["id"], "Fact", row["statement"], {
                "group_id": row.get("group_id"),
                "statement": row.get("statement"),
                "predicate": row.get("predicate"),
                "value": value,
                "value_type": None if value is None else _value_type(value),
                "valid_from": row.get("valid_from"),
                "valid_to": row.get("valid_to"),
                "recorded_at": row.get("recorded_at"),
                "expired_at": row.get("expired_at"),
                "ended_at": row.get("ended_at"),
                "end_reason": row.get("end_reason"),
                "confidence": row.get("confidence"),
                "decided_by": row.get("decided_by"),
            })
            counts["facts"] += 1
            edges.append((row["subject_id"], row["id"], "SUBJECT_OF", {}))
            if row.get("object_id"):
                edges.append((row["id"], row["object_id"], "OBJECT", {}))
        elif kind in ("provenance", "ending"):
            label = "FROM_EPISODE" if kind == "provenance" else "ENDED_BY"
            edges.append((row["fact_id"], row["episode_id"], label, {"span": row.get("span")}))
        elif kind == "link":
            edges.append((row["src"], row["dst"], str(row["kind"]), {
                "reason": row.get("reason"),
                "decided_by": row.get("decided_by"),
                "decided_at": row.get("decided_at"),
            }))
        elif kind == "mention":
            edges.append((row["episode_id"], row["entity_id"], "MENTIONS", {}))

    for index, (src, dst, label, data) in enumerate(edges):
        if src not in nodes or dst not in nodes:
            counts["edges_skipped"] += 1
            continue
        element = ET.SubElement(
            graph, "edge", {"id": f"e{index}", "source": src, "target": dst}
        )
        for key_id, _, _ in _EDGE_KEYS:
            value = label if key_id == "label" else data.get(key_id)
            if value is None:
                continue
            ET.SubElement(element, "data", {"key": "e_" + key_id}).text = _text(value)
        counts["edges"] += 1
    ET.indent(root, space="  ")
    return root, counts


def write_graphml(rows: Iterable[dict[str, Any]], out: IO[str]) -> dict[str, int]:
    """Write export rows as GraphML to a text stream; returns what was written."""
    import xml.etree.ElementTree as ET

    root, counts = to_graphml(rows)
    out.write('<?xml version="1.0" encoding="UTF-8"?>\n')
    out.write(ET.tostring(root, encoding="unicode"))
    out.write("\n")
    return counts
