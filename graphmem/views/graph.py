"""A memory as a ``networkx.MultiDiGraph``: ``GraphMemory.to_networkx`` and the GraphML export.

The graph is the one the Neo4j store holds (and that Neo4j Browser shows), built from the
store-agnostic ``export()`` rows so it is the same on SQLite and Neo4j:

- nodes, keyed by graphmem's ids, with ``kind`` ``"Entity"``, ``"Fact"`` or ``"Episode"`` (the
  Neo4j label) and ``label`` (short display text, what Gephi or yEd show);
- edges, keyed by relationship type (``G.edges[src, dst, "SUPERSEDES"]``; at most one of each
  type joins two nodes), with the type again as ``label``: ``SUBJECT_OF`` entity → fact,
  ``OBJECT`` fact → entity, ``FROM_EPISODE`` and ``ENDED_BY`` fact → episode (``span``),
  ``SUPERSEDES`` and ``CONTRADICTS`` newer fact → older fact (``reason``, ``decided_by``,
  ``decided_at``), ``MENTIONS`` episode → entity, ``UPDATES`` later turn → earlier turn
  (``reason``, ``terms``, ``decided_at``).

Attributes keep their Python types: times are timezone-aware ``datetime`` objects in UTC (so
they sort and compare; the GraphML export writes them as ISO-8601 strings), ``confidence`` is a
float, a fact's ``value`` is the number, boolean or string it was stored as, ``aliases`` a list,
``metadata`` and ``attributes`` dicts. An attribute whose value is unknown is left out rather
than set to ``None``. Embeddings are left out (they are in the JSONL export).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from datetime import datetime
from typing import TYPE_CHECKING, Any, Protocol

from .._errors import ConfigError, InputError
from .._time import now_ms, parse_datetime, require_aware, to_ms

if TYPE_CHECKING:
    import networkx as nx

    from ..store._base import GraphStore

__all__ = ["NETWORKX_HINT", "GraphSource", "graph_from_rows", "require_networkx", "to_networkx"]

NETWORKX_HINT = "pip install 'graphmem[networkx]'"
_LABEL_MAX = 80
_EPISODE_TIMES = ("reference_time", "ingested_at")
_ENTITY_TIMES = ("created_at",)
_FACT_TIMES = ("valid_from", "valid_to", "recorded_at", "expired_at", "ended_at")


def require_networkx() -> Any:
    """The networkx module, or a ``ConfigError`` that names the extra to install."""
    try:
        import networkx
    except ImportError:
        raise ConfigError(f"the graph view needs networkx: {NETWORKX_HINT}") from None
    return networkx


class GraphSource(Protocol):
    """What the graph view reads of a memory (``GraphMemory`` is one)."""

    store: GraphStore

    def export(self, *, group_id: str | None = None) -> Iterator[dict[str, Any]]: ...


def to_networkx(
    memory: GraphSource,
    *,
    group_id: str | None,
    as_of: datetime | None,
    include_history: bool,
) -> nx.MultiDiGraph[str]:
    """See ``GraphMemory.to_networkx``."""
    networkx = require_networkx()
    if not isinstance(include_history, bool):
        raise InputError(f"include_history must be True or False, got {include_history!r}")
    at = require_aware(as_of, "as_of")
    if include_history and at is not None:
        raise InputError(
            "give as_of (the facts valid at one time) or include_history=True (every fact), "
            "not both"
        )
    rows = list(memory.export(group_id=group_id))
    keep: Callable[[str], bool] | None = None
    if include_history:
        from ..store._base import PLACEHOLDER

        # A negation's placeholders hold at no time: no fact to show (docs/design.md).
        hidden = {
            row["id"]
            for row in rows
            if row.get("type") == "fact"
            and row.get("end_reason") == PLACEHOLDER
            and row.get("valid_to") == row.get("valid_from")
        }
        keep = None if not hidden else (lambda fact_id: fact_id not in hidden)
    else:
        from ..store._base import TimeView

        known = now_ms()
        view = TimeView(at=to_ms(at) if at is not None else known, known=known)
        groups = {row["group_id"] for row in rows if row.get("type") == "fact"}
        visible = {
            fact.id
            for group in sorted(groups)
            for fact in memory.store.list_facts(group, view=view)
        }
        keep = visible.__contains__
    graph: nx.MultiDiGraph[str] = networkx.MultiDiGraph(
        name="graphmem", group_id=group_id, as_of=at, include_history=include_history
    )
    graph_from_rows(rows, graph, keep_fact=keep)
    return graph


def graph_from_rows(
    rows: Iterable[dict[str, Any]],
    graph: nx.MultiDiGraph[str],
    *,
    keep_fact: Callable[[str], bool] | None = None,
) -> nx.MultiDiGraph[str]:
    """Add ``export()`` rows to ``graph`` (facts for which ``keep_fact`` is false are left out,
    with their edges); an edge whose end is not in the rows is dropped."""
    edges: list[tuple[str, str, str, dict[str, Any]]] = []
    for row in rows:
        kind = row.get("type")
        if kind == "episode":
            content = str(row.get("content") or "")
            graph.add_node(row["id"], **_clean({
                "kind": "Episode",
                "label": _short(f"{row.get('source') or 'episode'}: {content}"),
                "group_id": row.get("group_id"),
                "source": row.get("source"),
                "episode_kind": row.get("kind"),
                "content": content,
                "content_hash": row.get("content_hash"),
                "status": row.get("status"),
                "extractor": row.get("extractor"),
                "error": row.get("error"),
                "metadata": row.get("metadata") or None,
                **_times(row, _EPISODE_TIMES),
            }))
        elif kind == "entity":
            graph.add_node(row["id"], **_clean({
                "kind": "Entity",
                "label": _short(str(row.get("name") or row["id"])),
                "group_id": row.get("group_id"),
                "name": row.get("name"),
                "key": row.get("key"),
                "entity_type": row.get("entity_type"),
                "aliases": list(row.get("aliases") or []) or None,
                "summary": row.get("summary"),
                "attributes": row.get("attributes") or None,
                **_times(row, _ENTITY_TIMES),
            }))
        elif kind == "fact":
            if keep_fact is not None and not keep_fact(row["id"]):
                continue
            confidence = row.get("confidence")
            graph.add_node(row["id"], **_clean({
                "kind": "Fact",
                "label": _short(str(row.get("statement") or row["id"])),
                "group_id": row.get("group_id"),
                "statement": row.get("statement"),
                "predicate": row.get("predicate"),
                "value": row.get("value"),
                "end_reason": row.get("end_reason"),
                "confidence": None if confidence is None else float(confidence),
                "decided_by": row.get("decided_by"),
                **_times(row, _FACT_TIMES),
            }))
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
                **_times(row, ("decided_at",)),
            }))
        elif kind == "mention":
            edges.append((row["episode_id"], row["entity_id"], "MENTIONS", {}))
        elif kind == "episode_link":
            edges.append((row["src"], row["dst"], str(row["kind"]), {
                "reason": row.get("reason"),
                "terms": list(row.get("terms") or []),
                **_times(row, ("decided_at",)),
            }))
    for src, dst, label, data in edges:
        if src in graph and dst in graph:
            graph.add_edge(src, dst, key=label, label=label, **_clean(data))
    return graph


def _times(row: dict[str, Any], names: tuple[str, ...]) -> dict[str, datetime | None]:
    return {
        name: parse_datetime(row[name], name) if isinstance(row.get(name), str) else None
        for name in names
    }


def _clean(values: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in values.items() if value is not None}


def _short(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= _LABEL_MAX else text[: _LABEL_MAX - 1] + "…"
