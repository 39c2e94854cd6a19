"""Moving a store to another embedder, or filling the vectors it lacks, without ingesting again.

``reembed(store, embedder)`` embeds every fact statement, entity name and episode that holds a
vector (and the extracted episodes stored before episode vectors existed) with ``embedder``,
the way ingest embeds them, a batch at a time. Each batch is committed beside the current
vectors (``ReembedStore``), which recall keeps using; when nothing is left the store swaps the
new ones in and records the new embedder at once. A run that is killed resumes where it
stopped when run again with the same embedder; one with another embedder starts over.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from dataclasses import dataclass

from .._errors import ConfigError
from ..embeddings.factory import Embedder
from ..experience.index import parse_experience, text_view
from ..store._base import GraphStore, Vector
from ..store._reembed import EmbeddingItem, ReembedStore
from .pipeline import EMBED_CHARS

__all__ = ["ReembedReport", "reembed_store"]

log = logging.getLogger("graphmem")
Progress = Callable[[int, int], None]


@dataclass(frozen=True)
class ReembedReport:
    """What a move did: the embedder before and after, the items embedded by this run, the
    batches, and whether it continued an unfinished run."""

    previous: str | None
    embedder: str
    dim: int
    embedded: int
    batches: int
    resumed: bool


def _text(item: EmbeddingItem) -> str:
    """What ingest embeds for the item (``pipeline.Ingestor._embed_all``)."""
    if item.kind == "episode":
        if item.episode_kind == "experience":
            return text_view(parse_experience(item.text))[:EMBED_CHARS]
        return item.text[:EMBED_CHARS]
    return item.text


def _meta(name: str, dim: int) -> str:
    return json.dumps({"name": name, "dim": dim})


def reembed_store(
    store: GraphStore,
    embedder: Embedder,
    *,
    batch_size: int = 256,
    progress: Progress | None = None,
) -> ReembedReport:
    """Move ``store`` to ``embedder`` (see the module docstring). ``progress(done, total)`` is
    called after each committed batch (items staged so far, items in all)."""
    if not isinstance(store, ReembedStore):
        raise ConfigError(f"{type(store).__name__} cannot move to another embedder")
    if batch_size < 1:
        raise ConfigError(f"batch_size must be at least 1, got {batch_size}")
    recorded = store.get_meta("embedder")
    previous = json.loads(recorded)["name"] if recorded else None
    dim = embedder.dim or int(embedder.embed(["dimension probe"]).shape[1])
    target = _meta(embedder.name, dim)
    unfinished = store.get_meta("reembed")
    resumed = unfinished is not None and json.loads(unfinished) == json.loads(target)
    if unfinished is not None and not resumed:
        log.info("graphmem: an unfinished move to %s is dropped for %s", unfinished, target)
        store.clear_staged_embeddings()
    store.set_meta("reembed", target)
    staged, todo = store.embedding_counts()
    total = staged + todo
    done = staged
    if progress is not None:
        progress(done, total)
    embedded = batches = 0
    while True:
        items = store.embedding_backlog(batch_size)
        if not items:
            if store.apply_staged_embeddings(target):
                break
            continue  # written meanwhile: embed those too
        vectors = _embed_unique(embedder, [_text(item) for item in items])
        store.stage_embeddings(
            [(item.kind, item.id, vector) for item, vector in zip(items, vectors, strict=True)]
        )
        embedded += len(items)
        batches += 1
        done += len(items)
        total = max(total, done)
        if progress is not None:
            progress(done, total)
    return ReembedReport(previous, embedder.name, dim, embedded, batches, resumed)


def _embed_unique(embedder: Embedder, texts: list[str]) -> list[Vector]:
    """Each distinct text embedded once (entity names and restated facts repeat)."""
    unique = list(dict.fromkeys(texts))
    rows = embedder.embed(unique)
    by_text = dict(zip(unique, rows, strict=True))
    return [by_text[text] for text in texts]
