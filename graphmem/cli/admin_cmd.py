"""``graphmem init`` and ``graphmem db``: create the store, and its schema migrations."""

from __future__ import annotations

from pathlib import Path

import click

from . import render
from .shared import State, echo_json, echo_lines, json_option, pass_state

__all__ = ["db", "init"]


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
    info = {
        "store": store.url,
        "path": location,
        "schema_version": max(versions, default=0),
        "migrations_applied": applied,
    }
    if as_json:
        echo_json(info)
        return
    where = f" ({location})" if location else ""
    click.echo(f"graphmem store ready: {store.url}{where}")
    done = f"applied {len(applied)} migration(s)" if applied else "already up to date"
    click.echo(f"schema v{info['schema_version']}, {done}")


@click.group()
def db() -> None:
    """Schema migrations of the store."""


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


def _ms_iso(ms: int) -> str:
    from .._time import from_ms

    return render.fmt_time(from_ms(ms))

