"""The rules extractor's reading order: episode → speaker segments → sentences → clauses.

A chat message whose content is a JSON ``{"role", "content"}`` object (or a list of them) is
unwrapped, assistant/system turns skipped. A transcript whose every line is ``Speaker: text`` is
read line by line. Sentences split on ``. ! ?`` and new lines (not after "Dr.", initials, nor
inside versions); clauses split at ``, ; : — and but so because…`` only where a new clause
starts, with time phrases resolved and blanked out first.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from ..._models import EpisodeRecord
from .table import _NEVER_ALWAYS, _NOT_BUT
from .text import _WORD, _squash, _strip_lead
from .time_phrases import _TIME, _TIME_FILLER_LOWER, _resolve_time
from .words import _ABBREV, _NOT_SPEAKER, _ROLE_BOT, _ROLE_USER


@dataclass(slots=True)
class _Clause:
    work: str  # the clause with time phrases blanked out
    evidence: str  # the clause as written, for the fact's evidence
    valid_from: datetime | None
    future: bool
    inherit: bool  # "... and joined Globex": the subject of the clause before


# ----------------------------------------------------------------------------- no-fact filters

# A sentence ends at . ! ? before a space/quote/end, or at a new line; the word before a "."
# decides whether it was an abbreviation (``_ABBREV``) or an initial ("J. Smith").
_SENT_END = re.compile(r"[.!?]+(?=[\s\"')\]]|$)|\n+")
_LAST_WORD = re.compile(r"([A-Za-z][A-Za-z.]*)$")
# Questions by their first words ("Do you …", "Where …") even without a "?".
_QUESTION_START = re.compile(
    r"(?:(?i:do|does|did|are|is|was|were|can|could|would|will|should|shall|have|has|had|may|"
    r"might|must|am|won't|don't|doesn't|didn't|isn't|aren't|wasn't|weren't|haven't|hasn't|"
    r"can't|couldn't|wouldn't|shouldn't)\s+(?:(?i:you|i|we|he|she|they|it|there|your|my|our|"
    r"their|his|her|the|this|that|anyone|anybody)\b|[A-Z]\w*)"
    r"|(?i:who|what|where|when|why|how|which|whose|whom)\b(?!\s+(?:i|we)\s))"
)
# "I live in Osaka, what about you?": the head before a question tail is still a statement.
_QUESTION_TAIL = re.compile(
    r"(?i:and\s+)?(?i:what|how|and\s+you|you|right|isn't\s+it|don't\s+you|do\s+you|wbu|hbu|"
    r"huh|ok|okay|yeah|no)\b"
    # A request after a statement: "I chose Vite, can you help me set it up?"
    r"|(?i:so\s+|but\s+|and\s+)?(?i:(?:can|could|would|will)\s+you|any\s+(?:tips|advice|ideas|"
    r"suggestions|thoughts|recommendations)|should\s+i|is\s+there|are\s+there)\b"
)
# Hypotheticals and hedges state nothing ("If I lived in Paris…", "I think I'll move").
_HYPOTHETICAL = re.compile(
    r"(?i:if|unless|suppose|supposing|imagine|what\s+if|in\s+case|even\s+if|assuming|"
    r"hypothetically|whether|let's\s+say|once|when|whenever)\b"
)
_HEDGE = re.compile(
    r"(?i:maybe|perhaps|probably|possibly|hopefully|i\s+think|i\s+guess|i\s+suppose|"
    r"i\s+believe|i\s+hope|i\s+wish|i\s+doubt|i\s+wonder|not\s+sure|i'm\s+not\s+sure|"
    r"i\s+heard|they\s+say|apparently|supposedly|rumou?r)\b"
)
# "…, not anymore" turns the clause before into a negation.
_NOT_ANYMORE = re.compile(
    r"\s*(?i:but\s+)?(?i:not\s+any\s*more|no\s+longer|not\s+now|not\s+these\s+days)\s*[.!]*\s*$"
)

# "It was never A. It was always B." is one correction split over two sentences.
_CONTRAST_HEAD = re.compile(r"\bnever\b|\bnot\b|n't\b", re.I)
_CONTRAST_TAIL = re.compile(
    r"\s*(?:but\s+)?(?:it|that|this|they|he|she)(?:'s|\s+(?:is|was|has|were|are))\b", re.I
)

# ----------------------------------------------------------------------------- clause splits

# Candidate clause boundaries: punctuation (optionally with a conjunction) or a bare conjunction.
# A boundary splits only when ``_CLAUSE_START`` matches after it, so "salt and pepper" and
# "Osaka, Japan" stay whole.
_SEP = re.compile(
    r"\s*(?:[,;](?=\s)|:(?=\s)|\s[-–—]{1,2}(?=\s))\s*(?:(?i:and|but|so|then|yet|plus|or|because|"
    r"since|while|whereas|although|though)\b\s*)?"
    r"|\s+(?i:and|but|so|then|yet|plus|because|since|while|whereas|although|though)\s+"
)
# A bare verb after a boundary starts a clause that inherits the subject ("and joined Globex").
# Not "like": after a comma it is the preposition ("…, like drawing two aces").
_CLAUSE_VERBS = (
    r"live|lives|living|moved|relocated|work|works|working|joined|started|left|quit|likes|"
    r"love|loves|enjoy|enjoys|adore|adores|hate|hates|dislike|dislikes|detest|prefer|prefers|"
    r"have|has|got|own|owns|use|uses|no\s+longer|don't|do\s+not|doesn't|never|used\s+to|"
    r"stopped|can't\s+stand|cannot\s+stand"
)
# What may start a new clause: a pronoun or "my", a capitalised name followed by a verb, or a
# bare verb.
_CLAUSE_START = re.compile(
    r"(?:(?i:also|now|then|actually|still|currently|recently|just|really|honestly|even)\s+)*"
    r"(?:(?P<pron>(?i:i|we)(?:'[a-z]+)?\b|(?i:my|our|he|she|they|it|it's|you|your|that|this|"
    r"there|here|what|who|not\s+any\s*more|no\s+longer)\b)"
    r"|(?P<name>[A-Z][\w&.-]*(?:\s+[A-Z0-9][\w&.-]*){0,3}(?:'s)?\s+(?i:is|was|has|have|lives|"
    r"lived|works|worked|moved|relocated|likes|loves|hates|enjoys|prefers|joined|left|quit|uses|"
    r"runs|got|just|also|now|no|never|still|doesn't|does|isn't)\b)"
    r"|(?P<verb>(?i:" + _CLAUSE_VERBS + r"))\b)"
)


# ----------------------------------------------------------------------------- episodes


def _episode_text(episode: EpisodeRecord) -> str | None:
    if episode.kind not in ("message", "text"):
        return None
    content = episode.content
    head = content.lstrip()[:1]
    if episode.kind == "message" and head in ("{", "["):
        try:
            data = json.loads(content)
        except ValueError:
            return content
        return _json_text(data)
    return content


def _json_text(data: Any) -> str | None:
    if isinstance(data, dict):
        role = str(data.get("role", "user")).lower()
        if role in ("assistant", "system", "tool", "function", "ai", "bot"):
            return None
        body = data.get("content", data.get("text"))
        return body if isinstance(body, str) else None
    if isinstance(data, list):
        parts = [t for t in (_json_text(item) for item in data) if t]
        return "\n".join(parts) if parts else None
    return None


_SPEAKER_LINE = re.compile(r"^\s*(?P<who>[A-Za-z][\w .'-]{0,30}?)\s*:\s+(?P<text>\S.*)$")


def _segments(text: str, speaker: str) -> list[tuple[str, str]]:
    """(speaker, text) parts: a ``Name: text`` transcript is read line by line."""
    lines = [line for line in text.split("\n") if line.strip()]
    if len(lines) == 1:
        single = _SPEAKER_LINE.match(lines[0])
        if single is not None and _squash(single.group("who")).lower() in _ROLE_USER | _ROLE_BOT:
            if _squash(single.group("who")).lower() in _ROLE_BOT:
                return []
            return [(speaker, single.group("text"))]
    if len(lines) >= 2:
        parsed = [_SPEAKER_LINE.match(line) for line in lines]
        matches = [m for m in parsed if m is not None]
        if len(matches) == len(lines):
            labels = [_squash(m.group("who")).lower() for m in matches]
            known = _ROLE_USER | _ROLE_BOT
            if not any(label in _NOT_SPEAKER for label in labels) and (
                len(set(labels)) >= 2 or any(label in known for label in labels)
            ):
                out: list[tuple[str, str]] = []
                for m, label in zip(matches, labels, strict=True):
                    if label in _ROLE_BOT:
                        continue
                    who = speaker if label in _ROLE_USER else _squash(m.group("who"))
                    out.append((who, m.group("text")))
                return out
    return [(speaker, text)]


def _sentences(text: str) -> list[tuple[str, str]]:
    """(sentence, terminator) pairs; the terminator is '?' for questions, '!' , '.' or ''."""
    out: list[tuple[str, str]] = []
    start = 0
    for match in _SENT_END.finditer(text):
        mark = match.group()
        if mark == ".":
            word = _LAST_WORD.search(text[start : match.start()])
            if word:
                token = word.group(1)
                if token.lower().rstrip(".") in _ABBREV or (len(token) == 1 and token.isupper()):
                    continue
        piece = text[start : match.start()]
        end = "?" if "?" in mark else ("!" if "!" in mark else ("." if "." in mark else ""))
        if piece.strip():
            out.append((piece, end))
        start = match.end()
    tail = text[start:]
    if tail.strip():
        out.append((tail, ""))
    return out


def _merge_contrasts(sentences: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """Join "It was never A. It was always B." into one sentence when it forms a correction."""
    out: list[tuple[str, str]] = []
    index = 0
    while index < len(sentences):
        text, end = sentences[index]
        if index + 1 < len(sentences) and end != "?" and _CONTRAST_HEAD.search(text):
            nxt, nxt_end = sentences[index + 1]
            if _CONTRAST_TAIL.match(nxt):
                joined = text.rstrip() + (end or ",") + " " + nxt.strip()
                body = _strip_lead(joined)[0].strip()
                if _NEVER_ALWAYS.match(body) or _NOT_BUT.match(body):
                    out.append((joined, nxt_end))
                    index += 2
                    continue
        out.append((text, end))
        index += 1
    return out


def _declarative_head(text: str) -> str | None:
    """ "I live in Osaka, what about you?" → "I live in Osaka"; a real question → None."""
    for match in reversed(list(re.finditer(r",\s*|\s[-–—]+\s", text))):
        head, tail = text[: match.start()], text[match.end():]
        if _QUESTION_TAIL.match(tail) and head.strip() and not _QUESTION_START.match(
            _strip_lead(head)[0]
        ):
            return head
    return None


def _clauses(text: str, ref: datetime) -> list[_Clause]:
    """Split a sentence into clauses, with time phrases resolved and blanked out."""
    work = list(text)
    times: list[tuple[int, datetime | None, bool]] = []
    for match in _TIME.finditer(text):
        resolved, is_future = _resolve_time(match, ref)
        times.append((match.start(), resolved, is_future))
        work[match.start() : match.end()] = " " * (match.end() - match.start())
    blanked = "".join(work)
    blanked = _TIME_FILLER_LOWER.sub(lambda m: " " * len(m.group()), blanked)
    # (text start, text end, inherits subject, region end): a time phrase belongs to the clause
    # whose region holds it; regions end at the separator's comma or conjunction word.
    spans: list[tuple[int, int, bool, int]] = []
    start = 0
    inherit = False
    for sep in _SEP.finditer(blanked):
        follow = _CLAUSE_START.match(blanked, sep.end())
        if follow is None:
            continue
        raw = sep.group()
        pivot = sep.start() + (len(raw) - len(raw.lstrip()))
        spans.append((start, sep.start(), inherit, pivot))
        start = sep.end()
        inherit = bool(follow.group("verb"))
    spans.append((start, len(blanked), inherit, len(blanked)))
    clauses: list[_Clause] = []
    carried: datetime | None = None
    carried_future = False
    region_lo = 0
    for lo, hi, inh, region_hi in spans:
        when = None
        future = False
        for pos, t, fut in times:
            if region_lo <= pos < region_hi:
                future = future or fut
                if when is None and t is not None:
                    when = t
        region_lo = region_hi
        piece = blanked[lo:hi]
        if not _WORD.search(_strip_lead(piece)[0]):
            if when is not None or future:
                carried, carried_future = when, future
            continue
        if when is None and carried is not None:
            when = carried
        future = future or carried_future
        carried, carried_future = None, False
        evidence = _squash(text[lo:region_hi if region_hi > hi else hi]).strip(" ,;:.!")
        clauses.append(_Clause(piece, evidence, when, future, inh))
    return clauses


