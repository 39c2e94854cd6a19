"""The ``GraphStore`` protocol and the plain rows that cross it.

Stores know nothing of extraction or temporal rules: the reconciler decides, and hands the store a
``WritePlan`` to apply in one transaction. Times are epoch milliseconds (UTC) on this seam.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar, runtime_checkable

import numpy as np
import numpy.typing as npt

from .._filters import Condition
from .._models import EntityRecord, EpisodeRecord, FactRecord
from .._time import from_ms
from ._expand import breadth_first
from ._experience import ExperienceCounts, ExperienceEntry, ValueColumn
from ._links import EpisodeLinkRow

__all__ = [
    "PLACEHOLDER",
    "EntityRow",
    "EpisodeRow",
    "FactRow",
    "FactUpdate",
    "GraphStore",
    "LinkRow",
    "MigrationInfo",
    "ProvenanceRow",
    "StoreReader",
    "TimeView",
    "Timeline",
    "WritePlan",
    "breadth_first",
    "episode_record",
]

Vector = npt.NDArray[np.float32]
# The end reason of a negation's placeholder: a negation that ended nothing when it was applied
# is kept on a fact of its value that holds at no time (valid_from == valid_to), so that a
# statement stated before it but arriving later is still ended by it. Reads never return one.
PLACEHOLDER = "negation placeholder"
LinkKind = str  # "SUPERSEDES" | "CONTRADICTS"
T = TypeVar("T")


@dataclass
class EpisodeRow:
    id: str
    group_id: str
    source: str | None
    kind: str
    content: str
    reference_time: int
    ingested_at: int
    content_hash: str
    status: str = "pending"
    extractor: str | None = None
    error: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    embedding: Vector | None = None  # the content's (turn-level dense retrieval), set at extraction
    # An experience's index entry, written with the episode (kind ``experience`` only).
    experience: ExperienceEntry | None = None


@dataclass
class EntityRow:
    id: str
    group_id: str
    name: str
    key: str
    type: str
    aliases: list[str] = field(default_factory=list)
    summary: str | None = None
    embedding: Vector | None = None
    created_at: int = 0
    attributes: dict[str, Any] = field(default_factory=dict)


@dataclass
class FactRow:
    id: str
    group_id: str
    subject_id: str
    predicate: str
    object_id: str | None
    value_json: str | None
    statement: str
    valid_from: int
    valid_to: int | None
    recorded_at: int
    expired_at: int | None = None
    ended_at: int | None = None
    end_reason: str | None = None
    confidence: float = 1.0
    decided_by: str = "rule"
    embedding: Vector | None = None


@dataclass(frozen=True)
class LinkRow:
    kind: LinkKind
    src: str
    dst: str
    reason: str
    decided_by: str
    decided_at: int


@dataclass(frozen=True)
class ProvenanceRow:
    """An episode's link to a fact: FROM_EPISODE (it supports the fact) or ENDED_BY (its
    negation ended the fact). ``claim`` is what the episode said, as ``_claims.StatedClaim``
    JSON, so that forgetting the episode can rebuild the timeline without it; ``None`` on rows
    written before claims were recorded (a claim is then derived from the fact)."""

    fact_id: str
    episode_id: str
    span: str | None = None
    claim: str | None = None


@dataclass
class FactUpdate:
    """New values for a stored fact's mutable fields (all of them are written)."""

    id: str
    valid_from: int
    valid_to: int | None
    expired_at: int | None
    ended_at: int | None
    end_reason: str | None
    confidence: float

    @classmethod
    def of(cls, fact: FactRow, ended_at: int | None, end_reason: str | None) -> FactUpdate:
        return cls(
            id=fact.id,
            valid_from=fact.valid_from,
            valid_to=fact.valid_to,
            expired_at=fact.expired_at,
            ended_at=ended_at,
            end_reason=end_reason,
            confidence=fact.confidence,
        )


@dataclass
class Timeline:
    """The unexpired facts of one (subject, predicate) and the links touching them."""

    facts: list[FactRow] = field(default_factory=list)
    links: list[LinkRow] = field(default_factory=list)


@dataclass
class WritePlan:
    """Everything one episode (or one forget) changes, applied atomically by the store."""

    episode_id: str | None = None
    episode_status: tuple[str, str | None, str | None] | None = None  # status, extractor, error
    # The episode's own embedding (its content, turn level), set with its extraction.
    episode_embedding: Vector | None = None
    entities_new: list[EntityRow] = field(default_factory=list)
    entity_aliases: dict[str, list[str]] = field(default_factory=dict)  # entity id -> all aliases
    facts_new: list[FactRow] = field(default_factory=list)
    facts_update: list[FactUpdate] = field(default_factory=list)
    provenance: list[ProvenanceRow] = field(default_factory=list)  # FROM_EPISODE
    endings: list[ProvenanceRow] = field(default_factory=list)  # ENDED_BY (negations)
    # Facts whose provenance and endings are replaced: their rows are deleted before the rows
    # above are inserted (a timeline rebuilt after a forget, a fact split in two).
    claims_reset: list[str] = field(default_factory=list)
    links_add: list[LinkRow] = field(default_factory=list)
    links_remove: list[tuple[str, str, str]] = field(default_factory=list)  # kind, src, dst
    mentions: list[tuple[str, str]] = field(default_factory=list)  # episode id, entity id
    # The episode's link terms (None: left as they are) and its links to other turns.
    episode_terms: list[str] | None = None
    episode_links_add: list[EpisodeLinkRow] = field(default_factory=list)
    delete_episode_ids: list[str] = field(default_factory=list)
    delete_fact_ids: list[str] = field(default_factory=list)
    delete_entity_ids: list[str] = field(default_factory=list)
    prune_entity_ids: list[str] = field(default_factory=list)  # delete if left unreferenced
    audit: dict[str, Any] | None = None


@dataclass(frozen=True)
class TimeView:
    """Which facts a read sees: valid at ``at`` (world time) as believed at ``known`` (record time).

    A fact's ``valid_to`` counts only if memory had learned it by ``known`` (``ended_at``).
    """

    at: int
    known: int


@dataclass(frozen=True)
class MigrationInfo:
    version: int
    name: str
    applied_at: int | None


class StoreReader(Protocol):
    """Reads available inside a write transaction (consistent with the write that follows)."""

    # The transaction's place in the store's commit order: strictly increasing across every
    # process that writes to the store (taken under the store's write lock). Claims record it,
    # so a rebuilt timeline replays writes in the order they committed.
    write_seq: int

    def get_episode(self, episode_id: str) -> EpisodeRow | None: ...

    def entities_by_keys(self, group_id: str, keys: Sequence[str]) -> list[EntityRow]:
        """Entities whose key or one of whose alias keys is in ``keys``."""
        ...

    def timelines(
        self,
        group_id: str,
        pairs: Sequence[tuple[str, str]],
        *,
        include_expired: bool = False,
    ) -> dict[tuple[str, str], Timeline]:
        """The facts of each (subject, predicate), oldest first, and the links touching them;
        unexpired facts only unless ``include_expired`` (a rebuild needs what corrections
        expired)."""
        ...

    def facts_by_ids(self, fact_ids: Sequence[str]) -> list[FactRow]: ...

    def episodes_sharing_terms(
        self, group_id: str, terms: Sequence[str], min_shared: int, exclude: str, at: int,
        limit: int,
    ) -> list[EpisodeRow]:
        """The ``limit`` episodes of the group (but ``exclude``) nearest in stated time to
        ``at`` (then by id) that hold ``min_shared`` of these link terms."""
        ...

    def fact_claims(
        self, fact_ids: Sequence[str]
    ) -> tuple[list[ProvenanceRow], list[ProvenanceRow]]:
        """The provenance rows and the ending rows of these facts, in the order written."""
        ...

    def episode_fact_ids(self, episode_ids: Sequence[str]) -> dict[str, int]:
        """For each fact supported by these episodes: its number of supporting episodes."""
        ...

    def episode_ended_fact_ids(self, episode_ids: Sequence[str]) -> list[str]:
        """Facts that a negation in these episodes ended (ENDED_BY)."""
        ...

    def entity_fact_ids(self, entity_id: str) -> list[str]:
        """Facts where the entity is subject or object."""
        ...

    def group_episode_ids(self, group_id: str) -> list[str]: ...

    def group_fact_ids(self, group_id: str) -> list[str]: ...

    def group_entity_ids(self, group_id: str) -> list[str]: ...

    def episode_entity_ids(self, episode_ids: Sequence[str]) -> list[str]: ...

    def speaker_episode_ids(self, group_id: str, speaker_keys: Sequence[str]) -> list[str]:
        """The group's episodes whose speaker (``metadata.speaker``, else ``.name``) has one
        of these ``entity_key``s (forget of an entity with its own episodes)."""
        ...

    def subject_episode_ids(self, group_id: str, entity_ids: Sequence[str]) -> list[str]:
        """The episodes that support or end (a negation) a fact of the group whose subject is
        one of these entities."""
        ...


@runtime_checkable
class GraphStore(Protocol):
    """What a graph store does. SQLite and Neo4j pass the same contract tests."""

    url: str

    # lifecycle ---------------------------------------------------------------
    def connect(self) -> None: ...

    def migrate(self) -> list[str]: ...

    def migration_status(self) -> list[MigrationInfo]: ...

    def close(self) -> None: ...

    def get_meta(self, key: str) -> str | None: ...

    def set_meta(self, key: str, value: str) -> None: ...

    # writes ------------------------------------------------------------------
    def insert_episode(self, episode: EpisodeRow) -> tuple[EpisodeRow, bool]:
        """Store the raw episode unless present; returns (stored row, created)."""
        ...

    def insert_episodes(self, episodes: Sequence[EpisodeRow]) -> list[tuple[EpisodeRow, bool]]:
        """``insert_episode`` for many, in one transaction."""
        ...

    def set_episode_status(
        self, episode_id: str, status: str, extractor: str | None, error: str | None
    ) -> None: ...

    def write(self, work: Callable[[StoreReader], WritePlan]) -> WritePlan:
        """Run ``work`` in one serialised write transaction and apply the plan it returns."""
        ...

    def write_many(self, works: Sequence[Callable[[StoreReader], WritePlan]]) -> list[WritePlan]:
        """Several units of work, each seeing the ones before it, committed together."""
        ...

    # reads -------------------------------------------------------------------
    def get_episode(self, episode_id: str) -> EpisodeRow | None: ...

    def episodes(self, episode_ids: Sequence[str]) -> list[EpisodeRecord]: ...

    def episodes_by_status(
        self, group_id: str | None, statuses: Sequence[str]
    ) -> list[EpisodeRow]: ...

    def recent_episodes(
        self, group_id: str, source: str | None, before: int, limit: int
    ) -> list[EpisodeRow]: ...

    def episode_ids_by_kind(self, group_id: str, kind: str) -> list[str]:
        """The group's episodes of one ``kind`` (``experience``), in arrival order."""
        ...

    # the experience index (``_experience``) ------------------------------------
    def experience_counts(self, group_id: str) -> ExperienceCounts: ...

    def experience_rows(self, group_id: str, after: int) -> npt.NDArray[np.int64]:
        """(seq, reference time, success, text length) of the group's indexed attempts with
        ``seq`` above ``after``, in ``seq`` order: an (n, 4) array (a cold read of a large
        group builds no Python object per attempt)."""
        ...

    def experience_values(self, group_id: str, path: str, after: int) -> ValueColumn:
        """The packed values (``pack_values``) at ``path`` of the attempts after ``after`` that
        have it, in ``seq`` order, as one ``ValueColumn``."""
        ...

    def experience_postings(
        self, group_id: str, terms: Sequence[str], after: int
    ) -> dict[str, npt.NDArray[np.int64]]:
        """For each term: (seq, count) rows, an (n, 2) array, of the attempts after ``after``
        whose text has it."""
        ...

    def experience_ids(self, group_id: str, seqs: Sequence[int]) -> dict[int, str]:
        """The episode id of each indexed attempt."""
        ...

    def unindexed_experiences(self, group_id: str, limit: int) -> list[EpisodeRecord]:
        """Up to ``limit`` of the group's experience episodes that have no index entry yet."""
        ...

    def index_experiences(self, entries: Sequence[tuple[str, ExperienceEntry]]) -> None:
        """Give stored experience episodes (by id) their index entries (those still lacking
        one; an episode since removed is skipped)."""
        ...

    def change_token(self) -> object | None:
        """A value that changes whenever anything is committed to the store (by any process),
        for caches of store contents; ``None`` where the store has no cheap one."""
        ...

    def find_entities(self, group_id: str, keys: Sequence[str]) -> list[EntityRecord]:
        """Entities whose key or an alias key is in ``keys``."""
        ...

    def find_entities_by_ids(
        self, group_id: str, entity_ids: Sequence[str]
    ) -> list[EntityRecord]: ...

    def vector_facts(self, group_id: str, vector: Vector, n: int) -> list[tuple[str, float]]: ...

    def vector_entities(self, group_id: str, vector: Vector, n: int) -> list[tuple[str, float]]: ...

    def episode_mentions(self, episode_ids: Sequence[str]) -> list[tuple[str, str]]:
        """(episode id, entity id) for every entity the episodes mention (MENTIONS)."""
        ...

    def record_facts(self, episode_ids: Sequence[str]) -> list[tuple[str, str]]:
        """(episode id, fact id) for every fact that those of the episodes which are JSON
        records (kind ``json``) support (FROM_EPISODE)."""
        ...

    def vector_episodes(self, group_id: str, vector: Vector, n: int) -> list[tuple[str, float]]:
        """The group's ``n`` episodes most similar to ``vector`` (cosine), best first."""
        ...

    def text_facts(self, group_id: str, query: str, n: int) -> list[tuple[str, float]]: ...

    def text_entities(self, group_id: str, query: str, n: int) -> list[tuple[str, float]]: ...

    def text_episodes(self, group_id: str, query: str, n: int) -> list[tuple[str, float]]: ...

    def expand(
        self, group_id: str, entity_ids: Sequence[str], hops: int, view: TimeView, limit: int
    ) -> list[tuple[str, int, str]]:
        """Facts within ``hops`` of the entities, valid in ``view``: (fact id, hop, seed entity)."""
        ...

    def fact_records(
        self, fact_ids: Sequence[str], view: TimeView | None = None
    ) -> list[FactRecord]:
        """Full records, in the order given; with a view, only the facts valid in it."""
        ...

    def fact_stubs(
        self, fact_ids: Sequence[str], view: TimeView
    ) -> list[tuple[str, str, str | None, int, float]]:
        """Cheap rows for ranking: (id, subject id, object id, valid_from, confidence) of the
        facts valid in ``view``."""
        ...

    def links(self, fact_ids: Sequence[str]) -> list[LinkRow]:
        """Every SUPERSEDES/CONTRADICTS link with either end in ``fact_ids``."""
        ...

    def episode_links(self, episode_ids: Sequence[str]) -> list[EpisodeLinkRow]:
        """Every link between episodes (UPDATES) with either end in ``episode_ids``."""
        ...

    def list_facts(
        self,
        group_id: str,
        *,
        entity_ids: Sequence[str] | None = None,
        predicate: str | None = None,
        view: TimeView | None = None,
        subject_only: bool = False,
    ) -> list[FactRecord]:
        """Facts of a group (optionally about entities), oldest first; ``view=None``: all."""
        ...

    def facts_with_values(
        self,
        group_id: str,
        predicates: Sequence[str],
        view: TimeView,
        subject_ids: Sequence[str] | None = None,
    ) -> dict[str, dict[str, Any]]:
        """For the filter language: subject id -> {predicate: values} of valid literal facts (of
        ``subject_ids`` only, when given)."""
        ...

    def filter_candidates(
        self, group_id: str, conditions: Sequence[Condition], view: TimeView, limit: int
    ) -> list[str]:
        """The first ``limit`` of the subjects that may pass ``conditions``, newest first (by
        their latest valid fact matching ``_filters.driving``); never leaves out one that passes,
        may keep one that does not (``_filters.matches`` decides)."""
        ...

    def stats(self, group_id: str | None) -> dict[str, Any]: ...

    def export_rows(self, group_id: str | None) -> Iterator[dict[str, Any]]: ...

    def import_rows(self, rows: Sequence[dict[str, Any]]) -> dict[str, int]: ...


def episode_record(ep: EpisodeRow) -> EpisodeRecord:
    return EpisodeRecord(
        id=ep.id,
        group_id=ep.group_id,
        source=ep.source,
        kind=ep.kind,
        content=ep.content,
        reference_time=from_ms(ep.reference_time),
        ingested_at=from_ms(ep.ingested_at),
        content_hash=ep.content_hash,
        status=ep.status,
        extractor=ep.extractor,
        error=ep.error,
        metadata=ep.metadata,
    )
