"""The retriever: query → seeds → time-filtered expansion → fusion → ``RecallResult``. No LLM.

Like neo4j-graphrag's retrievers, ``search()`` is ``raw_search()`` (scored candidate ids) followed
by ``format()`` (records, provenance, history, conflicts); subclass and override either.

Beside this module: ``_retrieve_config`` (the knobs, and what the stages hand on),
``_retrieve_query`` (names, periods and words read in the query) and ``_retrieve_format`` (the
records of ``format``).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

from .._filters import Condition, matches, parse_filters
from .._ids import entity_key
from .._models import RecallResult
from .._text import STOP_WORDS as _STOP
from .._text import fts_words
from ..embeddings.factory import Embedder
from ..store._base import GraphStore, TimeView
from .config import RawSearch, Rescore, RetrievalConfig, Stub
from .context import neighbour_lift, pair_with_sources
from .format import format_result
from .fusion import fuse_episodes
from .passages import asks_about_self, asks_for_a_summary, best_passage_scores
from .query import _WORD, _matches, _name_keys, _periods, _stem, _without, _words

__all__ = ["RawSearch", "RetrievalConfig", "Retriever", "Stub"]

_Hits = list[tuple[str, float]]
_VectorSeeds = tuple[_Hits, _Hits, _Hits]  # facts, entities, episodes
_POOL: ThreadPoolExecutor | None = None


def _pool() -> ThreadPoolExecutor:
    global _POOL
    if _POOL is None:
        _POOL = ThreadPoolExecutor(max_workers=2, thread_name_prefix="graphmem-recall")
    return _POOL


def _rrf(ranked: list[tuple[str, float]], k: float) -> dict[str, float]:
    return {item: 1.0 / (k + rank) for rank, (item, _score) in enumerate(ranked, start=1)}



class Retriever:
    def __init__(
        self,
        store: GraphStore,
        embedder: Embedder,
        config: RetrievalConfig | None = None,
        *,
        rescore: Rescore | None = None,
    ) -> None:
        self.store = store
        self.embedder = embedder
        self.config = config or RetrievalConfig()
        # Usage memory (pins, feedback, the forgetting curve) sits above retrieval: the facade
        # hands its rescoring step in, so this module never imports it.
        self.rescore = rescore

    # ------------------------------------------------------------------ public
    def search(
        self,
        query: str,
        *,
        group_id: str,
        view: TimeView,
        k: int = 10,
        hops: int = 2,
        filters: Mapping[str, Any] | None = None,
        as_of: Any = None,
        known_at: Any = None,
    ) -> RecallResult:
        raw = self.raw_search(query, group_id=group_id, view=view, k=k, hops=hops, filters=filters)
        finish = (
            self.rescore(self.store, self.config, raw, group_id=group_id, view=view)
            if self.rescore is not None
            else None
        )
        result = self.format(
            raw, query=query, group_id=group_id, view=view, k=k, as_of=as_of, known_at=known_at
        )
        return finish(result) if finish is not None else result

    # ------------------------------------------------------------------ stages
    def raw_search(
        self,
        query: str,
        *,
        group_id: str,
        view: TimeView,
        k: int,
        hops: int,
        filters: Mapping[str, Any] | None,
    ) -> RawSearch:
        cfg = self.config
        conditions = parse_filters(filters)
        n = cfg.seed_n * (8 if conditions else 1)
        store = self.store
        fact_lists: list[dict[str, float]] = []
        entity_lists: list[dict[str, float]] = []
        raw = RawSearch()

        vector_job: Future[_VectorSeeds] | None = None
        if cfg.use_vectors and query.strip():
            # Embedding and the three vector top-k run beside the full-text queries.
            vector_job = _pool().submit(
                self._vector_seeds, query, group_id, n, max(cfg.episode_n, 3 * k)
            )

        # Names in the query are seeds, not keywords: an entity it names seeds the expansion and
        # a speaker it names marks that speaker's episodes. Their words are left out of the
        # full-text queries (when other words remain), where they would mostly match noise
        # ("Hi Caroline!") and where they cannot tell which of a person's facts is asked about.
        keys = _name_keys(query) if cfg.use_names else []
        named = store.find_entities(group_id, keys) if keys else []
        speaker_keys: set[str] = set()
        if keys:
            speakers_of = getattr(store, "speakers", None)
            group_speakers = speakers_of(group_id) if speakers_of is not None else {}
            speaker_keys = {key for key in keys if key in group_speakers}
        name_words = {w.lower() for e in named for w in _words(e.name)}
        speaker_words = {w for key in speaker_keys for w in _WORD.findall(key)}
        content_query = _without(query, name_words | speaker_words)
        episode_query = _without(query, speaker_words)
        self_keys = self._self_speakers(query, group_id)

        fact_support: set[str] = set()
        if cfg.use_fulltext:
            text_hits = store.text_facts(group_id, content_query or query, n)
            if content_query:
                text_support = [fid for fid, _ in text_hits]
                if cfg.require_fact_support and cfg.min_fact_coverage > 0 and text_support:
                    text_support = self._covering(text_support, content_query, view)
                fact_support.update(text_support)
            fact_lists.append(_rrf(text_hits, cfg.rrf_k))
            entity_lists.append(
                _rrf(store.text_entities(group_id, query, cfg.seed_n // 2), cfg.rrf_k)
            )
            episodes = store.text_episodes(
                group_id, episode_query or query, max(cfg.episode_n, 3 * k)
            )
            best = max((s for _, s in episodes), default=0.0)
            if best > 0:
                raw.episode_scores = {eid: s / best for eid, s in episodes if s > 0}
                raw.episode_scores = self._length_fair(raw.episode_scores, episode_query or query)
        if vector_job is not None:
            facts_by_vector, entities_by_vector, episodes_by_vector = vector_job.result()
            raw.episode_scores = self._fuse_episodes(raw.episode_scores, episodes_by_vector)
            fact_lists.append(_rrf(facts_by_vector, cfg.rrf_k))
            entity_lists.append(_rrf(entities_by_vector, cfg.rrf_k))
            fact_support.update(
                fid for fid, sim in facts_by_vector if sim >= cfg.min_fact_similarity
            )
        raw.episode_scores = {e: cfg.episode_weight * s for e, s in raw.episode_scores.items()}
        if named:
            # An entity named in the query is the strongest seed there is.
            entity_lists.append({e.id: 2.0 / (cfg.rrf_k + 1) for e in named})

        fused: dict[str, float] = defaultdict(float)
        for scores in fact_lists:
            for fid, s in scores.items():
                fused[fid] += s
        entity_scores: dict[str, float] = defaultdict(float)
        for scores in entity_lists:
            for eid, s in scores.items():
                entity_scores[eid] += s

        passing: set[str] | None = None
        paths = sorted({c.path for c in conditions})
        if conditions:
            # Subjects that pass seed the expansion: the newest expand_limit of them.
            seeds = self._passing_seeds(group_id, conditions, paths, view)
            passing = set(seeds)
            for sid in seeds:
                entity_scores[sid] = max(entity_scores.get(sid, 0.0), 0.5 / (cfg.rrf_k + 1))

        # Facts seen first, valid in the view (the time filter happens in the store).
        stubs = {r[0]: Stub(*r) for r in store.fact_stubs(list(fused), view)}
        # Subjects and objects of the best facts seed the expansion too.
        best_facts = sorted(stubs.values(), key=lambda r: -fused[r.id])[: max(k, 10)]
        for stub in best_facts:
            for eid in (stub.subject_id, stub.object_id or ""):
                if eid:
                    entity_scores[eid] = max(entity_scores.get(eid, 0.0), 0.5 * fused[stub.id])

        graph: dict[str, float] = defaultdict(float)
        named_ids = {e.id for e in named}
        about_named: set[str] = set()
        if cfg.use_expansion and hops > 0 and entity_scores:
            seeds = sorted(entity_scores, key=lambda e: -entity_scores[e])[:50]
            expanded = store.expand(group_id, seeds, hops, view, cfg.expand_limit)
            for fid, hop, via in expanded:
                graph[fid] += entity_scores.get(via, 0.0) * (cfg.hop_decay ** (hop - 1))
            missing = [fid for fid, _, _ in expanded if fid not in stubs]
            for row in store.fact_stubs(missing, view):
                stubs[row[0]] = Stub(*row)
        if named_ids:
            about_named = {s.id for s in stubs.values() if {s.subject_id, s.object_id} & named_ids}

        if passing is not None:
            # Whether the other subjects pass: their values only, not the group's.
            unknown = sorted({r.subject_id for r in stubs.values()} - passing)
            values = store.facts_with_values(group_id, paths, view, unknown) if unknown else {}
            passing.update(sid for sid, vals in values.items() if matches(vals, conditions))
            stubs = {fid: r for fid, r in stubs.items() if r.subject_id in passing}
        elif cfg.require_fact_support:
            if not content_query or cfg.named_fact_limit is None:
                fact_support |= about_named  # "Alice": Alice's facts are what is asked for
            elif cfg.named_fact_limit > 0:
                # The latest first: what is true of them now is the likeliest to matter.
                extra = sorted(
                    (f for f in about_named - fact_support if f in stubs),
                    key=lambda f: (-stubs[f].valid_from, -fused.get(f, 0.0), f),
                )
                fact_support.update(extra[: cfg.named_fact_limit])
            stubs = {fid: r for fid, r in stubs.items() if fid in fact_support}

        lo = min((r.valid_from for r in stubs.values()), default=0)
        hi = max((r.valid_from for r in stubs.values()), default=0)
        span = (hi - lo) or 1
        scale = 1.0 / (cfg.rrf_k + 1)
        for fid, stub in stubs.items():
            recency = (stub.valid_from - lo) / span
            score = (
                fused.get(fid, 0.0)
                + cfg.graph_weight * graph.get(fid, 0.0)
                + scale * (cfg.recency_weight * recency + cfg.confidence_weight * stub.confidence)
            )
            raw.fact_scores[fid] = score
        raw.stubs = stubs
        raw.entity_scores = dict(entity_scores)
        periods = _periods(query) if cfg.time_weight > 0 else []
        if raw.episode_scores and (cfg.use_context or speaker_keys or self_keys or periods):
            self._episode_context(raw, speaker_keys, periods, self_keys)
        if passing is None and cfg.record_fact_n > 0 and raw.episode_scores:
            self._facts_of_best_records(raw, view, scale)
        if passing is not None:
            self._keep_passing(raw, passing, group_id, conditions, paths, view)
        return raw

    def _keep_passing(
        self,
        raw: RawSearch,
        passing: set[str],
        group_id: str,
        conditions: list[Condition],
        paths: list[str],
        view: TimeView,
    ) -> None:
        """Filters hold for every returned item: entities that pass, and episodes that mention
        an entity that passes (a JSON record its subject; a turn whoever it names)."""
        mentions = self.store.episode_mentions(list(raw.episode_scores))
        unknown = sorted({eid for _, eid in mentions} - passing)
        values = self.store.facts_with_values(group_id, paths, view, unknown) if unknown else {}
        passing.update(sid for sid, vals in values.items() if matches(vals, conditions))
        kept = {ep for ep, eid in mentions if eid in passing}
        raw.episode_scores = {e: s for e, s in raw.episode_scores.items() if e in kept}
        raw.entity_scores = {e: s for e, s in raw.entity_scores.items() if e in passing}

    def _facts_of_best_records(self, raw: RawSearch, view: TimeView, scale: float) -> None:
        """The facts of the best-ranked JSON records are supported by them: a question whose
        words are spread over one record's fields (a structured log: task, object, outcome)
        finds that record's facts, in the order of their records. Only records: a turn's facts
        also come from other turns that restated them, and would bring those along (LoCoMo
        NDCG@10 0.563 -> 0.554 when turns were included)."""
        scores = raw.episode_scores
        best = max(scores.values())
        top = sorted(scores, key=lambda e: (-scores[e], e))[: self.config.record_fact_n]
        top = [e for e in top if scores[e] >= 0.5 * best]
        pairs = self.store.record_facts(top)
        missing = [fid for _, fid in pairs if fid not in raw.stubs]
        for row in self.store.fact_stubs(missing, view):
            raw.stubs[row[0]] = Stub(*row)
        for eid, fid in pairs:
            if fid in raw.stubs:
                raw.fact_scores[fid] = raw.fact_scores.get(fid, 0.0) + scale * scores[eid] / best

    def _passing_seeds(
        self, group_id: str, conditions: list[Condition], paths: list[str], view: TimeView
    ) -> list[str]:
        """Up to expand_limit subjects that pass the filter, newest first: the store narrows
        them down, their values decide (a store may return a few that fail; then ask for more)."""
        want = self.config.expand_limit
        limit = want
        passes: dict[str, bool] = {}
        while limit > 0:
            candidates = self.store.filter_candidates(group_id, conditions, view, limit)
            new = [s for s in candidates if s not in passes]
            values = self.store.facts_with_values(group_id, paths, view, new) if new else {}
            passes.update((s, s in values and matches(values[s], conditions)) for s in new)
            seeds = [s for s in candidates if passes[s]]
            if len(seeds) >= want or len(candidates) < limit:
                return seeds[:want]
            limit *= 4
        return []

    def _covering(self, fact_ids: list[str], content_query: str, view: TimeView) -> list[str]:
        """The facts whose statement holds at least min_fact_coverage of the query's words (a
        one-word match such as "likes" is not support for "what type of beer does he not
        like?")."""
        wanted = {_stem(w) for w in fts_words(content_query) if w not in _STOP}
        if not wanted:
            return fact_ids
        kept: list[str] = []
        for record in self.store.fact_records(fact_ids, view):
            words = {_stem(w) for w in fts_words(record.statement)}
            share = sum(1 for w in wanted if _matches(w, words)) / len(wanted)
            if share >= self.config.min_fact_coverage:
                kept.append(record.id)
        return kept

    def _episode_context(
        self,
        raw: RawSearch,
        speaker_keys: set[str],
        periods: list[tuple[int, int]],
        self_keys: frozenset[str] = frozenset(),
    ) -> None:
        """Neighbouring turns as context, and the speaker and time cues, on the full-text
        episode scores."""
        cfg = self.config
        context_of = getattr(self.store, "episode_context", None)
        if context_of is None:
            return
        window = cfg.context_window if cfg.use_context and cfg.use_expansion else 0
        base = raw.episode_scores
        # Neighbours of the best context_n hits only: a weak hit lifts its neighbours little.
        near_best = sorted(base, key=lambda e: -base[e])[: cfg.context_n]
        speakers, neighbours = context_of(near_best, window)
        if speaker_keys or self_keys or periods:
            rest = [e for e in base if e not in speakers]
            if rest:
                speakers.update(context_of(rest, 0)[0])
        lift: dict[str, float] = {}
        source: dict[str, str] = {}
        if window > 0 and cfg.context_weight > 0:
            # Each episode gets context_weight x its best neighbour's score (a hit's neighbours
            # come in as candidates that way too).
            decay = cfg.chat_context_decay if self._asker_speaks(speakers) else cfg.context_decay
            lift, source = neighbour_lift(base, neighbours, cfg.context_weight, decay)
        scores = {e: base.get(e, 0.0) + lift.get(e, 0.0) for e in {*base, *lift}}
        if speaker_keys or self_keys:
            # A speaker the query names, else one that stands for the asker of a question in
            # the first person: their turns weigh (1 + that cue's weight).
            weight_of: dict[str, float] = {}
            for who in {info[0] for info in speakers.values() if info[0]}:
                key = entity_key(who)
                if key in speaker_keys:
                    weight_of[who] = cfg.speaker_weight
                elif key in self_keys:
                    weight_of[who] = cfg.self_speaker_weight
            for eid in scores:
                who = speakers.get(eid, (None, 0))[0]
                if who in weight_of and weight_of[who] > 0:
                    scores[eid] *= 1.0 + weight_of[who]
        if periods and cfg.time_weight > 0:
            for eid in scores:
                when = speakers.get(eid, (None, None))[1]
                if when is not None and any(lo <= when < hi for lo, hi in periods):
                    scores[eid] *= 1.0 + cfg.time_weight
        if cfg.context_pairs and source:
            # A turn ranked by its neighbour's match brings that neighbour in after it.
            scores = pair_with_sources(scores, base, lift, source)
        raw.episode_scores = scores

    def _length_fair(self, text: dict[str, float], query: str) -> dict[str, float]:
        """Whole-episode text scores (best = 1) mixed with the best-passage scores of the same
        candidates (best = 1): (1 - passage_weight) x whole + passage_weight x passage."""
        weight = self.config.passage_weight
        if weight <= 0 or not text:
            return text
        # The best passage_n candidates only: the rest rank too low for a passage to matter.
        top = sorted(text, key=lambda e: (-text[e], e))[: self.config.passage_n]
        contents = {ep.id: ep.content for ep in self.store.episodes(top)}
        by_passage = best_passage_scores(query, contents, self.config.passage_words)
        best = max(by_passage.values(), default=0.0)
        if best <= 0:
            return text
        rescored = {
            eid: (1.0 - weight) * text[eid] + weight * by_passage.get(eid, 0.0) / best
            for eid in top
        }
        return text | rescored

    def _asker_speaks(self, speakers: Mapping[str, tuple[str | None, int]]) -> bool:
        """Whether a speaker that stands for the asker (``self_speakers``: a chat transcript's
        "user") speaks among these turns: a chat with an assistant, not between people."""
        roles = self._self_roles()
        return any(entity_key(who) in roles for who in {w for w, _ in speakers.values() if w})

    def _self_roles(self) -> frozenset[str]:
        """The entity keys of ``self_speakers``."""
        return frozenset(entity_key(s) for s in self.config.self_speakers)

    def _self_speakers(self, query: str, group_id: str) -> frozenset[str]:
        """The group's speakers that stand for the asker, when the query is in the first
        person (their turns are the asker's own statements)."""
        wanted = self.config.self_speakers
        if not wanted or self.config.self_speaker_weight <= 0 or not asks_about_self(query):
            return frozenset()
        if asks_for_a_summary(query) and not self.config.self_cue_on_summaries:
            return frozenset()
        speakers_of = getattr(self.store, "speakers", None)
        present = speakers_of(group_id) if speakers_of is not None else {}
        return frozenset(key for key in self._self_roles() if key in present)

    def _vector_seeds(self, query: str, group_id: str, n: int, episode_n: int) -> _VectorSeeds:
        qvec = self.embedder.embed([query])[0]
        facts = self.store.vector_facts(group_id, qvec, n)
        entities = self.store.vector_entities(group_id, qvec, self.config.seed_n // 2)
        # Weight 0 (the hashed n-grams' default): the episodes' vectors would not count.
        episodes: _Hits = []
        if self._dense_weight() > 0:
            episodes = self.store.vector_episodes(group_id, qvec, episode_n)
        return facts, entities, episodes

    def _dense_weight(self) -> float:
        if self.config.dense_weight is not None:
            return self.config.dense_weight
        return float(getattr(self.embedder, "recall_weight", 0.3))

    def _fusion(self) -> str:
        if self.config.episode_fusion is not None:
            return self.config.episode_fusion
        return str(getattr(self.embedder, "recall_fusion", "convex"))

    def _fuse_episodes(
        self, text: dict[str, float], dense: list[tuple[str, float]]
    ) -> dict[str, float]:
        """Full-text scores (best = 1) and vector similarities made into one list by the
        episode fusion rule (``fusion``)."""
        return fuse_episodes(
            self._fusion(), text, dense, weight=self._dense_weight(), rrf_k=self.config.rrf_k
        )

    def format(
        self,
        raw: RawSearch,
        *,
        query: str,
        group_id: str,
        view: TimeView,
        k: int,
        as_of: Any = None,
        known_at: Any = None,
    ) -> RecallResult:
        return format_result(
            self.store, self.config, raw, query=query, group_id=group_id, view=view, k=k,
            as_of=as_of, known_at=known_at,
        )
