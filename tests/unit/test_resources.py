"""graphmem._resources: where the queries and prompts are read from in a source checkout.

A wheel's packaged copy is checked by tests/integration/test_wheel.py.
"""

from __future__ import annotations

from pathlib import Path

import graphmem
from graphmem._resources import data_dir
from graphmem.extract.llm.prompts import load_prompt
from graphmem.store.neo4j import cypher as _cypher

REPO = Path(graphmem.__file__).resolve().parents[1]


def test_source_checkout_reads_the_top_level_folders() -> None:
    """No copy inside the package in a checkout or an editable install (a path entry to the
    repository root): the repository's top-level cypher/ and prompts/ answer."""
    assert not (REPO / "graphmem" / "cypher").exists()
    assert not (REPO / "graphmem" / "prompts").exists()
    assert Path(str(data_dir("prompts"))) == REPO / "prompts"
    assert Path(str(data_dir("cypher"))) == REPO / "cypher"
    assert load_prompt("extract_facts").name == "extract_facts"
    assert "UNWIND $ids AS id" in _cypher.query("facts/records")


def test_the_single_copies_are_at_the_top_level() -> None:
    assert (REPO / "prompts" / "extract_facts.prompt").is_file()
    assert len(list((REPO / "cypher").rglob("*.cypher"))) > 40
