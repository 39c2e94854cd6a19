"""Ingest, the run: raw episodes first, then extraction, one embedding call, the writes.

Per chunk of episodes: the raw episodes are stored in one transaction (an extractor failure
never loses input), each is extracted (model-backed extractors on threads), every text of the
chunk is embedded in one call, and each episode's reconciled ``WritePlan`` (``_ingest``) is
applied inside one write transaction for the chunk.
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
from collections.abc import Callable, MutableMapping, Sequence
from dataclasses import dataclass, field

from .._config import Settings
from .._errors import GraphMemError, InputError, StoreError
from .._ids import entity_key
from .._models import USAGE_FIELDS, EpisodeRecord, Extraction, FactRecord, IngestResult
from .._predicates import PredicateRegistry
from .._time import implausible_time, to_ms
from ..embeddings.factory import Embedder
from ..experience.entry import experience_entry
from ..experience.index import parse_experience, text_view
from ..extract import ExtractionContext, Extractor
from ..reconcile.turn_links import link_turn
from ..retrieve.reads import time_view
from ..retrieve.retriever import RetrievalConfig, Retriever
from ..store import GraphStore
from ..store._base import EpisodeRow, StoreReader, Vector, WritePlan, episode_record
from ..usage.memory import apply_usage
from .plan import PreparedFact, build_plan, prepare_facts
from .resolve import EntityRequest

__all__ = ["EMBED_CHARS", "USAGE_FIELDS", "FixedExtraction", "Ingestor", "ResolveExtractor"]

log = logging.getLogger("graphmem")
# Characters of an episode's content that its embedding reads (models read fewer tokens anyway).
EMBED_CHARS = 2000
_ROLE_SPEAKERS = {"user": None, "human": None, "assistant": "assistant", "ai": "assistant"}
ResolveExtractor = Callable[[str | Extractor | None, str], Extractor]


class FixedExtraction:
    """An 'extractor' that returns a prepared extraction (``add_fact``)."""

    name = "direct"
    needs_context = False

    def __init__(self, extraction: Extraction) -> None:
        self.extraction = extraction

    def extract(self, episode: EpisodeRecord, context: ExtractionContext) -> Extraction:
        return self.extraction


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


@dataclass
class Ingestor:
    """What one ingest call needs from its memory, all of it given (no back reference).

    ``extractor`` resolves an extractor choice for an episode kind (cached by the memory);
    ``context_config`` is the memory's retrieval config, read when a model-backed extractor
    needs context; ``clock`` gives record time; ``usage`` is the memory's running LLM usage,
    added to in place.
    """

    store: GraphStore
    settings: Settings
    predicates: PredicateRegistry
    embedder: Embedder
    extractor: ResolveExtractor
    context_config: Callable[[], RetrievalConfig]
    clock: Callable[[], int]
    usage: MutableMapping[str, int]

    def ingest(
        self,
        rows: Sequence[tuple[EpisodeRow, str | Extractor | None]],
        *,
        existing: bool = False,
    ) -> list[IngestResult]:
        """Raw episodes first (one transaction per chunk), then extraction, one batched
        embedding call, and the reconciled writes of the chunk in one transaction.

        ``existing``: the episodes are stored already (``reprocess``): extract them again."""
        results: list[IngestResult] = []
        position = 0
        while position < len(rows):
            first = self.extractor(rows[position][1], rows[position][0].kind)
            settings = self.settings
            size = settings.llm_concurrency if first.needs_context else settings.bulk_chunk
            chunk = rows[position : position + max(size, 1)]
            position += len(chunk)
            results.extend(self._chunk(chunk, existing))
        return results

    def _chunk(
        self, chunk: Sequence[tuple[EpisodeRow, str | Extractor | None]], existing: bool
    ) -> list[IngestResult]:
        store = self.store
        extractors = [self.extractor(choice, row.kind) for row, choice in chunk]
        for row, _ in chunk:
            if row.kind == "experience" and row.experience is None:
                # Its index entry is written with it (recall never re-reads the record).
                meta = row.metadata.get("meta")
                row.experience = experience_entry(
                    parse_experience(row.content), meta if isinstance(meta, dict) else {}
                )
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
        now = self.clock()
        outcomes: dict[int, IngestResult] = {}
        try:
            store.write_many([self._work(p, now, outcomes) for p in ready])
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
            for name in USAGE_FIELDS:
                self.usage[name] += int(getattr(result, name))
        return done

    @staticmethod
    def _work(
        item: _Pending, now: int, outcomes: dict[int, IngestResult]
    ) -> Callable[[StoreReader], WritePlan]:
        """The unit of work of one episode, run (and rerun on retry) inside the write."""

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
                said=item.row.reference_time,
                episode_hash=item.row.content_hash,
            )
            plan.episode_embedding = item.embedding
            link_turn(reader, plan, item.row, now)
            if item.warnings and plan.episode_status is not None:
                # Recorded on the episode (its error field, status still extracted): what
                # the extraction dropped without failing.
                status, name, _ = plan.episode_status
                plan.episode_status = (status, name, _warning_text(item.warnings))
            outcomes[item.index] = result
            return plan

        return work

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
            strict = isinstance(chosen, FixedExtraction)
            item.prepared, skipped = prepare_facts(
                item.extraction.facts,
                reference_time=item.row.reference_time,
                predicates=self.predicates,
                strict=strict,
            )
        except GraphMemError as exc:
            self.store.set_episode_status(item.row.id, "failed", chosen.name, str(exc))
            if isinstance(exc, InputError) and isinstance(chosen, FixedExtraction):
                raise
            log.warning("graphmem: extraction failed for %s: %s", item.row.id, exc)
            item.error = str(exc)
            usage = getattr(exc, "usage", None)  # LLM calls a failed episode still cost
            if isinstance(usage, dict):
                item.usage = {k: int(v) for k, v in usage.items() if k in USAGE_FIELDS}
            return
        for reason in skipped:
            log.info("graphmem: skipped a fact of %s: %s", item.row.id, reason)
        item.warnings = [*item.extraction.warnings, *(f"fact left out: {r}" for r in skipped)]
        odd_time = implausible_time(item.row.reference_time)
        if odd_time is not None:
            item.warnings.append(odd_time)
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
            self._add_known(context, episode, str(speaker))
        return context

    def _add_known(self, context: ExtractionContext, episode: EpisodeRecord, speaker: str) -> None:
        """The previous episodes of the source and the facts memory holds that the episode
        may touch, for a model-backed extractor to reconcile against."""
        store, settings = self.store, self.settings
        previous = store.recent_episodes(
            episode.group_id,
            episode.source,
            to_ms(episode.reference_time),
            settings.context_episodes + 1,
        )
        # Pins and feedback (kinds ``pin`` / ``feedback``) are notes about memory, not what was
        # said: never context for an extraction.
        context.previous = [
            episode_record(p)
            for p in previous
            if p.id != episode.id and p.kind not in ("pin", "feedback")
        ][-settings.context_episodes :]
        # What memory holds about every entity the episode names, not only the facts its
        # words support ("Alice moved to Berlin" must see "Alice lives in Paris").
        context_retriever = Retriever(
            store,
            self.embedder,
            dataclasses.replace(self.context_config(), named_fact_limit=None),
            rescore=apply_usage,
        )
        found = context_retriever.search(
            episode.content[:2000],
            group_id=episode.group_id,
            view=time_view(None, None),
            k=settings.context_facts,
            hops=1,
        )
        facts = [
            FactRecord(**h.model_dump(include=set(FactRecord.model_fields))) for h in found.facts
        ]
        # What memory holds about the speaker, even when the text never names them
        # ("I moved to Porto" must be able to say which lives_in fact it replaces).
        speaker_ids = [e.id for e in store.find_entities(episode.group_id, [entity_key(speaker)])]
        if speaker_ids:
            about = store.list_facts(
                episode.group_id,
                entity_ids=speaker_ids,
                view=time_view(None, None),
                subject_only=True,
            )
            seen = {f.id for f in facts}
            facts = [f for f in about[-settings.context_facts :] if f.id not in seen] + facts
        context.facts = facts[: 2 * settings.context_facts]

    def _embed_all(self, items: Sequence[_Pending]) -> None:
        """One embedding call for every episode, statement and entity name of a chunk."""
        texts: list[str] = []
        slots: list[PreparedFact | EntityRequest | _Pending] = []
        for item in items:
            experience = item.row.kind == "experience"
            if experience:
                # An attempt is found whole: its words are embedded once, on the episode;
                # its facts (field = value) and its own name carry no meaning to embed.
                texts.append(text_view(parse_experience(item.row.content))[:EMBED_CHARS])
                slots.append(item)
            elif not isinstance(item.extractor, FixedExtraction):
                texts.append(item.row.content[:EMBED_CHARS])  # add_fact's is its statement
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


def _warning_text(warnings: Sequence[str], limit: int = 2000) -> str:
    text = f"{len(warnings)} warning(s): " + " | ".join(warnings)
    return text if len(text) <= limit else text[: limit - 1] + "…"
