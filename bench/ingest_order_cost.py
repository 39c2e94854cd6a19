"""What reconciling by stated order costs at ingest: this tree against a baseline tree, same run.

    git -C /work/main worktree add --detach /tmp/gm-base ee1fd49   # the code before the change
    python bench/ingest_order_cost.py --baseline /tmp/gm-base \
        --out bench/results/ingest_order_cost.json

Two workloads, each ingested into a fresh SQLite file by a child process that imports
``graphmem`` from one tree (``PYTHONPATH``; the child records which file it imported):

- ``chat``: the 20,000-turn chat bench of ``tenants.py`` (40 groups of 500 synthetic turns,
  sessions round-robin, ``add_episodes`` in batches of 1,000, the ``rules`` extractor and the
  default hash embedder; about 5 facts per 100 turns);
- ``structured``: the 100k-fact structured bench of ``scale.py`` (10,000 robot episodes of 10
  facts, ``add_episodes`` in batches of 2,000, precomputed vectors);
- ``timeline`` (not in the default set): one subject's ``lives_in`` timeline of ``--timeline``
  statements through ``add_fact``, in stated order and then reversed (the case that replays:
  every statement is stated before everything already stored).

The runs alternate baseline and new (the first of each round alternates too) for ``--rounds``
rounds; reported: each run's wall and CPU seconds, the medians per tree and the new/baseline
ratios of the medians. The machine is shared (2 cores, other suites running): CPU time is the
steadier figure; the load average before and after each run is recorded. ``--chat-groups``
and ``--facts`` scale the workloads down.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent


def _load() -> str:
    one, five, _ = os.getloadavg()
    return f"{one:.2f}/{five:.2f}"


def _chat(workdir: Path, groups: int, per_group: int) -> dict[str, Any]:
    import graphmem
    from bench.tenants import Vocabulary, _round_robin, conversation
    from graphmem import GraphMemory

    vocab = Vocabulary(1)
    items = _round_robin([conversation(vocab, 1, g, per_group) for g in range(groups)])
    mem = GraphMemory(workdir / "chat.db")
    mem.connect()
    load = _load()
    t0, c0 = time.perf_counter(), time.process_time()
    facts = 0
    for at in range(0, len(items), 1000):
        facts += sum(r.facts_added for r in mem.add_episodes(items[at : at + 1000]))
    seconds, cpu = time.perf_counter() - t0, time.process_time() - c0
    current = len(mem.facts(group_id="conv-0000"))
    mem.close()
    return {"graphmem": graphmem.__file__, "episodes": len(items), "facts_added": facts,
            "current_facts_group0": current, "seconds": round(seconds, 2),
            "cpu_seconds": round(cpu, 2), "load": f"{load} -> {_load()}"}


def _structured(workdir: Path, facts_wanted: int) -> dict[str, Any]:
    import graphmem
    from bench._common import PrecomputedEmbedder, robot_records
    from graphmem import GraphMemory

    mem = GraphMemory(workdir / "structured.db", embedder=PrecomputedEmbedder())
    mem.connect()
    episodes = facts_wanted // 10
    load = _load()
    t0, c0 = time.perf_counter(), time.process_time()
    facts = 0
    for offset in range(0, episodes, 2000):
        batch = robot_records(min(2000, episodes - offset), start=offset)
        facts += sum(r.facts_added for r in mem.add_episodes(batch))
    seconds, cpu = time.perf_counter() - t0, time.process_time() - c0
    mem.close()
    return {"graphmem": graphmem.__file__, "episodes": episodes, "facts_added": facts,
            "seconds": round(seconds, 2), "cpu_seconds": round(cpu, 2),
            "load": f"{load} -> {_load()}"}


def _timeline(workdir: Path, n: int) -> dict[str, Any]:
    """One long timeline (``lives_in`` of one subject, ``n`` statements a day apart, four
    places in turn) through ``add_fact``: in order, then reversed in a second group."""
    from datetime import UTC, datetime, timedelta

    import graphmem
    from graphmem import GraphMemory, HashEmbedder

    mem = GraphMemory(workdir / "timeline.db", embedder=HashEmbedder(64))
    mem.connect()
    base = datetime(2020, 1, 1, tzinfo=UTC)
    places = ["Lisbon", "Porto", "Braga", "Ghent"]
    steps = [(places[i % 4], base + timedelta(days=i)) for i in range(n)]
    out: dict[str, Any] = {"graphmem": graphmem.__file__, "statements": n}
    load = _load()
    for label, order in (("in_order", steps), ("reversed", steps[::-1])):
        c0 = time.process_time()
        t0 = time.perf_counter()
        for place, when in order:
            mem.add_fact("Ana", "lives_in", place, valid_from=when, group_id=label)
        out[f"{label}_seconds"] = round(time.perf_counter() - t0, 2)
        out[f"{label}_cpu_seconds"] = round(time.process_time() - c0, 2)
    mem.close()
    out["seconds"] = out["in_order_seconds"]
    out["cpu_seconds"] = out["in_order_cpu_seconds"]
    out["load"] = f"{load} -> {_load()}"
    return out


def _child(tree: Path, phase: str, args: argparse.Namespace) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="gm-ordercost-") as workdir:
        argv = [sys.executable, str(Path(__file__).resolve()), "--phase", phase,
                "--tree", str(tree), "--workdir", workdir,
                "--chat-groups", str(args.chat_groups), "--chat-turns", str(args.chat_turns),
                "--facts", str(args.facts), "--timeline", str(args.timeline)]
        env = dict(os.environ, PYTHONPATH=str(tree))
        out = subprocess.run(argv, env=env, capture_output=True, text=True, check=False)
        if out.returncode != 0:
            raise SystemExit(out.stderr)
        result: dict[str, Any] = json.loads(out.stdout.strip().splitlines()[-1])
        return result


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--baseline", type=Path, help="a tree of the code before the change")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--chat-groups", type=int, default=40)
    parser.add_argument("--chat-turns", type=int, default=500)
    parser.add_argument("--facts", type=int, default=100_000)
    parser.add_argument("--timeline", type=int, default=200,
                        help="statements in the timeline workload")
    parser.add_argument("--workloads", nargs="+", default=["chat", "structured"],
                        choices=["chat", "structured", "timeline"])
    parser.add_argument("--out", type=Path)
    parser.add_argument("--phase", choices=["chat", "structured", "timeline"],
                        help=argparse.SUPPRESS)
    parser.add_argument("--tree", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--workdir", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()

    if args.phase:
        # graphmem from the tree under test; the bench's own modules from this tree.
        sys.path[:0] = [str(args.tree), str(ROOT)]
        if args.phase == "chat":
            result = _chat(args.workdir, args.chat_groups, args.chat_turns)
        elif args.phase == "timeline":
            result = _timeline(args.workdir, args.timeline)
        else:
            result = _structured(args.workdir, args.facts)
        print(json.dumps(result))
        return

    if args.baseline is None:
        parser.error("--baseline is required")
    trees = {"baseline": args.baseline.resolve(), "new": ROOT}
    runs: dict[str, dict[str, list[dict[str, Any]]]] = {
        w: {"baseline": [], "new": []} for w in args.workloads
    }
    for number in range(args.rounds):
        order = ["baseline", "new"] if number % 2 == 0 else ["new", "baseline"]
        for workload in args.workloads:
            for name in order:
                result = _child(trees[name], workload, args)
                runs[workload][name].append(result)
                print(workload, name, result["seconds"], result["cpu_seconds"], flush=True)
    summary: dict[str, Any] = {}
    for workload, by_tree in runs.items():
        med = {
            name: {
                "seconds": statistics.median(r["seconds"] for r in rows),
                "cpu_seconds": statistics.median(r["cpu_seconds"] for r in rows),
            }
            for name, rows in by_tree.items()
        }
        summary[workload] = {
            "median": med,
            "ratio_wall": round(med["new"]["seconds"] / med["baseline"]["seconds"], 3),
            "ratio_cpu": round(med["new"]["cpu_seconds"] / med["baseline"]["cpu_seconds"], 3),
        }
        if workload == "timeline":
            rev = {
                name: statistics.median(r["reversed_cpu_seconds"] for r in rows)
                for name, rows in by_tree.items()
            }
            summary[workload]["reversed_median_cpu_seconds"] = rev
            summary[workload]["ratio_cpu_reversed"] = round(rev["new"] / rev["baseline"], 3)
    report = {
        "command": "python " + " ".join([os.path.relpath(__file__, ROOT), *sys.argv[1:]]),
        "machine": f"{platform.machine()}, {os.cpu_count()} cores, Python "
        f"{platform.python_version()}",
        "baseline": str(trees["baseline"]),
        "workload": {"chat_groups": args.chat_groups, "chat_turns_per_group": args.chat_turns,
                     "structured_facts": args.facts, "timeline_statements": args.timeline,
                "rounds": args.rounds},
        "summary": summary,
        "runs": runs,
    }
    text = json.dumps(report, indent=2)
    if args.out:
        args.out.write_text(text + "\n", encoding="utf-8")
    print(json.dumps(summary, indent=2))


if __name__ == "__main__":
    main()
