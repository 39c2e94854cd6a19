"""What the retriever reads in a query, without an LLM: the names it may hold, the periods it
names ("in August 2023"), and its words, stemmed lightly, for comparing with a statement's."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

from .._ids import entity_key
from .._text import STOP_WORDS as _STOP
from .._text import fts_words, light_stem
from .._time import to_ms

__all__: list[str] = []  # private to the retriever

_WORD = re.compile(r"[\w'-]+", re.UNICODE)
_POSSESSIVE = re.compile(r"['’]s$", re.IGNORECASE)


def _words(text: str) -> list[str]:
    """Words, with a possessive 's dropped ("Caroline's" → "Caroline")."""
    return [_POSSESSIVE.sub("", w) for w in _WORD.findall(text)]


def _name_keys(query: str) -> list[str]:
    words = _words(query)
    keys: list[str] = []
    for size in (3, 2, 1):
        for i in range(len(words) - size + 1):
            keys.append(entity_key(" ".join(words[i : i + size])))
    return list(dict.fromkeys(k for k in keys if len(k) > 1))


_MONTHS = {
    name: i + 1
    for i, name in enumerate(
        [
            "january",
            "february",
            "march",
            "april",
            "may",
            "june",
            "july",
            "august",
            "september",
            "october",
            "november",
            "december",
        ]
    )
}
_MONTHS.update({name[:3]: n for name, n in list(_MONTHS.items())} | {"sept": 9})
_MONTH = r"(?P<m>" + "|".join(sorted(_MONTHS, key=len, reverse=True)) + r")\.?"
_DAY = r"(?P<d>[0-3]?\d)(?:st|nd|rd|th)?"
_YEAR = r"(?P<y>(?:19|20)\d\d)"
_DATES = [
    re.compile(rf"\b{_DAY}(?:\s+of)?\s+{_MONTH},?\s+{_YEAR}\b", re.I),
    re.compile(rf"\b{_MONTH}\s+{_DAY},?\s+{_YEAR}\b", re.I),
    re.compile(rf"\b{_MONTH},?\s+{_YEAR}\b", re.I),
    re.compile(rf"\b{_YEAR}\b"),
]
_WEEK_MS = 7 * 86_400_000


def _periods(query: str) -> list[tuple[int, int]]:
    """Time periods the query names, as [start, end) epoch ms (UTC): a day (and the week after
    it, when it would have been told), a month, a year. Bare month names are not read as dates
    ("May" is also a name)."""
    out: list[tuple[int, int]] = []
    taken: list[tuple[int, int]] = []
    for pattern in _DATES:
        for match in pattern.finditer(query):
            if any(a < match.end() and match.start() < b for a, b in taken):
                continue
            parts = match.groupdict()
            year = int(parts["y"])
            month = _MONTHS.get((parts.get("m") or "").lower().rstrip("."))
            try:
                if parts.get("d") and month:
                    start = datetime(year, month, int(parts["d"]), tzinfo=UTC)
                    end = start + timedelta(days=1)
                elif month:
                    start = datetime(year, month, 1, tzinfo=UTC)
                    end = datetime(year + month // 12, month % 12 + 1, 1, tzinfo=UTC)
                else:
                    start = datetime(year, 1, 1, tzinfo=UTC)
                    end = datetime(year + 1, 1, 1, tzinfo=UTC)
            except ValueError:
                continue
            taken.append((match.start(), match.end()))
            out.append((to_ms(start), to_ms(end) + _WEEK_MS))
    return out


_stem = light_stem


def _matches(stem: str, stems: set[str]) -> bool:
    """A stem matches an equal one, or one it is a prefix of, or that is a prefix of it (three
    letters at least): "live" and "liv" (from "lives"), "paint" and "painting"."""
    if stem in stems:
        return True
    return any(
        min(len(stem), len(other)) >= 3 and (other.startswith(stem) or stem.startswith(other))
        for other in stems
    )


def _without(query: str, words: set[str]) -> str:
    """The query less the given (lower-case) words; empty when nothing but stop words remain."""
    kept = " ".join(w for w in _words(query) if w.lower() not in words) if words else query
    return kept if fts_words(kept) and any(w not in _STOP for w in fts_words(kept)) else ""
