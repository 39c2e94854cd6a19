"""Experience memory: records of attempts (task, state, params, outcome), recalled whole.

An experience is an episode of kind ``experience`` whose content is a JSON record
``{"task", "run_id", "episode", "state", "params", "outcome"}``; ``meta`` (filter-only fields)
and ``payload`` (trajectories, observations) ride in its metadata, so they are stored and
returned but never full-text indexed, embedded or turned into facts. ``ExperienceExtractor``
turns the ``params`` leaves and ``outcome.success`` into facts about the attempt (what was
tried and whether it worked), so the temporal graph (history, supersession, provenance) holds
for them as for any fact; the rest of the record is recalled from the record itself.

Recall ranks a group's experiences in memory: a per-group index (built once from the store,
then topped up with what was added since) holds each record's text terms, flattened values and
times. The score is ``weights.text * text + weights.state * state + weights.recency * recency``:

- ``text``: BM25 of the query over the task and the records' string values (best = 1), mixed
  with embedding similarity by ``weights.dense`` (default: the embedder's ``recall_weight``);
- ``state``: ``1 / (1 + D²)`` where ``D`` is the root mean square, over the named fields, of
  each field's Euclidean distance divided by that field's median distance among the candidates
  (so metres and newtons weigh alike and the nearest attempts score near 1);
- ``recency``: 0 for the oldest candidate, 1 for the newest.

``outcome`` then keeps successes or failures only, or puts the successes among the ``k`` best
matches first (``success_first``). Filters (the recall
filter language) apply to every returned experience, over paths such as ``task``, ``run_id``,
``state.object``, ``params.force``, ``outcome.success``, ``meta.seed``; a vector's path matches
when any element does, and ``state.pos.0`` names one element.
"""

from __future__ import annotations

import math
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import numpy as np
import numpy.typing as npt

from .._errors import InputError
from .._filters import Condition, matches, parse_filters
from .._models import OUTCOMES, EpisodeRecord, Experience
from .._time import from_ms, require_aware, to_ms
from ..embeddings.factory import Embedder
from ..extract.structured import experience_subject, is_vector, segment
from ..store import GraphStore
from .record import (
    SECTIONS,
    experience_record,
    flatten,
    parse_experience,
    plain_json,
    terms,
    text_view,
)

__all__ = [
    "OUTCOMES",
    "ExperienceRecall",
    "ExperienceWeights",
    "experience_record",
    "parse_experience",
    "text_view",
]

_MAX_K = 1000
# Experiences held in memory over all groups; the least recently recalled groups go first.
_CACHE_ROWS = 200_000
_K1, _B = 1.2, 0.75


@dataclass(frozen=True)
class ExperienceWeights:
    """How recall mixes its signals (each 0–1 before weighting). ``dense``: the share of
    embedding similarity inside ``text`` (None: the embedder's ``recall_weight``, 0 for the
    built-in hashed n-grams)."""

    text: float = 1.0
    state: float = 1.0
    recency: float = 0.05
    dense: float | None = None

    def __post_init__(self) -> None:
        for name in ("text", "state", "recency", "dense"):
            value = getattr(self, name)
            if value is None and name == "dense":
                continue
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise InputError(f"ExperienceWeights.{name} must be a number, got {value!r}")
            if not math.isfinite(value) or value < 0:
                raise InputError(f"ExperienceWeights.{name} must be finite and >= 0, got {value}")
        if self.dense is not None and self.dense > 1:
            raise InputError(f"ExperienceWeights.dense is a share: 0 to 1, got {self.dense}")


# ----------------------------------------------------------------------------- the index
@dataclass
class _Group:
    """One group's experiences, in the order they were read. Every column grows in place when
    experiences are added, so a recall after a write pays for the new rows only."""

    token: object = None
    listed: list[str] = field(default_factory=list)  # every id read, records or not
    ids: list[str] = field(default_factory=list)
    records: list[dict[str, Any]] = field(default_factory=list)
    metas: list[dict[str, Any]] = field(default_factory=list)
    times: list[int] = field(default_factory=list)
    outcomes: list[int] = field(default_factory=list)  # 1 success, 0 failure, -1 unknown
    flat: list[dict[str, list[Any]] | None] = field(default_factory=list)  # filter paths, lazily
    postings: dict[str, tuple[list[int], list[int]]] = field(default_factory=dict)
    lengths: list[int] = field(default_factory=list)
    # Numpy views of the lists above, each with the row count it was built at.
    arrays: tuple[int, npt.NDArray[np.int64], npt.NDArray[np.int8]] | None = None
    posting_arrays: dict[str, tuple[int, npt.NDArray[np.int64], npt.NDArray[np.float64]]] = (
        field(default_factory=dict)
    )
    vectors: dict[tuple[str, int], npt.NDArray[np.float64]] = field(default_factory=dict)

    def add(self, episode: EpisodeRecord) -> None:
        try:
            record = parse_experience(episode.content)
        except InputError:
            return  # not an experience record (written by hand): nothing to recall
        index = len(self.ids)
        self.ids.append(episode.id)
        self.records.append(record)
        meta = episode.metadata.get("meta")
        self.metas.append(meta if isinstance(meta, dict) else {})
        self.times.append(to_ms(episode.reference_time))
        success = (record.get("outcome") or {}).get("success")
        self.outcomes.append(-1 if not isinstance(success, bool) else int(success))
        self.flat.append(None)
        words = terms(text_view(record))
        self.lengths.append(len(words))
        counts: dict[str, int] = {}
        for term in words:
            counts[term] = counts.get(term, 0) + 1
        for term, tf in counts.items():
            docs, tfs = self.postings.setdefault(term, ([], []))
            docs.append(index)
            tfs.append(tf)

    def values(self, i: int) -> dict[str, list[Any]]:
        held = self.flat[i]
        if held is None:
            held = self.flat[i] = flatten(self.records[i], self.metas[i])
        return held

    def columns(self) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int8]]:
        """Times and outcomes as arrays (rebuilt after the group grew)."""
        if self.arrays is None or self.arrays[0] != len(self.ids):
            self.arrays = (
                len(self.ids),
                np.asarray(self.times, dtype=np.int64),
                np.asarray(self.outcomes, dtype=np.int8),
            )
        return self.arrays[1], self.arrays[2]

    def _posting(self, term: str) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float64]] | None:
        lists = self.postings.get(term)
        if lists is None:
            return None
        held = self.posting_arrays.get(term)
        if held is None or held[0] != len(lists[0]):
            held = (
                len(lists[0]),
                np.asarray(lists[0], dtype=np.int64),
                np.asarray(lists[1], dtype=np.float64),
            )
            self.posting_arrays[term] = held
        return held[1], held[2]

    def bm25(self, query: str) -> npt.NDArray[np.float64]:
        n = len(self.ids)
        scores = np.zeros(n)
        if not n:
            return scores
        lengths = np.asarray(self.lengths, dtype=np.float64)
        norm = _K1 * (1 - _B + _B * lengths / max(float(lengths.mean()), 1e-9))
        for term in dict.fromkeys(terms(query)):
            posting = self._posting(term)
            if posting is None:
                continue
            docs, tf = posting
            idf = math.log(1 + (n - docs.size + 0.5) / (docs.size + 0.5))
            scores[docs] += idf * tf * (_K1 + 1) / (tf + norm[docs])
        return scores

    def vector(self, path: str, dim: int) -> npt.NDArray[np.float64]:
        """Every experience's value at ``path`` as a row of ``dim`` numbers (NaN: missing)."""
        held = self.vectors.get((path, dim))
        start = 0 if held is None else held.shape[0]
        if start == len(self.ids) and held is not None:
            return held
        rows = np.full((len(self.ids) - start, dim), np.nan)
        section, _, rest = path.partition(".")
        for offset, record in enumerate(self.records[start:]):
            node: Any = record.get(section)
            for key in rest.split("."):
                node = _child(node, key)
                if node is None:
                    break
            if is_vector(node) and len(node) == dim:
                rows[offset] = node
            elif dim == 1 and isinstance(node, int | float) and not isinstance(node, bool):
                rows[offset, 0] = node
        out = rows if held is None else np.vstack([held, rows])
        self.vectors[(path, dim)] = out
        return out


def _child(node: Any, key: str) -> Any:
    if not isinstance(node, dict):
        return None
    if key in node:
        return node[key]
    return next((v for k, v in node.items() if segment(k) == key), None)


def _query_state(state: Mapping[str, Any] | None) -> list[tuple[str, npt.NDArray[np.float64]]]:
    if state is None:
        return []
    if not isinstance(state, Mapping):
        raise InputError(f"state must be a mapping of field to number(s), got {type(state)}")
    out = []
    for raw, value in state.items():
        if not isinstance(raw, str) or not raw.strip():
            raise InputError(f"state field names must be non-empty strings, got {raw!r}")
        path = ".".join(segment(part) for part in raw.split("."))
        if not path.startswith(SECTIONS):
            path = f"state.{path}"
        plain = plain_json(value) if hasattr(value, "tolist") else value
        if isinstance(plain, int | float) and not isinstance(plain, bool):
            plain = [plain]
        if isinstance(plain, tuple):
            plain = list(plain)
        if not isinstance(plain, list) or not is_vector(plain):
            raise InputError(f"state[{raw!r}] must be a number or a list of numbers")
        vector = np.asarray(plain, dtype=np.float64)
        if not np.all(np.isfinite(vector)):
            raise InputError(f"state[{raw!r}] must be finite")
        out.append((path, vector))
    return out


class ExperienceRecall:
    """Ranks a group's experiences; holds the per-group indexes (read-through caches)."""

    def __init__(self, store: GraphStore, embedder: Embedder) -> None:
        self.store = store
        self.embedder = embedder
        self._groups: OrderedDict[str, _Group] = OrderedDict()

    def _group(self, group_id: str) -> _Group:
        token = self.store.change_token()
        held = self._groups.get(group_id)
        if held is not None and token is not None and held.token == token:
            self._groups.move_to_end(group_id)
            return held
        ids = self.store.episode_ids_by_kind(group_id, "experience")
        if held is None or held.listed != ids[: len(held.listed)]:
            held = _Group()  # first read, or something was forgotten: read the group again
        new = ids[len(held.listed) :]
        for start in range(0, len(new), 500):
            chunk = new[start : start + 500]
            found = {e.id: e for e in self.store.episodes(chunk)}
            for episode_id in chunk:
                if episode_id in found:
                    held.add(found[episode_id])
        held.listed = ids
        held.token = token
        self._groups[group_id] = held
        self._groups.move_to_end(group_id)
        while len(self._groups) > 1 and sum(len(g.ids) for g in self._groups.values()) > (
            _CACHE_ROWS
        ):
            self._groups.popitem(last=False)
        return held

    def search(
        self,
        group_id: str,
        query: str,
        *,
        state: Mapping[str, Any] | None,
        k: int,
        outcome: str,
        filters: Mapping[str, Any] | None,
        weights: ExperienceWeights,
        as_of: datetime | None,
        include_payload: bool,
    ) -> list[Experience]:
        if not isinstance(query, str):
            raise InputError(f"query must be a string, got {type(query).__name__}")
        if isinstance(k, bool) or not isinstance(k, int) or not 1 <= k <= _MAX_K:
            raise InputError(f"k must be an integer from 1 to {_MAX_K}, got {k!r}")
        if outcome not in OUTCOMES:
            raise InputError(f"outcome must be one of {', '.join(OUTCOMES)}, got {outcome!r}")
        conditions = parse_filters(filters)
        wanted = _query_state(state)
        at = require_aware(as_of, "as_of")
        group = self._group(group_id)
        keep = self._candidates(group, conditions, outcome, to_ms(at) if at else None)
        if not keep.size:
            return []
        parts = {
            "text": self._text(group, group_id, query, keep, weights),
            "recency": _spread(group.columns()[0][keep].astype(np.float64)),
        }
        distance = self._distance(group, wanted, keep)
        if distance is not None:
            parts["state"] = np.where(np.isfinite(distance), 1 / (1 + distance**2), 0.0)
        score = (
            weights.text * parts["text"]
            + weights.state * parts.get("state", 0.0)
            + weights.recency * parts["recency"]
        )
        order = np.lexsort((-group.columns()[0][keep], -score))  # ties: newest first
        top = order[:k]
        if outcome == "success_first":
            # The k best matches, their successes first: a success that does not match the
            # query or the state must not push a matching failure out.
            success = group.columns()[1][keep[top]] == 1
            top = top[np.argsort(~success, kind="stable")]
        payloads = self._payloads(group, keep[top]) if include_payload else {}
        out = []
        for rank in top:
            i = int(keep[rank])
            scores = {name: float(np.asarray(value)[rank]) for name, value in parts.items()}
            if distance is not None and np.isfinite(distance[rank]):
                scores["state_distance"] = float(distance[rank])
            out.append(self._experience(group, group_id, i, float(score[rank]), scores))
            if include_payload:
                out[-1].payload = payloads.get(group.ids[i], {})
        return out

    @staticmethod
    def _success(group: _Group, i: int) -> bool | None:
        value = (group.records[i].get("outcome") or {}).get("success")
        return value if isinstance(value, bool) else None

    @staticmethod
    def _candidates(
        group: _Group, conditions: list[Condition], outcome: str, at: int | None
    ) -> npt.NDArray[np.int64]:
        times, outcomes = group.columns()
        mask = np.ones(len(group.ids), dtype=bool)
        if at is not None:
            mask &= times <= at
        if outcome == "success_only":
            mask &= outcomes == 1
        elif outcome == "failure_only":
            mask &= outcomes == 0
        keep = np.flatnonzero(mask)
        if conditions:
            keep = np.asarray(
                [i for i in keep if matches(group.values(int(i)), conditions)], dtype=np.int64
            )
        return keep.astype(np.int64)

    def _text(
        self,
        group: _Group,
        group_id: str,
        query: str,
        keep: npt.NDArray[np.int64],
        weights: ExperienceWeights,
    ) -> npt.NDArray[np.float64]:
        if not query.strip():
            return np.zeros(keep.size)
        lexical = group.bm25(query)[keep]
        best = float(lexical.max())
        lexical = lexical / best if best > 0 else lexical
        dense_weight = weights.dense
        if dense_weight is None:
            dense_weight = float(getattr(self.embedder, "recall_weight", 0.3))
        if dense_weight <= 0:
            return lexical
        vector = self.embedder.embed([query])[0]
        found = dict(self.store.vector_episodes(group_id, vector, min(5000, 2 * len(group.ids))))
        dense = np.array([found.get(group.ids[i], 0.0) for i in keep], dtype=np.float64)
        return np.asarray((1 - dense_weight) * lexical + dense_weight * _spread(dense))

    @staticmethod
    def _distance(
        group: _Group,
        wanted: Sequence[tuple[str, npt.NDArray[np.float64]]],
        keep: npt.NDArray[np.int64],
    ) -> npt.NDArray[np.float64] | None:
        if not wanted:
            return None
        total = np.zeros(keep.size)
        for path, target in wanted:
            rows = group.vector(path, target.size)[keep]
            each = np.linalg.norm(rows - target, axis=1)  # NaN where the field is missing
            finite = each[np.isfinite(each)]
            scale = float(np.median(finite)) if finite.size else 1.0
            total += (each / (scale if scale > 0 else 1.0)) ** 2
        return np.asarray(np.sqrt(total / len(wanted)))

    def _payloads(self, group: _Group, rows: npt.NDArray[np.int64]) -> dict[str, dict[str, Any]]:
        episodes = self.store.episodes([group.ids[int(i)] for i in rows])
        return {
            e.id: dict(e.metadata.get("payload") or {})
            for e in episodes
            if isinstance(e.metadata.get("payload") or {}, dict)
        }

    @staticmethod
    def _experience(
        group: _Group, group_id: str, i: int, score: float, scores: dict[str, float]
    ) -> Experience:
        record = group.records[i]
        subject, _ = experience_subject(record, group.ids[i])
        run, number = record.get("run_id"), record.get("episode")
        return Experience(
            id=group.ids[i],
            group_id=group_id,
            subject=subject,
            task=str(record["task"]),
            run_id=None if run is None else str(run),
            episode=None if number is None else str(number),
            state=dict(record.get("state") or {}),
            params=dict(record.get("params") or {}),
            outcome=dict(record.get("outcome") or {}),
            meta=dict(group.metas[i]),
            success=ExperienceRecall._success(group, i),
            occurred_at=from_ms(group.times[i]),
            score=score,
            scores=scores,
        )


def _spread(values: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    """Min-max to 0–1 (all equal: all 1)."""
    if not values.size:
        return values
    low, high = float(values.min()), float(values.max())
    if high <= low:
        return np.ones(values.size)
    return np.asarray((values - low) / (high - low))
