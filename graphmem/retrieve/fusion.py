"""Episode fusion: a query's full-text and vector episode lists made into one scored list.

Three rules (``RetrievalConfig.episode_fusion``; by default the embedder's ``recall_fusion``,
else ``convex``):

- ``convex``: text scores (best = 1) and vector similarities (min-max over the list) mixed as
  (1 - w) x text + w x dense, w = ``dense_weight`` (the embedder's ``recall_weight``);
- ``rrf``: reciprocal-rank fusion, sum of 1 / (k + rank) over the two lists (k = ``rrf_k``);
- ``zscore``: each list's scores standardised over the list (z = (s - mean) / std; an episode
  missing from a list counts as that list's lowest), summed: a list whose best hits stand far
  above the rest for this query (a confident retriever) weighs more, one that is flat for it
  weighs less, with no weight to set.

Every rule returns scores scaled to the best = 1 (the scale the context, speaker and time cues
that follow expect); an episode in neither list is absent.
"""

from __future__ import annotations

import math

__all__ = ["FUSIONS", "convex", "fuse_episodes", "reciprocal_rank", "standardised"]

FUSIONS = ("convex", "rrf", "zscore")
Scores = dict[str, float]


def convex(text: Scores, dense: list[tuple[str, float]], weight: float) -> Scores:
    if not dense or weight <= 0:
        return text
    sims = [s for _, s in dense]
    top, low = max(sims), min(sims)
    if top <= 0:
        return text
    span = (top - low) or top
    scaled = {eid: max(0.0, (s - low) / span) for eid, s in dense}
    return {
        eid: (1.0 - weight) * text.get(eid, 0.0) + weight * scaled.get(eid, 0.0)
        for eid in {*text, *scaled}
    }


def reciprocal_rank(text: Scores, dense: list[tuple[str, float]], k: float) -> Scores:
    fused: Scores = {}
    text_ranked = sorted(text, key=lambda e: (-text[e], e))
    dense_ranked = [eid for eid, _ in sorted(dense, key=lambda d: (-d[1], d[0]))]
    for ranking in (text_ranked, dense_ranked):
        for rank, eid in enumerate(ranking, start=1):
            fused[eid] = fused.get(eid, 0.0) + 1.0 / (k + rank)
    return _to_best(fused)


def standardised(text: Scores, dense: list[tuple[str, float]]) -> Scores:
    lists = [s for s in (text, dict(dense)) if s]
    if len(lists) < 2:
        return _to_best(dict(lists[0])) if lists else {}
    zs: list[Scores] = []
    floors: list[float] = []
    for scores in lists:
        values = list(scores.values())
        mean = sum(values) / len(values)
        std = math.sqrt(sum((v - mean) ** 2 for v in values) / len(values)) or 1.0
        z = {eid: (s - mean) / std for eid, s in scores.items()}
        zs.append(z)
        floors.append(min(z.values()))
    keys = {e for z in zs for e in z}
    fused = {e: sum(z.get(e, floor) for z, floor in zip(zs, floors, strict=True)) for e in keys}
    low = min(fused.values())
    return _to_best({e: s - low for e, s in fused.items()})


def _to_best(scores: Scores) -> Scores:
    best = max(scores.values(), default=0.0)
    if best <= 0:
        return {e: 0.0 for e in scores}
    return {e: s / best for e, s in scores.items() if s > 0}


def fuse_episodes(
    rule: str, text: Scores, dense: list[tuple[str, float]], *, weight: float, rrf_k: float
) -> Scores:
    """``text`` (full-text scores, best = 1) and ``dense`` (episode, similarity) fused by
    ``rule`` (see the module docstring)."""
    if rule == "convex":
        return convex(text, dense, weight)
    if not dense or weight <= 0:
        return text
    if rule == "rrf":
        return reciprocal_rank(text, dense, rrf_k)
    if rule == "zscore":
        return standardised(text, dense)
    raise ValueError(f"unknown episode fusion {rule!r} (expected one of {FUSIONS})")
