"""The click application. Thin: parse arguments, call ``GraphMemory``, print the result.

Exit codes, one rule for every command (docs/cli.md states it, from scripts/gen_cli_docs.py):
0 success; 1 an error (``Error: ...`` on one line, the traceback only with ``-v``); 2 invalid
input: a usage error, an ``InputError`` from the library, invalid records (nothing written);
130 interrupted (Ctrl-C). Asking for something that is not there is an error (1): a store that
does not exist (commands that only read or remove, ``State.memory``), ``forget`` of an unknown
episode or entity, or of a group that holds nothing (nothing is changed and no audit record is
written). Output cut short by its reader (``graphmem facts | head -1``) is not an error: the
command stops, exit 0.

Human output shows control characters of stored text as escapes (``render.safe``); ``--json``
output is exact. Lists of problems print the first ``MAX_LISTED`` (all with ``-v``).

This module holds the root group and ``main``; the commands live in one module per group
(``*_cmd.py``, ``experience.py``), their shared state and helpers in ``shared.py`` (re-exported
here). A command imports what only it needs (GraphML, MCP, the Neo4j Browser text) when it runs.
"""

from __future__ import annotations

import logging
import sys
from typing import NoReturn

import click

from . import ingest_cmd
from .admin_cmd import db, init
from .export_cmd import export, import_
from .facts_cmd import facts, history, recall, stats
from .forget_cmd import forget
from .ingest_cmd import BATCH_MAX, BATCH_MIN, BATCH_SECONDS, ingest, reprocess
from .shared import (
    EXIT_INTERRUPTED,
    EXIT_INVALID,
    EXTRACTORS,
    MAX_LISTED,
    GraphMemGroup,
    State,
    json_option,
    llm_options,
    pass_state,
)
from .surfaces_cmd import browser, mcp_command

__all__ = [
    "BATCH_MAX",
    "BATCH_MIN",
    "BATCH_SECONDS",
    "EXIT_INTERRUPTED",
    "EXIT_INVALID",
    "EXTRACTORS",
    "MAX_LISTED",
    "GraphMemGroup",
    "State",
    "cli",
    "json_option",
    "llm_options",
    "main",
    "pass_state",
]

# The batch rule the tests check, under the name it had when every command lived here.
_next_batch = ingest_cmd._next_batch


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


for _command in (init, db, ingest, reprocess, recall, history, facts, stats, forget, export,
                 import_, mcp_command, browser):
    cli.add_command(_command)


def _add_subcommands() -> None:
    # Imported here: the experience commands use this module's State and options.
    from .experience import experience

    cli.add_command(experience)
    from .pins import COMMANDS as usage_commands  # pin, unpin, pins, feedback

    for command in usage_commands:
        cli.add_command(command)


_add_subcommands()


def main(argv: list[str] | None = None) -> NoReturn:
    """Console-script entry point."""
    cli.main(args=argv, prog_name="graphmem")
    raise SystemExit(0)  # pragma: no cover - click exits itself
