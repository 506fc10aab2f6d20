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
    epilog="Documentation: docs/index.md, and every command's options in docs/cli.md (the site: make docs).",
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


# Each command's help ends by naming the page of the documentation (docs/, the site `make docs`
# builds) that explains it; the command-line reference turns these into links.
DOCS = "Read more: {pages} (the site: make docs)."


def _docs(*pages: str) -> str:
    return DOCS.format(pages=", ".join(f"docs/{page}" for page in pages))


app.command(cls=Command, epilog=_docs("getting-started.md", "concepts.md"))(verify.verify)
app.command(cls=Command, epilog=_docs("records.md#checkpoints-resume-and-inspection"))(show.show)
app.command(cls=Command, epilog=_docs("records.md#teach-game-files", "virtualhome.md"))(
    convert.convert
)
app.command(cls=Command, epilog=_docs("evaluation.md#error-injection-planverify-corrupt"))(
    corrupt.corrupt
)
app.command(cls=Command, epilog=_docs("evaluation.md#scoring-planverify-score"))(score.score)
app.command("presets", cls=Command, epilog=_docs("models.md"))(presets.list_presets)
app.command("goal", cls=Command, epilog=_docs("concepts.md#goals-from-text"))(
    goal.read_goal_command
)
app.command("eval", cls=Command, epilog=_docs("evaluation.md#evaluation-planverify-eval"))(
    evaluate.eval_command
)
app.command("export", cls=Command, epilog=_docs("exports.md"))(curate.export_command)
app.command("review", cls=Command, epilog=_docs("review.md"))(review.review_command)


def main() -> None:
    """Entry point of the `planverify` script."""
    app()
