"""The one exception tree of graphmem.

Every error the library raises on purpose is a ``GraphMemError``; each carries a stable ``code``
(like pydantic's error codes) so callers and the CLI can branch without parsing messages::

    GraphMemError                      code
    ├── ConfigError                    config       bad store URL, unknown extractor
    ├── InputError (also ValueError)   input        bad argument or record (empty, bad JSON)
    │   ├── NotFoundError              not_found    what was named is not there (forget)
    │   ├── NaiveDatetimeError         naive_datetime   a datetime without a timezone
    │   ├── PredicateError             predicate    a predicate name that is not snake_case
    │   └── FilterError                filter       a malformed recall filter
    ├── StoreError                     store        the store failed (connection lost, I/O error)
    │   ├── SchemaError                schema       foreign/corrupt database, unapplied migrations
    │   └── EmbeddingMismatchError     embedding_mismatch   store built with another embedder
    ├── ExtractionError                extraction   an extractor could not produce facts
    │   └── LLMError                   llm          the model endpoint failed after retries
    └── BudgetExceededError            budget       an LLM call or token budget ran out

Errors never carry partial writes: a failed call leaves the store as it was.
"""

from __future__ import annotations

__all__ = [
    "BudgetExceededError",
    "ConfigError",
    "EmbeddingMismatchError",
    "ExtractionError",
    "FilterError",
    "GraphMemError",
    "InputError",
    "LLMError",
    "NaiveDatetimeError",
    "NotFoundError",
    "PredicateError",
    "SchemaError",
    "StoreError",
]


class GraphMemError(Exception):
    """Root of every error graphmem raises on purpose."""

    code: str = "graphmem"

    def __init__(self, message: str, *, code: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        if code is not None:
            self.code = code

    def __str__(self) -> str:
        return self.message


class ConfigError(GraphMemError):
    """A setting is missing or wrong (store URL, extractor name, model configuration)."""

    code = "config"


class InputError(GraphMemError, ValueError):
    """An argument or input record is invalid; nothing was written."""

    code = "input"


class NotFoundError(InputError):
    """What a call names (an episode, an entity to forget) is not there; nothing was changed.
    Not invalid input on the command line: exit 1 there, like any error, not 2."""

    code = "not_found"


class NaiveDatetimeError(InputError):
    """A datetime without a timezone was given where an aware one is required."""

    code = "naive_datetime"


class PredicateError(InputError):
    """A predicate name is not a snake_case identifier."""

    code = "predicate"


class FilterError(InputError):
    """A recall filter is malformed."""

    code = "filter"


class StoreError(GraphMemError):
    """The graph store failed; the current episode was not written."""

    code = "store"


class SchemaError(StoreError):
    """The database is not a graphmem store, is corrupt, or needs migrations."""

    code = "schema"


class EmbeddingMismatchError(StoreError):
    """The store was built with another embedding model or dimension."""

    code = "embedding_mismatch"


class ExtractionError(GraphMemError):
    """An extractor could not turn an episode into facts."""

    code = "extraction"


class LLMError(ExtractionError):
    """The language-model endpoint failed after retries or returned unusable output.

    ``usage`` holds what the episode spent before it failed (``llm_calls``, ``llm_retries``,
    ``llm_repairs``, ``llm_failed_calls``, ``prompt_tokens``, ``completion_tokens``): failed
    calls are paid for too.
    """

    code = "llm"

    def __init__(self, message: str, *, usage: dict[str, int] | None = None) -> None:
        super().__init__(message)
        self.usage: dict[str, int] = dict(usage or {})


class BudgetExceededError(GraphMemError):
    """The configured LLM call or token budget is spent. ``usage``: what the episode had spent
    before the cap stopped it (as on ``LLMError``)."""

    def __init__(self, message: str, *, usage: dict[str, int] | None = None) -> None:
        super().__init__(message)
        self.usage: dict[str, int] = dict(usage or {})

    code = "budget"
