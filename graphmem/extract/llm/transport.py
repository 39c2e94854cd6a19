"""Which failures of an OpenAI-compatible endpoint the LLM extractor retries, how long a
server asks it to wait, and how a failure is named in the log."""

from __future__ import annotations

import email.utils
from datetime import UTC, datetime

import openai

__all__ = ["describe", "rejects_json_schema", "retry_after_seconds", "retryable"]


def retryable(exc: BaseException) -> bool:
    if isinstance(exc, openai.APIConnectionError):  # includes APITimeoutError
        return True
    if isinstance(exc, openai.APIStatusError):
        return exc.status_code == 429 or exc.status_code >= 500
    return False


def retry_after_seconds(exc: BaseException, *, now: float | None = None) -> float | None:
    """The server's ``retry-after-ms`` / ``Retry-After`` (seconds or an HTTP date), if any."""
    response = getattr(exc, "response", None)
    headers = getattr(response, "headers", None)
    if headers is None:
        return None
    raw_ms = headers.get("retry-after-ms")
    if raw_ms:
        try:
            return max(0.0, float(raw_ms) / 1000.0)
        except ValueError:
            pass
    raw = headers.get("retry-after")
    if not raw:
        return None
    try:
        return max(0.0, float(raw))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(raw)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    current = datetime.now(UTC).timestamp() if now is None else now
    return max(0.0, when.timestamp() - current)


def rejects_json_schema(exc: openai.APIStatusError) -> bool:
    text = f"{exc.message} {exc.body!r}".lower()
    if exc.status_code == 500:
        # llama-cpp-python's server answers its own request validation error with a 500 that
        # names response_format and json_schema; any other 500 is retried as a server error.
        return "response_format" in text and "json_schema" in text
    if exc.status_code not in (400, 422):
        return False
    return (exc.param == "response_format") or "json_schema" in text or "response_format" in text


def describe(exc: BaseException | None) -> str:
    if isinstance(exc, openai.APIStatusError):
        return f"HTTP {exc.status_code}"
    return type(exc).__name__ if exc is not None else "?"
