"""Shared fixtures: a memory per available store (SQLite always; Bolt when configured)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from datetime import UTC, datetime

import pytest

from graphmem import GraphMemory, HashEmbedder


@pytest.fixture(autouse=True, scope="session")
def _private_cache_dir(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """What graphmem caches (the int8 ONNX model) goes to a folder of the test session, never
    to the user's ~/.cache."""
    before = os.environ.get("GRAPHMEM_CACHE_DIR")
    os.environ["GRAPHMEM_CACHE_DIR"] = str(tmp_path_factory.mktemp("graphmem-cache"))
    yield
    if before is None:
        os.environ.pop("GRAPHMEM_CACHE_DIR", None)
    else:
        os.environ["GRAPHMEM_CACHE_DIR"] = before


def _store_params() -> list[object]:
    params: list[object] = ["sqlite"]
    if os.environ.get("GRAPHMEM_TEST_BOLT_URI") or os.environ.get("NEO4J_URI"):
        params.append(pytest.param("bolt", marks=pytest.mark.integration))
    return params


def bolt_url() -> str:
    return os.environ.get("NEO4J_URI") or os.environ["GRAPHMEM_TEST_BOLT_URI"]


@pytest.fixture(params=_store_params())
def store_kind(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def memory(
    store_kind: str, tmp_path: object, request: pytest.FixtureRequest
) -> Iterator[GraphMemory]:
    """A fresh memory on each store; on Bolt the database is wiped before and after."""
    if store_kind == "sqlite":
        mem = GraphMemory(f"{tmp_path}/memory.db", embedder=HashEmbedder(64))
        with mem:
            yield mem
        return
    from graphmem.store import open_store

    store = open_store(bolt_url())
    if os.environ.get("GRAPHMEM_TEST_BOLT_ASYNC"):
        # The same tests on the generated async store (behind the sync protocol).
        from graphmem.store.neo4j.loop_store import LoopStore

        store = LoopStore(bolt_url())  # type: ignore[assignment]
    # Wipe before GraphMemory connects: a database left with another embedder by an earlier
    # test would otherwise fail the embedder check before the wipe could run.
    store.connect()
    _wipe(store)
    mem = GraphMemory(store, embedder=HashEmbedder(64))
    with mem:
        yield mem
        _wipe(store)


def _wipe(store: object) -> None:
    wipe = getattr(store, "wipe_all_for_tests", None)
    if wipe is not None:
        wipe(keep_schema=True)


def t(year: int, month: int = 1, day: int = 1) -> datetime:
    return datetime(year, month, day, tzinfo=UTC)
