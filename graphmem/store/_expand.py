"""The neighbourhood expansion both stores share: breadth first over facts from seed entities,
as a walk the caller feeds (``BreadthFirst``: the walk says which entities to read next, the
caller reads the facts touching them and hands them back), so a blocking store and an awaiting
one (the generated async Neo4j store) drive the same walk; ``breadth_first`` drives it with a
blocking ``fetch``."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

__all__ = ["BreadthFirst", "breadth_first"]


def breadth_first(
    entity_ids: Sequence[str],
    hops: int,
    limit: int,
    fetch: Callable[[list[str]], Iterable[tuple[str, str, str | None]]],
) -> list[tuple[str, int, str]]:
    """``fetch(entity ids)`` gives the (fact id, subject id, object id) of the facts touching
    them; returns (fact id, hop, seed entity it came from)."""
    walk = BreadthFirst(entity_ids, hops, limit)
    while (frontier := walk.frontier()) is not None:
        walk.add(fetch(frontier))
    return walk.result()


class BreadthFirst:
    """Breadth-first expansion from seed entities, up to ``hops`` hops and ``limit`` facts;
    ``result()`` gives (fact id, hop, seed entity it came from)."""

    def __init__(self, entity_ids: Sequence[str], hops: int, limit: int) -> None:
        self._limit = limit
        self._hops = max(hops, 0)
        self._hop = 0
        self._found: dict[str, tuple[int, str]] = {}
        self._frontier: dict[str, str] = {e: e for e in entity_ids}  # entity -> its seed
        self._seen = set(self._frontier)

    def frontier(self) -> list[str] | None:
        """The entities to read the facts of next; None when the walk is over."""
        if self._hop >= self._hops or not self._frontier or len(self._found) >= self._limit:
            return None
        return list(self._frontier)

    def add(self, rows: Iterable[tuple[str, str, str | None]]) -> None:
        """The (fact id, subject id, object id) of the facts touching the frontier."""
        self._hop += 1
        frontier, following = self._frontier, {}
        for fact_id, subject_id, object_id in rows:
            via = frontier.get(subject_id) or frontier.get(object_id or "") or ""
            if fact_id not in self._found:
                self._found[fact_id] = (self._hop, via)
            for other in (subject_id, object_id):
                if other and other not in self._seen:
                    self._seen.add(other)
                    following[other] = via
        self._frontier = following

    def result(self) -> list[tuple[str, int, str]]:
        return [(fid, hop, via) for fid, (hop, via) in self._found.items()][: self._limit]
