"""What every command shares: the global options' ``State``, the error handling of the root
group, output helpers and the LLM budget options. No command lives here (``app`` registers them).

Only light modules are imported at this level: a command pays for the library it uses when it
opens the memory (``State.memory``), so ``graphmem --help`` and ``--version`` stay quick.
"""

from __future__ import annotations

import os
import sys
import tempfile
import traceback
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, TypeVar

import click

from .._errors import GraphMemError, InputError, NotFoundError
from . import render

if TYPE_CHECKING:
    from .._memory import GraphMemory

__all__ = [
    "EXIT_INTERRUPTED",
    "EXIT_INVALID",
    "EXTRACTORS",
    "MAX_LISTED",
    "GraphMemGroup",
    "State",
    "apply_llm_options",
    "atomic_output",
    "echo",
    "echo_json",
    "echo_lines",
    "echo_listed",
    "json_option",
    "llm_options",
    "one_line",
    "pass_state",
]

F = TypeVar("F", bound=Callable[..., Any])
EXTRACTORS = ("auto", "rules", "structured", "llm")
EXIT_INVALID = 2
EXIT_INTERRUPTED = 130
MAX_LISTED = 20  # problems, skipped records and files printed on stderr (all of them with -v)


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

    def memory(self, *, create: bool = False) -> GraphMemory:
        """The memory of ``--store``. A command that only reads or changes what is there
        (``create=False``) refuses a store that does not exist when it first opens it (after
        its arguments were checked), so that a mistyped path is an error and not a new, empty
        memory; ``init``, ``ingest``, ``import`` and other commands that add to memory create
        it."""
        if self._memory is None:
            from .._config import Settings
            from .._memory import GraphMemory

            settings = Settings.from_env(**self.settings_overrides)
            self._memory = GraphMemory(self.store, settings=settings, create=create)
            click.get_current_context().call_on_close(self._memory.close)
        return self._memory

    def info(self, message: str) -> None:
        """A human message on stderr (hidden by ``-q``)."""
        if not self.quiet:
            click.echo(render.safe(message), err=True)


pass_state = click.make_pass_decorator(State)


def one_line(text: str) -> str:
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


class _InvalidInput(click.ClickException):
    """An ``InputError`` on the command line: ``Error: ...``, exit 2 in every command."""

    exit_code = EXIT_INVALID


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
            invalid = isinstance(exc, InputError) and not isinstance(exc, NotFoundError)
            kind = _InvalidInput if invalid else click.ClickException
            raise kind(one_line(str(exc))) from exc
        except OSError as exc:  # an unwritable -o file, a full disk: the user's to fix
            state = ctx.find_object(State)
            if state is not None and state.verbose:
                traceback.print_exc(file=sys.stderr)
            name = exc.filename2 or exc.filename  # filename2: the target of a rename
            where = f": {name}" if name else ""
            raise click.ClickException(f"{exc.strerror or exc}{where}") from exc


@contextmanager
def atomic_output(output: str) -> Iterator[IO[str]]:
    """A text file to write ``output`` through: a temporary file beside it, renamed over it
    only when the block ends without an error, so that a failed command leaves the old file
    as it was (``-`` is stdout, written directly)."""
    if output == "-":
        yield sys.stdout
        return
    target = Path(output).expanduser()
    handle, temp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp",
                                    dir=target.resolve().parent)
    try:
        with os.fdopen(handle, "w", encoding="utf-8", newline="") as out:
            yield out
        try:
            mode = target.stat().st_mode & 0o777
        except OSError:  # a new file: what the umask allows
            umask = os.umask(0)
            os.umask(umask)
            mode = 0o666 & ~umask
        os.chmod(temp, mode)
        os.replace(temp, target)
    except BaseException:
        with suppress(OSError):
            os.unlink(temp)
        raise


def json_option(func: F) -> F:
    return click.option(
        "--json", "as_json", is_flag=True, help="Print machine-readable JSON on stdout."
    )(func)


def echo_json(value: Any) -> None:
    click.echo(render.dumps(value))


def echo(text: str, *, err: bool = False) -> None:
    """Human output: control characters of stored text shown as escapes (``render.safe``)."""
    click.echo(render.safe(text), err=err)


def echo_lines(lines: list[str]) -> None:
    for line in lines:
        click.echo(render.safe(line, inline=True))


def echo_listed(lines: Iterable[str], *, prefix: str = "") -> None:
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


def apply_llm_options(state: State, max_calls: int | None, max_tokens: int | None,
                      concurrency: int | None) -> None:
    state.settings_overrides.update(
        {k: v for k, v in (("llm_max_calls", max_calls), ("llm_max_tokens", max_tokens),
                           ("llm_concurrency", concurrency)) if v is not None}
    )


# The terminal probes: the commands look them up on this module when they run, so that a test
# can stand in for a terminal by replacing them here.
def stdin_is_tty() -> bool:
    return sys.stdin.isatty()


def stderr_is_tty() -> bool:
    return sys.stderr.isatty()
