"""The VirtualHome data the installed `eai-eval` package ships, read where it lies.

Scene 1 only: 518 human programs, each a text file (title, description, script lines) with its
initial and final scene graph, and `vh_goal` goal conditions for 342 of them.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from planverify.records.jsonl import load_json

PACKAGE = "virtualhome_eval"  # the import name of `eai-eval`
DISTRIBUTION = "eai-eval"
INSTALL_HINT = "pip install 'planverify[virtualhome]' && pip install --no-deps 'eai-eval==1.0.5'"
DATASET = Path("dataset", "programs_processed_precond_nograb_morepreconds")
SCENE = Path("TrimmedTestScene1_graph", "results_intentions_march-13-18")
GOALS = Path("resources", "task_state_LTL_formula_accurate.json")
SCENE_KEY = "scene_1"  # the goals file's key for the scene the programs run in
_NAME = re.compile(r"file(\d+)_(\d+)")


class PackageMissing(RuntimeError):
    """`eai-eval` is not installed; says how to install it."""

    def __init__(self) -> None:
        super().__init__(f"VirtualHome needs the eai-eval package: {INSTALL_HINT}")


class ProgramError(ValueError):
    """A program file that cannot be read as a VirtualHome program."""


@dataclass(frozen=True)
class Program:
    """One VirtualHome program: a task, described by a person, and the steps they wrote."""

    name: str  # the file name without its suffix, e.g. "file628_2"
    title: str  # the task title, e.g. "Drink"
    description: str  # the person's description of how they do it
    lines: tuple[str, ...]  # the script lines, e.g. "[WALK] <kitchen> (1.11)"

    @property
    def key(self) -> str:
        """The program's key in the goals file (the name without "file")."""
        return self.name.removeprefix("file")


def package_root() -> Path:
    """Where the installed `virtualhome_eval` package lies; `PackageMissing` if it does not."""
    spec = importlib.util.find_spec(PACKAGE)
    if spec is None or spec.origin is None:
        raise PackageMissing()
    return Path(spec.origin).parent


def package_version() -> str:
    """The installed `eai-eval` version (its `__version__` is not kept up to date)."""
    try:
        return importlib.metadata.version(DISTRIBUTION)
    except importlib.metadata.PackageNotFoundError:
        raise PackageMissing() from None


def installed_programs_dir() -> Path:
    """The folder of the installed package's scene-1 program files."""
    return package_root() / DATASET / "executable_programs" / SCENE


def program_files(directory: Path) -> list[Path]:
    """The program files (`file<N>_<M>.txt`) under a folder, in the order of their numbers."""
    found = [p for p in directory.rglob("*.txt") if _NAME.fullmatch(p.stem)]
    return sorted(found, key=_number_order)


def _number_order(path: Path) -> tuple[int, int, str]:
    match = _NAME.fullmatch(path.stem)
    assert match is not None  # program_files keeps only such names
    return int(match[1]), int(match[2]), str(path)


def read_program_file(path: Path) -> Program:
    """A program file: its title, description and script lines; `ProgramError` if it is not
    one."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ProgramError(f"{path}: cannot be read ({exc})") from None
    lines = text.splitlines()
    steps = tuple(line.strip() for line in lines[2:] if line.strip().startswith("["))
    if len(lines) < 2 or not lines[0].strip():
        raise ProgramError(f"{path}: no task title on its first line")
    if not steps:
        raise ProgramError(f"{path}: no script line (`[VERB] <object> (1.ID)`)")
    return Program(path.stem, lines[0].strip(), lines[1].strip(), steps)


def program_name(name: str) -> str:
    """The name, when it is one of the package's program names ("file628_2"); `ProgramError`
    otherwise: a name from a record never becomes a path outside the package's data."""
    if not _NAME.fullmatch(name):
        raise ProgramError(f"{name[:80]!r} is no program name (such as file628_2)")
    return name


def read_program(name: str) -> Program:
    """A program of the installed package by name, e.g. "file628_2"."""
    file = f"{program_name(name)}.txt"
    path = installed_programs_dir() / file
    try:
        return read_program_file(path)
    except ProgramError:
        raise ProgramError(f"{name}: no such program in the installed package") from None


@dataclass(frozen=True)
class SceneGraphs:
    """A program's scene graph before and after a person carried it out in VirtualHome."""

    initial: dict[str, Any]  # {"nodes": [...], "edges": [...]}
    final: dict[str, Any]  # the same, after the program


def scene_graphs(name: str) -> SceneGraphs:
    """The initial and final scene graphs of an installed program."""
    file = f"{program_name(name)}.json"
    path = package_root() / DATASET / "init_and_final_graphs" / SCENE / file
    try:
        data = load_json(path)
    except (OSError, ValueError):
        raise ProgramError(f"{name}: no scene graph in the installed package") from None
    return SceneGraphs(initial=data["init_graph"], final=data["final_graph"])


@cache
def _goal_table() -> dict[str, dict[str, Any]]:
    table: dict[str, dict[str, Any]] = load_json(package_root() / GOALS)[SCENE_KEY]
    return table


def raw_goal(title: str, key: str) -> dict[str, Any] | None:
    """The `vh_goal` of a program (by task title and key), as the package writes it; None when
    the program has none."""
    entry = _goal_table().get(title, {}).get(key)
    return None if entry is None else dict(entry["vh_goal"])


def titles_with_goals() -> dict[str, list[str]]:
    """Each task title with a goal, with the keys of its programs."""
    return {title: list(programs) for title, programs in _goal_table().items()}
