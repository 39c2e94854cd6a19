"""The rules extractor's corrections: "X was never A, it was always B", "it's not A, it's B",
"Sorry, I meant Lyon", and the look-back over known facts they need.

A correction names the new value; which fact it corrects comes from the words before "was never"
("my email", "the gripper firmware version"), the shape of the new value (a path, a version, a
status word) or, for a pronoun or a bare value, the most recent known fact it fits: this
episode's drafts, then ``context.previous`` (newest first), then ``context.facts``.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from ..._models import Scalar
from .._base import ExtractionContext
from .drafts import _Draft, _from_prior, _Prior, _State
from .table import _NEVER_ALWAYS, _NOT_BUT, _NOT_SUFFIX
from .text import (
    _ARTICLE,
    _BARE_LEAD,
    _ENDPOINT_NOUN,
    _IS_PATH,
    _IS_STATUS,
    _IS_VERSION,
    _STOP_THING,
    _VERSION_NOUN,
    _contrast_value,
    _cut,
    _np_name,
    _same,
    _snake,
    _squash,
    _strip_v,
    _valid,
)
from .words import _ATTRIBUTES, _OBJECT_TYPES, _PRONOUNS, ENTITY, PERSON


def _contrast(text: str, st: _State) -> _Draft | None:
    """Form A ("X was never A, it was always B") and form B ("it's not A, it's B")."""
    stripped = text.strip().rstrip(".!")
    lower = stripped.lower()
    if "never" not in lower and "not" not in lower and "n't" not in lower:
        return None
    match = _NEVER_ALWAYS.match(stripped) if "never" in lower else None
    allow_is = True
    if match is None:
        match = _NOT_BUT.match(stripped)
        allow_is = False
        if match is None:
            return None
        if not match.group("mid") and "but" not in match.group("sep").lower():
            return None
    np = _squash(match.group("np"))
    if re.match(r"(?i:i|we)(?:\b|')", np) or re.match(r"(?i:i'm|i've|we're)", np):
        return None
    old = _contrast_value(match.group("old"))
    new = _contrast_value(match.group("new"))
    if old is None or new is None or _same(old, new):
        return None
    return _resolve_contrast(np, old, new, st, allow_is=allow_is)


def _resolve_contrast(
    np: str, old: str, new: str, st: _State, *, allow_is: bool
) -> _Draft | None:
    sp = st.speaker
    words = np.split()
    pronoun = not words or (len(words) == 1 and words[0].lower() in _PRONOUNS)
    old_bare = _ARTICLE.sub("", old)
    new_bare = _ARTICLE.sub("", new)

    def corrected(subject: str, stype: str, predicate: str, *, as_object: bool,
                  otype: str = ENTITY, kind: str = "name") -> _Draft:
        if as_object:
            return _Draft(subject, stype, predicate, object=new_bare, object_type=otype,
                          kind="correct", replaces=old_bare, subject_kind=kind)
        value: Scalar = _strip_v(new) if predicate == "uses_version" else new
        replaces = _strip_v(old) if predicate == "uses_version" else old
        return _Draft(subject, stype, predicate, value=value, kind="correct",
                      replaces=replaces, subject_kind=kind)

    if pronoun:
        prior = _lookup(st, lambda p: _same(p.target, old_bare) or _same(p.target, old))
        if prior is not None:
            return _from_prior(prior, old_bare, new_bare)
        if _IS_PATH.match(new):
            return corrected("endpoint", ENTITY, "has_endpoint", as_object=False, kind="np")
        if _IS_VERSION.match(new) and _IS_VERSION.match(old):
            return corrected("version", ENTITY, "uses_version", as_object=False, kind="np")
        return None
    lead = words[0].lower()
    if lead in ("my", "our") and len(words) > 1:
        noun = " ".join(words[1:])
        if _ENDPOINT_NOUN.fullmatch(" " + noun):
            return corrected(sp, PERSON, "has_endpoint", as_object=False, kind="fp")
        if _VERSION_NOUN.fullmatch(" " + noun):
            return corrected(sp, PERSON, "uses_version", as_object=False, kind="fp")
        predicate = _ATTRIBUTES.get(noun.lower()) or _snake(noun)
        if predicate is None:
            return None
        if predicate.startswith("favorite_") or predicate in ("works_at", "married_to"):
            return corrected(sp, PERSON, predicate, as_object=True,
                             otype=_OBJECT_TYPES.get(predicate, ENTITY), kind="fp")
        return corrected(sp, PERSON, predicate, as_object=False, kind="fp")
    name, _mine = _np_name(np, sp)
    if not name:
        return None
    kind = "np" if name[:1].islower() else "name"
    if _ENDPOINT_NOUN.search(name):
        owner = _ENDPOINT_NOUN.sub("", name).strip()
        return corrected(owner or "endpoint", ENTITY, "has_endpoint", as_object=False,
                         kind="np" if not owner or owner[:1].islower() else "name")
    if _VERSION_NOUN.search(name):
        owner = _VERSION_NOUN.sub("", name).strip()
        return corrected(owner or "version", ENTITY, "uses_version", as_object=False,
                         kind="np" if not owner or owner[:1].islower() else "name")
    if len(name.split()) > 5:
        return None
    prior = _lookup(
        st, lambda p: _same(p.subject, name) and (_same(p.target, old_bare)
                                                  or _same(p.target, old))
    )
    if prior is not None:
        return _from_prior(prior, old_bare, new_bare)
    if _IS_PATH.match(new):
        return corrected(name, ENTITY, "has_endpoint", as_object=False, kind=kind)
    if _IS_VERSION.match(new) and _IS_VERSION.match(old):
        return corrected(name, ENTITY, "uses_version", as_object=False, kind=kind)
    if _IS_STATUS.match(new):
        return corrected(name, ENTITY, "has_status", as_object=False, kind=kind)
    if _ARTICLE.match(new) and _ARTICLE.match(old):
        return corrected(name, ENTITY, "is_a", as_object=True, kind=kind)
    if allow_is:
        draft = corrected(name, ENTITY, "is", as_object=False, kind=kind)
        draft.confidence = 0.6
        return draft
    return None


def _bare_correction(text: str, st: _State) -> _Draft | None:
    """ "Sorry, I meant Lyon" / "Correction: Lyon, not Paris" → correct the last fact."""
    body = _BARE_LEAD.sub("", _squash(text).strip(" .!"))
    hint: str | None = None
    suffix = _NOT_SUFFIX.match(body)
    if suffix:
        body, hint = suffix.group("new"), _valid(suffix.group("old"))
    if re.match(r"(?i:i|we|my|our|you|he|she|they)\b", body):
        return None
    first = body.split()[0] if body.split() else ""
    new = first if _IS_PATH.match(first) else _valid(_cut(body, _STOP_THING))
    if new is None:
        return None
    prior: _Prior | None = None
    if hint is not None:
        prior = _lookup(st, lambda p: _same(p.target, hint or ""))
    if prior is None:
        prior = _lookup(st, lambda p: True, latest_only=True)
    if prior is None or _same(prior.target, new):
        return None
    draft = _from_prior(prior, prior.target, new)
    draft.confidence = 0.8
    return draft


def _lookup(
    st: _State, want: Callable[[_Prior], bool], *, latest_only: bool = False
) -> _Prior | None:
    """The most recent known fact matching ``want``: this episode, previous, context.facts."""
    for draft in reversed(st.drafts):
        if draft.kind == "negate":
            continue
        prior = _Prior(draft.subject, draft.subject_type, draft.predicate, draft.target,
                       draft.object is not None, draft.object_type, draft.value)
        if want(prior):
            return prior
        if latest_only:
            return None
    for prior in _previous(st):
        if want(prior):
            return prior
        if latest_only:
            return None
    if latest_only:
        return None
    for record in st.context.facts:
        if not record.is_current():
            continue
        is_object = record.object is not None
        stype = PERSON if record.subject == st.speaker else ENTITY
        prior = _Prior(record.subject, stype, record.predicate, record.target, is_object,
                       _OBJECT_TYPES.get(record.predicate, ENTITY), record.value)
        if want(prior):
            return prior
    return None


def _previous(st: _State) -> list[_Prior]:
    """Facts of ``context.previous`` (newest episode first, last fact first), computed once."""
    if st.previous_cache is not None:
        return st.previous_cache
    out: list[_Prior] = []
    if st.use_previous and st.context.previous:
        sub = ExtractionContext(speaker=st.context.speaker, predicates=st.context.predicates)
        ordered = sorted(st.context.previous, key=lambda e: e.reference_time, reverse=True)
        for episode in ordered:
            for draft in reversed(st.reread(episode, sub)):
                if draft.kind == "negate":
                    continue
                out.append(_Prior(draft.subject, draft.subject_type, draft.predicate,
                                  draft.target, draft.object is not None, draft.object_type,
                                  draft.value))
    st.previous_cache = out
    return out

