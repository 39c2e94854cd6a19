"""The ``llm`` extractor: one chat-completion call per episode on any OpenAI-compatible endpoint,
with its answer schema, grounding checks, limits and prompt."""

from __future__ import annotations

import importlib as _importlib
import typing as _typing

if _typing.TYPE_CHECKING:
    from .extractor import LLMExtractor, retry_after_seconds

# Loaded on first use, so that importing one of this folder's parts (or graphmem.extract) does
# not import the third-party client the main module needs.
__all__ = ["LLMExtractor", "retry_after_seconds"]


def __getattr__(name: str) -> _typing.Any:
    if name not in __all__:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(_importlib.import_module(".extractor", __name__), name)
    globals()[name] = value
    return value
