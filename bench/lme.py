"""Retrieval quality on LongMemEval_S (development half): does recall() rank the sessions that
hold the answer above the rest of the haystack?

    python bench/lme.py --out bench/results/lme_dev.json
    python bench/lme.py --embedder minilm --out bench/results/lme_dev_minilm.json

Protocol (issue 11). ``../shared/bench/data/lme_s_dev.json.xz`` (LongMemEval_S, MIT; the
development half: 255 questions, 237 with evidence sessions; its ``format`` field describes it).
All questions go into ONE store, each question's haystack in its own group (as an application
with one group per user would hold them): one ``message`` episode per user or assistant turn,
``reference_time`` = the session's date (UTC), ``source`` = the session id, ``metadata`` =
``{"speaker": "user"|"assistant", "session_id": ...}``, the ``rules`` extractor (no LLM). Empty
turns are skipped by ``add_episodes(..., on_invalid="skip")`` and counted. Each question's text
alone goes to ``recall(question, group_id=qid, k=20)``; sessions are ranked from the returned
facts' provenance episodes (fact rank order), then ``RecallResult.episodes``, deduplicated.
Metrics over the questions with evidence (abstention ids end in ``_abs`` and have none):
R@5 / R@10 (share of the answer sessions in the first k), any@5 (at least one), NDCG@10 (binary
relevance), per question type and overall.

Baselines, in the same run on the same turns: ``random`` (turns in a seeded random order: the
floor), ``bm25`` (Okapi BM25 over the group's turns, the
``rank_bm25`` package when installed, else the same formula here; lower-cased word tokens; turns
ranked, mapped to sessions, deduplicated) and, with ``--embedder minilm``, ``dense`` and
``bm25+dense_rrf`` over the same turns.

The ingested store is cached under ``--cache`` (keyed by the data, the embedder and graphmem's
ingest code), so a second run only measures recall. ``--questions N`` takes the first N.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import lzma
import os
import platform
import shutil
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import numpy as np
from locomo import _TOKEN, BM25, make_embedder, rrf
from locomo import CONFIGS as LOCOMO_CONFIGS

from bench._common import package_signature, ranking_scores, recall_ranking, summarize_by_type
from graphmem import GraphMemory
from graphmem.embeddings.factory import Embedder
from graphmem.retrieve.retriever import RetrievalConfig

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_DATA = ROOT.parent / "shared" / "bench" / "data" / "lme_s_dev.json.xz"

# LoCoMo's ablations (the same knobs, one list), and two that only this protocol needs.
CONFIGS: dict[str, dict[str, Any]] = LOCOMO_CONFIGS | {
    "named_0": {"named_fact_limit": 0},
    # No fact is supported: the protocol then ranks RecallResult.episodes alone.
    "episodes_only": {"min_fact_coverage": 1.01, "min_fact_similarity": 1.01, "record_fact_n": 0},
}


def parse_date(text: str) -> datetime:
    """LongMemEval's stamps, e.g. "2023/05/20 (Sat) 00:31", as UTC."""
    day, _weekday, clock = text.split(" ")
    return datetime.strptime(f"{day} {clock}", "%Y/%m/%d %H:%M").replace(tzinfo=UTC)


def load(path: Path) -> dict[str, Any]:
    with lzma.open(path) as handle:
        data: dict[str, Any] = json.loads(handle.read())
    return data


def haystack(data: dict[str, Any], q: dict[str, Any]) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    for sid, date in zip(q["haystack_session_ids"], q["haystack_dates"], strict=True):
        when = parse_date(date)
        for role, content, _has_answer in data["sessions"][sid]:
            items.append(
                {
                    "content": content,
                    "group_id": q["question_id"],
                    "kind": "message",
                    "source": sid,
                    "reference_time": when,
                    "metadata": {
                        "speaker": "user" if role == "u" else "assistant",
                        "session_id": sid,
                    },
                }
            )
    return items


# ----------------------------------------------------------------------------- metrics
def score(ranked: Sequence[str], evidence: Sequence[str]) -> dict[str, float]:
    return ranking_scores(ranked, evidence, (5, 10), any_at=5)


def evaluated(data: dict[str, Any], limit: int | None) -> list[dict[str, Any]]:
    qs = [q for q in data["questions"][:limit] if not q["question_id"].endswith("_abs")]
    return [q for q in qs if q["answer_session_ids"]]


# ----------------------------------------------------------------------------- ingest
class CachedEmbedder:
    """An embedder whose vectors are remembered by text (a bench convenience: the LongMemEval
    haystacks share sessions, and a re-ingest after a code change need not re-run the model)."""

    def __init__(self, inner: Embedder, path: Path) -> None:
        self.inner, self.path = inner, path
        self.name, self.dim = inner.name, inner.dim
        self.table: dict[str, np.ndarray] = {}
        if path.exists():
            with np.load(path) as held:
                self.table = dict(zip(held["keys"].tolist(), held["vectors"], strict=True))

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        keys = [hashlib.sha1(t.encode("utf-8", "surrogatepass")).hexdigest() for t in texts]
        missing = list({k: t for k, t in zip(keys, texts, strict=True) if k not in self.table})
        if missing:
            todo = {k: t for k, t in zip(keys, texts, strict=True) if k not in self.table}
            vectors = self.inner.embed(list(todo.values()))
            self.table.update(zip(todo, vectors, strict=True))
        return np.stack([self.table[k] for k in keys]).astype(np.float32)

    def save(self) -> None:
        keys = np.array(list(self.table))
        vectors = np.stack(list(self.table.values())) if self.table else np.zeros((0, self.dim))
        np.savez(self.path, keys=keys, vectors=vectors.astype(np.float32))


def _signature(data: Path, embedder: Embedder, limit: int | None) -> str:
    h = hashlib.sha256()
    h.update(data.read_bytes())
    h.update(f"{embedder.name}|{embedder.dim}|{limit}".encode())
    h.update(package_signature().encode())
    return h.hexdigest()[:16]


def ingest(
    data: dict[str, Any], path: Path, embedder: Embedder, cache: Path, limit: int | None
) -> tuple[Path, dict[str, Any]]:
    folder = cache / f"lme-{_signature(path, embedder, limit)}"
    info_path = folder / "ingest.json"
    if info_path.exists():
        return folder, json.loads(info_path.read_text())
    tmp = Path(tempfile.mkdtemp(prefix="lme-ingest-", dir=cache))
    mem = GraphMemory(tmp / "lme.db", embedder=embedder, extractor="rules")
    t0 = time.perf_counter()
    turns = skipped = 0
    for i, q in enumerate(data["questions"][:limit]):
        items = haystack(data, q)
        results = mem.add_episodes(items, on_invalid="skip")
        turns += len(items)
        skipped += sum(r.status == "invalid" for r in results)
        if i % 20 == 0:
            print(f"ingested {i + 1} groups, {turns} turns, {time.perf_counter() - t0:.0f}s",
                  file=sys.stderr, flush=True)
    seconds = time.perf_counter() - t0
    stats = mem.stats(None)
    mem.close()
    info = {
        "groups": len(data["questions"][:limit]),
        "turns": turns,
        "skipped_invalid": skipped,
        "facts": stats["facts"],
        "entities": stats["entities"],
        "seconds": round(seconds, 1),
        "turns_per_s": round(turns / seconds, 1),
    }
    (tmp / "ingest.json").write_text(json.dumps(info, indent=2))
    if folder.exists():
        shutil.rmtree(folder)
    tmp.rename(folder)
    if isinstance(embedder, CachedEmbedder):
        embedder.save()
    return folder, info


# ----------------------------------------------------------------------------- runs
def session_ranking(result: Any) -> list[str]:
    """The protocol: facts' provenance episodes (fact rank order), then RecallResult.episodes."""
    sources = {e.id: e.source for hit in result.facts for e in hit.episodes}
    return recall_ranking(result, lambda e: sources.get(e) or None, lambda e: e.source or None)


def run_config(
    overrides: dict[str, Any], qs: list[dict[str, Any]], db: Path, embedder: Embedder, k: int
) -> dict[str, Any]:
    mem = GraphMemory(db, embedder=embedder, retrieval=RetrievalConfig(**overrides))
    mem.connect()
    rows: list[tuple[str, dict[str, float]]] = []
    latencies: list[float] = []
    per_question: list[list[Any]] = []
    for q in qs:
        t0 = time.perf_counter()
        result = mem.recall(q["question"], group_id=q["question_id"], k=k)
        latencies.append(time.perf_counter() - t0)
        ranked = session_ranking(result)
        metrics = score(ranked, q["answer_session_ids"])
        rows.append((q["question_type"], metrics))
        per_question.append([q["question_id"], q["question_type"], metrics["R@5"], ranked[:5]])
    mem.close()
    lat = np.asarray(latencies) * 1000
    return {
        "config": overrides,
        "metrics": summarize_by_type(rows),
        "recall_ms": {
            "p50": round(float(np.percentile(lat, 50)), 2),
            "p95": round(float(np.percentile(lat, 95)), 2),
        },
        "per_question": per_question,
    }


def run_baselines(
    data: dict[str, Any], qs: list[dict[str, Any]], embedder: Embedder | None
) -> dict[str, Any]:
    try:
        from rank_bm25 import BM25Okapi  # type: ignore[import-not-found]
    except ImportError:
        BM25Okapi = None
    rows: dict[str, list[tuple[str, dict[str, float]]]] = defaultdict(list)
    for q in qs:
        items = haystack(data, q)
        items = [it for it in items if it["content"].strip()]
        sessions = [it["source"] for it in items]
        texts = [it["content"] for it in items]
        words = _TOKEN.findall(q["question"].lower())
        if BM25Okapi is not None:
            index = BM25Okapi([_TOKEN.findall(t.lower()) for t in texts])
            scores = np.asarray(index.get_scores(words))
        else:
            scores = BM25(texts).scores(q["question"])
        lexical = [int(j) for j in np.argsort(-scores, kind="stable")[:200]]
        # The floor: turns in an order that knows nothing of the question (seeded per question).
        seed = int(hashlib.sha1(q["question_id"].encode()).hexdigest()[:8], 16)
        shuffled = [int(j) for j in np.random.default_rng(seed).permutation(len(texts))[:200]]
        rankings: dict[str, list[int]] = {"bm25": lexical, "random": shuffled}
        if embedder is not None:
            doc = embedder.embed(texts)
            qv = embedder.embed([q["question"]])[0]
            dense = [int(j) for j in np.argsort(-(doc @ qv), kind="stable")[:200]]
            rankings["dense"] = dense
            rankings["bm25+dense_rrf"] = rrf(lexical, dense)
        for name, ranking in rankings.items():
            ranked = list(dict.fromkeys(sessions[j] for j in ranking))
            rows[name].append((q["question_type"], score(ranked, q["answer_session_ids"])))
    return {
        name: {
            "metrics": summarize_by_type(r),
            "implementation": "rank_bm25" if BM25Okapi else "bench",
        }
        for name, r in rows.items()
    }


def _line(name: str, m: dict[str, Any]) -> str:
    return (
        f"{name:>16}: R@5 {m['R@5']:.3f}  R@10 {m['R@10']:.3f}  any@5 {m['any@5']:.3f}  "
        f"NDCG@10 {m['NDCG@10']:.3f}"
    )


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--embedder", choices=["hash", "minilm", "onnx"], default="hash")
    parser.add_argument("--k", type=int, default=20)
    parser.add_argument("--configs", nargs="+", default=["default"], choices=list(CONFIGS))
    parser.add_argument("--questions", type=int, default=None, help="only the first N")
    parser.add_argument("--no-baselines", dest="baselines", action="store_false")
    parser.add_argument(
        "--cache", type=Path, default=Path(tempfile.gettempdir()) / "graphmem-lme-cache"
    )
    parser.add_argument("--out", type=Path)
    args = parser.parse_args(argv)

    data = load(args.data)
    args.cache.mkdir(parents=True, exist_ok=True)
    embedder: Embedder = make_embedder(args.embedder)
    if args.embedder != "hash":
        embedder = CachedEmbedder(embedder, args.cache / f"vectors-{args.embedder}.npz")
    folder, info = ingest(data, args.data, embedder, args.cache, args.questions)
    print(f"store: {folder} ({info})", file=sys.stderr, flush=True)
    qs = evaluated(data, args.questions)
    report: dict[str, Any] = {
        "command": "python " + " ".join([os.path.relpath(__file__, ROOT), *sys.argv[1:]]),
        "data": f"{args.data.name} ({data.get('source', 'LongMemEval_S')}; "
        f"{data.get('split', 'dev')}), {len(qs)} questions with evidence",
        "machine": f"{platform.machine()}, {os.cpu_count()} cores, Python "
        f"{platform.python_version()}, load average at start "
        f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}",
        "protocol": {
            "embedder": embedder.name,
            "extractor": "rules (no LLM)",
            "k": args.k,
            "store": "one SQLite store, one group per question",
            "ranking": "FactHit provenance episodes in fact rank order, then "
            "RecallResult.episodes; mapped to sessions, deduplicated",
        },
        "ingest": info,
        "configs": {},
    }
    for name in args.configs:
        result = run_config(CONFIGS[name], qs, folder / "lme.db", embedder, args.k)
        report["configs"][name] = result
        print(_line(name, result["metrics"]["all"]) + f"  p50 {result['recall_ms']['p50']} ms",
              flush=True)
    if args.baselines:
        report["baselines"] = run_baselines(
            data, qs, embedder if args.embedder != "hash" else None
        )
        for name, result in report["baselines"].items():
            print(_line(name, result["metrics"]["all"]), flush=True)
    types = sorted({q["question_type"] for q in qs})
    for qtype in types:
        cells = [f"{n}={r['metrics'][qtype]['R@5']:.3f}" for n, r in report["configs"].items()]
        cells += [f"{n}={r['metrics'][qtype]['R@5']:.3f}" for n, r in
                  report.get("baselines", {}).items()]
        print(f"  R@5 {qtype:>26}: " + "  ".join(cells), flush=True)
    if isinstance(embedder, CachedEmbedder):
        embedder.save()
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(report, indent=1) + "\n")


if __name__ == "__main__":
    main()
