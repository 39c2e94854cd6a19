"""``graphmem experience add|recall``: experience memory from the shell (thin over the library).

JSON options take a JSON object, or ``@FILE`` to read one from a file.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from .._errors import FilterError
from .._models import OUTCOMES
from .params import DATETIME, FILTER, build_filters
from .shared import State, echo, echo_json, echo_lines, json_option, pass_state

__all__ = ["experience"]


if TYPE_CHECKING:  # click >= 8.2 types ParamType as a generic; older ones are not subscriptable
    _JsonBase = click.ParamType[dict[str, Any], Any]
else:
    _JsonBase = click.ParamType


class JsonObjectType(_JsonBase):
    """A JSON object on the command line, or ``@path`` to a file holding one."""

    name = "JSON"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if isinstance(value, dict):
            return value
        text = str(value)
        where = "the value"
        if text.startswith("@"):
            path = Path(text[1:])
            where = str(path)
            try:
                text = path.read_text(encoding="utf-8")
            except OSError as exc:
                self.fail(f"cannot read {path}: {exc.strerror or exc}", param, ctx)
        try:
            loaded = json.loads(text)
        except json.JSONDecodeError as exc:
            self.fail(
                f"{where} is not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}",
                param,
                ctx,
            )
        if not isinstance(loaded, dict):
            self.fail(f"{where} must be a JSON object, got {type(loaded).__name__}", param, ctx)
        return loaded


JSON_OBJECT = JsonObjectType()


@click.group()
def experience() -> None:
    """Experience memory: store attempts (task, state, params, outcome) and recall them whole."""


@experience.command("add")
@click.argument("task")
@click.option("--state", "state_json", type=JSON_OBJECT,
              help="The state it started from (JSON object).")
@click.option("--params", type=JSON_OBJECT, help="The parameters tried (JSON object).")
@click.option("--outcome", type=JSON_OBJECT, help="What came of it (JSON object).")
@click.option("--success/--failure", default=None,
              help="Sets outcome.success (overrides the one in --outcome).")
@click.option("--payload", type=JSON_OBJECT,
              help="Large data kept with it but not indexed (trajectories; JSON object).")
@click.option("--meta", type=JSON_OBJECT, help="Fields only to filter on (JSON object).")
@click.option("--run-id", help="The run or session it belongs to.")
@click.option("--episode", help="Its number or name within the run.")
@click.option("--at", "occurred_at", type=DATETIME, help="When it happened (default: now).")
@json_option
@pass_state
def experience_add(state: State, task: str, state_json: dict[str, Any] | None,
                   params: dict[str, Any] | None, outcome: dict[str, Any] | None,
                   success: bool | None, payload: dict[str, Any] | None,
                   meta: dict[str, Any] | None, run_id: str | None, episode: str | None,
                   occurred_at: Any, as_json: bool) -> None:
    """Store one attempt at TASK."""
    result_of = dict(outcome or {})
    if success is not None:
        result_of["success"] = success
    result = state.memory(create=True).add_experience(
        task, state=state_json, params=params, outcome=result_of or None, payload=payload,
        meta=meta, run_id=run_id, episode=episode, group_id=state.group_id,
        occurred_at=occurred_at, source="cli",
    )
    if as_json:
        click.echo(result.model_dump_json(indent=2))
    elif result.already_present:
        echo(f"already recorded: {result.episode_id}")
    else:
        echo(f"recorded {result.episode_id} ({result.status}, "
              f"{result.facts_added} new facts, {len(result.superseded)} replaced)")


@experience.command("recall")
@click.argument("query", default="")
@click.option("--state", "state_json", type=JSON_OBJECT,
              help='The current state to be near, e.g. \'{"object_pos": [0.1, 0.2, 0]}\'.')
@click.option("-k", "k", type=click.IntRange(1, 1000), default=5, show_default=True,
              help="Number of attempts.")
@click.option("--outcome", type=click.Choice(OUTCOMES), default="any", show_default=True,
              help="Keep successes or failures only, or put successes first.")
@click.option("--filter", "filters", type=FILTER, multiple=True,
              help="Keep attempts with PATH=VALUE (also !=, <, <=, >, >=), e.g. "
              "state.object=\"red cube\" or params.force<5. Repeatable.")
@click.option("--as-of", type=DATETIME, help="Only attempts that had happened by then.")
@click.option("--payload", "include_payload", is_flag=True, help="Include each payload.")
@json_option
@pass_state
def experience_recall(state: State, query: str, k: int, outcome: str,
                      filters: tuple[tuple[str, str, Any], ...], as_of: Any,
                      include_payload: bool, as_json: bool, state_json: dict[str, Any] | None
                      ) -> None:
    """Past attempts most like QUERY and --state, best first (no LLM call)."""
    try:
        found = state.memory().recall_experiences(
            query, state=state_json, k=k, outcome=outcome,  # type: ignore[arg-type]
            filters=build_filters(filters), group_id=state.group_id, as_of=as_of,
            include_payload=include_payload,
        )
    except FilterError as exc:
        raise click.BadParameter(str(exc), param_hint="--filter") from None
    if as_json:
        echo_json([e.model_dump(mode="json") for e in found])
        return
    if not found:
        echo(f"no experiences in group {state.group_id!r} match")
        return
    for rank, exp in enumerate(found, 1):
        mark = {True: "success", False: "failure", None: "-"}[exp.success]
        echo_lines([f"{rank}. {exp.score:.3f} [{mark}] {exp.task}  ({exp.subject}, "
                     f"{exp.occurred_at.isoformat(timespec='seconds')}, {exp.id})"])
        for name in ("state", "params", "outcome", "meta"):
            section = getattr(exp, name)
            if section:
                echo_lines([f"     {name}: {json.dumps(section, ensure_ascii=False)}"])
        if exp.payload:
            echo_lines([f"     payload: {json.dumps(exp.payload, ensure_ascii=False)[:200]}"])
