"""Times in input files: ISO-8601 strings, epoch numbers, and transcript timestamps."""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from .._errors import InputError
from .._time import parse_datetime
from .records import Invalid

__all__ = [
    "CHAT_TIME_KEYS",
    "TIME_KEYS",
    "find_time",
    "is_timestamp",
    "parse_time",
    "transcript_time",
]

TIME_KEYS = ("reference_time", "timestamp", "time", "ts", "created_at")
CHAT_TIME_KEYS = (*TIME_KEYS, "date")

_BRACKET_TIME = re.compile(
    r"^(?P<date>\d{4}-\d{2}-\d{2})?(?:[ T]?(?P<clock>\d{1,2}:\d{2}(?::\d{2}(?:\.\d+)?)?))?"
    r"\s*(?P<zone>Z|UTC|[+-]\d{2}:?\d{2})?$"
)


_EXPECTED_TIME = (
    "expected ISO-8601 like 2024-05-01T10:00:00Z, 2024-05-01T12:00:00+02:00 or 2024-05-01"
)


def parse_time(text: str, argument: str = "time", *, assume_utc: bool = False) -> datetime:
    """``graphmem._time.parse_datetime``, with out-of-range dates (2024-13-01) as InputError."""
    try:
        return parse_datetime(text, argument, assume_utc=assume_utc)
    except InputError:
        raise
    except ValueError as exc:
        raise InputError(f"{argument}: {text!r} is not a date ({exc}); {_EXPECTED_TIME}") from None


def is_timestamp(raw: str) -> bool:
    match = _BRACKET_TIME.match(raw.strip())
    return match is not None and bool(match.group("date") or match.group("clock"))


def transcript_time(raw: str, day: str | None) -> tuple[datetime, str]:
    """A transcript timestamp (UTC unless it has an offset) and the date it is on."""
    text = raw.strip()
    match = _BRACKET_TIME.match(text)
    if match is None or not (match.group("date") or match.group("clock")):
        raise Invalid(
            "timestamp",
            f"{raw!r} is not a timestamp; expected [2024-05-01 10:00], "
            "[2024-05-01T10:00:00+02:00] or [10:00] after a dated line",
        )
    date_part = match.group("date") or day
    if date_part is None:
        raise Invalid("timestamp", f"[{raw}] has a time but no date yet; give a full date first")
    clock = match.group("clock")
    zone = match.group("zone") or ""
    if zone == "UTC":
        zone = "Z"
    if zone and len(zone) == 5:  # +0200
        zone = zone[:3] + ":" + zone[3:]
    if clock is not None and len(clock.split(":")[0]) == 1:
        clock = "0" + clock
    iso = date_part if clock is None else f"{date_part}T{clock}{zone}"
    try:
        when = parse_time(iso, "timestamp", assume_utc=True)
    except InputError as exc:
        raise Invalid("timestamp", f"[{raw}]: {_strip_argument(exc)}") from None
    return when, date_part


def _strip_argument(exc: InputError) -> str:
    text = str(exc)
    for prefix in ("timestamp: ", "reference_time: ", "time: "):
        if text.startswith(prefix):
            return text[len(prefix):]
    return text


def _record_time(value: Any, key: str, assume_utc: bool) -> datetime:
    if isinstance(value, bool):
        raise Invalid(key, f"expected a date-time, got {json.dumps(value)}")
    if isinstance(value, int | float):
        if not math.isfinite(value):
            raise Invalid(key, "expected a date-time, got a non-finite number")
        seconds = value / 1000.0 if abs(value) >= 1e11 else float(value)
        try:
            when = datetime.fromtimestamp(seconds, tz=UTC)
        except (OverflowError, OSError, ValueError):
            raise Invalid(key, f"epoch time {value} is out of range") from None
        return when.replace(microsecond=(when.microsecond // 1000) * 1000)
    if not isinstance(value, str):
        raise Invalid(
            key, f"expected an ISO-8601 string or epoch seconds, got {type(value).__name__}"
        )
    try:
        return parse_time(value, key, assume_utc=assume_utc)
    except InputError as exc:
        reason = _strip_argument(exc).removeprefix(f"{key}: ")
        if "no timezone" in reason and not assume_utc:
            reason += " (or pass --assume-utc)"
        raise Invalid(key, reason) from None


def find_time(record: Mapping[str, Any], keys: Sequence[str], assume_utc: bool,
               prefix: str = "") -> datetime | None:
    for key in keys:
        if key in record and record[key] is not None:
            return _record_time(record[key], prefix + key, assume_utc)
    return None
