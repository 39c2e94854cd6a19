"""The part of the store contract that moves a store to another embedder: what still needs a
vector, and the staged vectors that a swap puts in place at once (both stores implement it)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from ._base import Vector

__all__ = ["EmbeddingItem", "ReembedStore"]


@dataclass(frozen=True)
class EmbeddingItem:
    """A fact, entity or episode a re-embedding still has to embed: its kind (``fact``,
    ``entity``, ``episode``), id, text (statement, name, content) and, for an episode, its
    episode kind (an experience is embedded through its text view)."""

    kind: str
    id: str
    text: str
    episode_kind: str | None = None


@runtime_checkable
class ReembedStore(Protocol):
    """A store that can move to another embedder in resumable batches (both stores do).

    New vectors are staged beside the current ones, which searches keep using until
    ``apply_staged_embeddings`` swaps them in and records the new embedder at once."""

    def embedding_backlog(self, limit: int) -> list[EmbeddingItem]:
        """Up to ``limit`` items not staged yet: every item that holds a vector, and the
        extracted episodes that hold none (add_fact's own episodes aside), in a fixed order."""
        ...

    def embedding_counts(self) -> tuple[int, int]:
        """(items staged, items still to embed)."""
        ...

    def stage_embeddings(self, rows: Sequence[tuple[str, str, Vector]]) -> None:
        """Stage (kind, id, vector) rows, committed (a later run resumes after them)."""
        ...

    def apply_staged_embeddings(self, embedder_meta: str) -> bool:
        """Swap the staged vectors in and record ``embedder_meta`` (the ``embedder`` meta
        value); ``False``, changing nothing, while an item is still unstaged."""
        ...

    def clear_staged_embeddings(self) -> None:
        """Drop what an unfinished move staged."""
        ...
