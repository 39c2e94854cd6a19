"""Conversation context in episode ranking: the turns next to a hit, and the hit beside them.

A turn next to a full-text hit in the same conversation is context for it (the reply to a
question, the question a reply answers) and takes a share of the hit's score (``lift``). With
the speaker cue on top (a question in the first person weighs the asker's turns x 1.5), a short
user turn beside a long assistant reply that matched the question well outranks that reply:
(own + 0.6 x reply) x 1.5 > reply. That is right when the user's statement is the answer, and
it is what finds most of BEAM's evidence; but the reply that carried the question's words then
falls far below the turn it lifted (BEAM 100K summarization: the replies that hold the answer
ranked 28th–46th behind the user turns beside them).

``pair_with_sources``: a turn that ranks more by its neighbour's score than by its own brings
that neighbour in right after it, so the exchange comes back whole and in order: the context
first where the cues put it first, and the turn whose words matched beside it. Nothing is moved
down; only a source ranked below the turn it lifted moves up to just below it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

__all__ = ["PAIR_GAP", "neighbour_lift", "pair_with_sources"]

# A source is put just below the turn it lifted (a factor, so that the order of the pairs
# among themselves is the order of the lifted turns).
PAIR_GAP = 0.999


def neighbour_lift(
    base: Mapping[str, float],
    neighbours: Mapping[str, Sequence[tuple[str, int]]],
    weight: float,
    decay: float,
) -> tuple[dict[str, float], dict[str, str]]:
    """Each episode's lift, ``weight`` x its best neighbour's score x ``decay`` ** (distance
    - 1), over the neighbours of the hits in ``neighbours`` (hit → [(neighbour, distance)]);
    and the hit each lift came from."""
    lift: dict[str, float] = {}
    source: dict[str, str] = {}
    for eid, near in neighbours.items():
        own = weight * base.get(eid, 0.0)
        for other, distance in near:
            score = own * decay ** (distance - 1)
            if score > lift.get(other, 0.0):
                lift[other] = score
                source[other] = eid
    return lift, source


def pair_with_sources(
    scores: Mapping[str, float],
    base: Mapping[str, float],
    lift: Mapping[str, float],
    source: Mapping[str, str],
) -> dict[str, float]:
    """``scores`` with the source of each turn whose lift exceeds its own ``base`` score raised
    to just below that turn's score (never lowered)."""
    paired = dict(scores)
    for eid, hit in source.items():
        if hit not in scores or eid not in scores:
            continue
        if lift.get(eid, 0.0) > base.get(eid, 0.0):
            paired[hit] = max(paired[hit], PAIR_GAP * scores[eid])
    return paired
