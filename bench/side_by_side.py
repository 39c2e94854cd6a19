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
with the first differing position of each question that is not (and both lists there) and its
cause: every full-text and vector search recall made is recorded on both stores, and the first
of these that holds names it: the full-text candidate sets differ (in their top 10, or only
below it, where the limit cuts near-equal scores), the same full-text candidates come in
another order, the vector candidates differ, the full-text scores relative to the best differ
in the same order, or every candidate list is the same (then a later stage). ``comparison.causes``
counts them. LongMemEval: the first ``--lme-questions`` evaluable questions of
the dev half (each its own group of ~500 turns); LoCoMo: the first ``--locomo-conversations``.
``--keep-other`` keeps the datasets of ``--out`` that a run leaves out (each records its command).
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


SEARCHES = (
    "text_facts",
    "text_entities",
    "text_episodes",
    "vector_facts",
    "vector_entities",
    "vector_episodes",
)


class SearchLog:
    """What each of the store's searches answered while one question was recalled: the
    candidate lists recall fused, so that a ranking difference can be traced to its half."""

    def __init__(self, store: Any) -> None:
        self.current: str | None = None
        self.calls: dict[str, list[tuple[str, list[tuple[str, float]]]]] = {}
        for name in SEARCHES:
            setattr(store, name, self._wrap(name, getattr(store, name)))

    def _wrap(self, name: str, search: Callable[..., Any]) -> Callable[..., Any]:
        def recorded(*args: Any, **kwargs: Any) -> Any:
            hits = search(*args, **kwargs)
            if self.current is not None:
                self.calls.setdefault(self.current, []).append(
                    (name, [(str(i), float(s)) for i, s in hits])
                )
            return hits

        return recorded


def _by_search(
    calls: list[tuple[str, list[tuple[str, float]]]],
) -> dict[str, list[tuple[str, float]]]:
    return {name: hits for name, hits in sorted(calls, key=lambda c: c[0])}


def _relative(hits: list[tuple[str, float]]) -> dict[str, float]:
    best = max((abs(s) for _, s in hits), default=0.0) or 1.0
    return {i: s / best for i, s in hits}


def cause(
    left: list[tuple[str, list[tuple[str, float]]]],
    right: list[tuple[str, list[tuple[str, float]]]],
) -> tuple[str, dict[str, Any]]:
    """Why two stores ranked a question differently, from the candidate lists recall got:
    the first of these that holds (searches named in the detail)."""
    a, b = _by_search(left), _by_search(right)
    names = sorted(set(a) | set(b))

    def differing(
        kind: str, test: Callable[[list[tuple[str, float]], list[tuple[str, float]]], bool]
    ) -> list[str]:
        return [n for n in names if n.startswith(kind) and test(a.get(n, []), b.get(n, []))]

    def ids(h: list[tuple[str, float]]) -> list[str]:
        return [i for i, _ in h]

    def scores_differ(x: list[tuple[str, float]], y: list[tuple[str, float]]) -> bool:
        rx, ry = _relative(x), _relative(y)
        return any(abs(rx[i] - ry.get(i, 0.0)) > 1e-3 for i in rx)

    text_sets = differing("text", lambda x, y: set(ids(x)) != set(ids(y)))
    text_order = differing("text", lambda x, y: ids(x) != ids(y))
    vector = differing("vector", lambda x, y: ids(x) != ids(y) or scores_differ(x, y))
    text_scores = differing("text", scores_differ)
    if text_sets:
        # Where the lists first hold an id the other lacks: below the top 10 of both, the
        # difference is only which of near-equal scores made the limit's cut.
        first = min(
            (
                rank
                for n in text_sets
                for mine, other in ((a.get(n, []), b.get(n, [])), (b.get(n, []), a.get(n, [])))
                for rank, i in enumerate(ids(mine))
                if i not in set(ids(other))
            ),
            default=0,
        )
        where = "in the top 10" if first < 10 else "below rank 10 (the limit's cut)"
        detail = {
            n: {
                "sqlite_only": sorted(set(ids(a.get(n, []))) - set(ids(b.get(n, []))))[:5],
                "neo4j_only": sorted(set(ids(b.get(n, []))) - set(ids(a.get(n, []))))[:5],
                "sizes": [len(a.get(n, [])), len(b.get(n, []))],
            }
            for n in text_sets
        }
        return f"full-text candidates differ {where}", {
            "first_missing_rank": first,
            "searches": text_sets,
            "vector_too": vector,
            **detail,
        }
    if text_order:
        return "full-text order differs (same candidates)", {
            "searches": text_order,
            "vector_too": vector,
        }
    if vector:
        return "vector candidates differ", {
            n: {
                "same_ids": set(ids(a.get(n, []))) == set(ids(b.get(n, []))),
                "same_order": ids(a.get(n, [])) == ids(b.get(n, [])),
                "max_score_diff": max(
                    (
                        abs(s - dict(b.get(n, [])).get(i, 0.0))
                        for i, s in a.get(n, [])
                        if i in dict(b.get(n, []))
                    ),
                    default=0.0,
                ),
                "first_order_difference": next(
                    (
                        [k, x, y]
                        for k, (x, y) in enumerate(zip(a.get(n, []), b.get(n, []), strict=False))
                        if x[0] != y[0]
                    ),
                    None,
                ),
            }
            for n in vector
        }
    if text_scores:
        return "full-text relative scores differ (same order)", {"searches": text_scores}
    return "same candidates (later stages)", {}


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
    log = SearchLog(mem.store)
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
        log.current = q["id"]
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
    log.current = None
    mem.close()
    keys = metrics[0].keys() if metrics else []
    return {
        "turns": turns,
        "ingest_s": round(ingest_s, 1),
        "ingest_turns_per_s": round(turns / ingest_s, 1),
        "recall": latency(times),
        "metrics": {k: round(float(np.mean([m[k] for m in metrics])), 4) for k in keys},
        "rankings": rankings,
        "searches": log.calls,
    }


def compare(sqlite: dict[str, Any], neo4j: dict[str, Any]) -> dict[str, Any]:
    """Each question whose top 10 differ, with its first differing rank, both lists and the
    cause (``cause``); and the count of each cause."""
    a: dict[str, list[str]] = sqlite["rankings"]
    b: dict[str, list[str]] = neo4j["rankings"]
    differ = []
    causes: dict[str, int] = {}
    for qid, left in a.items():
        right = b.get(qid, [])
        if left != right:
            why, detail = cause(sqlite["searches"].get(qid, []), neo4j["searches"].get(qid, []))
            causes[why] = causes.get(why, 0) + 1
            at = next(
                (i for i, (x, y) in enumerate(zip(left, right, strict=False)) if x != y),
                min(len(left), len(right)),
            )
            differ.append(
                {
                    "question": qid,
                    "first_difference_at": at,
                    "same_set": sorted(left) == sorted(right),
                    "cause": why,
                    "cause_detail": detail,
                    "sqlite": left,
                    "neo4j": right,
                }
            )
    return {
        "questions": len(a),
        "identical_top10": len(a) - len(differ),
        "same_set_other_order": sum(1 for d in differ if d["same_set"]),
        "causes": dict(sorted(causes.items(), key=lambda kv: -kv[1])),
        "differ": differ,
    }


def main() -> int:
    p = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    p.add_argument("--lme-questions", type=int, default=10)
    p.add_argument("--locomo-conversations", type=int, default=1)
    p.add_argument("--version", default="5.26.30")
    p.add_argument("--uri", default=None, help="a Neo4j server to use (its database is WIPED)")
    p.add_argument("--heap", default="2g")
    p.add_argument(
        "--stable-plans",
        action="store_true",
        help="the private server keeps each query's first plan (default: Neo4j's replanning)",
    )
    p.add_argument("--out", type=Path, default=REPO / "bench/results/side_by_side.json")
    p.add_argument(
        "--keep-other",
        action="store_true",
        help="keep the datasets of --out that this run leaves out (each has its command)",
    )
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
            private,
            bolt_port=0,
            http_port=0,
            version=args.version,
            heap=args.heap,
            timeout=900,
            stable_plans=args.stable_plans,
        )
        uri, auth = info.bolt_uri, {"username": info.user, "password": info.password}
    report: dict[str, Any] = {
        "command": "python " + " ".join([Path(sys.argv[0]).as_posix(), *sys.argv[1:]]),
        "load_avg_start": [round(x, 1) for x in os.getloadavg()],
        "neo4j_server": (
            "the server at --uri (its settings as started)"
            if args.uri
            else "private, "
            + ("stable plans" if args.stable_plans else "Neo4j's default replanning")
        ),
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
            # The schema stays (a fresh server gets it from the first migration): changing it
            # makes Neo4j plan every query again, which the ingest would pay for.
            store.wipe_all_for_tests(keep_schema=True)
            print(f"== {dataset} neo4j", flush=True)
            out["neo4j"] = run_store(
                GraphMemory(store, embedder=embedder, extractor="rules"),
                dataset,
                batches,
                questions,
            )
            out["neo4j"]["server"] = store._bolt._agent
            out["comparison"] = compare(out["sqlite"], out["neo4j"])
            for kind in ("sqlite", "neo4j"):
                out[kind].pop("rankings")
                out[kind].pop("searches")
            out["command"] = report["command"]
            out["load_avg_end"] = [round(x, 1) for x in os.getloadavg()]
            c = out["comparison"]
            print(
                f"{dataset}: {c['identical_top10']}/{c['questions']} identical top-10, "
                f"causes {c['causes']}",
                flush=True,
            )
            report["datasets"][dataset] = out
    finally:
        if private is not None:
            neo4j_server.stop_server(private, kill=True)
    report["load_avg_end"] = [round(x, 1) for x in os.getloadavg()]
    if args.keep_other and args.out.exists():
        # A dataset not run this time keeps its earlier figures (each says its own command).
        earlier = json.loads(args.out.read_text()).get("datasets", {})
        report["datasets"] = {**earlier, **report["datasets"]}
    args.out.write_text(json.dumps(report, indent=2) + "\n")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
