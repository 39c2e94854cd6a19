"""From an extraction to one ``WritePlan``: resolve entities, reconcile facts, record provenance.

Everything here runs inside the store's write transaction (``build_plan`` is the unit of work),
so a retried transaction recomputes the plan from what the store holds at that moment.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from .._errors import InputError, PredicateError
from .._ids import entity_key, value_json, value_key
from .._models import ExtractedFact, IngestResult
from .._predicates import Family, PredicateRegistry, normalize_predicate
from .._time import to_ms
from ..reconcile.reconciler import Candidate, Claim, Outcome, TimelineState
from ..reconcile.replay import (
    NewStatements,
    apply_in_order,
    needs_rebuild,
    rebuild_timeline,
    stored_keys,
)
from ..reconcile.timelines import family_key, merge_timelines
from ..store._base import ProvenanceRow, StoreReader, Timeline, WritePlan
from .resolve import EntityRequest, resolve_entities

__all__ = [
    "PreparedFact",
    "build_plan",
    "default_statement",
    "family_key",
    "merge_timelines",
    "prepare_facts",
]

Vector = npt.NDArray[np.float32]


@dataclass
class PreparedFact:
    """An extracted fact checked and normalised, with its embedding, before resolution."""

    fact: ExtractedFact
    predicate: str
    functional: bool
    valid_from: int
    valid_to: int | None
    stated_from: bool
    statement: str
    embedding: Vector | None = None
    family: Family | None = None  # the predicate's family: reconciled with its other members


def default_statement(subject: str, predicate: str, target: str) -> str:
    words = predicate.replace(".", " ").replace("_", " ")
    return f"{subject} {words} {target}".strip() + "."


def prepare_facts(
    facts: Sequence[ExtractedFact],
    *,
    reference_time: int,
    predicates: PredicateRegistry,
    strict: bool,
) -> tuple[list[PreparedFact], list[str]]:
    """Normalise predicates and times; with ``strict`` bad facts raise, else they are skipped."""
    prepared: list[PreparedFact] = []
    skipped: list[str] = []
    for index, fact in enumerate(facts):
        try:
            predicate = normalize_predicate(fact.predicate, lenient=not strict)
            if fact.object is None and fact.value is None and fact.kind == "assert":
                raise InputError(f"fact {index}: needs an object or a value")
            if isinstance(fact.value, float) and fact.value != fact.value:
                raise InputError(f"fact {index}: value is NaN")
            start = to_ms(fact.valid_from) if fact.valid_from is not None else reference_time
            end = to_ms(fact.valid_to) if fact.valid_to is not None else None
            if end is not None and end <= start:
                raise InputError(
                    f"fact {index}: valid_to ({fact.valid_to}) must be after valid_from"
                )
        except (InputError, PredicateError) as exc:
            if strict:
                raise
            skipped.append(str(exc))
            continue
        if predicate in predicates or fact.functional is None:
            functional = predicates.is_functional(predicate)
        else:
            functional = fact.functional
        family = predicates.family_of(predicate) if predicate in predicates else None
        target = fact.object if fact.object is not None else str(fact.value)
        statement = (fact.statement or "").strip() or default_statement(
            fact.subject, predicate, target
        )
        prepared.append(
            PreparedFact(
                fact=fact,
                predicate=predicate,
                functional=functional,
                valid_from=start,
                valid_to=end,
                stated_from=fact.valid_from is not None,
                statement=statement,
                family=family,
            )
        )
    return prepared, skipped


def build_plan(
    reader: StoreReader,
    *,
    group_id: str,
    episode_id: str,
    extractor_name: str,
    facts: Sequence[PreparedFact],
    entities: Sequence[EntityRequest],
    now: int,
    order: int = 0,
    said: int | None = None,
    episode_hash: str | None = None,
) -> tuple[WritePlan, IngestResult]:
    """``order``: the episode's position in its write batch (the batch shares ``now``);
    ``said``: the episode's reference time (when it said what it says); ``episode_hash``: its
    content hash (what breaks ties of ``said``)."""
    requests: dict[str, EntityRequest] = {}
    for req in entities:
        requests.setdefault(req.name, req)
    for pf in facts:
        requests.setdefault(pf.fact.subject, EntityRequest(pf.fact.subject, pf.fact.subject_type))
        if pf.fact.object is not None:
            requests.setdefault(pf.fact.object, EntityRequest(pf.fact.object, pf.fact.object_type))
    resolution = resolve_entities(reader, group_id, list(requests.values()), now)

    # One state per (subject, predicate), or per (subject, family) for a family's members.
    candidates: dict[tuple[str, str], list[Candidate]] = {}
    functional: dict[tuple[str, str], bool] = {}
    families: dict[tuple[str, str], Family] = {}
    for index, pf in enumerate(facts):
        f = pf.fact
        subject_id = resolution.by_name[f.subject]
        object_id = resolution.by_name[f.object] if f.object is not None else None
        raw_value = None if f.object is not None else f.value
        replaces_key: str | None = None
        if f.replaces:
            replaced = [e.id for e in resolution.new if e.key == entity_key(f.replaces)] or [
                eid
                for name, eid in resolution.by_name.items()
                if entity_key(name) == entity_key(f.replaces)
            ]
            replaces_key = value_key(replaced[0], None) if replaced else value_key(None, f.replaces)
        key = (subject_id, pf.predicate)
        if pf.family is not None:
            key = (subject_id, family_key(pf.family))
            families[key] = pf.family
        claim = None
        if f.relation is not None and f.relation != "new":
            claim = Claim(f.relation, f.related_fact_id, f.reason)
        candidates.setdefault(key, []).append(
            Candidate(
                subject_id=subject_id,
                predicate=pf.predicate,
                object_id=object_id,
                value_json=None if raw_value is None else value_json(raw_value),
                value_key=""
                if (f.kind == "negate" and object_id is None and raw_value is None)
                else value_key(object_id, raw_value),
                statement=pf.statement,
                valid_from=pf.valid_from,
                valid_to=pf.valid_to,
                stated_from=pf.stated_from,
                kind=f.kind,
                replaces_key=replaces_key,
                confidence=f.confidence,
                span=f.evidence,
                embedding=pf.embedding,
                claim=claim,
                index=index,
                said=said,
                episode_hash=None if episode_hash is None else episode_hash[:16],
            )
        )
        functional[key] = functional.get(key, False) or pf.functional

    pairs: list[tuple[str, str]] = []
    for key in candidates:
        family = families.get(key)
        pairs.extend([(key[0], m) for m in family.members] if family is not None else [key])
    loaded = reader.timelines(group_id, list(dict.fromkeys(pairs)))
    timelines: dict[tuple[str, str], Timeline] = {}
    for key in candidates:
        family = families.get(key)
        if family is None:
            timelines[key] = loaded[key]
        else:
            timelines[key] = merge_timelines([loaded[(key[0], m)] for m in family.members])
    plan = WritePlan(episode_id=episode_id, episode_status=("extracted", extractor_name, None))
    plan.entities_new = resolution.new
    plan.entity_aliases = resolution.aliases
    result = IngestResult(episode_id=episode_id, status="extracted")

    seq = reader.write_seq
    # The stored claims of every touched timeline, in one read: whether the episode comes last
    # in stated order (and, when a fact splits, what its statements said).
    claims: dict[str, tuple[list[ProvenanceRow], list[ProvenanceRow]]] = {}
    fact_ids = [f.id for timeline in timelines.values() for f in timeline.facts]
    if fact_ids:
        provenance, endings = reader.fact_claims(fact_ids)
        for rows, index in ((provenance, 0), (endings, 1)):
            for row in rows:
                claims.setdefault(row.fact_id, ([], []))[index].append(row)
    for key, cands in candidates.items():
        timeline = timelines[key]
        stored: tuple[list[ProvenanceRow], list[ProvenanceRow]] = ([], [])
        for fact in timeline.facts:
            rows_of = claims.get(fact.id)
            if rows_of is not None:
                stored[0].extend(rows_of[0])
                stored[1].extend(rows_of[1])
        if needs_rebuild(stored_keys(timeline.facts, *stored), cands, episode_id):
            # Stated before something memory already holds: the timeline is replayed in
            # stated order with these candidates in their place.
            _rebuild(
                reader,
                plan,
                result,
                group_id,
                key,
                cands,
                functional[key],
                families.get(key),
                NewStatements(episode_id, cands, now, order, seq),
            )
            continue
        state = TimelineState(
            group_id,
            key[0],
            key[1],
            timeline,
            functional=functional[key],
            now=now,
            episode_id=episode_id,
            order=order,
            claims_loader=_loader(claims),
            seq=seq,
            family=families.get(key),
        )
        for outcome in apply_in_order(state, cands, episode_id):
            _count(result, outcome)
        new_facts, updates, links_add, links_remove = state.finish()
        plan.facts_new.extend(new_facts)
        plan.facts_update.extend(updates)
        plan.links_add.extend(links_add)
        plan.links_remove.extend(links_remove)
        plan.provenance.extend(state.provenance)
        plan.endings.extend(state.endings)
        plan.claims_reset.extend(state.claims_reset)
        result.superseded.extend(state.superseded_pairs)
        result.contradictions.extend(state.contradiction_pairs)
    plan.mentions = [(episode_id, eid) for eid in dict.fromkeys(resolution.by_name.values())]
    return plan, result


def _count(result: IngestResult, outcome: Outcome) -> None:
    if outcome.status == "added" or outcome.status == "corrected":
        result.facts_added += 1
    elif outcome.status == "duplicate":
        result.facts_duplicate += 1


def _loader(
    claims: dict[str, tuple[list[ProvenanceRow], list[ProvenanceRow]]],
) -> Callable[[str], tuple[list[ProvenanceRow], list[ProvenanceRow]]]:
    """The stored claims of a fact, from the rows already read for the timelines."""

    def load(fact_id: str) -> tuple[list[ProvenanceRow], list[ProvenanceRow]]:
        found = claims.get(fact_id, ([], []))
        return list(found[0]), list(found[1])

    return load


def _rebuild(
    reader: StoreReader,
    plan: WritePlan,
    result: IngestResult,
    group_id: str,
    key: tuple[str, str],
    cands: Sequence[Candidate],
    functional: bool,
    family: Family | None,
    new: NewStatements,
) -> None:
    """Replay the whole timeline (expired facts included: a correction stated later may
    expire differently) with the episode's candidates in their stated place."""
    pairs = [(key[0], m) for m in family.members] if family is not None else [key]
    loaded = reader.timelines(group_id, pairs, include_expired=True)
    timeline = merge_timelines([loaded[p] for p in pairs]) if family else loaded[key]
    provenance, endings = reader.fact_claims([f.id for f in timeline.facts])
    rebuilt = rebuild_timeline(
        group_id,
        key,
        timeline,
        provenance,
        endings,
        functional=functional,
        keep=lambda row: True,
        now=new.now,
        family=family,
        new=new,
    )
    for outcome in rebuilt.outcomes:
        _count(result, outcome)
    plan.delete_fact_ids.extend(rebuilt.delete_fact_ids)
    plan.facts_new.extend(rebuilt.facts_new)
    plan.facts_update.extend(rebuilt.facts_update)
    plan.claims_reset.extend(rebuilt.claims_reset)
    plan.provenance.extend(rebuilt.provenance)
    plan.endings.extend(rebuilt.endings)
    plan.links_add.extend(rebuilt.links_add)
    plan.links_remove.extend(rebuilt.links_remove)
    for link in rebuilt.links_add:
        if link.kind == "SUPERSEDES":
            result.superseded.append((link.dst, link.src))
        else:
            result.contradictions.append((link.src, link.dst))
