"""Cost curves of the embedded SQLite store: ingest facts/s, recall latency and RSS by graph size.

    python bench/scale.py --sizes 10000 100000 1000000 --out bench/results/scale_sqlite.json

Each size is built once (``add_episodes`` bulk path, structured robot episodes of 10 facts each,
precomputed vectors: see ``bench/_common.py``) in ``--workdir`` and reused by later runs
(``--rebuild`` to start again). Building and querying run in separate child processes, so each
phase's peak RSS is its own. Recall: ``--queries`` calls of ``recall(query, k=10)`` after a
warm-up (first call loads the vector matrix; its time is reported as ``first_recall_ms``), then
percentiles; the same for up to 40 recalls with each of two structured filters (``FILTERS``: one
that 43% of the subjects pass, one that 0.6% pass). A per-stage breakdown
(time inside each store method, summed per recall) shows where the time goes. The load average
before and after each phase is recorded: the machine has 2 cores and is shared.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench._common import (
    STAGES,
    PrecomputedEmbedder,
    instrument,
    percentiles,
    robot_records,
    rss_mb,
)

ROOT = Path(__file__).resolve().parent.parent
QUERIES = [
    "grasp red mug success",
    "which force worked for the blue bowl",
    "episode 4242 force peak",
    "slow approach speed sponge",
    "operator op3 duration",
    "bottle grip width",
    "failed grasps of the plate",
    "apple table1",
    "what did op5 do with the fork",
    "episode 777 success",
]
# Recall with a structured filter: one that many subjects pass (success and a low force: 43%),
# one that few pass (0.6%: the store scans the successes to find them).
FILTERS: dict[str, dict[str, Any]] = {
    "recall_with_filters": {"success": True, "params.force_peak": {"$lt": 13}},
    "recall_with_selective_filter": {"success": True, "params.force_peak": {"$lt": 5.1}},
}


def _load() -> str:
    one, five, _ = os.getloadavg()
    return f"{one:.2f}/{five:.2f}"


def _db(workdir: Path, size: int) -> Path:
    return workdir / f"scale_{size}.db"


def build(size: int, workdir: Path, batch: int) -> dict[str, Any]:
    from graphmem import GraphMemory

    path = _db(workdir, size)
    for suffix in ("", "-wal", "-shm"):
        Path(f"{path}{suffix}").unlink(missing_ok=True)
    load_before = _load()
    mem = GraphMemory(path, embedder=PrecomputedEmbedder())
    episodes = size // 10
    facts = 0
    start = time.perf_counter()
    cpu = time.process_time()
    for offset in range(0, episodes, batch):
        results = mem.add_episodes(robot_records(min(batch, episodes - offset), start=offset))
        facts += sum(r.facts_added for r in results)
    seconds = time.perf_counter() - start
    cpu_s = time.process_time() - cpu
    stats = mem.stats()
    mem.close()
    info = {
        "facts": facts,
        "episodes": episodes,
        "entities": stats["entities"],
        "ingest_seconds": round(seconds, 1),
        "ingest_facts_per_s": round(facts / seconds),
        "ingest_cpu_seconds": round(cpu_s, 1),
        "ingest_facts_per_cpu_s": round(facts / cpu_s),
        "ingest_peak_rss_mb": rss_mb(),
        "db_mb": round(sum(os.path.getsize(p) for p in workdir.glob(f"{path.name}*")) / 2**20),
        "load_during_ingest": f"{load_before} -> {_load()}",
    }
    path.with_suffix(".json").write_text(json.dumps(info, indent=2))
    return info


def _instrument(store: Any) -> dict[str, float]:
    return instrument(store, STAGES)[0]


def query(size: int, workdir: Path, n_queries: int) -> dict[str, Any]:
    from graphmem import GraphMemory

    load_before = _load()
    mem = GraphMemory(_db(workdir, size), embedder=PrecomputedEmbedder())
    mem.connect()
    t0 = time.perf_counter()
    mem.recall(QUERIES[0], k=10)
    first = time.perf_counter() - t0
    for q in QUERIES * 2:
        mem.recall(q, k=10)
    episodes = size // 10
    samples: list[float] = []
    cpu = time.process_time()
    for i in range(n_queries):
        q = QUERIES[i % len(QUERIES)]
        q = q.replace("4242", str(i * 37 % max(episodes, 1))).replace("777", str(i * 91 % episodes))
        t0 = time.perf_counter()
        mem.recall(q, k=10)
        samples.append(time.perf_counter() - t0)
    cpu_ms = (time.process_time() - cpu) * 1000 / n_queries
    filtered: dict[str, dict[str, float]] = {}
    for name, spec in FILTERS.items():
        times: list[float] = []
        for i in range(min(max(n_queries // 4, 10), 40)):
            t0 = time.perf_counter()
            mem.recall(QUERIES[i % len(QUERIES)], k=10, filters=spec)
            times.append(time.perf_counter() - t0)
        filtered[name] = percentiles(times)
    # Where the time goes: store methods timed over a second pass of the same queries.
    spent = _instrument(mem.store)
    passes = min(n_queries, 100)
    for i in range(passes):
        mem.recall(QUERIES[i % len(QUERIES)], k=10)
    mem.close()
    return {
        "recall": percentiles(samples),
        "recall_cpu_ms_mean": round(cpu_ms, 2),
        **filtered,
        "first_recall_ms": round(first * 1000, 1),
        "stage_ms_per_recall": {
            k: round(v * 1000 / passes, 2) for k, v in sorted(spent.items(), key=lambda x: -x[1])
        },
        "query_peak_rss_mb": rss_mb(),
        "load_during_queries": f"{load_before} -> {_load()}",
    }


def _child(args: list[str]) -> dict[str, Any]:
    out = subprocess.run(
        [sys.executable, __file__, *args], check=True, capture_output=True, text=True
    )
    return dict(json.loads(out.stdout.strip().splitlines()[-1]))


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000, 1_000_000])
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--batch", type=int, default=2000, help="episodes per add_episodes call")
    parser.add_argument(
        "--workdir", type=Path, default=Path(tempfile.gettempdir()) / "graphmem-scale"
    )
    parser.add_argument("--rebuild", action="store_true")
    parser.add_argument("--out", type=Path)
    parser.add_argument("--phase", choices=["build", "query"], help=argparse.SUPPRESS)
    args = parser.parse_args()
    args.workdir.mkdir(parents=True, exist_ok=True)
    if args.phase == "build":
        print(json.dumps(build(args.sizes[0], args.workdir, args.batch)))
        return
    if args.phase == "query":
        print(json.dumps(query(args.sizes[0], args.workdir, args.queries)))
        return

    report: dict[str, Any] = {
        "command": "python " + " ".join([os.path.relpath(__file__, ROOT), *sys.argv[1:]]),
        "machine": f"{platform.machine()}, {os.cpu_count()} cores, Python "
        f"{platform.python_version()}, SQLite {__import__('sqlite3').sqlite_version}",
        "store": "sqlite",
        "results": {},
    }
    if args.out and args.out.exists():
        previous = json.loads(args.out.read_text()).get("results", {})
        report["results"].update(previous)
    common = ["--workdir", str(args.workdir), "--batch", str(args.batch)]
    for size in args.sizes:
        meta = _db(args.workdir, size).with_suffix(".json")
        if args.rebuild or not meta.exists() or not _db(args.workdir, size).exists():
            print(f"building {size} facts ...", file=sys.stderr, flush=True)
            built = _child(["--phase", "build", "--sizes", str(size), *common])
        else:
            built = json.loads(meta.read_text())
        print(f"querying {size} facts ...", file=sys.stderr, flush=True)
        queried = _child(
            ["--phase", "query", "--sizes", str(size), "--queries", str(args.queries), *common]
        )
        result = built | queried
        result["peak_rss_mb"] = max(built["ingest_peak_rss_mb"], queried["query_peak_rss_mb"])
        report["results"][str(size)] = result
        print(json.dumps({str(size): result}), flush=True)
        if args.out:
            args.out.parent.mkdir(parents=True, exist_ok=True)
            ordered = dict(sorted(report["results"].items(), key=lambda kv: int(kv[0])))
            args.out.write_text(json.dumps(report | {"results": ordered}, indent=2) + "\n")


if __name__ == "__main__":
    main()
