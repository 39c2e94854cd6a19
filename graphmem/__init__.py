"""graphmem: long-term memory for AI agents and robots as a temporal knowledge graph.

>>> from graphmem import GraphMemory
>>> mem = GraphMemory("sqlite:///memory.db")                         # doctest: +SKIP
>>> mem.add_episode("I moved to Osaka last week.", metadata={"speaker": "Alice"})  # doctest: +SKIP
>>> print(mem.recall("Where does Alice live?").to_context())          # doctest: +SKIP
"""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError as _PackageNotFoundError
from importlib.metadata import version as _version

from ._config import Settings
from ._embed import Embedder, HashEmbedder, OpenAIEmbedder, SentenceTransformerEmbedder
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
    PredicateError,
    SchemaError,
    StoreError,
)
from ._experience import ExperienceWeights
from ._memory import GraphMemory
from ._models import (
    EntityRecord,
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
    RecallResult,
)
from ._predicates import Predicate, PredicateRegistry
from ._retrieve import RetrievalConfig, Retriever
from ._sources import Problem, SourceError, load_episodes
from .extract import ExtractionContext, Extractor
from .store import GraphStore, open_store

try:
    __version__ = _version("graphmem")
except _PackageNotFoundError:  # pragma: no cover - running from a source tree
    __version__ = "0.0.0"

__all__ = [
    "BudgetExceededError",
    "ConfigError",
    "Embedder",
    "EmbeddingMismatchError",
    "EntityRecord",
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
    "OpenAIEmbedder",
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
