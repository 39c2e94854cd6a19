"""The Neo4j store's conversation reads: who speaks in a group, and each episode's speaker and
neighbouring turns (the cues recall uses for conversational memory), the SQLite store's answers.

``speakers()`` is cached per store instance and brought up to date incrementally; the cache
starts over on a new episode epoch (a ``GraphmemMeta`` key that every episode deletion changes,
here or in another process).
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any

from ..._ids import entity_key
from .runner import BoltRunner, chunks

__all__ = ["EPISODE_EPOCH", "Conversation"]

# GraphmemMeta key changed by every episode deletion: the speakers cache starts over on it.
EPISODE_EPOCH = "episode_epoch"
# The speakers cache re-reads the episodes of the last minute of seq (microseconds): a writer in
# another process may commit a slightly lower seq after this one has read past it.
_SEQ_MARGIN = 60_000_000


class Conversation:
    """Speakers and episode neighbourhoods, over the store's runner."""

    def __init__(self, bolt: BoltRunner) -> None:
        self._bolt = bolt
        self._lock = threading.Lock()
        # by group: (episode epoch, highest seq read, name by key)
        self._cache: dict[str, tuple[Any, int, dict[str, str]]] = {}

    def forget(self) -> None:
        """Episodes changed behind the cache's back (a backfill, a wipe): start over."""
        with self._lock:
            self._cache.clear()

    def speakers(self, group_id: str) -> dict[str, str]:
        """The speakers of the group's episodes (``metadata.speaker`` or ``.name``) by name key,
        the SQLite store's answer (the latest spelling of a key wins).

        Kept per store instance and brought up to date by one index-backed read of the group's
        episodes stored since the last call (``graphmem_episode_group_seq``); an episode
        deletion anywhere (a new episode epoch) reads the group again.
        """
        with self._lock:
            cached = self._cache.get(group_id)
            after = -1 if cached is None else cached[1] - _SEQ_MARGIN
            rows = self._bolt.read(
                "episodes/speakers", group_id=group_id, after=after, epoch_key=EPISODE_EPOCH
            )
            epoch = rows[0]["epoch"] if rows else None
            if cached is not None and epoch != cached[0]:
                cached = None
                rows = self._bolt.read(
                    "episodes/speakers", group_id=group_id, after=-1, epoch_key=EPISODE_EPOCH
                )
                epoch = rows[0]["epoch"] if rows else None
            names = {} if cached is None else dict(cached[2])
            high = -1 if cached is None else cached[1]
            for r in rows:  # ordered by each speaker's latest seq: the latest spelling wins
                if r["last"] is None:
                    continue
                high = max(high, int(r["last"]))
                who = r["speaker"]
                if isinstance(who, str) and who.strip():
                    names[entity_key(who)] = who.strip()
            self._cache[group_id] = (epoch, high, names)
            return dict(names)

    def episode_context(
        self, episode_ids: Sequence[str], window: int = 1
    ) -> tuple[dict[str, tuple[str | None, int]], dict[str, list[tuple[str, int]]]]:
        """Each episode's speaker and reference time, and its neighbours: the ``window``
        episodes before and after it in arrival order within the same group and source (a
        conversation's adjacent turns), the SQLite store's answer.

        As there, the search looks ``window + 1`` episodes of the group each way (other
        sources' episodes may be interleaved) and keeps those of the episode's source: two
        index-backed reads, at most ``2 (window + 1)`` rows per episode, at any store size.
        """
        wanted = list(dict.fromkeys(episode_ids))
        base: dict[str, tuple[str, str | None, int]] = {}
        speakers: dict[str, tuple[str | None, int]] = {}
        for chunk in chunks(wanted):
            for r in self._bolt.read("episodes/context", ids=list(chunk)):
                eid = str(r["id"])
                base[eid] = (str(r["group_id"]), r["source"], int(r["seq"]))
                who = r["speaker"]
                speakers[eid] = (who if isinstance(who, str) else None, int(r["reference_time"]))
        neighbours: dict[str, list[tuple[str, int]]] = {eid: [] for eid in base}
        if window <= 0 or not base:
            return speakers, neighbours
        reach = int(window) + 1
        near: dict[str, list[tuple[int, str, str | None]]] = {eid: [] for eid in base}
        ids = list(base)
        for chunk in chunks(ids):
            for r in self._bolt.read(
                "episodes/neighbours",
                rows=[{"id": e, "group_id": base[e][0], "seq": base[e][2]} for e in chunk],
                reach=reach,
            ):
                other = str(r["neighbour"])
                near[str(r["id"])].append((int(r["seq"]), other, r["source"]))
                who = r["speaker"]
                speakers.setdefault(
                    other, (who if isinstance(who, str) else None, int(r["reference_time"]))
                )
        for eid, (_, source, seq) in base.items():
            before = sorted((n for n in near[eid] if n[0] < seq), reverse=True)
            after = sorted(n for n in near[eid] if n[0] > seq)
            for side in (before, after):
                found = 0
                for _, other, other_source in side[:reach]:
                    if other_source == source:
                        found += 1
                        neighbours[eid].append((other, found))
                        if found == window:
                            break
        return speakers, neighbours
