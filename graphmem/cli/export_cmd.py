"""``graphmem export`` and ``graphmem import``: the store as JSONL (or GraphML for viewers)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from .._errors import GraphMemError, InputError
from ..sources.records import Problem
from .shared import (
    EXIT_INVALID,
    State,
    atomic_output,
    echo,
    echo_json,
    echo_listed,
    json_option,
    pass_state,
)

if TYPE_CHECKING:
    from .._memory import GraphMemory

__all__ = ["ExportFile", "export", "import_", "read_export"]

_EXPORT_TYPES = ("episode", "entity", "fact", "provenance", "ending", "link", "mention")
_META = "meta"
_FORMAT = "graphmem-export"
_VERSION = 1  # the export format this graphmem writes, and the newest it reads


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
    if fmt == "graphml":
        from ..views.graph import require_networkx

        require_networkx()  # before anything is opened or written
    memory = state.memory()
    rows = memory.export(group_id=state.group)
    # Written to a temporary file renamed over the target at the end: an export that fails
    # half-way (a damaged store, a full disk) leaves the previous backup as it was.
    with atomic_output(output) as out:
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
    yield {"type": _META, "format": _FORMAT, "version": _VERSION, "embedder": embedder}
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
            f"({have.get('dim')}); import it into a new store"
        )


@dataclass
class ExportFile:
    """A ``graphmem export`` file as read: its rows (with their line numbers), its header, and
    every line that is not an export row (``FILE:LINE: reason``)."""

    rows: list[dict[str, Any]] = field(default_factory=list)
    lines: list[int] = field(default_factory=list)
    meta: dict[str, Any] | None = None
    problems: list[Problem] = field(default_factory=list)


def read_export(data: bytes, file: str) -> ExportFile:
    """Read an export file's bytes line by line; never raises on its content."""
    from ..sources.parser import unparsable  # the parsers load for import only

    out = ExportFile()
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    for number, chunk in enumerate(data.split(b"\n"), start=1):
        try:
            raw = chunk.decode("utf-8")
        except UnicodeDecodeError as exc:
            out.problems.append(Problem(file, number, None,
                                        f"not UTF-8 text (byte {exc.start} of the line)"))
            continue
        if not raw.strip():
            continue
        try:
            row = json.loads(raw)
        except json.JSONDecodeError as exc:
            out.problems.append(Problem(file, number, None, f"invalid JSON: {exc.msg}"))
            continue
        except (RecursionError, ValueError) as exc:  # nesting past the stack, huge numbers
            out.problems.append(Problem(file, number, None, unparsable(exc)))
            continue
        if isinstance(row, dict) and row.get("type") == _META:
            reason = _header_problem(row, out.meta, out.rows)
            if reason is not None:
                out.problems.append(Problem(file, number, "format", reason))
            else:
                out.meta = row
            continue
        if not isinstance(row, dict) or row.get("type") not in _EXPORT_TYPES:
            out.problems.append(Problem(
                file, number, "type",
                f"expected an export row with type {', '.join(_EXPORT_TYPES)}",
            ))
            continue
        if not set(row) - {"type"}:
            out.problems.append(Problem(file, number, None,
                                        f"an empty {row['type']} row (it has only its type)"))
            continue
        out.rows.append(row)
        out.lines.append(number)
    return out


def _header_problem(row: dict[str, Any], seen: dict[str, Any] | None,
                    rows: list[dict[str, Any]]) -> str | None:
    """Why a ``meta`` row is not this graphmem's export header, or ``None``."""
    if seen is not None or rows:
        return "a header (type meta) belongs on the first line, once"
    if row.get("format") != _FORMAT:
        return (f"the header names format {row.get('format')!r}, not {_FORMAT!r}: not a "
                "graphmem export")
    version = row.get("version")
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        return f"the header's version {version!r} is not a version number"
    if version > _VERSION:
        return (f"the file is export version {version}, this graphmem reads version "
                f"{_VERSION} and before: upgrade graphmem")
    return None


@click.command("import")
@click.argument("file", metavar="FILE.jsonl",
                type=click.Path(exists=True, dir_okay=False, allow_dash=True, path_type=str))
@json_option
@pass_state
def import_(state: State, file: str, as_json: bool) -> None:
    """Import a `graphmem export` JSONL file (rows already present are skipped)."""
    with click.open_file(file, "rb") as handle:
        parsed = read_export(handle.read(), file)
    rows, numbers, meta, problems = parsed.rows, parsed.lines, parsed.meta, parsed.problems
    if problems:
        echo_listed(str(problem) for problem in problems)
        click.echo(f"{len(problems)} invalid row(s); nothing was imported", err=True)
        click.get_current_context().exit(EXIT_INVALID)
    memory = state.memory(create=True)
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

