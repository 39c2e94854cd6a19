"""``graphmem pin|unpin|pins|feedback``: pinned facts and usage feedback from the shell (thin
over the library; see graphmem/usage/memory.py)."""

from __future__ import annotations

import click

from .._models import PinnedFact
from .shared import State, echo, echo_json, echo_lines, json_option, pass_state

__all__ = ["COMMANDS"]


def _pin_lines(pins: list[PinnedFact]) -> list[str]:
    return [
        f"{p.line()[2:]}  ({p.fact_id}, pinned {p.pinned_at.isoformat(timespec='seconds')})"
        for p in pins
    ]


def _group(state: State) -> str | None:
    """The global ``--group`` when given; else the fact's own group."""
    return state.group


@click.command("pin")
@click.argument("fact_id")
@json_option
@pass_state
def pin(state: State, fact_id: str, as_json: bool) -> None:
    """Pin FACT_ID: it heads every recall's context of its group, as a standing rule."""
    pinned = state.memory().pin(fact_id, group_id=_group(state), source="cli")
    if as_json:
        echo_json(pinned.model_dump(mode="json"))
        return
    echo_lines([f"pinned: {line}" for line in _pin_lines([pinned])])


@click.command("unpin")
@click.argument("fact_id")
@json_option
@pass_state
def unpin(state: State, fact_id: str, as_json: bool) -> None:
    """Unpin FACT_ID (the fact itself is unchanged)."""
    was = state.memory().unpin(fact_id, group_id=_group(state), source="cli")
    if as_json:
        echo_json({"fact_id": fact_id, "unpinned": was})
        return
    echo(f"unpinned {fact_id}" if was else f"{fact_id} was not pinned")


@click.command("pins")
@json_option
@pass_state
def pins(state: State, as_json: bool) -> None:
    """The group's pinned facts, in pin order, with what each says now."""
    found = state.memory().pins(group_id=state.group_id)
    if as_json:
        echo_json([p.model_dump(mode="json") for p in found])
        return
    if not found:
        echo(f"no pinned facts in group {state.group_id!r}")
        return
    echo_lines(_pin_lines(found))


@click.command("feedback")
@click.argument("item_id")
@click.option("--useful/--not-useful", required=True,
              help="Whether the recalled fact or episode helped.")
@click.option("--note", help="Why (kept with the feedback).")
@json_option
@pass_state
def feedback(state: State, item_id: str, useful: bool, note: str | None, as_json: bool) -> None:
    """Say whether the recalled fact or episode ITEM_ID was useful; later recalls rank it up
    or down. What is true (facts, times, history) does not change."""
    episode = state.memory().feedback(
        item_id, useful, group_id=_group(state), source="cli", note=note
    )
    if as_json:
        echo_json({"item_id": item_id, "useful": useful, "feedback_episode_id": episode})
        return
    echo(f"recorded: {item_id} {'useful' if useful else 'not useful'} ({episode})")


COMMANDS = (pin, unpin, pins, feedback)
