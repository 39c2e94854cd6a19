"""``docs/cli.md`` is generated from the click definitions and must not go stale."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import click

ROOT = Path(__file__).resolve().parents[2]


def _generator() -> ModuleType:
    path = ROOT / "scripts" / "gen_cli_docs.py"
    spec = importlib.util.spec_from_file_location("gen_cli_docs", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("gen_cli_docs", module)
    spec.loader.exec_module(module)
    return module


def test_docs_cli_md_is_up_to_date() -> None:
    expected = _generator().render()
    current = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
    assert current == expected, (
        "docs/cli.md is stale: regenerate it with `python scripts/gen_cli_docs.py` "
        "(or `.venv/bin/python scripts/gen_cli_docs.py`) and commit the result"
    )


def test_docs_cover_every_command_and_option() -> None:
    from graphmem.cli.app import cli

    text = _generator().render()
    ctx = click.Context(cli, info_name="graphmem")
    for name in cli.list_commands(ctx):
        assert f"`graphmem {name}`" in text
    for option in ("--store", "--group", "--as-of", "--known-at", "--filter", "--skip-invalid",
                   "--per", "--extractor", "--yes", "--all-group", "--format", "--json"):
        assert option in text
    assert "`graphmem db migrate`" in text and "`graphmem db status`" in text


def test_check_mode_reports_staleness(tmp_path: Path, monkeypatch: object) -> None:
    module = _generator()
    stale = tmp_path / "cli.md"
    stale.write_text("old\n", encoding="utf-8")
    module.DOCS = stale  # type: ignore[attr-defined]
    module.ROOT = tmp_path  # type: ignore[attr-defined]
    assert module.main(["--check"]) == 1
    assert module.main([]) == 0
    assert module.main(["--check"]) == 0
