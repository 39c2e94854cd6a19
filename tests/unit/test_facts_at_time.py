"""``facts()`` reads at a time like ``recall()``: ``as_of`` (world time) and ``known_at``
(record time), in the Python API and in ``graphmem facts --as-of/--known-at``."""

from __future__ import annotations

import json
import time
from datetime import UTC, datetime
from pathlib import Path

import pytest
from click.testing import CliRunner

from graphmem import FactRecord, GraphMemory
from graphmem.cli import cli


def t(year: int, month: int = 1) -> datetime:
    return datetime(year, month, 1, tzinfo=UTC)


def _moves(mem: GraphMemory) -> datetime:
    """Ana: Lisbon 2020, Porto 2022; Porto corrected to Braga afterwards. Returns a record
    time between the move and the correction."""
    mem.add_fact("Ana", "lives_in", "Lisbon", valid_from=t(2020))
    mem.add_fact("Ana", "lives_in", "Porto", valid_from=t(2022))
    time.sleep(0.01)
    between = datetime.now(UTC)
    time.sleep(0.01)
    mem.add_fact("Ana", "lives_in", "Braga", valid_from=t(2022), correction=True)
    return between


def _targets(facts: list[FactRecord]) -> list[str]:
    return sorted(f.target for f in facts)


def test_facts_as_of_and_known_at(memory: GraphMemory) -> None:
    between = _moves(memory)
    assert _targets(memory.facts()) == ["Braga"]
    assert _targets(memory.facts(as_of=t(2021))) == ["Lisbon"]
    assert _targets(memory.facts(as_of=t(2023))) == ["Braga"]
    # What memory believed before the correction: Porto, now and in 2023.
    assert _targets(memory.facts(known_at=between)) == ["Porto"]
    assert _targets(memory.facts(as_of=t(2023), known_at=between)) == ["Porto"]
    assert _targets(memory.facts(as_of=t(2019))) == []
    assert _targets(memory.facts(entity="Ana", as_of=t(2021))) == ["Lisbon"]


def test_facts_time_arguments_are_checked(memory: GraphMemory) -> None:
    with pytest.raises(ValueError, match="as_of"):
        memory.facts(as_of=datetime(2021, 1, 1))  # naive
    with pytest.raises(ValueError, match="include_history"):
        memory.facts(as_of=t(2021), include_history=True)


def test_cli_facts_as_of_and_known_at(tmp_path: Path) -> None:
    store = f"sqlite:///{tmp_path}/m.db"
    with GraphMemory(store) as mem:
        between = _moves(mem)

    def targets(*args: str) -> list[str]:
        result = CliRunner().invoke(cli, ["--store", store, "facts", *args, "--json"])
        assert result.exit_code == 0, result.output
        return sorted(f["object"] for f in json.loads(result.stdout))

    assert targets() == ["Braga"]
    assert targets("--as-of", "2021-01-01") == ["Lisbon"]
    assert targets("--known-at", between.isoformat()) == ["Porto"]
    assert targets("--as-of", "2023-01-01T00:00:00Z", "--known-at", between.isoformat()) == [
        "Porto"
    ]
    both = CliRunner().invoke(cli, ["--store", store, "facts", "--history", "--as-of", "2021"])
    assert both.exit_code != 0
