"""An MCP server (stdio) that gives MCP-capable agent hosts a graphmem memory.

Needs ``pip install 'graphmem[mcp]'`` (the official ``mcp`` Python SDK, version 2). Tools, each
with a JSON schema for its arguments and a text answer:

- ``remember(text, speaker?, reference_time?)`` — store an episode, say what changed;
- ``recall(query, as_of?, known_at?, k?)`` — relevant facts, replaced values, conflicts;
- ``history(entity, predicate?)`` — an entity's timeline, oldest first;
- ``forget(episode_id? | entity?)`` — delete an episode or an entity (provenance-refcounted);
- ``record_experience(task, state?, params?, outcome?, success?, run_id?, episode?)`` — store
  one attempt of a robot or a tool-using agent;
- ``recall_experiences(query?, state?, k?, outcome?, filters?)`` — past attempts like this
  one, whole (state, parameters, outcome), successes first by default;
- ``pin(fact? | rule?)`` / ``unpin(fact)`` — standing rules shown first in every recall;
- ``feedback(item, useful, note?)`` — say whether a recalled fact or episode helped.

Run it with ``graphmem mcp`` (global ``--store`` / ``--group`` apply), or
``python -m graphmem.integrations.mcp --store memory.db [--group G] [--speaker NAME]``. From
Python: ``serve_stdio(GraphMemory("memory.db"))``, or ``build_server(memory)`` for the server
object (``MCPServer``) to run on another transport or to test in-process.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import Field

from .._errors import ConfigError, GraphMemError
from .._memory import GraphMemory
from . import DESCRIPTIONS, MemoryToolkit

if TYPE_CHECKING:
    from mcp.server.mcpserver import MCPServer

__all__ = ["build_server", "main", "serve_stdio"]

INSTRUCTIONS = (
    "graphmem is this user's long-term memory, a temporal knowledge graph. Call `recall` before "
    "answering anything that depends on the user, their preferences or past events; call "
    "`remember` with each new thing the user tells you about themselves or the world (in their "
    "words, with speaker set to who said it). Newer statements replace older ones, and "
    "corrections replace what they correct, so recall always shows what is true now and, marked "
    "as replaced, what used to be."
)

def _mcp_server_class() -> tuple[type[MCPServer[Any]], type[Exception], Any]:
    try:
        from mcp.server.mcpserver import MCPServer
        from mcp.server.mcpserver.exceptions import ToolError
        from mcp.types import ToolAnnotations
    except ImportError as exc:
        raise ConfigError(
            "the MCP server needs the mcp SDK, version 2: pip install 'graphmem[mcp]' "
            f"({exc})"
        ) from exc
    return MCPServer, ToolError, ToolAnnotations


def build_server(
    memory: GraphMemory,
    *,
    group_id: str = "default",
    speaker: str | None = None,
    name: str = "graphmem",
    source: str | None = "mcp",
) -> MCPServer[Any]:
    """An ``MCPServer`` exposing remember, recall, history, forget, record_experience,
    recall_experiences, pin, unpin and feedback on one memory group."""
    server_class, tool_error, annotations = _mcp_server_class()
    kit = MemoryToolkit(memory, group_id=group_id, speaker=speaker, source=source)
    server = server_class(name=name, instructions=INSTRUCTIONS)

    def guarded(call: Callable[[], str]) -> str:
        try:
            return call()
        except GraphMemError as exc:
            raise tool_error(str(exc)) from exc

    def remember(
        text: Annotated[str, Field(min_length=1, description="What to remember, verbatim.")],
        speaker: Annotated[
            str | None, Field(description="Who said it; first-person text is about them.")
        ] = None,
        reference_time: Annotated[
            str | None,
            Field(description="When it was said or happened (ISO-8601 with Z/offset, or a "
                  "date); default: now."),
        ] = None,
    ) -> str:
        return guarded(
            lambda: kit.remember(text, speaker=speaker, reference_time=reference_time)
        )

    def recall(
        query: Annotated[str, Field(min_length=1, description="The question or topic.")],
        as_of: Annotated[
            str | None, Field(description="World time: what was true then (ISO-8601 or a date).")
        ] = None,
        known_at: Annotated[
            str | None,
            Field(description="Record time: what memory believed then (ISO-8601 or a date)."),
        ] = None,
        k: Annotated[int, Field(ge=1, le=100, description="How many facts at most.")] = 8,
    ) -> str:
        return guarded(lambda: kit.recall(query, as_of=as_of, known_at=known_at, k=k))

    def history(
        entity: Annotated[str, Field(min_length=1, description="The entity's name.")],
        predicate: Annotated[
            str | None, Field(description="Only this relation, e.g. lives_in or works_at.")
        ] = None,
    ) -> str:
        return guarded(lambda: kit.history(entity, predicate=predicate))

    def forget(
        episode_id: Annotated[
            str | None, Field(description="The id of an episode to delete (from remember).")
        ] = None,
        entity: Annotated[
            str | None, Field(description="The name of an entity to delete with its facts.")
        ] = None,
    ) -> str:
        return guarded(lambda: kit.forget(episode_id=episode_id, entity=entity))

    def record_experience(
        task: Annotated[str, Field(min_length=1, description="The task attempted, in words.")],
        state: Annotated[
            dict[str, Any] | None,
            Field(description="The state it started from: named values, numbers or vectors "
                  "(e.g. {\"object\": \"red cube\", \"object_pos\": [0.1, 0.2, 0.0]})."),
        ] = None,
        params: Annotated[
            dict[str, Any] | None, Field(description="The parameters or actions tried.")
        ] = None,
        outcome: Annotated[
            dict[str, Any] | None, Field(description="What came of it (measurements).")
        ] = None,
        success: Annotated[
            bool | None, Field(description="Whether it succeeded (outcome.success).")
        ] = None,
        run_id: Annotated[
            str | None, Field(description="The run or session it belongs to.")
        ] = None,
        episode: Annotated[
            int | None, Field(description="Its number within the run; omit for a new one.")
        ] = None,
    ) -> str:
        return guarded(
            lambda: kit.record_experience(
                task, state=state, params=params, outcome=outcome, success=success,
                run_id=run_id, episode=episode,
            )
        )

    def recall_experiences(
        query: Annotated[str, Field(description="The task or situation, in words.")] = "",
        state: Annotated[
            dict[str, Any] | None,
            Field(description="The current state: named numbers or vectors to be near."),
        ] = None,
        k: Annotated[int, Field(ge=1, le=50, description="How many attempts at most.")] = 5,
        outcome: Annotated[
            Literal["any", "success_first", "success_only", "failure_only"],
            Field(description="Which attempts and in what order."),
        ] = "success_first",
        filters: Annotated[
            dict[str, Any] | None,
            Field(description="Conditions every attempt must meet, e.g. "
                  "{\"state.object\": \"red cube\", \"params.force\": {\"$lt\": 5}}."),
        ] = None,
    ) -> str:
        return guarded(
            lambda: kit.recall_experiences(
                query, state=state, k=k, outcome=outcome, filters=filters
            )
        )

    def pin(
        fact: Annotated[
            str | None,
            Field(description="A remembered fact: its statement as recall showed it, or its id."),
        ] = None,
        rule: Annotated[
            str | None, Field(description="Or a new standing rule, in words.")
        ] = None,
    ) -> str:
        return guarded(lambda: kit.pin(fact, rule=rule))

    def unpin(
        fact: Annotated[
            str, Field(min_length=1, description="The pinned fact's statement, or its id.")
        ],
    ) -> str:
        return guarded(lambda: kit.unpin(fact))

    def feedback(
        item: Annotated[
            str,
            Field(min_length=1, description="A fact's statement as recall showed it, or a fact "
                  "or episode id."),
        ],
        useful: Annotated[bool, Field(description="Whether it helped.")],
        note: Annotated[str | None, Field(description="Why, in a few words.")] = None,
    ) -> str:
        return guarded(lambda: kit.feedback(item, useful, note=note))

    # (tool, writes?, destroys?): the annotations hosts use to ask before a call.
    for tool, writes, destroys in (
        (remember, True, False),
        (recall, False, False),
        (history, False, False),
        (forget, True, True),
        (record_experience, True, False),
        (recall_experiences, False, False),
        (pin, True, False),
        (unpin, True, False),
        (feedback, True, False),
    ):
        hints = (
            annotations(read_only_hint=False, destructive_hint=destroys)
            if writes
            else annotations(read_only_hint=True)
        )
        server.add_tool(
            tool,
            name=tool.__name__,
            description=DESCRIPTIONS[tool.__name__],
            annotations=hints,
            structured_output=False,
        )
    return server


def serve_stdio(
    memory: GraphMemory,
    *,
    group_id: str = "default",
    speaker: str | None = None,
    name: str = "graphmem",
) -> None:
    """Serve ``memory`` over stdin/stdout until the host closes the connection.

    The store is opened (and migrated) before serving, so a bad store fails at once. Nothing but
    MCP messages is written to stdout; logs go to stderr. The caller keeps ownership of
    ``memory`` (close it afterwards).
    """
    server = build_server(memory, group_id=group_id, speaker=speaker, name=name)
    memory.connect()
    server.run("stdio")


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m graphmem.integrations.mcp``: the same server as ``graphmem mcp``."""
    parser = argparse.ArgumentParser(
        prog="python -m graphmem.integrations.mcp",
        description="Serve a graphmem memory to MCP hosts over stdio.",
    )
    parser.add_argument(
        "--store",
        default=os.environ.get("GRAPHMEM_STORE"),
        help="store URL or .db path (default: $GRAPHMEM_STORE, else ./graphmem.db)",
    )
    parser.add_argument(
        "--group",
        default=os.environ.get("GRAPHMEM_GROUP") or "default",
        help="memory group (default: $GRAPHMEM_GROUP, else 'default')",
    )
    parser.add_argument("--speaker", default=None, help="who first-person text is about")
    parser.add_argument(
        "--log-level",
        default="WARNING",
        choices=["DEBUG", "INFO", "WARNING", "ERROR"],
        help="logging on stderr (default: WARNING)",
    )
    args = parser.parse_args(argv)
    logging.basicConfig(
        level=args.log_level, stream=sys.stderr, format="%(levelname)s %(name)s: %(message)s"
    )
    try:
        memory = GraphMemory(args.store)
        try:
            serve_stdio(memory, group_id=args.group, speaker=args.speaker)
        finally:
            memory.close()
    except GraphMemError as exc:
        print(f"graphmem mcp: error: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":  # pragma: no cover - exercised through a subprocess
    sys.exit(main())
