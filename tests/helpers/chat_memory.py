"""A short chat ingested into either store (SQLite, or the emptied Bolt test server), and the
order recall returns its turns in: what the retrieval-ranking tests compare."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from datetime import datetime, timedelta
from pathlib import Path

from graphmem import GraphMemory, HashEmbedder
from graphmem.retrieve.retriever import RetrievalConfig


def chat_memory(
    store_kind: str, tmp_path: Path, turns: Sequence[tuple[str, str]], start: datetime
) -> Iterator[GraphMemory]:
    """``turns`` ((speaker, text), a minute apart from ``start``) in group "c", each with its
    place in ``metadata["turn"]``; the Bolt store is emptied before and after."""
    if store_kind == "sqlite":
        mem = GraphMemory(tmp_path / "chat.db", embedder=HashEmbedder(64), extractor="rules")
    else:
        from graphmem.store import open_store
        from tests.conftest import bolt_url

        store = open_store(bolt_url())
        store.connect()
        store.wipe_all_for_tests(keep_schema=True)  # type: ignore[attr-defined]
        mem = GraphMemory(store, embedder=HashEmbedder(64), extractor="rules")
    with mem:
        mem.add_episodes(
            {
                "content": text,
                "group_id": "c",
                "source": "s1",
                "reference_time": start + timedelta(minutes=i),
                "metadata": {"speaker": who, "turn": i},
            }
            for i, (who, text) in enumerate(turns)
        )
        yield mem
        if store_kind == "bolt":
            mem.store.wipe_all_for_tests(keep_schema=True)  # type: ignore[attr-defined]


def turn_order(mem: GraphMemory, query: str, config: RetrievalConfig) -> list[int]:
    """The places of the turns ``recall(query, k=10)`` returns, best first, under ``config``."""
    plain = GraphMemory(mem.store, embedder=HashEmbedder(64), retrieval=config)
    result = plain.recall(query, group_id="c", k=10)
    return [int(e.metadata["turn"]) for e in result.episodes]
