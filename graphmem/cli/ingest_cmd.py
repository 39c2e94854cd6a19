"""``graphmem ingest`` and ``graphmem reprocess``: episodes in, facts extracted, a summary out."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import click

from ..sources.records import (
    FORMATS,
    INPUT_EXTENSIONS,
    PER_CHOICES,
    STDIN_NAME,
    ParseResult,
    Problem,
)
from .shared import (
    EXIT_INTERRUPTED,
    EXIT_INVALID,
    EXTRACTORS,
    State,
    apply_llm_options,
    echo_json,
    echo_lines,
    echo_listed,
    json_option,
    llm_options,
    one_line,
    pass_state,
)

if TYPE_CHECKING:
    from .._models import IngestResult

__all__ = ["BATCH_MAX", "BATCH_MIN", "BATCH_SECONDS", "ingest", "reprocess"]

# Episodes per GraphMemory.add_episodes call. Each call commits its episodes (Ctrl-C loses at most
# the batch in flight, and a re-run completes it) and lets the engine batch embeddings and writes
# and run LLM extractions concurrently. The size adapts so that the progress bar moves about
# every half second: from BATCH_MIN, doubled after a fast batch, halved after a slow one.
BATCH_MIN = 4
BATCH_MAX = 256
BATCH_SECONDS = 0.5


# ------------------------------------------------------------------------------- ingest
@click.command()
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
                  they carry an offset); other lines continue the turn above; auto picks
                  it on one timestamped turn, or when half the lines are "Speaker:" lines
      prose       plain text, one episode per paragraph (--per file: per file)
    --per paragraph applies to prose, --per file to prose and transcripts; on other
    formats either is reported as invalid.

    Every record of every input is validated first: if any is invalid, each is listed as
    FILE:LINE: field: reason, nothing is written, and the exit status is 2. With
    --skip-invalid each invalid record is skipped on its own: a JSONL line (invalid JSON, bytes
    that are not UTF-8, a bad field), or a whole file for formats read whole. Files in a
    directory without a known extension, and hidden ones (a name starting with '.'), are
    listed as skipped (a file named itself is always read). A reference time before 1900 or
    more than a year ahead is kept, with a warning line. Re-ingesting a file adds nothing.
    After Ctrl-C the committed episodes stay; run the command again to finish the rest.

    With --group G (or GRAPHMEM_GROUP) every episode goes to G, and a JSONL line naming another
    group_id is invalid unless --allow-other-groups is given. Without --group, a line's group_id is
    honoured (others go to 'default'); groups other than the command's are reported.
    """
    apply_llm_options(state, max_calls, max_tokens, concurrency)
    bound = state.group if state.group is not None and not allow_other_groups else None
    parsed = _parse_inputs(paths, fmt, per, state.group_id, assume_utc,
                           allow_other_groups=bound is None)
    skipped_files = [{"file": f, "reason": _skip_reason(f)} for f in parsed.skipped]
    echo_listed((f"{f}: {_skip_reason(f)}" for f in parsed.skipped), prefix="skipped: ")
    if parsed.problems and not skip_invalid:
        echo_listed(str(problem) for problem in parsed.problems)
        if as_json:
            echo_json({"ok": False, "written": 0,
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
        echo_listed((str(problem) for problem in parsed.problems), prefix="skipped: ")
    echo_listed(_odd_times(parsed), prefix="warning: ")
    memory = state.memory(create=True)
    memory.connect()
    summary = _Summary(files=len(parsed.files), invalid=len(parsed.problems),
                       total=len(parsed.records))
    groups: dict[str, int] = {}
    from . import shared  # the terminal probes live there (tests stand in for a terminal)

    show_bar = not state.quiet and not as_json and shared.stderr_is_tty() and summary.total > 0
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
        echo_json({"ok": not interrupted and summary.failed == 0, **summary.as_dict(),
                    "interrupted": interrupted, "groups": groups,
                    "invalid_records": [p.to_dict() for p in parsed.problems],
                    "skipped_files": skipped_files})
    elif not state.quiet:
        echo_lines(summary.lines())
        if groups and set(groups) != {state.group_id}:
            echo_lines(["groups written: " + ", ".join(
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
            f"(first error: {one_line(summary.first_error or '?')}); "
            "run `graphmem reprocess` once the cause is fixed"
        )


_NOT_INPUT = (f"not an input file (its extension is not one of {', '.join(INPUT_EXTENSIONS)}; "
              "name the file itself to ingest it)")
_HIDDEN = "hidden (its name starts with '.'; name the file itself to ingest it)"


def _odd_times(parsed: ParseResult) -> Iterator[str]:
    """``FILE:LINE: reference_time … is before 1900`` for each record dated implausibly."""
    from .._time import implausible_time

    for record in parsed.records:
        odd = implausible_time(record.episode.get("reference_time"))
        if odd is not None:
            where = f"{record.file}:{record.line}" if record.line else record.file
            yield f"{where}: {odd}"


def _skip_reason(path: str) -> str:
    return _HIDDEN if Path(path).name.startswith(".") else _NOT_INPUT


def _parse_inputs(paths: tuple[str, ...], fmt: str, per: str, group_id: str,
                  assume_utc: bool, *, allow_other_groups: bool = True) -> ParseResult:
    from ..sources.files import (  # the parsers: ingest only
        iter_input_files,
        parse_bytes,
        parse_file,
    )

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
@click.command()
@click.option("--extractor", type=click.Choice(EXTRACTORS), default="auto", show_default=True,
              help="Extractor to run again.")
@llm_options
@json_option
@pass_state
def reprocess(state: State, extractor: str, as_json: bool, max_calls: int | None,
              max_tokens: int | None, concurrency: int | None) -> None:
    """Run extraction again for episodes left pending or failed (e.g. after an LLM outage)."""
    apply_llm_options(state, max_calls, max_tokens, concurrency)
    started = time.perf_counter()
    results = state.memory().reprocess(group_id=state.group, extractor=extractor)
    summary = _Summary(files=0, invalid=0, total=len(results))
    for result in results:
        summary.add(result)
    summary.seconds = time.perf_counter() - started
    if as_json:
        echo_json({"ok": summary.failed == 0, **summary.as_dict()})
    else:
        extracted = summary.episodes - summary.failed
        click.echo(f"reprocessed {summary.episodes} episode(s): {extracted} extracted, "
                   f"{summary.failed} failed")
        echo_lines(summary.lines()[1:])
    if summary.failed:
        raise click.ClickException(
            f"{summary.failed} episode(s) still failed: {one_line(summary.first_error or '?')}"
        )

