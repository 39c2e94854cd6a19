"""LongMemEval (dev) and LoCoMo through genuine Neo4j and through SQLite, on the same data: are
the rankings identical, and what does each store cost?

    python bench/side_by_side.py --lme-questions 10 --locomo-conversations 1 \
        --out bench/results/side_by_side.json

Each dataset is ingested into a fresh SQLite file and into a private Neo4j server
(scripts/neo4j_server.py, ``--version``; or the server at ``--uri``, whose database is WIPED),
with the same embedder (hashed n-grams), the ``rules`` extractor and the default retrieval
configuration; then every question is recalled on both (``recall(k=20)``) and ranked by the
dataset's protocol (LongMemEval: sessions, ``lme.session_ranking``; LoCoMo: dialogue turns,
``locomo.dialog_ids``). Reported per dataset and store: ingest turns/s, recall p50/p95, the
protocol's metrics; and per question whether the two stores' top-10 rankings are identical,
with the first differing position of each question that is not (and both lists there), so each
difference can be explained. LongMemEval: the first ``--lme-questions`` evaluable questions of
the dev half (each its own group of ~500 turns); LoCoMo: the first ``--locomo-conversations``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "scripts"))

from bench import lme, locomo  # noqa: E402
from graphmem import GraphMemory  # noqa: E402

Ranker = Callable[[GraphMemory, dict[str, Any]], list[str]]


def latency(samples: list[float]) -> dict[str, float]:
    arr = np.asarray(samples) * 1000
    return {
        "p50_ms": round(float(np.percentile(arr, 50)), 1),
        "p95_ms": round(float(np.percentile(arr, 95)), 1),
    }


def lme_tasks(args: argparse.Namespace) -> tuple[list[list[dict[str, Any]]], list[dict[str, Any]]]:
    data = lme.load(lme.DEFAULT_DATA)
    qs = lme.evaluated(data, None)[: args.lme_questions]
    return [lme.haystack(data, q) for q in qs], [
        {
            "id": q["question_id"],
            "group": q["question_id"],
            "q": q["question"],
            "evidence": q["answer_session_ids"],
            "type": q["question_type"],
        }
        for q in qs
    ]


def locomo_tasks(
    args: argparse.Namespace,
) -> tuple[list[list[dict[str, Any]]], list[dict[str, Any]]]:
    samples = json.loads(locomo.DEFAULT_DATA.read_text())[: args.locomo_conversations]
    batches, questions = [], []
    for sample in samples:
        sid = sample["sample_id"]
        items = locomo.conversation_items(sample, True)
        for item in items:
            item["group_id"] = sid
        batches.append(items)
        known = {it["metadata"]["dia_id"] for it in items if "dia_id" in it["metadata"]}
        for n, qa in enumerate(locomo.questions(sample, known)):
            questions.append(
                {
                    "id": f"{sid}/{n}",
                    "group": sid,
                    "q": qa["q"],
                    "evidence": qa["ev"],
                    "type": qa["cat"],
                }
            )
    return batches, questions


def run_store(
    mem: GraphMemory,
    dataset: str,
    batches: list[list[dict[str, Any]]],
    questions: list[dict[str, Any]],
) -> dict[str, Any]:
    mem.connect()
    turns = sum(len(b) for b in batches)
    t0 = time.perf_counter()
    for batch in batches:
        mem.add_episodes(batch, on_invalid="skip")
    ingest_s = time.perf_counter() - t0
    dia_of: dict[str, dict[str, str]] = {}
    if dataset == "locomo":
        for group in {q["group"] for q in questions}:
            dia_of[group] = {
                r["id"]: r["metadata"]["dia_id"]
                for r in mem.export(group_id=group)
                if r.get("type") == "episode" and "dia_id" in (r.get("metadata") or {})
            }
    times: list[float] = []
    rankings: dict[str, list[str]] = {}
    metrics: list[dict[str, float]] = []
    for q in questions:
        t1 = time.perf_counter()
        if dataset == "lme":
            result = mem.recall(q["q"], group_id=q["group"], k=20)
            times.append(time.perf_counter() - t1)
            ranked = lme.session_ranking(result)
            metrics.append(lme.score(ranked, q["evidence"]))
        else:
            result = mem.recall(q["q"], group_id=q["group"], k=20, hops=2)
            times.append(time.perf_counter() - t1)
            ranked = locomo.dialog_ids(result, dia_of[q["group"]])
            metrics.append(locomo.score(ranked, q["evidence"]))
        rankings[q["id"]] = ranked[:10]
    mem.close()
    keys = metrics[0].keys() if metrics else []
    return {
        "turns": turns,
        "ingest_s": round(ingest_s, 1),
        "ingest_turns_per_s": round(turns / ingest_s, 1),
        "recall": latency(times),
        "metrics": {k: round(float(np.mean([m[k] for m in metrics])), 4) for k in keys},
        "rankings": rankings,
    }


def compare(a: dict[str, list[str]], b: dict[str, list[str]]) -> dict[str, Any]:
    differ = []
    for qid, left in a.items():
        right = b.get(qid, [])
        if left != right:
            at = next(
                (i for i, (x, y) in enumerate(zip(left, right, strict=False)) if x != y),
                min(len(left), len(right)),
            )
            differ.append(
                {
                    "question": qid,
                    "first_difference_at": at,
                    "same_set": sorted(left) == sorted(right),
                    "sqlite": left,
                    "neo4j": right,
                }
            )
    return {"questions": len(a), "identical_top10": len(a) - len(differ), "differ": differ}


def main() -> int:
    p = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    p.add_argument("--lme-questions", type=int, default=10)
    p.add_argument("--locomo-conversations", type=int, default=1)
    p.add_argument("--version", default="5.26.30")
    p.add_argument("--uri", default=None, help="a Neo4j server to use (its database is WIPED)")
    p.add_argument("--heap", default="2g")
    p.add_argument("--out", type=Path, default=REPO / "bench/results/side_by_side.json")
    args = p.parse_args()

    import neo4j_server

    from graphmem.store.neo4j import Neo4jStore

    embedder = locomo.make_embedder("hash")
    private: Path | None = None
    if args.uri:
        uri, auth = args.uri, {}
    else:
        private = Path(tempfile.mkdtemp(prefix="gm-sbs-"))
        info = neo4j_server.start_server(
            private, bolt_port=0, http_port=0, version=args.version, heap=args.heap, timeout=900
        )
        uri, auth = info.bolt_uri, {"username": info.user, "password": info.password}
    report: dict[str, Any] = {
        "command": "python " + " ".join([Path(sys.argv[0]).as_posix(), *sys.argv[1:]]),
        "load_avg_start": [round(x, 1) for x in os.getloadavg()],
        "datasets": {},
    }
    try:
        for dataset, make in (("lme", lme_tasks), ("locomo", locomo_tasks)):
            if (dataset == "lme" and args.lme_questions <= 0) or (
                dataset == "locomo" and args.locomo_conversations <= 0
            ):
                continue
            batches, questions = make(args)
            out: dict[str, Any] = {"questions": len(questions)}
            with tempfile.TemporaryDirectory() as tmp:
                print(f"== {dataset} sqlite", flush=True)
                out["sqlite"] = run_store(
                    GraphMemory(f"{tmp}/{dataset}.db", embedder=embedder, extractor="rules"),
                    dataset,
                    batches,
                    questions,
                )
            store = Neo4jStore(uri, **auth)
            store.connect()
            store.wipe_all_for_tests()
            print(f"== {dataset} neo4j", flush=True)
            out["neo4j"] = run_store(
                GraphMemory(store, embedder=embedder, extractor="rules"),
                dataset,
                batches,
                questions,
            )
            out["neo4j"]["server"] = store._bolt._agent
            out["comparison"] = compare(out["sqlite"]["rankings"], out["neo4j"]["rankings"])
            for kind in ("sqlite", "neo4j"):
                out[kind].pop("rankings")
            c = out["comparison"]
            print(
                f"{dataset}: {c['identical_top10']}/{c['questions']} identical top-10", flush=True
            )
            report["datasets"][dataset] = out
    finally:
        if private is not None:
            neo4j_server.stop_server(private, kill=True)
    report["load_avg_end"] = [round(x, 1) for x in os.getloadavg()]
    args.out.write_text(json.dumps(report, indent=2) + "\n")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
