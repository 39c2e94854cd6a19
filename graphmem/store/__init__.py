"""Graph stores: the ``GraphStore`` protocol, the embedded SQLite store, and store URLs."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TypedDict
from urllib.parse import unquote, urlparse

from .._errors import ConfigError
from ._base import GraphStore, MigrationInfo, TimeView, WritePlan
from .sqlite.store import SQLiteStore

__all__ = ["GraphStore", "MigrationInfo", "SQLiteStore", "TimeView", "WritePlan", "open_store"]


class _SQLiteOptions(TypedDict, total=False):
    read_only: bool
    immutable: bool


_BOLT_SCHEMES = ("bolt", "bolt+s", "bolt+ssc", "neo4j", "neo4j+s", "neo4j+ssc")


def open_store(url: str | os.PathLike[str] | None = None) -> GraphStore:
    """A store for a URL (no I/O here): ``sqlite:///file.db``, a plain path, or ``neo4j://…``.

    ``None`` reads ``GRAPHMEM_STORE`` and falls back to ``./graphmem.db``.
    """
    if url is None:
        url = os.environ.get("GRAPHMEM_STORE") or "sqlite:///graphmem.db"
    if isinstance(url, os.PathLike):
        return SQLiteStore(Path(url))
    if not isinstance(url, str):
        # An object that is neither a URL nor a complete GraphStore (a custom store missing a
        # method of the protocol) must say so, not "empty URL".
        missing = sorted(
            name
            for name in dir(GraphStore)
            if not name.startswith("_") and not hasattr(url, name)
        )
        detail = f" (missing {', '.join(missing)})" if missing else ""
        raise ConfigError(
            f"store must be a URL, a path or a GraphStore, got {type(url).__name__}{detail}"
        )
    if not url.strip():
        raise ConfigError("store URL is empty; use sqlite:///path/to/memory.db or neo4j://host")
    text = url.strip()
    if "://" not in text:
        plain, options = _sqlite_options(text, text)
        if plain.endswith((".db", ".sqlite", ".sqlite3")) or plain == ":memory:":
            return SQLiteStore(plain, **options)
        raise ConfigError(
            f"unknown store {text!r}: expected sqlite:///path.db, a .db path, "
            "bolt://host:7687, neo4j://host:7687 or neo4j+s://host"
        )
    parsed = urlparse(text)
    scheme = parsed.scheme.lower()
    if scheme == "sqlite":
        rest, options = _sqlite_options(text.split("://", 1)[1], text)
        path = unquote(rest)
        if path.startswith("/") and not path.startswith("//"):
            # sqlite:///relative.db -> "/relative.db" after the split: drop one slash
            path = path[1:]
        elif path.startswith("//"):
            path = path[1:]  # sqlite:////abs/path.db
        if not path:
            raise ConfigError(f"store URL {text!r} has no file path")
        return SQLiteStore(path, url=text, **options)
    if scheme in _BOLT_SCHEMES:
        try:
            from .neo4j.store import Neo4jStore
        except ImportError as exc:
            raise ConfigError(
                "the Neo4j store needs the neo4j driver, which every install of graphmem "
                "includes; this environment lacks it (pip install --force-reinstall graphmem): "
                f"{exc}"
            ) from exc
        return Neo4jStore(text)
    raise ConfigError(
        f"unknown store URL scheme {parsed.scheme!r} in {text!r}: "
        "expected sqlite, bolt, bolt+s, neo4j or neo4j+s"
    )


def _sqlite_options(path: str, text: str) -> tuple[str, _SQLiteOptions]:
    """Split ``?mode=ro`` / ``?immutable=1`` off a SQLite path: (path, SQLiteStore options).

    A ``?`` followed by neither option stays part of the file name."""
    head, sep, query = path.partition("?")
    pairs = [item.partition("=") for item in query.split("&") if item]
    if not sep or not any(key in ("mode", "immutable") for key, _, _ in pairs):
        return path, {}
    options: _SQLiteOptions = {}
    for key, _, value in pairs:
        if (key, value) == ("mode", "ro"):
            options["read_only"] = True
        elif (key, value) in (("immutable", "1"), ("immutable", "true")):
            options["immutable"] = True
        elif (key, value) not in (("mode", "rw"), ("mode", "rwc"), ("immutable", "0")):
            raise ConfigError(
                f"store URL {text!r}: {key}={value} is not an option of the SQLite store "
                "(mode=ro, immutable=1)"
            )
    return head, options
