"""Experience memory cost at scale: graphmem vs robotmem 0.1.3 on the same FetchPush-like attempts.

    python bench/experience_cost.py --sizes 200,2000,20000,100000 --workdir /tmp/xc \\
        --out bench/results/experience_cost.json
    python bench/experience_cost.py --quick                        # 200 and 1,000: a smoke run

Both libraries get the same structured push attempts (task text, state, params, outcome and a
50-step trajectory payload) and the same hashed n-gram vectors (graphmem's ``HashEmbedder(384)``
behind robotmem's ``Embedder`` protocol; robotmem's fastembed model is never loaded). The stores
grow to each size in turn and are measured there, so the data is built once (``--workdir``
keeps the stores and the figures of each size done: a run that stops resumes at the next size).

At each size, for each library:

- **warm recall**: ``--queries`` recalls, calls alternating between the libraries, after a few
  warm-up calls: "the 5 successful attempts on this object nearest a target position"
  (graphmem ``recall_experiences(text, state={"object_pos": …}, k=5, outcome="success_only")``,
  robotmem ``recall(text, n=5, context_filter={"task.success": True}, spatial_sort=…)``);
  **overlap@5**: the share of the 5 returned that are among the 5 truly nearest successes on
  that object (a brute-force search over every stored attempt, Euclidean on ``object_pos``);
- **loop**: ``LOOP`` store-then-recall cycles (one new attempt stored, then one recall), the
  libraries alternating; store and recall latencies (the recall right after a store);
- **cold**: a new process per library (``--cold``) opens the store and times its first recall,
  then makes 20 more and reports its resident memory (VmRSS) and its peak (VmHWM); three
  processes per library, alternating, median; the OS page cache is warm; earlier processes have
  recalled from the store (graphmem's first recall there packed the group's columns);
- **first ever**: before everything else at a size, one new process per library makes the
  first recall ever on the fresh copy of the store (graphmem reads its columns row by row there
  and writes the packs later processes read);
- **disk**: the SQLite file plus ``-wal``/``-shm`` after ``PRAGMA wal_checkpoint(TRUNCATE)``.

Building the stores (not the measured stores): graphmem takes the attempts through
``add_episodes`` in chunks (the same ingest, index entries and facts as ``add_experience``, one
transaction per chunk), robotmem through ``learn`` with its duplicate check switched off (the
attempts are distinct; the check searches the store on every call and would make a 100,000
build take hours). The loop's stores are the libraries' ordinary calls, checks included.

robotmem loads sqlite-vec through ``Connection.enable_load_extension``: run this with a Python
whose ``sqlite3`` has it (a Debian ``/usr/bin/python3.11`` venv), else robotmem is imported with
``pysqlite3`` (``pip install --no-binary pysqlite3 pysqlite3``). Without sqlite-vec robotmem
silently runs BM25-only; the bench refuses that (``robotmem_vec_loaded``).
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import importlib.metadata as md
import json
import os
import platform
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np

os.environ.setdefault("HF_HUB_OFFLINE", "1")  # nothing here may reach for a model download

DIM = 384
COLLECTION = "bench"
OBJECTS = [
    "red cube", "blue cube", "green cylinder", "yellow block",
    "black puck", "white sphere", "orange box", "purple prism",
]
QUERY_FORMS = [
    "push the {o} to the target",
    "how do I push the {o}",
    "{o} push to goal",
    "slide the {o} onto the target",
]
STEPS = 50
WARMUP = 5
LOOP = 50  # store-then-recall cycles at each size
COLD_RECALLS = 20
COLD_RUNS = 3
EXTRA_BASE = 10_000_000  # the loop's attempts: indices no build reaches
T0 = datetime(2025, 1, 1, tzinfo=UTC)


# ---------------------------------------------------------------------------------- workload
def make_episode(i: int, seed: int = 11) -> dict[str, Any]:
    """Attempt ``i`` (random access: its own generator): success depends on force, offset and
    speed."""
    rng = np.random.default_rng([seed, i])
    obj = OBJECTS[int(rng.integers(len(OBJECTS)))]
    object_pos = [float(rng.uniform(1.1, 1.5)), float(rng.uniform(0.5, 1.0)), 0.425]
    goal_pos = [float(rng.uniform(1.1, 1.5)), float(rng.uniform(0.5, 1.0)), 0.425]
    gripper_pos = [
        object_pos[0] + float(rng.normal(0, 0.1)),
        object_pos[1] + float(rng.normal(0, 0.1)),
        0.55 + float(rng.uniform(0, 0.05)),
    ]
    force = float(rng.uniform(0.2, 1.0))
    offset = [float(rng.normal(0, 0.03)), float(rng.normal(0, 0.03)),
              float(rng.uniform(0.0, 0.08))]
    speed = float(rng.uniform(0.1, 0.6))
    p = 0.85 if 0.45 < force < 0.9 else 0.25
    p *= 1.0 if abs(offset[0]) + abs(offset[1]) < 0.05 else 0.5
    p *= 1.0 if speed < 0.45 else 0.7
    success = bool(rng.random() < p)
    final_distance = float(rng.uniform(0.004, 0.05) if success else rng.uniform(0.05, 0.35))
    steps = int(rng.integers(18, STEPS)) if success else STEPS
    reward = -float(steps - (8 if success else 0)) / STEPS
    end = [
        goal_pos[0] + float(rng.normal(0, final_distance / 2)),
        goal_pos[1] + float(rng.normal(0, final_distance / 2)),
        0.425,
    ]
    t = np.linspace(0.0, 1.0, STEPS)[:, None]
    half = np.clip(t * 2, 0, 1)
    rest = np.clip(t * 2 - 1, 0, 1)
    path = (np.array(gripper_pos) * (1 - half) + np.array(object_pos) * half) * (rest == 0)
    path = path + (np.array(object_pos) * (1 - rest) + np.array(end) * rest) * (rest > 0)
    path = path + rng.normal(0, 0.002, path.shape)
    return {
        "idx": i,
        "task": f"push the {obj} to the target",
        "object": obj,
        "run_id": f"run{i // 100}",
        "episode": i % 100,
        "state": {
            "object": obj,
            "object_pos": [round(v, 4) for v in object_pos],
            "goal_pos": [round(v, 4) for v in goal_pos],
            "gripper_pos": [round(v, 4) for v in gripper_pos],
        },
        "params": {
            "force": round(force, 3),
            "approach_offset": [round(v, 4) for v in offset],
            "speed": round(speed, 3),
        },
        "outcome": {
            "success": success,
            "final_distance": round(final_distance, 4),
            "steps": steps,
            "reward": round(reward, 3),
        },
        "trajectory": np.round(path, 4).tolist(),
    }


def make_queries(n: int, seed: int = 23) -> list[dict[str, Any]]:
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n):
        obj = OBJECTS[int(rng.integers(len(OBJECTS)))]
        form = QUERY_FORMS[int(rng.integers(len(QUERY_FORMS)))]
        target = [round(float(rng.uniform(1.1, 1.5)), 4), round(float(rng.uniform(0.5, 1.0)), 4),
                  0.425]
        out.append({"text": form.format(o=obj), "object": obj, "target": target})
    return out


def insight(ep: dict[str, Any]) -> str:
    """robotmem's one-line text of an attempt (what it indexes for BM25 and vectors)."""
    p, o = ep["params"], ep["outcome"]
    dx, dy, dz = p["approach_offset"]
    verdict = "succeeded" if o["success"] else "failed"
    return (
        f"{ep['task']}: {verdict} with force {p['force']:.3f} speed {p['speed']:.3f} "
        f"offset ({dx:+.4f}, {dy:+.4f}, {dz:+.4f}); final distance {o['final_distance']:.4f} m "
        f"after {o['steps']} steps ({ep['run_id']} ep {ep['episode']})"
    )


def robotmem_context(ep: dict[str, Any]) -> dict[str, Any]:
    """The four sections robotmem's README and search.py read (params/spatial/robot/task)."""
    p, o, s = ep["params"], ep["outcome"], ep["state"]
    return {
        "task": {"name": ep["task"], "object": s["object"], "episode": ep["episode"], **o},
        "params": {
            "force": {"value": p["force"], "unit": "N", "type": "scalar"},
            "approach_offset": {"value": p["approach_offset"], "unit": "m", "type": "vector"},
            "speed": {"value": p["speed"], "unit": "m/s", "type": "scalar"},
            "final_distance": {"value": o["final_distance"], "unit": "m", "type": "scalar"},
        },
        "spatial": {"object_pos": s["object_pos"], "goal_pos": s["goal_pos"],
                    "gripper_pos": s["gripper_pos"]},
        "robot": {"id": "fetch-001", "type": "Fetch", "dof": 7},
        "trajectory": ep["trajectory"],
    }


# ---------------------------------------------------------------------------------- sides
def import_robotmem() -> tuple[Any, Any, Any]:
    """robotmem, with this Python's sqlite3 when it can load extensions (sqlite-vec needs
    ``enable_load_extension``), else with pysqlite3 as its sqlite3."""
    saved = sys.modules["sqlite3"]
    if not hasattr(sqlite3.connect(":memory:"), "enable_load_extension"):
        import pysqlite3.dbapi2 as psql  # type: ignore[import-not-found]

        sys.modules["sqlite3"] = psql
    try:
        from robotmem.config import Config
        from robotmem.db_cog import CogDatabase
        from robotmem.sdk import RobotMemory
    finally:
        sys.modules["sqlite3"] = saved
    return Config, CogDatabase, RobotMemory


class HashForRobotmem:
    """graphmem's HashEmbedder behind robotmem's Embedder protocol (same vectors, same dim)."""

    def __init__(self, dim: int = DIM) -> None:
        from graphmem import HashEmbedder

        self._e = HashEmbedder(dim=dim)
        self._dim = dim

    @property
    def available(self) -> bool:
        return True

    @property
    def unavailable_reason(self) -> str:
        return ""

    @property
    def model(self) -> str:
        return str(getattr(self._e, "name", f"graphmem-hash-{self._dim}"))

    @property
    def dim(self) -> int:
        return self._dim

    def embed_one_sync(self, text: str) -> list[float]:
        return [float(v) for v in self._e.embed([text])[0]]

    def embed_batch_sync(self, texts: list[str], batch_size: int = 32) -> list[list[float] | None]:
        return [[float(v) for v in row] for row in self._e.embed(texts)]

    async def embed_one(self, text: str) -> list[float]:
        return self.embed_one_sync(text)

    async def embed_batch(
        self, texts: list[str], batch_size: int = 32
    ) -> list[list[float] | None]:
        return self.embed_batch_sync(texts, batch_size)

    async def check_availability(self) -> bool:
        return True

    async def close(self) -> None:
        return None


class RobotmemSide:
    name = "robotmem"

    def __init__(self, path: Path) -> None:
        config_cls, db_cls, sdk_cls = import_robotmem()
        self.path = path
        config = config_cls(db_path=str(path), embed_backend="onnx", onnx_dim=DIM)
        self.db = db_cls(config)
        self.mem = sdk_cls._from_components(self.db, HashForRobotmem(DIM), collection=COLLECTION)
        if not self.db.vec_loaded:  # .vec_loaded is set when .conn first opens
            _ = self.db.conn
        if not self.db.vec_loaded:
            raise SystemExit("robotmem could not load sqlite-vec: it would run BM25-only")
        self.duplicates = 0

    def prepare(self, ep: dict[str, Any]) -> tuple[Any, ...]:
        return (insight(ep), robotmem_context(ep), ep["run_id"])

    def store(self, args: tuple[Any, ...]) -> None:
        text, context, run = args
        res = self.mem.learn(insight=text, context=context, session_id=run)
        if res.get("status") != "created":
            self.duplicates += 1

    def recall(self, q: dict[str, Any]) -> list[tuple[str, int]]:
        hits = self.mem.recall(
            q["text"], n=5, context_filter={"task.success": True},
            spatial_sort={"field": "spatial.object_pos", "target": q["target"]},
        )
        return [(h["session_id"], int(h["task"]["episode"])) for h in hits]

    def build(self, eps: list[dict[str, Any]]) -> None:
        """Store attempts as ``learn`` does, without its duplicate check (see the docstring)."""
        import robotmem.sdk as sdk
        from robotmem.dedup import DedupResult

        saved = sdk.check_duplicate
        sdk.check_duplicate = lambda *a, **k: DedupResult(is_dup=False)
        try:
            for ep in eps:
                self.store(self.prepare(ep))
        finally:
            sdk.check_duplicate = saved

    def counts(self) -> dict[str, int]:
        c = self.db.conn
        return {
            "memories": c.execute("SELECT COUNT(*) FROM memories").fetchone()[0],
            "vectors": c.execute("SELECT COUNT(*) FROM memories_vec").fetchone()[0],
        }

    def close(self) -> None:
        self.mem.close()
        self.db.close()


class GraphmemSide:
    name = "graphmem"

    def __init__(self, path: Path) -> None:
        from graphmem import GraphMemory, HashEmbedder

        self.path = path
        self.mem = GraphMemory(f"sqlite:///{path}", embedder=HashEmbedder(DIM))
        self.mem.connect()
        self.duplicates = 0

    def prepare(self, ep: dict[str, Any]) -> tuple[Any, ...]:
        return (ep["task"], {
            "state": ep["state"], "params": ep["params"], "outcome": ep["outcome"],
            "payload": {"trajectory": ep["trajectory"]},
            "run_id": ep["run_id"], "episode": ep["episode"],
        })

    def store(self, args: tuple[Any, ...]) -> None:
        task, kw = args
        self.mem.add_experience(task, **kw)

    def build(self, eps: list[dict[str, Any]]) -> None:
        """The attempts through ``add_episodes`` (one transaction per chunk), with increasing
        times before the loop's (``add_experience``: now)."""
        from graphmem.experience.record import experience_record

        items = []
        for ep in eps:
            content, metadata = experience_record(
                ep["task"], state=ep["state"], params=ep["params"], outcome=ep["outcome"],
                payload={"trajectory": ep["trajectory"]}, run_id=ep["run_id"],
                episode=ep["episode"],
            )
            items.append({"content": content, "kind": "experience", "metadata": metadata,
                          "reference_time": T0 + timedelta(seconds=int(ep["idx"]))})
        for result in self.mem.add_episodes(items):
            if result.status != "extracted":
                raise SystemExit(f"graphmem build: {result.status} {result.error}")

    def recall(self, q: dict[str, Any]) -> list[tuple[str, int]]:
        hits = self.mem.recall_experiences(
            q["text"], state={"object_pos": q["target"]}, k=5, outcome="success_only"
        )
        return [(str(h.run_id), int(h.episode)) for h in hits]

    def counts(self) -> dict[str, int]:
        st = self.mem.stats()
        return {k: int(v) for k, v in st.items() if isinstance(v, int)}

    def close(self) -> None:
        self.mem.close()


SIDES: list[Callable[[Path], Any]] = [GraphmemSide, RobotmemSide]


SIDE_BY_NAME = {"graphmem": GraphmemSide, "robotmem": RobotmemSide}


# ---------------------------------------------------------------------------------- measuring
def pct(samples: list[float]) -> dict[str, float]:
    arr = np.asarray(samples) * 1000.0
    return {"p50_ms": round(float(np.percentile(arr, 50)), 3),
            "p95_ms": round(float(np.percentile(arr, 95)), 3),
            "mean_ms": round(float(arr.mean()), 3), "n": len(samples)}


def loadavg() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


def db_bytes(path: Path) -> int:
    """Checkpoint the WAL into the main file (separate connection), then sum the files."""
    con = sqlite3.connect(str(path))
    try:
        con.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
    finally:
        con.close()
    return sum(os.path.getsize(f"{path}{s}") for s in ("", "-wal", "-shm")
               if os.path.exists(f"{path}{s}"))


class Stored:
    """What both stores hold, for the brute-force nearest successes."""

    def __init__(self) -> None:
        self.keys: list[tuple[str, int]] = []
        self.pos = np.zeros((0, 3))
        self.obj: list[str] = []
        self.ok: list[bool] = []
        self._where: dict[tuple[str, int], int] = {}

    def add(self, eps: list[dict[str, Any]]) -> None:
        self.keys += [(e["run_id"], e["episode"]) for e in eps]
        self.pos = np.vstack([self.pos, [e["state"]["object_pos"] for e in eps]])
        self.obj += [e["object"] for e in eps]
        self.ok += [e["outcome"]["success"] for e in eps]
        self._where = {}

    def copy(self) -> Stored:
        other = Stored()
        other.keys, other.pos = list(self.keys), self.pos.copy()
        other.obj, other.ok = list(self.obj), list(self.ok)
        return other

    def nearest(self, q: dict[str, Any], k: int = 5) -> list[tuple[str, int]]:
        mask = (np.asarray(self.obj) == q["object"]) & np.asarray(self.ok)
        rows = np.flatnonzero(mask)
        d = np.linalg.norm(self.pos[rows] - np.asarray(q["target"]), axis=1)
        return [self.keys[int(rows[i])] for i in np.argsort(d, kind="stable")[:k]]

    def describe(self, keys: list[tuple[str, int]]) -> list[tuple[str, bool]]:
        if not self._where:
            self._where = {key: i for i, key in enumerate(self.keys)}
        where = self._where
        return [(self.obj[where[k]], self.ok[where[k]]) for k in keys if k in where]


def warm_phase(sides: list[Any], queries: list[dict[str, Any]], warm: list[dict[str, Any]],
               stored: Stored) -> dict[str, Any]:
    for s in sides:
        for q in warm:
            s.recall(q)
    lat: dict[str, list[float]] = {s.name: [] for s in sides}
    overlap: dict[str, list[float]] = {s.name: [] for s in sides}
    precision: dict[str, list[float]] = {s.name: [] for s in sides}
    for i, q in enumerate(queries):
        truth = set(stored.nearest(q))
        for s in sides if i % 2 == 0 else sides[::-1]:
            t0 = time.perf_counter()
            hits = s.recall(q)
            lat[s.name].append(time.perf_counter() - t0)
            overlap[s.name].append(len(truth & set(hits)) / 5.0)
            good = [1 for o, ok in stored.describe(hits) if o == q["object"] and ok]
            precision[s.name].append(len(good) / 5.0)
    return {s.name: {"recall": pct(lat[s.name]),
                     "overlap_at_5": round(float(np.mean(overlap[s.name])), 4),
                     "precision_at_5": round(float(np.mean(precision[s.name])), 4)}
            for s in sides}


def loop_phase(sides: list[Any], extra: list[dict[str, Any]],
               queries: list[dict[str, Any]]) -> dict[str, Any]:
    """An agent loop: store one new attempt, then recall before the next one."""
    st: dict[str, list[float]] = {s.name: [] for s in sides}
    rc: dict[str, list[float]] = {s.name: [] for s in sides}
    for j, ep in enumerate(extra):
        q = queries[j % len(queries)]
        for s in sides if j % 2 == 0 else sides[::-1]:
            args = s.prepare(ep)
            t0 = time.perf_counter()
            s.store(args)
            t1 = time.perf_counter()
            s.recall(q)
            st[s.name].append(t1 - t0)
            rc[s.name].append(time.perf_counter() - t1)
    return {s.name: {"store": pct(st[s.name]), "recall": pct(rc[s.name])} for s in sides}


def _status_kib(field: str) -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    return 0


def cold_child(name: str, path: Path, queries: list[dict[str, Any]]) -> dict[str, Any]:
    """In a new process: open, first recall, COLD_RECALLS more, then the process's memory."""
    before = _status_kib("VmRSS")
    t0 = time.perf_counter()
    side = SIDE_BY_NAME[name](path)
    t1 = time.perf_counter()
    side.recall(queries[0])
    t2 = time.perf_counter()
    for q in queries[1:COLD_RECALLS + 1]:
        side.recall(q)
    out = {"open_ms": round((t1 - t0) * 1000, 3), "first_recall_ms": round((t2 - t1) * 1000, 3),
           "rss_before_open_kib": before, "rss_kib": _status_kib("VmRSS"),
           "hwm_kib": _status_kib("VmHWM")}
    if name == "robotmem":
        out["robotmem_vec_loaded"] = bool(side.db.vec_loaded)
    side.close()
    return out


def cold_run(name: str, path: Path, queries: list[dict[str, Any]]) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, __file__, "--cold", name, str(path)],
        capture_output=True, text=True, check=True,
        input=json.dumps(queries[: COLD_RECALLS + 1]),
    )
    got: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return got


def cold_phase(paths: dict[str, Path], queries: list[dict[str, Any]]) -> dict[str, Any]:
    runs: dict[str, list[dict[str, Any]]] = {name: [] for name in paths}
    for run in range(COLD_RUNS):
        for name in list(paths) if run % 2 == 0 else list(paths)[::-1]:
            runs[name].append(cold_run(name, paths[name], queries))
    out: dict[str, Any] = {}
    for name, got in runs.items():
        out[name] = {key: statistics.median(r[key] for r in got)
                     for key in ("open_ms", "first_recall_ms", "rss_kib", "hwm_kib",
                                 "rss_before_open_kib")}
        out[name]["runs"] = got
    return out


# ---------------------------------------------------------------------------------- driving
def versions() -> dict[str, str]:
    out = {"python": platform.python_version(), "sqlite": sqlite3.sqlite_version}
    for pkg in ("robotmem", "sqlite-vec", "numpy", "pydantic"):
        with contextlib.suppress(md.PackageNotFoundError):
            out[pkg] = md.version(pkg)
    with contextlib.suppress(Exception):  # graphmem is measured as checked out, edits included
        root = Path(__file__).resolve().parent.parent
        git = ["git", "-C", str(root)]
        out["graphmem_git_head"] = subprocess.run(
            [*git, "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=True
        ).stdout.strip()
        diff = subprocess.run([*git, "diff", "HEAD", "--", "graphmem"], capture_output=True,
                              check=True).stdout
        out["graphmem_uncommitted_diff_sha1"] = hashlib.sha1(diff).hexdigest()[:12] if diff else ""
    return out


def episodes(start: int, stop: int) -> Iterator[list[dict[str, Any]]]:
    for first in range(start, stop, 1000):
        yield [make_episode(i) for i in range(first, min(first + 1000, stop))]


def snapshot(src: dict[str, Path], dst: Path) -> dict[str, Path]:
    """Copies of the stores (WAL checkpointed first) in ``dst``."""
    dst.mkdir(parents=True, exist_ok=True)
    out = {}
    for name, path in src.items():
        db_bytes(path)
        for suffix in ("-wal", "-shm"):
            with contextlib.suppress(FileNotFoundError):
                os.remove(dst / f"{name}.db{suffix}")
        shutil.copyfile(path, dst / f"{name}.db")
        out[name] = dst / f"{name}.db"
    return out


def measure(size: int, paths: dict[str, Path], stored: Stored, queries: list[dict[str, Any]],
            warm: list[dict[str, Any]], built: dict[str, float]) -> dict[str, Any]:
    """Everything at one size, on a copy of the stores (the loop adds to it)."""
    out: dict[str, Any] = {"size": size, "load_before": loadavg(), "build_s": dict(built),
                           "queries": len(queries)}
    t0 = time.perf_counter()
    # The first process ever to recall from the copy (one run each): graphmem reads its
    # columns row by row and packs them for later processes (the cold phase below).
    out["cold_first_ever"] = {name: cold_run(name, p, queries) for name, p in paths.items()}
    sides = [SIDE_BY_NAME[name](paths[name]) for name in SIDE_BY_NAME]
    out["warm"] = warm_phase(sides, queries, warm, stored)
    extra = [make_episode(EXTRA_BASE + size + j) for j in range(LOOP)]
    out["loop"] = loop_phase(sides, extra, queries)
    stored = stored.copy()
    stored.add(extra)
    out["stored_after_loop"] = len(stored.keys)
    for s in sides:
        s.close()
    out["disk_bytes"] = {name: db_bytes(p) for name, p in paths.items()}
    out["cold"] = cold_phase(paths, queries)
    out["measure_s"] = round(time.perf_counter() - t0, 1)
    out["load_after"] = loadavg()
    return out


def build_lib(name: str, sizes: list[int], workdir: Path) -> float:
    """Grow one library's build store to each size, keeping a copy at each (``snap-SIZE``);
    the seconds spent building so far. The libraries can be built in parallel processes."""
    record = workdir / f"built-{name}.json"
    done = (json.loads(record.read_text()) if record.exists()
            else {"built": 0, "seconds": 0.0})
    path = workdir / f"build-{name}.db"
    for size in sizes:
        if (workdir / f"snap-{size}" / f"{name}.db").exists():
            continue  # built before (possibly by --build-range processes)
        if done["built"] < size:
            side = SIDE_BY_NAME[name](path)
            for chunk in episodes(done["built"], size):
                t0 = time.perf_counter()
                side.build(chunk)
                done["seconds"] += time.perf_counter() - t0
                done["built"] += len(chunk)
                record.write_text(json.dumps(done))
            side.close()
        if done["built"] == size:
            snapshot({name: path}, workdir / f"snap-{size}")
        if not (workdir / f"snap-{size}" / f"{name}.db").exists():
            raise SystemExit(f"no copy of the {name} store at {size:,} in {workdir}")
    return round(float(done["seconds"]), 1)


def build_range(name: str, start: int, stop: int, workdir: Path) -> None:
    """Attempts ``start``..``stop - 1`` into one library's build store, skipping those already
    there (a build stopped mid-chunk, so a failed range can simply be run again); the seconds
    spent go to ``built-LIB-START.json``."""
    side = SIDE_BY_NAME[name](workdir / f"build-{name}.db")
    if name == "robotmem":
        have = {r[0] for r in side.db.conn.execute("SELECT content FROM memories")}
    else:  # graphmem: an attempt's time is T0 + its index (``GraphmemSide.build``)
        with sqlite3.connect(workdir / "build-graphmem.db") as conn:
            stamps = {r[0] for r in conn.execute("SELECT reference_time FROM episodes")}
        t0_ms = int(T0.timestamp() * 1000)
    spent = 0.0
    for chunk in episodes(start, stop):
        if name == "robotmem":
            chunk = [ep for ep in chunk if insight(ep) not in have]
        else:
            chunk = [ep for ep in chunk if t0_ms + 1000 * ep["idx"] not in stamps]
        t0 = time.perf_counter()
        side.build(chunk)
        spent += time.perf_counter() - t0
        (workdir / f"built-{name}-{start}.json").write_text(
            json.dumps({"start": start, "stop": stop, "seconds": spent,
                        "at": chunk[-1]["idx"] if chunk else None}))
    side.close()


def ratio(g: float, r: float) -> float | None:
    return round(g / r, 3) if r else None


def summary(size_result: dict[str, Any]) -> dict[str, Any]:
    w, lp, c = size_result["warm"], size_result["loop"], size_result["cold"]
    row: dict[str, Any] = {}
    for lib in ("graphmem", "robotmem"):
        row[lib] = {
            "warm_recall_p50_ms": w[lib]["recall"]["p50_ms"],
            "warm_recall_p95_ms": w[lib]["recall"]["p95_ms"],
            "loop_store_p50_ms": lp[lib]["store"]["p50_ms"],
            "loop_recall_p50_ms": lp[lib]["recall"]["p50_ms"],
            "loop_recall_p95_ms": lp[lib]["recall"]["p95_ms"],
            "cold_first_recall_ms": c[lib]["first_recall_ms"],
            "first_ever_recall_ms": size_result.get("cold_first_ever", {}).get(lib, {}).get(
                "first_recall_ms", 0.0),
            "cold_open_ms": c[lib]["open_ms"],
            "rss_mib": round(c[lib]["rss_kib"] / 1024, 1),
            "peak_rss_mib": round(c[lib]["hwm_kib"] / 1024, 1),
            "disk_mib": round(size_result["disk_bytes"][lib] / 2**20, 2),
            "overlap_at_5": w[lib]["overlap_at_5"],
            "precision_at_5": w[lib]["precision_at_5"],
        }
    g, r = row["graphmem"], row["robotmem"]
    row["ratio"] = {k: ratio(g[k], r[k]) for k in g if k.endswith(("_ms", "_mib"))}
    rt = row["ratio"]
    row["targets"] = {
        "warm recall <= 0.5x": rt["warm_recall_p50_ms"] is not None
        and rt["warm_recall_p50_ms"] <= 0.5,
        "loop recall p95 <= 1x": rt["loop_recall_p95_ms"] is not None
        and rt["loop_recall_p95_ms"] <= 1.0,
        "cold first recall <= 2x": rt["cold_first_recall_ms"] is not None
        and rt["cold_first_recall_ms"] <= 2.0,
        "RSS <= 1.5x": rt["rss_mib"] is not None and rt["rss_mib"] <= 1.5,
        "overlap@5 >= 0.95": g["overlap_at_5"] >= 0.95,
    }
    return row


def markdown(report: dict[str, Any]) -> str:
    sizes = [int(s) for s in sorted(report["sizes"], key=int)]
    rows = {s: report["summary"][str(s)] for s in sizes}
    head = "| graphmem / robotmem | " + " | ".join(f"{s:,}" for s in sizes) + " |"
    lines = [head, "|---" * (len(sizes) + 1) + "|"]

    def line(label: str, key: str, unit: str, fmt: str = "{:.1f}") -> None:
        cells = []
        for s in sizes:
            g, r = rows[s]["graphmem"][key], rows[s]["robotmem"][key]
            q = rows[s]["ratio"].get(key)
            cells.append(f"**{q:.2f}x** ({fmt.format(g)} vs {fmt.format(r)}{unit})"
                         if q is not None else "n/a")
        lines.append(f"| {label} | " + " | ".join(cells) + " |")

    line("warm recall p50", "warm_recall_p50_ms", " ms", "{:.2f}")
    line("warm recall p95", "warm_recall_p95_ms", " ms", "{:.2f}")
    line("recall right after a store, p50", "loop_recall_p50_ms", " ms", "{:.2f}")
    line("recall right after a store, p95", "loop_recall_p95_ms", " ms", "{:.2f}")
    line("store (loop), p50", "loop_store_p50_ms", " ms", "{:.2f}")
    line("first recall in a new process", "cold_first_recall_ms", " ms")
    line("first recall of the first process ever on the store (1 run)",
         "first_ever_recall_ms", " ms")
    line("opening the store in a new process", "cold_open_ms", " ms")
    line("process memory after 21 recalls (RSS)", "rss_mib", " MiB")
    line("peak process memory (VmHWM)", "peak_rss_mib", " MiB")
    line("disk (file + WAL)", "disk_mib", " MiB", "{:.2f}")
    cells = [f"{rows[s]['graphmem']['overlap_at_5']:.2f} vs "
             f"{rows[s]['robotmem']['overlap_at_5']:.2f}" for s in sizes]
    lines.append("| overlap@5 with the true 5 nearest successes (graphmem vs robotmem) | "
                 + " | ".join(cells) + " |")
    cells = [f"{rows[s]['graphmem']['precision_at_5']:.2f} vs "
             f"{rows[s]['robotmem']['precision_at_5']:.2f}" for s in sizes]
    lines.append("| top-5 that are successes on the object (graphmem vs robotmem) | "
                 + " | ".join(cells) + " |")
    lines.append("")
    for s in sizes:
        t = rows[s]["targets"]
        lines.append(f"- {s:,}: " + "; ".join(f"{k}: {'met' if ok else 'MISSED'}"
                                              for k, ok in t.items()))
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="200,2000,20000,100000")
    parser.add_argument("--queries", type=int, default=100)
    parser.add_argument("--quick", action="store_true", help="sizes 200 and 1,000, 30 queries")
    parser.add_argument("--workdir", type=Path, help="kept: the stores and each size's figures")
    parser.add_argument("--out", type=Path, default=Path("bench/results/experience_cost.json"))
    parser.add_argument("--redo", type=int, nargs="*", default=[],
                        help="measure these sizes again (from the kept copies)")
    parser.add_argument("--build-only", choices=sorted(SIDE_BY_NAME),
                        help="only grow this library's store through the sizes")
    parser.add_argument("--build-range", nargs=3, metavar=("LIB", "START", "STOP"),
                        help="store attempts START..STOP-1 into LIB's build store (several "
                             "such processes may fill one store at once; snapshot by hand)")
    parser.add_argument("--cold", nargs=2, metavar=("LIB", "PATH"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.cold:
        print(json.dumps(cold_child(args.cold[0], Path(args.cold[1]), json.load(sys.stdin))))
        return
    if args.quick:
        args.sizes, args.queries = "200,1000", 30
    sizes = sorted({int(s) for s in args.sizes.split(",")})
    queries, warm = make_queries(args.queries), make_queries(WARMUP, seed=99)
    own = args.workdir is None
    workdir = args.workdir or Path(tempfile.mkdtemp(prefix="experience-cost-"))
    workdir.mkdir(parents=True, exist_ok=True)
    if args.build_only:
        build_lib(args.build_only, sizes, workdir)
        return
    if args.build_range:
        name, start, stop = args.build_range
        build_range(name, int(start), int(stop), workdir)
        return
    state_file = workdir / "state.json"
    state: dict[str, Any] = (json.loads(state_file.read_text()) if state_file.exists()
                             else {"results": {}})
    print(f"versions {versions()}", flush=True)
    for size in sizes:
        if str(size) in state["results"] and size not in args.redo:
            continue
        build_s = {name: build_lib(name, [size], workdir) for name in SIDE_BY_NAME}
        print(f"{size:,}: build seconds so far {build_s}; load {loadavg()}", flush=True)
        paths = snapshot({n: workdir / f"snap-{size}" / f"{n}.db" for n in SIDE_BY_NAME},
                         workdir / "run")
        stored = Stored()
        for chunk in episodes(0, size):
            stored.add(chunk)
        result = measure(size, paths, stored, queries, warm, build_s)
        state["results"][str(size)] = result
        state_file.write_text(json.dumps(state, indent=1))
        print(json.dumps(summary(result)), flush=True)
    report = {
        "command": " ".join(["python", *sys.argv]),
        "machine": {"platform": platform.platform(), "cpu_count": os.cpu_count()},
        "versions": versions(),
        "queries": args.queries, "loop": LOOP, "cold_runs": COLD_RUNS,
        "sizes": [str(s) for s in sizes],
        "results": {str(s): state["results"][str(s)] for s in sizes},
        "summary": {str(s): summary(state["results"][str(s)]) for s in sizes},
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=1) + "\n")
    md_text = markdown(report)
    args.out.with_suffix(".md").write_text(md_text)
    print(md_text)
    if own:
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
