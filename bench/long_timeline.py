"""Cost of one long timeline: a robot whose ``has_status`` changes with every episode.

    python bench/long_timeline.py --sizes 250 500 1000 2000 --out bench/results/long_timeline.json

One ``add_fact`` per episode on one (subject, functional predicate), each a new value one
minute after the last (so each supersedes the one before), on the embedded SQLite store; then
one ``forget`` of the middle episode, which rebuilds the timeline from its claims. Reports the
ingest time per episode at the end of the run (the last 10%), the whole ingest, and the forget.
Each episode reads its whole timeline, so the per-episode cost grows with the timeline's length.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from graphmem import GraphMemory, HashEmbedder

BASE = datetime(2020, 1, 1, tzinfo=UTC)


def run(size: int, folder: Path) -> dict[str, Any]:
    with GraphMemory(folder / f"timeline_{size}.db", embedder=HashEmbedder(32)) as mem:
        ids: list[str] = []
        times: list[float] = []
        for i in range(size):
            t0 = time.perf_counter()
            result = mem.add_fact(
                "robot", "has_status", value=f"state {i % 7}",
                valid_from=BASE + timedelta(minutes=i),
            )
            times.append(time.perf_counter() - t0)
            ids.append(result.episode_id)
        tail = sorted(times[-max(1, size // 10):])
        t0 = time.perf_counter()
        mem.forget(episode_id=ids[size // 2])
        forget = time.perf_counter() - t0
        facts = mem.stats()["facts"]
    return {
        "episodes": size,
        "facts_after_forget": facts,
        "ingest_seconds": round(sum(times), 2),
        "last_10pct_ms_per_episode_p50": round(tail[len(tail) // 2] * 1000, 2),
        "forget_middle_seconds": round(forget, 3),
        "load_1min": round(os.getloadavg()[0], 2),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[250, 500, 1000, 2000])
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="graphmem-timeline-"))
    report: dict[str, Any] = {
        "command": " ".join(["python", *sys.argv]),
        "machine": f"{platform.machine()}, {os.cpu_count()} cores, Python "
        f"{platform.python_version()}",
        "results": {},
    }
    for size in args.sizes:
        report["results"][str(size)] = entry = run(size, folder)
        print(json.dumps({str(size): entry}), flush=True)
    if args.out:
        args.out.write_text(json.dumps(report, indent=2) + "\n")


if __name__ == "__main__":
    main()
