"""LLM calls and tokens per episode of the ``llm`` extractor, next to the anchors' published costs.

    python bench/llm_cost.py --out bench/results/llm_cost.json

No model is called: the corpus (``examples/data/``, else ``bench/data/llm_cost/``) is ingested
through the real ``LLMExtractor`` and ``openai`` client against the test suite's fake
OpenAI-compatible server (``tests/fakes/openai_server.py``). The fake answers each prompt with a
realistic scripted answer: the facts graphmem's offline extractors (``rules`` for text,
``structured`` for JSON records) find in the episode, with relation claims (``supersedes``,
``same_as``, ``negates``, ``corrects``) against the known facts the prompt listed. So the number
of calls is exactly what graphmem makes, and the prompt is exactly what it sends; tokens are the
fake server's count (characters / 4 of the message texts, and of the answer), to which the
``json_schema`` response format adds about ``schema_tokens_per_call`` on servers that count it.

Three runs: ``auto`` (what ``graphmem ingest`` does with a model configured: text → llm, JSON
records → the structured extractor, no call), ``llm_all`` (every episode through the model), and
``flaky_endpoint`` (``auto`` with every 5th LLM episode's first answer malformed and every 7th
first request answered 503: the cost of the repair call and of retries).
"""

from __future__ import annotations

import argparse
import json
import platform
import re
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from graphmem import GraphMemory, HashEmbedder  # noqa: E402
from graphmem._config import Settings  # noqa: E402
from graphmem._models import EpisodeRecord, Extraction  # noqa: E402
from graphmem._predicates import PredicateRegistry  # noqa: E402
from graphmem._time import parse_datetime  # noqa: E402
from graphmem.extract import ExtractionContext  # noqa: E402
from graphmem.extract.llm.answer import answer_json_schema  # noqa: E402
from graphmem.extract.structured import StructuredExtractor  # noqa: E402
from graphmem.sources.files import load_episodes  # noqa: E402
from tests.fakes.openai_server import (  # noqa: E402
    FakeOpenAIServer,
    malformed_json,
    server_error,
)

ANCHORS = {
    "graphiti_0_31_2_kuzu": {"llm_calls_per_episode": 2.97},
    "mem0_2_2_1": {"llm_calls_per_add": 1.00, "note": "add-only: graph memory removed"},
    "source": "side-by-side run on a 30-episode change corpus, recorded in graphmem issue 13 "
    "(November 2026); older published figures (Graphiti 2 + up to 3 calls per fact, "
    "Mem0 graph memory 5 per add) describe earlier releases",
    "graphiti_rule_of_earlier_releases": "2 + up to 3 calls per extracted fact",
}
_KNOWN = re.compile(r"^\[(F\d+)\] \(([^)]+)\) (.*) since (\S+)")
_REGISTRY = PredicateRegistry()


# ----------------------------------------------------------------------------- the scripted model


def _section(text: str, start: str, end: str | None) -> str:
    body = text.split(start, 1)[1]
    return body.split(end, 1)[0] if end else body


def _parse_prompt(body: dict[str, Any]) -> tuple[str, datetime, str, list[tuple[str, str, str]]]:
    user = next(m["content"] for m in body["messages"] if m["role"] == "user")
    speaker = _section(user, "Speaker: ", "\n").strip()
    when = parse_datetime(_section(user, "Episode time: ", "\n").strip())
    episode = user.rpartition("\nEpisode:\n")[2]
    known: list[tuple[str, str, str]] = []
    for line in _section(user, "Known facts", "Earlier episodes").splitlines():
        match = _KNOWN.match(line.strip())
        if match:
            known.append((match.group(1), match.group(2), match.group(3)))
    return speaker, when, episode, known


def _offline(content: str, speaker: str, when: datetime) -> Extraction:
    record = EpisodeRecord(
        id="ep_bench",
        group_id="default",
        source=None,
        kind="json" if content.lstrip().startswith("{") else "message",
        content=content,
        reference_time=when,
        ingested_at=when,
        content_hash="bench",
        status="pending",
    )
    context = ExtractionContext(speaker=speaker, predicates=_REGISTRY)
    if record.kind == "json":
        return StructuredExtractor().extract(record, context)
    from graphmem.extract.rules import RulesExtractor

    return RulesExtractor().extract(record, context)


def scripted_answer(body: dict[str, Any]) -> dict[str, Any]:
    """What a good model would answer: the offline extractors' facts, with claims."""
    speaker, when, episode, known = _parse_prompt(body)
    extraction = _offline(episode, speaker, when)
    facts = []
    for f in extraction.facts:
        target = f.object if f.object is not None else f.value
        relation, fact_id = "new", None
        same = [
            (alias, statement)
            for alias, predicate, statement in known
            if predicate == f.predicate and statement.startswith(f.subject)
        ]
        if same:
            alias, statement = same[-1]
            if f.kind == "negate":
                relation, fact_id = "negates", alias
            elif f.kind == "correct":
                relation, fact_id = "corrects", alias
            elif str(target) in statement:
                relation, fact_id = "same_as", alias
            elif _REGISTRY.is_functional(f.predicate):
                relation, fact_id = "supersedes", alias
        facts.append(
            {
                "subject": f.subject,
                "predicate": f.predicate,
                "object": f.object,
                "value": f.value,
                "statement": f.statement,
                "valid_from": f.valid_from.date().isoformat() if f.valid_from else None,
                "valid_to": f.valid_to.date().isoformat() if f.valid_to else None,
                "kind": f.kind,
                "replaces": f.replaces,
                "relation": relation,
                "fact_id": fact_id,
                "reason": None if relation == "new" else f"{relation.replace('_', ' ')} per text",
                "evidence": f.evidence,
            }
        )
    return {
        "entities": [{"name": e.name, "type": e.type} for e in extraction.entities],
        "facts": facts,
    }


# ----------------------------------------------------------------------------- runs


def corpus() -> tuple[str, list[dict[str, Any]]]:
    for folder in (ROOT / "examples" / "data", ROOT / "bench" / "data" / "llm_cost"):
        if folder.is_dir() and any(folder.iterdir()):
            return str(folder.relative_to(ROOT)), load_episodes([folder])
    raise SystemExit("no corpus: examples/data/ and bench/data/llm_cost/ are both empty")


def _stats(values: Sequence[int]) -> dict[str, float]:
    if not values:
        return {"mean": 0.0, "p50": 0.0, "max": 0.0}
    return {
        "mean": round(statistics.fmean(values), 1),
        "p50": float(statistics.median(values)),
        "max": float(max(values)),
    }


def run(episodes: list[dict[str, Any]], *, force_llm: bool, flaky: bool) -> dict[str, Any]:
    with FakeOpenAIServer() as fake, tempfile.TemporaryDirectory() as tmp:
        fake.default = scripted_answer
        settings = Settings(
            llm_model="bench-model",
            llm_base_url=fake.base_url,
            llm_api_key="x",
            llm_concurrency=1,  # sequential: each prompt sees the facts of the turns before
        )
        items = [dict(e, extractor="llm") if force_llm else dict(e) for e in episodes]
        if flaky:
            text = [e for e in items if force_llm or e.get("kind") != "json"]
            for index, episode in enumerate(text):
                marker = "Episode:\n" + episode["content"]
                if index % 5 == 4:
                    fake.inject(malformed_json, match=marker)
                if index % 7 == 6:
                    fake.inject(server_error(503), match=marker)
        start = time.perf_counter()
        with GraphMemory(
            Path(tmp) / "bench.db", embedder=HashEmbedder(64), settings=settings, extractor="auto"
        ) as mem:
            results = mem.add_episodes(items)
            stats = mem.stats()
            links = [r for r in mem.export() if r["type"] == "link"]
        seconds = time.perf_counter() - start
        requests = fake.calls("chat/completions")
    llm = [r for r in results if r.llm_calls > 0]
    calls = sum(r.llm_calls for r in results)
    prompt = sum(r.prompt_tokens for r in results)
    completion = sum(r.completion_tokens for r in results)
    facts_per_llm_episode = [r.facts_added + r.facts_duplicate for r in llm]
    graphiti_upper = sum(2 + 3 * n for n in facts_per_llm_episode)
    return {
        "episodes": len(results),
        "episodes_through_llm": len(llm),
        "failed": sum(r.status == "failed" for r in results),
        "http_requests": len(requests),
        "http_errors": sum(1 for c in requests if c.status != 200),
        "llm_calls": calls,
        "llm_calls_per_episode": round(calls / max(len(results), 1), 3),
        "llm_calls_per_llm_episode": round(calls / max(len(llm), 1), 3),
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "prompt_tokens_per_llm_episode": _stats([r.prompt_tokens for r in llm]),
        "completion_tokens_per_llm_episode": _stats([r.completion_tokens for r in llm]),
        "facts_per_llm_episode": _stats(facts_per_llm_episode),
        "graphiti_rule_upper_bound_calls_same_episodes": graphiti_upper,
        "graphiti_rule_upper_bound_per_llm_episode": round(graphiti_upper / max(len(llm), 1), 2),
        "mem0_graph_calls_same_episodes": 5 * len(llm),
        "graph": {
            "facts": stats["facts"],
            "facts_current": stats["facts_current"],
            "supersedes_links": stats["supersedes_links"],
            "contradicts_links": stats["contradicts_links"],
            "links_decided_by_llm": sum(1 for r in links if r["decided_by"] == "llm"),
            "links_decided_by_rule": sum(1 for r in links if r["decided_by"] == "rule"),
        },
        "wall_seconds": round(seconds, 2),
    }


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=ROOT / "bench" / "results" / "llm_cost.json")
    args = parser.parse_args(argv)
    where, episodes = corpus()
    runs = {
        "auto": run(episodes, force_llm=False, flaky=False),
        "llm_all": run(episodes, force_llm=True, flaky=False),
        "flaky_endpoint": run(episodes, force_llm=False, flaky=True),
    }
    kinds: dict[str, int] = {}
    for episode in episodes:
        kind = str(episode.get("kind", "message"))
        kinds[kind] = kinds.get(kind, 0) + 1
    report = {
        "command": "python bench/llm_cost.py --out bench/results/llm_cost.json",
        "corpus": {"path": where, "episodes": len(episodes), "by_kind": kinds},
        "model": "scripted answers from tests/fakes/openai_server.py (no real LLM)",
        "token_counting": "fake server: ceil(characters/4) of the request's message texts and "
        "of the answer text; the response_format JSON schema is not in that count",
        "schema_tokens_per_call": len(json.dumps(answer_json_schema())) // 4,
        "runs": runs,
        "anchors": ANCHORS,
        "python": platform.python_version(),
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    summary = {
        name: {
            "calls_per_llm_episode": r["llm_calls_per_llm_episode"],
            "prompt_tokens_mean": r["prompt_tokens_per_llm_episode"]["mean"],
            "completion_tokens_mean": r["completion_tokens_per_llm_episode"]["mean"],
        }
        for name, r in runs.items()
    }
    print(json.dumps(summary))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
