"""``graphmem forget``: delete an episode, an entity or a group, after confirmation."""

from __future__ import annotations

import click

from .shared import State, echo, json_option, pass_state

__all__ = ["forget"]


@click.command()
@click.option("--episode", "episode_id", metavar="ID", help="Forget one episode.")
@click.option("--entity", metavar="NAME", help="Forget an entity and every fact about it.")
@click.option("--with-episodes", is_flag=True,
              help="With --entity: also forget the episodes it spoke or that state a fact "
                   "about it (kept otherwise).")
@click.option("--all-group", is_flag=True, help="Forget everything in the current --group.")
@click.option("--group", "forget_group", metavar="G",
              help="Forget everything in group G (the same as `graphmem --group G forget "
                   "--all-group`; another group than a global --group is a usage error).")
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
    if forget_group is not None and state.group is not None and forget_group != state.group:
        # Every other --group names the group a command works in; one forget must not
        # silently work in another.
        raise click.UsageError(
            f"--group {forget_group!r} after forget names another group than the global "
            f"--group {state.group!r}; to forget everything in a group use "
            "`graphmem --group G forget --all-group`"
        )
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
        from . import shared  # the terminal probes live there (tests stand in for a terminal)

        if not shared.stdin_is_tty():
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
    echo(
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
        echo(
            f"kept {result.own_episodes_kept} episode(s) that {entity!r} spoke or that state a "
            f"fact about it (their text still names it): {shown}. Forget them with `graphmem "
            "forget --episode ID` (those it spoke: `graphmem forget --entity "
            f"{shlex.quote(entity or '')} --with-episodes`)"
        )

