"""Ingest throughput and recall latency of the Neo4j store over Bolt, next to SQLite and next to a
full-scan ``vector.similarity.cosine`` query on the same server (Graphiti's approach).

    python bench/perf_bolt.py --sizes 10000 --queries 200 --out bench/results/perf_bolt.json

By default a private ArcadeDB Bolt server is started on a temporary data dir and free loopback
ports (``scripts/bolt_server.py``; ``pip install arcadedb-embedded==26.10.2.post1``) and stopped
afterwards; ``--uri`` (with ``NEO4J_USERNAME``/``NEO4J_PASSWORD``) measures an existing server
instead (its database is WIPED between sizes).

Workload: the ``perf_sqlite.py`` one. Structured robot episodes (10 facts each) through the bulk
path (``add_episodes``: one write transaction per chunk), vectors precomputed (a lookup), so the
figures measure graphmem and the store. Recall = vector top-k (index) + full-text + name match +
2-hop expansion + fusion + formatting, query embedding excluded; percentiles over ``--queries``
recalls after 12 warm-up calls. The vector comparison runs the store's indexed query
(``db.index.vector.queryNodes`` via ``vector_facts``) and the full scan
``MATCH (f:Fact) WHERE f.group_id = $g ... vector.similarity.cosine(...) ORDER BY ... LIMIT k``
for the same query vectors, and reports both, their ratio, and how many of the exact top 10 the
index found (recall@10).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "scripts"))

from bench._common import QUERIES, PrecomputedEmbedder, percentiles, robot_records, rss_mb
from graphmem import GraphMemory

# Graphiti's approach: a full scan computing the cosine against every fact of the group. Bench
# code only; the store never runs this.
FULL_SCAN = (
    "MATCH (f:Fact) WHERE f.group_id = $group_id AND f.embedding IS NOT NULL "
    "WITH f, vector.similarity.cosine(f.embedding, $vector) AS score "
    "ORDER BY score DESC LIMIT $k RETURN f.id AS id, score"
)


def ingest(mem: GraphMemory, size: int, batch: int) -> tuple[int, float]:
    episodes = size // 10
    start = time.perf_counter()
    facts = 0
    for offset in range(0, episodes, batch):
        results = mem.add_episodes(robot_records(min(batch, episodes - offset), start=offset))
        facts += sum(r.facts_added for r in results)
    return facts, time.perf_counter() - start


def recall_latency(mem: GraphMemory, queries: int, episodes: int) -> dict[str, float]:
    for q in QUERIES[:4] * 3:
        mem.recall(q, k=10)
    samples: list[float] = []
    for i in range(queries):
        query = QUERIES[i % len(QUERIES)].replace("4242", str(i * 37 % max(episodes, 1)))
        t0 = time.perf_counter()
        mem.recall(query, k=10)
        samples.append(time.perf_counter() - t0)
    return percentiles(samples)


def vector_comparison(
    mem: GraphMemory, embedder: PrecomputedEmbedder, queries: int
) -> dict[str, Any]:
    store: Any = mem.store
    # Neo4j's vector.similarity.cosine is (1 + cos) / 2; ArcadeDB's is the cosine itself.
    to_cosine = (lambda s: 2.0 * s - 1.0) if store.dialect.name == "neo4j" else (lambda s: s)
    vectors = embedder.embed([f"probe query {i}" for i in range(queries)])
    indexed: list[float] = []
    scanned: list[float] = []
    found: list[float] = []
    for warm in vectors[:5]:
        store.vector_facts("default", warm, 10)
    for vector in vectors:
        t0 = time.perf_counter()
        hits = store.vector_facts("default", vector, 10)
        indexed.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        records, _, _ = store.driver.execute_query(
            FULL_SCAN,
            parameters_={"group_id": "default", "vector": [float(x) for x in vector], "k": 10},
            database_=store._database,
        )
        scanned.append(time.perf_counter() - t0)
        # Recall@10 by score, not id: the precomputed vectors repeat (a 4,096-vector pool), so
        # many facts tie and any of the tied ids is a right answer.
        exact = sorted((to_cosine(float(r["score"])) for r in records), reverse=True)
        if exact:
            cutoff = exact[min(9, len(exact) - 1)] - 1e-4
            found.append(sum(1 for _, score in hits if score >= cutoff) / len(exact))
    index = percentiles(indexed)
    scan = percentiles(scanned)
    return {
        "index_queryNodes": index,
        "full_scan_cosine": scan,
        "full_scan_over_index_p50": round(scan["p50_ms"] / max(index["p50_ms"], 1e-9), 1),
        "full_scan_over_index_p95": round(scan["p95_ms"] / max(index["p95_ms"], 1e-9), 1),
        "index_recall_at_10": round(sum(found) / max(len(found), 1), 3),
    }


def run_bolt(
    uri: str, size: int, queries: int, batch: int, extra: dict[str, Any]
) -> dict[str, Any]:
    from graphmem.store.neo4j import Neo4jStore

    embedder = PrecomputedEmbedder()
    store = Neo4jStore(uri, **extra)
    mem = GraphMemory(store, embedder=embedder)
    mem.connect()
    store.wipe_all_for_tests()
    mem.close()
    store = Neo4jStore(uri, **extra)
    mem = GraphMemory(store, embedder=embedder)
    mem.connect()
    facts, seconds = ingest(mem, size, batch)
    result: dict[str, Any] = {
        "facts": facts,
        "episodes": size // 10,
        "ingest_seconds": round(seconds, 2),
        "ingest_facts_per_s": round(facts / seconds),
        "recall": recall_latency(mem, queries, size // 10),
        "vector_search": vector_comparison(mem, embedder, queries),
        "entities": mem.stats()["entities"],
        "server": store.server_agent,
        "client_peak_rss_mb": rss_mb(),
    }
    mem.close()
    return result


def run_sqlite(size: int, queries: int, batch: int, workdir: Path) -> dict[str, Any]:
    path = workdir / f"perf_bolt_sqlite_{size}.db"
    for suffix in ("", "-wal", "-shm"):
        Path(f"{path}{suffix}").unlink(missing_ok=True)
    mem = GraphMemory(path, embedder=PrecomputedEmbedder())
    facts, seconds = ingest(mem, size, batch)
    result = {
        "facts": facts,
        "ingest_seconds": round(seconds, 2),
        "ingest_facts_per_s": round(facts / seconds),
        "recall": recall_latency(mem, queries, size // 10),
    }
    mem.close()
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000])
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--batch", type=int, default=2000, help="episodes per add_episodes call")
    parser.add_argument("--uri", help="an existing Bolt server (default: a private ArcadeDB)")
    parser.add_argument("--heap", default="4g", help="JVM heap of the private ArcadeDB server")
    parser.add_argument("--no-sqlite", action="store_true", help="skip the SQLite figures")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    workdir = Path(tempfile.mkdtemp(prefix="graphmem-bench-bolt-"))
    report: dict[str, Any] = {"results": {}}
    if args.out and args.out.exists():  # other sizes measured by earlier runs are kept
        report = json.loads(args.out.read_text())
    report.update(
        {
            "machine": f"{platform.machine()}, {os.cpu_count()} cores, Python "
            f"{platform.python_version()}",
            "note": "client and server share the machine; vectors precomputed "
            "(PrecomputedEmbedder, 384 dims); recall excludes query embedding; each size "
            "records the command that measured it",
        }
    )
    command = " ".join(["python", *sys.argv])
    server = None
    extra: dict[str, Any] = {"max_retry_time": 30}
    uri = args.uri
    if uri is None:
        import bolt_server

        t0 = time.perf_counter()
        server = bolt_server.start_server(workdir / "bolt", bolt_port=0, heap=args.heap)
        report["server"] = (
            f"private ArcadeDB (arcadedb-embedded 26.10.2.post1), heap {args.heap}, "
            f"started in {time.perf_counter() - t0:.1f} s"
        )
        uri = server.bolt_uri
        extra.update(
            username=server.user,
            password=server.password,
            database=server.database,
            http_url=server.http_url,
        )
    try:
        for size in args.sizes:
            started = time.perf_counter()
            entry: dict[str, Any] = {
                "command": command,
                "bolt": run_bolt(uri, size, args.queries, args.batch, extra),
            }
            if not args.no_sqlite:
                entry["sqlite"] = run_sqlite(size, args.queries, args.batch, workdir)
                entry["bolt_over_sqlite"] = {
                    "ingest_time": round(
                        entry["bolt"]["ingest_seconds"] / entry["sqlite"]["ingest_seconds"], 1
                    ),
                    "recall_p50": round(
                        entry["bolt"]["recall"]["p50_ms"] / entry["sqlite"]["recall"]["p50_ms"], 1
                    ),
                }
            entry["run_seconds"] = round(time.perf_counter() - started)
            report["results"][str(size)] = entry
            print(json.dumps({str(size): entry}), flush=True)
            if args.out:  # keep what is done if a later size runs out of time
                args.out.parent.mkdir(parents=True, exist_ok=True)
                args.out.write_text(json.dumps(report, indent=2) + "\n")
    finally:
        if server is not None:
            import bolt_server

            bolt_server.stop_server(server.dir)


if __name__ == "__main__":
    main()
