"""The ``rules`` extractor: offline, pattern-based facts from plain English text and chat
messages (the pattern table, the clause grammar, sentences, time phrases and vocabulary)."""

from __future__ import annotations

import importlib as _importlib
import typing as _typing

if _typing.TYPE_CHECKING:
    from .extractor import ENTITY, ORG, PERSON, PLACE, RulesExtractor

# Loaded on first use, so that importing one of this folder's parts (or graphmem.extract) does
# not import the third-party client the main module needs.
__all__ = ["ENTITY", "ORG", "PERSON", "PLACE", "RulesExtractor"]


def __getattr__(name: str) -> _typing.Any:
    if name not in __all__:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(_importlib.import_module(".extractor", __name__), name)
    globals()[name] = value
    return value
