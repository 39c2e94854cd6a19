"""Is a fact the model wrote grounded in its episode? Its evidence and its statement, checked.

Small models restate the prompt's known facts with evidence quoted from *other* episodes (the
fact then gets a provenance link to an episode that never said it), and copy the episode as the
fact's statement ("Quick update: I moved to Porto last month."), which recall's word-coverage
gate cannot match to "where does Maya live?". Both are recorded answers of a 1.5B model
(``tests/fixtures/llm_real``).
"""

from __future__ import annotations

import re
import unicodedata

from ...ingest.plan import default_statement

__all__ = ["evidence_in", "fallback_statement", "mentions", "usable_statement"]

# Quotes and dashes a model (or the episode) may write in another form than the other.
_FOLD = str.maketrans({"‘": "'", "’": "'", "“": '"', "”": '"', "–": "-", "—": "-"})
_ELLIPSIS = re.compile(r"\.\.\.+|…")
_EDGES = " \t\n\"'`.,;:!?()[]{}-"
# A statement in the first or second person is the episode's wording, not a fact about the
# subject ("I moved to Porto", "you said your sister…").
_PERSONAL = re.compile(r"\b(i|i'm|i've|i'd|i'll|me|my|mine|we|our|us|you|your|you're)\b")


def normalise(text: str) -> str:
    """Lower case, one space between words, the same quotes and dashes."""
    folded = unicodedata.normalize("NFKC", text).translate(_FOLD).lower()
    return " ".join(folded.split())


def mentions(text: str, phrase: str) -> bool:
    """Whether ``phrase`` occurs in ``text`` as whole words (normalised; an empty phrase never
    does): "Art" is not in "I start"."""
    needle = normalise(phrase).strip(_EDGES)
    if not needle:
        return False
    pattern = re.escape(needle)
    if needle[0].isalnum():
        pattern = r"(?<!\w)" + pattern
    if needle[-1].isalnum():
        pattern += r"(?!\w)"
    return re.search(pattern, normalise(text)) is not None


def evidence_in(evidence: str, episode: str) -> bool:
    """Whether the model's evidence is quoted from ``episode``: each part between ellipses (the
    model may elide, and a clipped evidence ends in "…") occurs in it, case, spacing and edge
    punctuation aside."""
    text = normalise(episode)
    parts = [normalise(p).strip(_EDGES) for p in _ELLIPSIS.split(evidence)]
    parts = [p for p in parts if p]
    return bool(parts) and all(p in text for p in parts)


def usable_statement(statement: str, subject: str, target: str | None) -> bool:
    """A statement recall can match: it names the subject (and the object or value, when the
    fact has one) and is not in the first or second person."""
    low = normalise(statement)
    if not low or _PERSONAL.search(low):
        return False
    if not mentions(low, subject):
        return False
    return target is None or mentions(low, target)


def fallback_statement(subject: str, predicate: str, target: str | None, negated: bool) -> str:
    """The statement built from the fact itself: "Maya lives at Porto.", "Maya no longer …"."""
    words = " ".join(re.sub(r"[^0-9a-zA-Z]+", " ", predicate).lower().split())
    if not negated:
        return default_statement(subject, words, target or "")
    return f"{subject} no longer {words} {target or ''}".strip() + "."
