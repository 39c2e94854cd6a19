"""``graphmem mcp`` and ``graphmem browser``: other ways to reach the same memory."""

from __future__ import annotations

import click

from .shared import State, pass_state

__all__ = ["browser", "mcp_command"]


@click.command("mcp")
@click.option("--speaker", metavar="NAME",
              help="Whom first-person text is about when remember names no speaker.")
@pass_state
def mcp_command(state: State, speaker: str | None) -> None:
    """Serve this memory to MCP hosts over stdio (needs graphmem[mcp]).

    Tools: remember, recall, history, forget, record_experience, recall_experiences, pin,
    unpin, feedback. Nothing else is written to stdout.
    """
    from ..integrations.mcp import serve_stdio

    serve_stdio(state.memory(create=True), group_id=state.group_id, speaker=speaker)


@click.command()
@pass_state
def browser(state: State) -> None:
    """How to look at this memory in Neo4j Browser: URL, style sheet, saved queries."""
    from ..store.neo4j.browser import browser_instructions

    store = state.store or ""
    if not store.startswith(("bolt", "neo4j")):
        store = "neo4j://localhost:7687"  # the docker/compose.yml default
    click.echo(browser_instructions(store))


