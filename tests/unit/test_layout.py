"""The package's layout is its design: one folder per stage and per store, no import circles,
lower layers never importing the layers above them, and small modules.

Every import counts, also those under ``TYPE_CHECKING`` and inside functions: a lazy import hides
a circle from Python at run time, not from a reader.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import networkx as nx
import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "graphmem"

# The top level: the facade, the public models/config/errors and a few neutral helpers that
# every stage shares. A new module here is a decision, so it is listed.
TOP_LEVEL_MODULES = {
    "__init__",
    "_args",  # the facade's argument checks
    "_async_memory",  # AsyncGraphMemory: the facade's own methods, awaitable
    "_config",
    "_connect",  # the facade opening its store
    "_errors",
    "_filters",  # the recall filter language (public) that stores push down
    "_ids",
    "_memory",  # the facade
    "_models",
    "_predicates",
    "_resources",
    "_text",  # the full-text tokenizer the retriever and every store share
    "_time",
}
STAGES = {
    "cli", "embeddings", "experience", "extract", "forget", "ingest", "integrations", "reconcile",
    "retrieve", "sources", "store", "usage", "views",
}
# What the stores may not import: everything that sits above them. The one exception is the
# claim format each provenance link stores (reconcile/claims.py), read when exporting.
ABOVE_THE_STORE = STAGES - {"store", "embeddings"} | {"_memory", "_connect"}
STORE_MAY_IMPORT = {"graphmem.reconcile.claims"}
MAX_MODULE_LINES = 500


def _modules() -> dict[str, tuple[Path, bool]]:
    found: dict[str, tuple[Path, bool]] = {}
    for path in PACKAGE.rglob("*.py"):
        parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        is_package = parts[-1] == "__init__"
        if is_package:
            parts = parts[:-1]
        found[".".join(parts)] = (path, is_package)
    return found


def _target(module: str, is_package: bool, level: int, name: str | None) -> str:
    if not level:
        return name or ""
    base = module.split(".") if is_package else module.split(".")[:-1]
    base = base[: len(base) - (level - 1)]
    return ".".join([*base, name] if name else base)


def _import_graph() -> nx.DiGraph[str]:
    modules = _modules()
    graph: nx.DiGraph[str] = nx.DiGraph()
    graph.add_nodes_from(modules)
    for module, (path, is_package) in modules.items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom):
                target = _target(module, is_package, node.level, node.module)
                for alias in node.names:
                    sub = f"{target}.{alias.name}"
                    imported = sub if sub in modules else target
                    if imported in modules and imported != module:
                        graph.add_edge(module, imported)
            elif isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.name in modules and alias.name != module:
                        graph.add_edge(module, alias.name)
    return graph


def test_the_import_graph_has_no_circles() -> None:
    circles = [sorted(c) for c in nx.strongly_connected_components(_import_graph()) if len(c) > 1]
    assert circles == [], f"import circles: {circles}"


def test_the_circle_check_finds_a_circle() -> None:
    graph: nx.DiGraph[str] = nx.DiGraph([("a", "b"), ("b", "c"), ("c", "a"), ("c", "d")])
    assert [sorted(c) for c in nx.strongly_connected_components(graph) if len(c) > 1] == [
        ["a", "b", "c"]
    ]


def test_the_stores_do_not_import_the_stages_above_them() -> None:
    graph = _import_graph()
    upward = sorted(
        (module, imported)
        for module, imported in graph.edges
        if module.startswith("graphmem.store")
        and imported.split(".")[1] in ABOVE_THE_STORE
        and imported not in STORE_MAY_IMPORT
    )
    assert upward == []


def test_the_retriever_uses_no_store_internals() -> None:
    graph = _import_graph()
    private = sorted(
        (module, imported)
        for module, imported in graph.edges
        if module.startswith(("graphmem.retrieve", "graphmem.ingest", "graphmem.reconcile"))
        and imported.startswith(("graphmem.store.sqlite", "graphmem.store.neo4j"))
    )
    assert private == []


def test_the_top_level_holds_the_facade_models_and_stage_folders() -> None:
    modules = {p.stem for p in PACKAGE.glob("*.py")}
    folders = {p.name for p in PACKAGE.iterdir() if (p / "__init__.py").exists()}
    assert modules == TOP_LEVEL_MODULES
    assert folders == STAGES
    assert {p.name for p in (PACKAGE / "store").iterdir() if (p / "__init__.py").exists()} == {
        "neo4j",
        "sqlite",
    }


@pytest.mark.parametrize(
    "path", sorted(PACKAGE.rglob("*.py")), ids=lambda p: str(p.relative_to(PACKAGE))
)
def test_modules_are_small_and_comments_say_why(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    assert text.count("\n") <= MAX_MODULE_LINES
    # A comment says why; a tracker number says nothing to a reader of the code.
    assert not re.search(r"\b[Ii]ssues? #?\d+", text)
