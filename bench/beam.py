"""Retrieval quality on BEAM 100K: long user–assistant conversations with updates, conflicts and
dates. Does recall() bring back the turns that hold the answer, and the newest value first?

    python bench/beam.py --out bench/results/beam_100k.json
    python bench/beam.py --embedder minilm --out bench/results/beam_100k_minilm.json

Data: ``../shared/bench/data/beam_100k.json.xz`` (BEAM, Tavakoli et al. 2025, "Beyond a Million
Tokens", CC BY-SA 4.0; its ``format`` field describes it): 20 conversations, 5,094 messages,
355 questions with message-level evidence (``source_chat_ids``; abstention questions have none
and are left out).

Protocol (LoCoMo's, ``bench/locomo.py``). Each conversation in its own store and group; one
``message`` episode per message: ``metadata["speaker"]`` = its role (user | assistant),
``metadata["turn_id"]`` = its id, ``source`` = its batch ("batch_1"), ``reference_time`` = the
batch's time anchor (the first message of a batch carries one, "March-15-2024"; UTC) plus one
minute per message id, so that the turns of a batch keep their order. The trailing index marker
that BEAM appends to user messages (" ->-> 1,1") is dropped. The ``rules`` extractor, no LLM.
Each question's text alone goes to ``recall(question, k=20)``; the returned facts' provenance
turns (fact rank order), then ``RecallResult.episodes``, deduplicated, are the ranking.
Recall@5/10 (share of the evidence turns in the first k) and NDCG@10 (binary relevance), per
question type and overall.

``knowledge_update`` questions label their evidence ``original_info`` / ``updated_info``:
"updated above superseded" is the share of them whose best-ranked updated turn comes before
their best-ranked original turn (a turn missing from the ranking ranks last; both missing counts
as a miss). ``contradiction_resolution`` (``first_statement`` / ``second_statement``) and
``temporal_reasoning`` (``first_event`` / ``second_event``) count both sides as evidence.
"assistant share" is the share of assistant turns among the first 10 returned.

Baselines in the same run, on the same turns: ``bm25`` (``rank_bm25``'s Okapi BM25 over the
message texts, lower-cased word tokens) and ``random`` (the turns in a seeded random order);
with ``--embedder minilm`` also ``dense`` (cosine over the same turns) and ``bm25+dense_rrf``.
Ingested stores are cached under ``--cache`` (keyed by the data, the embedder and graphmem's
source), so a second run only measures recall.
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
from collections import defaultdict
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import numpy as np
from locomo import _TOKEN, make_embedder, rrf

from bench._common import (
    compare,
    package_signature,
    ranking_scores,
    recall_ranking,
    summarize_by_type,
)
from graphmem import GraphMemory
from graphmem.embeddings.factory import Embedder
from graphmem.retrieve.retriever import RetrievalConfig

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_DATA = ROOT.parent / "shared" / "bench" / "data" / "beam_100k.json.xz"
KS = (5, 10)
_MARKER = re.compile(r"\s*->->\s*\d+\s*,\s*\d+\s*$")

CONFIGS: dict[str, dict[str, Any]] = {
    "default": {},
    "no_context": {"use_context": False},
    "no_expansion": {"use_expansion": False},
    "no_passages": {"passage_weight": 0.0},
    "no_self_speaker": {"self_speakers": ()},
    "self_0.25": {"self_speaker_weight": 0.25},
    "passages_0.3": {"passage_weight": 0.3},
    # Neither (the retriever before length-fair scoring).
    "before": {"passage_weight": 0.0, "self_speakers": ()},
    # The UPDATES links between turns left out of the order (retrieve/currentness.py).
    "no_currentness": {"currentness_top": 0},
    "no_pairs": {"currentness_pairs": 0},
    "pairs_8": {"currentness_pairs": 8},
    "pairs_10": {"currentness_pairs": 10},
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
}


# ----------------------------------------------------------------------------- data
def load(path: Path) -> dict[str, Any]:
    with lzma.open(path) as handle:
        data: dict[str, Any] = json.loads(handle.read())
    return data


def parse_anchor(text: str) -> datetime:
    """BEAM's time anchors, e.g. "March-15-2024", as UTC midnight."""
    return datetime.strptime(text.strip(), "%B-%d-%Y").replace(tzinfo=UTC)


def messages(conv: dict[str, Any]) -> list[tuple[int, dict[str, Any], datetime]]:
    """(batch number, message, its reference time) in message-id order."""
    out: list[tuple[int, dict[str, Any], datetime]] = []
    anchor = datetime(2024, 1, 1, tzinfo=UTC)
    for batch in conv["chat"]:
        msgs = [m for turn in batch["turns"] for m in turn]
        stamp = next((m["time_anchor"] for m in msgs if m.get("time_anchor")), None)
        if stamp is None and batch.get("time_anchor"):
            stamp = batch["time_anchor"]
        if stamp:
            anchor = parse_anchor(stamp)
        for m in msgs:
            out.append((int(batch["batch_number"]), m, anchor + timedelta(minutes=int(m["id"]))))
    out.sort(key=lambda x: int(x[1]["id"]))
    return out


def turn_text(message: dict[str, Any]) -> str:
    return _MARKER.sub("", str(message.get("content") or "")).strip()


def conversation_items(cid: str, conv: dict[str, Any]) -> list[dict[str, Any]]:
    items = []
    for batch, m, when in messages(conv):
        text = turn_text(m)
        if not text:
            continue
        items.append(
            {
                "content": text,
                "group_id": f"beam-{cid}",
                "kind": "message",
                "source": f"batch_{batch}",
                "reference_time": when,
                "metadata": {"speaker": m["role"], "turn_id": str(m["id"])},
            }
        )
    return items


def questions(conv: dict[str, Any], known: set[str]) -> list[dict[str, Any]]:
    """Questions whose evidence turns exist; ``old``/``new`` for knowledge updates."""
    out = []
    for qtype, qs in conv["probing_questions"].items():
        for q in qs:
            src = q.get("source_chat_ids")
            if isinstance(src, dict):
                groups = {k: [str(x) for x in v if str(x) in known] for k, v in src.items()}
                evidence = list(dict.fromkeys(x for v in groups.values() for x in v))
            else:
                groups = {}
                evidence = list(dict.fromkeys(str(x) for x in (src or []) if str(x) in known))
            if not evidence:
                continue
            entry: dict[str, Any] = {"q": q["question"], "type": qtype, "ev": evidence}
            if qtype == "knowledge_update":
                entry["old"] = groups.get("original_info", [])
                entry["new"] = groups.get("updated_info", [])
            out.append(entry)
    return out


# ----------------------------------------------------------------------------- metrics
def score(ranked: Sequence[str], evidence: Sequence[str]) -> dict[str, float]:
    return ranking_scores(ranked, evidence, KS)


def updated_first(ranked: Sequence[str], old: Sequence[str], new: Sequence[str]) -> float | None:
    """1 when the best updated turn ranks above the best original one (missing = last)."""
    if not old or not new:
        return None
    pos = {d: i for i, d in enumerate(ranked)}
    best_new = min((pos.get(d, math.inf) for d in new), default=math.inf)
    best_old = min((pos.get(d, math.inf) for d in old), default=math.inf)
    return float(best_new < best_old)


class Tally:
    """Scores, the update order and the assistant share of one ranking method."""

    def __init__(self) -> None:
        self.rows: list[tuple[str, dict[str, float]]] = []
        self.updates: list[float] = []
        self.assistant: list[float] = []
        self.words: list[int] = []

    def add(self, qa: dict[str, Any], ranked: list[str], role: dict[str, str],
            words: dict[str, int]) -> dict[str, float]:
        metrics = score(ranked, qa["ev"])
        self.rows.append((qa["type"], metrics))
        if qa["type"] == "knowledge_update":
            hit = updated_first(ranked, qa["old"], qa["new"])
            if hit is not None:
                self.updates.append(hit)
        top = ranked[:10]
        if top:
            self.assistant.append(sum(role.get(t) == "assistant" for t in top) / len(top))
            self.words.extend(words.get(t, 0) for t in top)
        return metrics

    def report(self) -> dict[str, Any]:
        return {
            "metrics": summarize_by_type(self.rows),
            "updated_above_superseded": {
                "rate": round(float(np.mean(self.updates)), 4) if self.updates else None,
                "n": len(self.updates),
            },
            "assistant_share_top10": round(float(np.mean(self.assistant)), 4),
            # For the paired comparisons: each question's type, R@5, R@10, NDCG@10.
            "per_question": [[t, m["R@5"], m["R@10"], m["NDCG@10"]] for t, m in self.rows],
            "median_words_top10": float(np.median(self.words)) if self.words else None,
        }


# ----------------------------------------------------------------------------- ingest
def _signature(data: Path, embedder: Embedder, conversations: Sequence[str]) -> str:
    h = hashlib.sha256()
    h.update(data.read_bytes())
    h.update(f"{embedder.name}|{embedder.dim}|beam-v1".encode())
    # A run over the first N conversations must not be served, or overwritten, by another's.
    h.update(",".join(conversations).encode())
    h.update(package_signature().encode())
    return h.hexdigest()[:16]


def ingest_all(
    convs: dict[str, Any], embedder: Embedder, cache: Path, data: Path
) -> tuple[Path, dict[str, Any]]:
    folder = cache / f"beam-{_signature(data, embedder, list(convs))}"
    info_path = folder / "ingest.json"
    if info_path.exists():
        return folder, json.loads(info_path.read_text())
    tmp = Path(tempfile.mkdtemp(prefix="beam-ingest-", dir=cache))
    info: dict[str, Any] = {"conversations": {}}
    total = 0.0
    for cid, conv in convs.items():
        items = conversation_items(cid, conv)
        mem = GraphMemory(tmp / f"{cid}.db", embedder=embedder, extractor="rules")
        t0 = time.perf_counter()
        mem.add_episodes(items)
        seconds = time.perf_counter() - t0
        total += seconds
        stats = mem.stats(f"beam-{cid}")
        mem.close()
        info["conversations"][cid] = {
            "turns": len(items), "seconds": round(seconds, 2), "facts": stats["facts"],
            "entities": stats["entities"],
        }
        print(f"ingested {cid}: {len(items)} turns, {stats['facts']} facts in {seconds:.1f}s",
              file=sys.stderr, flush=True)
    turns = sum(c["turns"] for c in info["conversations"].values())
    info["total"] = {
        "turns": turns,
        "facts": sum(c["facts"] for c in info["conversations"].values()),
        "entities": sum(c["entities"] for c in info["conversations"].values()),
        "seconds": round(total, 2),
        "turns_per_s": round(turns / total, 1) if total else None,
    }
    (tmp / "ingest.json").write_text(json.dumps(info, indent=2))
    try:
        tmp.rename(folder)
    except OSError:  # another run published the same stores meanwhile: use those
        shutil.rmtree(tmp, ignore_errors=True)
    return folder, info


# ----------------------------------------------------------------------------- runs
def turn_ranking(result: Any, turn_of: dict[str, str]) -> list[str]:
    """The protocol: facts' provenance (fact rank order), then RecallResult.episodes."""
    return recall_ranking(result, turn_of.get)


def run_config(
    overrides: dict[str, Any], convs: dict[str, Any], folder: Path, embedder: Embedder, k: int,
    dump: list[Any] | None = None,
) -> dict[str, Any]:
    tally = Tally()
    latencies: list[float] = []
    for cid, conv in convs.items():
        src = folder / f"{cid}.db"
        work = Path(tempfile.mkdtemp(prefix="beam-q-"))
        shutil.copy(src, work / src.name)  # recall never writes, but keep the cache pristine
        mem = GraphMemory(work / src.name, embedder=embedder,
                          retrieval=RetrievalConfig(**overrides))
        mem.connect()
        group = f"beam-{cid}"
        turn_of: dict[str, str] = {}
        role: dict[str, str] = {}
        words: dict[str, int] = {}
        for row in mem.export(group_id=group):
            meta = row.get("metadata") or {}
            if row.get("type") == "episode" and "turn_id" in meta:
                turn_of[row["id"]] = str(meta["turn_id"])
                role[str(meta["turn_id"])] = str(meta.get("speaker"))
                words[str(meta["turn_id"])] = len(str(row.get("content", "")).split())
        for qa in questions(conv, set(turn_of.values())):
            t0 = time.perf_counter()
            result = mem.recall(qa["q"], group_id=group, k=k)
            latencies.append(time.perf_counter() - t0)
            ranked = turn_ranking(result, turn_of)
            metrics = tally.add(qa, ranked, role, words)
            if dump is not None:
                dump.append([cid, qa["type"], qa["q"], round(metrics["R@10"], 3), ranked[:10],
                             qa["ev"], qa.get("old"), qa.get("new")])
        mem.close()
        shutil.rmtree(work, ignore_errors=True)
    lat = np.asarray(latencies) * 1000
    return {"config": overrides} | tally.report() | {
        "recall_ms": {"p50": round(float(np.percentile(lat, 50)), 2),
                      "p95": round(float(np.percentile(lat, 95)), 2)},
    }


def run_baselines(convs: dict[str, Any], embedder: Embedder | None) -> dict[str, Any]:
    from rank_bm25 import BM25Okapi  # type: ignore[import-untyped]

    tallies: dict[str, Tally] = defaultdict(Tally)
    for cid, conv in convs.items():
        items = conversation_items(cid, conv)
        ids = [it["metadata"]["turn_id"] for it in items]
        texts = [it["content"] for it in items]
        role = {it["metadata"]["turn_id"]: it["metadata"]["speaker"] for it in items}
        words = {it["metadata"]["turn_id"]: len(it["content"].split()) for it in items}
        index = BM25Okapi([_TOKEN.findall(t.lower()) for t in texts])
        doc = embedder.embed(texts) if embedder is not None else None
        for qa in questions(conv, set(ids)):
            scores = np.asarray(index.get_scores(_TOKEN.findall(qa["q"].lower())))
            lexical = [int(j) for j in np.argsort(-scores, kind="stable")]
            seed = int(hashlib.sha1(f"{cid}|{qa['q']}".encode()).hexdigest()[:8], 16)
            rankings = {
                "bm25": lexical,
                "random": [int(j) for j in np.random.default_rng(seed).permutation(len(texts))],
            }
            if doc is not None and embedder is not None:
                qv = embedder.embed([qa["q"]])[0]
                dense = [int(j) for j in np.argsort(-(doc @ qv), kind="stable")]
                rankings["dense"] = dense
                rankings["bm25+dense_rrf"] = rrf(lexical[:200], dense[:200])
            for name, ranking in rankings.items():
                tallies[name].add(qa, [ids[j] for j in ranking], role, words)
    return {name: t.report() | {"implementation": "rank_bm25" if name == "bm25" else "bench"}
            for name, t in tallies.items()}


def latency_group(
    convs: dict[str, Any], embedder: Embedder, cache: Path, data: Path, turns: int, k: int
) -> dict[str, Any]:
    """Recall wall and CPU time in one group of about ``turns`` turns (whole conversations, one
    after another), default vs ``before``, the same questions interleaved."""
    chosen: list[tuple[str, dict[str, Any]]] = []
    total = 0
    for cid, conv in convs.items():
        if total >= turns:
            break
        chosen.append((cid, conv))
        total += len(conversation_items(cid, conv))
    folder = cache / f"beam-latency-{turns}-{_signature(data, embedder, [c for c, _ in chosen])}"
    db = folder / "group.db"
    ingest_s = None
    if not (folder / "done").exists():
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir(parents=True)
        mem = GraphMemory(db, embedder=embedder, extractor="rules")
        items = [it | {"group_id": "big"} for cid, conv in chosen
                 for it in conversation_items(cid, conv)]
        t0 = time.perf_counter()
        mem.add_episodes(items)
        ingest_s = round(time.perf_counter() - t0, 1)
        mem.close()
        (folder / "done").write_text(str(ingest_s))
    every = {str(i) for i in range(10_000)}
    qs = [qa["q"] for _cid, conv in chosen for qa in questions(conv, every)]
    out: dict[str, Any] = {"turns": total, "questions": len(qs), "ingest_s": ingest_s}
    mems = {name: GraphMemory(db, embedder=embedder, retrieval=RetrievalConfig(**CONFIGS[name]))
            for name in ("default", "before")}
    wall: dict[str, list[float]] = defaultdict(list)
    cpu: dict[str, list[float]] = defaultdict(list)
    for mem in mems.values():
        mem.connect()
        mem.recall("warm up", group_id="big", k=k)
    for q in qs:
        for name, mem in mems.items():
            t0, c0 = time.perf_counter(), time.process_time()
            mem.recall(q, group_id="big", k=k)
            wall[name].append(time.perf_counter() - t0)
            cpu[name].append(time.process_time() - c0)
    for name, mem in mems.items():
        mem.close()
        out[name] = {
            "wall_ms": {f"p{p}": round(float(np.percentile(wall[name], p)) * 1000, 1)
                        for p in (50, 95)},
            "cpu_ms": {f"p{p}": round(float(np.percentile(cpu[name], p)) * 1000, 1)
                       for p in (50, 95)},
        }
    return out


def evidence_profile(convs: dict[str, Any]) -> dict[str, Any]:
    """Who speaks the evidence turns, and how long they are."""
    roles: list[str] = []
    lengths: list[int] = []
    for cid, conv in convs.items():
        items = {it["metadata"]["turn_id"]: it for it in conversation_items(cid, conv)}
        for qa in questions(conv, set(items)):
            for t in qa["ev"]:
                roles.append(items[t]["metadata"]["speaker"])
                lengths.append(len(items[t]["content"].split()))
    return {
        "evidence_turns": len(roles),
        "user_share": round(roles.count("user") / len(roles), 4),
        "median_words": float(np.median(lengths)),
    }


def _line(name: str, r: dict[str, Any]) -> str:
    m = r["metrics"]["all"]
    up = r["updated_above_superseded"]["rate"]
    return (f"{name:>16}: R@5 {m['R@5']:.3f}  R@10 {m['R@10']:.3f}  NDCG@10 {m['NDCG@10']:.3f}"
            f"  updated>old {up:.3f}  assistant@10 {r['assistant_share_top10']:.3f}")


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--embedder", choices=["hash", "minilm", "onnx"], default="hash")
    parser.add_argument("--k", type=int, default=20)
    parser.add_argument("--configs", nargs="+", default=["default"], choices=list(CONFIGS))
    parser.add_argument("--conversations", type=int, default=None, help="only the first N")
    parser.add_argument("--no-baselines", dest="baselines", action="store_false")
    parser.add_argument(
        "--cache", type=Path, default=Path(tempfile.gettempdir()) / "graphmem-beam-cache"
    )
    parser.add_argument("--latency-turns", type=int, default=0,
                        help="also time recall in one group of about N turns (0: off)")
    parser.add_argument("--dump", type=Path, help="per-question ranks (for error analysis)")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args(argv)

    data = load(args.data)
    convs = dict(list(data["conversations"].items())[: args.conversations])
    embedder = make_embedder(args.embedder)
    args.cache.mkdir(parents=True, exist_ok=True)
    folder, ingest = ingest_all(convs, embedder, args.cache, args.data)
    print(f"stores: {folder} ({ingest['total']})", file=sys.stderr, flush=True)
    report: dict[str, Any] = {
        "command": "python " + " ".join([os.path.relpath(__file__, ROOT), *sys.argv[1:]]),
        "data": f"{args.data.name} (BEAM 100K, CC BY-SA 4.0), {len(convs)} conversations",
        "machine": f"{platform.machine()}, {os.cpu_count()} cores, Python "
        f"{platform.python_version()}, load average at start "
        f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}",
        "protocol": {
            "embedder": embedder.name, "extractor": "rules (no LLM)", "k": args.k,
            "ranking": "FactHit provenance episodes in fact rank order, then "
            "RecallResult.episodes; mapped to message ids, deduplicated",
        },
        "ingest": ingest["total"],
        "evidence": evidence_profile(convs),
        "configs": {},
    }
    dump: list[Any] | None = [] if args.dump else None
    for name in args.configs:
        t0 = time.perf_counter()
        result = run_config(CONFIGS[name], convs, folder, embedder, args.k,
                            dump if name == "default" else None)
        result["seconds"] = round(time.perf_counter() - t0, 1)
        report["configs"][name] = result
        print(_line(name, result), flush=True)
    if args.baselines:
        report["baselines"] = run_baselines(
            convs, embedder if args.embedder != "hash" else None
        )
        for name, result in report["baselines"].items():
            print(_line(name, result), flush=True)
    first = report["configs"][args.configs[0]]["per_question"]
    others = {name: r["per_question"] for name, r in report["configs"].items()
              if name != args.configs[0]}
    others |= {name: r["per_question"] for name, r in report.get("baselines", {}).items()}
    report["paired"] = {f"{args.configs[0]} - {name}": compare(first, rows)
                        for name, rows in others.items()}
    for label, table in report["paired"].items():
        r10 = table["all"]["R@10"]
        print(f"{label:>28}: R@10 {r10['mean_diff']:+.3f} {r10['ci95']} "
              f"({r10['questions_better']} up, {r10['questions_worse']} down, "
              f"Wilcoxon p {r10['wilcoxon_p']:.2g})", flush=True)
    print(f"{'type':>26} {'n':>3}  graphmem R@10/NDCG  bm25 R@10/NDCG", flush=True)
    mine = report["configs"][args.configs[0]]["metrics"]
    base = report.get("baselines", {}).get("bm25", {}).get("metrics", {})
    for qtype, m in mine.items():
        b = base.get(qtype, {})
        print(f"{qtype:>26} {m['n']:>3}  {m['R@10']:.3f}/{m['NDCG@10']:.3f}  "
              f"{b.get('R@10', float('nan')):.3f}/{b.get('NDCG@10', float('nan')):.3f}",
              flush=True)
    if args.latency_turns:
        lat = latency_group(data["conversations"], embedder, args.cache, args.data,
                            args.latency_turns, args.k)
        report["latency_group"] = lat
        print(f"one group of {lat['turns']} turns: " + "  ".join(
            f"{n} wall p50/p95 {lat[n]['wall_ms']['p50']}/{lat[n]['wall_ms']['p95']} ms, "
            f"cpu {lat[n]['cpu_ms']['p50']}/{lat[n]['cpu_ms']['p95']} ms"
            for n in ("default", "before")), flush=True)
    if args.dump and dump is not None:
        args.dump.write_text(json.dumps(dump))
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(report, indent=2) + "\n")


if __name__ == "__main__":
    main()
