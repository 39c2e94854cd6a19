"""The rules extractor's whole-clause readers: the ``CLAUSE_PATTERNS`` table applied, and pets.

A whole-clause pattern ("my name is X", "Ana is my sister", "the endpoint is /v2") is tried before
the clause grammar, because its shape says more than any verb in it. Each table entry names a
reader here; a reader returns the drafts, ``[]`` (the clause is read and gives nothing), or None
(the match is not what the pattern means: the next entry is tried).
"""

from __future__ import annotations

import re
from collections.abc import Callable

from .drafts import _Draft, _State
from .table import _PET_ALSO, CLAUSE_PATTERNS, PET_PATTERNS, ClausePattern
from .text import (
    _ARTICLE,
    _VERSION_NOUN,
    _is_capitalised,
    _np_name,
    _place,
    _same,
    _snake,
    _squash,
    _strip_v,
    _thing,
    _valid,
)
from .words import (
    _ATTRIBUTES,
    _NAME_STOP,
    _NOT_NAMES,
    _PRONOUNS,
    _RELATIONS,
    ENTITY,
    ORG,
    PERSON,
    PLACE,
)

_Reader = Callable[[ClausePattern, re.Match[str], _State], "list[_Draft] | None"]


def probe(text: str, st: _State) -> dict[str, bool]:
    """The cheap tests a table entry's ``when`` names, computed once per clause."""
    lower = text.lower()
    mine = lower.startswith(("my ", "our "))
    return {
        "at_start": st.at_start,
        "call_me": "call me" in lower,
        "mine": mine,
        "mine_name": mine and "name" in lower,
        "digits": any(ch.isdigit() for ch in text),
        "fav": "fav" in lower,
        "my_anywhere": " my " in lower or " our " in lower or mine,
        "where": "where" in lower,
        "slash": "/" in text,
    }


def whole_clause(text: str, st: _State) -> list[_Draft] | None:
    """The drafts of the first table entry that reads the clause; None when none does."""
    flags = probe(text, st)
    for pattern in CLAUSE_PATTERNS:
        if not flags[pattern.when]:
            continue
        match = next((m for rx in pattern.rxs if (m := rx.match(text)) is not None), None)
        if match is None:
            continue
        drafts = READERS[pattern.reader](pattern, match, st)
        if drafts is not None:
            return drafts
    return None


# ----------------------------------------------------------------------------- readers


def _speaker_name(pattern: ClausePattern, match: re.Match[str], st: _State) -> list[_Draft] | None:
    # "I'm Fine" / "call me Sorry" describe the speaker; they do not name them.
    if match.group("n").split()[0] in _NOT_NAMES:
        return None
    return [_Draft(st.speaker, PERSON, pattern.predicate, value=match.group("n"),
                   subject_kind="fp")]


def _stated_name(pattern: ClausePattern, match: re.Match[str], st: _State) -> list[_Draft] | None:
    if match.group("n").lower() in _PRONOUNS:
        return None
    return [_Draft(st.speaker, PERSON, pattern.predicate, value=match.group("n"),
                   subject_kind="fp")]


def _age(pattern: ClausePattern, match: re.Match[str], st: _State) -> list[_Draft] | None:
    if not 0 < int(match.group("n")) < 130:
        return None  # "I'm 200" is a count of something, not an age
    return [_Draft(st.speaker, PERSON, pattern.predicate, value=int(match.group("n")),
                   subject_kind="fp")]


def _pet_name(pattern: ClausePattern, match: re.Match[str], st: _State) -> list[_Draft] | None:
    return [_Draft(st.speaker, PERSON, pattern.predicate, object=match.group("n"),
                   subject_kind="fp", detail=match.group("kind").lower())]


def _favorite(pattern: ClausePattern, match: re.Match[str], st: _State) -> list[_Draft] | None:
    return _favorite_drafts(match.group("owner"), match.group("t"), match.group("rest"),
                            bool(match.group("neg")), st)


def _favorite_rev(pattern: ClausePattern, match: re.Match[str], st: _State) -> list[_Draft] | None:
    return _favorite_drafts(None, match.group("t"), match.group("x"), False, st)


def _favorite_drafts(
    owner: str | None, thing: str, rest: str, negated: bool, st: _State
) -> list[_Draft]:
    predicate = _snake("favorite " + thing)
    if predicate is None:
        return []
    obj = _thing(rest)
    if obj is None:
        return []
    if owner is not None and owner in _NAME_STOP:
        return []
    subject = owner or st.speaker
    return [_Draft(subject, PERSON, predicate, object=obj,
                   kind="negate" if negated else "assert", negation="not",
                   subject_kind="name" if owner else "fp")]


def _relation(pattern: ClausePattern, match: re.Match[str], st: _State) -> list[_Draft] | None:
    """A relative or a manager by name; ", not my <other>" makes it a correction."""
    if match.group("n").split()[0] in _NAME_STOP | _NOT_NAMES:
        return None
    name = match.group("n")
    predicate = _RELATIONS[match.group("rel").lower()]
    kind = "correct" if match.groupdict().get("old") else "assert"
    if predicate == "has_manager":
        return [_Draft(st.speaker, PERSON, predicate, object=name, object_type=PERSON,
                       kind=kind, subject_kind="fp")]
    return [_Draft(name, PERSON, predicate, object=st.speaker, object_type=PERSON,
                   kind=kind, subject_kind="name")]


def _attribute(pattern: ClausePattern, match: re.Match[str], st: _State) -> list[_Draft] | None:
    attr = _squash(match.group("attr").lower())
    predicate = _ATTRIBUTES.get(attr, "")
    kind = "negate" if match.group("neg") else "assert"
    rest = match.group("rest")
    sp = st.speaker
    if predicate in ("works_at", "married_to"):
        obj = _place(rest)
        if obj is None or not _is_capitalised(obj):
            return []
        otype = ORG if predicate == "works_at" else PERSON
        return [_Draft(sp, PERSON, predicate, object=obj, object_type=otype, kind=kind,
                       negation="not", subject_kind="fp")]
    if predicate == "age":
        number = re.match(r"\s*(\d{1,3})\b", rest)
        if not number:
            return []
        return [_Draft(sp, PERSON, "age", value=int(number.group(1)), kind=kind,
                       subject_kind="fp")]
    if predicate == "has_role":
        role = _thing(_ARTICLE.sub("", rest.strip()), max_words=4)
        if role is None:
            return []
        return [_Draft(sp, PERSON, "has_role", value=role, kind=kind, negation="not",
                       subject_kind="fp")]
    if predicate == "name":
        return []  # read by the stated_name entry (capitalised names only)
    # email, phone, birthday: the first token is the value ("my email is a@b.c, call me").
    token = rest.strip().split()[0].rstrip(".,;!?") if rest.strip() else ""
    if not token:
        return []
    return [_Draft(sp, PERSON, predicate, value=token, kind=kind, negation="not",
                   subject_kind="fp")]


def _where_i_live(pattern: ClausePattern, match: re.Match[str], st: _State) -> list[_Draft] | None:
    place = _place(match.group("x"))
    if place is None:
        return []
    return [_Draft(st.speaker, PERSON, pattern.predicate, object=place, object_type=PLACE,
                   subject_kind="fp")]


def _endpoint(pattern: ClausePattern, match: re.Match[str], st: _State) -> list[_Draft] | None:
    path = match.group("path").rstrip(".,;:!?)\"'")
    if not path:
        return []
    owner = match.group("owner")
    if owner:
        subject, _mine = _np_name(owner.strip(), st.speaker)
    else:
        subject, _mine = _np_name(match.group("np"), st.speaker)
    # Without an owner the subject is the literal noun, so that "the endpoint is /v1" and "the
    # endpoint was never /v1, it was always /v2" agree.
    subject = _squash(subject) or "endpoint"
    if subject.lower() in _PRONOUNS:
        subject = "endpoint"
    kind = "np" if subject[:1].islower() else "name"
    return [_Draft(subject, ENTITY, pattern.predicate, value=path,
                   kind="negate" if match.group("neg") else "assert", negation="not",
                   subject_kind=kind)]


def _fp_version(pattern: ClausePattern, match: re.Match[str], st: _State) -> list[_Draft] | None:
    tech = _valid(match.group("x"))
    explicit = re.search(r"(?i:version|\sv\d)", match.group()) is not None
    # "we use 2 monitors" is no version: it needs the word "version", a capitalised X or a
    # dotted version.
    if tech is None or not (explicit or tech[:1].isupper() or "." in match.group("ver")):
        return []
    return [_Draft(tech, ENTITY, pattern.predicate, value=_strip_v(match.group("ver")),
                   subject_kind="name")]


def _bare_version(pattern: ClausePattern, match: re.Match[str], st: _State) -> list[_Draft] | None:
    return [_Draft("version", ENTITY, pattern.predicate, value=_strip_v(match.group("ver")),
                   subject_kind="np")]


def _np_version(pattern: ClausePattern, match: re.Match[str], st: _State) -> list[_Draft] | None:
    name, _mine = _np_name(match.group("x"), st.speaker)
    name = _VERSION_NOUN.sub("", name).strip() or "version"
    if name.lower() in _PRONOUNS or name.lower() in ("i", "we"):
        return []
    kind = "np" if name[:1].islower() else "name"
    return [_Draft(name, ENTITY, pattern.predicate, value=_strip_v(match.group("ver")),
                   subject_kind=kind)]


# The reader of each ``ClausePattern.reader`` name.
READERS: dict[str, _Reader] = {
    "speaker_name": _speaker_name,
    "stated_name": _stated_name,
    "age": _age,
    "pet_name": _pet_name,
    "favorite": _favorite,
    "favorite_rev": _favorite_rev,
    "relation": _relation,
    "attribute": _attribute,
    "where_i_live": _where_i_live,
    "endpoint": _endpoint,
    "fp_version": _fp_version,
    "bare_version": _bare_version,
    "np_version": _np_version,
}


# ----------------------------------------------------------------------------- pets


def pets(text: str, st: _State, found: list[_Draft]) -> list[_Draft]:
    """has_pet for every "my dog Rex" / "a cat named Tom" in the clause, besides its facts."""
    if any(d.predicate == "has_pet" for d in found):
        return []
    if any(d.kind == "negate" for d in found):
        return []
    out: list[_Draft] = []
    for rx in PET_PATTERNS:
        if rx is _PET_ALSO and not out:
            break
        for match in rx.finditer(text):
            name = match.group("n")
            if name in _NAME_STOP or name in _NOT_NAMES:
                continue
            if any(_same(d.target, name) for d in out):
                continue
            out.append(_Draft(st.speaker, PERSON, "has_pet", object=name,
                              subject_kind="fp", detail=_squash(match.group("kind").lower())))
    return out
