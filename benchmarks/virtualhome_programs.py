"""VirtualHome's human programs in the installed eai-eval's own simulator, checked against their
`vh_goal` by planverify's goal check.

Prints: the programs; how many run to the end (and how many without a step that was already
satisfied); how many of those with a goal meet it, and what the others leave unmet; the steps
that run but change nothing in the scene graph, by verb; and the time taken.

Usage: python benchmarks/virtualhome_programs.py [--limit N]
"""

from __future__ import annotations

import argparse
import time
from collections import Counter
from dataclasses import dataclass, field

from planverify.domains.virtualhome import data
from planverify.domains.virtualhome.goals import check_goal, goal_of
from planverify.domains.virtualhome.notation import parse_step
from planverify.domains.virtualhome.simulate import simulate


@dataclass
class Tally:
    """What the programs did in the simulator."""

    programs: int = 0
    steps: int = 0
    completed: int = 0  # ran to the end, no step failed
    all_ok: int = 0  # ran to the end with every step ok (none already satisfied)
    failed: list[str] = field(default_factory=list)  # "name: step i: reason"
    satisfied: list[str] = field(default_factory=list)  # "name: step i: line"
    with_goal: int = 0
    met: int = 0
    unmet: list[str] = field(default_factory=list)  # "name: what is unmet"
    idle_by_verb: Counter[str] = field(default_factory=Counter)  # ok steps that change nothing
    steps_by_verb: Counter[str] = field(default_factory=Counter)


def tally_program(program: data.Program, tally: Tally) -> None:
    """Run one program and count what it did."""
    graphs = data.scene_graphs(program.name)
    run = simulate(program.lines, graphs.initial)
    tally.programs += 1
    tally.steps += len(program.lines)
    tally.completed += run.completed
    tally.all_ok += run.completed and all(s.outcome == "ok" for s in run.steps)
    for step in run.steps:
        verb = parse_step(step.line).verb if step.outcome != "failed" else "?"
        tally.steps_by_verb[verb] += 1
        if step.outcome == "failed":
            tally.failed.append(f"{program.name}: step {step.index + 1}: {step.reason}")
        elif step.outcome == "satisfied":
            tally.satisfied.append(f"{program.name}: step {step.index + 1}: {step.line}")
        elif not step.effects:
            tally.idle_by_verb[verb] += 1
    goal = goal_of(program)
    if goal is None:
        return
    tally.with_goal += 1
    verbs = [parse_step(s.line).verb for s in run.steps if s.outcome == "ok"]
    check = check_goal(goal, run.state.to_dict(), verbs)
    tally.met += check.met
    if not check.met:
        tally.unmet.append(f"{program.name} ({program.title}): {', '.join(check.describe())}")


def report(tally: Tally, seconds: float) -> None:
    """Print the tally."""
    print(f"eai-eval {data.package_version()}: {tally.programs} programs, {tally.steps} steps")
    print(
        f"ran to the end: {tally.completed}/{tally.programs} "
        f"({tally.all_ok} with no step already satisfied)"
    )
    for line in tally.satisfied:
        print(f"  already satisfied (code 4): {line}")
    for line in tally.failed:
        print(f"  failed: {line}")
    print(f"meet their goal: {tally.met}/{tally.with_goal} of the programs with a vh_goal")
    for line in tally.unmet:
        print(f"  unmet: {line}")
    idle = tally.idle_by_verb.total()
    print(f"steps that change nothing: {idle}/{tally.steps} ({idle / max(tally.steps, 1):.0%})")
    for verb, count in tally.idle_by_verb.most_common():
        print(f"  {verb:<10} {count:>5} of {tally.steps_by_verb[verb]:>5}")
    print(f"time: {seconds:.1f} s ({seconds / max(tally.programs, 1) * 1000:.0f} ms a program)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", type=int, default=None, help="Only the first N programs.")
    args = parser.parse_args()
    files = data.program_files(data.installed_programs_dir())[: args.limit]
    tally = Tally()
    start = time.perf_counter()
    for path in files:
        tally_program(data.read_program_file(path), tally)
    report(tally, time.perf_counter() - start)


if __name__ == "__main__":
    main()
