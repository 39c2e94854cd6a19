"""Worker process for the crash and concurrency tests: ingest a list of episodes into a store.

    python tests/helpers/ingest_worker.py --store PATH --episodes FILE.json
        [--bulk N] [--chunk N] [--kill-at HOOK:COUNT] [--dim 64] [--go FILE]

The first ``--bulk`` episodes go through ``add_episodes`` in chunks of ``--chunk``, the rest
one by one through ``add_episode``. ``ready`` is printed (and flushed) once the store is open,
``done`` at the end. With ``--go FILE`` the worker waits for FILE to exist before ingesting (so
that several workers start together).

``--kill-at HOOK:COUNT`` makes the process SIGKILL itself at a precise point, the COUNT-th time
it passes HOOK (SQLite store only):

- ``insert-mid``: inside the raw-episode transaction, after COUNT episode rows (before COMMIT)
- ``insert-done``: right after COUNT raw-episode transactions committed (before extraction)
- ``apply``: inside the write transaction, after COUNT episode plans were applied (before COMMIT)
- ``commit``: right after COUNT write transactions committed
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any


def _die() -> None:
    sys.stdout.flush()
    os.kill(os.getpid(), signal.SIGKILL)


def install_kill_hook(spec: str) -> None:
    from graphmem.store.sqlite import SQLiteStore

    hook, _, raw = spec.partition(":")
    target = int(raw)
    seen = {"n": 0}

    def tick() -> None:
        seen["n"] += 1
        if seen["n"] >= target:
            _die()

    def wrap(name: str) -> None:
        original: Callable[..., Any] = getattr(SQLiteStore, name)

        def patched(self: SQLiteStore, *args: Any, **kwargs: Any) -> Any:
            result = original(self, *args, **kwargs)
            tick()
            return result

        setattr(SQLiteStore, name, patched)

    if hook == "insert-mid":
        wrap("_insert_episode")
    elif hook == "insert-done":
        wrap("insert_episodes")
    elif hook == "apply":
        wrap("_apply")
    elif hook == "commit":
        wrap("write_many")
    else:
        raise SystemExit(f"unknown hook {hook!r}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--store", required=True)
    parser.add_argument("--episodes", required=True)
    parser.add_argument("--bulk", type=int, default=0)
    parser.add_argument("--chunk", type=int, default=25)
    parser.add_argument("--kill-at", default=None)
    parser.add_argument("--dim", type=int, default=64)
    parser.add_argument("--go", default=None)
    args = parser.parse_args(argv)

    from graphmem import GraphMemory, HashEmbedder

    if args.kill_at:
        install_kill_hook(args.kill_at)
    episodes = json.loads(Path(args.episodes).read_text(encoding="utf-8"))
    mem = GraphMemory(args.store, embedder=HashEmbedder(args.dim))
    mem.connect()
    print("ready", flush=True)
    if args.go:
        deadline = time.monotonic() + 60
        while not os.path.exists(args.go):
            if time.monotonic() > deadline:
                raise SystemExit("no go signal")
            time.sleep(0.005)
    head = episodes[: args.bulk]
    for start in range(0, len(head), args.chunk):
        mem.add_episodes(head[start : start + args.chunk])
    for episode in episodes[args.bulk :]:
        mem.add_episode(**episode)
    mem.close()
    print("done", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
