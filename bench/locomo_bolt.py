"""LoCoMo retrieval on the Neo4j store over Bolt, next to SQLite, on the first N conversations.

    python scripts/bolt_server.py start --dir /tmp/lobolt --bolt-port 0 --http-port 0
    . /tmp/lobolt/env.sh
    python bench/locomo_bolt.py --conversations 2 --out bench/results/locomo_bolt.json

Same protocol as ``locomo.py`` (rules extractor, hashed n-gram vectors, ``recall(k=20)``), for
the ``default`` and ``named_2`` configurations, on three stores: SQLite, the Bolt server at
``GRAPHMEM_TEST_BOLT_URI`` (or ``NEO4J_URI``; its database is WIPED first), and the same Bolt
store with its speaker and conversation-context cues switched off (``speakers`` /
``episode_context``), which is how the Neo4j store ranked before it had them.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import locomo
from graphmem import GraphMemory
from graphmem.retrieve.retriever import RetrievalConfig
from graphmem.store.neo4j import Neo4jStore

KINDS = ("sqlite", "bolt", "bolt_without_cues")


def evaluate(mem: GraphMemory, sample: dict[str, Any]) -> list[tuple[int, dict[str, float]]]:
    sid = sample["sample_id"]
    dia_of = {
        r["id"]: r["metadata"]["dia_id"]
        for r in mem.export(group_id=sid)
        if r.get("type") == "episode" and "dia_id" in (r.get("metadata") or {})
    }
    rows = []
    for qa in locomo.questions(sample, set(dia_of.values())):
        result = mem.recall(qa["q"], group_id=sid, k=20, hops=2)
        rows.append((qa["cat"], locomo.score(locomo.dialog_ids(result, dia_of), qa["ev"])))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--conversations", type=int, default=2)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    uri = os.environ.get("NEO4J_URI") or os.environ.get("GRAPHMEM_TEST_BOLT_URI")
    if not uri:
        sys.exit("no Bolt server: set GRAPHMEM_TEST_BOLT_URI (scripts/bolt_server.py) or NEO4J_URI")
    samples = json.loads(locomo.DEFAULT_DATA.read_text())[: args.conversations]
    embedder = locomo.make_embedder("hash")
    folder = Path(tempfile.mkdtemp(prefix="graphmem-locomo-bolt-"))
    wipe = Neo4jStore(uri)
    wipe.connect()
    wipe.wipe_all_for_tests()
    wipe.close()
    report: dict[str, Any] = {"command": " ".join(["python", *sys.argv]), "results": {}}
    cues = (Neo4jStore.speakers, Neo4jStore.episode_context)
    for name in ("default", "named_2"):
        config = RetrievalConfig(**locomo.CONFIGS[name])
        for kind in KINDS:
            rows: list[tuple[int, dict[str, float]]] = []
            for sample in samples:
                sid = sample["sample_id"]
                target: Any = folder / f"{sid}.db" if kind == "sqlite" else Neo4jStore(uri)
                mem = GraphMemory(target, embedder=embedder, extractor="rules", retrieval=config)
                mem.connect()
                if mem.stats(sid)["episodes"] == 0:
                    t0 = time.perf_counter()
                    mem.add_episodes(locomo.conversation_items(sample, True))
                    print(f"{kind} {sid}: ingest {time.perf_counter() - t0:.1f} s", file=sys.stderr)
                if kind == "bolt_without_cues":  # the store as it ranked without the two cues
                    Neo4jStore.speakers = None  # type: ignore[assignment,method-assign]
                    Neo4jStore.episode_context = None  # type: ignore[assignment,method-assign]
                try:
                    rows += evaluate(mem, sample)
                finally:
                    Neo4jStore.speakers, Neo4jStore.episode_context = cues  # type: ignore[method-assign]
                mem.close()
            overall = locomo.summarize(rows)["all_1-5"]
            report["results"][f"{name}/{kind}"] = overall
            print(f"{name:8} {kind:18} {overall}", flush=True)
    if args.out:
        args.out.write_text(json.dumps(report, indent=2) + "\n")


if __name__ == "__main__":
    main()
