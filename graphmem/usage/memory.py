"""Usage memory: pinned facts, usefulness feedback and a forgetting curve for retrieval.

Pins and feedback are provenance-bearing writes: each is an episode of kind ``pin`` or
``feedback`` whose content is a small JSON record (``{"target": id, "pinned": bool}``,
``{"target": id, "useful": bool, "note": ...}``); its source and times say who said it and
when. They make no facts and are never recall hits, and since they are episodes, export,
import and ``forget(episode_id=...)`` handle them like any other (a forgotten pin episode is no
pin; a pin of a forgotten fact resolves to nothing). Nothing here writes a fact or changes a
valid time, a record time or a supersession: usage changes rank only.

A per-group index (read from ``episode_ids_by_kind``, refreshed when the store's change token
moves, topped up with what was added since) holds the pin events and the feedback counts.
Retrieval then, in :func:`apply_usage`:

- multiplies each fact's and episode's score by ``1 + feedback_weight * (2p - 1)``, where
  ``p = (useful + 1) / (useful + not_useful + 2)`` (a Beta(1, 1)-smoothed usefulness: no
  feedback is 1, one "useful" 1.17 at weight 0.5);
- with ``decay_half_life`` (days), multiplies it by ``floor + (1 - floor) * 0.5 ** (age /
  half_life)``, where age is the time from the item's last use to the recall's world time
  (``as_of``, else now). Last use is the later of when it was told (an episode's reference
  time, a fact's ``valid_from``) and its last positive feedback. Pinned facts do not fade;
- with ``min_relative_score``, drops facts (and episodes) scoring below that share of the best;
- attaches the group's pinned facts, resolved in the recall's time view, to the result.
"""

from __future__ import annotations

import json
import math
import threading
import weakref
from collections.abc import Callable
from dataclasses import dataclass, field, fields
from datetime import datetime
from typing import TYPE_CHECKING, Any

from .._errors import InputError
from .._ids import content_hash, make_id
from .._models import EpisodeRecord, FactRecord, PinnedFact, RecallResult
from .._time import from_ms, record_ms, require_aware, to_ms
from ..store._base import EpisodeRow, GraphStore, TimeView

if TYPE_CHECKING:
    from ..retrieve.retriever import RawSearch, RetrievalConfig

__all__ = ["USAGE_KINDS", "Usage", "apply_usage", "usage_for"]

PIN, FEEDBACK = "pin", "feedback"
USAGE_KINDS = (PIN, FEEDBACK)
_DAY_MS = 86_400_000
_MAX_CHAIN = 50  # supersessions followed from a pinned fact to what holds now
_NOTE_CHARS = 2000


@dataclass(frozen=True)
class _PinEvent:
    episode_id: str
    target: str
    pinned: bool
    at: int  # reference time (when it was said)
    recorded: int  # ingested_at (record time)
    source: str | None


@dataclass(frozen=True)
class _Feedback:
    target: str
    useful: bool
    at: int
    recorded: int


@dataclass
class _Group:
    """One group's pin events and feedback, in arrival order."""

    token: object = None
    listed: dict[str, list[str]] = field(default_factory=dict)
    pins: list[_PinEvent] = field(default_factory=list)
    feedback: list[_Feedback] = field(default_factory=list)
    last_recorded: int = 0

    def add(self, episode: EpisodeRecord) -> None:
        try:
            record = json.loads(episode.content)
        except ValueError:
            return  # written by hand and not a record: nothing to apply
        if not isinstance(record, dict) or not isinstance(record.get("target"), str):
            return
        at, recorded = to_ms(episode.reference_time), to_ms(episode.ingested_at)
        self.last_recorded = max(self.last_recorded, recorded)
        if episode.kind == PIN and isinstance(record.get("pinned"), bool):
            self.pins.append(
                _PinEvent(
                    episode.id, record["target"], record["pinned"], at, recorded, episode.source
                )
            )
        elif episode.kind == FEEDBACK and isinstance(record.get("useful"), bool):
            self.feedback.append(_Feedback(record["target"], record["useful"], at, recorded))

    def ids(self) -> set[str]:
        return {i for ids in self.listed.values() for i in ids}

    def pinned(self, known: int | None = None) -> dict[str, _PinEvent]:
        """Fact id -> the pin event that pinned it, in pin order (as known at ``known``)."""
        out: dict[str, _PinEvent] = {}
        for event in self.pins:
            if known is not None and event.recorded > known:
                continue
            if event.pinned:
                out.setdefault(event.target, event)
            else:
                out.pop(event.target, None)
        return out

    def weights(self, known: int | None = None) -> dict[str, tuple[int, int, int]]:
        """Item id -> (useful, not useful, time of the last useful) as known at ``known``."""
        out: dict[str, tuple[int, int, int]] = {}
        for fb in self.feedback:
            if known is not None and fb.recorded > known:
                continue
            good, bad, last = out.get(fb.target, (0, 0, 0))
            if fb.useful:
                out[fb.target] = (good + 1, bad, max(last, fb.at))
            else:
                out[fb.target] = (good, bad + 1, last)
        return out


class Usage:
    """The pin and feedback index of one store (read-through, per group)."""

    def __init__(self, store: GraphStore) -> None:
        self.store = store
        self._groups: dict[str, _Group] = {}
        self._lock = threading.Lock()

    # ------------------------------------------------------------------ the index
    def group(self, group_id: str) -> _Group:
        token = self.store.change_token()
        with self._lock:
            held = self._groups.get(group_id)
            if held is not None and token is not None and held.token == token:
                return held
            listed = {kind: self.store.episode_ids_by_kind(group_id, kind) for kind in USAGE_KINDS}
            if held is None or any(
                held.listed.get(kind, []) != listed[kind][: len(held.listed.get(kind, []))]
                for kind in USAGE_KINDS
            ):
                held = _Group()  # first read, or something was forgotten: read it again
            new = [
                i for kind in USAGE_KINDS for i in listed[kind][len(held.listed.get(kind, [])) :]
            ]
            if new:
                found = {e.id: e for e in self.store.episodes(new)}
                # Pins apply in the order they were made (reference time, then arrival).
                ordered = sorted(
                    (found[i] for i in new if i in found),
                    key=lambda e: (to_ms(e.reference_time), to_ms(e.ingested_at)),
                )
                for episode in ordered:
                    held.add(episode)
            held.listed = listed
            held.token = token
            self._groups[group_id] = held
            return held

    # ------------------------------------------------------------------ writes
    def _write(
        self, group_id: str, kind: str, record: dict[str, Any], source: str | None,
        at: datetime | None,
    ) -> str:
        content = json.dumps(record, sort_keys=True, ensure_ascii=False)
        recorded = record_ms()
        when = require_aware(at, "at")
        ref = to_ms(when) if when is not None else recorded
        # The record time is in the hash: the same feedback given twice is two uses.
        digest = content_hash(kind, source or "", content, str(ref), str(recorded))
        row = EpisodeRow(
            id=make_id("ep", group_id, digest),
            group_id=group_id,
            source=source,
            kind=kind,
            content=content,
            reference_time=ref,
            ingested_at=recorded,
            content_hash=digest,
            status="extracted",  # nothing to extract: the record is the whole of it
            extractor="usage",
        )
        stored, _ = self.store.insert_episodes([row])[0]
        return stored.id

    def _fact(self, fact_id: object, group_id: str | None) -> FactRecord:
        if not isinstance(fact_id, str) or not fact_id.strip():
            raise InputError(f"fact_id must be a non-empty string, got {fact_id!r}"[:200])
        found = self.store.fact_records([fact_id], None)
        if not found or (group_id is not None and found[0].group_id != group_id):
            where = f" in group {group_id!r}" if group_id is not None else ""
            raise InputError(f"no fact {fact_id!r}{where}")
        return found[0]

    def pin(
        self, fact_id: str, *, group_id: str | None, source: str | None, pinned: bool = True
    ) -> bool:
        """Pin (or unpin) a fact; False when it already was (or was not) pinned."""
        fact = self._fact(fact_id, group_id)
        _source(source)
        if (fact.id in self.group(fact.group_id).pinned()) == pinned:
            return False
        self._write(fact.group_id, PIN, {"target": fact.id, "pinned": pinned}, source, None)
        return True

    def feedback(
        self,
        item_id: str,
        useful: bool,
        *,
        group_id: str | None,
        source: str | None,
        note: str | None,
        at: datetime | None,
    ) -> str:
        if not isinstance(useful, bool):
            raise InputError(f"useful must be True or False, got {useful!r}"[:200])
        if not isinstance(item_id, str) or not item_id.strip():
            raise InputError("item_id must be a non-empty string (a fact or an episode id)")
        _source(source)
        if note is not None and (not isinstance(note, str) or len(note) > _NOTE_CHARS):
            raise InputError(f"note must be a string of at most {_NOTE_CHARS} characters")
        facts = self.store.fact_records([item_id], None)
        if facts:
            group = facts[0].group_id
        else:
            episodes = self.store.episodes([item_id])
            if not episodes or episodes[0].kind in USAGE_KINDS:
                raise InputError(f"no fact or episode {item_id!r}")
            group = episodes[0].group_id
        if group_id is not None and group != group_id:
            raise InputError(f"no fact or episode {item_id!r} in group {group_id!r}")
        record: dict[str, Any] = {"target": item_id, "useful": useful}
        if note:
            record["note"] = note
        return self._write(group, FEEDBACK, record, source, at)

    # ------------------------------------------------------------------ reads
    def pinned_facts(
        self, group_id: str, view: TimeView | None, limit: int | None = None
    ) -> tuple[list[PinnedFact], int]:
        """The group's pins resolved in ``view`` (None: now), in pin order; and how many more
        there were past ``limit``."""
        events = self.group(group_id).pinned(None if view is None else view.known)
        if not events:
            return [], 0
        records = {f.id: f for f in self.store.fact_records(list(events), None)}
        live = [e for e in events.values() if e.target in records]  # forgotten facts: gone
        shown = live if limit is None else live[:limit]
        if not shown:
            return [], len(live)
        at = view.at if view is not None else None
        holding = (
            {f.id for f in self.store.fact_records([e.target for e in shown], view)}
            if view is not None
            else {e.target for e in shown if records[e.target].is_current()}
        )
        out = []
        for event in shown:
            fact = records[event.target]
            status, current = "current", [fact]
            if fact.id not in holding:
                current = self._successors(fact, view)
                if current:
                    status = "changed"
                elif at is not None and to_ms(fact.valid_from) > at:
                    status = "not_yet"
                else:
                    status = "ended"
            out.append(
                PinnedFact(
                    fact_id=fact.id,
                    statement=fact.statement,
                    pinned_at=from_ms(event.at),
                    source=event.source,
                    pin_episode_id=event.episode_id,
                    status=status,
                    current=current,
                )
            )
        return out, len(live) - len(shown)

    def _successors(self, fact: FactRecord, view: TimeView | None) -> list[FactRecord]:
        """What replaced ``fact`` (following superseded_by) and holds in ``view``."""
        seen = {fact.id}
        nxt = fact.superseded_by
        while nxt and nxt not in seen and len(seen) < _MAX_CHAIN:
            seen.add(nxt)
            held = self.store.fact_records([nxt], view)
            if view is None and held and not held[0].is_current():
                held = []
            if held:
                return held
            anyway = self.store.fact_records([nxt], None)
            nxt = anyway[0].superseded_by if anyway else None
        return []


def _source(source: object) -> None:
    if source is not None and not isinstance(source, str):
        raise InputError(f"source must be a string, got {type(source).__name__}")


# One index per store object: the retriever and GraphMemory share it.
_INDEXES: weakref.WeakKeyDictionary[GraphStore, Usage] = weakref.WeakKeyDictionary()
_INDEXES_LOCK = threading.Lock()


def usage_for(store: GraphStore) -> Usage:
    with _INDEXES_LOCK:
        held = _INDEXES.get(store)
        if held is None:
            held = _INDEXES[store] = Usage(store)
        return held


# ----------------------------------------------------------------------------- retrieval
def _check(config: RetrievalConfig) -> None:
    for name in ("feedback_weight", "decay_floor", "context_decay", "chat_context_decay"):
        value = getattr(config, name)
        if isinstance(value, bool) or not isinstance(value, int | float) or not (
            0 <= value <= 1
        ):
            raise InputError(f"RetrievalConfig.{name} must be a number from 0 to 1, got {value!r}")
    half = config.decay_half_life
    if half is not None and (
        isinstance(half, bool) or not isinstance(half, int | float) or not
        (math.isfinite(half) and half > 0)
    ):
        raise InputError(f"RetrievalConfig.decay_half_life must be > 0 days or None, got {half!r}")
    cut = config.min_relative_score
    if cut is not None and (isinstance(cut, bool) or not isinstance(cut, int | float) or not (
        0 <= cut <= 1
    )):
        raise InputError(f"RetrievalConfig.min_relative_score must be 0 to 1 or None, got {cut!r}")
    # Every count (pinned_limit, currentness_pairs, seed_n, ...) is a number of facts, turns or
    # places: a negative one would slice a ranking from its end instead of meaning "none".
    for f in fields(config):
        count = getattr(config, f.name)
        if f.type == "int" and (isinstance(count, bool) or not isinstance(count, int) or count < 0):
            raise InputError(
                f"RetrievalConfig.{f.name} must be an integer >= 0, got {count!r}"
            )


def _multiplier(counts: tuple[int, int, int] | None, weight: float) -> float:
    if counts is None or weight == 0:
        return 1.0
    good, bad, _ = counts
    p = (good + 1) / (good + bad + 2)
    return 1.0 + weight * (2 * p - 1)


def _fade(age_ms: int, half_days: float, floor: float) -> float:
    age = max(0, age_ms) / _DAY_MS
    return floor + (1.0 - floor) * math.pow(0.5, age / half_days)


def _cut(scores: dict[str, float], share: float | None, keep: set[str]) -> dict[str, float]:
    if not share or not scores:
        return scores
    best = max(scores.values())
    return {i: s for i, s in scores.items() if s >= share * best or i in keep}


def apply_usage(
    store: GraphStore,
    config: RetrievalConfig,
    raw: RawSearch,
    *,
    group_id: str,
    view: TimeView,
) -> Callable[[RecallResult], RecallResult]:
    """Adjust ``raw``'s final fact and episode scores for usage (in place); return what adds
    the pinned facts to the formatted result."""
    _check(config)
    usage = usage_for(store)
    group = usage.group(group_id)
    # Pin and feedback records are bookkeeping, never an answer.
    for episode_id in group.ids():
        raw.episode_scores.pop(episode_id, None)
    known = None if view.known >= group.last_recorded else view.known
    counts = group.weights(known)
    pinned = set(group.pinned(known))
    half, floor = config.decay_half_life, float(config.decay_floor)
    told: dict[str, int] = {}
    if half is not None:
        told = {fid: stub.valid_from for fid, stub in raw.stubs.items()}
        told.update(
            (e.id, to_ms(e.reference_time)) for e in store.episodes(list(raw.episode_scores))
        )
    weight = float(config.feedback_weight)
    for scores in (raw.fact_scores, raw.episode_scores):
        for item, score in scores.items():
            seen = counts.get(item)
            factor = _multiplier(seen, weight)
            if half is not None and item not in pinned and item in told:
                last = max(told[item], seen[2] if seen else 0)
                factor *= _fade(view.at - last, float(half), floor)
            scores[item] = score * factor
    raw.fact_scores = _cut(raw.fact_scores, config.min_relative_score, pinned)
    raw.episode_scores = _cut(raw.episode_scores, config.min_relative_score, set())
    limit = int(config.pinned_limit)

    def attach(result: RecallResult) -> RecallResult:
        if not pinned:
            return result
        shown, omitted = usage.pinned_facts(group_id, view, limit)
        result.pinned = shown
        result.pinned_omitted = omitted
        return result

    return attach
