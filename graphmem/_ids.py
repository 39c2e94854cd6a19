"""Deterministic ids and normalised keys.

Ids derive from content so that re-ingesting the same input is a no-op and two stores given the
same input in the same order hold the same ids.
"""

from __future__ import annotations

import hashlib
import json
import re
import unicodedata
from typing import Any

__all__ = ["content_hash", "entity_key", "make_id", "value_json", "value_key"]

_SPACE = re.compile(r"\s+")
_PUNCT = re.compile(r"[^\w\s.@:/+-]")
_ARTICLE = re.compile(r"^(the|a|an)\s+")


def make_id(prefix: str, *parts: str) -> str:
    digest = hashlib.blake2b("\x1f".join(parts).encode("utf-8"), digest_size=12).hexdigest()
    return f"{prefix}_{digest}"


def content_hash(*parts: str) -> str:
    return hashlib.sha256("\x1f".join(parts).encode("utf-8")).hexdigest()


# The longest key kept as it is (characters); longer ones end in a hash of the whole.
_KEY_CHARS = 512


def entity_key(name: str) -> str:
    """Normalised entity name: case-folded, accents and punctuation dropped, no leading article."""
    text = unicodedata.normalize("NFKD", name)
    text = "".join(ch for ch in text if not unicodedata.combining(ch)).casefold()
    text = _PUNCT.sub(" ", text)
    text = _SPACE.sub(" ", text).strip()
    text = _ARTICLE.sub("", text) or name.strip().casefold()
    if len(text) <= _KEY_CHARS:
        return text
    # A key is an indexed property, and Neo4j refuses a range-index entry over about 8 KB (a
    # 22,000-character name failed there). A long key keeps its start, readable, and a hash of
    # the whole, so two long names still differ.
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()[:32]
    return f"{text[: _KEY_CHARS - 33]}#{digest}"


def value_json(value: Any) -> str:
    """The stored form of a literal value; keeps its JSON type (1, 1.5, true, "x")."""
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


def value_key(object_id: str | None, value: Any) -> str:
    """What makes two facts about the same (subject, predicate) say the same thing."""
    if object_id is not None:
        return f"e:{object_id}"
    if isinstance(value, str):
        return "s:" + entity_key(value)
    return "v:" + value_json(value)
