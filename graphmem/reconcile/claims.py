"""What one episode said about one fact, kept on its provenance so a timeline can be rebuilt.

A stored fact is the merge of every statement that supports it: its ``valid_from`` is the
earliest stated start, its confidence combines theirs, and a negation or a correction changes
facts it did not create. Once merged, the fact alone cannot say what each episode contributed,
so forgetting an episode could not undo exactly its part. Each FROM_EPISODE row (and each
ENDED_BY row of a negation) therefore carries the episode's *claim*: kind, stated times,
confidence, and when it was applied. ``_replay`` rebuilds a timeline from the claims that
remain; the reconciler splits a fact by its claims when a new value lands inside it.
"""

from __future__ import annotations

import json
from dataclasses import MISSING, dataclass, fields
from typing import Any

from .._errors import InputError
from ..store._base import FactRow

__all__ = ["StatedClaim", "StatedKey", "stated_key"]

_KINDS = ("assert", "negate", "correct")

StatedKey = tuple[int, int, str, str, int]


def stated_key(
    said: int, kind: str, episode_hash: str | None, episode_id: str, index: int
) -> StatedKey:
    """The order that decides what is believed: when the episode said it; at the same time,
    statements before the negations and corrections that refer to them; then the episode's
    content hash (the same in every group and never dependent on arrival; its id for claims
    written without one); then the statement's place in the episode."""
    return (said, 0 if kind == "assert" else 1, episode_hash or episode_id, episode_id, index)


@dataclass(frozen=True)
class StatedClaim:
    kind: str  # assert | negate | correct
    valid_from: int  # the stated start (a negation: when the fact stopped holding)
    valid_to: int | None = None  # a stated end
    stated_from: bool = True  # False: the start is the episode's reference time
    confidence: float = 1.0
    at: int = 0  # record time of the write that applied it
    order: int = 0  # the episode's position in its write batch (batches share ``at``)
    seq: int = 0  # the store's commit order of that write (0: written before it was kept)
    index: int = 0  # the statement's position among the episode's facts
    value_key: str | None = None  # a negation's value ("" = whatever value holds)
    replaces_key: str | None = None  # a correction's replaced value, when it named one
    # When the episode said it (its reference time), where that differs from ``valid_from``
    # ("I have lived in Lisbon since 2020", said in 2024): what the stated order sorts by.
    said: int | None = None
    # The start of the episode's content hash: breaks ties of ``said`` the same way in every
    # group and whatever the arrival order.
    episode_hash: str | None = None

    @property
    def said_at(self) -> int:
        return self.valid_from if self.said is None else self.said

    def stated_key(self, episode_id: str) -> StatedKey:
        """The order that decides what is believed (``stated_key``)."""
        return stated_key(self.said_at, self.kind, self.episode_hash, episode_id, self.index)

    def sort_key(self, episode_id: str) -> tuple[int, int, int, str, int]:
        """Arrival order: the order the statements were first applied in (the store's commit
        sequence first: it orders writes of different processes even when their clocks
        disagree or tie). Only record-time choices use it (which part of a split fact keeps
        the stored id); what is believed follows ``stated_key``."""
        return (self.seq, self.at, self.order, episode_id, self.index)

    def to_json(self) -> str:
        # Fields at their default are left out (from_dict restores them): one claim is stored
        # per fact and episode, so its size is paid on every provenance row.
        data = {}
        for name, default in _DEFAULTS:
            value = getattr(self, name)
            if value is not None and value != default:
                data[name] = value
        return json.dumps(data, separators=(",", ":"), sort_keys=True)

    @classmethod
    def from_json(cls, raw: str | None, fact: FactRow) -> StatedClaim:
        """The stored claim, or for a row written without one, a claim derived from the fact."""
        if raw is None:
            return cls.derived(fact)
        data = json.loads(raw)
        if isinstance(data, dict) and data.keys() <= _NAMES and "valid_from" in data:
            # Written by ``to_json`` (or checked on import): no need to check every field
            # again; ingest reads every claim of the timelines it touches.
            return cls(**data)
        return cls.from_dict(data)

    @classmethod
    def from_dict(cls, data: Any) -> StatedClaim:
        """Checked: imports hand in whatever a file holds."""
        if not isinstance(data, dict):
            raise InputError("claim: expected an object")
        kind = data.get("kind")
        if kind not in _KINDS:
            raise InputError(f"claim.kind: expected one of {', '.join(_KINDS)}, got {kind!r}")
        ints = ("valid_from", "at", "order", "seq", "index")
        said = data.get("said")
        if said is not None and (not isinstance(said, int) or isinstance(said, bool)):
            raise InputError("claim.said: expected an integer or null")
        for name in ints:
            if not isinstance(data.get(name, 0), int) or isinstance(data.get(name), bool):
                raise InputError(f"claim.{name}: expected an integer")
        if "valid_from" not in data:
            raise InputError("claim.valid_from: missing")
        end = data.get("valid_to")
        if end is not None and (not isinstance(end, int) or isinstance(end, bool)):
            raise InputError("claim.valid_to: expected an integer or null")
        confidence = data.get("confidence", 1.0)
        if not isinstance(confidence, (int, float)) or isinstance(confidence, bool):
            raise InputError("claim.confidence: expected a number")
        for name in ("value_key", "replaces_key", "episode_hash"):
            if data.get(name) is not None and not isinstance(data[name], str):
                raise InputError(f"claim.{name}: expected a string or null")
        unknown = set(data) - {f.name for f in fields(cls)}
        if unknown:
            raise InputError(f"claim: unknown field(s) {sorted(unknown)}")
        return cls(
            kind=kind,
            valid_from=data["valid_from"],
            valid_to=end,
            stated_from=bool(data.get("stated_from", True)),
            confidence=float(confidence),
            at=data.get("at", 0),
            order=data.get("order", 0),
            seq=data.get("seq", 0),
            index=data.get("index", 0),
            value_key=data.get("value_key"),
            replaces_key=data.get("replaces_key"),
            said=said,
            episode_hash=data.get("episode_hash"),
        )

    @classmethod
    def derived(cls, fact: FactRow) -> StatedClaim:
        return cls(
            kind="assert",
            valid_from=fact.valid_from,
            valid_to=fact.valid_to if fact.end_reason == "stated end" else None,
            confidence=fact.confidence,
            at=fact.recorded_at,
        )


_NAMES = frozenset(f.name for f in fields(StatedClaim))
# (name, default) of every claim field; required fields have no default and are always kept.
_DEFAULTS: tuple[tuple[str, object], ...] = tuple(
    (f.name, None if f.default is MISSING else f.default) for f in fields(StatedClaim)
)
