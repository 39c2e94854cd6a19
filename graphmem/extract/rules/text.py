"""The rules extractor's text helpers: normalisation, lead-in stripping and object readers.

An object reader takes the text after a trigger ("Osaka with my cat", "hiking, cooking and jazz")
and returns only the name span, or None when the span is not a usable name (a pronoun, a clause,
over six words). Readers are pure functions of their text.
"""

from __future__ import annotations

import re
from functools import lru_cache

from ..._errors import PredicateError
from ..._ids import entity_key
from ..._predicates import normalize_predicate
from .words import (
    _BAD_OBJECT_START,
    _FIXED_PHRASES,
    _MAX_OBJECT_WORDS,
    _PRONOUNS,
    _STATUS,
    ANY_LETTER,
    NAME_START,
)

# Typographic quotes, ellipses and odd spaces become ASCII so that one pattern covers both.
_NORMALIZE = str.maketrans(
    {"\u2019": "'", "\u2018": "'", "\u02bc": "'", "\u201c": '"', "\u201d": '"', "\u00a0": " ",
     "\u2026": ".", "\t": " ", "\r": " "}
)

# Leading markers, stripped repeatedly: a correction marker ("Actually,", "Sorry, I meant") turns
# the sentence's facts into corrections; greetings and fillers carry nothing.
_LEAD = re.compile(
    r"\s*(?:(?P<corr>(?i:actually|correction|to\s+correct\s+myself|let\s+me\s+correct\s+"
    r"(?:that|myself)|i\s+stand\s+corrected|scratch\s+that|i\s+misspoke|my\s+mistake|my\s+bad|"
    r"oops|whoops|no\s+wait|wait\s+no|wait|(?:sorry\s*[,.!-]?\s*)?i\s+meant(?:\s+to\s+say)?|"
    r"sorry\s*[,.!-]?\s*i\s+mean|i\s+mean(?=\s*,)))"
    r"|(?P<greet>(?i:hi|hello|hey|hiya|howdy|greetings|good\s+(?:morning|afternoon|evening)|yo)"
    r"(?i:\s+there|\s+all|\s+everyone)?)"
    r"|(?P<fill>(?i:so|well|oh|ok|okay|yes|yeah|yep|yup|no(?!\s+longer)|nope|also|and|but|btw|"
    r"by\s+the\s+way|anyway|anyways|fyi|plus|now|then|honestly|basically|ps|p\.s\.|update|note|"
    r"sorry|thanks|thank\s+you|great|cool|nice|alright|all\s+right|right|um|uh|hmm|quick\s+update|"
    r"good\s+news|fun\s+fact|just\s+so\s+you\s+know|for\s+the\s+record|for\s+context|"
    r"for\s+what\s+it's\s+worth|as\s+you\s+know|as\s+i\s+said|like\s+i\s+said|in\s+fact|lol|"
    r"haha|in\s+any\s+case|anyhow|fwiw|tbh|to\s+be\s+honest|for\s+now)))"
    r"(?![\w'])\s*[,:;.!\-–—]*\s*"
)

# ----------------------------------------------------------------------------- object spans

# A capitalised run is a place or organisation name ("New York City", "Bank of America"): it ends
# at the first lowercase word, so "Osaka with my cat" gives Osaka.
_CAPRUN = re.compile(
    rf"(?:[Tt]he\s+)?(?!I\b)[{NAME_START}0-9][\w'&.-]*"
    r"(?:\s+(?:(?:of|de|da|del|der|du|la|le|los|las|am|upon|the|&)\s+)*"
    rf"(?!I\b)[{NAME_START}0-9][\w'&.-]*)*"
)
_PUNCT_STOP = r"\s*(?:[,;:()!?\"]|\.(?=\s|$)|\s[-–—]+\s|\s*[:;]-?[)(DP])"
# Where a lowercase object ends: punctuation, a preposition or conjunction, a filler. Places stop
# at any preposition; things ("likes") keep "of"/"to" ("lord of the rings"); lists keep "and".
_STOP_PLACE = re.compile(
    _PUNCT_STOP + r"|\s+(?i:with|because|since|when|while|but|and|or|although|though|as|so|"
    r"which|who|where|that|if|unless|until|after|before|from|for|near|by|at|on|in|into|to|than|"
    r"like|now|again|anymore|too|also|currently|lol|haha|just|yet|not|either)\b"
)
_STOP_THING = re.compile(
    _PUNCT_STOP + r"|\s+(?i:with|because|since|when|whenever|while|but|although|though|as|so|"
    r"which|who|where|that|if|unless|until|than|more\s+than|better\s+than|over|rather|instead|"
    r"now|again|anymore|any\s+more|no\s+more|too|also|currently|lol|haha|a\s+lot|very\s+much|"
    r"so\s+much|like\s+crazy|not|and|or|&|especially|particularly|except|including|such\s+as|"
    r"(?:in|on|at|during|every|each)\s+(?:the|my|our|a|an|summer|winter|spring|fall|autumn|"
    r"evenings?|mornings?|weekends?))\b"
)
_STOP_LIST = re.compile(
    r"\s*(?:[;:()!?\"]|\.(?=\s|$)|\s[-–—]+\s)|\s+(?i:with|because|since|when|whenever|while|but|"
    r"although|though|as|so|which|who|where|that|if|unless|until|than|more\s+than|better\s+than|"
    r"over|rather|instead|now|again|anymore|any\s+more|no\s+more|too|also|currently|lol|haha|"
    r"a\s+lot|very\s+much|so\s+much|like\s+crazy|not|especially|particularly|except|including|"
    r"such\s+as|(?:in|on|at|during|every|each)\s+(?:the|my|our|a|an|summer|winter|spring|fall|"
    r"autumn|evenings?|mornings?|weekends?))\b"
)
# List items: "hiking, cooking and jazz" → three likes.
_LIST_SPLIT = re.compile(r"\s*,\s*(?:(?:and|or|&)\s+)?|\s+(?:and|or|&)\s+", re.I)
# Trailing fillers and punctuation that are never part of a name ("Lisbon now!", "Acme lol").
_TAIL_FILLER = re.compile(
    r"(?:\s+(?i:now|these\s+days|nowadays|again|anymore|any\s+more|no\s+more|too|as\s+well|"
    r"also|currently|right\s+now|at\s+the\s+moment|lately|a\s+lot|very\s+much|so\s+much|already|"
    r"still|though|instead|honestly|really|actually|lol|haha|then|for\s+now|for\s+good|forever|"
    r"full[- ]time|part[- ]time|anyway|ok|okay|btw)|\s*[.,;:!?)\"'*~]+|\s*[:;]-?[)(DP])+$"
)
_LEAD_JUNK = re.compile(r"^[\s,;:.!?\"'(*~-]+")
# "I like to cook" → "cooking", so that both forms give one fact.
_TO_VERB = re.compile(r"(?i:to)\s+(?P<v>[a-z]+)\b(?P<tail>.*)$")
# The shape of a corrected value decides its predicate when nothing else does ("it's not A, it's
# B"): a path → has_endpoint, a version → uses_version, a status word → has_status.
_IS_PATH = re.compile(r"^(?:https?://\S+|/\S*)$")
_IS_VERSION = re.compile(r"^v?\d+(?:\.\d+)*(?:[-+.]?[A-Za-z0-9]+)*$", re.I)
_IS_STATUS = re.compile(r"^(?:" + _STATUS + r")$", re.I)
# "never on version 2.3" and "never 2.3" give the same old value.
_CONTRAST_PREFIX = re.compile(
    r"^(?:(?:on|at|in|to|for|using|running)\s+)?(?:version\s+|the\s+version\s+)?", re.I
)
# The noun before "was never" names the predicate: "... endpoint/url/path", "... version".
_ENDPOINT_NOUN = re.compile(
    r"\s*\b(?:endpoint|end\s*point|base\s+url|url|route|api\s+path|path)s?$", re.I
)
_VERSION_NOUN = re.compile(r"\s*\bversion(?:\s+number)?$", re.I)
# "Sorry, it's Lyon" / "I meant Lyon": the words before a bare corrected value.
_BARE_LEAD = re.compile(
    r"^(?:(?i:it's|it\s+is|it\s+was|that's|that\s+is|i\s+meant|i\s+mean|rather|instead)\s+)+"
)
_ARTICLE = re.compile(r"^(?i:a|an)\s+")
# An object needs at least one letter or digit (of any script).
_WORD = ANY_LETTER


# ----------------------------------------------------------------------------- readers


def _squash(text: str) -> str:
    return " ".join(text.split())


def _tidy(text: str) -> str:
    """Collapse whitespace and strip leading junk, trailing fillers and punctuation."""
    out = " " + _LEAD_JUNK.sub("", _squash(text))
    return _TAIL_FILLER.sub("", out).strip()


def _valid(candidate: str | None, *, max_words: int = _MAX_OBJECT_WORDS) -> str | None:
    if candidate is None:
        return None
    text = _tidy(candidate)
    if not text or not _WORD.search(text):
        return None
    words = text.split()
    if len(words) > max_words:
        return None
    lower = text.lower()
    if lower in _PRONOUNS or words[0].lower() in _BAD_OBJECT_START:
        return None
    if len(words) > 1 and words[-1].lower() in ("these", "those", "them", "this", "that"):
        return None  # "the taste of these" names nothing without coreference
    if lower in ("a", "an", "the", "home", "night", "nights", "weekends", "work", "school"):
        return None
    return text


def _cut(text: str, stop: re.Pattern[str]) -> str:
    match = stop.search(text)
    return text[: match.start()] if match else text


def _gerund(verb: str) -> str:
    verb = verb.lower()
    if verb.endswith("ie"):
        return verb[:-2] + "ying"
    if verb.endswith("e") and not verb.endswith(("ee", "ye", "oe")) and len(verb) > 2:
        return verb[:-1] + "ing"
    if re.fullmatch(r"[^aeiou]*[aeiou][^aeiouwxy]", verb):
        return verb + verb[-1] + "ing"
    return verb + "ing"


def _to_gerund(text: str) -> str:
    match = _TO_VERB.match(text)
    if not match:
        return text
    return _gerund(match.group("v")) + match.group("tail")


def _article(phrase: str) -> str:
    return ("an " if phrase[:1].lower() in "aeiou" else "a ") + phrase


def _is_capitalised(text: str) -> bool:
    first = text.split()[0] if text.split() else ""
    if first.lower() == "the" and len(text.split()) > 1:
        first = text.split()[1]
    return bool(first) and (first[0].isupper() or first[0].isdigit())


def _snake(text: str) -> str | None:
    cleaned = re.sub(r"[^a-z0-9\s_-]", "", text.lower().replace("favourite", "favorite"))
    cleaned = re.sub(r"[\s\-]+", "_", cleaned.strip())
    try:
        return normalize_predicate(cleaned)
    except PredicateError:
        return None


# Entity keys decide "same name" comparisons all over the extractor; the cache keeps them cheap.
_key = lru_cache(maxsize=8192)(entity_key)


def _same(a: str, b: str) -> bool:
    return a == b or _key(a) == _key(b)


def _strip_lead(text: str) -> tuple[str, bool]:
    """Strip leading greetings, fillers and correction markers: (rest, is a correction)."""
    correcting = False
    while True:
        match = _LEAD.match(text)
        if not match or match.end() == 0:
            return text, correcting
        correcting = correcting or bool(match.group("corr"))
        text = text[match.end():]


def _place(rest: str) -> str | None:
    """The place / organisation name at the start of ``rest`` (the name span only)."""
    text = _LEAD_JUNK.sub("", _squash(rest))
    match = _CAPRUN.match(text)
    if match:
        candidate = match.group().rstrip(".")
        # "Osaka, Japan" keeps only the first part; a trailing possessive is kept ("Joe's").
        return _valid(candidate)
    candidate = _cut(text, _STOP_PLACE)
    first = candidate.split()[0].lower() if candidate.split() else ""
    if first in ("a", "an", "my", "our", "his", "her", "their", "another", "some", "this"):
        return None
    return _valid(candidate)


def _thing(rest: str, *, max_words: int = _MAX_OBJECT_WORDS) -> str | None:
    text = _to_gerund(_LEAD_JUNK.sub("", _squash(rest)))
    return _valid(_cut(text, _STOP_THING), max_words=max_words)


def _things(rest: str) -> list[str]:
    """A list object ("hiking, cooking and jazz") → one item each; fixed phrases stay whole."""
    text = _LEAD_JUNK.sub("", _squash(rest))
    text = _cut(text, _STOP_LIST)
    protected = text
    lowered = text.lower()
    for phrase in _FIXED_PHRASES:
        start = lowered.find(phrase)
        if start >= 0:
            span = protected[start : start + len(phrase)]
            tail = protected[start + len(phrase) :]
            protected = protected[:start] + span.replace(" ", "\x00") + tail
    items: list[str] = []
    for part in _LIST_SPLIT.split(protected):
        item = _valid(_to_gerund(part.replace("\x00", " ").strip()))
        if item is not None and not any(_same(item, seen) for seen in items):
            items.append(item)
    return items


def _contrast_value(text: str) -> str | None:
    """Clean one side of "never A, always B": drop prepositions, 'version', fillers."""
    text = _CONTRAST_PREFIX.sub("", _squash(text))
    first = text.split()[0] if text.split() else ""
    if _IS_PATH.match(first.rstrip(".,;:!?)")):
        return first.rstrip(".,;:!?)")
    text = _cut(text, _STOP_THING)
    return _valid(text)


def _strip_v(version: str) -> str:
    return version[1:] if version[:1] in "vV" and version[1:2].isdigit() else version


def _np_name(np: str, speaker: str) -> tuple[str, bool]:
    """A noun phrase without determiners; "my X" belongs to the speaker. (name, is_mine)."""
    words = np.split()
    mine = False
    while words and words[0].lower() in (
        "the", "our", "my", "your", "its", "their", "this", "that", "these", "those", "new",
        "current", "a", "an",
    ):
        mine = mine or words[0].lower() == "my"
        words = words[1:]
    name = " ".join(words)
    if mine and name:
        return f"{speaker}'s {name}", True
    return name, False

