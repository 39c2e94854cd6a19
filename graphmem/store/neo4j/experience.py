"""The Neo4j store's experience index (migration 9): each experience episode carries its
index entry as properties (``x_success``, ``x_length``, ``x_terms``/``x_tfs``, ``x_values``
as JSON), written with it; recall reads them by group and arrival order (``seq``), the same
answers as the SQLite store's tables."""

from __future__ import annotations

import functools
import json
from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt
from neo4j import ManagedTransaction

from ..._models import EpisodeRecord
from .._base import episode_record
from .._experience import ExperienceCounts, ExperienceEntry, ValueColumn, pack_values
from .rows import episode_row, experience_params
from .runner import BoltRunner, chunks, run

__all__ = ["ExperienceIndex"]


class ExperienceIndex:
    def __init__(self, bolt: BoltRunner) -> None:
        self._bolt = bolt

    def counts(self, group_id: str) -> ExperienceCounts:
        (row,) = self._bolt.read("experience/counts", group_id=group_id)
        return ExperienceCounts(
            int(row["indexed"] or 0), int(row["last"] or 0), int(row["episodes"] or 0)
        )

    def rows(self, group_id: str, after: int) -> npt.NDArray[np.int64]:
        found = self._bolt.read("experience/rows", group_id=group_id, after=int(after))
        rows = [(int(r["seq"]), int(r["at"]), int(r["success"]), int(r["length"])) for r in found]
        return np.asarray(rows, dtype=np.int64).reshape(-1, 4)

    def values(self, group_id: str, path: str, after: int) -> ValueColumn:
        out: list[tuple[int, Any]] = []
        for r in self._bolt.read("experience/values", group_id=group_id, after=int(after)):
            held = json.loads(r["values"] or "{}").get(path)
            if isinstance(held, list) and held:
                out.append((int(r["seq"]), pack_values(held)))
        return ValueColumn.from_pairs(out)

    def postings(
        self, group_id: str, terms: Sequence[str], after: int
    ) -> dict[str, npt.NDArray[np.int64]]:
        wanted = list(dict.fromkeys(terms))
        out: dict[str, list[tuple[int, int]]] = {t: [] for t in wanted}
        if not wanted:
            return {}
        for r in self._bolt.read(
            "experience/postings", group_id=group_id, after=int(after), terms=wanted
        ):
            for term, tf in zip(r["terms"] or [], r["tfs"] or [], strict=False):
                if term in out:
                    out[term].append((int(r["seq"]), int(tf)))
        return {t: np.asarray(p, dtype=np.int64).reshape(-1, 2) for t, p in out.items()}

    def ids(self, group_id: str, seqs: Sequence[int]) -> dict[int, str]:
        out: dict[int, str] = {}
        for chunk in chunks(list(dict.fromkeys(int(s) for s in seqs))):
            for r in self._bolt.read("experience/ids", group_id=group_id, seqs=list(chunk)):
                out[int(r["seq"])] = str(r["id"])
        return out

    def unindexed(self, group_id: str, limit: int) -> list[EpisodeRecord]:
        found = self._bolt.read("experience/unindexed", group_id=group_id, limit=int(limit))
        return [episode_record(episode_row(r["e"])) for r in found]

    def add(self, entries: Sequence[tuple[str, ExperienceEntry]]) -> None:
        rows = [{"id": episode_id, **experience_params(entry)} for episode_id, entry in entries]

        def write(tx: ManagedTransaction, batch: Sequence[dict[str, Any]]) -> None:
            run(tx, "experience/entries_set", rows=list(batch))

        for chunk in chunks(rows):
            self._bolt.write_tx(functools.partial(write, batch=chunk), "index experiences")
