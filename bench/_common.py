"""Shared bench helpers: precomputed-vector embedder, synthetic corpora, percentiles, RSS, and the
retrieval benches' ranking of evidence units and its Recall@k / NDCG@10."""

from __future__ import annotations

import hashlib
import json
import math
import resource
import time
import zlib
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

# The recall queries every scale bench asks ("4242" becomes an episode number).
QUERIES = [
    "grasp red mug success",
    "which force worked for the blue bowl",
    "episode 4242 force peak",
    "slow approach speed sponge",
    "operator op3 duration",
    "bottle grip width",
    "failed grasps of the plate",
    "apple table1",
]


class PrecomputedEmbedder:
    """Vectors looked up, not computed: the bench measures graphmem, not a model.

    Each text maps to a fixed random unit vector (seeded by its CRC), like a cache of
    precomputed all-MiniLM-L6-v2 embeddings would.
    """

    def __init__(self, dim: int = 384, pool: int = 4096) -> None:
        self.dim = dim
        self.name = f"precomputed-{dim}"
        rng = np.random.default_rng(7)
        table = rng.standard_normal((pool, dim)).astype(np.float32)
        self.table = table / np.linalg.norm(table, axis=1, keepdims=True)

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        idx = [zlib.crc32(t.encode()) % len(self.table) for t in texts]
        return self.table[idx]


def robot_records(n: int, start: int = 0) -> list[dict[str, object]]:
    """n grasp episodes, 10 facts each (9 scalar leaves + 2 list items - subject)."""
    base = datetime(2024, 1, 1, tzinfo=UTC)
    rng = np.random.default_rng(start + 1)
    objects = ["red mug", "blue bowl", "sponge", "bottle", "plate", "fork", "apple", "box"]
    out: list[dict[str, object]] = []
    for i in range(start, start + n):
        force = float(np.round(rng.uniform(5, 20), 2))
        rec = {
            "episode": i,
            "task": "grasp",
            "object": objects[i % len(objects)],
            "success": bool(force < 14 and rng.random() > 0.2),
            "params": {
                "force_peak": force,
                "approach_speed": float(np.round(rng.uniform(0.05, 0.4), 3)),
                "grip_width": float(np.round(rng.uniform(0.02, 0.1), 3)),
            },
            "duration_s": float(np.round(rng.uniform(2, 9), 2)),
            "operator": f"op{i % 7}",
            "tags": ["lab", f"table{i % 3}"],
        }
        out.append(
            {
                "content": json.dumps(rec),
                "kind": "json",
                "source": "bench.jsonl",
                "reference_time": base + timedelta(seconds=i),
            }
        )
    return out


def package_signature() -> str:
    """A hash of every module of the installed ``graphmem`` package: the key under which a bench
    caches what it ingested (the ingest path spans many small modules; a hand-kept list of them
    goes stale when one is split)."""
    import graphmem

    package = Path(graphmem.__file__).parent
    h = hashlib.sha256()
    for path in sorted(package.rglob("*.py")):
        h.update(str(path.relative_to(package)).encode())
        h.update(path.read_bytes())
    return h.hexdigest()


def percentiles(samples: Sequence[float]) -> dict[str, float]:
    arr = np.asarray(samples) * 1000.0
    return {
        "p50_ms": round(float(np.percentile(arr, 50)), 2),
        "p95_ms": round(float(np.percentile(arr, 95)), 2),
        "p99_ms": round(float(np.percentile(arr, 99)), 2),
        "mean_ms": round(float(arr.mean()), 2),
    }


def rss_mb() -> float:
    """Peak resident set size of this process (Linux reports KiB)."""
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0, 1)


# The store methods a recall calls, timed by the scale benches.
STAGES = (
    "vector_facts",
    "vector_entities",
    "vector_episodes",
    "text_facts",
    "text_entities",
    "text_episodes",
    "find_entities",
    "speakers",
    "episode_context",
    "expand",
    "fact_stubs",
    "fact_records",
    "links",
    "episodes",
)


def instrument(
    store: Any, stages: Sequence[str]
) -> tuple[dict[str, float], Callable[[], None]]:
    """Seconds spent inside each named store method; the second value undoes the wrapping."""
    spent: dict[str, float] = defaultdict(float)
    wrapped: list[str] = []
    for name in stages:
        method = getattr(store, name, None)
        if method is None:
            continue

        def timed(*args: Any, _m: Callable[..., Any] = method, _n: str = name, **kw: Any) -> Any:
            t0 = time.perf_counter()
            try:
                return _m(*args, **kw)
            finally:
                spent[_n] += time.perf_counter() - t0

        setattr(store, name, timed)
        wrapped.append(name)

    def undo() -> None:
        for name in wrapped:
            delattr(store, name)

    return spent, undo


# ----------------------------------------------------------------------------- retrieval quality
def recall_ranking(
    result: Any,
    unit_of: Callable[[str], str | None],
    episode_unit: Callable[[Any], str | None] | None = None,
    *,
    episodes_first: bool = False,
) -> list[str]:
    """The retrieval benches' protocol: the evidence units (a turn, a dialog id, a session) of
    the returned facts' provenance episodes in fact rank order, then of
    ``RecallResult.episodes``, deduplicated (the first place kept).

    ``unit_of`` maps a provenance episode id to its unit, ``episode_unit`` a returned episode
    (default: ``unit_of`` its id); a unit of None is left out. ``episodes_first`` (a
    diagnostic, not the protocol) puts the returned episodes before the facts' provenance.
    """
    if episode_unit is None:
        episode_unit = lambda episode: unit_of(episode.id)  # noqa: E731
    from_facts = _units(unit_of(e) for hit in result.facts for e in hit.episode_ids)
    from_episodes = _units(episode_unit(ep) for ep in result.episodes)
    ranked = from_episodes + from_facts if episodes_first else from_facts + from_episodes
    return list(dict.fromkeys(ranked))


def _units(units: Iterable[str | None]) -> list[str]:
    return [u for u in units if u is not None]


def ranking_scores(
    ranked: Sequence[str],
    evidence: Sequence[str],
    ks: Sequence[int] = (5, 10),
    *,
    any_at: int | None = None,
) -> dict[str, float]:
    """R@k for each k (the share of the evidence units in the first k), ``any@any_at`` (1 when
    at least one is in the first any_at) and NDCG@10 with binary relevance."""
    rel = set(evidence)
    out = {f"R@{k}": len(rel & set(ranked[:k])) / len(rel) for k in ks}
    if any_at is not None:
        out[f"any@{any_at}"] = float(bool(rel & set(ranked[:any_at])))
    dcg = sum(1.0 / math.log2(i + 2) for i, d in enumerate(ranked[:10]) if d in rel)
    idcg = sum(1.0 / math.log2(i + 2) for i in range(min(len(rel), 10)))
    out["NDCG@10"] = dcg / idcg
    return out


def summarize_by_type(rows: Sequence[tuple[str, dict[str, float]]]) -> dict[str, Any]:
    """Each metric's mean (4 places) and the count per question type, then over ``all``."""
    groups: dict[str, list[dict[str, float]]] = defaultdict(list)
    for qtype, metrics in rows:
        groups[qtype].append(metrics)
        groups["all"].append(metrics)
    return {
        name: {"n": len(ms)}
        | {key: round(float(np.mean([m[key] for m in ms])), 4) for key in ms[0]}
        for name, ms in sorted(groups.items(), key=lambda g: (g[0] == "all", g[0]))
    }


def boot_ci(values: Sequence[float], n: int = 10_000, seed: int = 0) -> tuple[float, float]:
    """A 95 % bootstrap interval of the mean."""
    arr = np.asarray(values, dtype=float)
    rng = np.random.default_rng(seed)
    means = arr[rng.integers(0, len(arr), size=(n, len(arr)))].mean(axis=1)
    return float(np.percentile(means, 2.5)), float(np.percentile(means, 97.5))


def paired(a: Sequence[float], b: Sequence[float], unit: str = "seeds") -> dict[str, Any]:
    """a − b over paired units (seeds, questions): the mean difference with its bootstrap 95 %
    interval, how many units are better and worse, and the Wilcoxon signed-rank and paired t
    p-values."""
    from scipy import stats

    diff = np.asarray(a, dtype=float) - np.asarray(b, dtype=float)
    lo, hi = boot_ci(diff)
    if np.allclose(diff, 0):
        p_w, p_t = 1.0, 1.0
    else:
        p_w = float(stats.wilcoxon(diff).pvalue)
        p_t = float(stats.ttest_rel(a, b).pvalue)
    return {
        "mean_diff": round(float(diff.mean()), 4), "ci95": [round(lo, 4), round(hi, 4)],
        f"{unit}_better": int((diff > 0).sum()), f"{unit}_worse": int((diff < 0).sum()),
        "wilcoxon_p": p_w, "ttest_rel_p": p_t,
    }


def compare(first: list[list[Any]], other: list[list[Any]]) -> dict[str, Any]:
    """``first`` − ``other`` question by question (the same questions in the same order), over
    all questions and per type: mean difference, 95 % bootstrap interval, questions better and
    worse, Wilcoxon and paired t p-values."""
    if [row[0] for row in first] != [row[0] for row in other]:
        raise ValueError("the two rankings were scored on different questions")
    out: dict[str, Any] = {}
    for qtype in ["all", *sorted({row[0] for row in first})]:
        rows = [i for i, row in enumerate(first) if qtype in ("all", row[0])]
        out[qtype] = {
            metric: paired([first[i][col] for i in rows], [other[i][col] for i in rows],
                           "questions")
            for col, metric in enumerate(("R@5", "R@10", "NDCG@10"), start=1)
        }
    return out
