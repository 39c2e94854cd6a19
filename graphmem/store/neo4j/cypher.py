"""The Cypher query registry: every query the Neo4j store sends is a named file in ``cypher/``.

Names are paths under the repository's top-level ``cypher/`` without the ``.cypher`` suffix
(``facts/records``). A wheel ships that folder as ``graphmem/cypher``; ``graphmem._resources``
finds whichever copy this install has (``importlib.resources``, so a zip works too). Files are
read once and cached. A file holds one statement; schema/migration files may hold several,
separated by a line that holds only ``// ---`` (the convention ``tools/cypher-lint`` checks).
"""

from __future__ import annotations

import re
import threading
from importlib.resources.abc import Traversable

from ..._resources import data_dir

__all__ = ["UnknownQueryError", "available", "query", "statements"]

_SEPARATOR = re.compile(r"^[ \t]*//[ \t]*---[ \t]*$", re.MULTILINE)
_NAME = re.compile(r"^[a-z0-9_]+(/[a-z0-9_]+)*$")
_COMMENT_LINE = re.compile(r"^[ \t]*//.*$", re.MULTILINE)

_lock = threading.Lock()
_cache: dict[str, str] = {}


class UnknownQueryError(LookupError):
    """No ``cypher/<name>.cypher`` file: a programming error, not a user error."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else "unknown Cypher query"


def _root() -> Traversable:
    return data_dir("cypher")


def _read(name: str) -> str:
    node = _root()
    parts = name.split("/")
    for part in parts[:-1]:
        node = node.joinpath(part)
    node = node.joinpath(parts[-1] + ".cypher")
    if not node.is_file():
        near = [n for n in available() if n.split("/")[0] == parts[0]]
        hint = f"; queries under {parts[0]}/: {', '.join(near)}" if near else ""
        raise UnknownQueryError(
            f"no Cypher query named {name!r} (cypher/{name}.cypher){hint}"
        )
    return node.read_text(encoding="utf-8")


def query(name: str) -> str:
    """The text of the one statement in ``cypher/<name>.cypher`` (cached)."""
    pieces = statements(name)
    if len(pieces) != 1:
        raise UnknownQueryError(
            f"Cypher file {name!r} holds {len(pieces)} statements; use statements() for it"
        )
    return pieces[0]


def statements(name: str) -> list[str]:
    """The statements of a (migration) file, split on ``// ---`` lines; comment-only pieces
    are dropped."""
    if not isinstance(name, str) or not _NAME.match(name):
        raise UnknownQueryError(
            f"bad Cypher query name {name!r}: expected lower_case path segments like "
            "'facts/records' (no suffix, no '..')"
        )
    with _lock:
        text = _cache.get(name)
        if text is None:
            text = _read(name)
            _cache[name] = text
    pieces = [p.strip() for p in _SEPARATOR.split(text)]
    return [p for p in pieces if _COMMENT_LINE.sub("", p).strip()]


def available() -> list[str]:
    """Every query name shipped in ``cypher/`` (sorted)."""
    names: list[str] = []

    def walk(node: Traversable, prefix: str) -> None:
        for child in node.iterdir():
            if child.is_dir():
                walk(child, f"{prefix}{child.name}/")
            elif child.name.endswith(".cypher"):
                names.append(prefix + child.name[: -len(".cypher")])

    root = _root()
    if root.is_dir():
        walk(root, "")
    return sorted(names)
