"""The numbers a turn states, each with the words that say what it measures: what the links
between turns compare (``turn_links.py``).

A quantity is a number (a count, an amount, a percentage, a day of a date, a version) with the
content words around it (stop words out, lightly stemmed) and its unit. Two readings:

- ``STORED``, at ingest, for the links a store keeps: the ``window`` tokens on each side, "%",
  "$" or the word after the number as its unit.
- ``RETURNED``, at recall, for the few turns a recall returns (nothing is stored, so it can read
  more): the number's sentence up to 20 tokens away; dates, years and clock times as kinds of
  their own; function words out; and in the comparison (``link_between``), a value both turns
  state is no change, and a percentage or an amount of money is one of the words in common.
  Measured at ingest on BEAM 100K, the same reading cost either the storage budget (11.2x the
  input of a templated chat, against 10x) or links (updated-first rate 0.641 with 12 tokens).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from .._text import STOP_WORDS, light_stem

__all__ = ["RETURNED", "STORED", "Quantity", "Reading", "quantities", "same_measure", "stem"]

stem = light_stem


@dataclass(frozen=True)
class Reading:
    """How a turn's numbers are read and compared."""

    # Tokens on each side of a number whose content words say what it measures.
    window: int
    # A turn stating more numbers than this is a table, a worked example or a long explanation,
    # not a statement of a few values: such a turn is not linked.
    max_quantities: int
    # The finer reading (see the module's docstring).
    fine: bool


# BEAM 100K: user turns state a median of 1 number, p90 4; assistant replies 16, p90 56; 98 % of
# the turns holding an updated value state 8 or fewer.
STORED = Reading(window=12, max_quantities=8, fine=False)
RETURNED = Reading(window=20, max_quantities=12, fine=True)

# Words that say nothing about what a number measures, beyond the retriever's stop words: the
# function words of scikit-learn's English list (the Glasgow IR group's, its few content words
# such as "bill", "fire" and "system" left out) and spelled-out numbers.
_FUNCTION_WORDS_TEXT = """
    above across afterwards against almost alone along already although always among amongst
    another anyhow anyone anything anyway anywhere around back became because become becomes
    becoming beforehand behind below beside besides between beyond cannot cant could couldnt
    down due either else elsewhere enough etc even ever every everyone everything everywhere
    except first former formerly get give go hence hereafter hereby herein hereupon however
    indeed keep last latter latterly least less many may meanwhile might mine moreover mostly
    must namely neither never nevertheless next nobody none noone not nothing now nowhere often
    onto others otherwise ourselves per perhaps please put rather really seem seemed seeming
    seems several since somehow someone something sometime sometimes somewhere still thence
    thereafter thereby therefore therein thereupon though throughout thru thus together toward
    towards upon us via well whatever whence whenever whereafter whereas whereby wherein
    whereupon wherever whether whither whoever whole whose within without yet yourself
    yourselves one two three four five six seven eight nine ten eleven twelve fifteen twenty
    thirty forty fifty sixty hundred thousand million"""
_FUNCTION_WORDS = STOP_WORDS | frozenset(_FUNCTION_WORDS_TEXT.split())
_MONTHS_TEXT = """
    january february march april may june july august september october november december
    jan feb mar apr jun jul aug sep sept oct nov dec"""
_MONTHS = frozenset(_MONTHS_TEXT.split())
# Kinds of number only ever compared with their own kind.
KINDS = frozenset({"%", "$", "date", "year", "time"})

_CODE = re.compile(r"```.*?(?:```|$)", re.S)
_SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")
_TOKEN = re.compile(r"\$?\d[\d,]*(?:\.\d+)?%?|[^\W\d_][\w'’-]*", re.UNICODE)
_FINE_TOKEN = re.compile(r"\d{1,2}:\d\d|\$?\d[\d,]*(?:\.\d+)?%?|[^\W\d_][\w'’-]*", re.UNICODE)


@dataclass(frozen=True)
class Quantity:
    """A number as stated ("52", "4700", "78%") and the content words around it."""

    value: str
    terms: frozenset[str]
    # Each term's word as written (the first seen), for the link's reason.
    words: tuple[tuple[str, str], ...] = ()
    # What it counts: "%", "$", or the word right after it ("52 sources" → "sourc"); with the
    # fine reading also "date" (a day beside a month's name), "year" (1900–2099 on its own) and
    # "time" (h:mm, or before am/pm); "" if none.
    unit: str = ""


def same_measure(a: Quantity, b: Quantity) -> bool:
    """Whether two quantities can be two values of one thing: a percentage is not a count,
    an amount of money is neither, a day or a year counts nothing, and "15 problems" is not
    "24 cm"."""
    if a.unit in KINDS or b.unit in KINDS:
        return a.unit == b.unit
    return not a.unit or not b.unit or a.unit == b.unit


def quantities(text: str, reading: Reading = STORED) -> list[Quantity]:
    """The quantities a text states (code blocks left out: their numbers are not claims).
    Cached by text: a new turn is compared with its nearest turns, mostly the previous one's."""
    return list(_quantities(text, reading))


@lru_cache(maxsize=4096)
def _quantities(text: str, reading: Reading) -> tuple[Quantity, ...]:
    text = _CODE.sub(" ", text)
    if not reading.fine:
        return tuple(_read(_TOKEN.findall(text), reading))
    out: list[Quantity] = []
    for sentence in _SENTENCE.split(text):
        out.extend(_read(_FINE_TOKEN.findall(sentence), reading))
    return tuple(out)


def _is_number(token: str) -> bool:
    return token[0].isdigit() or token[0] == "$"


def _is_word(token: str, stop: frozenset[str]) -> bool:
    return (
        not _is_number(token)
        and len(token) >= 3
        and token.lower() not in stop
        and "'" not in token
        and "’" not in token
    )


def _read(tokens: Sequence[str], reading: Reading) -> list[Quantity]:
    stop = _FUNCTION_WORDS if reading.fine else STOP_WORDS
    out: list[Quantity] = []
    for i, token in enumerate(tokens):
        if not _is_number(token):
            continue
        words: dict[str, str] = {}
        for w in tokens[max(0, i - reading.window) : i + reading.window + 1]:
            if _is_word(w, stop):
                words.setdefault(stem(w), w.lower())
        unit = _fine_unit(tokens, i) if reading.fine else _unit(tokens, i)
        if unit == "date":
            # The month is what the day is a day of: "May 10" and "May 20" share it, though
            # "may" alone says nothing.
            for month in (tokens[i - 1] if i else "", tokens[i + 1] if i + 1 < len(tokens) else ""):
                if month.lower() in _MONTHS:
                    words.setdefault(stem(month), month.lower())
        if words:
            value = token.replace(",", "").replace("$", "")
            out.append(Quantity(value, frozenset(words), tuple(sorted(words.items())), unit))
    return out


def _unit(tokens: Sequence[str], i: int) -> str:
    token = tokens[i]
    if token.endswith("%"):
        return "%"
    if token.startswith("$"):
        return "$"
    after = tokens[i + 1] if i + 1 < len(tokens) else ""
    if after and not _is_number(after) and after.lower() not in STOP_WORDS:
        return stem(after)  # short units count too: "24 cm", "5 kg"
    return ""


def _fine_unit(tokens: Sequence[str], i: int) -> str:
    token = tokens[i]
    if token.endswith("%") or token.startswith("$"):
        return _unit(tokens, i)
    if ":" in token:
        return "time"
    before = tokens[i - 1].lower() if i > 0 else ""
    after = tokens[i + 1] if i + 1 < len(tokens) else ""
    counts = bool(after) and not _is_number(after) and after.lower() not in STOP_WORDS
    digits = token.rstrip(",")
    if (
        len(digits) == 4
        and digits.isdigit()
        and 1900 <= int(digits) <= 2099
        and (before in _MONTHS or not counts)
    ):
        return "year"
    if before in _MONTHS or after.lower() in _MONTHS:
        return "date"
    if after.lower() in ("am", "pm"):
        return "time"
    return stem(after) if counts else ""
