"""What the reconciler works with: an extractor's ``Claim``, a new fact as a ``Candidate``, the
``Outcome`` of applying one, and how a stored fact's value is keyed (``stored_value_key``)."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from .._ids import value_key
from ..store._base import PLACEHOLDER, FactRow, ProvenanceRow

__all__ = [
    "PLACEHOLDER",
    "Candidate",
    "Claim",
    "ClaimsLoader",
    "Outcome",
    "combine",
    "is_placeholder",
    "stored_value_key",
]

Vector = npt.NDArray[np.float32]
# Stored provenance and ending rows of a fact, read inside the write transaction when needed.
ClaimsLoader = Callable[[str], tuple[list[ProvenanceRow], list[ProvenanceRow]]]


@dataclass
class Claim:
    """An extractor's (LLM's) claim about an existing fact, to be checked by the rules."""

    relation: str
    fact_id: str | None
    reason: str | None


@dataclass
class Candidate:
    """A new fact, resolved to entity ids, ready to be reconciled."""

    subject_id: str
    predicate: str
    object_id: str | None
    value_json: str | None
    value_key: str
    statement: str
    valid_from: int
    valid_to: int | None
    stated_from: bool
    kind: str = "assert"  # assert | negate | correct
    replaces_key: str | None = None
    confidence: float = 1.0
    span: str | None = None
    embedding: Vector | None = None
    claim: Claim | None = None
    index: int = 0  # position among the episode's facts (replay order)
    said: int | None = None  # when the episode said it (its reference time); None: valid_from
    episode_hash: str | None = None  # the start of the episode's content hash (ties of ``said``)


@dataclass
class Outcome:
    status: str  # added | duplicate | negated | corrected | ignored
    fact_id: str | None
    affected: list[str] = field(default_factory=list)
    note: str | None = None


def is_placeholder(fact: FactRow) -> bool:
    return fact.end_reason == PLACEHOLDER and fact.valid_to == fact.valid_from


def combine(old: float, new: float) -> float:
    """Two independent statements of a fact: the chance that at least one is right."""
    return round(1.0 - (1.0 - old) * (1.0 - new), 6)


def stored_value_key(fact: FactRow) -> str:
    value = None if fact.value_json is None else json.loads(fact.value_json)
    return value_key(fact.object_id, value)
