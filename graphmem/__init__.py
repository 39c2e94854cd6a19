"""graphmem: long-term memory for AI agents and robots as a temporal knowledge graph.

>>> from graphmem import GraphMemory
>>> mem = GraphMemory("sqlite:///memory.db")                         # doctest: +SKIP
>>> mem.add_episode("I moved to Osaka last week.", metadata={"speaker": "Alice"})  # doctest: +SKIP
>>> print(mem.recall("Where does Alice live?").to_context())          # doctest: +SKIP
"""

from __future__ import annotations

import importlib as _importlib
import typing as _typing

# Exceptions are cheap (no third-party imports) and are what `except graphmem.X` needs first.
from ._errors import (
    BudgetExceededError,
    ConfigError,
    EmbeddingMismatchError,
    ExtractionError,
    FilterError,
    GraphMemError,
    InputError,
    LLMError,
    NaiveDatetimeError,
    NotFoundError,
    PredicateError,
    SchemaError,
    StoreError,
)

if _typing.TYPE_CHECKING:
    from ._async_memory import AsyncGraphMemory
    from ._config import Settings
    from ._memory import GraphMemory
    from ._models import (
        EntityRecord,
        EpisodeLink,
        EpisodeRecord,
        EpisodeRef,
        Experience,
        ExtractedEntity,
        ExtractedFact,
        Extraction,
        FactHit,
        FactRecord,
        ForgetResult,
        IngestResult,
        PinnedFact,
        RecallResult,
    )
    from ._predicates import Predicate, PredicateRegistry
    from .embeddings.factory import (
        Embedder,
        HashEmbedder,
        OpenAIEmbedder,
        SentenceTransformerEmbedder,
    )
    from .experience.index import ExperienceWeights
    from .extract import ExtractionContext, Extractor
    from .retrieve.retriever import RetrievalConfig, Retriever
    from .sources.files import Problem, SourceError, load_episodes
    from .store import GraphStore, open_store

    __version__: str

# Everything else is imported on first use (PEP 562): `import graphmem` stays cheap, so a
# command-line call pays only for the modules its command needs (numpy, pydantic, the rules
# extractor's patterns, the LLM and Neo4j clients are not loaded by `import graphmem`).
_LAZY = {
    "AsyncGraphMemory": "._async_memory",
    "Settings": "._config",
    "Embedder": ".embeddings.factory",
    "HashEmbedder": ".embeddings.factory",
    "OpenAIEmbedder": ".embeddings.factory",
    "SentenceTransformerEmbedder": ".embeddings.factory",
    "ExperienceWeights": ".experience.index",
    "GraphMemory": "._memory",
    "EntityRecord": "._models",
    "EpisodeLink": "._models",
    "EpisodeRecord": "._models",
    "EpisodeRef": "._models",
    "Experience": "._models",
    "ExtractedEntity": "._models",
    "ExtractedFact": "._models",
    "Extraction": "._models",
    "FactHit": "._models",
    "FactRecord": "._models",
    "ForgetResult": "._models",
    "IngestResult": "._models",
    "PinnedFact": "._models",
    "RecallResult": "._models",
    "Predicate": "._predicates",
    "PredicateRegistry": "._predicates",
    "RetrievalConfig": ".retrieve.retriever",
    "Retriever": ".retrieve.retriever",
    "Problem": ".sources.files",
    "SourceError": ".sources.files",
    "load_episodes": ".sources.files",
    "ExtractionContext": ".extract",
    "Extractor": ".extract",
    "GraphStore": ".store",
    "open_store": ".store",
}


def _package_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("graphmem")
    except PackageNotFoundError:  # pragma: no cover - running from a source tree
        return "0.0.0"


def __getattr__(name: str) -> _typing.Any:
    if name == "__version__":
        value: _typing.Any = _package_version()
    elif name in _LAZY:
        value = getattr(_importlib.import_module(_LAZY[name], __name__), name)
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    globals()[name] = value  # once: later lookups are plain attribute reads
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


__all__ = [
    "AsyncGraphMemory",
    "BudgetExceededError",
    "ConfigError",
    "Embedder",
    "EmbeddingMismatchError",
    "EntityRecord",
    "EpisodeLink",
    "EpisodeRecord",
    "EpisodeRef",
    "Experience",
    "ExperienceWeights",
    "ExtractedEntity",
    "ExtractedFact",
    "Extraction",
    "ExtractionContext",
    "ExtractionError",
    "Extractor",
    "FactHit",
    "FactRecord",
    "FilterError",
    "ForgetResult",
    "GraphMemError",
    "GraphMemory",
    "GraphStore",
    "HashEmbedder",
    "IngestResult",
    "InputError",
    "LLMError",
    "NaiveDatetimeError",
    "NotFoundError",
    "OpenAIEmbedder",
    "PinnedFact",
    "Predicate",
    "PredicateError",
    "PredicateRegistry",
    "Problem",
    "RecallResult",
    "RetrievalConfig",
    "Retriever",
    "SchemaError",
    "SentenceTransformerEmbedder",
    "Settings",
    "SourceError",
    "StoreError",
    "__version__",
    "load_episodes",
    "open_store",
]
