"""What a review concludes: the blocks a plan can do without, the steps it lacks, and the goal
conditions, as `Reviewer.review` returns them."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from planverify.world.goals import Unit


@dataclass
class Removal:
    """Steps the plan can do without (0-based positions in the plan reviewed), and why."""

    steps: tuple[int, ...]
    reason: str
    uses_goal: bool = True  # the proof needs the goal (False: useless whatever the goal)
    known: bool = True  # every state the proof used was known (a scene, no unknown effect)
    optional: str | None = None  # a kind the `natural` trim policy keeps (`keep.NATURAL_KEEPS`)


@dataclass
class Proposal:
    """A step the plan lacks, and where it goes (after plan position `after`; -1: first)."""

    action: str
    after: int
    reason: str
    uses_goal: bool = True  # needed for the goal (False: only makes a step possible)
    known: bool = True  # proved from known states (False: a pattern, or unknown states)


@dataclass
class Review:
    """The verdicts on a plan."""

    removals: list[Removal] = field(default_factory=list)
    proposals: list[Proposal] = field(default_factory=list)
    units: list[Unit] = field(default_factory=list)  # the goal conditions, after the repairs
    achieved_by: dict[str, int] = field(default_factory=dict)  # condition -> plan position
    cut_short: bool = False  # the search spent its budget before it was done

    def repaired(self, lines: Sequence[str], *, natural: bool = False) -> list[str]:
        """The plan with the removals made (under `natural`, those it keeps stay) and the
        proposals inserted where they go (as the rules Planner applies them). A review of it
        finds nothing more under that trim policy: the repair is idempotent (on all but a
        handful of the shared plans, where a second review finds a little more)."""
        return [line for line, _ in self.repaired_from(lines, natural=natural)]

    def repaired_from(
        self, lines: Sequence[str], *, natural: bool = False
    ) -> list[tuple[str, int | None]]:
        """The repaired plan (`repaired`), each step with the plan position it comes from
        (None: a proposal inserted)."""
        dropped = {s for r in self.removals if r.optional is None or not natural for s in r.steps}
        inserted: dict[int, list[str]] = {}
        for proposal in self.proposals:
            inserted.setdefault(proposal.after, []).append(proposal.action)
        out: list[tuple[str, int | None]] = [(line, None) for line in inserted.get(-1, [])]
        for number, line in enumerate(lines):
            if number not in dropped:
                out.append((line, number))
            out += [(added, None) for added in inserted.get(number, [])]
        return out


def steps_named(numbers: Sequence[int]) -> str:
    """0-based plan positions as a reader counts them: "step 3", "steps 3-5", "steps 3, 7"."""
    shown = sorted(n + 1 for n in numbers)
    if len(shown) == 1:
        return f"step {shown[0]}"
    if shown == list(range(shown[0], shown[-1] + 1)):
        return f"steps {shown[0]}-{shown[-1]}"
    return "steps " + ", ".join(map(str, shown))
