"""The retriever's knobs (``RetrievalConfig``) and what ``raw_search`` hands to ``format``."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from .._models import RecallResult
    from ..store._base import GraphStore, TimeView

__all__ = ["RawSearch", "Rescore", "RetrievalConfig", "Stub"]


@dataclass
class RetrievalConfig:
    """Knobs of the fusion; the ablations in bench/ switch parts off."""

    use_vectors: bool = True
    use_fulltext: bool = True
    use_names: bool = True
    use_expansion: bool = True
    # Episodes next to a hit in the same conversation (arrival order) as context; part of the
    # graph expansion, so use_expansion=False switches it off too.
    use_context: bool = True
    seed_n: int = 50
    expand_limit: int = 300
    rrf_k: float = 60.0
    graph_weight: float = 0.6
    hop_decay: float = 0.5
    recency_weight: float = 0.15
    confidence_weight: float = 0.1
    episode_weight: float = 1.0
    # Episode ranking: full-text score (scaled to the best hit = 1), plus context_weight x the
    # best neighbour's score, x (1 + speaker_weight) for episodes spoken by someone the query
    # names, plus fact_episode_weight x the score (scaled) of the best returned fact they support.
    context_weight: float = 0.6
    context_window: int = 2
    context_n: int = 50
    # The share of the lift a turn two places away gets (x context_decay ** (distance - 1)):
    # between people (LoCoMo) a speaker's turn two places on continues the same story and gets
    # it whole (1.0: 0.5 cost LoCoMo R@10 0.004); in a chat with an assistant (one of
    # self_speakers speaks among the turns around the hits) the turn two places from a reply is
    # the assistant's reply to another request, and gets half (chat_context_decay, 0.5: BEAM 100K
    # R@10 +0.019, NDCG@10 +0.013, 22 questions up and 7 down; LongMemEval dev in
    # bench/README.md).
    context_decay: float = 1.0
    chat_context_decay: float = 0.5
    # A turn ranked more by its neighbour's score than by its own (a short user turn beside the
    # reply that matched, under the first-person cue) brings that neighbour in just below it:
    # the exchange comes back whole (retrieve/context.py; BEAM 100K summarization R@10
    # 0.091 -> 0.106, LoCoMo and the LongMemEval sample unchanged, bench/README.md 1d). Off by
    # default: with it, a brought-in neighbour pushed a newer value out of the first ten (the
    # updated-first rate 0.821 -> 0.795); summary requests without the first-person cue
    # (self_cue_on_summaries) bring summarization to BM25's level without it.
    context_pairs: bool = False
    speaker_weight: float = 0.5
    # x (1 + time_weight) for episodes whose reference time falls in a period the query names
    # ("in August 2023", "on 9 May, 2023", "in 2022"; a day means the week after it too).
    time_weight: float = 1.0
    fact_episode_weight: float = 0.5
    episode_n: int = 100
    # Currentness (retrieve/currentness.py): the UPDATES links between the first
    # currentness_top episodes (and the turns they link to) order them: the newer value first
    # for a question about the present, both sides for one about change (0: off).
    currentness_top: int = 10
    # And the first currentness_pairs episodes are compared pairwise at recall (nothing
    # stored: every pair, read more finely than at ingest; 0: off).
    currentness_pairs: int = 5
    # Length-fair episode scores (retrieve/passages.py): each of the passage_n best full-text
    # candidates' whole score (best = 1) is mixed with its best passage's BM25 score over the
    # candidates' passages of about passage_words words (best = 1): (1 - passage_weight) x
    # whole + passage_weight x passage. 0: whole episodes only. 0.3: BEAM 100K gains at 0.3
    # and 0.7 alike, while 0.7 cost the LongMemEval dev sample 0.016 R@5 (0.3: none).
    passage_weight: float = 0.3
    passage_words: int = 60
    passage_n: int = 30
    # The speakers whose turns are the asker's own (a chat transcript's "user"): a question in
    # the first person ("my", "I") weighs their turns x (1 + self_speaker_weight).
    self_speakers: tuple[str, ...] = ("user",)
    self_speaker_weight: float = 0.5
    # A request for a summary ("give me a summary of how my project has progressed") asks about a
    # topic across the conversation, whoever said it: it gets no first-person cue unless this
    # is True (retrieve/passages.py; in a chat with an assistant most of what was said about a
    # topic is the assistant's: 65 % of BEAM 100K's summarization evidence).
    self_cue_on_summaries: bool = False
    # Dense episode retrieval: each episode's text score (scaled to the best = 1) and its
    # vector similarity (min-max scaled over the episode_n nearest) are mixed as
    # (1 - dense_weight) x text + dense_weight x dense (a convex combination, which fuses
    # better than reciprocal ranks when both lists are scored). None: the embedder's own
    # default: ``recall_weight`` where the embedder has one (the hashed n-grams say 0: they
    # are lexical like BM25; all-MiniLM-L6-v2, ONNX or torch, and WordLlama say 0.5: the two
    # signals alike; bench/README.md "Embedders" has 0.3/0.5/0.7, rrf and zscore on three dev
    # samples), else 0.3.
    dense_weight: float | None = None
    # How the two episode lists are fused (``retrieve/fusion.py``): "convex" (the mix above),
    # "rrf" (reciprocal ranks) or "zscore" (scores standardised per list and summed); None: the
    # embedder's ``recall_fusion``, else "convex". A dense weight of 0 leaves the vectors out
    # whatever the rule.
    episode_fusion: str | None = None
    # The facts of the best record_fact_n JSON-record episodes (those scoring at least half the
    # best) count as supported, scored by their record's rank (0: off).
    record_fact_n: int = 3
    # Fact support (on by default): return a fact only with direct support from the query — a
    # full-text hit on at least min_fact_coverage of the words that are not names of entities or
    # speakers the query names, a vector similarity of at least min_fact_similarity, a named
    # entity's fact when the query is names only, or filters — plus up to named_fact_limit of the
    # latest facts about an entity the query names (None: all of them, up to k). Without support
    # a talkative speaker's many unrelated facts took the first ranks (LoCoMo R@10 0.067).
    # named_fact_limit=2 was the default until both dev sets showed those two facts crowding out
    # the evidence (NDCG@10 LoCoMo 0.362 vs 0.563, LongMemEval dev 0.890 vs 0.922 with 0).
    # require_fact_support=False returns the best k facts by fused score, whatever supports them.
    require_fact_support: bool = True
    min_fact_similarity: float = 0.75
    min_fact_coverage: float = 0.5
    named_fact_limit: int | None = 0
    # -- usage (graphmem/usage/memory.py): feedback_weight scales the usefulness multiplier
    # 1 + w(2p - 1) from GraphMemory.feedback; decay_half_life (days; None: off) fades what was
    # not told or found useful lately, down to decay_floor; min_relative_score (None: off)
    # drops facts and episodes below that share of the best; pinned_limit caps the pinned
    # facts every recall carries.
    feedback_weight: float = 0.5
    decay_half_life: float | None = None
    decay_floor: float = 0.25
    min_relative_score: float | None = None
    pinned_limit: int = 20


@dataclass(frozen=True)
class Stub:
    """The little a ranking needs of a fact (full records are built for the top k only)."""

    id: str
    subject_id: str
    object_id: str | None
    valid_from: int
    confidence: float


@dataclass
class RawSearch:
    """Scored candidates before formatting."""

    fact_scores: dict[str, float] = field(default_factory=dict)
    entity_scores: dict[str, float] = field(default_factory=dict)
    episode_scores: dict[str, float] = field(default_factory=dict)
    stubs: dict[str, Stub] = field(default_factory=dict)


class Rescore(Protocol):
    """A step after ranking that adjusts ``raw``'s scores in place and returns what finishes the
    formatted result (usage memory's pins, feedback and forgetting curve)."""

    def __call__(
        self,
        store: GraphStore,
        config: RetrievalConfig,
        raw: RawSearch,
        *,
        group_id: str,
        view: TimeView,
    ) -> Callable[[RecallResult], RecallResult]: ...
