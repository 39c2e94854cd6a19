"""Rebuild one (subject, predicate) timeline from its claims, in the order they were stated.

What is believed is a function of the claims alone: every claim of the timeline, applied in
stated order (``StatedClaim.stated_key``: when the episode said it, then its content-derived
id, then its place in the episode) through the same ``TimelineState`` that ingest uses. Ingest
applies an episode incrementally when it comes last in that order, which is the same thing;
otherwise (a negation, correction or statement stated before something already stored) it
rebuilds the timeline here with the new candidates in their place. A forget rebuilds it
without the forgotten rows.

Forgetting an episode must leave the graph as if the episode had never been ingested: a fact
it alone supported goes, a fact it restated earlier than anyone else starts later again, a
value it corrected is believed again, a fact it negated holds again, and two statements of the
same value that only its change kept apart become one fact. Patching the stored timeline
cannot do all of that, so the timeline is replayed: every remaining claim (``_claims``), in
stated order, and the result is diffed against what the store holds. Facts that survive keep
their ids.

A family's members (``_predicates.Family``) are one state at ingest, so they are replayed
together: ``pair`` is then (subject, ``@family``) and the timeline holds every member's facts;
the claims of all of them are replayed in one stated order, so an effect across predicates (a
``cousin_of`` that corrected a ``sister_of``) is redone, or not, exactly as ingest did it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace

from .._predicates import Family
from ..store._base import FactRow, FactUpdate, LinkRow, ProvenanceRow, StoreReader, Timeline
from .claims import StatedClaim, StatedKey
from .claims import stated_key as claim_key
from .reconciler import Candidate, Outcome, TimelineState, stored_value_key
from .timelines import family_key, merge_timelines
from .types import is_placeholder

__all__ = [
    "NewStatements",
    "TimelineRebuild",
    "apply_in_order",
    "load_timelines",
    "needs_rebuild",
    "rebuild_timeline",
    "stated_key",
    "stored_keys",
]


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
    outcomes: list[Outcome] = field(default_factory=list)  # of the ``new`` candidates


@dataclass(frozen=True)
class NewStatements:
    """An episode's candidates replayed beside the stored claims (ingest out of stated order)."""

    episode_id: str
    candidates: Sequence[Candidate]
    now: int
    order: int = 0
    seq: int = 0


@dataclass(frozen=True)
class _Step:
    key: StatedKey  # stated order: StatedClaim.stated_key
    episode_id: str
    at: int
    order: int
    seq: int
    cand: Candidate
    new: bool = False


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
        said=claim.said,
        episode_hash=claim.episode_hash,
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
        steps.append(
            _Step(
                claim.stated_key(row.episode_id),
                row.episode_id,
                claim.at,
                claim.order,
                claim.seq,
                _candidate(pair, fact, claim, row),
            )
        )
    seen: set[StatedKey] = set()
    for row in endings:
        fact = facts.get(row.fact_id)
        if fact is None or row.claim is None or not keep(row):
            continue
        claim = StatedClaim.from_json(row.claim, fact)
        order = claim.stated_key(row.episode_id)
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
        steps.append(_Step(order, row.episode_id, claim.at, claim.order, claim.seq, cand))
    return steps


def stated_key(cand: Candidate, episode_id: str) -> StatedKey:
    """A new candidate's place in the stated order (``StatedClaim.stated_key``)."""
    said = cand.valid_from if cand.said is None else cand.said
    relation = cand.claim.relation if cand.claim is not None else None
    kind = {"negates": "negate", "corrects": "correct"}.get(relation or "", cand.kind)
    return claim_key(said, kind, cand.episode_hash, episode_id, cand.index)


def stored_keys(
    facts: Sequence[FactRow], provenance: Sequence[ProvenanceRow], endings: Sequence[ProvenanceRow]
) -> list[tuple[StatedKey, str]]:
    """The stated order key and kind of every stored claim of these facts."""
    by_id = {f.id: f for f in facts}
    out: list[tuple[StatedKey, str]] = []
    for row in (*provenance, *endings):
        fact = by_id.get(row.fact_id)
        if fact is not None:
            claim = StatedClaim.from_json(row.claim, fact)
            out.append((claim.stated_key(row.episode_id), claim.kind))
    return out


def needs_rebuild(
    stored: Sequence[tuple[StatedKey, str]], cands: Sequence[Candidate], episode_id: str
) -> bool:
    """Whether something stored is stated after the episode: applying it incrementally could
    then differ from the replay in stated order. (Even plain statements do not always commute
    in the incremental rules: a value at the same time as another, a value that returns.)"""
    if not stored or not cands:
        return False
    first = min(stated_key(c, episode_id) for c in cands)
    return any(key > first for key, _ in stored)


def apply_in_order(
    state: TimelineState, cands: Sequence[Candidate], episode_id: str
) -> list[Outcome]:
    """Apply one episode's candidates in stated order (its statements, then its negations and
    corrections), recomputing in between, exactly as a rebuild replays them."""
    outcomes: list[Outcome] = []
    keyed = sorted(((stated_key(c, episode_id), c) for c in cands), key=lambda kc: kc[0])
    for number, (key, cand) in enumerate(keyed):
        if number and key[1] != keyed[number - 1][0][1]:  # from statements to negations
            state.recompute()
        outcomes.append(state.apply(cand))
    return outcomes


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
    new: NewStatements | None = None,
) -> TimelineRebuild:
    """Replay a timeline's claims in stated order (``StatedClaim.stated_key``) through the
    reconciler and diff the result against what the store holds.

    ``timeline`` holds every fact of the pair, expired ones included; ``keep`` says which
    provenance and ending rows remain (a forget drops some). ``new``: an episode's candidates
    that take their place in the stated order among the stored claims (an ingest that does
    not come last in stated order); record time then says what changed at ``now``: facts
    the rebuild makes are recorded now, facts it expires are expired now. With ``family``, the
    pair is (subject, family key) and the timeline holds the facts of every member."""
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
    steps = _steps(pair, old, provenance, endings, keep)
    if new is not None:
        steps.extend(
            _Step(
                stated_key(c, new.episode_id),
                new.episode_id,
                new.now,
                new.order,
                new.seq,
                c,
                new=True,
            )
            for c in new.candidates
        )
    steps.sort(key=lambda step: step.key)
    outcomes: list[Outcome] = []
    previous: tuple[int, int, str] | None = None
    for step in steps:
        said = (step.key[0], step.key[1], step.key[3])
        if previous is not None and said != previous:
            # Between an episode's statements and its negations/corrections, and between
            # episodes, the timeline is recomputed, as ingest does (``apply_in_order``).
            state.recompute()
        previous = said
        state.now, state.episode_id, state.order = step.at, step.episode_id, step.order
        state.seq = step.seq
        outcome = state.apply(step.cand)
        if step.new:
            outcomes.append(outcome)
    built, _, links, _ = state.finish()
    if new is not None:
        built = _restamp(built, old, new.now)

    # Survivors keep their ids: a rebuilt fact takes the id of the stored fact of the same
    # value that shares a supporting episode with it.
    supported: dict[str, set[str]] = {}
    for row in provenance:
        if keep(row):
            supported.setdefault(row.fact_id, set()).add(row.episode_id)
    rebuilt_support: dict[str, set[str]] = {}
    for row in (*state.provenance, *state.endings):
        rebuilt_support.setdefault(row.fact_id, set()).add(row.episode_id)
    for row in endings:
        if keep(row) and is_placeholder(old.get(row.fact_id) or _NO_FACT):
            supported.setdefault(row.fact_id, set()).add(row.episode_id)
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
                and is_placeholder(stored) == is_placeholder(fact)
                and supported.get(stored.id, set()) & episodes
            ):
                rename[fact.id] = stored.id
                taken.add(stored.id)
                break

    def new_id(fact_id: str) -> str:
        return rename.get(fact_id, fact_id)

    out = TimelineRebuild(outcomes=outcomes)
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
        if new is not None:
            fact.expired_at = _expired_at(before.expired_at, fact.expired_at, new.now)
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
    for outcome in outcomes:
        outcome.fact_id = None if outcome.fact_id is None else new_id(outcome.fact_id)
        outcome.affected = [new_id(a) for a in outcome.affected]
    stored_links = {(lk.kind, lk.src, lk.dst): lk for lk in timeline.links}
    wanted: dict[tuple[str, str, str], LinkRow] = {}
    for link in links:
        moved = replace(link, src=new_id(link.src), dst=new_id(link.dst))
        if moved.kind == "CONTRADICTS" and _flip(moved, stored_links, final, old):
            moved = replace(moved, src=moved.dst, dst=moved.src)
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


def _flip(
    link: LinkRow,
    stored: dict[tuple[str, str, str], LinkRow],
    final: dict[str, FactRow],
    old: dict[str, FactRow],
) -> bool:
    """A conflict has no order in what is believed; its link points from the side memory
    learned last to the other (as an in-order ingest writes it): a stored link keeps its
    direction, and a new fact in conflict with a stored one points at it."""
    if ("CONTRADICTS", link.dst, link.src) in stored:
        return True
    if ("CONTRADICTS", link.src, link.dst) in stored:
        return False
    return link.src in old and link.dst in final and link.dst not in old


_NO_FACT = FactRow("", "", "", "", None, None, "", 0, None, 0)


def _expired_at(before: int | None, after: int | None, now: int) -> int | None:
    """Record time of a rebuilt fact's expiry: kept where it was already expired, now where
    the rebuild expires it."""
    if after is None:
        return None
    return before if before is not None else now


def _restamp(built: list[FactRow], old: dict[str, FactRow], now: int) -> list[FactRow]:
    """The replay stamps each fact with the record time of the claim that made it; a fact
    that the store does not hold yet was learned now (survivors are matched by id later)."""
    out = []
    for fact in built:
        if fact.id not in old:
            fact = replace(
                fact,
                recorded_at=now,
                expired_at=None if fact.expired_at is None else now,
                ended_at=None if fact.valid_to is None else now,
            )
        out.append(fact)
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
