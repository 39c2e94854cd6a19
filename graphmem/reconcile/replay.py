"""Rebuild one (subject, predicate) timeline from the claims that remain after a forget.

Forgetting an episode must leave the graph as if the episode had never been ingested: a fact
it alone supported goes, a fact it restated earlier than anyone else starts later again, a
value it corrected is believed again, a fact it negated holds again, and two statements of the
same value that only its change kept apart become one fact. Patching the stored timeline
cannot do all of that, so the timeline is replayed: every remaining claim (``_claims``), in the
order it was first applied, through the same ``TimelineState`` that ingest uses, and the result
is diffed against what the store holds. Facts that survive keep their ids.

A family's members (``_predicates.Family``) are one state at ingest, so they are replayed
together: ``pair`` is then (subject, ``@family``) and the timeline holds every member's facts;
the claims of all of them are replayed in commit order, so an effect across predicates (a
``cousin_of`` that corrected a ``sister_of``) is redone, or not, exactly as ingest did it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace

from .._predicates import Family
from ..ingest.plan import family_key, merge_timelines
from ..store._base import FactRow, FactUpdate, LinkRow, ProvenanceRow, StoreReader, Timeline
from .claims import StatedClaim
from .reconciler import Candidate, TimelineState, stored_value_key

__all__ = ["TimelineRebuild", "load_timelines", "rebuild_timeline"]


@dataclass
class TimelineRebuild:
    facts_new: list[FactRow] = field(default_factory=list)
    facts_update: list[FactUpdate] = field(default_factory=list)
    delete_fact_ids: list[str] = field(default_factory=list)
    provenance: list[ProvenanceRow] = field(default_factory=list)
    endings: list[ProvenanceRow] = field(default_factory=list)
    claims_reset: list[str] = field(default_factory=list)
    links_add: list[LinkRow] = field(default_factory=list)
    links_remove: list[tuple[str, str, str]] = field(default_factory=list)


_Step = tuple[tuple[int, int, int, str, int], str, StatedClaim, Candidate]


def _candidate(
    pair: tuple[str, str], fact: FactRow, claim: StatedClaim, row: ProvenanceRow
) -> Candidate:
    """What the episode said about ``fact``, as the reconciler takes it in."""
    return Candidate(
        subject_id=pair[0],
        predicate=fact.predicate,
        object_id=fact.object_id,
        value_json=fact.value_json,
        value_key=stored_value_key(fact),
        statement=fact.statement,
        valid_from=claim.valid_from,
        valid_to=claim.valid_to,
        stated_from=claim.stated_from,
        kind=claim.kind,
        replaces_key=claim.replaces_key,
        confidence=claim.confidence,
        span=row.span,
        embedding=fact.embedding,
        index=claim.index,
    )


def _steps(
    pair: tuple[str, str],
    facts: dict[str, FactRow],
    provenance: Sequence[ProvenanceRow],
    endings: Sequence[ProvenanceRow],
    keep: Callable[[ProvenanceRow], bool],
) -> list[_Step]:
    steps: list[_Step] = []
    for row in provenance:
        fact = facts.get(row.fact_id)
        if fact is None or not keep(row):
            continue
        claim = StatedClaim.from_json(row.claim, fact)
        steps.append((claim.sort_key(row.episode_id), row.episode_id, claim,
                      _candidate(pair, fact, claim, row)))
    seen: set[tuple[int, int, int, str, int]] = set()
    for row in endings:
        fact = facts.get(row.fact_id)
        if fact is None or row.claim is None or not keep(row):
            continue
        claim = StatedClaim.from_json(row.claim, fact)
        order = claim.sort_key(row.episode_id)
        if order in seen:  # one negation that ended several facts is replayed once
            continue
        seen.add(order)
        negated = claim.value_key or ""  # "": whatever value holds
        cand = replace(
            _candidate(pair, fact, claim, row),
            object_id=fact.object_id if negated else None,
            value_json=fact.value_json if negated else None,
            value_key=negated,
            embedding=None,
        )
        steps.append((order, row.episode_id, claim, cand))
    steps.sort(key=lambda step: step[0])
    return steps


def rebuild_timeline(
    group_id: str,
    pair: tuple[str, str],
    timeline: Timeline,
    provenance: Sequence[ProvenanceRow],
    endings: Sequence[ProvenanceRow],
    *,
    functional: bool,
    keep: Callable[[ProvenanceRow], bool],
    now: int,
    family: Family | None = None,
) -> TimelineRebuild:
    """``timeline`` holds every fact of the pair, expired ones included; ``keep`` says which
    provenance and ending rows remain. With ``family``, the pair is (subject, family key) and
    the timeline holds the facts of every member of the family."""
    subject_id, predicate = pair
    old = {f.id: f for f in timeline.facts}
    state = TimelineState(
        group_id,
        subject_id,
        predicate,
        Timeline(),
        functional=functional,
        now=0,
        episode_id="",
        family=family,
    )
    previous: tuple[int, int, int, str] | None = None
    for _, episode_id, claim, cand in _steps(pair, old, provenance, endings, keep):
        write = (claim.seq, claim.at, claim.order, episode_id)
        if previous is not None and write != previous:
            # Ingest recomputed the timeline when each episode's write finished: so does this.
            state.recompute()
        previous = write
        state.now, state.episode_id, state.order = claim.at, episode_id, claim.order
        state.seq = claim.seq
        state.apply(cand)
    built, _, links, _ = state.finish()

    # Survivors keep their ids: a rebuilt fact takes the id of the stored fact of the same
    # value that shares a supporting episode with it.
    supported: dict[str, set[str]] = {}
    for row in provenance:
        if keep(row):
            supported.setdefault(row.fact_id, set()).add(row.episode_id)
    rebuilt_support: dict[str, set[str]] = {}
    for row in state.provenance:
        rebuilt_support.setdefault(row.fact_id, set()).add(row.episode_id)
    oldest_first = sorted(old.values(), key=lambda f: (f.valid_from, f.recorded_at, f.id))
    rename: dict[str, str] = {}
    taken = {f.id for f in built if f.id in old}
    for fact in built:
        if fact.id in old:
            continue
        episodes = rebuilt_support.get(fact.id, set())
        for stored in oldest_first:
            if (
                stored.id not in taken
                and stored.predicate == fact.predicate
                and stored_value_key(stored) == stored_value_key(fact)
                and supported.get(stored.id, set()) & episodes
            ):
                rename[fact.id] = stored.id
                taken.add(stored.id)
                break

    def new_id(fact_id: str) -> str:
        return rename.get(fact_id, fact_id)

    out = TimelineRebuild()
    final: dict[str, FactRow] = {}
    for fact in built:
        fact = replace(fact, id=new_id(fact.id))
        final[fact.id] = fact
        before = old.get(fact.id)
        if before is None:
            out.facts_new.append(fact)
            continue
        out.claims_reset.append(fact.id)
        ended_at, end_reason = fact.ended_at, fact.end_reason
        if fact.valid_to == before.valid_to:
            ended_at = before.ended_at
        elif fact.valid_to is not None:
            ended_at = now
        if (
            fact.valid_from,
            fact.valid_to,
            fact.expired_at,
            ended_at,
            end_reason,
            fact.confidence,
        ) != (
            before.valid_from,
            before.valid_to,
            before.expired_at,
            before.ended_at,
            before.end_reason,
            before.confidence,
        ):
            out.facts_update.append(FactUpdate.of(fact, ended_at, end_reason))
    out.delete_fact_ids = [fid for fid in old if fid not in final]
    out.provenance = [replace(r, fact_id=new_id(r.fact_id)) for r in state.provenance]
    out.endings = [replace(r, fact_id=new_id(r.fact_id)) for r in state.endings]
    stored_links = {(lk.kind, lk.src, lk.dst): lk for lk in timeline.links}
    wanted: dict[tuple[str, str, str], LinkRow] = {}
    for link in links:
        moved = replace(link, src=new_id(link.src), dst=new_id(link.dst))
        wanted[(moved.kind, moved.src, moved.dst)] = moved
    # A link that stays keeps an extractor's stated reason; the rules' links are the replay's.
    for key, link in wanted.items():
        kept = stored_links.get(key)
        if kept is None:
            out.links_add.append(link)
        elif kept.decided_by != "llm" and (kept.reason, kept.decided_by) != (
            link.reason,
            link.decided_by,
        ):
            out.links_remove.append(key)
            out.links_add.append(link)
    out.links_remove.extend(key for key in stored_links if key not in wanted)
    return out


def load_timelines(
    reader: StoreReader,
    group_id: str,
    rows: Sequence[FactRow],
    families: Mapping[str, Family],
    *,
    include_expired: bool = True,
) -> tuple[dict[tuple[str, str], Timeline], dict[tuple[str, str], Family]]:
    """The timelines that hold these facts, as ingest reconciles them: a family member's
    fact brings every member's facts of its subject (one timeline keyed (subject, @family))."""
    keys: dict[tuple[str, str], Family | None] = {}
    for row in rows:
        if row.group_id != group_id:
            continue
        family = families.get(row.predicate)
        if family is None:
            keys[(row.subject_id, row.predicate)] = None
        else:
            keys[(row.subject_id, family_key(family))] = family
    pairs: list[tuple[str, str]] = []
    for key, family in keys.items():
        pairs.extend([(key[0], m) for m in family.members] if family is not None else [key])
    loaded = reader.timelines(group_id, list(dict.fromkeys(pairs)), include_expired=include_expired)
    timelines: dict[tuple[str, str], Timeline] = {}
    of_family: dict[tuple[str, str], Family] = {}
    for key in sorted(keys):
        family = keys[key]
        if family is None:
            timelines[key] = loaded[key]
        else:
            timelines[key] = merge_timelines([loaded[(key[0], m)] for m in family.members])
            of_family[key] = family
    return timelines, of_family
