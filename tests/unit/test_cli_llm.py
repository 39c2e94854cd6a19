"""CLI over the LLM extractor: budget options stop cleanly and reprocess finishes the rest."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from graphmem.cli import cli
from tests.fakes.openai_server import FakeOpenAIServer

pytest_plugins = ["tests.fakes.pytest_plugin"]


def test_max_calls_stops_and_reprocess_completes(
    fake_openai: FakeOpenAIServer, tmp_path: Path
) -> None:
    chat = tmp_path / "chat.jsonl"
    chat.write_text(
        "\n".join(
            json.dumps({"content": f"Note {i}: I like topic {i}.",
                        "reference_time": f"2024-05-0{i + 1}T10:00:00Z",
                        "metadata": {"speaker": "Maya"}})
            for i in range(4)
        )
        + "\n"
    )
    env = {
        "GRAPHMEM_STORE": str(tmp_path / "m.db"),
        "GRAPHMEM_LLM_MODEL": "test-model",
        "GRAPHMEM_LLM_BASE_URL": fake_openai.base_url,
        "OPENAI_API_KEY": "test",
        "GRAPHMEM_EMBEDDER": "hash",
    }
    fake_openai.default = lambda request: {
        "entities": [{"name": "Maya", "type": "Person"}],
        "facts": [{"subject": "Maya", "predicate": "likes", "object": "topics",
                   "statement": "Maya likes topics."}],
    }
    runner = CliRunner()
    first = runner.invoke(
        cli, ["ingest", str(chat), "--extractor", "llm", "--max-calls", "2", "--json"], env=env
    )
    summary = json.loads(first.stdout)
    assert first.exit_code == 1, first.output
    assert summary["llm_calls"] == 2 and summary["episodes_failed"] == 2
    assert len(fake_openai.calls("chat/completions")) == 2
    second = runner.invoke(cli, ["reprocess", "--extractor", "llm", "--json"], env=env)
    assert second.exit_code == 0, second.output
    assert len(fake_openai.calls("chat/completions")) == 4


def test_browser_prints_url_style_and_queries() -> None:
    result = CliRunner().invoke(cli, ["browser"])
    assert result.exit_code == 0, result.output
    assert "localhost:7474/browser" in result.output and ":style" in result.output
    assert "MATCH" in result.output
