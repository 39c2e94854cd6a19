"""How a family's members become one timeline (shared by ingest and by the rebuilds)."""

from __future__ import annotations

from collections.abc import Sequence

from .._predicates import Family
from ..store._base import Timeline

__all__ = ["family_key", "merge_timelines"]


def family_key(family: Family) -> str:
    """The timeline key of a family's state (never a predicate: predicates have no ``@``)."""
    return "@" + family.name


def merge_timelines(parts: Sequence[Timeline]) -> Timeline:
    """One timeline of several predicates' timelines (a family), each link once."""
    merged = Timeline()
    seen: set[tuple[str, str, str]] = set()
    ids: set[str] = set()
    for part in parts:
        for fact in part.facts:
            if fact.id not in ids:
                ids.add(fact.id)
                merged.facts.append(fact)
        for link in part.links:
            key = (link.kind, link.src, link.dst)
            if key not in seen:
                seen.add(key)
                merged.links.append(link)
    merged.facts.sort(key=lambda f: (f.valid_from, f.recorded_at, f.id))
    return merged
