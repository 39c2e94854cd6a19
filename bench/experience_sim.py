"""Experience memory where memory matters, with controls: pushing objects to targets on a table.

    python bench/experience_sim.py --out bench/results/experience_sim.json  # 20 seeds x 200
    python bench/experience_sim.py --quick --out /tmp/experience_sim.json    # 5 seeds x 100

**The task.** A light, deterministic 2-D simulation (no physics engine). A 2 m x 1 m table has
two surface regions (x < 1 and x >= 1); one of them, drawn per seed, is a felt mat that brakes
sliding objects (kappa x 0.4-0.6). Eight named objects ("red cube", "blue puck", ...) each have a
HIDDEN sliding coefficient kappa, drawn per seed (log-uniform in 0.3-2.0), so no answer carries
over from one seed to the next. A push with force F at angle a makes the object slide
``kappa_obj * kappa_region * F**2`` metres (x a lognormal factor, sd 4%) in direction a (+ noise,
sd 0.02 rad). Each episode draws an object, a start position and a goal 0.25-0.8 m away in the
same region; success is ending within 5 cm of the goal. The angle follows from the visible state
(object position, goal position); the right force depends on the distance AND on the object's
and region's hidden coefficients, which only the outcomes of earlier pushes reveal.

**The policy** is the same in every memory arm: it is handed some past attempts, turns each
into a coefficient estimate ``traveled / force**2``, takes the median (in log space) and pushes
with ``sqrt(distance / estimate)``; handed nothing, it uses the population prior. The arms differ
ONLY in which past attempts the policy is handed (k of them, default 5):

* ``none``: nothing (the prior force every time);
* ``cautious``: no memory, always 70% of the prior force (a behaviour change without memory);
* ``random``: k attempts drawn at random from the run's own past attempts;
* ``graphmem``: ``mem.recall_experiences(task, state={"object_pos": ...}, k=k,
  outcome="success_first", filters={"state.object": obj})`` over the arm's own store, into
  which every attempt goes with ``mem.add_experience``;
* ``graphmem_nofilter`` (ablation): the same recall without the object filter, so only the
  text query (which names the object) and the state nearest-neighbour choose the attempts;
* ``graphmem_any`` / ``graphmem_nofilter_any`` (optional, ``--arms``): the same two recalls with
  ``outcome="any"``. The policy ignores order, so they differ from ``success_first`` only if
  ``success_first`` changes WHICH k attempts come back (it did before it was limited to
  reordering the k best matches: 0.47 vs 0.75 success, successes of the other region or of other
  objects pushing the matching failures out);
* ``lookup_knn`` (reference, no graphmem): a hand-coded lookup in a Python list, the k nearest
  attempts (by object position) on the same object: what an ideal retrieval would hand over;
* ``oracle``: the true coefficients (upper bound).

All arms see the same seeds, the same episode sequence and the same noise draws (paired).
Reported per arm: success rate over all episodes and over the later half of each run (mean over
seeds, 95% bootstrap CI over seeds), paired tests over seeds (Wilcoxon signed-rank and paired t),
the share of handed-over attempts that are on the same object / in the same region, and
graphmem's recall and store latencies (wall clock, informational).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import shutil
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np
import scipy

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import graphmem
from bench._common import boot_ci, paired
from graphmem import GraphMemory

OBJECTS = [
    "red cube", "blue puck", "green cylinder", "yellow sponge",
    "steel nut", "wooden block", "glass coaster", "foam brick",
]
TABLE_W, TABLE_H = 2.0, 1.0  # metres; region 0 is x < 1, region 1 is x >= 1
MARGIN = 0.05
KAPPA_RANGE = (0.3, 2.0)  # per-object sliding coefficient, log-uniform (m per unit force^2)
MAT_RANGE = (0.4, 0.6)  # the felt mat's multiplier, log-uniform
DIST_RANGE = (0.25, 0.8)  # start-goal distance (m)
TOL = 0.05  # success: final distance to the goal below this (m)
NOISE_DIST = 0.04  # sd of the log of the slide-length factor
NOISE_ANGLE = 0.02  # sd of the push direction (rad)
F_MAX = 4.0
CAUTIOUS = 0.7
# The population prior: exp(E[log kappa_obj] + E[log kappa_region]), half the table being the mat.
PRIOR_KAPPA = math.exp(
    0.5 * (math.log(KAPPA_RANGE[0]) + math.log(KAPPA_RANGE[1]))
    + 0.5 * 0.5 * (math.log(MAT_RANGE[0]) + math.log(MAT_RANGE[1]))
)
ARMS = [
    "none", "cautious", "random", "graphmem", "graphmem_any", "graphmem_nofilter",
    "graphmem_nofilter_any", "lookup_knn", "oracle",
]
DEFAULT_ARMS = [a for a in ARMS if not a.endswith("_any")]
GRAPHMEM_ARMS = {"graphmem", "graphmem_any", "graphmem_nofilter", "graphmem_nofilter_any"}
TESTS = [
    ("graphmem", "none"),
    ("graphmem", "random"),
    ("graphmem", "cautious"),
    ("graphmem_any", "random"),
    ("oracle", "graphmem"),
    ("lookup_knn", "graphmem"),
    ("graphmem", "graphmem_any"),
    ("graphmem", "graphmem_nofilter"),
    ("graphmem_any", "graphmem_nofilter_any"),
    ("lookup_knn", "graphmem_any"),
    ("random", "none"),
]
GROUP = "sim"
CLOCK = datetime(2025, 1, 1, tzinfo=UTC)  # the simulation's clock: episode i at CLOCK + i s


def task_text(obj: str) -> str:
    return f"push the {obj} to the target"


# --------------------------------------------------------------------------- the world


@dataclass
class Episode:
    obj: str
    pos: tuple[float, float]
    goal: tuple[float, float]
    region: int
    z_dist: float  # standard-normal noise draws, shared by every arm (common random numbers)
    z_angle: float

    @property
    def distance(self) -> float:
        return math.hypot(self.goal[0] - self.pos[0], self.goal[1] - self.pos[1])

    def state(self) -> dict[str, Any]:
        return {
            "object": self.obj,
            "object_pos": [round(self.pos[0], 4), round(self.pos[1], 4)],
            "goal_pos": [round(self.goal[0], 4), round(self.goal[1], 4)],
        }


@dataclass
class World:
    seed: int
    kappa: dict[str, float]  # hidden, per object
    mat_region: int  # which region is the felt mat
    mat: float  # its multiplier
    episodes: list[Episode] = field(default_factory=list)

    def coefficient(self, ep: Episode) -> float:
        return self.kappa[ep.obj] * (self.mat if ep.region == self.mat_region else 1.0)

    def push(self, ep: Episode, force: float, angle: float) -> dict[str, Any]:
        traveled = self.coefficient(ep) * force**2 * math.exp(NOISE_DIST * ep.z_dist)
        heading = angle + NOISE_ANGLE * ep.z_angle
        final = (ep.pos[0] + traveled * math.cos(heading), ep.pos[1] + traveled * math.sin(heading))
        miss = math.hypot(final[0] - ep.goal[0], final[1] - ep.goal[1])
        return {
            "success": bool(miss < TOL),
            "final_distance": round(miss, 5),
            "traveled": round(traveled, 5),
            "final_pos": [round(final[0], 4), round(final[1], 4)],
        }


def region_of(x: float) -> int:
    return 0 if x < TABLE_W / 2 else 1


def make_world(seed: int, n_episodes: int) -> World:
    rng = np.random.default_rng(10_000 + seed)
    lo, hi = np.log(KAPPA_RANGE)
    kappa = {o: float(np.exp(rng.uniform(lo, hi))) for o in OBJECTS}
    mat_region = int(rng.integers(2))
    mat = float(np.exp(rng.uniform(*np.log(MAT_RANGE))))
    world = World(seed, kappa, mat_region, mat)
    for _ in range(n_episodes):
        obj = OBJECTS[int(rng.integers(len(OBJECTS)))]
        region = int(rng.integers(2))
        x0 = region * TABLE_W / 2
        while True:
            pos = (x0 + rng.uniform(MARGIN, TABLE_W / 2 - MARGIN),
                   rng.uniform(MARGIN, TABLE_H - MARGIN))
            d, th = rng.uniform(*DIST_RANGE), rng.uniform(-math.pi, math.pi)
            goal = (pos[0] + d * math.cos(th), pos[1] + d * math.sin(th))
            if (x0 + MARGIN <= goal[0] <= x0 + TABLE_W / 2 - MARGIN
                    and MARGIN <= goal[1] <= TABLE_H - MARGIN):
                break
        world.episodes.append(
            Episode(obj, pos, goal, region, float(rng.standard_normal()),
                    float(rng.standard_normal()))
        )
    return world


# --------------------------------------------------------------------------- the policy


def estimate(shown: Sequence[dict[str, Any]]) -> float | None:
    """Median (log space) of traveled / force**2 over the attempts handed over."""
    logs = []
    for att in shown:
        f = float(att["params"].get("force", 0.0))
        t = float(att["outcome"].get("traveled", 0.0))
        if f > 1e-6 and t > 1e-9:
            logs.append(math.log(t / f**2))
    return math.exp(float(np.median(logs))) if logs else None


def policy(ep: Episode, coefficient: float | None, scale: float = 1.0) -> dict[str, float]:
    angle = math.atan2(ep.goal[1] - ep.pos[1], ep.goal[0] - ep.pos[0])
    kappa = coefficient if coefficient is not None else PRIOR_KAPPA
    force = min(F_MAX, scale * math.sqrt(ep.distance / kappa))
    return {"force": round(force, 5), "angle": round(angle, 5)}


# --------------------------------------------------------------------------- the arms


@dataclass
class ArmRun:
    success: list[bool] = field(default_factory=list)
    shown_n: list[int] = field(default_factory=list)
    same_object: list[float] = field(default_factory=list)  # per episode with >= 1 shown
    same_region: list[float] = field(default_factory=list)
    recall_s: list[float] = field(default_factory=list)
    store_s: list[float] = field(default_factory=list)
    example: dict[str, Any] | None = None


def record(ep: Episode, params: dict[str, float], outcome: dict[str, Any]) -> dict[str, Any]:
    return {"task": task_text(ep.obj), "state": ep.state(), "params": params, "outcome": outcome}


def stuck_share(world: World, success: Sequence[bool], start: int) -> float:
    """Of the (object, region) cells with >= 3 episodes from ``start`` on, the share that never
    succeed there: a policy handed the wrong attempts again and again."""
    cells: dict[tuple[str, int], list[bool]] = {}
    for ep, ok in list(zip(world.episodes, success, strict=True))[start:]:
        cells.setdefault((ep.obj, ep.region), []).append(ok)
    counted = [v for v in cells.values() if len(v) >= 3]
    return float(np.mean([not any(v) for v in counted])) if counted else float("nan")


def run_arm(arm: str, world: World, k: int, folder: Path) -> ArmRun:
    out = ArmRun()
    past: list[dict[str, Any]] = []
    rng = np.random.default_rng(20_000 + world.seed)  # the random arm's draws
    mem: GraphMemory | None = None
    if arm in GRAPHMEM_ARMS:
        mem = GraphMemory(f"sqlite:///{folder / f'{arm}_seed{world.seed}.db'}")
        mem.connect()
    try:
        for i, ep in enumerate(world.episodes):
            shown: list[dict[str, Any]] = []
            if arm == "random" and past:
                idx = rng.choice(len(past), size=min(k, len(past)), replace=False)
                shown = [past[j] for j in idx]
            elif arm == "lookup_knn":
                same = [p for p in past if p["state"]["object"] == ep.obj]
                same.sort(key=lambda p: math.dist(p["state"]["object_pos"], ep.pos))
                shown = same[:k]
            elif mem is not None:
                filters = None if "nofilter" in arm else {"state.object": ep.obj}
                t0 = time.perf_counter()
                exps = mem.recall_experiences(
                    task_text(ep.obj), state={"object_pos": list(ep.pos)}, k=k,
                    outcome="any" if arm.endswith("_any") else "success_first",
                    filters=filters, group_id=GROUP,
                )
                out.recall_s.append(time.perf_counter() - t0)
                shown = [
                    {"task": e.task, "state": e.state, "params": e.params, "outcome": e.outcome,
                     "score": e.score, "scores": e.scores, "success": e.success}
                    for e in exps
                ]
                if (out.example is None or out.example["same_as_ideal"]) and (
                        i >= len(world.episodes) // 2 and shown):
                    # the first recall of the later half whose attempts differ from the ideal
                    # ones (same object, nearest by position), else the first of the later half
                    out.example = example_recall(ep, i, filters, k, shown, past)
            if arm == "oracle":
                params = policy(ep, world.coefficient(ep))
            elif arm == "cautious":
                params = policy(ep, None, scale=CAUTIOUS)
            else:
                params = policy(ep, estimate(shown))
            outcome = world.push(ep, params["force"], params["angle"])
            out.success.append(outcome["success"])
            out.shown_n.append(len(shown))
            if shown:
                out.same_object.append(
                    float(np.mean([s["state"].get("object") == ep.obj for s in shown])))
                out.same_region.append(float(np.mean(
                    [s["state"].get("object") == ep.obj
                     and region_of(float(s["state"]["object_pos"][0])) == ep.region
                     for s in shown])))
            if mem is not None:
                t0 = time.perf_counter()
                mem.add_experience(
                    task_text(ep.obj), state=ep.state(), params=params, outcome=outcome,
                    payload={"trajectory": [ep.state()["object_pos"], outcome["final_pos"]]},
                    meta={"seed": world.seed, "arm": arm},
                    run_id=f"seed{world.seed}", episode=i, group_id=GROUP,
                    occurred_at=CLOCK + timedelta(seconds=i),
                )
                out.store_s.append(time.perf_counter() - t0)
            if arm not in ("none", "cautious", "oracle"):
                past.append(record(ep, params, outcome))
    finally:
        if mem is not None:
            mem.close()
    return out


def example_recall(
    ep: Episode, i: int, filters: dict[str, Any] | None, k: int,
    shown: list[dict[str, Any]], past: list[dict[str, Any]],
) -> dict[str, Any]:
    """One recall, with what an ideal retrieval (same object, nearest) would have returned."""
    same = sorted((p for p in past if p["state"]["object"] == ep.obj),
                  key=lambda p: math.dist(p["state"]["object_pos"], ep.pos))[:k]

    def brief(p: dict[str, Any]) -> dict[str, Any]:
        pos = p["state"].get("object_pos")
        row = {"object": p["state"].get("object"), "object_pos": pos,
               "region": region_of(float(pos[0])),
               "success": p["outcome"].get("success"), "force": p["params"].get("force"),
               "traveled": p["outcome"].get("traveled")}
        if "score" in p:
            row["score"] = p["score"]
            row["scores"] = p["scores"]
        return row

    return {
        "episode": i, "query": task_text(ep.obj),
        "state": {"object_pos": ep.state()["object_pos"]},
        "filters": filters, "region": ep.region,
        "returned": [brief(s) for s in shown],
        "ideal_same_object_nearest": [brief(p) for p in same],
        "same_as_ideal": sorted(map(str, (s["state"]["object_pos"] for s in shown)))
        == sorted(map(str, (p["state"]["object_pos"] for p in same))),
    }


# --------------------------------------------------------------------------- statistics


def rate(xs: Sequence[bool]) -> float:
    return float(np.mean(xs)) if len(xs) else float("nan")


def percentile_ms(xs: Sequence[float], q: float) -> float | None:
    return round(float(np.percentile(xs, q)) * 1000, 2) if xs else None


# --------------------------------------------------------------------------- output


def plot(report: dict[str, Any], arms: Sequence[str], window: int, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    colors = {"none": "#7f7f7f", "cautious": "#bcbd22", "random": "#ff7f0e",
              "graphmem": "#1f77b4", "graphmem_any": "#9467bd", "graphmem_nofilter": "#17becf",
              "graphmem_nofilter_any": "#e377c2",
              "lookup_knn": "#2ca02c",
              "oracle": "#000000"}
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(13, 4.8), gridspec_kw={"width_ratios": [3, 2]})
    for arm in arms:
        curve = report["arms"][arm]["curve"]
        ax1.plot(range(window, window + len(curve)), curve, label=arm, color=colors.get(arm),
                 lw=2.2 if arm == "graphmem" else 1.3,
                 ls="--" if arm in ("oracle", "lookup_knn") else "-")
    ax1.set_xlabel("episode")
    ax1.set_ylabel(f"success rate (rolling mean of {window}, mean over seeds)")
    ax1.set_ylim(-0.02, 1.02)
    ax1.grid(alpha=0.3)
    ax1.legend(fontsize=8, loc="center right")
    cfg = report["config"]
    ax1.set_title(
        f"push-to-target, {cfg['seeds']} seeds x {cfg['episodes']} episodes, k={cfg['k']}")
    x = np.arange(len(arms))
    for off, key, hatch, lab in ((-0.2, "success", "", "all episodes"),
                                 (0.2, "success_later_half", "//", "later half")):
        means = [report["summary"][a][key]["mean"] for a in arms]
        cis = np.array([report["summary"][a][key]["ci95"] for a in arms])
        err = np.vstack([np.array(means) - cis[:, 0], cis[:, 1] - np.array(means)])
        ax2.bar(x + off, means, 0.4, yerr=err, capsize=3, hatch=hatch, label=lab,
                color=[colors.get(a) for a in arms], edgecolor="white", alpha=0.9)
    ax2.set_xticks(x, arms, rotation=30, ha="right", fontsize=8)
    ax2.set_ylim(0, 1.02)
    ax2.set_ylabel("success rate (95% bootstrap CI over seeds)")
    ax2.grid(alpha=0.3, axis="y")
    ax2.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, default=20)
    parser.add_argument("--episodes", type=int, default=200)
    parser.add_argument("--k", type=int, default=5)
    parser.add_argument("--quick", action="store_true", help="5 seeds x 100 episodes")
    parser.add_argument("--arms", nargs="+", choices=ARMS, default=DEFAULT_ARMS,
                        help="default: all but the *_any ablations")
    parser.add_argument("--window", type=int, default=20, help="rolling mean for the curves")
    parser.add_argument("--out", type=Path, default=Path("bench/results/experience_sim.json"))
    parser.add_argument("--plot", type=Path, help="default: --out with .png")
    args = parser.parse_args(argv)
    if args.quick:
        args.seeds, args.episodes = 5, 100
    arms = [a for a in ARMS if a in args.arms]
    window = min(args.window, args.episodes)
    started = time.perf_counter()
    load_before = [round(x, 2) for x in os.getloadavg()]
    folder = Path(tempfile.mkdtemp(prefix="graphmem-expsim-"))
    runs: dict[str, list[ArmRun]] = {a: [] for a in arms}
    worlds: list[World] = []
    try:
        for seed in range(args.seeds):
            world = make_world(seed, args.episodes)
            worlds.append(world)
            line = []
            for arm in arms:
                t0 = time.perf_counter()
                r = run_arm(arm, world, args.k, folder)
                runs[arm].append(r)
                line.append(f"{arm} {rate(r.success):.2f} ({time.perf_counter() - t0:.1f}s)")
            print(f"seed {seed}: " + ", ".join(line), flush=True)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    half = args.episodes // 2
    report: dict[str, Any] = {
        "command": " ".join(["python", *sys.argv]),
        "timestamp": datetime.now(UTC).isoformat(timespec="seconds"),
        "config": {
            "seeds": args.seeds, "episodes": args.episodes, "k": args.k, "arms": arms,
            "objects": OBJECTS, "table_m": [TABLE_W, TABLE_H], "kappa_range": KAPPA_RANGE,
            "mat_range": MAT_RANGE, "distance_range_m": DIST_RANGE, "tolerance_m": TOL,
            "noise_log_distance_sd": NOISE_DIST, "noise_angle_sd_rad": NOISE_ANGLE,
            "force_max": F_MAX, "cautious_scale": CAUTIOUS, "prior_kappa": round(PRIOR_KAPPA, 4),
            "later_half_from_episode": half, "recall_outcome": "success_first",
            "embedder": "default (HashEmbedder)", "store": "sqlite, one file per arm and seed",
        },
        "arms": {},
        "summary": {},
        "tests": {},
        "latency_ms": {},
        "example_recall": {},
    }
    for arm in arms:
        rs = runs[arm]
        succ = np.array([r.success for r in rs], dtype=float)
        kernel = np.ones(window) / window
        curve = np.mean([np.convolve(s, kernel, mode="valid") for s in succ], axis=0)
        report["arms"][arm] = {
            "per_seed_success": [round(rate(r.success), 4) for r in rs],
            "per_seed_success_later_half": [round(rate(r.success[half:]), 4) for r in rs],
            "curve": [round(float(c), 4) for c in curve],
            "never_succeeds_later_half": round(float(np.nanmean(
                [stuck_share(w, r.success, half) for w, r in zip(worlds, rs, strict=True)])), 4),
            "shown_mean": round(float(np.mean([np.mean(r.shown_n) for r in rs])), 3),
            "shown_same_object": round(float(np.mean(
                [x for r in rs for x in r.same_object])), 4) if any(
                r.same_object for r in rs) else None,
            "shown_same_object_and_region": round(float(np.mean(
                [x for r in rs for x in r.same_region])), 4) if any(
                r.same_region for r in rs) else None,
        }
        for key, src in (("success", "per_seed_success"),
                         ("success_later_half", "per_seed_success_later_half")):
            vals = report["arms"][arm][src]
            lo, hi = boot_ci(vals)
            report["summary"].setdefault(arm, {})[key] = {
                "mean": round(float(np.mean(vals)), 4), "ci95": [round(lo, 4), round(hi, 4)]}
        if arm in GRAPHMEM_ARMS:
            rec = [x for r in rs for x in r.recall_s]
            sto = [x for r in rs for x in r.store_s]
            report["latency_ms"][arm] = {
                "recall_p50": percentile_ms(rec, 50), "recall_p95": percentile_ms(rec, 95),
                "add_experience_p50": percentile_ms(sto, 50),
                "add_experience_p95": percentile_ms(sto, 95), "n": len(rec)}
            report["example_recall"][arm] = rs[0].example
    for a, b in TESTS:
        if a in runs and b in runs:
            report["tests"][f"{a} vs {b}"] = {
                key: paired(report["arms"][a][src], report["arms"][b][src])
                for key, src in (("success", "per_seed_success"),
                                 ("success_later_half", "per_seed_success_later_half"))}
    report["wall_seconds"] = round(time.perf_counter() - started, 1)
    report["machine"] = {
        "platform": platform.platform(), "machine": platform.machine(),
        "cpu_count": os.cpu_count(), "python": platform.python_version(),
        "numpy": np.__version__, "scipy": scipy.__version__,
        "graphmem": graphmem.__version__, "load_avg_before": load_before,
        "load_avg_after": [round(x, 2) for x in os.getloadavg()],
    }
    print(summary_table(report, arms))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2) + "\n")
    plot(report, arms, window, args.plot or args.out.with_suffix(".png"))
    print(f"wrote {args.out} ({report['wall_seconds']} s)")


def summary_table(report: dict[str, Any], arms: Sequence[str]) -> str:
    def fmt(s: dict[str, Any]) -> str:
        return f"{s['mean']:.3f} [{s['ci95'][0]:.3f}, {s['ci95'][1]:.3f}]"

    rows = ["| arm | success | success, later half | same object shown | cells never solved |",
            "|---|---|---|---|---|"]
    for arm in arms:
        s = report["summary"][arm]
        so = report["arms"][arm]["shown_same_object"]
        rows.append(f"| `{arm}` | {fmt(s['success'])} | {fmt(s['success_later_half'])} | "
                    f"{'' if so is None else f'{so:.2f}'} | "
                    f"{report['arms'][arm]['never_succeeds_later_half']:.2f} |")
    rows += ["", "| comparison | mean diff [95% CI] | Wilcoxon p | paired t p | "
             "later half: diff | Wilcoxon p |", "|---|---|---|---|---|---|"]
    for name, t in report["tests"].items():
        s, h = t["success"], t["success_later_half"]
        rows.append(f"| {name} | {s['mean_diff']:+.3f} [{s['ci95'][0]:+.3f}, {s['ci95'][1]:+.3f}]"
                    f" | {s['wilcoxon_p']:.2g} | {s['ttest_rel_p']:.2g} | "
                    f"{h['mean_diff']:+.3f} | {h['wilcoxon_p']:.2g} |")
    return "\n".join(rows)


if __name__ == "__main__":
    main()
