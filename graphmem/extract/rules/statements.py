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
from .text import _STOP_PLACE, _cut, _np_name, _snake, _squash, _thing, _valid
from .time_phrases import _TIME
from .words import (
    _AMOUNT_NOUNS,
    _ATTR_ADJECTIVES,
    _ATTR_ALIASES,
    _DATE_NOUNS,
    _EVENT_NOUNS,
    _QUANTITY_NOUNS,
    _ROLE_BOT,
    ENTITY,
    PERSON,
    _alternation,
)

# ----------------------------------------------------------------------------- value shapes

_MONTH = (r"(?:January|February|March|April|May|June|July|August|September|October|November|"
          r"December|Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sept|Sep|Oct|Nov|Dec)\.?")
_WEEKDAY = r"(?:Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday)"
_DAY = r"\d{1,2}(?:st|nd|rd|th)?(?:\s*[-–]\s*\d{1,2}(?:st|nd|rd|th)?)?"  # "April 6-7"
_YEAR = r"(?:19|20)\d{2}"
_CLOCK = r"\d{1,2}(?::\d{2})?\s?(?i:am|pm|a\.m\.|p\.m\.)"
_DATE = (
    r"(?:(?:(?i:next|this|coming)\s+)?" + _WEEKDAY + r"(?:,?\s+" + _MONTH + r"\s+" + _DAY + r")?"
    r"|" + _MONTH + r"\s+" + _DAY + r"(?:,?\s+" + _YEAR + r")?"
    r"|" + _DAY + r"\s+(?:of\s+)?" + _MONTH + r"(?:,?\s+" + _YEAR + r")?"
    r"|(?:(?i:early|mid|late|the\s+end\s+of|end\s+of|the\s+beginning\s+of)[\s-]+)?"
    + _MONTH + r"(?:\s+" + _YEAR + r")?"
    r"|\d{4}-\d{2}-\d{2}|\d{1,2}/\d{1,2}/\d{2,4}"
    r"|(?i:tomorrow|next\s+(?:week|month|year|quarter)|(?:the\s+)?end\s+of\s+(?:the\s+|this\s+|"
    r"next\s+)?(?:day|week|month|year|quarter))"
    r"|Q[1-4](?:\s+" + _YEAR + r")?)"
    r"(?:,?\s+(?i:at)\s+" + _CLOCK + r")?"
    r"|" + _CLOCK
)
_NUMBER = r"\d[\d,]*(?:\.\d+)?"
_PER = r"(?:\s*(?:/|(?i:a|an|per|each)\s+)(?i:hour|hr|day|week|month|year|yr|night|person))?"
_MONEY = (
    r"(?:[$€£¥₹]\s?" + _NUMBER + r"(?:\s?(?i:k|m|bn|million|billion|thousand)\b)?"
    r"|(?i:usd|eur|gbp|cad|aud|inr|jpy|chf)\s?" + _NUMBER + r"(?:\s?(?i:k|m)\b)?"
    r"|" + _NUMBER + r"\s?(?i:k\s+)?(?i:dollars|euros|pounds|bucks|usd|eur|gbp|yen|rupees)\b)"
    + _PER
)
_UNIT = (
    r"(?i:hours?|hrs?|minutes?|mins?|seconds?|days?|weeks?|months?|years?|people|persons|"
    r"members|users|customers|employees|pages|words|chapters|books|lbs?|pounds|kg|kilos?|grams|"
    r"miles|km|kilometers|kilometres|meters|metres|steps|calories|kcal|reps|sets|sessions|"
    r"posts|videos|episodes|songs|tracks|items|units|gb|mb|tb|ms|mph|kph|wpm|bpm|points|"
    r"servings|cups|liters|litres)\b"
)
_QUANTITY = (
    r"(?:" + _NUMBER + r"\s?(?:%|(?i:percent)\b)|" + _NUMBER + r"\s+" + _UNIT + _PER
    + r"|" + _NUMBER + r"(?=\s*$|[\s,.;!?]))"
)
_VERSION = r"(?i:version\s+|v(?=\d))\d+(?:\.\d+)*(?:[-+][\w.]+)?"
_END = r"(?=\s*$|[\s,.;:!?)])"
_DATE_RX = re.compile(r"(?:" + _DATE + r")" + _END)
_MONEY_RX = re.compile(r"(?:" + _MONEY + r")" + _END)
_QUANTITY_RX = re.compile(r"(?:" + _MONEY + r"|" + _QUANTITY + r")" + _END)

# ----------------------------------------------------------------------------- clause shapes

_FP = r"(?i:i|we)"
_ADV = (r"(?:(?i:just|also|now|finally|already|recently|officially|actually|then|eventually|"
        r"quickly|even|really|still|both)\s+)*")
_NP = (r"(?P<np>(?i:the|my|our|this|that)\s+[\w'&-]+"
       r"(?:\s+(?!(?i:to|from|until|till)\b)[\w'&-]+){0,5}?)")
_CHANGE = (r"(?i:set|changed?|raised?|lowered?|increased?|reduced?|cut|bumped|upped|moved?|"
           r"pushed(?:\s+back)?|push(?:\s+back)?|rescheduled?|postponed?|delayed?|updated?|"
           r"adjusted?|extended?|capped?|shifted?|brought\s+forward|moved\s+up|locked\s+in|"
           r"fixed|finali[sz]ed?|confirmed?|booked|scheduled?)")
_FROM_TO = r"(?:\s+(?i:from)\s+(?P<old>[^,;]+?))?\s+(?i:to|until|till|for|at)\s+"
# "I (have) set the budget to $5,000", "we had to reschedule my session from April 6 to April 8".
_SET = re.compile(
    _FP + r"(?:'ve|\s+have|\s+had)?\s+" + _ADV
    + r"(?:(?i:had|decided|agreed|managed|needed|chose)(?:\s+(?i:with)\s+[A-Z][\w'-]*)?\s+to\s+)?"
    + _CHANGE + r"\s+" + _NP
    + _FROM_TO + r"(?P<val>.+)$"
)
# "the launch (has been) moved to March 3", "my rent went up to $1,500".
_MOVED = re.compile(
    _NP + r"\s+(?:(?i:has\s+been|have\s+been|was|were|got|is|are|'s)\s+)?" + _ADV
    + r"(?i:moved|pushed(?:\s+back)?|rescheduled|postponed|delayed|changed|set|raised|lowered|"
    r"increased|reduced|cut|bumped|updated|extended|brought\s+forward|moved\s+up|shifted|"
    r"slipped|went\s+up|went\s+down|dropped|rose|grew|fell|jumped|capped|locked\s+in|"
    r"confirmed|booked|scheduled|fixed)" + _FROM_TO + r"(?P<val>.+)$"
)
# "our deadline is Friday", "the demo is scheduled for April 8", "my budget is now $200".
_IS = re.compile(
    _NP + r"\s*(?i:\s+is|'s|\s+are|\s+will\s+be|\s+has\s+been)\s+" + _ADV
    + r"(?:(?i:set|scheduled|planned|fixed|due|booked|confirmed|capped|locked\s+in)"
    r"(?:\s+(?i:for|to|on|at|by|in))?\s+|(?i:on|at|around|about|roughly|only|exactly|just|by|"
    r"in|under|over|up\s+to)\s+)?(?P<val>.+)$"
)
# "the report is due (on) June 1": a deadline of the thing.
_DUE = re.compile(
    r"(?P<np>(?:(?i:the|my|our|this|that)\s+)?[\w'&-]+(?:\s+[\w'&-]+){0,4}?)\s*"
    r"(?i:\s+is|'s|\s+are)\s+" + _ADV + r"(?i:due)\s+(?:(?i:on|by|in|at)\s+)?(?P<val>.+)$"
)
# "I've got a deadline of May 15", "we have a $200 budget", "I'm working with a budget of $5k".
_HAVE_A = re.compile(
    r"(?<![\w'])(?P<det>(?i:a|an|my|our|the))\s+(?:(?P<pre>" + _MONEY + r"|" + _QUANTITY
    + r")\s+)?(?P<mods>(?:[a-z][\w-]*\s+){0,2}?)"
    # Lowercase only: "a $5 Target gift card" names a shop.
    r"(?P<attr>budget|deadline|due\s+date|spending\s+limit|limit|cap|goal|target)\b"
    r"(?(pre)|\s+(?i:of|is|on|at|for\s+(?P<owner>[\w\s'&-]{1,30}?)\s+(?i:of|is|at)?)\s*"
    r"(?:(?i:set\s+(?:for|to|at)|around|about|roughly|only|just|under|now)\s+)?(?P<val>.+))"
)
# "I've allocated $1,500 for relocation expenses": the budget of what it is for.
_ALLOCATED = re.compile(
    _FP + r"(?:'ve|\s+have)?\s+" + _ADV + r"(?i:allocated|set\s+aside|budgeted|earmarked|"
    r"reserved)\s+(?P<val>" + _MONEY + r")\s+(?i:for|to|towards?)\s+(?P<x>.+)$"
)
_FIRST_PERSON = re.compile(_FP + r"(?:'[a-z]+)?\b")
# "I paid $153 for the Ultraboost", "I bought my laptop for $900".
_PAID = re.compile(
    _FP + r"(?:'ve|\s+have|\s+just|\s+only|\s+finally|\s+recently)*\s+(?i:paid)\s+"
    r"(?P<val>" + _MONEY + r")\s+(?i:for|on)\s+(?P<x>.+)$"
    r"|" + _FP + r"(?:'ve|\s+have|\s+just|\s+finally|\s+recently)*\s+(?i:bought|got|purchased)\s+"
    r"(?!(?i:back|up|out|home|into|to|over|off)\b)(?P<x2>(?:\S+\s+){0,5}?\S+)\s+(?i:for)\s+"
    r"(?P<val2>" + _MONEY + r")" + _END
)
# "I earn $85,000 a year", "I make $40 an hour", "my salary is …" (an amount noun, above).
_EARN = re.compile(
    _FP + r"\s+" + _ADV + r"(?i:earn|make|get\s+paid|am\s+paid|'m\s+paid)\s+"
    r"(?:(?i:around|about|roughly|only|just|over|under)\s+)?(?P<val>" + _MONEY + r")"
    # A salary is stated alone or per period: "$1 in rewards for every $10" is none.
    r"(?=\s*$|\s*[,.;!?]|\s+(?i:annually|monthly|weekly|hourly|yearly|a\s+year|before|after|now|"
    r"gross|net)\b)"
)
# "we're on version 3.2", "I upgraded to v4": the speaker's version, no product named.
_FP_VERSION = re.compile(
    _FP + r"(?:'re|'m|\s+are|\s+am|'ve|\s+have)?\s+" + _ADV
    + r"(?i:on|using|running|upgraded\s+to|updated\s+to|migrated\s+to|moved\s+to|switched\s+to)"
    r"\s+(?P<ver>" + _VERSION + r")" + _END
)
# "we switched (over) from MySQL to Postgres", "I've migrated to Vite".
_SWITCH = re.compile(
    _FP + r"(?:'ve|\s+have)?\s+" + _ADV + r"(?:(?i:had|decided)\s+to\s+)?"
    r"(?i:switched|switch|migrated|migrate|transitioned|changed\s+over|switched\s+over)\s+"
    r"(?:(?i:over\s+)?(?i:from)\s+(?P<old>.+?)\s+)?(?i:to)\s+(?P<new>.+)$"
)
# Plans and decisions: the verb phrase after "to" is the value.
_PLAN = re.compile(
    r"(?:" + _FP + r"(?:'m|'re|\s+am|\s+are)\s+" + _ADV + r"(?i:planning|preparing)\s+to"
    r"|" + _FP + r"\s+" + _ADV + r"(?i:plan|intend|aim)\s+to"
    r"|(?i:my|our)\s+(?:(?i:current|new|main|revised)\s+)?(?i:plan|goal|intention)\s+"
    r"(?i:is|now\s+is|is\s+now)\s+to)\s+(?P<vp>.+)$"
)
_DECIDED = re.compile(
    _FP + r"(?:'ve|\s+have)?\s+" + _ADV + r"(?i:decided|resolved|agreed|chosen|chose)\s+"
    r"(?:(?i:with\s+[\w\s]+?)\s+)?to\s+(?P<vp>.+)$"
)
_CHOSE = re.compile(
    _FP + r"(?:'ve|\s+have|'m|'re|\s+am|\s+are)?\s+" + _ADV
    + r"(?i:chose|chosen|picked(?!\s+up\b)|selected|opted\s+for|went\s+with|gone\s+with|"
    r"going\s+with|settled\s+on|decided\s+on|decided\s+to\s+go\s+with)\s+(?!(?i:to)\s)(?P<x>.+)$"
)
# Where a verb phrase ends: the next clause, a purpose or a request.
_VP_STOP = re.compile(
    r"\s*(?:[,;?!(]|:(?!\d)|(?<!St)(?<!Dr)(?<!Mr)(?<!Ms)(?<!Mrs)\.(?=\s|$)|\s[-–—]+>?\s|\s*-+>)|\s+(?i:but|so|because|since|while|though|"
    r"although|which|and\s+(?:i|we|then|also|so|now|it|that)|so\s+that|in\s+order\s+to|"
    r"as\s+(?:mentioned|discussed|suggested|planned|agreed|needed|required|noted)|"
    r"and\s+i'm|and\s+want|and\s+need)\b"
)
_MAX_VP_WORDS = 10
# Words before a noun that make it no attribute or event name ("my very budget", "my own").
_NOT_A_MODIFIER = frozenset({"very", "really", "so", "own", "only", "entire", "whole", "this",
                             "that", "the", "a", "an", "of", "and", "or", "to", "for", "in", "on"})
_SECOND_PERSON = re.compile(r"\b(?i:you|your|yours)\b")
_NOT_A_THING = frozenset({"a", "an", "the", "my", "our", "this", "that", "some", "it", "one",
                          "something", "another", "whatever", "what", "which", "how",
                          "following", "same", "other", "both", "either", "it's"})
# A plan's verb phrase ends cleanly: no dangling preposition, and a pronoun object ("postpone
# it") names nothing without coreference.
_VP_TAIL = re.compile(r"(?:\s+(?i:for|to|with|of|in|on|at|by|and|or|the|a|an|my|our|from))+$")
_PRONOUN_OBJECT = re.compile(r"^\S+\s+(?i:it|this|that|them|these|those|one)\b")
# "book purchases this winter": a trailing time is no part of the name.
_WHEN_TAIL = re.compile(r"\s+(?i:this|next|last|every|each)\s+\w+\b.*$")
# A thousands comma is no list nor clause end ("the $85,000 offer").
_THOUSANDS = re.compile(r"(?<=\d),(?=\d{3})")
_EVENT_RX = re.compile(r"(?i:" + _alternation(_EVENT_NOUNS) + r")$")
_EVENT = r"(?i:" + _alternation(_EVENT_NOUNS) + r")s?"
# "my flight booked for August 20", "our meeting with Laura on Friday", "my April 7 session":
# a possessed event with its date, anywhere in a sentence (a question presupposes it too).
_EVENT_DATE = re.compile(
    r"(?:(?<![\w'])(?i:my|our)|" + _FP + r"(?:'m|'re|\s+am|\s+are)\s+" + _ADV
    + r"(?i:planning|hosting|having|throwing|organi[sz]ing|holding)\s+(?i:a|an|my|our))\s+"
    r"(?:(?i:upcoming|next|first|final|big|scheduled|planned)\s+)?"
    r"(?P<ev>(?:[a-z][\w-]*\s+){0,2}?" + _EVENT + r")"
    r"(?:\s+(?i:with|at|in)\s+[A-Z][\w'&.-]*(?:\s+[A-Z][\w'&.-]*){0,3})?"
    r"\s+(?:(?i:is|was)\s+)?(?:(?i:booked|scheduled|planned|set|confirmed)\s+)?"
    r"(?i:on|for|at)\s+(?P<val>" + _DATE + r")" + _END
)
# A date named before a change verb is the old one ("I had to reschedule my meeting on May 3").
_CHANGED = re.compile(r"(?i:reschedul|postpon|cancel|push|mov|delay|skip|miss|chang)")


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
    # Dated events stand beside any other statement ("I've allocated $1,500 for the move,
    # including my flight booked for August 20").
    if not found or found[0].predicate != "scheduled_for":
        found += [d for d in presupposed(text, st)
                  if not any(f.subject == d.subject for f in found)]
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
        return []
    return _setting(match.group("np"), match.group("val"), st)


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


def _named_thing(text: str) -> str | None:
    """A thing's name: up to a time phrase or the end of the noun phrase, no determiner."""
    time = _TIME.search(text)
    if time is not None:
        text = text[: time.start()]
    text = _THOUSANDS.sub("\x00", re.sub(r"^(?i:the|my|our)\s+", "", text.strip()))
    text = _WHEN_TAIL.sub("", text)
    if text[:1].isdigit():
        return None  # "$300 for 8 guests": a count, not a thing
    thing = _thing(_cut(text, _STOP_PLACE), max_words=4)
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
    for rx, predicate in ((_PLAN, "plans_to"), (_DECIDED, "decided_to")):
        match = rx.match(text)
        if match is not None:
            vp = _verb_phrase(match.group("vp"))
            if vp is None or vp.split()[0].lower() in ("be", "do", "get", "make", "have"):
                return []
            return [_fact(st.speaker, predicate, vp, "fp")]
    return []


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


_READERS = (_read_version, _read_set, _read_due, _read_is, _read_have_a, _read_allocated,
            _read_paid, _read_switch, _read_plan)
