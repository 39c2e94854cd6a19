"""Retrieval quality on LoCoMo: does recall() bring back the dialog turns that hold the answer?

    python bench/locomo.py --out bench/results/locomo.json
    python bench/locomo.py --embedder minilm --out bench/results/locomo_minilm.json

Protocol (issue 7). Each of the 10 conversations of ``locomo10.json`` (CC BY-NC 4.0) is ingested
into its own store and group as message episodes, one per dialog turn: ``reference_time`` = the
session's date (LoCoMo's "1:56 pm on 8 May, 2023", read as UTC), ``metadata["speaker"]`` and
``metadata["dia_id"]`` ("D1:3"), ``source`` = the session ("session_1"), no LLM (the ``rules``
extractor). A turn that shares an image carries its caption in the text
("[shares a photo of a dog ...]"; ``--no-captions`` leaves it out). Every question with evidence is
asked with ``recall(question, k=--k)``; the returned facts' provenance episodes (``FactHit``
rank order, then each fact's ``episode_ids``), then ``RecallResult.episodes``, are mapped to
dialog ids in rank order and deduplicated. Recall@5/10/20 (share of the evidence turns found)
and NDCG@10 (binary relevance) are averaged per category and overall (1–4, 1–5).

Categories (LoCoMo's numbering): 1 multi-hop, 2 temporal, 3 open-domain, 4 single-hop,
5 adversarial. Nothing about a question but its text reaches recall(): no category, no evidence.

Configurations: ``default`` (the library's ``RetrievalConfig()``) and ablations of it, each
switching one part off (``use_expansion=False``: entity hops and neighbouring turns;
``use_context=False``: neighbouring turns only; ``use_vectors``, ``use_fulltext``,
``use_names``; ``speaker_weight=0``; ``time_weight=0``), the episode fusion's vector weight
(``dense_*``) and ``named_2`` (the default before issue 11: plus the two latest facts about an
entity the question names).
``episodes_first_diagnostic`` re-scores the same results with ``RecallResult.episodes`` first
(not the protocol; it shows what the facts-first order costs).
Plain turn-retrieval baselines are computed here on the turns as "Speaker: text" (with the
caption), which reproduces the issue's BM25 reference (0.531): ``bm25`` (Okapi BM25, k1=1.5,
b=0.75, lower-cased word tokens) and, with ``--embedder minilm``, ``dense`` and
``bm25+dense_rrf``.

Ingested stores are cached under ``--cache`` (keyed by the data file, the ingest options, the
embedder and the source of the extractor), so a second run only measures recall.
"""

from __future__ import annotations

import argparse
import hashlib
import json
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
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import numpy as np

from bench._common import package_signature, ranking_scores, recall_ranking
from graphmem import GraphMemory
from graphmem.embeddings.factory import Embedder, HashEmbedder
from graphmem.retrieve.retriever import RetrievalConfig

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_DATA = ROOT.parent / "shared" / "bench" / "data" / "locomo10.json"
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}
KS = (5, 10, 20)

CONFIGS: dict[str, dict[str, Any]] = {
    # The library's defaults (issue 11): facts the question supports, episodes by BM25 fused
    # with their vectors (weight: the embedder's), neighbouring turns, speaker and time cues.
    "default": {},
    # The UPDATES links between turns left out of the order (retrieve/currentness.py).
    "no_currentness": {"currentness_top": 0},
    "no_pairs": {"currentness_pairs": 0},
    # A turn lifted by its neighbour no longer brings that neighbour in after it
    # (retrieve/context.py); and a turn two places away lifted half as much.
    "no_context_pairs": {"context_pairs": False},
    "context_pairs": {"context_pairs": True},
    "decay_0.5": {"context_decay": 0.5, "chat_context_decay": 0.5, "context_pairs": True},
    "decay_only_0.5": {"context_decay": 0.5, "chat_context_decay": 0.5},
    # A turn two places away lifted as much as an adjacent one in a chat with an assistant too
    # (the default before chat_context_decay); a summary request with the first-person cue
    # (before self_cue_on_summaries); both (the retriever before either).
    "chat_decay_1": {"chat_context_decay": 1.0},
    "summary_self_cue": {"self_cue_on_summaries": True},
    "previous": {"chat_context_decay": 1.0, "self_cue_on_summaries": True},
    # Ablations: each part switched off alone.
    "no_expansion": {"use_expansion": False},
    "no_context": {"use_context": False},
    "no_vectors": {"use_vectors": False},
    "no_fulltext": {"use_fulltext": False},
    "no_names": {"use_names": False},
    "no_speaker": {"speaker_weight": 0.0},
    "no_time": {"time_weight": 0.0},
    # The episode fusion's weight of vector similarity (default: the embedder's).
    "dense_0": {"dense_weight": 0.0},
    "dense_0.3": {"dense_weight": 0.3},
    "dense_0.5": {"dense_weight": 0.5},
    "dense_0.7": {"dense_weight": 0.7},
    # The default before issue 11: plus the two latest facts about an entity the question names.
    "named_2": {"named_fact_limit": 2},
    # Length-fair scoring off: whole-episode text scores only; no first-person speaker cue.
    "no_passages": {"passage_weight": 0.0},
    "no_self_speaker": {"self_speakers": ()},
    "self_0.25": {"self_speaker_weight": 0.25},
    "before": {"passage_weight": 0.0, "self_speakers": ()},
}


# ----------------------------------------------------------------------------- data
def parse_date(text: str) -> datetime:
    """LoCoMo's session stamps, e.g. "1:56 pm on 8 May, 2023", as UTC."""
    return datetime.strptime(text.strip(), "%I:%M %p on %d %B, %Y").replace(tzinfo=UTC)


_DIA = re.compile(r"D:?(\d+):0*(\d+)")


def clean_evidence(raw: Sequence[str], known: set[str]) -> list[str]:
    """Evidence ids as given, repairing the few malformed ones ("D:11:26", "D8:6; D9:17")."""
    out: list[str] = []
    for item in raw:
        for match in _DIA.finditer(str(item)):
            dia = f"D{int(match.group(1))}:{int(match.group(2))}"
            if dia in known and dia not in out:
                out.append(dia)
    return out


def turn_text(turn: dict[str, Any], captions: bool) -> str:
    text = str(turn.get("text", "")).strip()
    if captions and turn.get("blip_caption"):
        text = f"{text} [shares {turn['blip_caption']}]".strip()
    return text


def conversation_items(sample: dict[str, Any], captions: bool) -> list[dict[str, Any]]:
    conv = sample["conversation"]
    items: list[dict[str, Any]] = []
    n = 1
    while f"session_{n}" in conv:
        when = parse_date(conv[f"session_{n}_date_time"])
        for turn in conv[f"session_{n}"]:
            text = turn_text(turn, captions)
            if not text:
                continue
            items.append(
                {
                    "content": text,
                    "group_id": sample["sample_id"],
                    "kind": "message",
                    "source": f"session_{n}",
                    "reference_time": when,
                    "metadata": {"speaker": turn["speaker"], "dia_id": turn["dia_id"]},
                }
            )
        n += 1
    return items


def questions(sample: dict[str, Any], known: set[str]) -> list[dict[str, Any]]:
    out = []
    for qa in sample["qa"]:
        evidence = clean_evidence(qa.get("evidence") or [], known)
        if evidence:
            out.append({"q": qa["question"], "cat": int(qa["category"]), "ev": evidence})
    return out


# ----------------------------------------------------------------------------- metrics
def score(ranked: Sequence[str], evidence: Sequence[str]) -> dict[str, float]:
    return ranking_scores(ranked, evidence, KS)


def summarize(rows: list[tuple[int, dict[str, float]]]) -> dict[str, Any]:
    groups: dict[str, list[dict[str, float]]] = defaultdict(list)
    for cat, metrics in rows:
        groups[f"{cat}-{CATEGORIES[cat]}"].append(metrics)
        groups["all_1-5"].append(metrics)
        if cat != 5:
            groups["all_1-4"].append(metrics)
    out: dict[str, Any] = {}
    for name in sorted(groups, key=lambda g: (g.startswith("all"), g)):
        ms = groups[name]
        out[name] = {"n": len(ms)} | {
            key: round(float(np.mean([m[key] for m in ms])), 4) for key in ms[0]
        }
    return out


# ----------------------------------------------------------------------------- baselines
_TOKEN = re.compile(r"\w+")


class BM25:
    """Okapi BM25 over the turns (k1=1.5, b=0.75), as plain turn retrieval does it."""

    def __init__(self, docs: Sequence[str], k1: float = 1.5, b: float = 0.75) -> None:
        self.tokens = [_TOKEN.findall(d.lower()) for d in docs]
        self.k1, self.b = k1, b
        self.avg = float(np.mean([len(t) for t in self.tokens])) or 1.0
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
            norm = self.k1 * (1 - self.b + self.b * len(toks) / self.avg)
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
def make_embedder(name: str) -> Embedder:
    if name == "hash":
        return HashEmbedder()
    if name == "minilm":
        from graphmem.embeddings.factory import SentenceTransformerEmbedder

        emb = SentenceTransformerEmbedder()
        emb.embed(["warm up"])  # load now; fail early if the package is missing
        return emb
    if name == "onnx":  # the same model, int8, without torch (graphmem[onnx-embeddings])
        from graphmem.embeddings.onnx import OnnxMiniLMEmbedder

        onnx = OnnxMiniLMEmbedder()
        onnx.embed(["warm up"])
        return onnx
    raise SystemExit(f"unknown embedder {name!r}")


# ----------------------------------------------------------------------------- ingest cache
def _signature(
    data: Path, captions: bool, embedder: Embedder, extractor: str, samples: Sequence[str]
) -> str:
    h = hashlib.sha256()
    h.update(data.read_bytes())
    h.update(f"{captions}|{embedder.name}|{embedder.dim}|{extractor}".encode())
    # A run over the first N conversations must not be served, or overwritten, by another's.
    h.update(",".join(samples).encode())
    h.update(package_signature().encode())
    return h.hexdigest()[:16]


def ingest_all(
    samples: list[dict[str, Any]],
    embedder: Embedder,
    *,
    captions: bool,
    extractor: str,
    cache: Path,
    data: Path,
) -> tuple[Path, dict[str, Any]]:
    sig = _signature(data, captions, embedder, extractor, [str(s["sample_id"]) for s in samples])
    folder = cache / f"locomo-{sig}"
    info_path = folder / "ingest.json"
    if info_path.exists():
        return folder, json.loads(info_path.read_text())
    tmp = Path(tempfile.mkdtemp(prefix="locomo-ingest-", dir=cache))
    info: dict[str, Any] = {"conversations": {}}
    total_s = 0.0
    for sample in samples:
        sid = sample["sample_id"]
        items = conversation_items(sample, captions)
        mem = GraphMemory(tmp / f"{sid}.db", embedder=embedder, extractor=extractor)
        t0 = time.perf_counter()
        results = mem.add_episodes(items)
        seconds = time.perf_counter() - t0
        total_s += seconds
        stats = mem.stats(sid)
        mem.close()
        failed = sum(r.status == "failed" for r in results)
        info["conversations"][sid] = {
            "turns": len(items),
            "seconds": round(seconds, 2),
            "facts": stats["facts"],
            "entities": stats["entities"],
            "failed": failed,
        }
        print(
            f"ingested {sid}: {len(items)} turns, {stats['facts']} facts, "
            f"{stats['entities']} entities in {seconds:.1f}s",
            file=sys.stderr,
            flush=True,
        )
    turns = sum(c["turns"] for c in info["conversations"].values())
    info["total"] = {
        "turns": turns,
        "facts": sum(c["facts"] for c in info["conversations"].values()),
        "entities": sum(c["entities"] for c in info["conversations"].values()),
        "seconds": round(total_s, 2),
        "turns_per_s": round(turns / total_s, 1) if total_s else None,
    }
    (tmp / "ingest.json").write_text(json.dumps(info, indent=2))
    try:
        tmp.rename(folder)
    except OSError:  # another run published the same stores meanwhile: use those
        shutil.rmtree(tmp, ignore_errors=True)
    return folder, info


# ----------------------------------------------------------------------------- runs
def dialog_ids(result: Any, dia_of: dict[str, str], episodes_first: bool = False) -> list[str]:
    """The protocol: facts' provenance (fact rank order), then RecallResult.episodes.

    ``episodes_first`` (a diagnostic, not the protocol): RecallResult.episodes (the retriever's
    own fused episode ranking, which already counts the returned facts' support), then the
    facts' provenance.
    """

    def episode_dia(ep: Any) -> str | None:
        dia = ep.metadata.get("dia_id") or dia_of.get(ep.id)
        return None if dia is None else str(dia)

    return recall_ranking(result, dia_of.get, episode_dia, episodes_first=episodes_first)


def run_config(
    name: str,
    overrides: dict[str, Any],
    samples: list[dict[str, Any]],
    folder: Path,
    embedder: Embedder,
    k: int,
    hops: int,
    per_question: dict[str, list[Any]] | None = None,
) -> dict[str, Any]:
    rows: list[tuple[int, dict[str, float]]] = []
    alt_rows: list[tuple[int, dict[str, float]]] = []
    latencies: list[float] = []
    returned: list[int] = []
    from_facts: list[int] = []
    for sample in samples:
        sid = sample["sample_id"]
        src = folder / f"{sid}.db"
        work = Path(tempfile.mkdtemp(prefix="locomo-q-"))
        shutil.copy(src, work / src.name)  # recall never writes, but keep the cache pristine
        mem = GraphMemory(
            work / src.name, embedder=embedder, retrieval=RetrievalConfig(**overrides)
        )
        mem.connect()
        dia_of = {
            row["id"]: row["metadata"]["dia_id"]
            for row in mem.export(group_id=sid)
            if row.get("type") == "episode" and "dia_id" in (row.get("metadata") or {})
        }
        known = set(dia_of.values())
        for qa in questions(sample, known):
            t0 = time.perf_counter()
            result = mem.recall(qa["q"], group_id=sid, k=k, hops=hops)
            latencies.append(time.perf_counter() - t0)
            ranked = dialog_ids(result, dia_of)
            returned.append(len(ranked))
            from_facts.append(len({dia_of.get(e) for h in result.facts for e in h.episode_ids}))
            metrics = score(ranked, qa["ev"])
            rows.append((qa["cat"], metrics))
            alt_rows.append((qa["cat"], score(dialog_ids(result, dia_of, True), qa["ev"])))
            if per_question is not None:
                per_question.setdefault(name, []).append(
                    [sid, qa["cat"], round(metrics["R@10"], 3), ranked[:10], qa["ev"]]
                )
        mem.close()
        shutil.rmtree(work, ignore_errors=True)
    lat = np.asarray(latencies) * 1000
    return {
        "config": overrides,
        "metrics": summarize(rows),
        "episodes_first_diagnostic": {
            group: {key: m[key] for key in ("R@5", "R@10", "R@20", "NDCG@10")}
            for group, m in summarize(alt_rows).items()
            if group.startswith("all")
        },
        "recall_ms": {
            "p50": round(float(np.percentile(lat, 50)), 2),
            "p95": round(float(np.percentile(lat, 95)), 2),
        },
        "mean_dialog_ids_returned": round(float(np.mean(returned)), 1),
        "mean_dialog_ids_from_facts": round(float(np.mean(from_facts)), 1),
    }


def run_baselines(
    samples: list[dict[str, Any]], captions: bool, embedder: Embedder | None
) -> dict[str, Any]:
    rows: dict[str, list[tuple[int, dict[str, float]]]] = defaultdict(list)
    for sample in samples:
        items = conversation_items(sample, captions)
        dias = [it["metadata"]["dia_id"] for it in items]
        # As the reference points index a turn: "Speaker: text" (this reproduces BM25 0.531).
        texts = [f"{it['metadata']['speaker']}: {it['content']}" for it in items]
        bm25 = BM25(texts)
        qas = questions(sample, set(dias))
        doc_vecs = embedder.embed(texts) if embedder is not None else None
        q_vecs = embedder.embed([qa["q"] for qa in qas]) if embedder is not None else None
        for i, qa in enumerate(qas):
            s = bm25.scores(qa["q"])
            lexical = [int(j) for j in np.argsort(-s, kind="stable")[:50]]
            rankings: dict[str, list[int]] = {"bm25": lexical}
            if doc_vecs is not None and q_vecs is not None:
                dense = [int(j) for j in np.argsort(-(doc_vecs @ q_vecs[i]), kind="stable")[:50]]
                rankings["dense"] = dense
                rankings["bm25+dense_rrf"] = rrf(lexical, dense)
            for name, ranking in rankings.items():
                rows[name].append((qa["cat"], score([dias[j] for j in ranking], qa["ev"])))
    return {name: {"metrics": summarize(r)} for name, r in rows.items()}


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--embedder", choices=["hash", "minilm", "onnx"], default="hash")
    parser.add_argument("--k", type=int, default=20, help="recall(k=...) (at least 20)")
    parser.add_argument("--hops", type=int, default=2)
    parser.add_argument("--configs", nargs="+", default=list(CONFIGS), choices=list(CONFIGS))
    parser.add_argument("--no-captions", dest="captions", action="store_false")
    parser.add_argument("--no-baselines", dest="baselines", action="store_false")
    parser.add_argument("--conversations", type=int, default=None, help="only the first N")
    parser.add_argument(
        "--cache", type=Path, default=Path(tempfile.gettempdir()) / "graphmem-locomo-cache"
    )
    parser.add_argument("--dump", type=Path, help="per-question ranks (for error analysis)")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args(argv)

    samples = json.loads(args.data.read_text())[: args.conversations]
    embedder = make_embedder(args.embedder)
    args.cache.mkdir(parents=True, exist_ok=True)
    folder, ingest = ingest_all(
        samples,
        embedder,
        captions=args.captions,
        extractor="rules",
        cache=args.cache,
        data=args.data,
    )
    print(f"stores: {folder} ({ingest['total']})", file=sys.stderr, flush=True)

    report: dict[str, Any] = {
        "command": "python " + " ".join([os.path.relpath(__file__, ROOT), *sys.argv[1:]]),
        "data": f"{args.data.name} (LoCoMo, CC BY-NC 4.0), {len(samples)} conversations",
        "machine": f"{platform.machine()}, {os.cpu_count()} cores, Python "
        f"{platform.python_version()}, load average at start "
        f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}",
        "protocol": {
            "embedder": embedder.name,
            "extractor": "rules (no LLM)",
            "k": args.k,
            "hops": args.hops,
            "captions": args.captions,
            "ranking": "FactHit provenance episodes in fact rank order, then "
            "RecallResult.episodes; mapped to dia_id, deduplicated",
        },
        "ingest": ingest["total"],
        "reference_points_R@10": {
            "bm25": 0.531,
            "all-MiniLM-L6-v2": 0.497,
            "bm25+dense_rrf": 0.587,
        },
        "configs": {},
    }
    per_question: dict[str, list[Any]] | None = {} if args.dump else None
    for name in args.configs:
        t0 = time.perf_counter()
        result = run_config(
            name, CONFIGS[name], samples, folder, embedder, args.k, args.hops, per_question
        )
        result["seconds"] = round(time.perf_counter() - t0, 1)
        report["configs"][name] = result
        overall = result["metrics"]["all_1-5"]
        alt = result["episodes_first_diagnostic"]["all_1-5"]
        print(
            f"{name:>22}: R@5 {overall['R@5']:.3f}  R@10 {overall['R@10']:.3f}  "
            f"R@20 {overall['R@20']:.3f}  NDCG@10 {overall['NDCG@10']:.3f}  "
            f"(1-4 R@10 {result['metrics']['all_1-4']['R@10']:.3f}; episodes-first R@10 "
            f"{alt['R@10']:.3f}; p50 {result['recall_ms']['p50']} ms)",
            flush=True,
        )
    if args.baselines:
        report["baselines"] = run_baselines(
            samples, args.captions, embedder if args.embedder != "hash" else None
        )
        for name, result in report["baselines"].items():
            overall = result["metrics"]["all_1-5"]
            print(
                f"{name:>22}: R@5 {overall['R@5']:.3f}  R@10 {overall['R@10']:.3f}  "
                f"R@20 {overall['R@20']:.3f}  NDCG@10 {overall['NDCG@10']:.3f}  "
                f"(1-4 R@10 {result['metrics']['all_1-4']['R@10']:.3f})",
                flush=True,
            )
    if args.dump and per_question is not None:
        args.dump.write_text(json.dumps(per_question))
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(report, indent=2) + "\n")


if __name__ == "__main__":
    main()
