"""The rules extractor's time phrases: found in a clause, resolved against the reference time.

"yesterday" −1 day, "last week" −7, "last month" −30, "last year" −365, "last Monday", "N units
ago", "for N years" (the start of the duration), "in/since 2019" (Jan 1 UTC), "in March 2021",
"since March", "on 2021-03-05". Future phrases ("tomorrow", "next week", "soon") mark the clause
as no fact. Fillers ("these days", "currently") are matched only so that they are cut out.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

from .text import _squash
from .words import _MONTHS, _NUMBERS, _UNIT_DAYS, _WEEKDAYS, _alternation

_NUM = r"(?:\d{1,3}|a\s+couple(?:\s+of)?|a\s+few|several|an?|one|two|three|four|five|six|seven|" \
       r"eight|nine|ten|eleven|twelve)"
_MONTH_RX = _alternation(_MONTHS)
_WEEKDAY_RX = _alternation(_WEEKDAYS)
# One alternation, one named group per kind of phrase: ``_resolve_time`` reads which matched.
_TIME = re.compile(
    r"\b(?:(?P<yesterday>(?:just\s+)?yesterday|last\s+night)"
    r"|(?:over\s+)?(?:the\s+)?(?:last|past)\s+(?P<last_unit>week|month|year)"
    r"|last\s+(?P<last_wd>" + _WEEKDAY_RX + r")"
    r"|(?P<ago_n>" + _NUM + r")\s+(?P<ago_unit>day|week|month|year)s?\s+ago"
    r"|(?:back\s+)?(?:in|since|during|from)\s+(?:(?P<yr_part>early|late|mid)[\s-]+)?"
    r"(?:(?P<yr_month>" + _MONTH_RX + r")\s+)?(?P<year>(?:19|20)\d{2})"
    r"|(?:in|since)\s+(?P<month>" + _MONTH_RX + r")(?!\s*\d)"
    r"|(?:on|since)\s+(?P<iso>\d{4}-\d{2}-\d{2})"
    r"|for\s+(?:the\s+(?:past|last)\s+)?(?P<dur_n>" + _NUM + r")\s+(?P<dur_unit>day|week|month|"
    r"year)s?"
    r"|(?P<future>tomorrow|next\s+(?:week|month|year|" + _WEEKDAY_RX + r"|spring|summer|fall|"
    r"autumn|winter|weekend|time)|in\s+" + _NUM + r"\s+(?:day|week|month|year)s?|soon|someday|"
    r"some\s+day|one\s+day|later\s+this\s+(?:week|month|year))"
    r"|(?P<filler>right\s+now|these\s+days|nowadays|at\s+the\s+moment|at\s+present|lately|"
    r"recently|currently|today|tonight|this\s+(?:morning|afternoon|evening|week|month|year)|"
    r"earlier\s+today|for\s+years|for\s+a\s+while|for\s+ages|for\s+good|for\s+now|"
    r"last\s+(?:spring|summer|fall|autumn|winter|weekend)))\b",
    re.I,
)
# Lowercase "now"/"again" are blanked too, but only after the phrases above ("right now").
_TIME_FILLER_LOWER = re.compile(r"\b(?:now|again)\b")


def _months_ago(ref: datetime, month: int, year: int | None) -> datetime:
    if year is None:
        year = ref.year if month <= ref.month else ref.year - 1
    return datetime(year, month, 1, tzinfo=UTC)


def _number(text: str) -> int | None:
    text = _squash(text.lower())
    if text.isdigit():
        return int(text)
    return _NUMBERS.get(text)


def _resolve_time(match: re.Match[str], ref: datetime) -> tuple[datetime | None, bool]:
    """(valid_from or None, is_future) for one time phrase."""
    g = match.groupdict()
    if g["future"]:
        return None, True
    if g["yesterday"]:
        return ref - timedelta(days=1), False
    if g["last_unit"]:
        return ref - timedelta(days=_UNIT_DAYS[g["last_unit"].lower()]), False
    if g["last_wd"]:
        back = (ref.weekday() - _WEEKDAYS[g["last_wd"].lower()]) % 7 or 7
        return ref - timedelta(days=back), False
    if g["ago_n"]:
        n = _number(g["ago_n"])
        if n is None:
            return None, False
        return ref - timedelta(days=n * _UNIT_DAYS[g["ago_unit"].lower()]), False
    if g["year"]:
        year = int(g["year"])
        month = 1
        if g["yr_month"]:
            month = _MONTHS[g["yr_month"].lower()]
        elif g["yr_part"]:
            month = {"early": 1, "mid": 7, "late": 10}[g["yr_part"].lower()]
        return datetime(year, month, 1, tzinfo=UTC), False
    if g["month"]:
        return _months_ago(ref, _MONTHS[g["month"].lower()], None), False
    if g["iso"]:
        try:
            day = datetime.strptime(g["iso"], "%Y-%m-%d")
        except ValueError:
            return None, False
        return day.replace(tzinfo=UTC), False
    if g["dur_n"]:
        n = _number(g["dur_n"])
        if n is None:
            return None, False
        return ref - timedelta(days=n * _UNIT_DAYS[g["dur_unit"].lower()]), False
    return None, False
