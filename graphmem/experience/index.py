"""Experience memory: records of attempts (task, state, params, outcome), recalled whole.

An experience is an episode of kind ``experience`` whose content is a JSON record
``{"task", "run_id", "episode", "state", "params", "outcome"}``; ``meta`` (filter-only fields)
and ``payload`` (trajectories, observations) ride in its metadata, so they are stored and
returned but never full-text indexed, embedded or turned into facts. ``ExperienceExtractor``
turns the ``params`` leaves and ``outcome.success`` into facts about the attempt (what was
tried and whether it worked), so the temporal graph (history, supersession, provenance) holds
for them as for any fact; the rest of the record is recalled from the record itself.

Recall ranks a group's experiences in memory, over numpy columns read from the index the store
keeps beside each attempt (``columns``; a new process reads columns, never records) and topped
up with what was written since. The score is ``weights.text * text + weights.state * state +
weights.recency * recency``:

- ``text``: BM25 of the query over the task and the records' string values (best = 1), mixed
  with embedding similarity by ``weights.dense`` (default: the embedder's ``recall_weight``);
- ``state``: ``1 / (1 + D²)`` where ``D`` is the root mean square, over the named fields, of
  each field's Euclidean distance divided by that field's median distance among the candidates
  (so metres and newtons weigh alike and the nearest attempts score near 1);
- ``recency``: 0 for the oldest candidate, 1 for the newest; weight 0 by default, so it only
  breaks ties (newest first). With state and no query text (and no recency weight) the order is
  the distance itself, exactly nearest first.

``outcome`` then keeps successes or failures only, or puts the successes among the ``k`` best
matches first (``success_first``: when fewer than ``k`` of them are successes, the best failures
follow). Filters (the recall
filter language) apply to every returned experience, over paths such as ``task``, ``run_id``,
``state.object``, ``params.force``, ``outcome.success``, ``meta.seed``; a vector's path matches
when any element does, and ``state.pos.0`` names one element.
"""

from __future__ import annotations

import math
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import numpy as np
import numpy.typing as npt

from .._errors import InputError
from .._filters import Condition, matches, parse_filters
from .._models import OUTCOMES, EpisodeRecord, Experience
from .._time import require_aware, to_ms
from ..embeddings.factory import Embedder
from ..extract.structured import experience_subject, is_vector, segment
from ..store import GraphStore
from .columns import GroupColumns, read_group
from .record import SECTIONS, experience_record, parse_experience, plain_json, terms, text_view

__all__ = [
    "OUTCOMES",
    "ExperienceRecall",
    "ExperienceWeights",
    "experience_record",
    "parse_experience",
    "text_view",
]

_MAX_K = 1000
# What the in-memory columns may hold over all groups, in attempts and in bytes (numpy
# buffers, plus an estimate for the distinct values of filter columns); the least recently
# recalled groups go first, and a group that alone exceeds either is answered from what was
# read and then dropped (its next recall reads its columns again, from the store's packs).
_CACHE_ROWS = 200_000
_CACHE_BYTES = 256 * 2**20
_K1, _B = 1.2, 0.75


@dataclass(frozen=True)
class ExperienceWeights:
    """How recall mixes its signals (each 0–1 before weighting). ``dense``: the share of
    embedding similarity inside ``text`` (None: the embedder's ``recall_weight``, 0 for the
    built-in hashed n-grams)."""

    text: float = 1.0
    state: float = 1.0
    recency: float = 0.0
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
    """Ranks a group's experiences; holds the per-group columns (read-through caches)."""

    def __init__(self, store: GraphStore, embedder: Embedder) -> None:
        self.store = store
        self.embedder = embedder
        self._groups: OrderedDict[str, GroupColumns] = OrderedDict()

    def _group(self, group_id: str) -> GroupColumns:
        held = self._groups.pop(group_id, None)
        group = read_group(self.store, group_id, held)
        self._groups[group_id] = group
        self._trim()
        return group

    def _trim(self) -> None:
        """Drop the least recently recalled groups until the caps hold; the group just used
        is the last to go, so one larger than a cap is not kept."""
        while self._groups and (
            sum(len(g) for g in self._groups.values()) > _CACHE_ROWS
            or sum(g.nbytes for g in self._groups.values()) > _CACHE_BYTES
        ):
            self._groups.popitem(last=False)

    @property
    def cached_bytes(self) -> int:
        """What the held columns cost (``GroupColumns.nbytes`` over the groups held)."""
        return sum(g.nbytes for g in self._groups.values())

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
        try:
            return self._rank(group, query, wanted, conditions, k, outcome, weights, at,
                              include_payload)
        finally:
            self._trim()  # the columns this recall read lazily count too

    def _rank(
        self,
        group: GroupColumns,
        query: str,
        wanted: list[tuple[str, npt.NDArray[np.float64]]],
        conditions: list[Condition],
        k: int,
        outcome: str,
        weights: ExperienceWeights,
        at: datetime | None,
        include_payload: bool,
    ) -> list[Experience]:
        keep = _candidates(group, conditions, outcome, to_ms(at) if at else None)
        if not keep.size:
            return []
        times = group.times[keep]
        parts: dict[str, npt.NDArray[np.float64]] = {
            "text": self._text(group, query, keep, weights),
            "recency": _spread(times.astype(np.float64)),
        }
        distance = _distance(group, wanted, keep)
        if distance is not None:
            parts["state"] = np.where(np.isfinite(distance), 1 / (1 + distance**2), 0.0)
        score = (
            weights.text * parts["text"]
            + weights.state * parts.get("state", 0.0)
            + weights.recency * parts["recency"]
        )
        if distance is not None and not query.strip() and weights.recency == 0:
            # Numbers only: nearest first by the distance itself (exact; a score of
            # 1 / (1 + D²) cannot tell apart distances below 1e-8), newest first on a tie.
            top = _best(np.where(np.isfinite(distance), -distance, -np.inf), times, k)
        else:
            top = _best(score, times, k)
        if outcome == "success_first":
            # The k best matches, their successes first: a success that does not match the
            # query or the state must not push a matching failure out.
            success = group.outcomes[keep[top]] == 1
            top = top[np.argsort(~success, kind="stable")]
        return self._experiences(group, keep, top, parts, score, distance, include_payload)

    def _experiences(
        self,
        group: GroupColumns,
        keep: npt.NDArray[np.int64],
        top: npt.NDArray[np.int64],
        parts: Mapping[str, npt.NDArray[np.float64]],
        score: npt.NDArray[np.float64],
        distance: npt.NDArray[np.float64] | None,
        include_payload: bool,
    ) -> list[Experience]:
        seqs = [int(group.seqs[keep[rank]]) for rank in top]
        ids = self.store.experience_ids(group.group_id, seqs)
        episodes = {e.id: e for e in self.store.episodes([ids[s] for s in seqs if s in ids])}
        out = []
        for rank, seq in zip(top, seqs, strict=True):
            episode = episodes.get(ids.get(seq, ""))
            if episode is None:
                continue  # removed since the columns were read
            scores = {name: float(np.asarray(value)[rank]) for name, value in parts.items()}
            if distance is not None and np.isfinite(distance[rank]):
                scores["state_distance"] = float(distance[rank])
            found = _experience(episode, float(score[rank]), scores)
            if include_payload:
                payload = episode.metadata.get("payload") or {}
                found.payload = dict(payload) if isinstance(payload, dict) else {}
            out.append(found)
        return out

    def _text(
        self,
        group: GroupColumns,
        query: str,
        keep: npt.NDArray[np.int64],
        weights: ExperienceWeights,
    ) -> npt.NDArray[np.float64]:
        if not query.strip():
            return np.zeros(keep.size)
        lexical = _bm25(group, query)[keep]
        best = float(lexical.max())
        lexical = lexical / best if best > 0 else lexical
        dense_weight = weights.dense
        if dense_weight is None:
            dense_weight = float(getattr(self.embedder, "recall_weight", 0.3))
        if dense_weight <= 0:
            return lexical
        vector = self.embedder.embed([query])[0]
        found = dict(
            self.store.vector_episodes(group.group_id, vector, min(5000, 2 * len(group)))
        )
        ids = self.store.experience_ids(group.group_id, group.seqs[keep].tolist())
        dense = np.array(
            [found.get(ids.get(int(s), ""), 0.0) for s in group.seqs[keep]], dtype=np.float64
        )
        return np.asarray((1 - dense_weight) * lexical + dense_weight * _spread(dense))


def _candidates(
    group: GroupColumns, conditions: list[Condition], outcome: str, at: int | None
) -> npt.NDArray[np.int64]:
    mask = np.ones(len(group), dtype=bool)
    if at is not None:
        mask &= group.times <= at
    if outcome == "success_only":
        mask &= group.outcomes == 1
    elif outcome == "failure_only":
        mask &= group.outcomes == 0
    keep = np.flatnonzero(mask).astype(np.int64)
    for condition in conditions if keep.size else []:
        # Decided once per distinct value list; the last slot is for rows without the path.
        column = group.filter_values(condition.path)
        decided = [matches({condition.path: v}, [condition]) for v in column.distinct]
        decided.append(matches({}, [condition]))
        keep = keep[np.asarray(decided, dtype=bool)[column.codes[keep]]]
    return keep


def _bm25(group: GroupColumns, query: str) -> npt.NDArray[np.float64]:
    n = len(group)
    scores = np.zeros(n)
    if not n:
        return scores
    lengths = group.lengths
    norm = _K1 * (1 - _B + _B * lengths / max(float(lengths.mean()), 1e-9))
    for term in dict.fromkeys(terms(query)):
        docs, tf = group.posting(term)
        if not docs.size:
            continue
        idf = math.log(1 + (n - docs.size + 0.5) / (docs.size + 0.5))
        scores[docs] += idf * tf * (_K1 + 1) / (tf + norm[docs])
    return scores


def _distance(
    group: GroupColumns,
    wanted: Sequence[tuple[str, npt.NDArray[np.float64]]],
    keep: npt.NDArray[np.int64],
) -> npt.NDArray[np.float64] | None:
    if not wanted:
        return None
    total = np.zeros(keep.size)
    for path, target in wanted:
        rows = group.vector(path, target.size)[keep]
        each = np.sqrt(np.sum((rows - target) ** 2, axis=1))  # NaN where the field is missing
        scale = _median(each[np.isfinite(each)])
        total += (each / (scale if scale > 0 else 1.0)) ** 2
    return np.asarray(np.sqrt(total / len(wanted)))


def _median(values: npt.NDArray[np.float64]) -> float:
    """The median (1.0 for none), by partition: ``np.median`` imports ``numpy.ma`` on first
    use, a quarter of a second added to a new process's first recall."""
    size = values.size
    if not size:
        return 1.0
    half = size // 2
    if size % 2:
        return float(np.partition(values, half)[half])
    low, high = np.partition(values, (half - 1, half))[half - 1 : half + 1]
    return float((low + high) / 2)


def _best(
    key: npt.NDArray[np.float64], times: npt.NDArray[np.int64], k: int
) -> npt.NDArray[np.int64]:
    """Positions of the ``k`` largest ``key`` values, largest first, newest first on a tie;
    only the values that can make the top ``k`` are sorted."""
    if key.size > k:
        cut = np.partition(key, key.size - k)[key.size - k]
        near = np.flatnonzero(key >= cut)
    else:
        near = np.arange(key.size)
    order = np.lexsort((-times[near], -key[near]))
    return np.asarray(near[order[:k]], dtype=np.int64)


def _experience(episode: EpisodeRecord, score: float, scores: dict[str, float]) -> Experience:
    record = parse_experience(episode.content)
    subject, _ = experience_subject(record, episode.id)
    run, number = record.get("run_id"), record.get("episode")
    success = (record.get("outcome") or {}).get("success")
    meta = episode.metadata.get("meta")
    return Experience(
        id=episode.id,
        group_id=episode.group_id,
        subject=subject,
        task=str(record["task"]),
        run_id=None if run is None else str(run),
        episode=None if number is None else str(number),
        state=dict(record.get("state") or {}),
        params=dict(record.get("params") or {}),
        outcome=dict(record.get("outcome") or {}),
        meta=dict(meta) if isinstance(meta, dict) else {},
        success=success if isinstance(success, bool) else None,
        occurred_at=episode.reference_time,
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
