"""The neighbourhood expansion both stores share: breadth first over facts from seed entities."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

__all__ = ["breadth_first"]


def breadth_first(
    entity_ids: Sequence[str],
    hops: int,
    limit: int,
    fetch: Callable[[list[str]], Iterable[tuple[str, str, str | None]]],
) -> list[tuple[str, int, str]]:
    """The expansion both stores share: ``fetch(entity ids)`` gives the (fact id, subject id,
    object id) of the facts touching them; returns (fact id, hop, seed entity it came from)."""
    found: dict[str, tuple[int, str]] = {}
    frontier: dict[str, str] = {e: e for e in entity_ids}  # entity -> seed it came from
    seen_entities = set(frontier)
    for hop in range(1, max(hops, 0) + 1):
        if not frontier or len(found) >= limit:
            break
        next_frontier: dict[str, str] = {}
        for fact_id, subject_id, object_id in fetch(list(frontier)):
            via = frontier.get(subject_id) or frontier.get(object_id or "") or ""
            if fact_id not in found:
                found[fact_id] = (hop, via)
            for other in (subject_id, object_id):
                if other and other not in seen_entities:
                    seen_entities.add(other)
                    next_frontier[other] = via
        frontier = next_frontier
    return [(fid, hop, via) for fid, (hop, via) in found.items()][:limit]
