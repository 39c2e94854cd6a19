"""One group's vector search beside other groups: Neo4j 2026.x's in-index filter vs Neo4j 5.26's
path vs SQLite, on the same vectors and the same queries, in one run.

    python bench/filtered_vectors.py --out bench/results/filtered_vectors.json

What is measured: ``store.vector_facts(target_group, query, k)`` (the search recall runs on a
group's facts; episodes and entities go through the same code) where the target group holds
``--target`` embedded facts (20,000: above ``SCAN_MAX`` = 5,000, so the Neo4j store does not scan
it exactly) and ``--others`` other groups hold ``--other-size`` each. Paths:

- ``neo4j-2026``: Neo4j 2026.x (``--new-version``, on a JDK >= 21) ``SEARCH f IN (VECTOR INDEX
  … WHERE f.group_id = $group_id LIMIT c)``: filtered inside the HNSW index (Cypher 25), asked
  for c = max(4k, 64) candidates and cut to k (``search.filtered_candidates``); the same queries
  with c = k are reported as ``target_candidates_k``;
- ``neo4j-5.26``: Neo4j 5.26 LTS: ``db.index.vector.queryNodes`` over the whole-store index,
  asked for 4k, then 8x more candidates until k are in the group (``search/vector``);
- ``sqlite``: the SQLite store's exact top-k over the group's decoded matrix.

Data (deterministic from ``--seed``): ``--dim``-dimensional unit vectors, each a shared centroid
(one of 64, the same for every group, so other groups' vectors are as near to a query as the
target's) plus noise; queries are target vectors with more noise. Quality: recall@k against the
exact top-k over the stored (int8-rounded, ``_vectors.quantize``) vectors of the target group,
computed here with numpy. Latency: ``--queries`` queries after ``--warmup`` warm-up ones, each
store in turn (servers run one at a time: each Neo4j is a private server started by
scripts/neo4j_server.py on a temporary dir, loaded, measured and stopped). A small group (one
of the others) is also measured, for the exact-scan path every store uses below SCAN_MAX.
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
import numpy.typing as npt

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "scripts"))

from bench._common import percentiles  # noqa: E402
from graphmem.store import open_store  # noqa: E402
from graphmem.store._base import EntityRow, FactRow, WritePlan  # noqa: E402
from graphmem.store._vectors import quantize  # noqa: E402

TARGET = "target"
T0 = 1_700_000_000_000


def unit_rows(
    rng: np.random.Generator, centroids: npt.NDArray[np.float32], n: int, noise: float
) -> npt.NDArray[np.float32]:
    picks = rng.integers(0, len(centroids), size=n)
    rows = centroids[picks] + noise * rng.standard_normal((n, centroids.shape[1]))
    rows /= np.linalg.norm(rows, axis=1, keepdims=True)
    return rows.astype(np.float32)


def make_data(args: argparse.Namespace) -> dict[str, Any]:
    rng = np.random.default_rng(args.seed)
    centroids = rng.standard_normal((64, args.dim)).astype(np.float32)
    centroids /= np.linalg.norm(centroids, axis=1, keepdims=True)
    groups = {TARGET: unit_rows(rng, centroids, args.target, 0.6 / np.sqrt(args.dim))}
    for g in range(args.others):
        groups[f"other{g:02d}"] = unit_rows(
            rng, centroids, args.other_size, 0.6 / np.sqrt(args.dim)
        )
    picks = rng.integers(0, args.target, size=args.warmup + args.queries)
    queries = groups[TARGET][picks] + 0.3 / np.sqrt(args.dim) * rng.standard_normal(
        (len(picks), args.dim)
    )
    queries /= np.linalg.norm(queries, axis=1, keepdims=True)
    return {"groups": groups, "queries": queries.astype(np.float32)}


def exact_top(
    stored: npt.NDArray[np.float32], ids: list[str], query: npt.NDArray[np.float32], k: int
) -> list[str]:
    norms = np.linalg.norm(stored, axis=1)
    scores = (stored @ query) / np.where(norms == 0, 1, norms)
    order = np.argsort(-scores, kind="stable")[:k]
    return [ids[i] for i in order]


def load(store: Any, groups: dict[str, npt.NDArray[np.float32]], batch: int) -> float:
    """Every group's facts (one subject entity per group), interleaved by batch."""
    t0 = time.perf_counter()
    pending: list[tuple[str, int, int]] = []
    for group, rows in groups.items():
        for start in range(0, len(rows), batch):
            pending.append((group, start, min(start + batch, len(rows))))
    pending.sort(key=lambda p: (p[1], p[0]))  # round-robin over the groups
    subjects_done: set[str] = set()
    for group, start, stop in pending:
        rows = groups[group]
        subject = f"{group}-subject"
        entities = []
        if group not in subjects_done:
            entities = [
                EntityRow(id=subject, group_id=group, name=subject, key=subject, type="thing")
            ]
            subjects_done.add(group)
        facts = [
            FactRow(
                id=f"{group}-fact-{i}",
                group_id=group,
                subject_id=subject,
                predicate="says",
                object_id=None,
                value_json=json.dumps(i),
                statement=f"{group} fact {i}",
                valid_from=T0,
                valid_to=None,
                recorded_at=T0 + i,
                embedding=rows[i],
            )
            for i in range(start, stop)
        ]
        store.write(lambda _, e=entities, f=facts: WritePlan(entities_new=e, facts_new=f))
    return time.perf_counter() - t0


def measure(
    store: Any, data: dict[str, Any], args: argparse.Namespace, truth: dict[str, list[list[str]]]
) -> dict[str, Any]:
    queries = data["queries"]
    out: dict[str, Any] = {}
    for group in (TARGET, "other00"):
        if group not in data["groups"]:
            continue
        for q in queries[: args.warmup]:
            store.vector_facts(group, q, args.k)
        times: list[float] = []
        recalls: list[float] = []
        for i, q in enumerate(queries[args.warmup :]):
            t0 = time.perf_counter()
            hits = store.vector_facts(group, q, args.k)
            times.append(time.perf_counter() - t0)  # seconds: percentiles() gives ms
            want = truth[group][i]
            recalls.append(len({h for h, _ in hits} & set(want)) / len(want))
        out[group] = {
            "latency_ms": percentiles(times),
            "recall_at_k": round(float(np.mean(recalls)), 4),
            "recall_min": round(float(np.min(recalls)), 4),
        }
    return out


def count_reads(store: Any) -> Callable[[], dict[str, int]]:
    search = getattr(store, "_search", None)
    names: dict[str, int] = {}
    if search is None:
        return lambda: names
    real = search._read

    def counting(name: str, /, **params: Any) -> Any:
        names[name] = names.get(name, 0) + 1
        return real(name, **params)

    search._read = counting
    return lambda: dict(names)


def run_neo4j(
    version: str, data: dict[str, Any], args: argparse.Namespace, truth: dict[str, list[list[str]]]
) -> dict[str, Any]:
    import neo4j_server

    from graphmem.store.neo4j import Neo4jStore

    where = Path(tempfile.mkdtemp(prefix=f"gm-fv-{version}-"))
    info = neo4j_server.start_server(
        where,
        bolt_port=0,
        http_port=0,
        version=version,
        heap=args.heap,
        pagecache=args.pagecache,
        timeout=900,  # a shared 2-core machine: minutes under load
    )
    try:
        store = Neo4jStore(info.bolt_uri, username=info.user, password=info.password)
        store.connect()
        store.migrate()
        store.set_meta("embedder", json.dumps({"name": "bench", "dim": args.dim}))
        ingest_s = load(store, data["groups"], args.batch)
        t0 = time.perf_counter()
        store.driver.execute_query("CALL db.awaitIndexes(600)")
        await_s = time.perf_counter() - t0
        reads = count_reads(store)
        result = measure(store, data, args, truth)
        dialect = store._bolt.dialect
        if dialect.filtered_vectors:
            # the same queries with the index asked for k alone (no oversampling)
            from graphmem.store.neo4j import search as search_module

            saved = search_module.FILTERED_FACTOR, search_module.FILTERED_MIN
            search_module.FILTERED_FACTOR, search_module.FILTERED_MIN = 1, 0
            try:
                alone = measure(store, data, args, truth)
            finally:
                search_module.FILTERED_FACTOR, search_module.FILTERED_MIN = saved
            result["target_candidates_k"] = alone[TARGET]
        store.close()
        return {
            "server": f"Neo4j {version}",
            "agent": store._bolt._agent,
            "filtered_vectors": dialect.filtered_vectors,
            "startup_s": info.startup_seconds,
            "ingest_s": round(ingest_s, 1),
            "ingest_vectors_per_s": round(
                sum(len(v) for v in data["groups"].values()) / ingest_s, 1
            ),
            "await_indexes_s": round(await_s, 2),
            "reads": reads(),
            **result,
        }
    finally:
        neo4j_server.stop_server(where, kill=True)


def run_sqlite(
    data: dict[str, Any], args: argparse.Namespace, truth: dict[str, list[list[str]]]
) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        store = open_store(f"{tmp}/fv.db")
        store.connect()
        store.migrate()
        store.set_meta("embedder", json.dumps({"name": "bench", "dim": args.dim}))
        ingest_s = load(store, data["groups"], args.batch)
        result = measure(store, data, args, truth)
        store.close()
    return {
        "server": "SQLite",
        "ingest_s": round(ingest_s, 1),
        "ingest_vectors_per_s": round(sum(len(v) for v in data["groups"].values()) / ingest_s, 1),
        **result,
    }


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--target", type=int, default=20_000)
    p.add_argument("--others", type=int, default=39)
    p.add_argument("--other-size", type=int, default=500)
    p.add_argument("--dim", type=int, default=384)
    p.add_argument("--k", type=int, default=10)
    p.add_argument("--queries", type=int, default=100)
    p.add_argument("--warmup", type=int, default=10)
    p.add_argument("--batch", type=int, default=1000)
    p.add_argument("--seed", type=int, default=11)
    p.add_argument("--old-version", default="5.26.30")
    p.add_argument("--new-version", default="2026.08.1")
    p.add_argument("--heap", default="2g")
    p.add_argument("--pagecache", default="1g")
    p.add_argument("--stores", default="sqlite,neo4j-5.26,neo4j-2026")
    p.add_argument("--out", type=Path, default=REPO / "bench/results/filtered_vectors.json")
    args = p.parse_args()

    data = make_data(args)
    truth: dict[str, list[list[str]]] = {}
    for group in (TARGET, "other00"):
        if group not in data["groups"]:
            continue
        rows = data["groups"][group]
        stored = np.stack([quantize(r) for r in rows])
        ids = [f"{group}-fact-{i}" for i in range(len(rows))]
        truth[group] = [exact_top(stored, ids, q, args.k) for q in data["queries"][args.warmup :]]

    results: dict[str, Any] = {}
    load_before = os.getloadavg()
    for name in args.stores.split(","):
        began = os.getloadavg()
        print(f"== {name}", flush=True)
        if name == "sqlite":
            results[name] = run_sqlite(data, args, truth)
        elif name == "neo4j-5.26":
            results[name] = run_neo4j(args.old_version, data, args, truth)
        elif name == "neo4j-2026":
            results[name] = run_neo4j(args.new_version, data, args, truth)
        else:
            raise SystemExit(f"unknown store {name}")
        results[name]["load_before_after"] = [round(began[0], 1), round(os.getloadavg()[0], 1)]
        print(json.dumps(results[name], indent=1), flush=True)
    report = {
        "command": "python " + " ".join([Path(sys.argv[0]).as_posix(), *sys.argv[1:]]),
        "params": {k: (str(v) if isinstance(v, Path) else v) for k, v in vars(args).items()},
        "vectors_total": int(sum(len(v) for v in data["groups"].values())),
        "load_avg_start": [round(x, 1) for x in load_before],
        "results": results,
    }
    args.out.write_text(json.dumps(report, indent=2) + "\n")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
