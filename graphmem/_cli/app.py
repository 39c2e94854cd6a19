"""The click application. Thin: parse arguments, call ``GraphMemory``, print the result.

Exit codes: 0 success; 1 an error (``Error: ...`` on one line, the traceback only with ``-v``);
2 a usage error or invalid input records (nothing written); 130 interrupted (Ctrl-C). Asking
for something that is not there is an error (1): ``forget`` of an unknown episode or entity, or
of a group that holds nothing (nothing is changed and no audit record is written). Output cut
short by its reader (``graphmem facts | head -1``) is not an error: the command stops, exit 0.

Human output shows control characters of stored text as escapes (``render.safe``); ``--json``
output is exact. Lists of problems print the first ``MAX_LISTED`` (all with ``-v``).
"""

from __future__ import annotations

import json
import logging
import os
import sys
import time
import traceback
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn, TypeVar, cast

import click

from .._config import Settings
from .._errors import FilterError, GraphMemError, InputError
from .._memory import GraphMemory
from .._sources import (
    FORMATS,
    INPUT_EXTENSIONS,
    PER_CHOICES,
    STDIN_NAME,
    ParseResult,
    Problem,
    iter_input_files,
    parse_bytes,
    parse_file,
)
from . import render
from .graphml import write_graphml
from .params import DATETIME, FILTER, build_filters

if TYPE_CHECKING:
    from .._models import IngestResult

__all__ = ["State", "cli", "main"]

F = TypeVar("F", bound=Callable[..., Any])
EXTRACTORS = ("auto", "rules", "structured", "llm")
# Episodes per GraphMemory.add_episodes call. Each call commits its episodes (Ctrl-C loses at most
# the batch in flight, and a re-run completes it) and lets the engine batch embeddings and writes
# and run LLM extractions concurrently. The size adapts so that the progress bar moves about
# every half second: from BATCH_MIN, doubled after a fast batch, halved after a slow one.
BATCH_MIN = 4
BATCH_MAX = 256
BATCH_SECONDS = 0.5
EXIT_INVALID = 2
EXIT_INTERRUPTED = 130
MAX_LISTED = 20  # problems, skipped records and files printed on stderr (all of them with -v)
_EXPORT_TYPES = ("episode", "entity", "fact", "provenance", "ending", "link", "mention")
_META = "meta"


# ------------------------------------------------------------------------------- state, errors
class State:
    """Global options, and the memory opened from them (once, closed when the command ends)."""

    def __init__(self, store: str | None, group: str | None, verbose: int, quiet: bool) -> None:
        self.store = store
        self.group = group
        self.verbose = verbose
        self.quiet = quiet
        self._memory: GraphMemory | None = None
        self.settings_overrides: dict[str, object] = {}

    @property
    def group_id(self) -> str:
        """The group for commands that work on one: ``--group``, else ``default``."""
        return self.group or "default"

    def memory(self) -> GraphMemory:
        if self._memory is None:
            settings = Settings.from_env(**self.settings_overrides)
            self._memory = GraphMemory(self.store, settings=settings)
            click.get_current_context().call_on_close(self._memory.close)
        return self._memory

    def info(self, message: str) -> None:
        """A human message on stderr (hidden by ``-q``)."""
        if not self.quiet:
            click.echo(render.safe(message), err=True)


pass_state = click.make_pass_decorator(State)


def _one_line(text: str) -> str:
    """A message on one line, fit for a terminal (it may quote stored text)."""
    joined = " ".join(part.strip() for part in str(text).splitlines() if part.strip())
    return render.safe(joined, inline=True)


def _stdout_broken() -> bool:
    """Whether stdout is a pipe or socket whose reader has gone (where that can be told)."""
    try:
        import select

        poll = select.poll()
        poll.register(sys.stdout.fileno(), select.POLLOUT)
        events = poll.poll(0)
    except (AttributeError, OSError, ValueError):  # no poll (Windows), no file descriptor
        return True
    return any(mask & (select.POLLERR | select.POLLHUP) for _, mask in events)


def _silence_stdout() -> None:
    """Point stdout at the null device, so that the final flush cannot fail again."""
    with suppress(OSError, ValueError):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)


class GraphMemGroup(click.Group):
    """Turns every ``GraphMemError`` into a one-line ``Error:`` (traceback with ``-v``), and a
    stdout closed by its reader into a quiet exit 0."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except BrokenPipeError as exc:
            if not _stdout_broken():
                raise click.ClickException(f"{exc.strerror or exc}") from exc
            _silence_stdout()
            ctx.exit(0)
        except GraphMemError as exc:
            state = ctx.find_object(State)
            if state is not None and state.verbose:
                traceback.print_exc(file=sys.stderr)
            raise click.ClickException(_one_line(str(exc))) from exc
        except OSError as exc:  # an unwritable -o file, a full disk: the user's to fix
            state = ctx.find_object(State)
            if state is not None and state.verbose:
                traceback.print_exc(file=sys.stderr)
            name = exc.filename2 or exc.filename  # filename2: the target of a rename
            where = f": {name}" if name else ""
            raise click.ClickException(f"{exc.strerror or exc}{where}") from exc


def json_option(func: F) -> F:
    return click.option(
        "--json", "as_json", is_flag=True, help="Print machine-readable JSON on stdout."
    )(func)


def _stdin_is_tty() -> bool:
    return sys.stdin.isatty()


def _stderr_is_tty() -> bool:
    return sys.stderr.isatty()


def _echo_json(value: Any) -> None:
    click.echo(render.dumps(value))


def _echo(text: str, *, err: bool = False) -> None:
    """Human output: control characters of stored text shown as escapes (``render.safe``)."""
    click.echo(render.safe(text), err=err)


def _echo_lines(lines: list[str]) -> None:
    for line in lines:
        click.echo(render.safe(line, inline=True))


def _echo_listed(lines: Iterable[str], *, prefix: str = "") -> None:
    """Report lines on stderr: the first ``MAX_LISTED`` (all with ``-v``), then a count."""
    state = click.get_current_context().find_object(State)
    limit = None if state is not None and state.verbose else MAX_LISTED
    shown = 0
    for line in lines:
        if limit is not None and shown >= limit:
            shown += 1
            continue
        click.echo(prefix + render.safe(line, inline=True), err=True)
        shown += 1
    if limit is not None and shown > limit:
        click.echo(f"… and {shown - limit} more (-v lists them all)", err=True)


# ------------------------------------------------------------------------------- the group
@click.group(
    cls=GraphMemGroup,
    context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100},
)
@click.option(
    "--store",
    envvar="GRAPHMEM_STORE",
    metavar="URL",
    show_envvar=True,
    help="Store URL: sqlite:///relative.db, sqlite:////abs/path.db, a path ending in .db, or "
    "bolt:// / neo4j:// / neo4j+s:// (Neo4j). Default: ./graphmem.db.",
)
@click.option(
    "--group",
    metavar="G",
    envvar="GRAPHMEM_GROUP",
    show_envvar=True,
    help="Memory group (namespace) to work on. Default: 'default' for commands on one group; "
    "stats, export and reprocess cover all groups unless it is given.",
)
@click.option("-v", "--verbose", count=True,
              help="More logging (-vv: debug); tracebacks on errors.")
@click.option("-q", "--quiet", is_flag=True, help="Only errors and requested output.")
@click.version_option(None, "--version", package_name="graphmem", prog_name="graphmem")
@click.pass_context
def cli(ctx: click.Context, store: str | None, group: str | None, verbose: int,
        quiet: bool) -> None:
    """graphmem: temporal knowledge-graph memory for AI agents and robots.

    Ingest conversations, transcripts and episode logs; ask what is true now, what was true
    then, and why. Dates are ISO-8601 with Z or an offset (2024-05-01T10:00:00Z,
    2024-05-01T12:00:00+02:00) or a date (2024-05-01).
    """
    level = logging.ERROR if quiet else logging.WARNING
    if verbose == 1:
        level = logging.INFO
    elif verbose > 1:
        level = logging.DEBUG
    logging.basicConfig(level=level, format="%(levelname)s %(name)s: %(message)s",
                        stream=sys.stderr)
    logging.getLogger("graphmem").setLevel(level)
    if group is not None and not group.strip():
        raise click.BadParameter("must not be empty", param_hint="--group")
    ctx.obj = State(store, group, verbose, quiet)


# ------------------------------------------------------------------------------- init, db
@cli.command()
@json_option
@pass_state
def init(state: State, as_json: bool) -> None:
    """Create the store (or bring its schema up to date) and print where it is."""
    memory = state.memory()
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
        _echo_json(info)
        return
    where = f" ({location})" if location else ""
    click.echo(f"graphmem store ready: {store.url}{where}")
    done = f"applied {len(applied)} migration(s)" if applied else "already up to date"
    click.echo(f"schema v{info['schema_version']}, {done}")


@cli.group()
def db() -> None:
    """Schema migrations of the store."""


@db.command("migrate")
@json_option
@pass_state
def db_migrate(state: State, as_json: bool) -> None:
    """Apply pending schema migrations (idempotent)."""
    applied = state.memory().migrate()
    if as_json:
        _echo_json({"store": state.memory().store.url, "migrations_applied": applied})
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
    store = state.memory().store
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
        _echo_json({"store": store.url, "migrations": rows, "pending": pending})
        return
    click.echo(f"store: {store.url}")
    _echo_lines(render.table(
        ["version", "name", "applied"],
        [[str(r["version"]), str(r["name"]), str(r["applied_at"] or "PENDING")] for r in rows],
    ))
    if pending:
        click.echo(f"{pending} pending: run `graphmem db migrate`")


def _ms_iso(ms: int) -> str:
    from .._time import from_ms

    return render.fmt_time(from_ms(ms))


# ------------------------------------------------------------------------------- LLM options
def llm_options(func: Any) -> Any:
    """--max-calls / --max-tokens / --concurrency: a budget and a pace for LLM extraction."""
    func = click.option("--concurrency", type=click.IntRange(1, 64), default=None,
                        help="LLM calls in flight at once (default 4).")(func)
    func = click.option("--max-tokens", type=click.IntRange(1), default=None,
                        help="Stop calling the LLM once this many tokens are spent.")(func)
    func = click.option("--max-calls", type=click.IntRange(1), default=None,
                        help="Stop calling the LLM after this many calls; the remaining "
                        "episodes stay stored as failed for `graphmem reprocess`.")(func)
    return func


def _apply_llm_options(state: State, max_calls: int | None, max_tokens: int | None,
                       concurrency: int | None) -> None:
    state.settings_overrides.update(
        {k: v for k, v in (("llm_max_calls", max_calls), ("llm_max_tokens", max_tokens),
                           ("llm_concurrency", concurrency)) if v is not None}
    )


# ------------------------------------------------------------------------------- ingest
@cli.command()
@click.argument(
    "paths", nargs=-1, required=True, metavar="PATH... | -",
    type=click.Path(exists=True, allow_dash=True, path_type=str),
)
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="auto", show_default=True,
              help="Input format; auto detects it from the extension, then the content.")
@click.option("--per", type=click.Choice(PER_CHOICES), default="message", show_default=True,
              help="One episode per message/paragraph, or one per conversation/file.")
@click.option("--extractor", type=click.Choice(EXTRACTORS), default="auto", show_default=True,
              help="auto: structured for JSON records, llm if GRAPHMEM_LLM_MODEL is set, "
              "else rules.")
@click.option("--skip-invalid", is_flag=True,
              help="Ingest the valid records and report the invalid ones (exit 0).")
@click.option("--assume-utc", is_flag=True,
              help="Read date-times without an offset in JSON inputs as UTC (transcripts "
              "always do).")
@click.option("--allow-other-groups", is_flag=True,
              help="With --group: also write JSONL episode lines whose group_id names another "
              "group (the groups written are reported). Without it they are invalid.")
@llm_options
@json_option
@pass_state
def ingest(state: State, paths: tuple[str, ...], fmt: str, per: str, extractor: str,
           skip_invalid: bool, assume_utc: bool, allow_other_groups: bool, as_json: bool,
           max_calls: int | None, max_tokens: int | None, concurrency: int | None) -> None:
    """Ingest files, directories or stdin (-) as episodes, then extract facts.

    \b
    Formats (--format, detected when auto):
      chat        OpenAI-style messages list or {"messages": [...]}, LangChain message dicts
      jsonl       one object per line: episodes {"content", "reference_time", "source",
                  "kind", "metadata"}; objects without "content" are event records
      events      JSON(L) records that all go to the structured extractor
      transcript  "Speaker: text" lines, optional [2024-05-01 10:00] timestamps (UTC unless
                  they carry an offset)
      prose       plain text, one episode per paragraph (--per file: per file)

    Every record of every input is validated first: if any is invalid, each is listed as
    FILE:LINE: field: reason, nothing is written, and the exit status is 2. With
    --skip-invalid each invalid record is skipped on its own: a JSONL line (invalid JSON, bytes
    that are not UTF-8, a bad field), or a whole file for formats read whole. Files in a
    directory without a known extension are listed as skipped (a file named itself is always
    read). Re-ingesting a file adds nothing. After Ctrl-C the committed episodes stay; run the
    command again to finish the rest.

    With --group G (or GRAPHMEM_GROUP) every episode goes to G, and a JSONL line naming another
    group_id is invalid unless --allow-other-groups is given. Without --group, a line's group_id is
    honoured (others go to 'default'); groups other than the command's are reported.
    """
    _apply_llm_options(state, max_calls, max_tokens, concurrency)
    bound = state.group if state.group is not None and not allow_other_groups else None
    parsed = _parse_inputs(paths, fmt, per, state.group_id, assume_utc,
                           allow_other_groups=bound is None)
    skipped_files = [{"file": f, "reason": _NOT_INPUT} for f in parsed.skipped]
    _echo_listed((f"{f}: {_NOT_INPUT}" for f in parsed.skipped), prefix="skipped: ")
    if parsed.problems and not skip_invalid:
        _echo_listed(str(problem) for problem in parsed.problems)
        if as_json:
            _echo_json({"ok": False, "written": 0,
                        "invalid": [p.to_dict() for p in parsed.problems],
                        "skipped_files": skipped_files})
        count = len(parsed.problems)
        click.echo(
            f"{count} invalid record{'s' if count != 1 else ''}; nothing was written "
            "(fix them, or pass --skip-invalid to ingest the valid ones)",
            err=True,
        )
        click.get_current_context().exit(EXIT_INVALID)
    if parsed.problems:
        _echo_listed((str(problem) for problem in parsed.problems), prefix="skipped: ")
    memory = state.memory()
    memory.connect()
    summary = _Summary(files=len(parsed.files), invalid=len(parsed.problems),
                       total=len(parsed.records))
    groups: dict[str, int] = {}
    show_bar = not state.quiet and not as_json and _stderr_is_tty() and summary.total > 0
    started = time.perf_counter()
    interrupted = False
    try:
        with _progress(show_bar, summary.total) as step:
            start, size = 0, BATCH_MIN
            while start < summary.total:
                batch = parsed.records[start : start + size]
                began = time.perf_counter()
                episodes = [{**record.episode, "extractor": extractor} for record in batch]
                results = (memory.add_episodes(episodes) if bound is None
                           else memory.add_episodes(episodes, group_id=bound))
                for record, result in zip(batch, results, strict=True):
                    summary.add(result)
                    group = str(record.episode["group_id"])
                    groups[group] = groups.get(group, 0) + 1
                start += len(batch)
                now = time.perf_counter()
                size = _next_batch(size, now - began)
                rate = summary.episodes / (now - started) if now > started else 0.0
                step(len(batch), f"{rate:.1f} ep/s")
    except KeyboardInterrupt:
        interrupted = True
    summary.seconds = time.perf_counter() - started
    if as_json:
        _echo_json({"ok": not interrupted and summary.failed == 0, **summary.as_dict(),
                    "interrupted": interrupted, "groups": groups,
                    "invalid_records": [p.to_dict() for p in parsed.problems],
                    "skipped_files": skipped_files})
    elif not state.quiet:
        _echo_lines(summary.lines())
        if groups and set(groups) != {state.group_id}:
            _echo_lines(["groups written: " + ", ".join(
                f"{name!r} {count}" for name, count in sorted(groups.items()))])
    if interrupted:
        click.echo(
            f"interrupted after {summary.episodes} of {summary.total} episodes; the ingested "
            "ones are kept: run the same command again to finish the rest",
            err=True,
        )
        click.get_current_context().exit(EXIT_INTERRUPTED)
    if summary.failed:
        raise click.ClickException(
            f"{summary.failed} episode(s) were stored but their extraction failed "
            f"(first error: {_one_line(summary.first_error or '?')}); "
            "run `graphmem reprocess` once the cause is fixed"
        )


_NOT_INPUT = (f"not an input file (its extension is not one of {', '.join(INPUT_EXTENSIONS)}; "
              "name the file itself to ingest it)")


def _parse_inputs(paths: tuple[str, ...], fmt: str, per: str, group_id: str,
                  assume_utc: bool, *, allow_other_groups: bool = True) -> ParseResult:
    result = ParseResult()
    options: dict[str, Any] = {"format": fmt, "per": per, "group_id": group_id,
                               "assume_utc": assume_utc,
                               "allow_other_groups": allow_other_groups}
    for raw in paths:
        if raw == "-":
            stream = sys.stdin
            data: bytes = (
                stream.buffer.read() if hasattr(stream, "buffer") else stream.read().encode()
            )
            result.extend(parse_bytes(data, source=STDIN_NAME, **options))
            continue
        skipped: list[Path] = []
        files = list(iter_input_files([raw], skipped=skipped))
        result.skipped.extend(str(p) for p in skipped)
        if not files:
            result.problems.append(Problem(
                raw, None, None,
                f"no input files here (looked for {', '.join(INPUT_EXTENSIONS)})",
            ))
        for path in files:
            result.extend(parse_file(path, **options))
    return result


def _next_batch(size: int, seconds: float) -> int:
    if seconds < BATCH_SECONDS:
        return min(size * 2, BATCH_MAX)
    if seconds > 4 * BATCH_SECONDS:
        return max(size // 2, BATCH_MIN)
    return size


@contextmanager
def _progress(show: bool, total: int) -> Iterator[Callable[[int, str], None]]:
    if not show:
        yield lambda _n, _rate: None
        return
    def shown(rate: str | None) -> str | None:
        return rate

    bar = click.progressbar(
        iterable=cast(Iterable[str] | None, None), length=total, label="ingesting",
        file=sys.stderr, show_pos=True, show_eta=True, item_show_func=shown,
    )
    with bar:
        def step(n: int, rate: str) -> None:
            bar.update(n, rate)

        yield step


class _Summary:
    def __init__(self, files: int, invalid: int, total: int) -> None:
        self.files = files
        self.invalid = invalid
        self.total = total
        self.episodes = 0
        self.new = 0
        self.present = 0
        self.failed = 0
        self.facts_added = 0
        self.facts_duplicate = 0
        self.superseded = 0
        self.contradicted = 0
        self.llm_calls = 0
        self.llm_retries = 0
        self.llm_repairs = 0
        self.llm_failed_calls = 0
        self.prompt_tokens = 0
        self.completion_tokens = 0
        self.warnings = 0
        self.seconds = 0.0
        self.first_error: str | None = None

    def add(self, result: IngestResult) -> None:
        self.episodes += 1
        if result.already_present:
            self.present += 1
        else:
            self.new += 1
        if result.status == "failed":
            self.failed += 1
            self.first_error = self.first_error or result.error
        self.facts_added += result.facts_added
        self.facts_duplicate += result.facts_duplicate
        self.superseded += len(result.superseded)
        self.contradicted += len(result.contradictions)
        self.llm_calls += result.llm_calls
        self.llm_retries += result.llm_retries
        self.llm_repairs += result.llm_repairs
        self.llm_failed_calls += result.llm_failed_calls
        self.prompt_tokens += result.prompt_tokens
        self.completion_tokens += result.completion_tokens
        self.warnings += len(result.warnings)

    def as_dict(self) -> dict[str, Any]:
        return {
            "files": self.files,
            "episodes": self.episodes,
            "episodes_total": self.total,
            "episodes_new": self.new,
            "episodes_already_present": self.present,
            "episodes_failed": self.failed,
            "invalid_skipped": self.invalid,
            "facts_added": self.facts_added,
            "facts_duplicate": self.facts_duplicate,
            "facts_superseded": self.superseded,
            "facts_contradicted": self.contradicted,
            "llm_calls": self.llm_calls,
            "llm_retries": self.llm_retries,
            "llm_repairs": self.llm_repairs,
            "llm_failed_calls": self.llm_failed_calls,
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "extraction_warnings": self.warnings,
            "seconds": round(self.seconds, 3),
        }

    def lines(self) -> list[str]:
        tokens = self.prompt_tokens + self.completion_tokens
        episodes = (f"{self.episodes} episodes from {self.files} file(s) in "
                    f"{self.seconds:.2f} s: {self.new} new, {self.present} already present")
        if self.failed:
            episodes += f", {self.failed} failed extraction"
        if self.invalid:
            episodes += f"; {self.invalid} invalid skipped"
        return [
            episodes,
            f"facts: {self.facts_added} added, {self.facts_duplicate} duplicate, "
            f"{self.superseded} superseded, {self.contradicted} contradicted",
            f"LLM: {self.llm_calls} calls ({self.llm_retries} retried, {self.llm_repairs} "
            f"repairs, {self.llm_failed_calls} failed), {tokens} tokens "
            f"({self.prompt_tokens} prompt + {self.completion_tokens} completion)"
            + (f"; {self.warnings} extraction warnings" if self.warnings else ""),
        ]


# ------------------------------------------------------------------------------- reprocess
@cli.command()
@click.option("--extractor", type=click.Choice(EXTRACTORS), default="auto", show_default=True,
              help="Extractor to run again.")
@llm_options
@json_option
@pass_state
def reprocess(state: State, extractor: str, as_json: bool, max_calls: int | None,
              max_tokens: int | None, concurrency: int | None) -> None:
    """Run extraction again for episodes left pending or failed (e.g. after an LLM outage)."""
    _apply_llm_options(state, max_calls, max_tokens, concurrency)
    started = time.perf_counter()
    results = state.memory().reprocess(group_id=state.group, extractor=extractor)
    summary = _Summary(files=0, invalid=0, total=len(results))
    for result in results:
        summary.add(result)
    summary.seconds = time.perf_counter() - started
    if as_json:
        _echo_json({"ok": summary.failed == 0, **summary.as_dict()})
    else:
        extracted = summary.episodes - summary.failed
        click.echo(f"reprocessed {summary.episodes} episode(s): {extracted} extracted, "
                   f"{summary.failed} failed")
        _echo_lines(summary.lines()[1:])
    if summary.failed:
        raise click.ClickException(
            f"{summary.failed} episode(s) still failed: {_one_line(summary.first_error or '?')}"
        )


# ------------------------------------------------------------------------------- read commands
@cli.command()
@click.argument("query")
@click.option("--as-of", type=DATETIME, help="World time: what was true at T.")
@click.option("--known-at", type=DATETIME, help="Record time: what memory believed at T.")
@click.option("-k", "k", type=click.IntRange(1, 1000), default=10, show_default=True,
              help="Number of facts.")
@click.option("--hops", type=click.IntRange(0, 3), default=2, show_default=True,
              help="Graph expansion depth.")
@click.option("--filter", "filters", type=FILTER, multiple=True,
              help="Keep facts whose subject has PATH=VALUE (also !=, <, <=, >, >=); values "
              "are JSON scalars when they parse (true, 12.5). Repeatable.")
@click.option("--context", "as_context", is_flag=True,
              help="Print the prompt context block instead of a table.")
@json_option
@pass_state
def recall(state: State, query: str, as_of: Any, known_at: Any, k: int, hops: int,
           filters: tuple[tuple[str, str, Any], ...], as_context: bool, as_json: bool) -> None:
    """Facts relevant to QUERY (no LLM call): a table, the context block, or JSON."""
    if as_context and as_json:
        raise click.UsageError("--context and --json are exclusive")
    try:
        result = state.memory().recall(
            query, group_id=state.group_id, as_of=as_of, known_at=known_at, k=k, hops=hops,
            filters=build_filters(filters),
        )
    except FilterError as exc:
        raise click.BadParameter(str(exc), param_hint="--filter") from None
    if as_json:
        click.echo(result.model_dump_json(indent=2))
    elif as_context:
        _echo(result.to_context())
    else:
        _echo_lines(render.render_recall(result))


@cli.command()
@click.argument("entity")
@click.option("--predicate", metavar="P", help="Only this predicate (e.g. lives_in).")
@json_option
@pass_state
def history(state: State, entity: str, predicate: str | None, as_json: bool) -> None:
    """Every fact about ENTITY, oldest first: supersession chain, reasons, source episodes."""
    memory = state.memory()
    facts = memory.history(entity, predicate=predicate, group_id=state.group_id)
    if as_json:
        _echo_json([f.model_dump(mode="json") for f in facts])
        return
    if not facts:
        what = f" with predicate {predicate!r}" if predicate else ""
        _echo(f"no facts about {entity!r}{what} in group {state.group_id!r}")
        return
    ids = list(dict.fromkeys(i for f in facts for i in f.episode_ids))
    episodes = {e.id: e for e in memory.store.episodes(ids)} if ids else {}
    _echo_lines(render.render_history(facts, episodes))


@cli.command()
@click.option("--entity", metavar="NAME", help="Only facts about this entity.")
@click.option("--history", "include_history", is_flag=True,
              help="Include facts that ended, were superseded or corrected.")
@json_option
@pass_state
def facts(state: State, entity: str | None, include_history: bool, as_json: bool) -> None:
    """Current facts of the group (or about one entity); --history lists every fact."""
    found = state.memory().facts(group_id=state.group_id, entity=entity,
                                 include_history=include_history)
    if as_json:
        _echo_json([f.model_dump(mode="json") for f in found])
        return
    if not found:
        _echo(f"no facts in group {state.group_id!r}" + (f" about {entity!r}" if entity else ""))
        return
    _echo_lines(render.render_facts(found, show_status=include_history))


@cli.command()
@json_option
@pass_state
def stats(state: State, as_json: bool) -> None:
    """Counts of episodes, entities and facts (of --group, else of the whole store)."""
    values = state.memory().stats(state.group)
    if as_json:
        data = dict(values)
        if isinstance(data.get("embedder"), str):
            with suppress(ValueError):
                data["embedder"] = json.loads(data["embedder"])
        _echo_json(data)
        return
    _echo_lines(render.render_mapping(values))


# ------------------------------------------------------------------------------- forget
@cli.command()
@click.option("--episode", "episode_id", metavar="ID", help="Forget one episode.")
@click.option("--entity", metavar="NAME", help="Forget an entity and every fact about it.")
@click.option("--with-episodes", is_flag=True,
              help="With --entity: also forget the episodes it spoke or that state a fact "
                   "about it (kept otherwise).")
@click.option("--all-group", is_flag=True, help="Forget everything in the current --group.")
@click.option("--group", "forget_group", metavar="G", help="Forget everything in group G.")
@click.option("-y", "--yes", is_flag=True, help="Do not ask for confirmation.")
@json_option
@pass_state
def forget(state: State, episode_id: str | None, entity: str | None, with_episodes: bool,
           all_group: bool, forget_group: str | None, yes: bool, as_json: bool) -> None:
    """Delete an episode, an entity, or a whole group (facts other episodes support stay).

    --entity keeps the entity's own episodes (spoken by it, or stating a fact about it: their
    text still names it) and says how many; --with-episodes forgets them too. On SQLite the
    forgotten text is removed from the file (full-text indexes merged, WAL truncated).

    Asks for confirmation on a terminal; without a terminal (scripts, pipes) it refuses
    unless --yes is given. Forgetting what is not there (an unknown episode or entity, a group
    that holds nothing, e.g. a misspelt name) is an error, exit 1: nothing is changed and no
    audit record is written.
    """
    chosen = [x for x in (episode_id, entity, all_group or None, forget_group) if x is not None]
    if len(chosen) != 1:
        raise click.UsageError("give exactly one of --episode ID, --entity NAME, --all-group "
                               "or --group G")
    if with_episodes and entity is None:
        raise click.UsageError("--with-episodes goes with --entity NAME")
    group = forget_group or state.group_id
    memory = state.memory()
    if episode_id is None and entity is None:
        counts = memory.stats(group)
        if not any(counts.get(key) for key in ("episodes", "entities", "facts")):
            raise click.ClickException(
                f"nothing to forget: group {group!r} holds no episodes, entities or facts "
                "(`graphmem stats` lists the groups)"
            )
    if episode_id is not None:
        what = f"episode {episode_id!r} in group {group!r}"
    elif entity is not None:
        what = (f"entity {entity!r}, every fact about it"
                + (" and the episodes it spoke or that state a fact about it" if with_episodes
                   else "")
                + f", in group {group!r}")
    else:
        what = f"EVERYTHING in group {group!r}"
    if not yes:
        if not _stdin_is_tty():
            raise click.ClickException(
                f"refusing to forget {what} without confirmation: pass --yes"
            )
        click.confirm(f"Forget {what}?", abort=True, err=True)
    result = memory.forget(
        group_id=group, episode_id=episode_id, entity=entity,
        all=episode_id is None and entity is None, episodes=with_episodes,
    )
    if as_json:
        click.echo(result.model_dump_json(indent=2))
        return
    _echo(
        f"forgot {what}: {result.episodes_removed} episode(s), {result.facts_removed} fact(s), "
        f"{result.entities_removed} entit{'y' if result.entities_removed == 1 else 'ies'} "
        f"removed; {result.facts_kept} fact(s) kept (other sources)"
        + (f"; audit {result.audit_id}" if result.audit_id else "")
    )
    if result.own_episodes_kept:
        import shlex

        ids = result.own_episode_ids_kept
        shown = ", ".join(ids[:10]) + (f", … ({len(ids) - 10} more: --json)" if len(ids) > 10
                                        else "")
        _echo(
            f"kept {result.own_episodes_kept} episode(s) that {entity!r} spoke or that state a "
            f"fact about it (their text still names it): {shown}. Forget them with `graphmem "
            "forget --episode ID` (those it spoke: `graphmem forget --entity "
            f"{shlex.quote(entity or '')} --with-episodes`)"
        )


# ------------------------------------------------------------------------------- export, import
@cli.command()
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
            f"({have.get('dim')}); import it into a new store"
        )


@cli.command("import")
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
        _echo_listed(str(problem) for problem in problems)
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
        _echo_json({"file": file, "rows": len(rows), **counts})
        return
    _echo(f"imported from {file}: " + ", ".join(f"{v} {k}" for k, v in counts.items()))


# ------------------------------------------------------------------------------- surfaces
@cli.command("mcp")
@click.option("--speaker", metavar="NAME",
              help="Whom first-person text is about when remember names no speaker.")
@pass_state
def mcp_command(state: State, speaker: str | None) -> None:
    """Serve this memory to MCP hosts over stdio (needs graphmem[mcp]).

    Tools: remember, recall, history, forget, record_experience, recall_experiences. Nothing
    else is written to stdout.
    """
    from ..integrations.mcp import serve_stdio

    serve_stdio(state.memory(), group_id=state.group_id, speaker=speaker)


@cli.command()
@pass_state
def browser(state: State) -> None:
    """How to look at this memory in Neo4j Browser: URL, style sheet, saved queries."""
    from ..store._neo4j_browser import browser_instructions

    store = state.store or ""
    if not store.startswith(("bolt", "neo4j")):
        store = "neo4j://localhost:7687"  # the docker/compose.yml default
    click.echo(browser_instructions(store))


def _add_subcommands() -> None:
    # Imported here: the experience commands use this module's State and options.
    from .experience import experience

    cli.add_command(experience)
    from .pins import COMMANDS as usage_commands  # pin, unpin, pins, feedback (issue 16)

    for command in usage_commands:
        cli.add_command(command)


_add_subcommands()


def main(argv: list[str] | None = None) -> NoReturn:
    """Console-script entry point."""
    cli.main(args=argv, prog_name="graphmem")
    raise SystemExit(0)  # pragma: no cover - click exits itself
