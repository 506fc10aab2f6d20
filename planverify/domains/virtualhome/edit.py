"""The program as the VirtualHome Judge edits it: its lines (`Entry`), what the Judge has done
to it so far (`Work`), and reading it: each line's step, the lines in order with those removed,
the simulator's states along them, and whether an edited program still meets what it met."""

from __future__ import annotations

from dataclasses import dataclass
from itertools import pairwise

from planverify.domains.virtualhome.goals import GoalCheck
from planverify.domains.virtualhome.kinds import kind_of
from planverify.domains.virtualhome.notation import Argument, NotationError, Step, parse_step
from planverify.domains.virtualhome.replay import Scene, Trace, check, lies_at
from planverify.domains.virtualhome.simulate import State, take_step


@dataclass
class Entry:
    """A line of the program under judgement."""

    line: str  # the script line
    order: float  # where it stands among the input's lines (inserted lines fall between)
    origin: int | None  # its 0-based position in the input; None for an inserted line


@dataclass
class Work:
    """The program as the Judge edits it, and what it found so far."""

    scene: Scene
    entries: list[Entry]  # the program now
    impossible: dict[int, str]  # input position -> why it cannot happen
    inserted: list[Entry]  # lines put in
    removed: list[list[Entry]]  # blocks the goal does without, in the order they were found

    @property
    def lines(self) -> list[str]:
        return [e.line for e in self.entries]


def lay_there(state: State, put: Step) -> bool:
    """Whether a put-down (`[PUTBACK]`, `[PUTIN]`) puts its thing where it lies in `state`."""
    relation = "INSIDE" if put.verb == "PUTIN" else "ON"
    return (relation, put.arguments[-1].node) in lies_at(state, put.arguments[0].node)


def goal_parts(check_: GoalCheck) -> set[str]:
    return set(check_.describe())


def accepts(work: Work, run: Trace, base: set[str]) -> bool:
    return run.completed and goal_parts(check(work.scene, run)) <= base


PUTS = frozenset({"PUTBACK", "PUTIN"})  # verbs that put down what the hand holds


def step_of(line: str) -> Step | None:
    try:
        return parse_step(line)
    except NotationError:
        return None


@dataclass(frozen=True)
class Along:
    """The program as repaired, read once: its kept, removed and inserted lines in order
    (`in_order`), the step of each, and the simulator's state before each and after the last."""

    order: list[Entry]
    steps: list[Step | None]
    states: list[State]


def read_along(work: Work) -> Along:
    """`Along` for the program as it stands."""
    order = in_order(work)
    states = [work.scene.start]
    for index, entry in enumerate(order):
        states.append(take_step(states[-1], entry.line, index)[1])
    return Along(order, [step_of(e.line) for e in order], states)


def objects_of(entry: Entry) -> tuple[Argument, ...]:
    """What a step acts on (for `[PUTBACK] <a> <b>`, `a`: `b` is only where it goes); nothing for
    an approach."""
    step = step_of(entry.line)
    if step is None or kind_of(step.verb) == "approach":
        return ()
    return step.arguments[:1]


def previous_lines(along: Along) -> dict[int, Entry]:
    """The line before each line (by `id`) in the program as repaired: the kept, removed and
    inserted lines in order, without those that cannot happen."""
    return {id(b): a for a, b in pairwise(along.order)}


def in_order(work: Work) -> list[Entry]:
    """The kept, removed and inserted lines of the program as repaired, in order."""
    every = {id(e): e for e in [*work.entries, *(e for block in work.removed for e in block)]}
    return sorted(every.values(), key=lambda e: e.order)
