"""The rules extractor's drafts: the mutable fact being built, and how it becomes public.

A ``_Draft`` is what a pattern produces; corrections later in the same episode fold into the
drafts they replace (``_finish``), and each survivor becomes an ``ExtractedFact`` with a plain
English ``statement`` from ``_TEMPLATES``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from ..._models import EpisodeRecord, ExtractedEntity, ExtractedFact, Scalar
from .._base import ExtractionContext
from .text import _article, _key, _same, _strip_v
from .words import _CONFIDENCE, _HUMAN_PREDICATES, _RELATIONS, _TASK_WORDS, ENTITY, PERSON


@dataclass(slots=True)
class _Subject:
    name: str
    kind: str  # fp | name | kin | pet | np
    type: str
    end: int = 0


@dataclass(slots=True)
class _Draft:
    subject: str
    subject_type: str
    predicate: str
    object: str | None = None
    value: Scalar | None = None
    object_type: str = ENTITY
    kind: str = "assert"
    replaces: str | None = None
    evidence: str = ""
    valid_from: datetime | None = None
    confidence: float = _CONFIDENCE
    subject_kind: str = "name"
    negation: str = "ended"  # ended ("no longer") | not ("does not")
    never: bool = False
    always: bool = False
    move: bool = False
    detail: str | None = None  # pet kind, "over Y" of a preference
    # A statement's own time: its time phrases are its value ("the launch moved to next Friday"),
    # so the clause's time neither dates nor drops it; valid from the episode's time.
    own_time: bool = False

    @property
    def target(self) -> str:
        return self.object if self.object is not None else str(self.value)


@dataclass(slots=True)
class _Prior:
    subject: str
    subject_type: str
    predicate: str
    target: str
    is_object: bool
    object_type: str
    value: Scalar | None


@dataclass
class _State:
    """One episode's reading: the drafts so far and what later clauses may refer back to."""

    speaker: str
    ref: datetime
    context: ExtractionContext
    # Reads an earlier episode (``context.previous``) for the look-back of bare corrections.
    reread: Callable[[EpisodeRecord, ExtractionContext], list[_Draft]]
    drafts: list[_Draft] = field(default_factory=list)
    last_subject: _Subject | None = None
    # The clause the subject came from was modal ("I'll …"): a clause inheriting the subject
    # ("… and use a soft tone") is modal too.
    last_modal: bool = False
    at_start: bool = True
    use_previous: bool = True
    previous_cache: list[_Prior] | None = None


def _task_like(subject: _Subject) -> bool:
    if subject.kind not in ("name", "np"):
        return False
    if any(ch.isdigit() for ch in subject.name):
        return True
    return any(word.lower().strip(".") in _TASK_WORDS for word in subject.name.split())


def _subject_type(subject: _Subject, predicate: str) -> str:
    if subject.kind in ("fp", "kin"):
        return PERSON
    if subject.kind == "name" and (predicate in _HUMAN_PREDICATES
                                   or predicate.startswith("favorite_")):
        return PERSON
    return ENTITY


def _from_prior(prior: _Prior, old: str, new: str) -> _Draft:
    if prior.is_object:
        return _Draft(prior.subject, prior.subject_type, prior.predicate, object=new,
                      object_type=prior.object_type, kind="correct", replaces=prior.target,
                      subject_kind="name")
    value: Scalar = new
    if isinstance(prior.value, int) and not isinstance(prior.value, bool) and new.isdigit():
        value = int(new)
    elif prior.predicate == "uses_version":
        value = _strip_v(new)
    return _Draft(prior.subject, prior.subject_type, prior.predicate, value=value,
                  kind="correct", replaces=prior.target,
                  subject_kind="np" if prior.subject[:1].islower() else "name")


def _pair_never_always(drafts: list[_Draft], start: int) -> None:
    """ "I never lived in Paris, I've always lived in Lyon" → one correction."""
    window = drafts[start:]
    for neg in [d for d in window if d.kind == "negate" and d.never]:
        for pos in window:
            if pos.kind in ("assert", "correct") and pos.always and pos.predicate == neg.predicate \
                    and _same(pos.subject, neg.subject) and not _same(pos.target, neg.target):
                pos.kind = "correct"
                pos.replaces = neg.target
                drafts.remove(neg)
                break


def _finish(drafts: list[_Draft]) -> list[_Draft]:
    """Fold same-episode corrections into the facts they replace, and drop duplicates."""
    out: list[_Draft] = []
    for draft in drafts:
        if draft.kind == "correct":
            for earlier in list(out):
                if earlier.kind != "assert" or earlier.predicate != draft.predicate:
                    continue
                if not _same(earlier.subject, draft.subject) or _same(earlier.target,
                                                                      draft.target):
                    continue
                if draft.replaces is None or _same(draft.replaces, earlier.target):
                    draft.replaces = earlier.target
                    if draft.valid_from is None:
                        draft.valid_from = earlier.valid_from
                    out.remove(earlier)
        key = (_key(draft.subject), draft.predicate, _key(draft.target), draft.kind)
        if any((_key(d.subject), d.predicate, _key(d.target), d.kind) == key for d in out):
            continue
        out.append(draft)
    return out


_TEMPLATES: dict[str, tuple[str, str, str]] = {
    "lives_in": ("{s} lives in {o}.", "{s} no longer lives in {o}.", "{s} does not live in {o}."),
    "works_at": ("{s} works at {o}.", "{s} no longer works at {o}.", "{s} does not work at {o}."),
    "has_role": ("{s} works as {ao}.", "{s} no longer works as {ao}.",
                 "{s} does not work as {ao}."),
    "likes": ("{s} likes {o}.", "{s} no longer likes {o}.", "{s} does not like {o}."),
    "dislikes": ("{s} dislikes {o}.", "{s} no longer dislikes {o}.",
                 "{s} does not dislike {o}."),
    "prefers": ("{s} prefers {o}.", "{s} no longer prefers {o}.", "{s} does not prefer {o}."),
    "is_a": ("{s} is {ao}.", "{s} is no longer {ao}.", "{s} is not {ao}."),
    "has_pet": ("{s} has a pet named {o}.", "{s} no longer has a pet named {o}.",
                "{s} does not have a pet named {o}."),
    "has_status": ("{s} is {o}.", "{s} is no longer {o}.", "{s} is not {o}."),
    "uses_version": ("{s} is on version {o}.", "{s} is no longer on version {o}.",
                     "{s} is not on version {o}."),
    "has_endpoint": ("The endpoint of {s} is {o}.", "The endpoint of {s} is no longer {o}.",
                     "The endpoint of {s} is not {o}."),
    "uses": ("{s} uses {o}.", "{s} no longer uses {o}.", "{s} does not use {o}."),
    "name": ("{ps} name is {o}.", "{ps} name is no longer {o}.", "{ps} name is not {o}."),
    "age": ("{s} is {o} years old.", "{s} is no longer {o} years old.",
            "{s} is not {o} years old."),
    "married_to": ("{s} is married to {o}.", "{s} is no longer married to {o}.",
                   "{s} is not married to {o}."),
    "is": ("{s} is {o}.", "{s} is no longer {o}.", "{s} is not {o}."),
    "scheduled_for": ("{s} is scheduled for {o}.", "{s} is no longer scheduled for {o}.",
                      "{s} is not scheduled for {o}."),
    "plans_to": ("{s} plans to {o}.", "{s} no longer plans to {o}.", "{s} does not plan to {o}."),
    "decided_to": ("{s} decided to {o}.", "{s} no longer decided to {o}.",
                   "{s} did not decide to {o}."),
    "chose": ("{s} chose {o}.", "{s} no longer chose {o}.", "{s} did not choose {o}."),
    "trying_to": ("{s} is trying to {o}.", "{s} is no longer trying to {o}.",
                  "{s} is not trying to {o}."),
    "works_on": ("{s} is working on {o}.", "{s} is no longer working on {o}.",
                 "{s} is not working on {o}."),
    "has_manager": ("{ps} manager is {o}.", "{ps} manager is no longer {o}.",
                    "{ps} manager is not {o}."),
}
for _word, _predicate in _RELATIONS.items():
    if _predicate == _word + "_of":  # sister_of: "Ana is Maya's sister."
        _TEMPLATES[_predicate] = (f"{{s}} is {{o}}'s {_word}.",
                                  f"{{s}} is no longer {{o}}'s {_word}.",
                                  f"{{s}} is not {{o}}'s {_word}.")


def _statement(d: _Draft) -> str:
    subject = d.subject
    if d.subject_kind == "np" and subject[:1].islower():
        subject = "the " + subject
    target = d.target
    if d.predicate == "has_endpoint" and d.subject == "endpoint":
        templates = ("The endpoint is {o}.", "The endpoint is no longer {o}.",
                     "The endpoint is not {o}.")
    elif d.predicate == "uses_version" and d.subject == "version":
        templates = ("The version is {o}.", "The version is no longer {o}.",
                     "The version is not {o}.")
    elif d.predicate == "has_pet" and d.detail:
        pet = _article(d.detail)
        templates = (f"{{s}} has {pet} named {{o}}.", f"{{s}} no longer has {pet} named {{o}}.",
                     f"{{s}} does not have {pet} named {{o}}.")
    elif d.predicate in _TEMPLATES:
        templates = _TEMPLATES[d.predicate]
    else:
        words = d.predicate.replace("_", " ")
        be = "are" if words.endswith("s") and not words.endswith(("ss", "us", "is")) else "is"
        templates = (f"{{ps}} {words} {be} {{o}}.", f"{{ps}} {words} {be} no longer {{o}}.",
                     f"{{ps}} {words} {be} not {{o}}.")
    index = 0 if d.kind != "negate" else (1 if d.negation == "ended" else 2)
    plural = subject.endswith("s") and not subject.endswith(("ss", "us", "is", "'s"))
    # "the relocation expenses' budget"
    possessive = subject + ("'" if plural and d.subject_kind == "np" else "'s")
    if plural and d.predicate == "scheduled_for":
        are = [t.replace("{s} is ", "{s} are ") for t in templates]
        templates = (are[0], are[1], are[2])
    text = templates[index].format(s=subject, o=target, ao=_article(target) if target else "",
                                   ps=possessive)
    if d.predicate == "prefers" and d.detail and d.kind != "negate":
        text = text[:-1] + f" over {d.detail}."
    return text[:1].upper() + text[1:]


_HAS_FUNCTIONAL_HINT = "functional" in ExtractedFact.model_fields


def _to_fact(d: _Draft, coined: bool) -> ExtractedFact:
    """The public fact; predicates this extractor coins (favorite_*, is, my <attribute>) are
    single-valued attributes, so they carry a ``functional`` hint for the registry."""
    extra: dict[str, Any] = {}
    if coined and _HAS_FUNCTIONAL_HINT:
        extra["functional"] = True
    return ExtractedFact(
        subject=d.subject,
        predicate=d.predicate,
        object=d.object,
        value=d.value if d.object is None else None,
        statement=_statement(d),
        subject_type=d.subject_type,
        object_type=d.object_type if d.object is not None else ENTITY,
        valid_from=d.valid_from,
        kind="negate" if d.kind == "negate" else ("correct" if d.kind == "correct" else "assert"),
        replaces=d.replaces,
        evidence=d.evidence or None,
        confidence=d.confidence,
        **extra,
    )


def _entities(drafts: list[_Draft]) -> list[ExtractedEntity]:
    out: list[ExtractedEntity] = []
    seen: set[tuple[str, str]] = set()
    for d in drafts:
        pairs = [(d.subject, d.subject_type)]
        if d.object is not None:
            pairs.append((d.object, d.object_type))
        for name, etype in pairs:
            key = (_key(name), etype)
            if key not in seen:
                seen.add(key)
                out.append(ExtractedEntity(name=name, type=etype))
    return out
