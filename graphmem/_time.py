"""Time helpers: every datetime inside graphmem is timezone-aware UTC with millisecond precision.

Stores keep times as integer epoch milliseconds, so ordering and equality mean the same on SQLite
and Neo4j, and record time always comes from the client clock (``utcnow``).
"""

from __future__ import annotations

import re
import threading
from datetime import UTC, date, datetime, timedelta

from ._errors import InputError, NaiveDatetimeError

__all__ = [
    "from_ms",
    "implausible_time",
    "now_ms",
    "parse_datetime",
    "record_ms",
    "require_aware",
    "to_ms",
    "utcnow",
]

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def utcnow() -> datetime:
    """Now, in UTC, truncated to whole milliseconds (what the stores can hold)."""
    now = datetime.now(UTC)
    return now.replace(microsecond=(now.microsecond // 1000) * 1000)


_record_lock = threading.Lock()
_last_record_ms = 0


def record_ms() -> int:
    """Record time of a write: ``utcnow`` in epoch ms, strictly increasing within the process.

    Two writes in the same millisecond must stay ordered: forget rebuilds a timeline by
    replaying the claims in record-time order (``graphmem.reconcile.replay``).
    """
    global _last_record_ms
    with _record_lock:
        _last_record_ms = max(to_ms(utcnow()), _last_record_ms + 1)
        return _last_record_ms


def now_ms() -> int:
    """"Now" for a read: never before a record time this process has issued, so a fact written
    a moment ago (``record_ms`` may run a millisecond ahead of the clock) is already visible."""
    with _record_lock:
        return max(to_ms(utcnow()), _last_record_ms)


def require_aware(value: datetime | str | None, argument: str) -> datetime | None:
    """Return ``value`` in UTC (ms precision) or raise if it has no timezone. An ISO-8601
    string is read as ``parse_datetime`` reads it, so that every time argument (``as_of``,
    ``known_at``, ``valid_from``, ``reference_time``) takes the same forms."""
    if value is None:
        return None
    if isinstance(value, str):
        return parse_datetime(value, argument)
    if not isinstance(value, datetime):
        raise InputError(f"{argument} must be a datetime, got {type(value).__name__}")
    if value.tzinfo is None or value.tzinfo.utcoffset(value) is None:
        raise NaiveDatetimeError(
            f"{argument} is a naive datetime ({value.isoformat()}); "
            "give a timezone-aware one, e.g. datetime(..., tzinfo=timezone.utc)"
        )
    try:
        utc = value.astimezone(UTC)
    except OverflowError:
        raise InputError(f"{argument} ({value.isoformat()}) is out of range in UTC") from None
    return utc.replace(microsecond=(utc.microsecond // 1000) * 1000)


def to_ms(value: datetime) -> int:
    """Epoch milliseconds of an aware datetime."""
    return (value - _EPOCH) // timedelta(milliseconds=1)


def from_ms(value: int) -> datetime:
    return _EPOCH + timedelta(milliseconds=value)


_DATE_ONLY = re.compile(r"^\d{4}-\d{2}-\d{2}$")


def parse_datetime(text: str, argument: str = "time", *, assume_utc: bool = False) -> datetime:
    """Parse ISO-8601 with an offset or ``Z``, or a bare date (taken as midnight UTC).

    A date-time without an offset is rejected unless ``assume_utc`` is set, because guessing a
    timezone silently shifts facts by hours.
    """
    raw = text.strip()
    if _DATE_ONLY.match(raw):
        try:
            day = date.fromisoformat(raw)
        except ValueError:
            raise InputError(f"{argument}: {text!r} is not a date ({raw} does not exist)") from None
        return datetime(day.year, day.month, day.day, tzinfo=UTC)
    try:
        parsed = datetime.fromisoformat(raw.replace("Z", "+00:00").replace("z", "+00:00"))
    except ValueError:
        raise InputError(
            f"{argument}: {text!r} is not a date; expected ISO-8601 like "
            "2024-05-01T10:00:00Z, 2024-05-01T12:00:00+02:00 or 2024-05-01"
        ) from None
    if parsed.tzinfo is None:
        if not assume_utc:
            raise NaiveDatetimeError(
                f"{argument}: {text!r} has no timezone; add Z or an offset like +02:00"
            )
        parsed = parsed.replace(tzinfo=UTC)
    result = require_aware(parsed, argument)
    assert result is not None
    return result


_EARLIEST_PLAUSIBLE = datetime(1900, 1, 1, tzinfo=UTC)
_AHEAD_PLAUSIBLE = timedelta(days=366)


def implausible_time(value: datetime | int | None, argument: str = "reference_time") -> str | None:
    """A warning for a time that is valid but most likely wrong (before 1900, or more than a
    year ahead: an epoch of 0, a year typed as 1 or 9999), else ``None``. Such a time is kept
    (a log may mean it), but facts dated by it would sort before or after everything else."""
    if value is None:
        return None
    when = from_ms(value) if isinstance(value, int) else value
    if when < _EARLIEST_PLAUSIBLE:
        return f"{argument} {when.isoformat()} is before 1900; is it right?"
    if when - utcnow() > _AHEAD_PLAUSIBLE:
        return f"{argument} {when.isoformat()} is more than a year ahead; is it right?"
    return None

