"""The rules extractor's clause grammar: ``SUBJECT MODIFIERS* TRIGGER OBJECT`` over ``TRIGGERS``.

The subject is read first (or inherited: "… and joined Globex"); then, at each position, every
trigger the subject kind allows is tried, and when none matches one modifier word is consumed
("don't", "really", "no longer") and the triggers are tried again. The modifiers decide the
fact's kind: a modal or intention gives no fact, a negation a ``negate``, "never"/"always" a
pair the sentence later folds into one correction. The trigger's ``form`` names the reader of
its object, below.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .corrections import _lookup
from .drafts import _Draft, _State, _Subject, _subject_type, _task_like
from .sentences import _Clause
from .table import _AS_ROLE, _MOD, _NOT_SUFFIX, _OVER, _SELF_CORRECTION, _SUBJECT, TRIGGERS, Trigger
from .text import (
    _STOP_PLACE,
    _STOP_THING,
    _cut,
    _is_capitalised,
    _np_name,
    _place,
    _same,
    _squash,
    _strip_v,
    _thing,
    _things,
    _tidy,
    _to_gerund,
    _valid,
)
from .words import (
    _BE_NEG,
    _CONFIDENCE,
    _MODIFIERS,
    _NAME_STOP,
    _PRONOUNS,
    _WEAK,
    ENTITY,
    ORG,
    PERSON,
)


def _subject(text: str, clause: _Clause, st: _State) -> _Subject | None:
    """The clause's subject; a second-person or pronoun subject ("you", "he") is none."""
    match = _SUBJECT.match(text)
    subject: _Subject | None = None
    if match:
        if match.group("fp"):
            subject = _Subject(st.speaker, "fp", PERSON, match.end())
        elif match.group("kin") or match.group("pet"):
            noun = _squash(match.group("kin") or match.group("pet")).lower()
            is_pet = match.group("pet") is not None
            if match.group("kname"):
                name = match.group("kname")
                if name.split()[0] in _NAME_STOP:
                    name = ""
                if name:
                    subject = _Subject(name, "pet" if is_pet else "kin",
                                       ENTITY if is_pet else PERSON, match.end())
            if subject is None:
                end = match.end("kin") if match.group("kin") else match.end("pet")
                subject = _Subject(f"{st.speaker}'s {noun}", "pet" if is_pet else "kin",
                                   ENTITY if is_pet else PERSON, end)
        elif match.group("np"):
            name, _mine = _np_name(match.group("np"), st.speaker)
            if name and name.lower() not in _PRONOUNS:
                subject = _Subject(name, "np", ENTITY, match.end())
        elif match.group("name"):
            name = match.group("name").rstrip(".")
            tokens = name.split()
            if tokens and tokens[0] not in _NAME_STOP and tokens[0] not in ("I",):
                subject = _Subject(name, "name", ENTITY, match.end("name"))
    if subject is None and clause.inherit and st.last_subject is not None:
        last = st.last_subject
        subject = _Subject(last.name, last.kind, last.type, 0)
    return subject


def grammar(text: str, clause: _Clause, st: _State) -> list[_Draft]:
    """The drafts of one clause read as SUBJECT MODIFIERS* TRIGGER OBJECT ([] if it is not)."""
    subject = _subject(text, clause, st)
    if subject is None:
        return []
    if subject.end == 0 and st.last_modal:
        return []
    st.last_subject = subject
    st.last_modal = False
    if subject.end == 0:
        text = " " + text  # an inherited subject: "... and joined Globex"
    pos = subject.end
    mods: list[str] = []
    for _ in range(14):  # at most 14 modifiers: a longer run is not a clause this reads
        for trig in TRIGGERS:
            if subject.kind not in trig.subjects:
                continue
            match = trig.rx.match(text, pos)
            if match is None:
                continue
            drafts = _apply(trig, match, text[match.end():], subject, mods, st)
            if drafts is not None:
                return drafts
        mod = _MOD.match(text, pos)
        if mod is None:
            return []
        mods.append(_squash(mod.group("m").lower()))
        if _MODIFIERS.get(mods[-1]) == "modal":
            st.last_modal = True
        pos = mod.end()
    return []


@dataclass(slots=True)
class _Reading:
    """A matched trigger, for its form's reader."""

    trig: Trigger
    match: re.Match[str]
    rest: str  # the text after the trigger: the object and whatever follows it
    subject: _Subject
    kind: str
    negated: bool
    base: dict[str, Any]  # the draft fields every fact of this clause shares
    st: _State


def _apply(
    trig: Trigger, match: re.Match[str], rest: str, subject: _Subject, mods: list[str], st: _State
) -> list[_Draft] | None:
    """Drafts for a matched trigger; None lets the next trigger try."""
    cats = {_MODIFIERS.get(m, "adv") for m in mods}
    if "modal" in cats:
        return []
    negated = bool(cats & {"neg", "never", "ended"})
    be = "be" in cats or any(m in _BE_NEG for m in mods)
    if trig.needs_be and not be:
        return None
    if subject.kind == "name" and not _agrees(match.group(), mods, cats, be):
        return None
    groups = match.groupdict()
    if groups.get("past") and not (cats & {"have", "neg", "never", "ended"}):
        return []  # simple past ("I lived in Paris"): not known to hold now
    style = "ended" if cats & {"ended"} or re.search(r"\banymore\b|\bany more\b", rest, re.I) \
        else "not"
    if re.search(r"\b(?:anymore|any\s+more|no\s+more)\b", rest, re.I):
        negated = True
    kind = "negate" if negated else "assert"
    base: dict[str, Any] = {
        "subject": subject.name,
        "subject_kind": subject.kind,
        "never": "never" in cats,
        "always": "always" in cats,
        "negation": style,
    }
    drafts = FORMS[trig.form](_Reading(trig, match, rest, subject, kind, negated, base, st))
    for draft in drafts:
        draft.subject_type = _subject_type(subject, draft.predicate)
    return drafts


# A named subject is one person or thing: "Maya likes", "Maya is using", "Maya doesn't like";
# "Tools like Trello", "Consider using X" and "Websites are a …" are no statements about a name.
_BASE_VERB = re.compile(r"\s*(?i:like|love|enjoy|adore|hate|dislike|detest|loathe|prefer|use|live|"
                        r"reside|work|move)\b")
_GERUND = re.compile(r"\s*[a-z]+ing\b", re.I)
_PLURAL_BE = frozenset({"are", "were", "'re", "aren't", "arent", "weren't", "werent", "have",
                        "'ve", "do", "don't", "dont", "haven't", "havent"})


def _agrees(verb: str, mods: list[str], cats: set[str], be: bool) -> bool:
    if any(m in _PLURAL_BE for m in mods):
        return False
    if _BASE_VERB.match(verb) and not cats & {"do", "neg", "ended", "never", "have", "modal"}:
        return False
    return not (_GERUND.match(verb) and not be)


# ----------------------------------------------------------------------------- object forms


def _place_form(r: _Reading) -> list[_Draft]:
    """A name span (home, employer), with "X, actually Y" / "Y, not X" inside the clause."""
    trig, kind = r.trig, r.kind
    if trig.ends:
        if r.negated:
            return []  # "I didn't move out of X" says nothing about now
        kind = "negate"
        r.base["negation"] = "ended"
    drafts = _with_corrections(r.rest, _place, trig.predicate, trig.object_type, kind,
                               r.subject, r.base, functional=True)
    for d in drafts:
        d.move = trig.move
    if trig.named_when is not None and trig.named_when.match(r.match.group()):
        drafts = [d for d in drafts if _is_capitalised(d.target)]
    role_as = _AS_ROLE.search(r.rest) if trig.also_role else None
    if drafts and role_as is not None:
        role = _valid(_cut(role_as.group("role"), _STOP_PLACE), max_words=4)
        if role is not None:
            drafts.append(_Draft(predicate="has_role", value=role, kind=kind,
                                 subject_type=r.subject.type, **r.base))
    return drafts


def _left_form(r: _Reading) -> list[_Draft]:
    """ "I left X": an employer, unless a known fact says the speaker lived in X."""
    if r.negated:
        return []
    obj = _place(r.rest)
    job = r.match.groupdict().get("job")
    if obj is None or (not job and not _is_capitalised(obj)):
        return []
    predicate, otype, conf = r.trig.predicate, r.trig.object_type, _WEAK
    found: str = obj
    prior = _lookup(r.st, lambda p: _same(p.target, found)
                    and p.predicate in ("lives_in", "works_at"))
    if job:
        conf = _CONFIDENCE
    elif prior is not None:
        predicate, otype, conf = prior.predicate, prior.object_type, _CONFIDENCE
    return [_Draft(object=obj, predicate=predicate, object_type=otype, kind="negate",
                   confidence=conf, subject_type=r.subject.type,
                   **{**r.base, "negation": "ended"})]


def _role_form(r: _Reading) -> list[_Draft]:
    """A job title ("a nurse at X", "work as a nurse (at X)"); the "at X" is works_at too."""
    role: str | None = r.match.groupdict().get("role")
    org_rest: str | None = r.rest
    if role is None:
        parts = re.split(r"\s+(?i:at|for|with)\s+", r.rest, maxsplit=1)
        role = _cut(parts[0], _STOP_THING)
        org_rest = parts[1] if len(parts) > 1 else None
    role_v = _valid(role, max_words=4)
    if role_v is None:
        return []
    drafts = [_Draft(predicate=r.trig.predicate, value=role_v, kind=r.kind,
                     subject_type=r.subject.type, **r.base)]
    if org_rest is not None:
        org = _place(org_rest)
        if org is not None:
            drafts.append(_Draft(predicate="works_at", object=org, object_type=ORG,
                                 kind=r.kind, subject_type=r.subject.type, **r.base))
    return drafts


def _list_form(r: _Reading) -> list[_Draft]:
    return _list_drafts(r.rest, r.trig.predicate, r.kind, r.subject, r.base)


def _prefers_form(r: _Reading) -> list[_Draft]:
    """ "X over/to/rather than Y": X is the fact, Y the statement's detail."""
    over = _OVER.search(_to_gerund(_squash(r.rest)))
    head = _to_gerund(_squash(r.rest))
    detail = None
    if over and not head.lower().startswith("to "):
        head = head[: over.start()]
        detail = _thing(over.group("y"))
    obj = _thing(head)
    if obj is None:
        return []
    after = _squash(head)[len(obj):]
    bare_gerund = " " not in obj and obj.lower().endswith("ing")
    if bare_gerund and re.match(r"\s+(?i:with|for|on|at|in|to)\b", after):
        return []  # "I prefer working with a local attorney": "working" alone names nothing
    return [_Draft(predicate=r.trig.predicate, object=obj, kind=r.kind, detail=detail,
                   subject_type=r.subject.type, **r.base)]


def _thing_form(r: _Reading) -> list[_Draft]:
    obj = _thing(r.rest, max_words=r.trig.max_words)
    if obj is None or obj.split()[0].lower() in r.trig.reject_first:
        return []
    return [_Draft(predicate=r.trig.predicate, object=obj, object_type=r.trig.object_type,
                   kind=r.kind, subject_type=r.subject.type, **r.base)]


def _named_form(r: _Reading) -> list[_Draft]:
    """A capitalised name only: "married to a doctor" names nobody."""
    obj = _place(r.rest)
    if obj is None or not _is_capitalised(obj):
        return []
    return [_Draft(predicate=r.trig.predicate, object=obj, object_type=r.trig.object_type,
                   kind=r.kind, subject_type=r.subject.type, **r.base)]


def _status_form(r: _Reading) -> list[_Draft]:
    """A status of something task-like, with at most a reason after it ("blocked by X")."""
    if not _task_like(r.subject):
        return []
    tail = _tidy(r.rest)
    if tail and not re.match(r"(?i:by|because|since|on|due|until|for|with|and|but)\b", tail):
        return []
    status = _squash(r.match.group("status").lower())
    return [_Draft(predicate=r.trig.predicate, value=status, kind=r.kind,
                   subject_type=r.subject.type, **r.base)]


def _version_form(r: _Reading) -> list[_Draft]:
    return [_Draft(predicate=r.trig.predicate, value=_strip_v(r.match.group("ver")),
                   kind=r.kind, subject_type=r.subject.type, **r.base)]


# The reader of each ``Trigger.form`` name.
FORMS: dict[str, Callable[[_Reading], list[_Draft]]] = {
    "place": _place_form,
    "left": _left_form,
    "role": _role_form,
    "list": _list_form,
    "prefers": _prefers_form,
    "thing": _thing_form,
    "named": _named_form,
    "status": _status_form,
    "version": _version_form,
}


def _with_corrections(
    rest: str,
    reader: Callable[[str], str | None],
    predicate: str,
    otype: str,
    kind: str,
    subject: _Subject,
    base: dict[str, Any],
    *,
    functional: bool,
) -> list[_Draft]:
    """Read the object, honouring "X, actually Y" and "Y, not X" inside the clause."""
    squashed = _squash(rest)
    self_fix = _SELF_CORRECTION.match(squashed)
    if self_fix and kind == "assert":
        new = reader(self_fix.group("new"))
        old = reader(self_fix.group("old"))
        if new is not None:
            return [_Draft(predicate=predicate, object=new, object_type=otype, kind="correct",
                           replaces=old, subject_type=subject.type, **base)]
    suffix = _NOT_SUFFIX.match(squashed)
    if suffix and kind == "assert":
        new = reader(suffix.group("new"))
        old = reader(suffix.group("old"))
        if new is not None and old is not None and not _same(new, old):
            if functional:
                return [_Draft(predicate=predicate, object=new, object_type=otype,
                               kind="correct", replaces=old, subject_type=subject.type,
                               **base)]
            return [
                _Draft(predicate=predicate, object=new, object_type=otype, kind="assert",
                       subject_type=subject.type, **base),
                _Draft(predicate=predicate, object=old, object_type=otype, kind="negate",
                       subject_type=subject.type, **{**base, "negation": "not"}),
            ]
    obj = reader(rest)
    if obj is None:
        return []
    return [_Draft(predicate=predicate, object=obj, object_type=otype, kind=kind,
                   subject_type=subject.type, **base)]


def _list_drafts(
    rest: str, predicate: str, kind: str, subject: _Subject, base: dict[str, Any]
) -> list[_Draft]:
    squashed = _squash(rest)
    suffix = _NOT_SUFFIX.match(squashed)
    negated_items: list[str] = []
    if suffix and kind == "assert":
        old = _thing(suffix.group("old"))
        if old is not None:
            negated_items.append(old)
            squashed = suffix.group("new")
    drafts = [
        _Draft(predicate=predicate, object=item, kind=kind, subject_type=subject.type, **base)
        for item in _things(squashed)
    ]
    if drafts:
        drafts.extend(
            _Draft(predicate=predicate, object=item, kind="negate",
                   subject_type=subject.type, **{**base, "negation": "not"})
            for item in negated_items
        )
    return drafts
