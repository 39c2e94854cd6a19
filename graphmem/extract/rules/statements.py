"""The rules extractor's first-person statements of plans, decisions, numbers and dates.

A clause the older tables read nothing from is tried here, on its text as written (time phrases
kept: "next Friday" is the value, not a reason to drop the clause):

- settings: "I set the budget to $5,000", "we pushed the launch to March 3", "the launch moved
  to March 3", "my rent went up to $1,500", "I've got a deadline of May 15", "I have a $200
  budget", "our deadline is Friday", "the report is due on June 1", "the demo is scheduled for
  April 8". The noun phrase names the predicate: an amount or quantity noun ("budget", "rent",
  "work hours") becomes that attribute of the speaker (or of the "for X" owner); an event noun
  ("launch", "interview", "my flight") with a date becomes ``scheduled_for`` of that event;
- prices and pay: "I paid $153 for the Ultraboost" (``price`` of the thing), "I earn $85,000 a
  year" (``salary``);
- versions without a product name: "we're on version 3.2", "I upgraded to v4";
- switches: "we switched (from MySQL) to Postgres" → ``uses`` Postgres (and no longer MySQL);
- plans and decisions: "I'm planning to …", "I plan to …", "my plan is to …" → ``plans_to``;
  "I decided to …" → ``decided_to``; "I chose / went with / settled on X" → ``chose``.

Every value must have the shape its noun asks for (an amount, a quantity, a date): "my goal is
to relax" is no number. The bot side of a conversation is not read here: an assistant's "I" is
not the user, and its replies restate or propose rather than state.
"""

from __future__ import annotations

import re

from .drafts import _Draft, _State
from .statement_table import (
    _ALLOCATED,
    _CHANGED,
    _CHOSE,
    _DATE_RX,
    _DECIDED,
    _DUE,
    _EARN,
    _EVENT_DATE,
    _EVENT_RX,
    _FIRST_PERSON,
    _FP_VERSION,
    _FRAMING,
    _HAVE_A,
    _IS,
    _MAX_VP_WORDS,
    _MONEY_RX,
    _MOVED,
    _MY_MOVED,
    _NOT_A_MODIFIER,
    _NOT_A_THING,
    _PAID,
    _PLAN,
    _PROGRESS,
    _PRONOUN_OBJECT,
    _QUANTITY_RX,
    _SCORED,
    _SECOND_PERSON,
    _SET,
    _SWITCH,
    _THOUSANDS,
    _TRYING,
    _VAGUE_WORK,
    _VP_STOP,
    _VP_TAIL,
    _WHEN_TAIL,
    _WORKING_ON,
)
from .text import _STOP_PLACE, _cut, _np_name, _snake, _squash, _thing, _valid
from .time_phrases import _TIME
from .words import (
    _AMOUNT_NOUNS,
    _ATTR_ADJECTIVES,
    _ATTR_ALIASES,
    _DATE_NOUNS,
    _QUANTITY_NOUNS,
    _ROLE_BOT,
    ENTITY,
    PERSON,
)


def statements(text: str, st: _State) -> list[_Draft]:
    """The drafts of a first-person statement of a plan, decision, amount or date ([] if none)."""
    if st.speaker.strip().lower() in _ROLE_BOT:
        return []
    text = _squash(text).strip(" .!")
    if not text:
        return []
    found: list[_Draft] = []
    for reader in _READERS:
        found = reader(text, st)
        if found:
            break
    # Amounts and dated events named in passing stand beside the clause's own statement ("I've
    # completed 40% of my script, ahead of my 50% target"; "… including my flight booked for
    # August 20").
    for extra in (_read_have_a(text, st), presupposed(text, st)):
        found += [d for d in extra if not any(
            f.subject == d.subject and f.predicate == d.predicate for f in found)]
    return found


# ----------------------------------------------------------------------------- readers


def _value(text: str, rx: re.Pattern[str]) -> str | None:
    """The value of shape ``rx`` at the start of ``text``, trimmed."""
    match = rx.match(text.strip())
    if match is None:
        return None
    value = _squash(match.group()).strip(" ,")
    return value or None


def _setting(np: str, val: str, st: _State) -> list[_Draft]:
    """ "the budget" / "my writing session" / "the deadline for the report" + a value."""
    np = _squash(np)
    owner_np = None
    parts = re.split(r"\s+(?i:for|of|on)\s+", np, maxsplit=1)
    if len(parts) == 2:
        np, owner_np = parts
    words = np.split()
    det = words[0].lower()
    body = [w for w in words[1:] if w.lower() not in _ATTR_ADJECTIVES]
    if not body:
        return []
    head2 = " ".join(body[-2:]).lower()
    head1 = body[-1].lower()
    head = head2 if len(body) >= 2 and (head2 in _AMOUNT_NOUNS or head2 in _QUANTITY_NOUNS
                                        or head2 in _DATE_NOUNS) else head1
    rest = body[: len(body) - len(head.split())]
    owner = _owner(owner_np, det, st)
    if head in _DATE_NOUNS or head in _AMOUNT_NOUNS or head in _QUANTITY_NOUNS:
        rx = _DATE_RX if head in _DATE_NOUNS else (
            _MONEY_RX if head in _AMOUNT_NOUNS else _QUANTITY_RX)
        value = _value(val, rx)
        if value is None or owner is None:
            return []
        if head in _DATE_NOUNS and _ATTR_ALIASES.get(head) == "scheduled_for":
            # "the launch date is March 3": the date of the launch.
            if not rest:
                return []
            subject = _event_subject(det, " ".join(rest), owner_np, st)
            return [_fact(subject, "scheduled_for", value)]
        predicate = _snake(" ".join([*rest, _ATTR_ALIASES.get(head, head)]))
        if predicate is None or len(rest) > 2:
            return []
        return [_fact(owner[0], predicate, value, owner[1])]
    if _EVENT_RX.search(" ".join(body)) and owner_np is None:
        value = _value(val, _DATE_RX)
        if value is None:
            return []
        return [_fact(_event_subject(det, " ".join(body), None, st), "scheduled_for", value)]
    return []


def _owner(owner_np: str | None, det: str, st: _State) -> tuple[str, str] | None:
    """Whose attribute: the "for X" owner, else the speaker (my/our/the)."""
    if owner_np is None:
        if det in ("this", "that"):
            return None
        return st.speaker, "fp"
    name = _thing(owner_np, max_words=4)
    if name is None:
        return None
    subject, mine = _np_name(name, st.speaker)
    if not subject:
        return None
    return subject, "np" if subject[:1].islower() and not mine else "name"


def _event_subject(det: str, body: str, owner_np: str | None, st: _State) -> str:
    name = _squash(body)
    if det in ("my", "our"):
        return f"{st.speaker}'s {name}"
    return name


def _fact(subject: str, predicate: str, value: str, kind: str | None = None) -> _Draft:
    if kind is None:
        kind = "np" if subject[:1].islower() else "name"
    stype = PERSON if kind == "fp" else ENTITY
    return _Draft(subject, stype, predicate, value=value, subject_kind=kind, own_time=True)


def _read_set(text: str, st: _State) -> list[_Draft]:
    match = _SET.match(text) or _MOVED.match(text)
    if match is None:
        # In passing, only a change ("how my score improved to 82%"); a booking in passing is
        # a dated event (``presupposed``).
        match = next((m for m in _MY_MOVED.finditer(text) if m.group("verb").lower() not in
                      ("booked", "scheduled", "confirmed", "set", "fixed", "locked in")), None)
    if match is None:
        return []
    return _setting(match.group("np"), match.group("val"), st)


def _read_progress(text: str, st: _State) -> list[_Draft]:
    match = _PROGRESS.match(text)
    if match is not None:
        thing = _named_thing(match.group("x"))
        if thing is None:
            return []
        mine = re.match(r"(?i:my|our)\s", match.group("x").strip()) is not None
        subject = f"{st.speaker}'s {thing}" if mine else thing
        return [_fact(subject, "progress", _squash(match.group("val")), "name" if mine else None)]
    match = _SCORED.match(text)
    if match is None:
        return []
    x = match.group("x").strip()
    thing = _named_thing(x)
    if thing is None:
        return []
    predicate = _snake(thing + " score")
    if predicate is None or len(thing.split()) > 3:
        return []
    return [_fact(st.speaker, predicate, _squash(match.group("val")), "fp")]


def _read_is(text: str, st: _State) -> list[_Draft]:
    match = _IS.match(text)
    if match is None:
        return []
    return _setting(match.group("np"), match.group("val"), st)


def _read_due(text: str, st: _State) -> list[_Draft]:
    match = _DUE.match(text)
    if match is None:
        return []
    value = _value(match.group("val"), _DATE_RX)
    np = _squash(match.group("np"))
    if value is None or np.split()[0].lower() in ("it", "this", "that", "which", "what"):
        return []
    subject, mine = _np_name(np, st.speaker)
    if not subject or subject.lower() in ("i", "we", "you", "he", "she", "they"):
        return []
    return [_fact(subject, "deadline", value, "name" if mine or subject[:1].isupper() else "np")]


def _read_have_a(text: str, st: _State) -> list[_Draft]:
    if not _FIRST_PERSON.match(text) and not re.match(r"(?i:my|our)\b", text):
        return []
    for match in _HAVE_A.finditer(text):
        drafts = _amount_or_date(match, st)
        if drafts:
            return drafts
    return []


def _amount_or_date(match: re.Match[str], st: _State) -> list[_Draft]:
    """ "a deadline of May 15", "my $2,000 goal", "the holiday gifts budget at $300"."""
    attr = _squash(match.group("attr").lower())
    predicate = _ATTR_ALIASES.get(attr, attr)
    if match.group("det").lower() == "the" and predicate not in ("budget", "deadline"):
        return []  # "the speed limit of 65" is nobody's in particular
    mods = [w for w in match.group("mods").lower().split() if w not in _ATTR_ADJECTIVES]
    if any(w in _NOT_A_MODIFIER for w in mods):
        return []
    rx = _DATE_RX if predicate == "deadline" else _MONEY_RX if predicate == "budget" \
        else _QUANTITY_RX
    raw = match.group("pre") or match.group("val") or ""
    value = _value(raw, rx)
    name = _snake(" ".join([*mods, predicate]))
    if value is None or name is None:
        return []
    owner = match.groupdict().get("owner")
    if owner:
        found = _owner(owner, "the", st)
        if found is None:
            return []
        return [_fact(found[0], name, value, found[1])]
    return [_fact(st.speaker, name, value, "fp")]


def _read_allocated(text: str, st: _State) -> list[_Draft]:
    match = _ALLOCATED.match(text)
    if match is None:
        return []
    thing = _named_thing(match.group("x"))
    if thing is None:
        return []
    subject, mine = _np_name(thing, st.speaker)
    return [_fact(subject, "budget", _squash(match.group("val")), "name" if mine else None)]


def presupposed(text: str, st: _State) -> list[_Draft]:
    """Dated events the speaker owns, wherever they stand ("before our meeting on May 3?")."""
    if st.speaker.strip().lower() in _ROLE_BOT:
        return []
    out: list[_Draft] = []
    text = _squash(text)
    for match in _EVENT_DATE.finditer(text):
        event, value = match.group("ev"), match.group("val")
        if _CHANGED.search(text, 0, match.start()):
            continue
        words = event.lower().split()
        if any(w in _NOT_A_MODIFIER for w in words[:-1]):
            continue
        subject = f"{st.speaker}'s {_squash(event)}"
        if not any(d.subject == subject for d in out):
            out.append(_fact(subject, "scheduled_for", _squash(value).strip(" ,")))
    return out


def _read_paid(text: str, st: _State) -> list[_Draft]:
    match = _PAID.match(text)
    if match is not None:
        value = match.group("val") or match.group("val2")
        thing = _named_thing(match.group("x") or match.group("x2"))
        if thing is None:
            return []
        subject, mine = _np_name(thing, st.speaker)
        return [_fact(subject, "price", _squash(value), "name" if mine else None)]
    earn = _EARN.match(text)
    if earn is not None:
        return [_fact(st.speaker, "salary", _squash(earn.group("val")), "fp")]
    return []


def _read_version(text: str, st: _State) -> list[_Draft]:
    match = _FP_VERSION.match(text)
    if match is None:
        return []
    version = re.sub(r"^(?i:version\s+|v)", "", match.group("ver"))
    return [_fact(st.speaker, "uses_version", version, "fp")]


def _named_thing(text: str, max_words: int = 4) -> str | None:
    """A thing's name: up to a time phrase or the end of the noun phrase, no determiner."""
    time = _TIME.search(text)
    if time is not None:
        text = text[: time.start()]
    text = _THOUSANDS.sub("\x00", re.sub(r"^(?i:the|my|our)\s+", "", text.strip()))
    text = _WHEN_TAIL.sub("", text)
    if text[:1].isdigit():
        return None  # "$300 for 8 guests": a count, not a thing
    thing = _thing(_cut(text, _STOP_PLACE), max_words=max_words)
    thing = thing.replace("\x00", ",") if thing is not None else None
    if thing is None or thing.split()[0].lower() in _NOT_A_THING or _SECOND_PERSON.search(thing):
        return None
    return thing


def _read_switch(text: str, st: _State) -> list[_Draft]:
    match = _SWITCH.match(text)
    if match is None:
        return []
    new = _named_thing(match.group("new"))
    if new is None:
        return []
    out = [_Draft(st.speaker, PERSON, "uses", object=new, subject_kind="fp")]
    old = _named_thing(match.group("old")) if match.group("old") else None
    if old is not None:
        out.append(_Draft(st.speaker, PERSON, "uses", object=old, kind="negate",
                          negation="ended", subject_kind="fp"))
    return out


def _verb_phrase(text: str) -> str | None:
    text = _THOUSANDS.sub("\x00", text)
    stop = _VP_STOP.search(text)
    vp = text[: stop.start()] if stop else text
    vp = _VP_TAIL.sub("", vp.strip(" .")).replace("\x00", ",")
    purpose = re.search(r"\s+(?i:to)\s+(?=[a-z])", vp)
    if len(vp.split()) > _MAX_VP_WORDS and purpose is not None \
            and len(vp[: purpose.start()].split()) >= 2:
        vp = vp[: purpose.start()]  # "pause work on Saturdays to give Linda more time"
    if _SECOND_PERSON.search(vp) or _PRONOUN_OBJECT.match(vp) or not vp[:1].isalpha():
        return None
    return _valid(vp, max_words=_MAX_VP_WORDS)


def _read_plan(text: str, st: _State) -> list[_Draft]:
    chose = _read_chose(text, st)
    if chose:
        return chose
    for rx, predicate in ((_PLAN, "plans_to"), (_DECIDED, "decided_to"), (_TRYING, "trying_to")):
        match = rx.match(text)
        if match is not None:
            vp = _verb_phrase(match.group("vp"))
            if vp is None or vp.split()[0].lower() in _FRAMING:
                return []
            return [_fact(st.speaker, predicate, vp, "fp")]
    return []


def _read_working_on(text: str, st: _State) -> list[_Draft]:
    match = _WORKING_ON.match(text)
    if match is None:
        return []
    x = _THOUSANDS.sub("\x00", match.group("x"))
    stop = _VP_STOP.search(x)
    x = (x[: stop.start()] if stop else x).replace("\x00", ",")
    x = re.sub(r"^(?i:a|an)\s+", "", x.strip())
    thing = _named_thing(x, max_words=5)
    if thing is None or thing.split()[0].lower() in _VAGUE_WORK:
        return []
    return [_Draft(st.speaker, PERSON, "works_on", object=thing, subject_kind="fp")]


def _read_chose(text: str, st: _State) -> list[_Draft]:
    match = _CHOSE.match(text)
    if match is None:
        return []
    x = _THOUSANDS.sub("\x00", match.group("x"))
    stop = _VP_STOP.search(x)
    x = (x[: stop.start()] if stop else x).replace("\x00", ",")
    thing = _named_thing(x)
    if thing is None:
        return []
    return [_Draft(st.speaker, PERSON, "chose", object=thing, subject_kind="fp")]


_READERS = (_read_version, _read_set, _read_due, _read_is, _read_allocated, _read_paid,
            _read_progress, _read_switch, _read_working_on, _read_plan)
