"""The `planverify` program: the Typer app, its commands in the order help lists them, and
`main`."""

from __future__ import annotations

from typing import Annotated

import typer

from planverify import __version__
from planverify.cli import convert, corrupt, goal, presets, review, score, show, verify
from planverify.cli import eval as evaluate
from planverify.cli import export as curate
from planverify.cli.commands import Command, Group
from planverify.records.redaction import install_log_redaction
from planverify.runs.console import out

app = typer.Typer(
    cls=Group,
    name="planverify",
    help="Verify and clean embodied-AI task plans with an iterative Judge/Planner loop.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


def _version(value: bool) -> None:
    if value:
        out.print(f"planverify {__version__}")
        raise typer.Exit()


@app.callback()
def _main(
    version: Annotated[
        bool,
        typer.Option(
            "--version", callback=_version, is_eager=True, help="Print the version and exit."
        ),
    ] = False,
) -> None:
    """Verify and clean embodied-AI task plans with an iterative Judge/Planner loop."""
    install_log_redaction()  # no log line shows a key or the server token


app.command(cls=Command)(verify.verify)
app.command(cls=Command)(show.show)
app.command(cls=Command)(convert.convert)
app.command(cls=Command)(corrupt.corrupt)
app.command(cls=Command)(score.score)
app.command("presets", cls=Command)(presets.list_presets)
app.command("goal", cls=Command)(goal.read_goal_command)
app.command("eval", cls=Command)(evaluate.eval_command)
app.command("export", cls=Command)(curate.export_command)
app.command("review", cls=Command)(review.review_command)


def main() -> None:
    """Entry point of the `planverify` script."""
    app()
