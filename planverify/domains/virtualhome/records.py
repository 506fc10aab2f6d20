"""VirtualHome programs as episode records (`planverify convert --from virtualhome`).

A record is `{"id", "domain": "virtualhome", "goal": "<title>: <description>", "task": "<title>",
"actions": [...], "program": "file..."}`: the actions are the program's script lines as the
package writes them, and `program` names the program whose scene graph and goal the ids refer to.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from planverify.domains.virtualhome.data import (
    Program,
    ProgramError,
    installed_programs_dir,
    program_files,
    read_program_file,
)
from planverify.domains.virtualhome.notation import NotationError, parse_step
from planverify.records.episode import Episode, EpisodeError, parse_episode

DOMAIN = "virtualhome"


def program_record(program: Program) -> dict[str, Any]:
    """A program as an episode record."""
    goal = f"{program.title}: {program.description}" if program.description else program.title
    return {
        "id": program.name,
        "domain": DOMAIN,
        "goal": goal,
        "task": program.title,
        "actions": list(program.lines),
        "program": program.name,
    }


def read_record(path: Path) -> Episode:
    """The episode of one program file; `EpisodeError` naming the file when it is not one."""
    try:
        program = read_program_file(path)
        for number, line in enumerate(program.lines):
            try:
                parse_step(line)
            except NotationError as exc:
                raise ProgramError(f"step {number + 1}: {exc}") from None
    except ProgramError as exc:
        raise EpisodeError(str(path), 0, str(exc).removeprefix(f"{path}: ")) from None
    return parse_episode(program_record(program), source=str(path))


def iter_records(source: Path | None = None) -> Iterator[Episode | EpisodeError]:
    """The episodes of every program file under `source` (a folder or one file; by default the
    installed package's programs), or an error for each file that cannot be read."""
    folder = installed_programs_dir() if source is None else source
    files = [folder] if folder.is_file() else program_files(folder)
    if not files:
        yield EpisodeError(str(folder), 0, "no VirtualHome program file (file<N>_<M>.txt)")
    for path in files:
        try:
            yield read_record(path)
        except EpisodeError as exc:
            yield exc
