"""``GraphMemory``: the facade that wires store, extractors, embedder and retriever together.

It holds no temporal logic of its own (that is ``_reconcile``) and no SQL or Cypher (the stores).
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import logging
import os
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from types import TracebackType
from typing import Any, Literal

from ._config import Settings
from ._embed import (
    Embedder,
    check_embedder,
    embedder_mismatch,
    embedder_name,
    resolve_embedder,
)
from ._errors import (
    ConfigError,
    GraphMemError,
    InputError,
    StoreError,
)
from ._experience import (
    ExperienceRecall,
    ExperienceWeights,
    Outcome,
    experience_record,
    parse_experience,
    text_view,
)
from ._forget import plan_forget_entity, plan_forget_episodes, plan_forget_group
from ._ids import content_hash, entity_key, make_id
from ._ingest import PreparedFact, build_plan, default_statement, prepare_facts
from ._models import (
    EpisodeRecord,
    Experience,
    ExtractedFact,
    Extraction,
    FactRecord,
    ForgetResult,
    IngestResult,
    PinnedFact,
    RecallResult,
    Scalar,
)
from ._predicates import Predicate, PredicateRegistry, normalize_predicate
from ._resolve import EntityRequest
from ._retrieve import RetrievalConfig, Retriever
from ._time import now_ms, record_ms, require_aware, to_ms, utcnow
from .extract import ExtractionContext, Extractor, get_extractor
from .extract.structured import parse_json_record
from .store import GraphStore, TimeView, open_store
from .store._base import EpisodeRow, StoreReader, Vector, WritePlan, episode_record

__all__ = ["GraphMemory"]

log = logging.getLogger("graphmem")
EPISODE_KINDS = ("message", "text", "json", "event", "experience")
# Characters of an episode's content that its embedding reads (models read fewer tokens anyway).
_EMBED_CHARS = 2000
_ROLE_SPEAKERS = {"user": None, "human": None, "assistant": "assistant", "ai": "assistant"}


def _group(group_id: object) -> str:
    if not isinstance(group_id, str) or not group_id.strip():
        raise InputError(f"group_id must be a non-empty string, got {_show(group_id)}")
    return _text(group_id, "group_id")


def _show(value: object, limit: int = 80) -> str:
    """``repr`` for error messages: short, and safe for values whose repr fails (huge ints)."""
    try:
        text = repr(value)
    except Exception:
        text = f"<{type(value).__name__}>"
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _text(value: object, name: str, *, empty: bool = False) -> str:
    """A string argument every store can hold: UTF-8 encodable (no lone surrogates)."""
    if not isinstance(value, str):
        raise InputError(f"{name} must be a string, got {type(value).__name__}")
    if not empty and not value.strip():
        raise InputError(f"{name} must be a non-empty string")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise InputError(
            f"{name} is not valid Unicode text (lone surrogate at position {exc.start})"
        ) from None
    return value


class GraphMemory:
    """Long-term memory as a temporal knowledge graph.

    ``GraphMemory("sqlite:///memory.db")`` (or no argument: ``GRAPHMEM_STORE``, else
    ``./graphmem.db``). Nothing touches the store until the first call or ``connect()``.
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
        self._retriever: Retriever | None = None
        self._connected = False
        self._extractors: dict[str, Extractor] = {}
        self._experiences: ExperienceRecall | None = None
        # LLM requests and tokens this memory has spent (stats()), failed episodes included.
        self._llm_usage: dict[str, int] = dict.fromkeys(sorted(_USAGE_FIELDS), 0)

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
        self.store.connect()
        if self.settings.auto_migrate:
            self.store.migrate()
        pending = [m for m in self.store.migration_status() if m.applied_at is None]
        if pending:
            from ._errors import SchemaError

            raise SchemaError(
                f"{self.store.url} needs migrations {[m.version for m in pending]}; "
                "run `graphmem db migrate`"
            )
        self._check_embedder()
        self._connected = True
        return self

    def _check_embedder(self) -> None:
        """Resolve the embedder against the store's record: nothing asked for (no
        ``embedder=``, no ``GRAPHMEM_EMBEDDER``) means the store's own; a request it disagrees
        with is an ``EmbeddingMismatchError`` naming both and the fix. A new store records
        the embedder it is given (the hashed n-grams by default)."""
        raw = self.store.get_meta("embedder")
        recorded: tuple[str, int] | None = None
        if raw is not None:
            try:
                info = json.loads(raw)
                recorded = (str(info["name"]), int(info["dim"]))
            except (ValueError, KeyError, TypeError):
                from ._errors import SchemaError

                raise SchemaError(
                    f"{self.store.url}: its recorded embedder is unreadable ({raw[:80]!r})"
                ) from None
        embedder = resolve_embedder(self._requested, recorded, store=self.store.url)
        dim = embedder.dim or self._probe_dim(embedder)
        if recorded is None:
            self.store.set_meta("embedder", json.dumps({"name": embedder.name, "dim": dim}))
        elif (embedder.name, dim) != recorded:
            asked = f"embedder={type(embedder).__name__}"
            raise embedder_mismatch(self.store.url, recorded, asked, embedder.name, dim)
        self._embedder = embedder
        self._embedding_dim = dim

    def _probe_dim(self, embedder: Embedder | None = None) -> int:
        return int((embedder or self.embedder).embed(["dimension probe"]).shape[1])

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
            self._retriever = Retriever(self._ready(), self.embedder, self._retrieval)
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
        row = self._episode_row(content, group_id, source, kind, reference_time, metadata)
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
        if on_invalid not in ("raise", "skip"):
            raise InputError(f"on_invalid must be 'raise' or 'skip', got {_show(on_invalid)}")
        # -- group bound (issue 14): one tenant's bulk write cannot name another's group
        bound = None if group_id is None else _group(group_id)
        rows: list[tuple[EpisodeRow, str | Extractor | None]] = []
        invalid: dict[int, str] = {}
        if isinstance(items, str | bytes | Mapping) or not isinstance(items, Iterable):
            raise InputError(
                f"add_episodes takes a list of episodes (mappings), got {type(items).__name__}"
            )
        for index, item in enumerate(items):
            try:
                if bound is not None and isinstance(item, Mapping | EpisodeRecord):
                    named = (item.group_id if isinstance(item, EpisodeRecord)
                             else item.get("group_id"))
                    if named is None and isinstance(item, Mapping):
                        item = {**item, "group_id": bound}
                    elif named != bound:
                        raise InputError(
                            f"episode {index}: group_id {_show(named)} is not {_show(bound)}"
                        )
                # -- end group bound
                rows.append(self._bulk_row(index, item))
            except (InputError, ConfigError) as exc:
                if on_invalid == "raise":
                    raise
                invalid[index] = str(exc)
        results = iter(self._ingest_many(rows))
        total = len(rows) + len(invalid)
        return [
            IngestResult(episode_id="", status="invalid", error=invalid[i])
            if i in invalid
            else next(results)
            for i in range(total)
        ]

    def add_experience(
        self,
        task: str,
        *,
        state: Mapping[str, Any] | None = None,
        params: Mapping[str, Any] | None = None,
        outcome: Mapping[str, Any] | None = None,
        payload: Mapping[str, Any] | None = None,
        meta: Mapping[str, Any] | None = None,
        run_id: str | int | None = None,
        episode: str | int | None = None,
        group_id: str = "default",
        occurred_at: datetime | None = None,
        source: str | None = None,
    ) -> IngestResult:
        """Store one attempt: what was tried (``params``), in what ``state``, and what came of
        it (``outcome``; ``outcome["success"]`` is its success flag).

        Arrays stay ordered. ``payload`` (trajectories, observations) and ``meta`` (fields only
        to filter on) are stored and returned but not indexed or turned into facts. The
        attempt is the subject ``run <run_id> episode <episode>`` (its own id when either is
        missing), so runs never supersede each other; recording the same run and episode again
        supersedes the changed values, with history. ``occurred_at`` defaults to now; the same
        record sent again with the same ``occurred_at`` is stored once. Bad input raises
        ``InputError`` naming the argument, before anything is stored.
        """
        content, metadata = experience_record(
            task,
            state=state,
            params=params,
            outcome=outcome,
            payload=payload,
            meta=meta,
            run_id=run_id,
            episode=episode,
        )
        # Without a time, now: the same attempt made twice is two attempts (an explicit time
        # makes a resend of one record idempotent instead).
        when = occurred_at if occurred_at is not None else utcnow()
        row = self._episode_row(content, group_id, source, "experience", when, metadata)
        return self._ingest(row, None)

    def recall_experiences(
        self,
        query: str = "",
        *,
        state: Mapping[str, Any] | None = None,
        k: int = 5,
        outcome: Outcome = "any",
        filters: Mapping[str, Any] | None = None,
        weights: ExperienceWeights | None = None,
        group_id: str = "default",
        as_of: datetime | None = None,
        include_payload: bool = False,
    ) -> list[Experience]:
        """The ``k`` past attempts most like this one, whole, best first.

        Ranked by text relevance to ``query``, nearness to ``state`` (named numeric fields and
        vectors, e.g. ``{"object_pos": [x, y, z]}``) and recency, mixed by ``weights``;
        ``outcome`` keeps successes (``"success_only"``) or failures (``"failure_only"``) or
        puts the successes among the ``k`` best matches first (``"success_first"``).
        ``filters`` (the recall filter language, over paths like ``state.object``,
        ``params.force``, ``outcome.success``, ``meta.seed``) hold for every returned attempt.
        ``as_of``: only attempts that had happened by then. No model is called unless the
        weights give embedding similarity a share.
        """
        if weights is not None and not isinstance(weights, ExperienceWeights):
            raise InputError(f"weights must be ExperienceWeights, got {type(weights).__name__}")
        if self._experiences is None:
            self._experiences = ExperienceRecall(self._ready(), self.embedder)
        return self._experiences.search(
            _group(group_id),
            query,
            state=state,
            k=k,
            outcome=outcome,
            filters=filters,
            weights=weights if weights is not None else ExperienceWeights(),
            as_of=as_of,
            include_payload=include_payload,
        )

    def _bulk_row(
        self, index: int, item: Mapping[str, Any] | EpisodeRecord
    ) -> tuple[EpisodeRow, str | Extractor | None]:
        """One item of ``add_episodes``, validated; errors name the item's index."""
        if not isinstance(item, Mapping | EpisodeRecord):
            raise InputError(f"episode {index}: must be a mapping, got {type(item).__name__}")
        data = item.model_dump() if isinstance(item, EpisodeRecord) else dict(item)
        try:
            allowed = {
                "content",
                "group_id",
                "source",
                "kind",
                "reference_time",
                "metadata",
                "extractor",
            }
            unknown = (
                set(data) - allowed - {"id", "ingested_at", "content_hash", "status", "error"}
            )
            if unknown:
                raise InputError(f"unknown field(s) {sorted(unknown)}")
            row = self._episode_row(
                data.get("content"),  # type: ignore[arg-type]
                data.get("group_id", "default"),
                data.get("source"),
                data.get("kind", "message"),
                data.get("reference_time"),
                data.get("metadata"),
            )
            # Resolve the extractor now: a bad name must not fail a later chunk after the
            # earlier chunks were written.
            self._extractor(data.get("extractor"), row.kind)
        except (InputError, ConfigError) as exc:
            raise type(exc)(f"episode {index}: {exc}") from None
        return row, data.get("extractor")

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
        group_id = _group(group_id)
        if not isinstance(pinned, bool):
            raise InputError(f"pinned must be True or False, got {_show(pinned)}")
        if not isinstance(subject, str) or not subject.strip():
            raise InputError("subject must be a non-empty string")
        _text(subject, "subject")
        canon = normalize_predicate(predicate)
        for name, text_arg in (("source", source), ("statement", statement)):
            if text_arg is not None:
                _text(text_arg, name, empty=True)
        if replaces is not None:
            _text(replaces, "replaces")
        if isinstance(value, str):
            _text(value, "value", empty=True)
        if isinstance(confidence, bool) or not isinstance(confidence, int | float):
            raise InputError(f"confidence must be a number, got {type(confidence).__name__}")
        if isinstance(confidence, int) and not 0 <= confidence <= 1:  # float(10**400) overflows
            raise InputError(f"confidence must be between 0 and 1, got {_show(confidence)}")
        if object is not None and value is not None:
            raise InputError("give either object (an entity name) or value (a literal), not both")
        if object is not None and (not isinstance(object, str) or not object.strip()):
            raise InputError("object must be a non-empty string (an entity name)")
        if object is not None:
            _text(object, "object")
        if object is None and value is None and not negated:
            raise InputError("add_fact needs an object or a value (or negated=True)")
        if value is not None and not isinstance(value, str | int | float | bool):
            raise InputError(
                f"value must be a string, number or boolean, got {type(value).__name__}"
            )
        for name, flag in (("negated", negated), ("correction", correction)):
            if not isinstance(flag, bool | int):
                raise InputError(f"{name} must be True or False, got {type(flag).__name__}")
        negated, correction = bool(negated), bool(correction)
        if negated and correction:
            raise InputError("a fact cannot be both negated and a correction")
        if not 0.0 <= float(confidence) <= 1.0:
            raise InputError(f"confidence must be between 0 and 1, got {confidence}")
        start = require_aware(valid_from, "valid_from")
        end = require_aware(valid_to, "valid_to")
        if start is not None and end is not None and end <= start:
            raise InputError("valid_to must be after valid_from")
        try:
            target = object if object is not None else ("" if value is None else str(value))
        except ValueError as exc:  # an int too long to print (sys.get_int_max_str_digits)
            raise InputError(f"value cannot be stored: {exc}") from None
        text = statement or _fact_statement(subject, canon, target, negated)
        kind = "negate" if negated else "correct" if correction else "assert"
        digest = content_hash(
            "fact",
            text,
            source or "",
            start.isoformat() if start else "",
            end.isoformat() if end else "",
            str(negated),
            str(correction),
            json.dumps(value),
            object or "",
        )
        reference = start or utcnow()
        row = EpisodeRow(
            id=make_id("ep", group_id, digest),
            group_id=group_id,
            source=source,
            kind="fact",
            content=text,
            reference_time=to_ms(reference),
            ingested_at=to_ms(utcnow()),
            content_hash=digest,
            metadata={"predicate": canon},
        )
        fact = ExtractedFact(
            subject=subject.strip(),
            predicate=canon,
            object=object.strip() if object is not None else None,
            value=value,
            statement=text,
            valid_from=start,
            valid_to=end,
            kind=kind,
            replaces=replaces,
            confidence=float(confidence),
        )
        # The checks extraction makes (NaN, valid_to before the implied valid_from), before the
        # provenance episode is written: a rejected call leaves the store as it was.
        prepare_facts(
            [fact], reference_time=row.reference_time, predicates=self.predicates, strict=True
        )
        result = self._ingest(row, _Fixed(Extraction(facts=[fact])))
        if pinned:  # usage (issue 16): pin the fact this episode states
            self._pin_stated(result, group_id, fact, source)
        return result

    def reprocess(
        self, *, group_id: str | None = None, extractor: str | Extractor | None = None
    ) -> list[IngestResult]:
        """Run extraction again for episodes left ``pending`` or ``failed``."""
        store = self._ready()
        rows = store.episodes_by_status(group_id, ["pending", "failed"])
        return self._ingest_many([(row, extractor) for row in rows], existing=True)

    def _episode_row(
        self,
        content: str,
        group_id: str,
        source: str | None,
        kind: str,
        reference_time: datetime | None,
        metadata: Mapping[str, Any] | None,
    ) -> EpisodeRow:
        group_id = _group(group_id)
        if not isinstance(content, str):
            raise InputError(f"content must be a string, got {type(content).__name__}")
        if not content.strip():
            raise InputError("content is empty")
        if "\x00" in content:
            raise InputError("content contains a NUL character")
        if kind not in EPISODE_KINDS:
            raise InputError(f"kind must be one of {', '.join(EPISODE_KINDS)}, got {_show(kind)}")
        if source is not None and not isinstance(source, str):
            raise InputError(f"source must be a string, got {type(source).__name__}")
        _text(content, "content")
        if source is not None:
            _text(source, "source", empty=True)
        if metadata is not None and not isinstance(metadata, Mapping):
            raise InputError(f"metadata must be a mapping, got {type(metadata).__name__}")
        if kind == "json":
            parse_json_record(content)
        elif kind == "experience":
            parse_experience(content)
        if isinstance(reference_time, str):
            from ._time import parse_datetime

            reference_time = parse_datetime(reference_time, "reference_time")
        when = require_aware(reference_time, "reference_time")
        meta = dict(metadata or {})
        try:
            meta_text = json.dumps(meta, sort_keys=True, ensure_ascii=False)
        except (TypeError, ValueError, RecursionError) as exc:
            raise InputError(f"metadata must be JSON-serialisable: {exc}") from None
        _text(meta_text, "metadata", empty=True)
        digest = content_hash(
            kind, source or "", content, when.isoformat() if when else "", meta_text
        )
        return EpisodeRow(
            id=make_id("ep", group_id, digest),
            group_id=group_id,
            source=source,
            kind=kind,
            content=content,
            reference_time=to_ms(when or utcnow()),
            ingested_at=to_ms(utcnow()),
            content_hash=digest,
            metadata=meta,
        )

    def _extractor(self, choice: str | Extractor | None, kind: str) -> Extractor:
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
        """Raw episodes first (one transaction per chunk), then extraction, one batched
        embedding call, and the reconciled writes of the chunk in one transaction."""
        store = self._ready()
        results: list[IngestResult] = []
        position = 0
        while position < len(rows):
            first = self._extractor(rows[position][1], rows[position][0].kind)
            settings = self.settings
            size = settings.llm_concurrency if first.needs_context else settings.bulk_chunk
            chunk = rows[position : position + max(size, 1)]
            position += len(chunk)
            results.extend(self._ingest_chunk(store, chunk, existing))
        return results

    def _ingest_chunk(
        self,
        store: GraphStore,
        chunk: Sequence[tuple[EpisodeRow, str | Extractor | None]],
        existing: bool,
    ) -> list[IngestResult]:
        extractors = [self._extractor(choice, row.kind) for row, choice in chunk]
        inserted = store.insert_episodes([row for row, _ in chunk])
        results: list[IngestResult | None] = [None] * len(chunk)
        pending: list[_Pending] = []
        for index, ((stored, created), chosen) in enumerate(zip(inserted, extractors, strict=True)):
            if not created and not existing and stored.status == "extracted":
                results[index] = IngestResult(
                    episode_id=stored.id, status="extracted", already_present=True
                )
                continue
            pending.append(_Pending(index, stored, chosen))
        for item in self._extract(pending):
            if item.error is not None:
                results[item.index] = IngestResult(
                    episode_id=item.row.id, status="failed", error=item.error, **item.usage
                )
        ready = [p for p in pending if p.error is None]
        self._embed_all(ready)
        now = record_ms()
        outcomes: dict[int, IngestResult] = {}

        def make_work(item: _Pending) -> Callable[[StoreReader], WritePlan]:
            def work(reader: StoreReader) -> WritePlan:
                # Another writer may have finished (or forgotten) this episode while it was
                # being extracted here: writing it again would count its evidence twice.
                current = reader.get_episode(item.row.id)
                if current is None:
                    outcomes[item.index] = IngestResult(
                        episode_id=item.row.id,
                        status="failed",
                        error="the episode was forgotten while it was being ingested",
                    )
                    return WritePlan()
                if current.status == "extracted":
                    outcomes[item.index] = IngestResult(
                        episode_id=item.row.id, status="extracted", already_present=True
                    )
                    return WritePlan()
                plan, result = build_plan(
                    reader,
                    group_id=item.row.group_id,
                    episode_id=item.row.id,
                    extractor_name=item.extractor.name,
                    facts=item.prepared,
                    entities=item.entities,
                    now=now,
                    order=item.index,
                )
                plan.episode_embedding = item.embedding
                if item.warnings and plan.episode_status is not None:
                    # Recorded on the episode (its error field, status still extracted): what
                    # the extraction dropped without failing.
                    status, name, _ = plan.episode_status
                    plan.episode_status = (status, name, _warning_text(item.warnings))
                outcomes[item.index] = result
                return plan

            return work

        try:
            store.write_many([make_work(p) for p in ready])
        except StoreError as exc:
            # If the store is gone the episodes stay pending, and reprocess finds them.
            with contextlib.suppress(GraphMemError):
                for item in ready:
                    store.set_episode_status(item.row.id, "failed", item.extractor.name, str(exc))
            raise
        for item in ready:
            result = outcomes[item.index]
            assert item.extraction is not None
            extraction = item.extraction
            result.llm_calls = extraction.llm_calls
            result.llm_retries = extraction.llm_retries
            result.llm_repairs = extraction.llm_repairs
            result.llm_failed_calls = extraction.llm_failed_calls
            result.prompt_tokens = extraction.prompt_tokens
            result.completion_tokens = extraction.completion_tokens
            result.warnings = list(item.warnings)
            results[item.index] = result
        done = [r for r in results if r is not None]
        for result in done:
            for name in _USAGE_FIELDS:
                self._llm_usage[name] += int(getattr(result, name))
        return done

    def _extract(self, pending: Sequence[_Pending]) -> Sequence[_Pending]:
        """Run each episode's extractor; failures mark the episode ``failed``, input is kept.

        Model-backed extractors (``needs_context``: llm, langchain) run on up to
        ``settings.llm_concurrency`` threads; they share the extractor's rate limiter and budget.
        """
        remote = [p for p in pending if p.extractor.needs_context]
        workers = min(max(1, self.settings.llm_concurrency), len(remote))
        if workers > 1:
            from concurrent.futures import ThreadPoolExecutor

            with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="graphmem-llm") as pool:
                list(pool.map(self._extract_one, remote))  # re-raises a worker's exception
            local = [p for p in pending if not p.extractor.needs_context]
        else:
            local = list(pending)
        for item in local:
            self._extract_one(item)
        return pending

    def _extract_one(self, item: _Pending) -> None:
        record = episode_record(item.row)
        chosen = item.extractor
        try:
            context = self._context(record, chosen)
            item.extraction = chosen.extract(record, context)
            strict = isinstance(chosen, _Fixed)
            item.prepared, skipped = prepare_facts(
                item.extraction.facts,
                reference_time=item.row.reference_time,
                predicates=self.predicates,
                strict=strict,
            )
        except GraphMemError as exc:
            self.store.set_episode_status(item.row.id, "failed", chosen.name, str(exc))
            if isinstance(exc, InputError) and isinstance(chosen, _Fixed):
                raise
            log.warning("graphmem: extraction failed for %s: %s", item.row.id, exc)
            item.error = str(exc)
            usage = getattr(exc, "usage", None)  # LLM calls a failed episode still cost
            if isinstance(usage, dict):
                item.usage = {k: int(v) for k, v in usage.items() if k in _USAGE_FIELDS}
            return
        for reason in skipped:
            log.info("graphmem: skipped a fact of %s: %s", item.row.id, reason)
        item.warnings = [*item.extraction.warnings, *(f"fact left out: {r}" for r in skipped)]
        item.entities = [
            EntityRequest(e.name, e.type, list(e.aliases)) for e in item.extraction.entities
        ]

    def _context(self, episode: EpisodeRecord, extractor: Extractor) -> ExtractionContext:
        meta = episode.metadata
        speaker = meta.get("speaker") or meta.get("name")
        if not speaker:
            role = str(meta.get("role", "")).lower()
            speaker = _ROLE_SPEAKERS.get(role) or self.settings.default_speaker
        context = ExtractionContext(speaker=str(speaker), predicates=self.predicates)
        if extractor.needs_context:
            store = self.store
            previous = store.recent_episodes(
                episode.group_id,
                episode.source,
                to_ms(episode.reference_time),
                self.settings.context_episodes + 1,
            )
            context.previous = [episode_record(p) for p in previous if p.id != episode.id][
                -self.settings.context_episodes :
            ]
            # What memory holds about every entity the episode names, not only the facts its
            # words support ("Alice moved to Berlin" must see "Alice lives in Paris").
            context_retriever = Retriever(
                self.store,
                self.embedder,
                dataclasses.replace(self.retriever.config, named_fact_limit=None),
            )
            found = context_retriever.search(
                episode.content[:2000],
                group_id=episode.group_id,
                view=self._view(None, None),
                k=self.settings.context_facts,
                hops=1,
            )
            facts = [
                FactRecord(**h.model_dump(include=set(FactRecord.model_fields)))
                for h in found.facts
            ]
            # What memory holds about the speaker, even when the text never names them
            # ("I moved to Porto" must be able to say which lives_in fact it replaces).
            speaker_ids = [
                e.id for e in self.store.find_entities(episode.group_id, [entity_key(str(speaker))])
            ]
            if speaker_ids:
                about = self.store.list_facts(
                    episode.group_id,
                    entity_ids=speaker_ids,
                    view=self._view(None, None),
                    subject_only=True,
                )
                seen = {f.id for f in facts}
                facts = [
                    f for f in about[-self.settings.context_facts :] if f.id not in seen
                ] + facts
            context.facts = facts[: 2 * self.settings.context_facts]
        return context

    def _embed_all(self, items: Sequence[_Pending]) -> None:
        """One embedding call for every episode, statement and entity name of a chunk."""
        texts: list[str] = []
        slots: list[PreparedFact | EntityRequest | _Pending] = []
        for item in items:
            experience = item.row.kind == "experience"
            if experience:
                # An attempt is found whole: its words are embedded once, on the episode;
                # its facts (field = value) and its own name carry no meaning to embed.
                texts.append(text_view(parse_experience(item.row.content))[:_EMBED_CHARS])
                slots.append(item)
            elif not isinstance(item.extractor, _Fixed):  # add_fact's episode is its statement
                texts.append(item.row.content[:_EMBED_CHARS])
                slots.append(item)
            names: dict[str, EntityRequest] = {e.name: e for e in item.entities}
            for pf in item.prepared:
                fact = pf.fact
                names.setdefault(fact.subject, EntityRequest(fact.subject, fact.subject_type))
                if fact.object is not None:
                    names.setdefault(fact.object, EntityRequest(fact.object, fact.object_type))
            item.entities = list(names.values())
            if experience:
                continue
            for pf in item.prepared:
                texts.append(pf.statement)
                slots.append(pf)
            for req in item.entities:
                texts.append(req.name)
                slots.append(req)
        if not texts:
            return
        vectors = self.embedder.embed(texts)
        for slot, vector in zip(slots, vectors, strict=True):
            slot.embedding = vector

    # ------------------------------------------------------------------ read
    def _view(self, as_of: datetime | None, known_at: datetime | None) -> TimeView:
        now = now_ms()
        at = require_aware(as_of, "as_of")
        known = require_aware(known_at, "known_at")
        known_ms = to_ms(known) if known is not None else now
        at_ms = to_ms(at) if at is not None else (known_ms if known is not None else now)
        return TimeView(at=at_ms, known=known_ms)

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
        group_id = _group(group_id)
        if not isinstance(query, str):
            raise InputError(f"query must be a string, got {type(query).__name__}")
        if not isinstance(k, int) or isinstance(k, bool) or k < 1 or k > 1000:
            raise InputError(f"k must be an integer between 1 and 1000, got {_show(k)}")
        if not isinstance(hops, int) or isinstance(hops, bool) or not 0 <= hops <= 3:
            raise InputError(f"hops must be 0, 1, 2 or 3, got {_show(hops)}")
        view = self._view(as_of, known_at)
        return self.retriever.search(
            query,
            group_id=group_id,
            view=view,
            k=k,
            hops=hops,
            filters=filters,
            as_of=require_aware(as_of, "as_of"),
            known_at=require_aware(known_at, "known_at"),
        )

    def _entity_ids(self, group_id: str, entity: str) -> list[str]:
        if not isinstance(entity, str) or not entity.strip():
            raise InputError("entity must be a non-empty string")
        _text(entity, "entity")
        found = self._ready().find_entities(group_id, [entity_key(entity)])
        return [e.id for e in found]

    def history(
        self, entity: str, *, predicate: str | None = None, group_id: str = "default"
    ) -> list[FactRecord]:
        """Every fact about ``entity`` (as subject), corrected ones included, oldest first."""
        group_id = _group(group_id)
        ids = self._entity_ids(group_id, entity)
        canon = normalize_predicate(predicate) if predicate is not None else None
        if not ids:
            return []
        facts = self.store.list_facts(
            group_id, entity_ids=ids, predicate=canon, view=None, subject_only=True
        )
        return sorted(facts, key=lambda f: (f.valid_from, f.recorded_at))

    def facts(
        self,
        *,
        group_id: str = "default",
        entity: str | None = None,
        include_history: bool = False,
    ) -> list[FactRecord]:
        """Current facts of a group (or about one entity); with history, every fact."""
        group_id = _group(group_id)
        store = self._ready()
        ids = None if entity is None else self._entity_ids(group_id, entity)
        view = None if include_history else self._view(None, None)
        return store.list_facts(group_id, entity_ids=ids, view=view)

    def get_facts(self, fact_ids: Sequence[str]) -> list[FactRecord]:
        """Facts by id (e.g. the ids in ``IngestResult.superseded``), in the order given."""
        if isinstance(fact_ids, str):
            raise InputError("get_facts takes a list of fact ids")
        return self._ready().fact_records(list(fact_ids), None)

    def episode(self, episode_id: str) -> EpisodeRecord | None:
        found = self._ready().episodes([_text(episode_id, "episode_id")])
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
        group_id = _group(group_id)
        chosen = sum(x is not None for x in (episode_id, entity, True if all else None))
        if chosen != 1:
            raise InputError("forget needs exactly one of episode_id=, entity= or all=True")
        if not isinstance(episodes, bool):
            raise InputError(f"episodes must be True or False, got {_show(episodes)}")
        if episodes and entity is None:
            raise InputError("episodes=True goes with entity= (an entity's own episodes)")
        store = self._ready()
        now = record_ms()
        functional = {p.name: p.cardinality == "one" for p in self.predicates}
        families = self.predicates.families_by_predicate()  # replayed as ingest applied them
        if episode_id is not None:
            _text(episode_id, "episode_id")
            ep = store.get_episode(episode_id)
            if ep is None or ep.group_id != group_id:
                raise InputError(f"no episode {episode_id!r} in group {group_id!r}")
            plan = store.write(
                lambda r: plan_forget_episodes(
                    r, group_id, [episode_id], functional, now, families
                )
            )
        elif entity is not None:
            ids = self._entity_ids(group_id, entity)
            if not ids and not episodes:
                raise InputError(f"no entity named {entity!r} in group {group_id!r}")
            names = [entity] + [
                n for e in store.find_entities_by_ids(group_id, ids) for n in (e.name, *e.aliases)
            ]
            keys = sorted({entity_key(n) for n in names if n.strip()})

            def forget_entity(reader: StoreReader) -> WritePlan:
                plan = plan_forget_entity(
                    reader,
                    group_id,
                    ids,
                    functional,
                    now,
                    speaker_keys=keys,
                    episodes=episodes,
                    families=families,
                )
                if not ids and not plan.delete_episode_ids:  # nothing written: rolled back
                    raise InputError(
                        f"no entity named {entity!r} in group {group_id!r}, and no episode "
                        "it spoke"
                    )
                return plan

            plan = store.write(forget_entity)
        else:
            plan = store.write(lambda r: plan_forget_group(r, group_id, now))
        audit = plan.audit or {}
        return ForgetResult(
            group_id=group_id,
            episodes_removed=int(audit.get("episodes_removed", 0)),
            facts_removed=int(audit.get("facts_removed", 0)),
            entities_removed=int(audit.get("entities_removed", 0)),
            facts_kept=int(audit.get("facts_kept", 0)),
            audit_id=audit.get("id"),
            own_episodes_kept=int(audit.get("own_episodes_kept", 0)),
            own_episode_ids_kept=list(audit.get("own_episode_ids_kept", [])),
        )

    def stats(self, group_id: str | None = None) -> dict[str, Any]:
        """The store's counts (of a group, or of all); with ``llm_usage`` (requests, retries,
        repairs, failed requests and tokens this memory has spent since it was opened) once an
        LLM extractor has been called."""
        if group_id is not None:
            group_id = _group(group_id)
        out = dict(self._ready().stats(group_id))
        if self._llm_usage["llm_calls"]:
            out["llm_usage"] = dict(self._llm_usage)
        return out

    def export(self, *, group_id: str | None = None) -> Iterator[dict[str, Any]]:
        """Every episode, entity, fact, provenance link, SUPERSEDES/CONTRADICTS link, mention."""
        if group_id is not None:
            group_id = _group(group_id)
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
        return store.import_rows(rows)

    # ------------------------------------------------------------------ usage (issue 16)
    # Pins and feedback: graphmem/_usage.py. They write episodes of kind pin / feedback only.
    def pin(
        self, fact_id: str, *, group_id: str | None = None, source: str | None = None
    ) -> PinnedFact:
        """Pin a fact: it appears in every ``recall(...).to_context()`` of its group, first,
        whatever the query; when it is superseded or corrected, recall shows what replaced it
        and says it changed. ``group_id``: None (the fact's own group) or the group it must be
        in. Pinning a pinned fact changes nothing. An unknown fact id is an ``InputError``."""
        from ._usage import usage_for

        group = None if group_id is None else _group(group_id)
        usage = usage_for(self._ready())
        usage.pin(fact_id, group_id=group, source=source)
        fact = self.store.fact_records([fact_id], None)[0]
        return next(p for p in self.pins(group_id=fact.group_id) if p.fact_id == fact.id)

    def unpin(
        self, fact_id: str, *, group_id: str | None = None, source: str | None = None
    ) -> bool:
        """Unpin a fact; False when it was not pinned. The fact itself is unchanged."""
        from ._usage import usage_for

        group = None if group_id is None else _group(group_id)
        return usage_for(self._ready()).pin(fact_id, group_id=group, source=source, pinned=False)

    def pins(self, group_id: str | None = None) -> list[PinnedFact]:
        """The group's pinned facts (default: ``default``), in pin order, as they stand now."""
        from ._usage import usage_for

        group = _group("default" if group_id is None else group_id)
        return usage_for(self._ready()).pinned_facts(group, None)[0]

    def feedback(
        self,
        item_id: str,
        useful: bool,
        *,
        group_id: str | None = None,
        source: str | None = None,
        note: str | None = None,
        at: datetime | None = None,
    ) -> str:
        """Say whether a recalled fact or episode (by id) was useful. Later recalls rank it
        up or down (``RetrievalConfig.feedback_weight``) and a useful one counts as used for
        the forgetting curve (``decay_half_life``); nothing about what is true changes. ``at``:
        when it was used (default now). Returns the id of the feedback episode (forget it to
        take the feedback back)."""
        from ._usage import usage_for

        group = None if group_id is None else _group(group_id)
        return usage_for(self._ready()).feedback(
            item_id, useful, group_id=group, source=source, note=note, at=at
        )

    def _pin_stated(
        self, result: IngestResult, group_id: str, fact: ExtractedFact, source: str | None
    ) -> None:
        """Pin the fact that ``add_fact``'s episode states (new or already known)."""
        ids = self._entity_ids(group_id, fact.subject)
        stated = [
            f
            for f in self.store.list_facts(
                group_id, entity_ids=ids, predicate=fact.predicate, view=None, subject_only=True
            )
            if result.episode_id in f.episode_ids
        ]
        if not stated:
            raise InputError(f"add_fact stored no fact to pin ({result.status})")
        self.pin(max(stated, key=lambda f: f.recorded_at).id, group_id=group_id, source=source)


_USAGE_FIELDS = frozenset(
    {
        "llm_calls",
        "llm_retries",
        "llm_repairs",
        "llm_failed_calls",
        "prompt_tokens",
        "completion_tokens",
    }
)


def _warning_text(warnings: Sequence[str], limit: int = 2000) -> str:
    text = f"{len(warnings)} warning(s): " + " | ".join(warnings)
    return text if len(text) <= limit else text[: limit - 1] + "…"


@dataclass
class _Pending:
    """One episode on its way through extraction, embedding and the write."""

    index: int
    row: EpisodeRow
    extractor: Extractor
    extraction: Extraction | None = None
    prepared: list[PreparedFact] = field(default_factory=list)
    entities: list[EntityRequest] = field(default_factory=list)
    error: str | None = None
    embedding: Vector | None = None  # the episode's own (turn-level dense retrieval)
    usage: dict[str, int] = field(default_factory=dict)  # of a failed LLM extraction
    warnings: list[str] = field(default_factory=list)  # what the extraction dropped


class _Fixed:
    """An 'extractor' that returns a prepared extraction (``add_fact``)."""

    name = "direct"
    needs_context = False

    def __init__(self, extraction: Extraction) -> None:
        self.extraction = extraction

    def extract(self, episode: EpisodeRecord, context: ExtractionContext) -> Extraction:
        return self.extraction


def _fact_statement(subject: str, predicate: str, target: str, negated: bool) -> str:
    if negated:
        words = predicate.replace(".", " ").replace("_", " ")
        return f"{subject} no longer {words} {target}".strip() + "."
    return default_statement(subject, predicate, target)
