"""How `planverify ... --help` shows options: a flag without a value type.

Typer's rich help gives every option a type column, flags included (`--static <bool>`), which
reads as if the flag took a value; `--static true` then makes `true` an input file. `Command`
and `Group` give flags an empty metavar, so a flag's row shows its names and help only. Every
command of the application uses them (`app.command(cls=Command)`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, TypeVar

from typer.core import TyperCommand, TyperGroup, TyperOption

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
    """The application's group: its own flags (`--version`, `--help`) show no value type."""

    def get_params(self, ctx: Any) -> Any:
        return plain_flags(super().get_params(ctx))
