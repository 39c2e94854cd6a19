"""Experience memory cost: graphmem vs robotmem 0.1.3 on the same FetchPush-like episodes.

    python bench/experience_cost.py --out bench/results/experience_cost.json   # 2,000 x 3
    python bench/experience_cost.py --quick                                    # 300 x 1 smoke

Both libraries get the same N structured push episodes (task text, state, params, outcome and a
50-step trajectory payload) and the same hashed n-gram vectors (graphmem's ``HashEmbedder(384)``,
wrapped into robotmem's ``Embedder`` protocol; robotmem's default fastembed model is never
loaded). Each episode is stored in both, one call each, the order alternating; at 200 and at N
stored episodes both answer the same recall list ("successful attempts on this object, nearest
first": graphmem ``recall_experiences(..., state={"object_pos"}, k=5, outcome="success_only")``,
robotmem ``recall(n=5, context_filter={"task.success": True}, spatial_sort=object_pos)``), again
alternating, after a few warm-up calls. DB bytes are the SQLite file plus ``-wal``/``-shm`` after a
``PRAGMA wal_checkpoint(TRUNCATE)`` from a separate connection. The whole run repeats
``--repeats`` times on fresh stores; the summary is the median across repeats.

robotmem loads sqlite-vec through ``Connection.enable_load_extension``, which this Python's
``sqlite3`` lacks; robotmem is therefore imported with ``pysqlite3`` as its ``sqlite3`` (built from
source, ``pip install --no-binary pysqlite3 pysqlite3``, so both libraries run the same system
libsqlite3). Without it robotmem silently runs BM25-only; the bench refuses that.
"""

from __future__ import annotations

import argparse
import contextlib
import cProfile
import hashlib
import importlib.metadata as md
import io
import json
import os
import platform
import pstats
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

os.environ.setdefault("HF_HUB_OFFLINE", "1")  # nothing here may reach for a model download

from graphmem import GraphMemory, HashEmbedder

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
LOOP = 50  # store-then-recall cycles at N


# ---------------------------------------------------------------------------------- workload
def make_episodes(n: int, seed: int = 11) -> list[dict[str, Any]]:
    """n FetchPush-like attempts: success depends on force, offset and speed."""
    rng = np.random.default_rng(seed)
    out: list[dict[str, Any]] = []
    for i in range(n):
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
        out.append({
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
            "trajectory": [[round(float(v), 4) for v in row] for row in path],
        })
    return out


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
    """robotmem with pysqlite3 as its sqlite3 (sqlite-vec needs enable_load_extension)."""
    import pysqlite3.dbapi2 as psql  # type: ignore[import-not-found]

    saved = sys.modules["sqlite3"]
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


# ---------------------------------------------------------------------------------- measuring
def db_bytes(path: Path) -> dict[str, Any]:
    """Checkpoint the WAL into the main file (separate connection), then sum the files."""
    con = sqlite3.connect(str(path))
    try:
        busy, _log, _moved = con.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
        page = con.execute("PRAGMA page_size").fetchone()[0]
        free = con.execute("PRAGMA freelist_count").fetchone()[0]
    finally:
        con.close()
    files = {s or "db": (os.path.getsize(f"{path}{s}") if os.path.exists(f"{path}{s}") else 0)
             for s in ("", "-wal", "-shm")}
    return {"bytes": sum(files.values()), "files": files, "checkpoint_busy": busy,
            "freelist_bytes": free * page, "page_size": page}


def dbstat(path: Path) -> list[tuple[str, int]]:
    con = sqlite3.connect(str(path))
    try:
        rows = con.execute(
            "SELECT name, SUM(pgsize) FROM dbstat GROUP BY name ORDER BY 2 DESC"
        ).fetchall()
    except sqlite3.Error as e:  # dbstat not compiled in
        return [(f"dbstat unavailable: {e}", 0)]
    finally:
        con.close()
    return [(str(n), int(b)) for n, b in rows]


def pct(samples: list[float]) -> dict[str, float]:
    arr = np.asarray(samples) * 1000.0
    return {"p50_ms": round(float(np.percentile(arr, 50)), 3),
            "p95_ms": round(float(np.percentile(arr, 95)), 3),
            "mean_ms": round(float(arr.mean()), 3), "n": len(samples)}


def relevance(
    hits: list[tuple[str, int]], q: dict[str, Any], by_key: dict[tuple[str, int], dict[str, Any]],
    stored: int, oracle: Callable[[dict[str, Any], int], float],
) -> dict[str, float]:
    eps = [by_key[h] for h in hits if h in by_key]
    good = [e for e in eps if e["object"] == q["object"] and e["outcome"]["success"]]
    dist = [float(np.linalg.norm(np.subtract(e["state"]["object_pos"], q["target"])))
            for e in good]
    return {
        "returned": len(hits),
        "precision": len(good) / 5.0,  # share of the 5 slots holding a success on that object
        "mean_dist": float(np.mean(dist)) if dist else float("nan"),
        "oracle_dist": oracle(q, stored),
    }


def make_oracle(episodes: list[dict[str, Any]]) -> Callable[[dict[str, Any], int], float]:
    """Mean distance of the 5 truly nearest successes of that object among the first n."""
    pos = np.array([e["state"]["object_pos"] for e in episodes])
    obj = np.array([e["object"] for e in episodes])
    ok = np.array([e["outcome"]["success"] for e in episodes])

    def oracle(q: dict[str, Any], n: int) -> float:
        mask = (obj[:n] == q["object"]) & ok[:n]
        d = np.sort(np.linalg.norm(pos[:n][mask] - np.array(q["target"]), axis=1))[:5]
        return float(d.mean()) if len(d) else float("nan")

    return oracle


def loadavg() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


def recall_phase(
    sides: list[Any], queries: list[dict[str, Any]], warm: list[dict[str, Any]],
    by_key: dict[tuple[str, int], dict[str, Any]], stored: int,
    oracle: Callable[[dict[str, Any], int], float],
) -> dict[str, Any]:
    out: dict[str, Any] = {}
    lat: dict[str, list[float]] = {s.name: [] for s in sides}
    cpu: dict[str, list[float]] = {s.name: [] for s in sides}
    rel: dict[str, list[dict[str, float]]] = {s.name: [] for s in sides}
    first: dict[str, float] = {}
    for s in sides:
        t0 = time.perf_counter()
        s.recall(warm[0])
        first[s.name] = (time.perf_counter() - t0) * 1000
        for q in warm[1:]:
            s.recall(q)
    for i, q in enumerate(queries):
        order = sides if i % 2 == 0 else sides[::-1]
        for s in order:
            c0, t0 = time.process_time(), time.perf_counter()
            hits = s.recall(q)
            lat[s.name].append(time.perf_counter() - t0)
            cpu[s.name].append(time.process_time() - c0)
            rel[s.name].append(relevance(hits, q, by_key, stored, oracle))
    for s in sides:
        r = rel[s.name]
        out[s.name] = {
            "wall": pct(lat[s.name]),
            "cpu": pct(cpu[s.name]),
            "first_recall_ms": round(first[s.name], 3),
            "mean_returned": round(float(np.mean([x["returned"] for x in r])), 3),
            "precision_at_5": round(float(np.mean([x["precision"] for x in r])), 4),
            "mean_dist_of_relevant_m": round(float(np.nanmean([x["mean_dist"] for x in r])), 4),
            "oracle_mean_dist_m": round(float(np.nanmean([x["oracle_dist"] for x in r])), 4),
        }
    return out


def one_repeat(
    rep: int, episodes: list[dict[str, Any]], queries: list[dict[str, Any]],
    warm: list[dict[str, Any]], workdir: Path, checkpoints: list[int],
    extra: list[dict[str, Any]],
) -> tuple[dict[str, Any], dict[str, Path]]:
    d = workdir / f"rep{rep}"
    shutil.rmtree(d, ignore_errors=True)
    d.mkdir(parents=True)
    sides = [make(d / f"{make.name}.db") for make in SIDES]  # type: ignore[attr-defined]
    by_key = {(e["run_id"], e["episode"]): e for e in episodes}
    oracle = make_oracle(episodes)
    store_lat: dict[str, list[float]] = {s.name: [] for s in sides}
    store_cpu: dict[str, list[float]] = {s.name: [] for s in sides}
    result: dict[str, Any] = {"load_before": loadavg(), "at": {}}
    t_start = time.perf_counter()
    done = 0
    for stop in checkpoints:
        for i in range(done, stop):
            ep = episodes[i]
            order = sides if i % 2 == 0 else sides[::-1]
            for s in order:
                args = s.prepare(ep)
                c0, t0 = time.process_time(), time.perf_counter()
                s.store(args)
                store_lat[s.name].append(time.perf_counter() - t0)
                store_cpu[s.name].append(time.process_time() - c0)
        done = stop
        at: dict[str, Any] = {"load": loadavg()}
        at["recall"] = recall_phase(sides, queries, warm, by_key, stop, oracle)
        at["store_so_far"] = {
            s.name: {"wall": pct(store_lat[s.name]), "cpu": pct(store_cpu[s.name])}
            for s in sides
        }
        at["disk"] = {s.name: db_bytes(s.path) for s in sides}
        at["counts"] = {s.name: s.counts() for s in sides}
        at["duplicates_rejected"] = {s.name: s.duplicates for s in sides}
        result["at"][str(stop)] = at
    result["loop"] = loop_phase(sides, extra, queries)
    result["store"] = {
        s.name: {"wall": pct(store_lat[s.name]), "cpu": pct(store_cpu[s.name]),
                 "total_s": round(sum(store_lat[s.name]), 3)}
        for s in sides
    }
    paths = {s.name: s.path for s in sides}
    for s in sides:
        s.close()
    result["reopen"] = reopen_phase(paths, queries[0], rep)
    result["load_after"] = loadavg()
    result["seconds"] = round(time.perf_counter() - t_start, 1)
    return result, paths


def loop_phase(
    sides: list[Any], extra: list[dict[str, Any]], queries: list[dict[str, Any]]
) -> dict[str, Any]:
    """An agent loop at N: store one new attempt, then recall before the next one."""
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


def reopen_phase(paths: dict[str, Path], q: dict[str, Any], rep: int) -> dict[str, Any]:
    """Open the store again (new process state, warm OS page cache) and time the first recall."""
    out: dict[str, Any] = {}
    makers = SIDES if rep % 2 == 0 else SIDES[::-1]
    for make in makers:
        name = make.name  # type: ignore[attr-defined]
        t0 = time.perf_counter()
        side = make(paths[name])
        t1 = time.perf_counter()
        side.recall(q)
        t2 = time.perf_counter()
        side.close()
        out[name] = {"open_ms": round((t1 - t0) * 1000, 3),
                     "first_recall_ms": round((t2 - t1) * 1000, 3)}
    return out


def profile_graphmem(
    path: Path, extra: list[dict[str, Any]],
    queries: list[dict[str, Any]], top: int = 20,
) -> dict[str, Any]:
    """cProfile (graphmem, the last repeat's store at N + LOOP): the first recall after opening;
    recall_experiences; a recall right after each of LOOP stores (the recall alone profiled);
    add_experience of the rest of ``extra``."""
    out: dict[str, Any] = {}
    side = GraphmemSide(path)
    prof = cProfile.Profile()
    prof.enable()
    side.recall(queries[0])
    prof.disable()
    out["first_recall_after_open"] = _pstats(prof, 1, top)
    for q in queries[1:WARMUP]:
        side.recall(q)
    prof = cProfile.Profile()
    prof.enable()
    for q in queries:
        side.recall(q)
    prof.disable()
    out["recall_experiences"] = _pstats(prof, len(queries), top)
    prof = cProfile.Profile()
    for j, ep in enumerate(extra[:LOOP]):
        side.store(side.prepare(ep))
        prof.enable()
        side.recall(queries[j % len(queries)])
        prof.disable()
    out["recall_after_store"] = _pstats(prof, LOOP, top)
    args = [side.prepare(ep) for ep in extra[LOOP:]]
    prof = cProfile.Profile()
    prof.enable()
    for a in args:
        side.store(a)
    prof.disable()
    out["add_experience"] = _pstats(prof, len(args), top)
    side.close()
    return out


def _pstats(prof: cProfile.Profile, calls: int, top: int) -> dict[str, Any]:
    res: dict[str, Any] = {"calls": calls}
    for key in ("cumulative", "tottime"):
        buf = io.StringIO()
        st = pstats.Stats(prof, stream=buf)
        st.strip_dirs().sort_stats(key).print_stats(top)
        text = buf.getvalue()
        res[key] = text[text.find("   ncalls"):].rstrip()
    return res


def versions() -> dict[str, str]:
    out = {"python": platform.python_version(), "sqlite": sqlite3.sqlite_version}
    for pkg in ("graphmem", "robotmem", "sqlite-vec", "pysqlite3", "numpy", "pydantic"):
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
    with contextlib.suppress(Exception):
        import pysqlite3.dbapi2 as psql  # type: ignore[import-not-found]

        out["pysqlite3_sqlite"] = psql.sqlite_version
    return out


def median_summary(reps: list[dict[str, Any]], n: int) -> dict[str, Any]:
    def med(get: Callable[[dict[str, Any]], float]) -> float:
        return round(statistics.median(get(r) for r in reps), 3)

    names = ("graphmem", "robotmem")
    s: dict[str, Any] = {}
    for lib in names:
        s[lib] = {
            "store_p50_ms": med(lambda r, lib=lib: r["store"][lib]["wall"]["p50_ms"]),
            "store_p95_ms": med(lambda r, lib=lib: r["store"][lib]["wall"]["p95_ms"]),
            "store_cpu_p50_ms": med(lambda r, lib=lib: r["store"][lib]["cpu"]["p50_ms"]),
        }
        for at in sorted({int(k) for k in reps[0]["at"]}):
            k = str(at)
            s[lib][f"recall_p50_ms@{at}"] = med(
                lambda r, k=k, lib=lib: r["at"][k]["recall"][lib]["wall"]["p50_ms"])
            s[lib][f"recall_p95_ms@{at}"] = med(
                lambda r, k=k, lib=lib: r["at"][k]["recall"][lib]["wall"]["p95_ms"])
            s[lib][f"recall_cpu_p50_ms@{at}"] = med(
                lambda r, k=k, lib=lib: r["at"][k]["recall"][lib]["cpu"]["p50_ms"])
            s[lib][f"db_bytes@{at}"] = int(med(
                lambda r, k=k, lib=lib: r["at"][k]["disk"][lib]["bytes"]))
            s[lib][f"precision_at_5@{at}"] = med(
                lambda r, k=k, lib=lib: r["at"][k]["recall"][lib]["precision_at_5"])
            s[lib][f"mean_dist_m@{at}"] = med(
                lambda r, k=k, lib=lib: r["at"][k]["recall"][lib]["mean_dist_of_relevant_m"])
            s[lib][f"oracle_dist_m@{at}"] = med(
                lambda r, k=k, lib=lib: r["at"][k]["recall"][lib]["oracle_mean_dist_m"])
            s[lib][f"mean_returned@{at}"] = med(
                lambda r, k=k, lib=lib: r["at"][k]["recall"][lib]["mean_returned"])
        s[lib]["loop_store_p50_ms"] = med(lambda r, lib=lib: r["loop"][lib]["store"]["p50_ms"])
        s[lib]["loop_recall_p50_ms"] = med(lambda r, lib=lib: r["loop"][lib]["recall"]["p50_ms"])
        s[lib]["loop_recall_p95_ms"] = med(lambda r, lib=lib: r["loop"][lib]["recall"]["p95_ms"])
        s[lib]["reopen_open_ms"] = med(lambda r, lib=lib: r["reopen"][lib]["open_ms"])
        s[lib]["reopen_first_recall_ms"] = med(
            lambda r, lib=lib: r["reopen"][lib]["first_recall_ms"])
    g, rb = s["graphmem"], s["robotmem"]
    s["ratio_graphmem_over_robotmem"] = {
        key: round(g[key] / rb[key], 3) if rb[key] else None
        for key in g if "ms" in key or "bytes" in key
    }
    s["targets_at_n"] = {
        "recall_p50 <= robotmem": g[f"recall_p50_ms@{n}"] <= rb[f"recall_p50_ms@{n}"],
        "store_p50 <= 2x robotmem": g["store_p50_ms"] <= 2 * rb["store_p50_ms"],
        "db_bytes <= 2x robotmem": g[f"db_bytes@{n}"] <= 2 * rb[f"db_bytes@{n}"],
    }
    return s


def markdown(report: dict[str, Any]) -> str:
    s, n = report["summary"], report["episodes"]
    small = report["checkpoints"][0]
    g, r, ratio = s["graphmem"], s["robotmem"], s["ratio_graphmem_over_robotmem"]

    def row(label: str, key: str, fmt: str = "{:.2f}", unit: str = " ms") -> str:
        return (f"| {label} | {fmt.format(g[key])}{unit} | {fmt.format(r[key])}{unit} | "
                f"{ratio[key]:.2f}x |")

    def mb(key: str) -> str:
        return (f"| DB bytes at {int(key.split('@')[1]):,} | {g[key] / 2**20:.2f} MiB | "
                f"{r[key] / 2**20:.2f} MiB | {ratio[key]:.2f}x |")

    v = report["versions"]
    lines = [
        f"### Experience memory cost vs robotmem {v.get('robotmem', '?')} "
        "(`experience_cost.py`; `results/experience_cost.json`)",
        "",
        "```bash",
        "pip install robotmem==0.1.3 && pip install --no-binary pysqlite3 pysqlite3",
        report["command"],
        "```",
        "",
        f"{n:,} FetchPush-like push attempts (8 objects; state, params, outcome and a 50x3 "
        "trajectory payload) stored in both libraries, hashed n-gram vectors (384) on both sides "
        f"(graphmem's `HashEmbedder` wrapped for robotmem; sqlite-vec {v.get('sqlite-vec', '?')} "
        f"loaded and holding every vector). {report['queries']} recall queries at {small:,} and "
        f"{n:,} stored: 5 successful attempts on the named object nearest a target position "
        "(graphmem `recall_experiences(..., state={'object_pos': …}, k=5, "
        "outcome='success_only')`, robotmem `recall(n=5, context_filter={'task.success': True}, "
        "spatial_sort={'field': 'spatial.object_pos', …})`). Calls alternate between the "
        f"libraries; medians over {report['repeats']} repeats; wall clock on the shared 2-core "
        f"machine (load {report['load_before'][0]}–{report['load_after'][0]}). DB bytes: file "
        "+ -wal + -shm after `PRAGMA wal_checkpoint(TRUNCATE)`.",
        "",
        "| | graphmem | robotmem | graphmem / robotmem |",
        "|---|---|---|---|",
        row("store p50", "store_p50_ms"),
        row("store p95", "store_p95_ms"),
        row(f"recall p50 at {small:,}", f"recall_p50_ms@{small}"),
        row(f"recall p95 at {small:,}", f"recall_p95_ms@{small}"),
        row(f"recall p50 at {n:,}", f"recall_p50_ms@{n}"),
        row(f"recall p95 at {n:,}", f"recall_p95_ms@{n}"),
        mb(f"db_bytes@{small}"),
        mb(f"db_bytes@{n}"),
        row(f"loop at {n:,}: store, then recall p50", "loop_recall_p50_ms"),
        row(f"loop at {n:,}: store, then recall p95", "loop_recall_p95_ms"),
        row(f"first recall after reopening at {n:,}", "reopen_first_recall_ms"),
        f"| top-5 that are successes on the object, at {n:,} | {g[f'precision_at_5@{n}']:.2f} "
        f"| {r[f'precision_at_5@{n}']:.2f} | |",
        f"| their mean distance to the target (oracle {g[f'oracle_dist_m@{n}'] * 100:.1f} cm) | "
        f"{g[f'mean_dist_m@{n}'] * 100:.1f} cm | {r[f'mean_dist_m@{n}'] * 100:.1f} cm | |",
        "",
        "Reading it: robotmem's `spatial_sort` orders only the 20 BM25 and 20 vector candidates "
        "it fetched (4 x n each), so its successes lie farther from the target than the true "
        "nearest; graphmem scores every stored attempt of the group from an in-process cache "
        "(the store's change token refreshes it incrementally, which is what a recall right "
        "after a store pays; reopening rebuilds it, the first-recall row). With hashed vectors "
        "graphmem gives embedding similarity weight 0 (`HashEmbedder.recall_weight`), so its "
        "recall does no vector search; it stores the episode vector all the same. robotmem's "
        "sqlite-vec table allocates vectors 1,024 at a time (1.5 MiB per chunk at 384 floats), "
        "which is most of its bytes at 200.",
        "",
        f"Targets at {n:,} (graphmem): " + "; ".join(
            f"{k}: {'met' if ok else 'missed'}" for k, ok in s["targets_at_n"].items()) + ".",
    ]
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--episodes", type=int, default=2000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--small", type=int, default=200, help="first recall/bytes checkpoint")
    parser.add_argument("--quick", action="store_true", help="300 episodes, 1 repeat, 50 queries")
    parser.add_argument("--no-profile", action="store_true")
    parser.add_argument("--out", type=Path, default=Path("bench/results/experience_cost.json"))
    parser.add_argument("--workdir", type=Path)
    args = parser.parse_args()
    if args.quick:
        args.episodes, args.repeats, args.queries = 300, 1, 50
    n = args.episodes
    checkpoints = sorted({min(args.small, n), n})
    episodes = make_episodes(n + 2 * LOOP + 200)
    queries = make_queries(args.queries)
    warm = make_queries(WARMUP, seed=99)
    own_workdir = args.workdir is None
    workdir = args.workdir or Path(tempfile.mkdtemp(prefix="experience-cost-"))
    workdir.mkdir(parents=True, exist_ok=True)
    report: dict[str, Any] = {
        "command": " ".join(["python", *sys.argv]),
        "machine": {"platform": platform.platform(), "machine": platform.machine(),
                    "cpu_count": os.cpu_count()},
        "versions": versions(),
        "episodes": n,
        "repeats": args.repeats,
        "queries": args.queries,
        "checkpoints": checkpoints,
        "embedder": f"graphmem HashEmbedder(dim={DIM}) on both sides",
        "disk_method": "PRAGMA wal_checkpoint(TRUNCATE) from a separate connection, then "
                       "size(db) + size(-wal) + size(-shm); stores still open",
        "load_before": loadavg(),
        "runs": [],
    }
    print(f"versions {report['versions']}", flush=True)
    paths: dict[str, Path] = {}
    for rep in range(args.repeats):
        res, paths = one_repeat(rep, episodes[:n], queries, warm, workdir, checkpoints,
                                 episodes[n:n + LOOP])
        report["runs"].append(res)
        st, last = res["store"], res["at"][str(n)]
        print(f"repeat {rep}: {res['seconds']} s, load {res['load_before']} -> "
              f"{res['load_after']}", flush=True)
        for lib in ("graphmem", "robotmem"):
            print(f"  {lib:9s} store p50 {st[lib]['wall']['p50_ms']:.2f} ms  "
                  f"recall p50@{n} {last['recall'][lib]['wall']['p50_ms']:.2f} ms  "
                  f"bytes@{n} {last['disk'][lib]['bytes']:,}  "
                  f"p@5 {last['recall'][lib]['precision_at_5']:.2f}  "
                  f"counts {last['counts'][lib]}", flush=True)
    report["summary"] = median_summary(report["runs"], n)
    # The last repeat's stores after the loop (N + LOOP attempts), before the profile adds more.
    report["dbstat_after_loop"] = {lib: dbstat(p) for lib, p in paths.items()}
    if not args.no_profile:
        report["profile_graphmem"] = profile_graphmem(
            paths["graphmem"], episodes[n + LOOP:], queries)
    report["load_after"] = loadavg()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2) + "\n")
    md_text = markdown(report)
    args.out.with_suffix(".md").write_text(md_text)
    print(json.dumps(report["summary"], indent=2))
    print(md_text)
    if own_workdir:
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
