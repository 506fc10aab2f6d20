"""`planverify goal`: how a goal text is read (the goal spec the rules Judge checks)."""

from __future__ import annotations

from typing import Annotated

import orjson
import typer

from planverify.cli.shared import (
    fail,
)
from planverify.runs.console import literal, out


def read_goal_command(
    text: Annotated[str, typer.Argument(metavar="TEXT", help="The goal, in words.")],
    dialogue: Annotated[
        list[str] | None,
        typer.Option(
            "--dialogue",
            metavar="LINE",
            help='A line of dialogue, "Commander: ..." or "Driver: ..." (repeatable).',
        ),
    ] = None,
    task: Annotated[
        str | None, typer.Option(metavar="FAMILY", help='TEACh task family, e.g. "Coffee".')
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the reading as JSON.")] = False,
) -> None:
    """Print the goal spec read from a goal text and the Commander's words (exit 1: none)."""
    from planverify.world.goal_families import FAMILIES
    from planverify.world.text_goals import read_goal

    if task is not None and " ".join(task.split()).lower() not in {f.lower() for f in FAMILIES}:
        raise fail(f"unknown task family {task!r}; known: {', '.join(FAMILIES)}")
    reading = read_goal(text, dialogue or [], task=task)
    if as_json:
        record = {
            "spec": reading.spec.model_dump(mode="json") if reading.spec else None,
            "focus": reading.focus,
            "request": reading.request,
            "note": reading.note,
        }
        out.print(literal(orjson.dumps(record).decode()), soft_wrap=True)
    elif reading.spec is None:
        out.print(literal(reading.note or "no spec read"), soft_wrap=True)
        if reading.focus:
            out.print(literal(f"objects named: {', '.join(reading.focus)}"), soft_wrap=True)
    else:
        spec = reading.spec
        lines = [f"{spec.task}: {spec.text}", "components:"]
        lines += [f"  {c.describe()}" for c in spec.components]
        if spec.relations:
            lines += ["relations:"] + [f"  {r.describe()}" for r in spec.relations]
        for line in lines:
            out.print(literal(line), soft_wrap=True)
    if reading.spec is None:
        raise typer.Exit(1)
