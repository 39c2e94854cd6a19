"""An attempt's index entry (``ExperienceEntry``): what the store keeps beside the record so
recall never has to read records back to rank them."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..extract.structured import is_vector, segment
from ..store._experience import ExperienceEntry
from .record import SECTIONS, terms, text_view

__all__ = ["experience_entry", "value_paths"]


def _walk(prefix: str, node: Any, out: dict[str, list[Any]]) -> None:
    # As ``record.flatten``, but a vector is one path (its elements are read from it).
    if isinstance(node, dict):
        for key, child in node.items():
            _walk(f"{prefix}.{segment(key)}" if prefix else segment(key), child, out)
    elif isinstance(node, list):
        if is_vector(node) or all(not isinstance(x, dict | list) for x in node):
            kept = [x for x in node if x is not None]
            if kept:
                out.setdefault(prefix, []).extend(kept)
        else:
            for index, child in enumerate(node):
                _walk(f"{prefix}.{index}", child, out)
    elif node is not None:
        out.setdefault(prefix, []).append(node)


def value_paths(record: Mapping[str, Any], meta: Mapping[str, Any]) -> dict[str, list[Any]]:
    """Every filterable path of an attempt and its values; a vector is one path."""
    out: dict[str, list[Any]] = {}
    for key in ("task", "run_id", "episode"):
        if record.get(key) is not None:
            out[key] = [record[key]]
    for name in SECTIONS:
        _walk(name, record.get(name) or {}, out)
    _walk("meta", dict(meta), out)
    return out


def experience_entry(record: Mapping[str, Any], meta: Mapping[str, Any]) -> ExperienceEntry:
    success = (record.get("outcome") or {}).get("success")
    counts: dict[str, int] = {}
    for term in terms(text_view(record)):
        counts[term] = counts.get(term, 0) + 1
    return ExperienceEntry(
        success=-1 if not isinstance(success, bool) else int(success),
        terms=counts,
        values=value_paths(record, meta),
    )
