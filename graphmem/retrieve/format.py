"""The second stage of recall: scored candidate ids (``RawSearch``) → ``RecallResult``, with each
fact's source episodes, the facts it replaced, open conflicts, entities and episodes."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import replace
from typing import Any

from .._models import EpisodeLink, EpisodeRef, FactHit, RecallResult
from ..reconcile.turn_links import links_among
from ..store._base import GraphStore, TimeView
from ..store._links import EpisodeLinkRow
from .config import RawSearch, RetrievalConfig
from .currentness import order_by_currentness, outdated_turns, stated_only_by

__all__ = ["format_result"]


def format_result(
    store: GraphStore,
    config: RetrievalConfig,
    raw: RawSearch,
    *,
    query: str,
    group_id: str,
    view: TimeView,
    k: int,
    as_of: Any = None,
    known_at: Any = None,
) -> RecallResult:
    """The top ``k`` facts of ``raw`` as records, and the entities and episodes beside them."""
    ranked = sorted(raw.fact_scores, key=lambda fid: (-raw.fact_scores[fid], fid))[:k]
    full = {r.id: r for r in store.fact_records(ranked, view)}
    top = [full[fid] for fid in ranked if fid in full]
    links = store.links(ranked) if ranked else []
    replaced_ids: dict[str, list[str]] = defaultdict(list)
    conflict_ids: dict[str, list[str]] = defaultdict(list)
    for link in links:
        if link.kind == "SUPERSEDES" and link.src in raw.fact_scores:
            replaced_ids[link.src].append(link.dst)
        elif link.kind == "CONTRADICTS":
            if link.src in ranked:
                conflict_ids[link.src].append(link.dst)
            if link.dst in ranked:
                conflict_ids[link.dst].append(link.src)
    history = {
        r.id: r
        for r in store.fact_records([i for ids in replaced_ids.values() for i in ids], None)
    }
    open_conflicts = {
        r.id: r
        for r in store.fact_records([i for ids in conflict_ids.values() for i in ids], view)
    }
    episode_ids = [e for rec in top for e in rec.episode_ids]
    # Episodes: the full-text/context ranking, plus the support of the returned facts.
    episode_score: dict[str, float] = dict(raw.episode_scores)
    best_fact = max((raw.fact_scores[rec.id] for rec in top), default=0.0)
    if best_fact > 0:
        weight = config.fact_episode_weight / best_fact
        for rec in top:
            support = weight * raw.fact_scores[rec.id]
            for eid in dict.fromkeys(rec.episode_ids):
                episode_score[eid] = episode_score.get(eid, 0.0) + support
    pool = sorted(episode_score, key=lambda e: (-episode_score[e], e))[: 2 * max(k, 10)]
    near = config.currentness_top
    # The links of the first episodes and of the returned facts' sources.
    linked = list(dict.fromkeys([*pool[:near], *episode_ids])) if near > 0 and pool else []
    turn_links = store.episode_links(linked) if linked else []
    # A returned fact that replaced an earlier one (SUPERSEDES) says the same between their
    # source turns: the newer turn updates the older. The fact matched the query, so the link
    # concerns it whatever words the query uses.
    from_facts = [
        EpisodeLinkRow(
            "UPDATES", new_ep, old_ep, group_id,
            f"{history[old_id].statement} → {rec.statement}", (), 0,
        )
        for rec in top
        for old_id in replaced_ids.get(rec.id, [])
        if old_id in history
        for new_ep in dict.fromkeys(rec.episode_ids)
        for old_ep in dict.fromkeys(history[old_id].episode_ids)
        if new_ep != old_ep
    ] if near > 0 else []
    # The first few returned turns, compared pairwise (no stored link limits that).
    pairs = pool[: config.currentness_pairs] if near > 0 else []
    first = store.episodes(pairs) if len(pairs) > 1 else []
    # One link per pair of turns: the stored one's reason, else the one from facts, else the
    # one found here; the words it is about from all of them (the finer reading sees more).
    by_pair: dict[tuple[str, str], EpisodeLinkRow] = {}
    for lk in (*turn_links, *from_facts, *links_among(first)):
        held = by_pair.get((lk.src, lk.dst))
        if held is None:
            by_pair[(lk.src, lk.dst)] = lk
        elif not set(lk.terms) <= set(held.terms):
            by_pair[(lk.src, lk.dst)] = replace(
                held, terms=tuple(sorted({*held.terms, *lk.terms}))
            )
    turn_links = list(by_pair.values())
    best_episodes = order_by_currentness(
        pool, turn_links, query, top=near, concerning=from_facts
    )[: max(k, 10)]
    records_by_id = {e.id: e for e in first}
    missing = [e for e in dict.fromkeys([*episode_ids, *best_episodes]) if e not in records_by_id]
    records_by_id.update((e.id, e) for e in store.episodes(missing))
    shown = set(best_episodes)

    def ref(eid: str, with_content: bool) -> EpisodeRef | None:
        ep = records_by_id.get(eid)
        if ep is None:
            return None
        return EpisodeRef(
            id=ep.id,
            source=ep.source,
            reference_time=ep.reference_time,
            metadata=ep.metadata,
            content=ep.content if with_content else None,
            links=[
                EpisodeLink(kind=lk.kind, src=lk.src, dst=lk.dst, reason=lk.reason)
                for lk in turn_links
                if eid in (lk.src, lk.dst) and {lk.src, lk.dst} <= shown
            ]
            if with_content
            else [],
        )

    hits: list[FactHit] = []
    for rec in top:
        refs = [r for r in (ref(e, False) for e in rec.episode_ids) if r is not None]
        hits.append(
            FactHit(
                **rec.model_dump(),
                score=round(raw.fact_scores[rec.id], 6),
                episodes=refs,
                superseded=sorted(
                    (history[i] for i in replaced_ids.get(rec.id, []) if i in history),
                    key=lambda r: r.valid_from,
                ),
                contradicts=[
                    open_conflicts[i]
                    for i in conflict_ids.get(rec.id, [])
                    if i in open_conflicts
                ],
            )
        )
    entity_ids = sorted(raw.entity_scores, key=lambda e: -raw.entity_scores[e])[:k]
    entities = []
    if entity_ids:
        rows = {e.id: e for e in store.find_entities_by_ids(group_id, entity_ids)}
        for eid in entity_ids:
            if eid in rows:
                entities.append(
                    rows[eid].model_copy(update={"score": round(raw.entity_scores[eid], 6)})
                )
    episodes = [r for r in (ref(e, True) for e in best_episodes) if r is not None]
    outdated = outdated_turns(turn_links, query, shown)
    if outdated:
        # A fact about what changed, stated only by turns a returned later turn updates, is
        # the old value: the two turns, linked, say it; the fact would put it first.
        hits = [h for h in hits if not stated_only_by(h.statement, h.episode_ids, outdated)]
    return RecallResult(
        query=query,
        group_id=group_id,
        as_of=as_of,
        known_at=known_at,
        facts=hits,
        entities=entities,
        episodes=episodes,
    )
