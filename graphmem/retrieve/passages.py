"""Length-fair episode scoring: a long episode competes through its best passage.

A whole-episode BM25 score grows with the number of query words an episode holds, and a long
assistant reply that restates the question's topic holds most of them: it outranks the short
user turn that states the answer. Here each of the best full-text candidates is read as
passages, windows of ``size`` words that overlap by half (fixed-size windows, as in classic
passage retrieval; a turn of at most ``size`` words is one passage), and scored by Okapi BM25
over the candidates' passages: term statistics (document frequencies, the mean passage length)
come from the candidate set, so the score needs nothing from the store beyond the candidates'
text and behaves the same on every store. An episode's passage score is its best passage's.
Each query stem is one ``str.find`` scan of a text, so the cost follows the matches,
not the words of a long reply.

A first-person question ("when does my sprint end?") is about whoever asks it: the turns of
the speakers that stand for the asker (``RetrievalConfig.self_speakers``, "user" in a chat
transcript) are then that question's own statements, and take the speaker cue as a named
speaker's turns do. A request for a summary, an overview or a recap is not: it asks about a
topic across the conversation, whoever said what about it (GraphRAG's "global" questions, as
against questions about one fact), and in a chat with an assistant most of that is in the
assistant's replies (65 % of BEAM 100K's summarization evidence). The cue, which puts the
asker's own short statements before those replies, is left off for it.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Mapping

from .._text import STOP_WORDS, WORD
from .query import _stem

__all__ = ["asks_about_self", "asks_for_a_summary", "best_passage_scores", "passages"]

_FIRST_PERSON = re.compile(r"\b(?:i|i'm|i've|i'd|i'll|me|my|mine|myself)\b", re.IGNORECASE)
_SUMMARY = re.compile(
    r"\b(?:summar(?:y|ies|ise|ised|ising|ize|ized|izing)|overview|recap)\b", re.IGNORECASE
)
_K1 = 1.2
_B = 0.75


def asks_about_self(query: str) -> bool:
    """Whether the query speaks in the first person singular."""
    return _FIRST_PERSON.search(query) is not None


def asks_for_a_summary(query: str) -> bool:
    """Whether the query asks for a summary, an overview or a recap."""
    return _SUMMARY.search(query) is not None


def passages(text: str, size: int) -> list[str]:
    """The passages of a text: windows of ``size`` words, each starting ``size // 2`` words
    after the previous one (the last may be shorter); one passage when it has at most
    ``size`` words."""
    words = text.split()
    if len(words) <= size:
        return [" ".join(words)] if words else [text]
    stride = max(1, size // 2)
    return [" ".join(words[i : i + size]) for i in range(0, len(words) - size + stride, stride)]


def _occurrences(text: str, stem: str, longer: list[str]) -> list[int]:
    """Character offsets of the words that begin with ``stem`` (a stem under three letters:
    the word itself), less those that begin with a longer query stem (they count for it).
    ``str.find`` scans in C; only the hits are looked at here."""
    out: list[int] = []
    at = text.find(stem)
    end = len(stem)
    while at >= 0:
        if (at == 0 or not text[at - 1].isalnum()) and (
            end >= 3 or at + end == len(text) or not text[at + end].isalnum()
        ) and not any(text.startswith(o, at) for o in longer):
            out.append(at)
        at = text.find(stem, at + end)
    return out


def best_passage_scores(
    query: str, contents: Mapping[str, str], size: int
) -> dict[str, float]:
    """Each episode's best passage BM25 score for the query, with the term statistics of
    ``contents`` (the candidate set); 0 where no passage holds a query word.

    A match's word position is read from its character offset at the text's mean word length
    (a window is about ``size`` words): each query stem is one C-level scan of the text, so
    the cost follows the matches, not the words of a long reply."""
    wanted = list(dict.fromkeys(_stem(w) for w in WORD.findall(query.lower())
                                if w not in STOP_WORDS))
    if not wanted or not contents:
        return {}
    longer = {t: [o for o in wanted if len(o) > len(t) and o.startswith(t)] for t in wanted}
    stride = max(1, size // 2)
    split: dict[str, list[tuple[Counter[str], int]]] = {}
    total_words = 0
    count = 0
    doc_freq: Counter[str] = Counter()
    for eid, text in contents.items():
        lower = text.lower()
        n_words = len(lower.split())
        per_word = len(lower) / (n_words or 1)
        found = [
            (int(at / per_word), term)
            for term in wanted
            for at in _occurrences(lower, term, longer[term])
        ]
        windows = 1 if n_words <= size else len(range(0, n_words - size + stride, stride))
        total_words += n_words if windows == 1 else size * windows
        count += windows
        doc_freq.update({term for _, term in found})
        if windows == 1:
            split[eid] = [(Counter(term for _, term in found), n_words)] if found else []
            continue
        bags: dict[int, Counter[str]] = {}
        for word, term in found:
            last = min(word // stride, windows - 1)
            for window in range(max(0, (word - size) // stride + 1), last + 1):
                bags.setdefault(window, Counter())[term] += 1
        split[eid] = [
            (bag, min(size, n_words - window * stride)) for window, bag in bags.items()
        ]
    n = len(contents)
    mean = total_words / count if count else 1.0
    idf = {t: math.log((n - doc_freq[t] + 0.5) / (doc_freq[t] + 0.5) + 1.0) for t in wanted}
    return {
        eid: max((_bm25(bag, length, idf, mean) for bag, length in bags), default=0.0)
        for eid, bags in split.items()
    }


def _bm25(bag: Counter[str], length: int, idf: Mapping[str, float], mean: float) -> float:
    norm = _K1 * (1.0 - _B + _B * length / (mean or 1.0))
    score = 0.0
    for term, f in bag.items():
        score += idf.get(term, 0.0) * f * (_K1 + 1.0) / (f + norm)
    return score
