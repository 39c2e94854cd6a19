"""Plot recall latency, ingest rate and memory against graph size, per store.

    python bench/plot_scale.py            # writes bench/results/scale.png (needs matplotlib)

Reads ``bench/results/scale_sqlite.json`` (``bench/scale.py``) and, when present,
``bench/results/perf_bolt.json`` (the Bolt store's numbers) or any other ``--inputs``: each a
report whose ``results`` maps a size (facts) to a record with ``recall.p50_ms``/``p95_ms`` and
optionally ``ingest_facts_per_s`` and ``peak_rss_mb`` (``bench/perf_sqlite.py`` writes the same
shape). A store is named by the report's ``store`` field, else by its file name.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

RESULTS = Path(__file__).resolve().parent / "results"
DEFAULT_INPUTS = [RESULTS / "scale_sqlite.json", RESULTS / "perf_bolt.json"]
TARGET_P95_MS = 30.0


def _series(
    report: dict[str, Any], default_name: str
) -> dict[str, list[tuple[int, dict[str, Any]]]]:
    """Per store name, (facts, record) by size. A size's record is either one store's figures
    (``recall`` at the top) or one entry per store (``{"bolt": {...}, "sqlite": {...}}``)."""
    out: dict[str, list[tuple[int, dict[str, Any]]]] = {}
    for size, record in report.get("results", {}).items():
        if not isinstance(record, dict):
            continue
        entries = (
            {default_name: record}
            if "recall" in record
            else {k: v for k, v in record.items() if isinstance(v, dict) and "recall" in v}
        )
        for name, entry in entries.items():
            out.setdefault(name, []).append((int(entry.get("facts") or size), entry))
    return {name: sorted(rows, key=lambda r: r[0]) for name, rows in out.items()}


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--inputs", type=Path, nargs="+", default=DEFAULT_INPUTS)
    parser.add_argument("--out", type=Path, default=RESULTS / "scale.png")
    args = parser.parse_args()

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    stores: list[tuple[str, list[tuple[int, dict[str, Any]]]]] = []
    for path in args.inputs:
        if not path.exists():
            continue
        report = json.loads(path.read_text())
        name = str(report.get("store") or path.stem.replace("perf_", "").replace("scale_", ""))
        for store, series in _series(report, name).items():
            # A store already drawn from an earlier file (e.g. the SQLite side of a Bolt
            # comparison run) is not drawn twice.
            if series and store not in {n for n, _ in stores}:
                stores.append((store, series))
    if not stores:
        raise SystemExit(f"no results in {', '.join(map(str, args.inputs))}")

    fig, (lat, ing, mem) = plt.subplots(1, 3, figsize=(15, 4.6))
    colors = ["tab:blue", "tab:orange", "tab:green", "tab:red"]
    for (name, series), color in zip(stores, colors, strict=False):
        sizes = [s for s, _ in series]
        p50 = [r["recall"]["p50_ms"] for _, r in series]
        p95 = [r["recall"]["p95_ms"] for _, r in series]
        lat.plot(sizes, p50, "o-", color=color, label=f"{name} p50")
        lat.plot(sizes, p95, "s--", color=color, label=f"{name} p95")
        cpu_ms = [(s, r["recall_cpu_ms_mean"]) for s, r in series if r.get("recall_cpu_ms_mean")]
        if cpu_ms:
            lat.plot(*zip(*cpu_ms, strict=True), "^:", color=color, label=f"{name} CPU ms (mean)")
        for size, value in zip(sizes, p95, strict=True):
            lat.annotate(
                f"{value:.0f}",
                (size, value),
                textcoords="offset points",
                xytext=(4, 4),
                fontsize=8,
                color=color,
            )
        rates = [(s, r["ingest_facts_per_s"]) for s, r in series if r.get("ingest_facts_per_s")]
        if rates:
            ing.plot(*zip(*rates, strict=True), "o-", color=color, label=f"{name} (wall clock)")
        cpu = [
            (s, r["ingest_facts_per_cpu_s"]) for s, r in series if r.get("ingest_facts_per_cpu_s")
        ]
        if cpu:
            ing.plot(*zip(*cpu, strict=True), "s--", color=color, label=f"{name} (per CPU-second)")
        rss = [
            (s, r.get("peak_rss_mb") or r.get("client_peak_rss_mb"))
            for s, r in series
            if r.get("peak_rss_mb") or r.get("client_peak_rss_mb")
        ]
        if rss:
            mem.plot(*zip(*rss, strict=True), "o-", color=color, label=name)
    lat.axhline(
        TARGET_P95_MS, color="grey", linestyle=":", label=f"target p95 {TARGET_P95_MS:g} ms"
    )
    lat.set(
        xscale="log",
        yscale="log",
        xlabel="facts in the store",
        ylabel="recall latency (ms)",
        title="recall(query, k=10)",
    )
    ing.axhline(5000, color="grey", linestyle=":", label="target 5,000 facts/s")
    ing.set(
        xscale="log",
        xlabel="facts in the store",
        ylabel="facts / s",
        title="bulk ingest (add_episodes)",
    )
    mem.set(xscale="log", xlabel="facts in the store", ylabel="MiB", title="peak RSS")
    for ax in (lat, ing, mem):
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=8)
    machine = next(
        (json.loads(p.read_text()).get("machine", "") for p in args.inputs if p.exists()), ""
    )
    fig.suptitle(f"graphmem cost curves ({machine})", fontsize=10)
    fig.tight_layout()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(args.out, dpi=110)
    print(args.out)


if __name__ == "__main__":
    main()
