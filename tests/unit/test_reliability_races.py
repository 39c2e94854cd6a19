"""Deterministic interleavings of two writers on one store (what concurrent processes do).

The episode is stored first (``pending``), extracted outside any transaction, then written; a
second handle on the same store acts in that window: it ingests the very same episode, or
forgets it. The final graph must be what one ingest gives (no double-counted confidence, no
provenance pointing at a forgotten episode).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from graphmem import GraphMemory, HashEmbedder
from graphmem._models import EpisodeRecord, Extraction
from graphmem.extract import ExtractionContext
from graphmem.extract.rules import RulesExtractor
from tests.conftest import bolt_url
from tests.helpers.reliability import canonical, diff_canonical, sqlite_problems

pytestmark = pytest.mark.timeout(60)
WHEN = datetime(2024, 3, 1, 12, 0, tzinfo=UTC)
TEXT = "Alice lives in Paris. Alice likes jazz."


class Meddling:
    """The rules extractor, with something else happening while it runs (once)."""

    name = "rules"
    needs_context = False

    def __init__(self, meanwhile: Callable[[], object]) -> None:
        self.inner = RulesExtractor()
        self.meanwhile: Callable[[], object] | None = meanwhile

    def extract(self, episode: EpisodeRecord, context: ExtractionContext) -> Extraction:
        if self.meanwhile is not None:
            action, self.meanwhile = self.meanwhile, None
            action()
        return self.inner.extract(episode, context)


def other_handle(memory: GraphMemory, store_kind: str) -> GraphMemory:
    """A second, independent GraphMemory on the same store (as another process would hold)."""
    if store_kind == "sqlite":
        return GraphMemory(memory.store.path, embedder=HashEmbedder(64))  # type: ignore[attr-defined]
    from graphmem.store import open_store

    return GraphMemory(open_store(bolt_url()), embedder=HashEmbedder(64))


@pytest.fixture
def other(memory: GraphMemory, store_kind: str) -> Iterator[GraphMemory]:
    mem = other_handle(memory, store_kind)
    with mem:
        yield mem


def check_store(memory: GraphMemory, store_kind: str) -> None:
    if store_kind == "sqlite":
        assert sqlite_problems(memory.store.path) == []  # type: ignore[attr-defined]


def test_same_episode_ingested_by_two_writers_at_once(
    memory: GraphMemory, other: GraphMemory, store_kind: str, tmp_path: Path
) -> None:
    memory.add_fact("Alice", "lives_in", "Paris", valid_from=datetime(2023, 1, 1, tzinfo=UTC))
    meddler = Meddling(lambda: other.add_episode(TEXT, reference_time=WHEN, extractor="rules"))
    result = memory.add_episode(TEXT, reference_time=WHEN, extractor=meddler)
    assert meddler.meanwhile is None  # the other writer did run in the window
    assert result.status == "extracted"
    check_store(memory, store_kind)

    with GraphMemory(tmp_path / "once.db", embedder=HashEmbedder(64)) as once:
        once.add_fact("Alice", "lives_in", "Paris", valid_from=datetime(2023, 1, 1, tzinfo=UTC))
        once.add_episode(TEXT, reference_time=WHEN, extractor="rules")
        want = canonical(once.export())
    got = canonical(memory.export())
    # Confidence is raised once per supporting episode, not once per writer.
    assert got == want, diff_canonical(want, got)


def test_episode_forgotten_while_it_is_being_extracted(
    memory: GraphMemory, other: GraphMemory, store_kind: str
) -> None:
    memory.add_fact("Bob", "works_at", "Acme", valid_from=datetime(2023, 1, 1, tzinfo=UTC))
    before = canonical(memory.export())
    pending = [e for e in other.store.episodes_by_status(None, ["pending"])]
    assert pending == []

    def forget_it() -> None:
        (row,) = other.store.episodes_by_status(None, ["pending"])
        other.forget(episode_id=row.id)

    memory.add_episode(TEXT, reference_time=WHEN, extractor=Meddling(forget_it))
    check_store(memory, store_kind)  # no provenance or mention of the forgotten episode
    assert canonical(memory.export()) == before
