"""Opening a memory's store: migrations, then the embedder checked against the store's record.

A store records the embedder (name and dimension) its vectors were made with; a memory that
asks for another one must fail before it writes vectors nobody can compare.
"""

from __future__ import annotations

import json
from pathlib import Path

from ._errors import SchemaError, StoreError
from .embeddings.factory import Embedder, embedder_mismatch, resolve_embedder
from .store import GraphStore
from .store.sqlite.store import SQLiteStore

__all__ = ["open_checked", "probe_dim", "require_existing", "store_embedder"]


def require_existing(store: GraphStore, *, schema: bool = True) -> None:
    """``StoreError`` unless ``store`` is a graphmem store already (a SQLite file that exists,
    a database with graphmem's schema), naming it and ``graphmem init``; a missing SQLite file
    is not created. ``GraphMemory(create=False)`` calls it before it opens a store: on a
    mistyped path reads would otherwise answer from a new, empty memory. ``schema=False``
    (``graphmem db status``): a store without graphmem's schema yet is accepted, only a
    missing SQLite file is not."""
    fix = "check the path (--store / GRAPHMEM_STORE), or create it with `graphmem init`"
    if isinstance(store, SQLiteStore):
        if store.path == ":memory:":
            return
        file = Path(store.path).expanduser()
        if not file.exists():
            raise StoreError(f"no store at {store.path}: the file does not exist; {fix}")
    store.connect()
    if schema and not any(m.applied_at is not None for m in store.migration_status()):
        raise StoreError(f"{store.url} holds no graphmem store (no schema); {fix}")


def open_checked(
    store: GraphStore, requested: Embedder | str | None, *, auto_migrate: bool
) -> tuple[Embedder, int]:
    """Connect, apply migrations (``auto_migrate``), refuse a store that still needs some,
    and resolve the embedder: it and its dimension."""
    store.connect()
    if auto_migrate:
        store.migrate()
    pending = [m for m in store.migration_status() if m.applied_at is None]
    if pending:
        raise SchemaError(
            f"{store.url} needs migrations {[m.version for m in pending]}; "
            "run `graphmem db migrate`"
        )
    return store_embedder(store, requested)


def store_embedder(store: GraphStore, requested: Embedder | str | None) -> tuple[Embedder, int]:
    """Resolve the embedder against the store's record: nothing asked for (no ``embedder=``,
    no ``GRAPHMEM_EMBEDDER``) means the store's own; a request it disagrees with is an
    ``EmbeddingMismatchError`` naming both and the fix. A new store records the embedder it
    is given (the hashed n-grams by default)."""
    raw = store.get_meta("embedder")
    recorded: tuple[str, int] | None = None
    if raw is not None:
        try:
            info = json.loads(raw)
            recorded = (str(info["name"]), int(info["dim"]))
        except (ValueError, KeyError, TypeError):
            raise SchemaError(
                f"{store.url}: its recorded embedder is unreadable ({raw[:80]!r})"
            ) from None
    embedder = resolve_embedder(requested, recorded, store=store.url)
    # A new store gets one embedding before it records the embedder: one that cannot load (a
    # missing extra, a model that is not there) fails here and leaves the store unstamped,
    # free for the next command to pick another.
    probed = probe_dim(embedder) if recorded is None or not embedder.dim else 0
    dim = embedder.dim or probed
    if recorded is None:
        store.set_meta("embedder", json.dumps({"name": embedder.name, "dim": dim}))
    elif (embedder.name, dim) != recorded:
        asked = f"embedder={type(embedder).__name__}"
        raise embedder_mismatch(store.url, recorded, asked, embedder.name, dim)
    return embedder, dim


def probe_dim(embedder: Embedder) -> int:
    """The dimension of an embedder that does not declare one (one embedding call)."""
    return int(embedder.embed(["dimension probe"]).shape[1])
