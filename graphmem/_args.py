"""Argument checks every ``GraphMemory`` call shares (group ids, text a store can hold).

No third-party imports: the checks run before any store, model or embedder is touched.
"""

from __future__ import annotations

from ._errors import InputError

__all__ = ["GROUP_ID_MAX_CHARS", "check_group", "check_text", "show"]

# The longest group id (characters). A group id is an indexed property on every node, and
# Neo4j refuses a range-index entry over about 8 KB; 1,024 characters (at most 4 KB of
# UTF-8) leave room for the entity key beside it in the (group_id, key) indexes.
GROUP_ID_MAX_CHARS = 1024


def show(value: object, limit: int = 80) -> str:
    """``repr`` for error messages: short, and safe for values whose repr fails (huge ints)."""
    try:
        text = repr(value)
    except Exception:
        text = f"<{type(value).__name__}>"
    return text if len(text) <= limit else text[: limit - 1] + "…"


def check_text(value: object, name: str, *, empty: bool = False) -> str:
    """A string argument every store can hold: UTF-8 encodable (no lone surrogates)."""
    if not isinstance(value, str):
        raise InputError(f"{name} must be a string, got {type(value).__name__}")
    if not empty and not value.strip():
        raise InputError(f"{name} must be a non-empty string")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise InputError(
            f"{name} is not valid Unicode text (lone surrogate at position {exc.start})"
        ) from None
    return value


def check_group(group_id: object) -> str:
    if not isinstance(group_id, str) or not group_id.strip():
        raise InputError(f"group_id must be a non-empty string, got {show(group_id)}")
    if len(group_id) > GROUP_ID_MAX_CHARS:
        raise InputError(
            f"group_id is {len(group_id):,} characters long; at most {GROUP_ID_MAX_CHARS:,}"
        )
    return check_text(group_id, "group_id")
