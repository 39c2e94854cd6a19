"""A default install carries the design's packages; the heavy optional parts stay extras; a
broken environment is told to reinstall graphmem, not to add an extra that no longer exists."""

from __future__ import annotations

import re
import sys
import tomllib
from pathlib import Path

import pytest

from graphmem import ConfigError, Settings

PYPROJECT = tomllib.loads(
    (Path(__file__).resolve().parents[2] / "pyproject.toml").read_text(encoding="utf-8")
)


def _names(requirements: list[str]) -> set[str]:
    return {re.split(r"[<>=!~\[ ;]", r, maxsplit=1)[0].lower() for r in requirements}


def test_the_design_packages_are_base_dependencies_and_heavy_parts_are_extras() -> None:
    base = _names(PYPROJECT["project"]["dependencies"])
    assert {"neo4j", "langchain-core", "openai", "tenacity", "pydantic", "click"} <= base
    extras = PYPROJECT["project"]["optional-dependencies"]
    for heavy in ("mcp", "notebooks", "local-embeddings", "networkx", "langgraph"):
        assert extras[heavy] and not _names(extras[heavy]) & base, heavy
    assert not base & {"mcp", "sentence-transformers", "networkx", "langgraph", "nbclient"}
    # The old extras still install (as nothing more), so existing instructions keep working.
    assert extras["openai"] == extras["neo4j"] == extras["langchain"] == []


@pytest.mark.parametrize(
    ("blocked", "call"),
    [
        ("neo4j", lambda: __import__("graphmem.store", fromlist=["open_store"]).open_store(
            "bolt://localhost:7687")),
        ("openai", lambda: __import__("graphmem.extract", fromlist=["get_extractor"])
         .get_extractor("llm", Settings(llm_model="m"))),
    ],
)
def test_a_missing_base_package_says_reinstall(
    blocked: str, call: object, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in list(sys.modules):
        if name == blocked or name.startswith(f"{blocked}.") or name.startswith(
            ("graphmem.store.neo4j", "graphmem.extract.llm")
        ):
            monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, blocked, None)  # import fails as if not installed
    with pytest.raises(ConfigError, match="every install of graphmem includes") as raised:
        call()  # type: ignore[operator]
    assert "graphmem[" not in str(raised.value)
