"""Words for full-text search, shared by the retriever and every store.

The retriever reads a query's words with the same tokenizer and stop words that the stores use
to build their full-text queries, so that what one side drops the other never looks for. No
third-party imports: the read path loads this module on every recall.
"""

from __future__ import annotations

import re

__all__ = ["STOP_WORDS", "WORD", "fts_words", "light_stem"]

WORD = re.compile(r"\w+", re.UNICODE)
# Function words: left out of full-text queries (they match everything and say nothing). Also
# the "s" and "t" that the tokenizer splits off "Caroline's" and "don't".
STOP_WORDS = frozenset(
    [
     "a", "about", "after", "again", "all", "also", "am", "an", "and", "any", "are", "as", "at",
     "be", "been", "before", "being", "both", "but", "by", "can", "could", "did", "do", "does",
     "doing", "during", "each", "few", "for", "from", "further", "had", "has", "have", "having",
     "he", "her", "here", "hers", "herself", "him", "himself", "his", "how", "i", "if", "in",
     "into", "is", "it", "its", "itself", "just", "me", "more", "most", "much", "my", "myself",
     "no", "nor", "of", "off", "on", "once", "only", "or", "other", "our", "ours", "out", "over",
     "own", "s", "same", "she", "should", "so", "some", "such", "t", "than", "that", "the", "their",
     "theirs", "them", "themselves", "then", "there", "these", "they", "this", "those", "through",
     "to", "too", "under", "until", "up", "very", "was", "we", "were", "what", "when", "where",
     "which", "while", "who", "whom", "why", "will", "with", "would", "you", "your", "yours",
    ]
)


def fts_words(text: str) -> list[str]:
    """The text's words for an FTS5 OR-query (stop words dropped); each is quoted later."""
    words = [w for w in WORD.findall(text.lower()) if w not in STOP_WORDS]
    if not words:
        words = WORD.findall(text.lower())
    return list(dict.fromkeys(words))[:32]


_SUFFIXES = ("ing", "ed", "es", "s", "ly")


def light_stem(word: str) -> str:
    """A light stem for comparing words ("likes", "liked" → "lik"; "painted" → "paint"): the
    retriever's query words and the words turn links are about."""
    word = word.lower()
    for suffix in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            return word[: -len(suffix)]
    return word
