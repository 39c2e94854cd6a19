"""The sync path before and after AsyncGraphMemory, and what the async wrapper costs per call.

    python bench/async_memory.py --baseline main --out bench/results/async_memory.json

Two trees: ``before`` (``git archive --baseline``) and ``after`` (this working tree). Each
measurement runs in a fresh process with ``PYTHONPATH`` set to its tree, alternating before /
after ``--rounds`` times so that a change in the machine's load hits both alike. The figure is
the process's CPU time (``time.process_time``: every thread of it, so a worker thread's work is
counted) per call, not wall time, which a loaded shared machine inflates; medians over the rounds
of each process's median per call:

- ``sync_recall``: ``GraphMemory.recall`` over a store made from ``examples/data`` (the same
  queries in every process, after one warm-up pass);
- ``sync_add``: ``GraphMemory.add_episode`` of short chat turns into a fresh store;
- in the after tree only: ``async_recall`` (``await AsyncGraphMemory.recall``, one at a time:
  the wrapper's cost per call), ``async_recall_gather8`` (8 recalls in flight, CPU per
  recall) and ``async_add``.

Throughput (``--throughput``, this tree only, one process): N calls made one after another on
``GraphMemory`` (a sync caller) against the same N calls in flight at once on
``AsyncGraphMemory`` (``asyncio.gather``), wall time, on SQLite and, when
``GRAPHMEM_TEST_BOLT_URI`` names a Bolt server (``scripts/bolt_server.py``), on it through the
generated async store (``async``: ``native=True``) and through the sync driver in the workers
(``async_sync_driver``: ``native=False``). Workloads: ``ingest_rules`` (``add_episode``, rules
extractor), ``ingest_llm`` (``add_episode`` with the ``llm`` extractor against the local fake
OpenAI server, which answers after ``--latency`` seconds: a model endpoint's round trip) and
``recall``. The modes of a store take turns in a rotating order each round; every call writes
to or reads its own group; figures are calls per second, median over the rounds, and each
async mode / sync of the medians:

    python bench/async_memory.py --throughput --n 24 --rounds 3 \\
        --out bench/results/async_throughput.json
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
from datetime import datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))

from cli_startup import unpack  # noqa: E402

QUERIES = [
    "where does Maya live?", "what does Maya prefer?", "who works at Tidewater Labs?",
    "gripper firmware version", "ticket GR-12 status", "where does Leo live?",
    "mug grasps that failed", "what did Maya drink before?",
]

WORKER = r'''
import asyncio, json, statistics, sys, tempfile, time
from pathlib import Path
from graphmem import GraphMemory
mode, store, calls = sys.argv[1], sys.argv[2], int(sys.argv[3])
queries = json.loads(sys.argv[4])
out = {}

def per_call(seconds, n):
    return seconds / n * 1e3

if mode in ("sync_recall", "async_recall", "async_recall_gather8"):
    with GraphMemory(store) as memory:
        for q in queries:
            memory.recall(q)  # warm: caches, vector matrices
        if mode == "sync_recall":
            samples = []
            for i in range(calls):
                t0 = time.process_time(); memory.recall(queries[i % len(queries)])
                samples.append((time.process_time() - t0) * 1e3)
            out["ms"] = statistics.median(samples)
        else:
            from graphmem import AsyncGraphMemory
            async def main():
                amem = AsyncGraphMemory(memory)
                samples = []
                if mode == "async_recall":
                    for i in range(calls):
                        t0 = time.process_time(); await amem.recall(queries[i % len(queries)])
                        samples.append((time.process_time() - t0) * 1e3)
                    return statistics.median(samples)
                t0 = time.process_time()
                for start in range(0, calls, 8):
                    await asyncio.gather(*(amem.recall(queries[(start + j) % len(queries)])
                                           for j in range(8)))
                return (time.process_time() - t0) * 1e3 / calls
            out["ms"] = asyncio.run(main())
else:
    turns = [f"Person{i} lives in City{i % 7} and works at Lab{i % 5}." for i in range(calls)]
    folder = tempfile.mkdtemp()
    with GraphMemory(Path(folder) / "add.db") as memory:
        memory.add_episode("warm up.", group_id="warm")
        if mode == "sync_add":
            samples = []
            for turn in turns:
                t0 = time.process_time(); memory.add_episode(turn)
                samples.append((time.process_time() - t0) * 1e3)
            out["ms"] = statistics.median(samples)
        else:
            from graphmem import AsyncGraphMemory
            async def main():
                amem = AsyncGraphMemory(memory)
                samples = []
                for turn in turns:
                    t0 = time.process_time(); await amem.add_episode(turn)
                    samples.append((time.process_time() - t0) * 1e3)
                return statistics.median(samples)
            out["ms"] = asyncio.run(main())
print(json.dumps(out))
'''


def measure(tree: Path, mode: str, store: Path, calls: int) -> float:
    env = {**os.environ, "PYTHONPATH": str(tree), "OPENBLAS_NUM_THREADS": "1"}
    env.pop("GRAPHMEM_STORE", None)
    done = subprocess.run(
        [sys.executable, "-c", WORKER, mode, str(store), str(calls), json.dumps(QUERIES)],
        env=env, check=True, capture_output=True, text=True,
    )
    return float(json.loads(done.stdout.strip().splitlines()[-1])["ms"])


def make_store(tree: Path, path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(tree), "GRAPHMEM_STORE": f"sqlite:///{path}"}
    for args in (["init"], ["ingest", str(ROOT / "examples" / "data")]):
        subprocess.run([sys.executable, "-m", "graphmem.cli", "-q", *args], env=env,
                       check=True, stdout=subprocess.DEVNULL)


def _llm_answer(body: dict[str, Any]) -> dict[str, Any]:
    from tests.unit.test_llm_extractor import answer, episode_of, fact

    who, _, rest = episode_of(body).partition(" lives in ")
    city = rest.split(" and ")[0].rstrip(".")
    return answer(fact(who, "lives_in", city, evidence=f"lives in {city}"))


def _bench_backend(
    name: str, store: str, variants: dict[str, dict[str, Any]], settings: Any,
    args: argparse.Namespace,
) -> dict[str, list[float]]:
    """One store's rounds (see the module): calls per second of each mode and workload. The
    modes are ``sync`` and one ``AsyncGraphMemory`` per entry of ``variants`` (its options),
    taken in a rotating order each round, so a change in the machine's load hits them alike."""
    import asyncio
    import time

    from graphmem import AsyncGraphMemory, GraphMemory, HashEmbedder

    n = args.n
    common = {"embedder": HashEmbedder(64), "settings": settings}
    memory = GraphMemory(store, **common).connect()
    amemories = {mode: AsyncGraphMemory(store, **common, **options)
                 for mode, options in variants.items()}
    samples: dict[str, list[float]] = {}

    def turn(group: str, i: int) -> str:
        return f"Person{i}{group} lives in City{i % 7} and works at Lab{i % 5}."

    def sync_run(work: str, group: str, count: int) -> float:
        t0 = time.perf_counter()
        for i in range(count):
            if work == "recall":
                memory.recall(f"Where does Person{i}{group} live?", group_id=group)
            else:
                memory.add_episode(turn(group, i), group_id=group, extractor=work.split("_")[1])
        return count / (time.perf_counter() - t0)

    async def async_run(amemory: AsyncGraphMemory, work: str, group: str, count: int) -> float:
        t0 = time.perf_counter()
        if work == "recall":
            calls = [amemory.recall(f"Where does Person{i}{group} live?", group_id=group)
                     for i in range(count)]
        else:
            calls = [amemory.add_episode(turn(group, i), group_id=group,
                                         extractor=work.split("_")[1]) for i in range(count)]
        await asyncio.gather(*calls)
        return count / (time.perf_counter() - t0)

    async def rounds() -> None:
        for amemory in amemories.values():
            await amemory.connect()
        modes = ["sync", *amemories]
        for round_ in range(-1, args.rounds):  # round -1 warms every path up, not counted
            shift = (round_ + 1) % len(modes)
            count = n if round_ >= 0 else 4
            for mode in modes[shift:] + modes[:shift]:
                group = f"{name}-r{round_ + 1}{mode}"
                for work in ("ingest_rules", "ingest_llm", "recall"):
                    # recall reads the group the rules ingest wrote
                    target = group if work != "ingest_llm" else group + "llm"
                    if mode == "sync":
                        rate = await asyncio.to_thread(sync_run, work, target, count)
                    else:
                        rate = await async_run(amemories[mode], work, target, count)
                    if round_ >= 0:
                        samples.setdefault(f"{mode} {work}", []).append(rate)
                    label = f"round {round_ + 1}" if round_ >= 0 else "warm-up"
                    print(f"{name} {label} {mode} {work}: {rate:.1f}/s", file=sys.stderr)
        for amemory in amemories.values():
            await amemory.aclose()

    try:
        asyncio.run(rounds())
    finally:
        memory.close()
    return samples

def throughput(args: argparse.Namespace) -> dict[str, Any]:
    import time

    from graphmem import Settings
    from tests.fakes.openai_server import FakeOpenAIServer

    latency = args.latency
    bolt = os.environ.get("GRAPHMEM_TEST_BOLT_URI")
    folder = Path(tempfile.mkdtemp(prefix="graphmem-throughput-"))
    results: dict[str, dict[str, list[float]]] = {}
    fake = FakeOpenAIServer().start()

    def answered(body: dict[str, Any]) -> dict[str, Any]:
        time.sleep(latency)
        return _llm_answer(body)

    fake.default = answered
    settings = Settings(llm_model="bench", llm_base_url=fake.base_url, llm_api_key="x")
    backends: list[tuple[str, str, dict[str, dict[str, Any]]]] = [
        ("sqlite", str(folder / "m.db"), {"async": {}})
    ]
    if bolt:
        from graphmem.store.neo4j.store import Neo4jStore

        wipe = Neo4jStore(bolt)
        wipe.connect()
        wipe.wipe_all_for_tests()
        wipe.close()
        backends.append(("bolt", bolt, {"async": {"native": True},
                                        "async_sync_driver": {"native": False}}))

    try:
        for name, store, variants in backends:
            results[name] = _bench_backend(name, store, variants, settings, args)
    finally:
        fake.stop()
        shutil.rmtree(folder, ignore_errors=True)
    summary: dict[str, Any] = {}
    for name, samples in results.items():
        medians = {key: round(statistics.median(v), 2) for key, v in samples.items()}
        variants = sorted({key.split()[0] for key in medians} - {"sync"})
        summary[name] = {
            "calls_per_second_median": medians,
            **{
                f"{variant}_over_sync": {
                    work: round(medians[f"{variant} {work}"] / medians[f"sync {work}"], 2)
                    for work in ("ingest_rules", "ingest_llm", "recall")
                }
                for variant in variants
            },
        }
    return {
        "command": "python bench/async_memory.py " + " ".join(sys.argv[1:]),
        "date": datetime.now().strftime("%Y-%m-%d"),
        "machine": f"{platform.machine()}, {os.cpu_count()} cores, Python "
        f"{platform.python_version()}, load {os.getloadavg()[0]:.1f}",
        "n": args.n, "rounds": args.rounds, "llm_latency_s": latency,
        "async": "AsyncGraphMemory defaults: max_workers=4, llm_max_concurrency=8",
        "bolt_server": "ArcadeDB (scripts/bolt_server.py)" if bolt else None,
        "results": summary,
        "samples_per_second": results,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", default="main")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--out", type=Path)
    parser.add_argument("--throughput", action="store_true",
                        help="async vs sync calls per second (this tree; see the module)")
    parser.add_argument("--n", type=int, default=24, help="calls per measurement (throughput)")
    parser.add_argument("--latency", type=float, default=0.05,
                        help="seconds the fake LLM endpoint takes per answer (throughput)")
    args = parser.parse_args()
    if args.throughput:
        sys.path.insert(0, str(ROOT))
        report = throughput(args)
        print(json.dumps(report["results"], indent=2))
        if args.out:
            args.out.write_text(json.dumps(report, indent=2) + "\n")
        return
    folder = Path(tempfile.mkdtemp(prefix="graphmem-async-"))
    try:
        before = unpack(args.baseline, folder / "before")
        after = folder / "after"
        shutil.copytree(ROOT / "graphmem", after / "graphmem",
                        ignore=shutil.ignore_patterns("__pycache__"))
        for data in ("cypher", "prompts"):
            shutil.copytree(ROOT / data, after / data)
            if not (before / data).exists():
                shutil.copytree(ROOT / data, before / data)
        trees = {"before": before, "after": after}
        stores = {name: folder / f"{name}.db" for name in trees}
        for name, tree in trees.items():
            make_store(tree, stores[name])
        plan = [("before", "sync_recall"), ("after", "sync_recall"), ("before", "sync_add"),
                ("after", "sync_add"), ("after", "async_recall"),
                ("after", "async_recall_gather8"), ("after", "async_add")]
        samples: dict[str, list[float]] = {f"{t} {m}": [] for t, m in plan}
        for round_ in range(args.rounds):
            for tree, mode in plan:
                calls = args.calls if "recall" in mode else max(20, args.calls // 4)
                ms = measure(trees[tree], mode, stores[tree], calls)
                samples[f"{tree} {mode}"].append(ms)
                print(f"round {round_ + 1} {tree} {mode}: {ms:.3f} ms", file=sys.stderr)
        medians = {key: round(statistics.median(v), 3) for key, v in samples.items()}
        report: dict[str, Any] = {
            "command": "python bench/async_memory.py " + " ".join(sys.argv[1:]),
            "date": datetime.now().strftime("%Y-%m-%d"),
            "machine": f"{platform.machine()}, {os.cpu_count()} cores, Python "
            f"{platform.python_version()}, load {os.getloadavg()[0]:.1f}",
            "baseline": args.baseline,
            "cpu_ms_per_call_median": medians,
            "samples_ms": samples,
            "sync_recall_after_over_before": round(
                medians["after sync_recall"] / medians["before sync_recall"], 3),
            "sync_add_after_over_before": round(
                medians["after sync_add"] / medians["before sync_add"], 3),
            "async_recall_over_sync": round(
                medians["after async_recall"] / medians["after sync_recall"], 3),
            "async_add_over_sync": round(
                medians["after async_add"] / medians["after sync_add"], 3),
        }
        print(json.dumps({k: v for k, v in report.items() if k != "samples_ms"}, indent=2))
        if args.out:
            args.out.write_text(json.dumps(report, indent=2) + "\n")
    finally:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
