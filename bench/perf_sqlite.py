"""Ingest throughput and recall latency of the embedded SQLite store at growing sizes.

    python bench/perf_sqlite.py --sizes 10000 100000 --queries 200 \
        --out bench/results/perf_sqlite.json

Vectors are precomputed (a lookup, see ``PrecomputedEmbedder``), so the figures measure graphmem
itself: ``add_episodes`` bulk path (structured robot episodes, 10 facts each) and ``recall``
(vector top-k + FTS5 + name match + 2-hop expansion + fusion + formatting), query embedding
excluded. Latencies are percentiles over ``--queries`` recalls after 10 warm-up calls.
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

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench._common import QUERIES, PrecomputedEmbedder, percentiles, robot_records, rss_mb
from graphmem import GraphMemory


def run(size: int, queries: int, workdir: Path, batch: int = 2000) -> dict[str, object]:
    path = workdir / f"perf_{size}.db"
    for suffix in ("", "-wal", "-shm"):
        Path(f"{path}{suffix}").unlink(missing_ok=True)
    mem = GraphMemory(path, embedder=PrecomputedEmbedder())
    episodes = size // 10
    start = time.perf_counter()
    facts = 0
    for offset in range(0, episodes, batch):
        results = mem.add_episodes(robot_records(min(batch, episodes - offset), start=offset))
        facts += sum(r.facts_added for r in results)
    ingest_s = time.perf_counter() - start
    for q in QUERIES[:4] * 3:  # warm caches (vector matrix load, page cache)
        mem.recall(q, k=10)
    samples: list[float] = []
    filtered: list[float] = []
    for i in range(queries):
        query = QUERIES[i % len(QUERIES)].replace("4242", str(i * 37 % max(episodes, 1)))
        t0 = time.perf_counter()
        mem.recall(query, k=10)
        samples.append(time.perf_counter() - t0)
    for i in range(max(queries // 4, 10)):
        t0 = time.perf_counter()
        mem.recall(QUERIES[i % len(QUERIES)], k=10,
                   filters={"success": True, "params.force_peak": {"$lt": 13}})
        filtered.append(time.perf_counter() - t0)
    stats = mem.stats()
    mem.close()
    return {
        "facts": facts,
        "episodes": episodes,
        "ingest_seconds": round(ingest_s, 2),
        "ingest_facts_per_s": round(facts / ingest_s),
        "recall": percentiles(samples),
        "recall_with_filters": percentiles(filtered),
        "db_mb": round(os.path.getsize(path) / 2**20, 1),
        "peak_rss_mb": rss_mb(),
        "entities": stats["entities"],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--out", type=Path)
    parser.add_argument("--workdir", type=Path)
    args = parser.parse_args()
    workdir = args.workdir or Path(tempfile.mkdtemp(prefix="graphmem-bench-"))
    report: dict[str, object] = {
        "command": " ".join(["python", *sys.argv]),
        "machine": f"{platform.machine()}, {os.cpu_count()} cores, Python "
        f"{platform.python_version()}",
        "results": {},
    }
    for size in args.sizes:
        result = run(size, args.queries, workdir)
        report["results"][str(size)] = result  # type: ignore[index]
        print(json.dumps({str(size): result}), flush=True)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(report, indent=2) + "\n")


if __name__ == "__main__":
    main()
