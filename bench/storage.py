"""Cost at rest (issue 14, item 10): store bytes per input byte, and what compact embeddings cost
in recall quality and vector-search latency.

    python bench/storage.py --out bench/results/storage.json
    python bench/storage.py --minilm --out bench/results/storage.json   # + all-MiniLM-L6-v2

Every store here is written by graphmem itself with the embedding blob format forced
(``graphmem.store._vectors.DEFAULT_FORMAT``): ``float32`` is what every store held before
(the raw floats, 1,536 bytes a vector at 384 dimensions), ``float16`` the half-size option,
``int8`` the new default (a per-vector scale and int8 values, or only the non-zero ones with a
bitmap when that is smaller, as for the hashed n-gram vectors). Nothing else differs.

1. **Bytes per input byte** (``storage``): the file a fresh store holds after ingesting
   - ``examples``: ``graphmem init`` + ``graphmem ingest examples/data`` (three chats, a
     meeting transcript, 30 robot grasp records), run as the CLI runs it; input = the files'
     bytes;
   - ``locomo_conv1``: LoCoMo's first conversation (419 turns), one ``message`` episode per
     turn as ``bench/locomo.py`` ingests it; input = those episodes as a ``graphmem ingest``
     JSONL file (content, kind, source, reference_time, metadata: one line a turn); the
     conversation's own JSON and its text alone are given beside it;
   with the default ``HashEmbedder(384)``. Beside the ratio: the empty store (``graphmem
   init``: every table and index holds at least one 4 KiB page), the embedding bytes, and the
   pages of each table and index (SQLite's ``dbstat``).
2. **Recall quality** (``quality``): LoCoMo R@5/R@10/R@20/NDCG@10 with ``RetrievalConfig()``
   (``bench/locomo.py``'s protocol) on ``--conversations`` conversations, and LongMemEval_S dev
   R@5/R@10/NDCG@10 on the first ``--lme-questions`` questions (``bench/lme.py``'s protocol), one
   store per format, for the hashed vectors and (``--minilm``) all-MiniLM-L6-v2, whose vectors
   weigh 0.3 in episode ranking (the hashed ones 0).
3. **Vector fidelity** (``fidelity``): every stored vector of LoCoMo's first conversation against
   every question's vector: the cosine error of each format beside float32, the overlap of the
   top 10 rows of each table, and how many fact scores change side of the 0.75 support threshold.
4. **Vector-search latency** (``latency``): a group of ``--rows`` vectors (the hashed vectors of
   LoCoMo turns, and random dense unit vectors for a model's) in a SQLite table read as the
   store reads it (rowid order, batches of 20,000, decoded into one float32 matrix): the first
   search (load + decode + top 10) and a warm search, and the store's own ``vector_episodes``
   (first and warm) on the LoCoMo store. The matrix searched is float32 for every format, so a
   warm search costs the same; only the load decodes.
"""

from __future__ import annotations

import argparse
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
from collections.abc import Callable, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import lme
import locomo

import graphmem.store._vectors as vectors
from graphmem import GraphMemory
from graphmem.embeddings.factory import Embedder, HashEmbedder

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples" / "data"
FORMATS: tuple[vectors.Format, ...] = ("float32", "float16", "int8")
TABLES = ("episodes", "facts", "entities")


def _load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def _log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


class forced_format:
    """``with forced_format("float32"):`` stores written inside use that blob format."""

    def __init__(self, fmt: vectors.Format) -> None:
        self.fmt = fmt

    def __enter__(self) -> None:
        self.saved = vectors.DEFAULT_FORMAT
        vectors.DEFAULT_FORMAT = self.fmt

    def __exit__(self, *exc: object) -> None:
        vectors.DEFAULT_FORMAT = self.saved


# ----------------------------------------------------------------------------- 1. storage
def file_bytes(db: Path) -> int:
    return sum(
        p.stat().st_size for p in (db, Path(f"{db}-wal"), Path(f"{db}-shm")) if p.exists()
    )


def breakdown(db: Path) -> dict[str, Any]:
    con = sqlite3.connect(db)
    try:
        pages = {
            name: int(size)
            for name, size in con.execute(
                "SELECT name, sum(pgsize) FROM dbstat GROUP BY name ORDER BY 2 DESC"
            )
        }
        embedding = {
            table: int(con.execute(f"SELECT coalesce(sum(length(embedding)), 0) FROM {table}")
                       .fetchone()[0])
            for table in TABLES
        }
        vectors_n = {
            table: int(con.execute(f"SELECT count(embedding) FROM {table}").fetchone()[0])
            for table in TABLES
        }
    finally:
        con.close()
    return {"pages_by_object": pages, "embedding_bytes": embedding, "vectors": vectors_n}


def cli(fmt: vectors.Format, store: Path, *args: str) -> None:
    """The console script's own code path in a fresh process, with the blob format forced."""
    code = (
        "import sys, graphmem.store._vectors as v; "
        f"v.DEFAULT_FORMAT = {fmt!r}; "
        "from graphmem.cli import main; main(sys.argv[1:])"
    )
    env = dict(os.environ, GRAPHMEM_STORE=f"sqlite:///{store}")
    subprocess.run(
        [sys.executable, "-c", code, "-q", *args], check=True, env=env,
        stdout=subprocess.DEVNULL,
    )


def store_entry(db: Path, input_bytes: int, empty: int) -> dict[str, Any]:
    size = file_bytes(db)
    info = breakdown(db)
    emb = sum(info["embedding_bytes"].values())
    n = sum(info["vectors"].values())
    return {
        "file_bytes": size,
        "bytes_per_input_byte": round(size / input_bytes, 2),
        "beyond_empty_store_per_input_byte": round((size - empty) / input_bytes, 2),
        "embedding_bytes": emb,
        "embedding_bytes_per_vector": round(emb / n, 1) if n else None,
        "embedding_share_of_file": round(emb / size, 3),
        **info,
    }


def locomo_items(sample: dict[str, Any]) -> list[dict[str, Any]]:
    return locomo.conversation_items(sample, captions=True)


def jsonl_bytes(items: Sequence[dict[str, Any]]) -> int:
    def line(it: dict[str, Any]) -> str:
        row = {k: v for k, v in it.items() if k != "group_id"}
        row["reference_time"] = it["reference_time"].isoformat()
        return json.dumps(row, ensure_ascii=False)

    return sum(len(line(it).encode()) + 1 for it in items)


def run_storage(folder: Path, sample: dict[str, Any]) -> dict[str, Any]:
    empty_db = folder / "empty.db"
    cli("int8", empty_db, "init")
    empty = file_bytes(empty_db)
    input_examples = sum(p.stat().st_size for p in sorted(EXAMPLES.iterdir()) if p.is_file())
    items = locomo_items(sample)
    input_locomo = jsonl_bytes(items)
    out: dict[str, Any] = {
        "empty_store_bytes": empty,
        "examples": {
            "input": f"examples/data: {len(list(EXAMPLES.iterdir()))} files",
            "input_bytes": input_examples,
            "formats": {},
        },
        "locomo_conv1": {
            "input": f"{sample['sample_id']}: {len(items)} turns as ingest JSONL",
            "input_bytes": input_locomo,
            "conversation_json_bytes": len(
                json.dumps(sample["conversation"], ensure_ascii=False).encode()
            ),
            "text_bytes": sum(len(it["content"].encode()) for it in items),
            "formats": {},
        },
    }
    for fmt in FORMATS:
        db = folder / f"examples-{fmt}.db"
        cli(fmt, db, "init")
        cli(fmt, db, "ingest", str(EXAMPLES))
        out["examples"]["formats"][fmt] = store_entry(db, input_examples, empty)
        db = folder / f"locomo1-{fmt}.db"
        with forced_format(fmt), GraphMemory(db, embedder=HashEmbedder()) as mem:
            mem.add_episodes(items)
        out["locomo_conv1"]["formats"][fmt] = store_entry(db, input_locomo, empty)
        _log(
            f"storage {fmt}: examples {out['examples']['formats'][fmt]['file_bytes']} B, "
            f"locomo conv1 {out['locomo_conv1']['formats'][fmt]['file_bytes']} B"
        )
    return out


# ----------------------------------------------------------------------------- 2. quality
def make_embedder(name: str, cache: Path) -> Embedder:
    if name == "hash":
        return HashEmbedder()
    from graphmem.embeddings.factory import SentenceTransformerEmbedder

    # Vectors remembered by text: the formats' stores share them, and LongMemEval's cache
    # from bench/lme.py is reused when present.
    return lme.CachedEmbedder(SentenceTransformerEmbedder(), cache / "vectors-minilm.npz")


def save(embedder: Embedder) -> None:
    if isinstance(embedder, lme.CachedEmbedder):
        embedder.save()


def locomo_stores(
    samples: list[dict[str, Any]], embedder: Embedder, fmt: vectors.Format, folder: Path
) -> Path:
    target = folder / f"locomo-{embedder.name.replace(':', '_').replace('/', '_')}-{fmt}"
    target.mkdir(parents=True, exist_ok=True)
    with forced_format(fmt):
        for sample in samples:
            with GraphMemory(target / f"{sample['sample_id']}.db", embedder=embedder) as mem:
                mem.add_episodes(locomo_items(sample))
    save(embedder)
    return target


def lme_store(
    data: dict[str, Any], limit: int, embedder: Embedder, fmt: vectors.Format, folder: Path
) -> Path:
    db = folder / f"lme-{embedder.name.replace(':', '_').replace('/', '_')}-{fmt}.db"
    with forced_format(fmt), GraphMemory(db, embedder=embedder, extractor="rules") as mem:
        for q in data["questions"][:limit]:
            mem.add_episodes(lme.haystack(data, q), on_invalid="skip")
    save(embedder)
    return db


def run_quality(
    embedders: Sequence[str], conversations: dict[str, int], lme_questions: dict[str, int],
    folder: Path, cache: Path,
) -> dict[str, Any]:
    all_samples = json.loads(locomo.DEFAULT_DATA.read_text())
    lme_data = lme.load(lme.DEFAULT_DATA) if any(lme_questions.values()) else None
    out: dict[str, Any] = {}
    for name in embedders:
        embedder = make_embedder(name, cache)
        samples = all_samples[: conversations[name]]
        # The questions' vectors first, so that no format's recall latency pays for the model.
        embedder.embed([qa["question"] for sample in samples for qa in sample["qa"]])
        entry: dict[str, Any] = {
            "embedder": embedder.name,
            "locomo": {"conversations": len(samples), "formats": {}},
        }
        for fmt in FORMATS:
            t0 = time.perf_counter()
            stores = locomo_stores(samples, embedder, fmt, folder)
            result = locomo.run_config("default", {}, samples, stores, embedder, 20, 2)
            metrics = result["metrics"]["all_1-5"]
            entry["locomo"]["formats"][fmt] = {
                **{k: metrics[k] for k in ("R@5", "R@10", "R@20", "NDCG@10")},
                "questions": metrics.get("n"),
                "recall_ms": result["recall_ms"],
            }
            _log(f"quality {name} locomo {fmt}: {entry['locomo']['formats'][fmt]} "
                 f"({time.perf_counter() - t0:.0f}s)")
        limit = lme_questions.get(name, 0)
        if lme_data is not None and limit:
            qs = lme.evaluated(lme_data, limit)
            embedder.embed([q["question"] for q in qs])
            entry["lme_dev"] = {"questions": limit, "evaluated": len(qs), "formats": {}}
            for fmt in FORMATS:
                t0 = time.perf_counter()
                db = lme_store(lme_data, limit, embedder, fmt, folder)
                result = lme.run_config({}, qs, db, embedder, 20)
                metrics = result["metrics"]["all"]
                entry["lme_dev"]["formats"][fmt] = {
                    **{k: metrics[k] for k in ("R@5", "R@10", "NDCG@10")},
                    "recall_ms": result["recall_ms"],
                    "file_bytes": file_bytes(db),
                }
                _log(f"quality {name} lme {fmt}: {entry['lme_dev']['formats'][fmt]} "
                     f"({time.perf_counter() - t0:.0f}s)")
        out[name] = entry
    return out


# ----------------------------------------------------------------------------- 3. fidelity
def stored_vectors(db: Path, table: str) -> np.ndarray:
    con = sqlite3.connect(db)
    try:
        blobs = [b for (b,) in con.execute(
            f"SELECT embedding FROM {table} WHERE embedding IS NOT NULL ORDER BY rowid"
        )]
    finally:
        con.close()
    dim = vectors.blob_dim(blobs[0]) if blobs else 0
    matrix, keep = vectors.decode_rows(blobs, dim)
    assert keep.all()
    return matrix


def run_fidelity(
    embedders: Sequence[str], folder: Path, cache: Path, sample: dict[str, Any]
) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name in embedders:
        embedder = make_embedder(name, cache)
        stores = {fmt: locomo_stores([sample], embedder, fmt, folder) for fmt in FORMATS}
        db = {fmt: stores[fmt] / f"{sample['sample_id']}.db" for fmt in FORMATS}
        known = {t["dia_id"] for n in range(1, 40) for t in sample["conversation"].get(
            f"session_{n}", [])}
        queries = embedder.embed([qa["q"] for qa in locomo.questions(sample, known)])
        entry: dict[str, Any] = {"embedder": embedder.name, "queries": int(queries.shape[0])}
        for table in TABLES:
            base = stored_vectors(db["float32"], table)
            exact = queries @ base.T
            top = np.argsort(-exact, axis=1, kind="stable")[:, :10]
            per: dict[str, Any] = {"rows": int(base.shape[0])}
            for fmt in ("float16", "int8"):
                got = stored_vectors(db[fmt], table)
                assert got.shape == base.shape
                scores = queries @ got.T
                diff = np.abs(scores - exact)
                mine = np.argsort(-scores, axis=1, kind="stable")[:, :10]
                overlap = [len(set(a) & set(b)) / 10 for a, b in zip(top, mine, strict=True)]
                per[fmt] = {
                    "cosine_abs_error_mean": float(f"{diff.mean():.2e}"),
                    "cosine_abs_error_p99": float(f"{np.percentile(diff, 99):.2e}"),
                    "cosine_abs_error_max": float(f"{diff.max():.2e}"),
                    "top10_overlap_mean": round(float(np.mean(overlap)), 4),
                    "top10_identical_share": round(float(np.mean([o == 1.0 for o in overlap])),
                                                   4),
                }
                if table == "facts":
                    per[fmt]["support_threshold_flips"] = int(
                        ((scores >= 0.75) != (exact >= 0.75)).sum()
                    )
            entry[table] = per
        out[name] = entry
        _log(f"fidelity {name}: {json.dumps(entry)[:300]}")
    return out


# ----------------------------------------------------------------------------- 4. latency
def _median_ms(fn: Callable[[], Any], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return round(statistics.median(times) * 1000, 2)


def synthetic_table(path: Path, blobs: Sequence[bytes]) -> None:
    con = sqlite3.connect(path)
    con.execute("CREATE TABLE v (id TEXT, group_id TEXT, embedding BLOB)")
    con.execute("CREATE INDEX v_group ON v (group_id)")
    con.executemany(
        "INSERT INTO v VALUES (?, 'g', ?)", ((f"row{i}", b) for i, b in enumerate(blobs))
    )
    con.commit()
    con.execute("VACUUM")
    con.close()


def load_matrix(path: Path, dim: int) -> vectors.VectorMatrix:
    """As ``SQLiteStore._matrix`` loads a group: count, reserve, batches of 20,000 in rowid
    order through the group index, decoded into the matrix."""
    con = sqlite3.connect(path)
    try:
        cache = vectors.VectorMatrix(dim=dim)
        (count,) = con.execute(
            "SELECT count(*) FROM v INDEXED BY v_group WHERE group_id = 'g' AND rowid > 0"
        ).fetchone()
        cache.reserve(int(count))
        cursor = con.execute(
            "SELECT rowid, id, embedding FROM v INDEXED BY v_group "
            "WHERE group_id = 'g' AND rowid > 0 ORDER BY rowid"
        )
        while batch := cursor.fetchmany(20_000):
            cache.append([(r[0], r[1], r[2]) for r in batch if r[2] is not None])
        return cache
    finally:
        con.close()


def run_latency(rows: int, folder: Path, sample: dict[str, Any], repeat: int) -> dict[str, Any]:
    rng = np.random.default_rng(14)
    embedder = HashEmbedder()
    texts = [it["content"] for it in locomo_items(sample)]
    # Distinct texts: each LoCoMo turn with a few random words of another turn appended.
    words = " ".join(texts).split()
    corpus = [
        f"{texts[i % len(texts)]} {' '.join(rng.choice(words, size=4))}" for i in range(rows)
    ]
    hashed = embedder.embed(corpus)
    dense = rng.standard_normal((rows, 384)).astype(np.float32)
    dense /= np.linalg.norm(dense, axis=1, keepdims=True)
    queries = {"hashed": embedder.embed(texts[:50]), "dense": dense[:50] + 0.0}
    out: dict[str, Any] = {"rows": rows, "load_avg_before": _load(), "synthetic": {}}
    for kind, matrix in (("hashed", hashed), ("dense", dense)):
        out["synthetic"][kind] = {}
        for fmt in FORMATS:
            path = folder / f"latency-{kind}-{fmt}.db"
            path.unlink(missing_ok=True)
            blobs = [vectors.to_blob(v, fmt) or b"" for v in matrix]
            t0 = time.perf_counter()
            for v in matrix[:2000]:
                vectors.to_blob(v, fmt)
            encode_us = (time.perf_counter() - t0) * 1e6 / 2000
            synthetic_table(path, blobs)
            qs = queries[kind]
            cold = _median_ms(
                lambda p=path, q0=qs[0]: vectors.top_k(load_matrix(p, 384).matrix(), q0, 10),
                repeat,
            )
            held = load_matrix(path, 384).matrix()
            warm = _median_ms(
                lambda h=held, qq=qs: [vectors.top_k(h, q, 10) for q in qq], repeat
            )
            out["synthetic"][kind][fmt] = {
                "blob_bytes_mean": round(float(np.mean([len(b) for b in blobs])), 1),
                "table_file_bytes": path.stat().st_size,
                "encode_us_per_vector": round(encode_us, 1),
                "first_search_ms": cold,
                "warm_search_ms": round(warm / len(qs), 3),
            }
            _log(f"latency {kind} {fmt}: {out['synthetic'][kind][fmt]}")
    # The store's own path on LoCoMo's first conversation (419 turns): a fresh connection's
    # first vector_episodes (loads the group's matrix), then warm.
    out["store_vector_episodes_locomo_conv1"] = {}
    for fmt in FORMATS:
        db = folder / f"locomo1-{fmt}.db"
        if not db.exists():
            with forced_format(fmt), GraphMemory(db, embedder=embedder) as mem:
                mem.add_episodes(locomo_items(sample))
        q = queries["hashed"][0]
        first: list[float] = []
        for _ in range(repeat):
            with GraphMemory(db, embedder=embedder) as mem:
                mem.connect()
                t0 = time.perf_counter()
                mem.store.vector_episodes(sample["sample_id"], q, 10)
                first.append(time.perf_counter() - t0)
                warm_ms = _median_ms(
                    lambda m=mem, v=q: m.store.vector_episodes(sample["sample_id"], v, 10), 50
                )
        out["store_vector_episodes_locomo_conv1"][fmt] = {
            "first_ms": round(statistics.median(first) * 1000, 2),
            "warm_ms": warm_ms,
        }
    out["load_avg_after"] = _load()
    return out


# ----------------------------------------------------------------------------- README text
def markdown(report: dict[str, Any]) -> str:
    s = report["storage"]
    lines = [
        "| corpus | input | float32 (before) | float16 | int8 (default) |",
        "|---|---|---|---|---|",
    ]
    for key, label in (("examples", "`examples/data`"), ("locomo_conv1", "LoCoMo conv. 1")):
        c = s[key]
        cells = [
            f"{c['formats'][f]['file_bytes'] / 1024:,.0f} KiB = "
            f"**{c['formats'][f]['bytes_per_input_byte']:.1f}x** "
            f"({c['formats'][f]['beyond_empty_store_per_input_byte']:.1f}x beyond the empty store)"
            for f in FORMATS
        ]
        size = f"{c['input_bytes'] / 1024:,.1f} KiB"
        lines.append(f"| {label} | {size} | " + " | ".join(cells) + " |")
    lines.append("")
    lines.append("| quality | float32 | float16 | int8 |")
    lines.append("|---|---|---|---|")
    for name, entry in report.get("quality", {}).items():
        loc = entry["locomo"]
        lines.append(
            f"| LoCoMo R@10 / NDCG@10, {name}, {loc['conversations']} conv. | "
            + " | ".join(
                f"{loc['formats'][f]['R@10']:.3f} / {loc['formats'][f]['NDCG@10']:.3f}"
                for f in FORMATS
            ) + " |"
        )
        if "lme_dev" in entry:
            lm = entry["lme_dev"]
            lines.append(
                f"| LongMemEval dev R@5 / NDCG@10, {name}, {lm['questions']} q. | "
                + " | ".join(
                    f"{lm['formats'][f]['R@5']:.3f} / {lm['formats'][f]['NDCG@10']:.3f}"
                    for f in FORMATS
                ) + " |"
            )
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--conversations", type=int, default=10,
                        help="LoCoMo conversations for the hashed vectors' quality")
    parser.add_argument("--lme-questions", type=int, default=40,
                        help="first N LongMemEval dev questions (0: skip)")
    parser.add_argument("--minilm", action="store_true",
                        help="also all-MiniLM-L6-v2 (graphmem[local-embeddings])")
    parser.add_argument("--minilm-conversations", type=int, default=2)
    parser.add_argument("--minilm-lme-questions", type=int, default=40)
    parser.add_argument("--rows", type=int, default=100_000, help="latency: vectors in a group")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--skip", nargs="*", default=[],
                        choices=["storage", "quality", "fidelity", "latency"])
    parser.add_argument(
        "--cache", type=Path, default=Path(tempfile.gettempdir()) / "graphmem-lme-cache",
        help="where MiniLM vectors are cached by text (shared with bench/lme.py)",
    )
    parser.add_argument("--out", type=Path)
    args = parser.parse_args(argv)
    args.cache.mkdir(parents=True, exist_ok=True)
    folder = Path(tempfile.mkdtemp(prefix="graphmem-storage-"))
    sample = json.loads(locomo.DEFAULT_DATA.read_text())[0]
    embedders = ["hash", "minilm"] if args.minilm else ["hash"]
    report: dict[str, Any] = {
        "command": "python " + " ".join([os.path.relpath(__file__, ROOT), *sys.argv[1:]]),
        "date": datetime.now().strftime("%Y-%m-%d"),
        "machine": f"{platform.machine()}, {os.cpu_count()} cores, Python "
        f"{platform.python_version()}, SQLite {sqlite3.sqlite_version}, numpy "
        f"{np.__version__}, load average at start {_load()}",
        "formats": {
            "float32": "raw little-endian floats (every store before issue 14): 4 x dim bytes",
            "float16": "6-byte header + 2 x dim bytes",
            "int8": "6-byte header + float32 scale + dim int8 (10 + dim bytes), or + a bitmap "
            "of the non-zero slots and only those values when smaller (10 + dim/8 + nnz)",
        },
    }
    if "storage" not in args.skip:
        report["storage"] = run_storage(folder, sample)
    if "quality" not in args.skip:
        report["quality"] = run_quality(
            embedders,
            {"hash": args.conversations, "minilm": args.minilm_conversations},
            {"hash": args.lme_questions, "minilm": args.minilm_lme_questions},
            folder, args.cache,
        )
    if "fidelity" not in args.skip:
        report["fidelity"] = run_fidelity(embedders, folder, args.cache, sample)
    if "latency" not in args.skip:
        report["latency"] = run_latency(args.rows, folder, sample, args.repeat)
    report["load_avg_end"] = _load()
    if "storage" in report:
        report["markdown"] = markdown(report)
        print(report["markdown"])
    if args.out:
        args.out.write_text(json.dumps(report, indent=2) + "\n")
    shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
