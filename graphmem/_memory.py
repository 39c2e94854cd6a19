"""``GraphMemory``: the facade that wires store, extractors, embedder and retriever together.

It holds no stage of its own (DESIGN §1): argument checks and raw episodes are
``_episode_input``, the ingest run (extract, embed, write) is ``_pipeline``, the reconciled
write plan ``_ingest`` and ``_reconcile``, reads ``_reads`` and ``_retrieve``, forgetting
``_forget_request`` and ``_forget``, experiences ``_experience``, opening the store
``_connect``. No SQL or Cypher here either (the stores).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from datetime import datetime
from types import TracebackType
from typing import TYPE_CHECKING, Any, Literal

from ._args import check_group, check_text
from ._config import Settings
from ._connect import open_checked, require_existing
from ._errors import ConfigError, InputError
from ._models import (
    USAGE_FIELDS,
    EpisodeRecord,
    FactRecord,
    ForgetResult,
    IngestResult,
    RecallResult,
    Scalar,
)
from ._predicates import Predicate, PredicateRegistry
from ._time import record_ms
from .embeddings.factory import Embedder, check_embedder, embedder_name
from .experience.calls import ExperienceCalls
from .reconcile.turn_links import relink
from .retrieve import reads as _reads
from .retrieve.retriever import RetrievalConfig, Retriever
from .store import GraphStore, TimeView, open_store
from .store._base import EpisodeRow
from .usage.calls import UsageCalls
from .usage.memory import apply_usage

if TYPE_CHECKING:
    import networkx as nx  # only GraphMemory.to_networkx's return type

    from .experience.index import ExperienceRecall
    from .extract import Extractor
    from .ingest.reembed import ReembedReport

# The write, forget and experience stages are imported where they are first used: a process
# that only recalls (``graphmem recall``) does not pay for loading them.

__all__ = ["GraphMemory"]


class GraphMemory(ExperienceCalls, UsageCalls):
    """Long-term memory as a temporal knowledge graph.

    ``GraphMemory("sqlite:///memory.db")`` (or no argument: ``GRAPHMEM_STORE``, else
    ``./graphmem.db``). Nothing touches the store until the first call or ``connect()``, which
    creates a store that is not there yet; with ``create=False`` it raises ``StoreError``
    instead (naming the store and ``graphmem init``), as the CLI's read commands do.
    """

    def __init__(
        self,
        store: str | os.PathLike[str] | GraphStore | None = None,
        *,
        embedder: Embedder | str | None = None,
        extractor: str | Extractor | None = None,
        predicates: Iterable[Predicate] | Mapping[str, str] | PredicateRegistry | None = None,
        settings: Settings | None = None,
        retrieval: RetrievalConfig | None = None,
        create: bool = True,
    ) -> None:
        if settings is not None and not isinstance(settings, Settings):
            raise ConfigError(
                f"settings must be a graphmem Settings object, got {type(settings).__name__}"
            )
        self.settings = settings or Settings.from_env()
        # What was asked for (an Embedder, a family name, or nothing: GRAPHMEM_EMBEDDER, else
        # the store's own); connect() resolves it against the store's record.
        self._requested = check_embedder(embedder)
        if self._requested is None and os.environ.get("GRAPHMEM_EMBEDDER", "").strip():
            embedder_name(os.environ["GRAPHMEM_EMBEDDER"])  # a bad name fails here, not later
        if store is None:
            store = self.settings.store
        self.store: GraphStore = (
            store
            if isinstance(store, GraphStore) and not isinstance(store, str)
            else open_store(store)
        )
        self._embedder: Embedder | None = None
        self._embedding_dim = 0
        self.default_extractor = extractor if extractor is not None else "auto"
        self.predicates = (
            predicates
            if isinstance(predicates, PredicateRegistry)
            else PredicateRegistry(predicates)
        )
        self._retrieval = retrieval
        # False: a store that does not exist yet is a StoreError at connect (after the
        # arguments of the first call were checked), not a new, empty memory.
        self._create = create
        self._retriever: Retriever | None = None
        self._connected = False
        self._extractors: dict[str, Extractor] = {}
        self._experiences: ExperienceRecall | None = None
        # LLM requests and tokens this memory has spent (stats()), failed episodes included.
        self._llm_usage: dict[str, int] = dict.fromkeys(sorted(USAGE_FIELDS), 0)

    # ------------------------------------------------------------------ lifecycle
    @property
    def embedder(self) -> Embedder:
        """The embedder in use: the one asked for, checked against the store's record, else
        the store's own (reading it opens the store)."""
        if self._embedder is None:
            self.connect()
        if self._embedder is None:  # connect() resolves it
            raise ConfigError("no embedder: the store could not be opened")
        return self._embedder

    def connect(self) -> GraphMemory:
        """Open the store, apply migrations (``auto_migrate``) and check the embedder."""
        if self._connected:
            return self
        if not self._create:
            require_existing(self.store)
        self._embedder, self._embedding_dim = open_checked(
            self.store, self._requested, auto_migrate=self.settings.auto_migrate
        )
        self._connected = True
        return self

    def migrate(self) -> list[str]:
        self.store.connect()
        return self.store.migrate()

    def close(self) -> None:
        self.store.close()
        self._connected = False

    def __enter__(self) -> GraphMemory:
        return self.connect()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def _ready(self) -> GraphStore:
        if not self._connected:
            self.connect()
        return self.store

    @property
    def retriever(self) -> Retriever:
        if self._retriever is None:
            self._retriever = Retriever(
                self._ready(), self.embedder, self._retrieval, rescore=apply_usage
            )
        return self._retriever

    # ------------------------------------------------------------------ ingest
    def add_episode(
        self,
        content: str,
        *,
        group_id: str = "default",
        source: str | None = None,
        kind: str = "message",
        reference_time: datetime | None = None,
        metadata: Mapping[str, Any] | None = None,
        extractor: str | Extractor | None = None,
    ) -> IngestResult:
        """Store an episode (first, before any extraction), extract facts and reconcile them."""
        from .ingest.episode_input import episode_row

        row = episode_row(content, group_id, source, kind, reference_time, metadata)
        return self._ingest(row, extractor)

    def add_episodes(
        self,
        items: Iterable[Mapping[str, Any] | EpisodeRecord],
        *,
        on_invalid: Literal["raise", "skip"] = "raise",
        group_id: str | None = None,
    ) -> list[IngestResult]:
        """Bulk ingest. Every item is validated before anything is written.

        ``on_invalid="raise"`` (the default, like the CLI without ``--skip-invalid``): one bad
        item raises ``InputError`` naming its index, and nothing is written. ``"skip"``: the
        valid items are ingested and each bad one gets a result with ``status="invalid"`` and
        the reason in ``error``. Either way the results line up with the items, one each.

        ``group_id``: every write goes to this group. Items without a ``group_id`` go to it, and
        an item naming another group is invalid (under the same ``on_invalid`` rule). ``None``
        (the default): each item's own ``group_id``, else ``"default"``.
        """
        from .ingest.episode_input import bulk_rows, line_up

        rows, invalid = bulk_rows(
            items, on_invalid=on_invalid, group_id=group_id, extractor=self._extractor
        )
        return line_up(self._ingest_many(rows), invalid)

    def add_fact(
        self,
        subject: str,
        predicate: str,
        object: str | None = None,
        *,
        value: Scalar | None = None,
        group_id: str = "default",
        valid_from: datetime | None = None,
        valid_to: datetime | None = None,
        source: str | None = None,
        confidence: float = 1.0,
        negated: bool = False,
        correction: bool = False,
        statement: str | None = None,
        replaces: str | None = None,
        pinned: bool = False,
    ) -> IngestResult:
        """Write one fact directly (no extractor) through the same resolver and reconciler;
        ``pinned=True`` pins it too (``pin``)."""
        from .ingest.episode_input import fact_episode
        from .ingest.pipeline import FixedExtraction

        if not isinstance(pinned, bool):
            raise InputError(f"pinned must be True or False, got {pinned!r}"[:200])
        row, extraction = fact_episode(
            subject,
            predicate,
            object,
            value=value,
            group_id=group_id,
            valid_from=valid_from,
            valid_to=valid_to,
            source=source,
            confidence=confidence,
            negated=negated,
            correction=correction,
            statement=statement,
            replaces=replaces,
            predicates=self.predicates,
        )
        result = self._ingest(row, FixedExtraction(extraction))
        if pinned:  # pin the fact this episode states
            self._pin_stated(result, group_id, extraction.facts[0], source)
        return result

    def reprocess(
        self, *, group_id: str | None = None, extractor: str | Extractor | None = None
    ) -> list[IngestResult]:
        """Run extraction again for episodes left ``pending`` or ``failed``."""
        store = self._ready()
        rows = store.episodes_by_status(group_id, ["pending", "failed"])
        return self._ingest_many([(row, extractor) for row in rows], existing=True)

    def _extractor(self, choice: str | Extractor | None, kind: str) -> Extractor:
        """The extractor for an episode kind: the one given, else the memory's default; named
        ones are made once per memory (per name and kind family) and reused."""
        from .extract import get_extractor

        choice = choice if choice is not None else self.default_extractor
        if not isinstance(choice, str):
            if not callable(getattr(choice, "extract", None)):
                raise InputError(
                    f"extractor must be a name or an Extractor, got {type(choice).__name__}"
                )
            return choice
        family = kind if kind in ("json", "experience") else "text"
        key = f"{choice}:{family}"
        if key not in self._extractors:
            self._extractors[key] = get_extractor(choice, self.settings, kind=kind)
        return self._extractors[key]

    def _ingest(
        self, row: EpisodeRow, extractor: str | Extractor | None, *, existing: bool = False
    ) -> IngestResult:
        return self._ingest_many([(row, extractor)], existing=existing)[0]

    def _ingest_many(
        self,
        rows: Sequence[tuple[EpisodeRow, str | Extractor | None]],
        *,
        existing: bool = False,
    ) -> list[IngestResult]:
        """The ingest run (``_pipeline``) over this memory's store, extractors and embedder."""
        from .ingest.pipeline import Ingestor

        store = self._ready()
        run = Ingestor(
            store=store,
            settings=self.settings,
            predicates=self.predicates,
            embedder=self.embedder,
            extractor=self._extractor,
            context_config=lambda: self.retriever.config,
            clock=record_ms,
            usage=self._llm_usage,
        )
        return run.ingest(rows, existing=existing)

    # ------------------------------------------------------------------ read
    def _view(self, as_of: datetime | None, known_at: datetime | None) -> TimeView:
        return _reads.time_view(as_of, known_at)

    def recall(
        self,
        query: str,
        *,
        group_id: str = "default",
        as_of: datetime | None = None,
        known_at: datetime | None = None,
        k: int = 10,
        hops: int = 2,
        filters: Mapping[str, Any] | None = None,
    ) -> RecallResult:
        """Facts relevant to ``query``, valid at ``as_of`` as believed at ``known_at``. No LLM."""
        return _reads.recall(
            lambda: self.retriever,
            query,
            group_id=group_id,
            as_of=as_of,
            known_at=known_at,
            k=k,
            hops=hops,
            filters=filters,
        )

    def history(
        self, entity: str, *, predicate: str | None = None, group_id: str = "default"
    ) -> list[FactRecord]:
        """Every fact about ``entity`` (as subject), corrected ones included, oldest first."""
        return _reads.history(self._ready, entity, predicate=predicate, group_id=group_id)

    def facts(
        self,
        *,
        group_id: str = "default",
        entity: str | None = None,
        include_history: bool = False,
        as_of: datetime | None = None,
        known_at: datetime | None = None,
    ) -> list[FactRecord]:
        """Facts of a group (or about one entity) valid at ``as_of`` as memory believed them at
        ``known_at`` (both default to now: the current facts, as ``recall``); with
        ``include_history``, every fact, corrected ones included."""
        return _reads.facts(
            self._ready,
            group_id=group_id,
            entity=entity,
            include_history=include_history,
            as_of=as_of,
            known_at=known_at,
        )

    def get_facts(self, fact_ids: Sequence[str]) -> list[FactRecord]:
        """Facts by id (e.g. the ids in ``IngestResult.superseded``), in the order given."""
        if isinstance(fact_ids, str):
            raise InputError("get_facts takes a list of fact ids")
        return self._ready().fact_records(list(fact_ids), None)

    def episode(self, episode_id: str) -> EpisodeRecord | None:
        found = self._ready().episodes([check_text(episode_id, "episode_id")])
        return found[0] if found else None

    # ------------------------------------------------------------------ forget and admin
    def forget(
        self,
        *,
        group_id: str = "default",
        episode_id: str | None = None,
        entity: str | None = None,
        all: bool = False,
        episodes: bool = False,
    ) -> ForgetResult:
        """Delete an episode, an entity or a whole group; shared facts keep other provenance.

        ``entity=``: the entity, its aliases and every fact about it. Its own episodes (those
        it spoke, by ``metadata.speaker`` / ``.name``, and those stating or negating a fact
        about it) are kept unless ``episodes=True``, which forgets them too, with every fact
        they alone support; ``own_episodes_kept`` / ``own_episode_ids_kept`` in the result say
        which were kept (``forget(episode_id=...)`` each). ``episodes=True`` with a name that no
        entity has any more forgets the episodes that name spoke.

        On SQLite the deleted text leaves the file: the full-text indexes touched are merged
        ('optimize', a cost that grows with the index) and the WAL is truncated.
        """
        from .forget.request import forget

        return forget(
            self._ready,
            self.predicates,
            record_ms,
            group_id=group_id,
            episode_id=episode_id,
            entity=entity,
            all=all,
            episodes=episodes,
        )

    def stats(self, group_id: str | None = None) -> dict[str, Any]:
        """The store's counts (of a group, or of all); with ``llm_usage`` (requests, retries,
        repairs, failed requests and tokens this memory has spent since it was opened) once an
        LLM extractor has been called."""
        if group_id is not None:
            group_id = check_group(group_id)
        out = dict(self._ready().stats(group_id))
        if self._llm_usage["llm_calls"]:
            out["llm_usage"] = dict(self._llm_usage)
        return out

    def export(self, *, group_id: str | None = None) -> Iterator[dict[str, Any]]:
        """Every episode, entity, fact, provenance link, SUPERSEDES/CONTRADICTS link, mention."""
        if group_id is not None:
            group_id = check_group(group_id)
        return self._ready().export_rows(group_id)

    def import_rows(
        self,
        rows: Iterable[dict[str, Any]],
        *,
        lines: Sequence[int] | None = None,
        source: str | None = None,
    ) -> dict[str, int]:
        """Import ``export()`` rows (a ``graphmem export`` file's); rows the store already
        holds are skipped, so importing twice changes nothing. Returns what was added.

        Every row is checked first, as ingest checks its input: fields and their types, known
        kinds, timezone-aware times, ``valid_to`` after ``valid_from``, vectors of the store's
        dimension, and that what a row refers to (a fact's entities, the fact and episode of a
        provenance row, a link's facts, a mention's ends) is in the rows or the store, in the
        same group. Any bad row raises one ``InputError`` naming each (``row N (type fact, id
        ...): valid_to ... is before valid_from ...``; N is ``lines[i]`` when given, e.g. the
        file's line numbers, else the row's 1-based position; ``source`` prefixes it), and
        nothing is written.
        """
        from .store._export import validate_export

        if isinstance(rows, str | bytes | Mapping) or not isinstance(rows, Iterable):
            raise InputError(f"import_rows takes a list of export rows, got {type(rows).__name__}")
        rows = list(rows)  # an export() iterator is read twice (checked, then written)
        store = self._ready()
        validate_export(rows, store, dim=self._embedding_dim, lines=lines, source=source)
        counts = store.import_rows(rows)
        relink(store, [r["id"] for r in rows if r.get("type") == "episode"], record_ms())
        return counts

    def reembed(
        self,
        embedder: Embedder | str,
        *,
        batch_size: int = 256,
        progress: Callable[[int, int], None] | None = None,
    ) -> ReembedReport:
        """Move this memory's store to ``embedder`` (an ``Embedder`` or a name: ``hash``,
        ``openai``, ``sentence-transformers``) or, given the store's own embedder, embed what
        lacks a vector (episodes stored before episode vectors existed). Batches of
        ``batch_size`` are committed beside the current vectors, which recall keeps using until
        the last batch swaps them in; a run that is killed resumes when run again with the same
        embedder. ``progress(done, total)`` follows each batch. Afterwards this memory uses
        ``embedder``; other processes open the store with it (``graphmem db reembed``)."""
        from .embeddings.factory import build_embedder
        from .ingest.reembed import reembed_store

        target = build_embedder(embedder)
        store = self.store
        store.connect()
        if self.settings.auto_migrate:
            store.migrate()
        report = reembed_store(store, target, batch_size=batch_size, progress=progress)
        self._requested = target
        self._embedder, self._embedding_dim = target, report.dim
        self._retriever = None
        self._experiences = None
        return report

    def to_networkx(
        self,
        *,
        group_id: str | None = "default",
        as_of: datetime | None = None,
        include_history: bool = False,
    ) -> nx.MultiDiGraph[str]:
        """The group's graph as a ``networkx.MultiDiGraph`` (``group_id=None``: every group):
        entities, facts and episodes, with SUBJECT_OF/OBJECT, FROM_EPISODE, SUPERSEDES and
        CONTRADICTS links. Facts current now (or valid at ``as_of``), or with
        ``include_history=True`` every fact. Needs ``pip install 'graphmem[networkx]'``;
        attributes and edges: ``graphmem.views.graph``."""
        from .views.graph import to_networkx

        return to_networkx(
            self, group_id=group_id, as_of=as_of, include_history=include_history
        )
