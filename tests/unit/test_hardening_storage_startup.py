"""Startup cost (issue 14, item 10): `import graphmem` and the command line load only what they
need. Each check runs in a fresh interpreter and reads ``sys.modules``; no timings."""

from __future__ import annotations

import functools
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import graphmem

# Never needed to start: optional clients and the extractors' machinery.
OPTIONAL = [
    "neo4j",
    "openai",
    "langchain_core",
    "tenacity",
    "networkx",
    "sentence_transformers",
    "torch",
    "mcp",
    "langgraph",
    "langmem",
    "graphmem._async_memory",
    "graphmem.store.neo4j",
    "graphmem.store.neo4j.cypher",
    "graphmem.extract.rules",
    "graphmem.extract.llm",
    "graphmem.integrations",
]


def loaded_after(code: str) -> set[str]:
    probe = f"{code}\nimport json, sys\nprint(json.dumps(sorted(sys.modules)))"
    out = subprocess.run(
        [sys.executable, "-c", probe], check=True, capture_output=True, text=True
    ).stdout
    return set(json.loads(out.strip().splitlines()[-1]))


def test_import_graphmem_loads_no_third_party_module() -> None:
    loaded = loaded_after("import graphmem")
    heavy = ["numpy", "pydantic", "click", "sqlite3", "importlib.metadata", "graphmem._memory",
             "graphmem._models", "graphmem.store", *OPTIONAL]
    assert not [m for m in heavy if m in loaded]


def test_graphmem_names_resolve_on_first_use() -> None:
    loaded = loaded_after(
        "import graphmem\nassert graphmem.InputError.__module__ == 'graphmem._errors'"
    )
    assert "graphmem._errors" in loaded and "numpy" not in loaded
    assert graphmem.GraphMemory.__name__ == "GraphMemory"
    assert isinstance(graphmem.__version__, str) and graphmem.__version__
    assert set(graphmem.__all__) <= set(dir(graphmem))
    for name in graphmem.__all__:
        assert getattr(graphmem, name) is not None
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        _ = graphmem.nope  # type: ignore[attr-defined]
    loaded = loaded_after("from graphmem import *")
    assert "graphmem._memory" in loaded


def test_command_line_loads_no_optional_client_nor_graphml_writer() -> None:
    loaded = loaded_after("import graphmem.cli")
    assert not [m for m in [*OPTIONAL, "xml.etree.ElementTree"] if m in loaded]


def test_version_is_read_only_when_asked() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "graphmem.cli", "--version"],
        check=True, capture_output=True, text=True,
    ).stdout
    assert out.strip() == f"graphmem, version {graphmem.__version__}"


def test_command_line_keeps_openblas_to_one_thread_unless_told() -> None:
    probe = "import os, graphmem.cli\nprint(os.environ['OPENBLAS_NUM_THREADS'])"
    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_NUM_THREADS"}
    run = functools.partial(
        subprocess.run, [sys.executable, "-c", probe], check=True, capture_output=True, text=True
    )
    assert run(env=env).stdout.strip() == "1"
    assert run(env={**env, "OPENBLAS_NUM_THREADS": "2"}).stdout.strip() == "2"


# What `graphmem recall` must not load: the write path, forget, experiences, export and import,
# the file parsers, the extractors and the graph views.
NOT_FOR_RECALL = [
    "graphmem.ingest.pipeline",
    "graphmem.ingest.episode_input",
    "graphmem.reconcile.reconciler",
    "graphmem.forget.plan",
    "graphmem.reconcile.replay",
    "graphmem.experience.index",
    "graphmem.store._export_rows",
    "graphmem.store._export_check",
    "graphmem.sources.parser",
    "graphmem.extract.structured",
    "graphmem.views.graph",
    *OPTIONAL,
]


def test_recall_command_loads_only_the_read_path(tmp_path: Path) -> None:
    store = tmp_path / "m.db"
    from graphmem import GraphMemory

    with GraphMemory(store) as memory:
        memory.add_episode("I live in Porto.", source="chat")
    probe = (
        "import sys, runpy\n"
        f"sys.argv = ['graphmem', '--store', {str(store)!r}, 'recall', 'where do I live?']\n"
        "try:\n    runpy.run_module('graphmem.cli', run_name='__main__')\n"
        "except SystemExit as exc:\n    assert not exc.code, exc.code"
    )
    loaded = loaded_after(probe)
    assert "graphmem.retrieve.retriever" in loaded and "graphmem.store.sqlite" in loaded
    assert not [m for m in NOT_FOR_RECALL if m in loaded]
