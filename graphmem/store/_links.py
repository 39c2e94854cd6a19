"""Links between episodes: a later turn that states a new value of something an earlier turn of
the same speaker stated (``UPDATES``). The ingest stage decides them (``reconcile/turn_links.py``);
the store keeps them, with each turn's link terms (what finds the turns a new one may update),
and deletes both with the episode.

A link depends on its two episodes only (their texts, speakers and stated times), never on which
arrived first, so the links of a group are the same in every arrival order, and forgetting an
episode removes its links and nothing else.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["EPISODE_LINK_KINDS", "EpisodeLinkRow"]

EPISODE_LINK_KINDS = ("UPDATES",)


@dataclass(frozen=True)
class EpisodeLinkRow:
    """``src`` (the later episode) ``kind`` ``dst`` (the earlier one), in ``group_id``.
    ``terms``: the words the two statements share (what the link is about); ``reason``: the
    change in words ("45 → 52 (library, sources, zotero)")."""

    kind: str
    src: str
    dst: str
    group_id: str
    reason: str
    terms: tuple[str, ...]
    decided_at: int
