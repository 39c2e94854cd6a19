"""Where BEAM's evidence turns rank, in graphmem and in BM25: an error analysis of ``beam.py``.

    python bench/beam_evidence_ranks.py --types summarization information_extraction \
        --out bench/results/beam_100k_evidence_ranks.json
    python bench/beam_evidence_ranks.py --config '{"context_pairs": false}'

Same stores, protocol and BM25 as ``bench/beam.py`` (its ingest cache is reused). For each
question of the chosen types and each of its evidence turns: the turn's speaker and length, its
rank in graphmem's ranking (facts' provenance, then ``RecallResult.episodes``), in the
full-text candidates before and after the length-fair passage scores (``retrieve/passages.py``),
and in BM25's, and whether a returned fact's provenance holds it. Per type: those shares at 10,
by speaker, the speakers of each method's first 10, and how many turns the facts brought.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import numpy as np
from beam import DEFAULT_DATA, conversation_items, ingest_all, load, questions, score, turn_ranking
from locomo import _TOKEN, make_embedder

from graphmem import GraphMemory
from graphmem.retrieve.retriever import RetrievalConfig, Retriever


class _Stages:
    """The full-text episode scores before and after the length-fair step of each recall."""

    def __init__(self) -> None:
        self.text: dict[str, float] = {}
        self.fair: dict[str, float] = {}
        original = Retriever._length_fair

        def spy(retriever: Retriever, text: dict[str, float], query: str) -> dict[str, float]:
            self.text = dict(text)
            self.fair = original(retriever, text, query)
            return self.fair

        Retriever._length_fair = spy  # type: ignore[method-assign]


def _rank(ranking: Sequence[str], turn: str) -> int | None:
    try:
        return ranking.index(turn) + 1
    except ValueError:
        return None


def _order(scores: dict[str, float], turn_of: dict[str, str]) -> list[str]:
    return [turn_of[e] for e in sorted(scores, key=lambda e: (-scores[e], e)) if e in turn_of]


def analyse(convs: dict[str, Any], folder: Path, overrides: dict[str, Any],
            types: set[str], k: int) -> list[dict[str, Any]]:
    from rank_bm25 import BM25Okapi  # type: ignore[import-untyped]

    stages = _Stages()
    embedder = make_embedder("hash")
    rows: list[dict[str, Any]] = []
    for cid, conv in convs.items():
        items = conversation_items(cid, conv)
        ids = [it["metadata"]["turn_id"] for it in items]
        role = {it["metadata"]["turn_id"]: it["metadata"]["speaker"] for it in items}
        words = {it["metadata"]["turn_id"]: len(it["content"].split()) for it in items}
        index = BM25Okapi([_TOKEN.findall(it["content"].lower()) for it in items])
        work = Path(tempfile.mkdtemp(prefix="beam-ranks-"))
        shutil.copy(folder / f"{cid}.db", work / "conv.db")
        mem = GraphMemory(work / "conv.db", embedder=embedder,
                          retrieval=RetrievalConfig(**overrides))
        mem.connect()
        group = f"beam-{cid}"
        turn_of = {
            row["id"]: str(row["metadata"]["turn_id"])
            for row in mem.export(group_id=group)
            if row.get("type") == "episode" and "turn_id" in (row.get("metadata") or {})
        }
        for qa in questions(conv, set(turn_of.values())):
            if qa["type"] not in types:
                continue
            result = mem.recall(qa["q"], group_id=group, k=k)
            ranked = turn_ranking(result, turn_of)
            from_facts = {turn_of.get(e) for hit in result.facts for e in hit.episode_ids}
            bm25 = [ids[j] for j in np.argsort(
                -np.asarray(index.get_scores(_TOKEN.findall(qa["q"].lower()))), kind="stable")]
            text, fair = _order(stages.text, turn_of), _order(stages.fair, turn_of)
            rows.append({
                "conversation": cid, "type": qa["type"], "question": qa["q"],
                "graphmem": score(ranked, qa["ev"]), "bm25": score(bm25, qa["ev"]),
                "turns_from_facts": len(from_facts - {None}),
                "top10_speakers": {"graphmem": [role[t] for t in ranked[:10]],
                                   "bm25": [role[t] for t in bm25[:10]]},
                "evidence": [
                    {"turn": t, "speaker": role[t], "words": words[t],
                     "graphmem": _rank(ranked, t), "bm25": _rank(bm25, t),
                     "full_text": _rank(text, t), "length_fair": _rank(fair, t),
                     "from_facts": t in from_facts}
                    for t in qa["ev"]
                ],
            })
        mem.close()
        shutil.rmtree(work, ignore_errors=True)
    return rows


def summary(rows: list[dict[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for qtype in sorted({r["type"] for r in rows}):
        mine = [r for r in rows if r["type"] == qtype]
        entry: dict[str, Any] = {"n": len(mine)}
        for method in ("graphmem", "bm25"):
            entry[method] = {m: round(float(np.mean([r[method][m] for r in mine])), 4)
                             for m in ("R@5", "R@10", "NDCG@10")}
            entry[method]["user_share_top10"] = round(float(np.mean(
                [s.count("user") / max(1, len(s))
                 for s in (r["top10_speakers"][method] for r in mine)])), 4)
        entry["turns_from_facts"] = round(float(np.mean([r["turns_from_facts"] for r in mine])), 2)
        entry["evidence_by_speaker"] = {}
        for who in ("user", "assistant"):
            ev = [e for r in mine for e in r["evidence"] if e["speaker"] == who]
            if not ev:
                continue

            def within(key: str, cut: int, ev: list[dict[str, Any]] = ev) -> float:
                return round(float(np.mean([(e[key] or 10**9) <= cut for e in ev])), 3)

            entry["evidence_by_speaker"][who] = {
                "turns": len(ev), "median_words": statistics.median(e["words"] for e in ev),
                "graphmem@10": within("graphmem", 10), "bm25@10": within("bm25", 10),
                "full_text@10": within("full_text", 10),
                "length_fair@10": within("length_fair", 10),
                "full_text@100": within("full_text", 100),
                "from_facts": round(float(np.mean([e["from_facts"] for e in ev])), 3),
            }
        out[qtype] = entry
    return out


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--types", nargs="+",
                        default=["summarization", "information_extraction"])
    parser.add_argument("--config", default="{}", help="RetrievalConfig overrides, JSON")
    parser.add_argument("--k", type=int, default=20)
    parser.add_argument(
        "--cache", type=Path, default=Path(tempfile.gettempdir()) / "graphmem-beam-cache"
    )
    parser.add_argument("--out", type=Path)
    args = parser.parse_args(argv)
    convs = load(args.data)["conversations"]
    args.cache.mkdir(parents=True, exist_ok=True)
    folder, _ = ingest_all(convs, make_embedder("hash"), args.cache, args.data)
    rows = analyse(convs, folder, json.loads(args.config), set(args.types), args.k)
    report = {"command": "python bench/beam_evidence_ranks.py " + " ".join(sys.argv[1:]),
              "config": json.loads(args.config), "summary": summary(rows), "questions": rows}
    print(json.dumps(report["summary"], indent=1))
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(report, indent=1) + "\n")


if __name__ == "__main__":
    main()
