"""``graphmem export`` and ``graphmem import``: the store as JSONL (or GraphML for viewers)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from .._errors import GraphMemError, InputError
from ..sources.records import Problem
from .shared import EXIT_INVALID, State, echo, echo_json, echo_listed, json_option, pass_state

if TYPE_CHECKING:
    from .._memory import GraphMemory

__all__ = ["export", "import_"]

_EXPORT_TYPES = ("episode", "entity", "fact", "provenance", "ending", "link", "mention")
_META = "meta"


@click.command()
@click.option("--format", "fmt", type=click.Choice(["jsonl", "graphml"]), default="jsonl",
              show_default=True, help="jsonl: lossless (import reads it); graphml: for viewers.")
@click.option("-o", "--output", metavar="FILE", default="-", show_default=True,
              help="Where to write ('-' = stdout).")
@pass_state
def export(state: State, fmt: str, output: str) -> None:
    """Export episodes, entities, facts and links (--group: one group, else all)."""
    if output != "-" and not Path(output).expanduser().resolve().parent.is_dir():
        raise click.BadParameter(f"the directory of {output!r} does not exist",
                                 param_hint="'-o' / '--output'")
    memory = state.memory()
    rows = memory.export(group_id=state.group)
    with click.open_file(output, "w", encoding="utf-8", atomic=output != "-") as out:
        if fmt == "graphml":
            from .graphml import write_graphml

            counts = write_graphml(rows, out)
            described = (f"{counts['entities']} entities, {counts['facts']} facts, "
                         f"{counts['episodes']} episodes, {counts['edges']} edges")
        else:
            written = 0
            for row in _with_header(memory, rows):
                out.write(json.dumps(row, ensure_ascii=False, sort_keys=True) + "\n")
                written += 1
            described = f"{written} rows"
    if output != "-":
        state.info(f"exported {described} to {output}")


def _with_header(memory: GraphMemory, rows: Iterator[dict[str, Any]]) -> Iterator[dict[str, Any]]:
    """A leading ``meta`` row naming the embedder, so that an import into a new store keeps the
    vectors meaningful (``import_rows`` ignores row types it does not know)."""
    recorded = memory.store.get_meta("embedder")
    embedder = json.loads(recorded) if recorded else None
    yield {"type": _META, "format": "graphmem-export", "version": 1, "embedder": embedder}
    yield from rows


def _adopt_embedder(memory: GraphMemory, meta: dict[str, Any] | None, file: str) -> None:
    """Give a new store the export's embedder; refuse a store built with another one."""
    wanted = (meta or {}).get("embedder")
    memory.migrate()
    if not isinstance(wanted, dict):
        return
    recorded = memory.store.get_meta("embedder")
    if recorded is None:
        memory.store.set_meta("embedder", json.dumps(wanted))
        return
    have = json.loads(recorded)
    if (have.get("name"), have.get("dim")) != (wanted.get("name"), wanted.get("dim")):
        raise click.ClickException(
            f"{file} was exported from a store with embedder {wanted.get('name')} "
            f"({wanted.get('dim')} dimensions) but {memory.store.url} uses {have.get('name')} "
            f"({have.get('dim')}); import it into a new store (then `graphmem db reembed "
            f"--embedder NAME` moves that one to the embedder you want)"
        )


@click.command("import")
@click.argument("file", metavar="FILE.jsonl",
                type=click.Path(exists=True, dir_okay=False, allow_dash=True, path_type=str))
@json_option
@pass_state
def import_(state: State, file: str, as_json: bool) -> None:
    """Import a `graphmem export` JSONL file (rows already present are skipped)."""
    rows: list[dict[str, Any]] = []
    numbers: list[int] = []  # each row's line in the file, for import_rows' errors
    problems: list[Problem] = []
    meta: dict[str, Any] | None = None
    with click.open_file(file, "r", encoding="utf-8-sig") as handle:
        for number, raw in enumerate(handle, start=1):
            if not raw.strip():
                continue
            try:
                row = json.loads(raw)
            except json.JSONDecodeError as exc:
                problems.append(Problem(file, number, None, f"invalid JSON: {exc.msg}"))
                continue
            if isinstance(row, dict) and row.get("type") == _META:
                meta = row
                continue
            if not isinstance(row, dict) or row.get("type") not in _EXPORT_TYPES:
                problems.append(Problem(
                    file, number, "type",
                    f"expected an export row with type {', '.join(_EXPORT_TYPES)}",
                ))
                continue
            rows.append(row)
            numbers.append(number)
    if problems:
        echo_listed(str(problem) for problem in problems)
        click.echo(f"{len(problems)} invalid row(s); nothing was imported", err=True)
        click.get_current_context().exit(EXIT_INVALID)
    memory = state.memory()
    _adopt_embedder(memory, meta, file)
    try:
        counts = memory.import_rows(rows, lines=numbers, source=file)
    except (KeyError, TypeError, ValueError) as exc:
        if isinstance(exc, GraphMemError):
            raise
        raise InputError(f"{file}: not a graphmem export ({type(exc).__name__}: {exc})") from exc
    if as_json:
        echo_json({"file": file, "rows": len(rows), **counts})
        return
    echo(f"imported from {file}: " + ", ".join(f"{v} {k}" for k, v in counts.items()))

