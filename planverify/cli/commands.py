"""The command classes of the application (`app.command(cls=Command)`): how help shows a flag,
and what Ctrl-C does.

- Typer's rich help gives every option a type column, flags included (`--static <bool>`), which
  reads as if the flag took a value; `--static true` then makes `true` an input file. Flags
  here get an empty metavar, so a flag's row shows its names and help only.
- Ctrl-C in any command says `interrupted` and exits 130 (a command that can say more, such as
  how to continue, says it first).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, TypeVar

import typer
from typer.core import TyperCommand, TyperGroup, TyperOption

from planverify.runs.console import err

Params = TypeVar("Params", bound=Sequence[Any])


def plain_flags(params: Params) -> Params:
    """The parameters, with every flag (help and `--no-x` pairs included) shown without a type."""
    for param in params:
        if isinstance(param, TyperOption) and param.is_flag and param.metavar is None:
            param.metavar = ""
    return params


class Command(TyperCommand):
    """A command whose flags show no value type in its help."""

    def get_params(self, ctx: Any) -> Any:
        return plain_flags(super().get_params(ctx))


class Group(TyperGroup):
    """The application's group: its own flags (`--version`, `--help`) show no value type, and
    Ctrl-C in any of its commands exits 130, saying so."""

    def get_params(self, ctx: Any) -> Any:
        return plain_flags(super().get_params(ctx))

    def invoke(self, ctx: Any) -> Any:
        try:
            return super().invoke(ctx)
        except KeyboardInterrupt:
            err.print("interrupted", highlight=False)
            raise typer.Exit(130) from None
