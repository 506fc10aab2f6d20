"""What every command shares: the default store, usage errors, and checks of inputs and outputs."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path

import typer

from planverify.runs.console import err, say

DEFAULT_CHECKPOINT = Path(".planverify") / "checkpoints.sqlite"


def known_stores() -> list[Path]:
    """The SQLite checkpoint stores under the default one's folder (`make demo` writes its
    own there): the default first, the others by path."""
    if not DEFAULT_CHECKPOINT.parent.is_dir():
        return []
    found = sorted(DEFAULT_CHECKPOINT.parent.rglob("*.sqlite"))
    first = [DEFAULT_CHECKPOINT] if DEFAULT_CHECKPOINT in found else []
    return first + [path for path in found if path != DEFAULT_CHECKPOINT]


def fail(message: str, code: int = 2) -> typer.Exit:
    """Print a one-line error and return the exit to raise."""
    say(err, "error:", "bold red", message)
    return typer.Exit(code)


def check_output(output: Path | None) -> None:
    """A usage error (exit 2) when `--output` cannot be written as a file."""
    from planverify.stores.files import OutputNotFile, output_target

    if output is None:
        return
    if output.is_dir():
        raise fail(f"--output {output} is a directory; give a file name")
    if output.parent.exists() and not output.parent.is_dir():
        raise fail(f"--output {output}: {output.parent} is not a directory")
    try:
        output_target(output)
    except OutputNotFile as exc:
        raise fail(str(exc)) from None


def check_clash(
    outputs: Iterable[Path | None], inputs: Iterable[str | Path], split: str | None
) -> None:
    """A usage error (exit 2) when an output is one of the files the inputs name."""
    from planverify.inputs.sources import input_files
    from planverify.stores.files import OutputClash, clash

    try:
        clash([o for o in outputs if o is not None], input_files(inputs, split=split))
    except OutputClash as exc:
        raise fail(str(exc)) from None


@contextmanager
def writing(output: Path | None) -> Iterator[None]:
    """Hold the lock of `output` for the block: exit 2 when another run is writing it."""
    from planverify.stores.files import OutputBusy, OutputNotFile, output_lock

    with ExitStack() as stack:
        if output is not None:
            try:
                stack.enter_context(output_lock(output))
            except (OutputBusy, OutputNotFile) as exc:
                raise fail(str(exc)) from None
        yield


def check_sources(
    inputs: list[str], split: str | None, *, games_only: bool = False, labelled: bool = True
) -> None:
    """A usage error (exit 2) when the inputs name nothing to read, or files of another kind."""
    from planverify.inputs.sources import InputError, check_inputs

    try:
        check_inputs(inputs, split=split, games_only=games_only, labelled=labelled)
    except InputError as exc:
        raise fail(str(exc)) from None
