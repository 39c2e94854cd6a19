"""The read commands: ``recall``, ``history``, ``facts`` and ``stats``."""

from __future__ import annotations

import json
from contextlib import suppress
from typing import Any

import click

from .._errors import FilterError
from . import render
from .params import DATETIME, FILTER, build_filters
from .shared import State, echo, echo_json, echo_lines, json_option, pass_state

__all__ = ["facts", "history", "recall", "stats"]


@click.command()
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
        echo(result.to_context())
    else:
        echo_lines(render.render_recall(result))


@click.command()
@click.argument("entity")
@click.option("--predicate", metavar="P", help="Only this predicate (e.g. lives_in).")
@json_option
@pass_state
def history(state: State, entity: str, predicate: str | None, as_json: bool) -> None:
    """Every fact about ENTITY, oldest first: supersession chain, reasons, source episodes."""
    memory = state.memory()
    facts = memory.history(entity, predicate=predicate, group_id=state.group_id)
    if as_json:
        echo_json([f.model_dump(mode="json") for f in facts])
        return
    if not facts:
        what = f" with predicate {predicate!r}" if predicate else ""
        echo(f"no facts about {entity!r}{what} in group {state.group_id!r}")
        return
    ids = list(dict.fromkeys(i for f in facts for i in f.episode_ids))
    episodes = {e.id: e for e in memory.store.episodes(ids)} if ids else {}
    echo_lines(render.render_history(facts, episodes))


@click.command()
@click.option("--entity", metavar="NAME", help="Only facts about this entity.")
@click.option("--history", "include_history", is_flag=True,
              help="Include facts that ended, were superseded or corrected.")
@click.option("--as-of", type=DATETIME, help="World time: the facts true at T.")
@click.option("--known-at", type=DATETIME, help="Record time: as memory believed them at T.")
@json_option
@pass_state
def facts(state: State, entity: str | None, include_history: bool, as_of: Any, known_at: Any,
          as_json: bool) -> None:
    """Current facts of the group (or about one entity); --as-of/--known-at the facts at
    another time, as recall takes them; --history lists every fact."""
    if include_history and (as_of is not None or known_at is not None):
        raise click.UsageError("--history lists every fact: give it or --as-of/--known-at")
    found = state.memory().facts(group_id=state.group_id, entity=entity,
                                 include_history=include_history, as_of=as_of,
                                 known_at=known_at)
    if as_json:
        echo_json([f.model_dump(mode="json") for f in found])
        return
    if not found:
        echo(f"no facts in group {state.group_id!r}" + (f" about {entity!r}" if entity else ""))
        return
    echo_lines(render.render_facts(found, show_status=include_history))


@click.command()
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
        echo_json(data)
        return
    echo_lines(render.render_mapping(values))

