"""The offline Judge on VirtualHome: recall and precision on labelled errors put into human
programs, and what it removes from the clean human programs, under both trim policies.

Programs: the installed eai-eval's human programs that have a `vh_goal`. Those that do not run to
the end or do not meet their own goal in the simulator (by our goal check) are counted apart and
used for nothing else: neither as controls nor to put errors into.

Errors: one a program (planverify.domains.virtualhome.corrupt), its kind and place drawn by a
generator seeded by `--seed` and the program's name; every label is checked by the simulator.
A REMOVE label is found when the Judge flags that step; a MISSING label when one of the Judge's
missing steps is the same verb on the same nodes (wherever it puts it). Recall is labels found
over labels; precision is flags and missing steps that find a label over all of them (all steps,
approaches included). `excused` also counts as right a flag on a line the Judge removes from the
clean human program as well (the human's own repeats and detours): a diagnostic, not the score.

Held-out titles: the task titles with a goal, in alphabetical order, every fifth from the fifth
(5 of 26), fixed before any result was seen. They are scored only with `--held-out`; without it
only the other (development) titles are.

Usage: python benchmarks/vh_quality.py [--seed 1] [--held-out] [--limit N]
"""

from __future__ import annotations

import argparse
import time
from collections import Counter
from dataclasses import dataclass, field

from planverify.domains.virtualhome import data
from planverify.domains.virtualhome.corrupt import Corrupted, corrupt_program
from planverify.domains.virtualhome.judge import flag_kind, judge_both
from planverify.domains.virtualhome.notation import parse_step
from planverify.domains.virtualhome.repair import runs_to_goal
from planverify.domains.virtualhome.replay import load_scene
from planverify.records.critique import Critique
from planverify.records.trim import TRIM_POLICIES, TrimPolicy


def held_out_titles() -> list[str]:
    """The held-out titles: alphabetical order, every fifth from the fifth."""
    return sorted(data.titles_with_goals())[4::5]


@dataclass
class Tally:
    """Counts for one trim policy."""

    labels: int = 0
    found: int = 0  # labels the Judge found
    said: int = 0  # flags and missing steps on corrupted programs
    right: int = 0  # of those, the ones that find a label
    excused: int = 0  # of the others, flags on a line the Judge also removes from the clean program
    found_by_error: Counter[str] = field(default_factory=Counter)
    labels_by_error: Counter[str] = field(default_factory=Counter)
    clean_steps: int = 0
    clean_removed: int = 0
    clean_missing: int = 0
    removed_by_kind: Counter[str] = field(default_factory=Counter)
    optional_by_kind: Counter[str] = field(default_factory=Counter)


def _nodes(line: str) -> tuple[str, tuple[int, ...]]:
    step = parse_step(line)
    return step.verb, tuple(a.node for a in step.arguments)


def score(made: Corrupted, critique: Critique, clean: Critique, tally: Tally) -> None:
    """Count what the Judge found of one corrupted program's labels (`clean`: its critique of
    the human program, for the flags it excuses)."""
    flagged = {f.step for f in critique.flags}
    proposed = [_nodes(m.action) for m in critique.missing if m.action]
    right = 0
    for label in made.labels:
        error = str(getattr(label, "vh_error", label.error))
        tally.labels += 1
        tally.labels_by_error[error] += 1
        if label.type == "REMOVE":
            hit = label.index in flagged
        else:
            hit = label.action is not None and _nodes(label.action) in proposed
        tally.found += hit
        tally.found_by_error[error] += hit
    removes = {label.index for label in made.labels if label.type == "REMOVE"}
    right += sum(f.step in removes for f in critique.flags)
    wanted = {_nodes(label.action) for label in made.labels if label.action}
    right += sum(p in wanted for p in proposed)
    tally.said += len(critique.flags) + len(proposed)
    tally.right += right
    own = {f.action for f in clean.flags}
    tally.excused += sum(f.step not in removes and f.action in own for f in critique.flags)


def control(lines: list[str], critique: Critique, tally: Tally) -> None:
    """Count what the Judge removes from a clean human program."""
    tally.clean_steps += len(lines)
    tally.clean_removed += len(critique.flags)
    tally.clean_missing += len(critique.missing)
    tally.removed_by_kind.update(flag_kind(f) for f in critique.flags)
    tally.optional_by_kind.update(f.optional.kind for f in critique.optional if f.optional)


def ratio(a: int, b: int) -> str:
    return f"{a / b:.3f}" if b else "-"


def report(tallies: dict[TrimPolicy, Tally], programs: int, apart: list[str]) -> None:
    """Print the figures."""
    print(f"programs scored: {programs}; not meeting their own goal (counted apart): {len(apart)}")
    for name in apart:
        print(f"  apart: {name}")
    for policy, t in tallies.items():
        print(
            f"[{policy}] errors: recall {ratio(t.found, t.labels)} ({t.found}/{t.labels}), "
            f"precision {ratio(t.right, t.said)} ({t.right}/{t.said}); excused "
            f"{ratio(t.right + t.excused, t.said)} (+{t.excused} the clean program gets too)"
        )
        for error, n in sorted(t.labels_by_error.items()):
            print(f"  {error:<14} recall {ratio(t.found_by_error[error], n)} ({n} labels)")
        print(
            f"[{policy}] clean programs: {t.clean_removed}/{t.clean_steps} steps removed "
            f"({ratio(t.clean_removed, t.clean_steps)}), {t.clean_missing} missing proposed"
        )
        for kind, n in t.removed_by_kind.most_common():
            print(f"  removed  {kind:<18} {n}")
        for kind, n in t.optional_by_kind.most_common():
            print(f"  optional {kind:<18} {n}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=1, help="The error generator's seed.")
    parser.add_argument("--held-out", action="store_true", help="Score the held-out titles.")
    parser.add_argument("--limit", type=int, default=None, help="Only N programs a title.")
    args = parser.parse_args()
    held = set(held_out_titles())
    titles = data.titles_with_goals()
    chosen = [t for t in sorted(titles) if (t in held) == args.held_out]
    print(
        f"eai-eval {data.package_version()}; {'held-out' if args.held_out else 'development'} "
        f"titles: {', '.join(chosen)}"
    )
    tallies = {policy: Tally() for policy in TRIM_POLICIES}
    apart: list[str] = []
    programs = 0
    start = time.perf_counter()
    for title in chosen:
        for key in titles[title][: args.limit]:
            name = "file" + key
            program, scene = data.read_program(name), load_scene(name)
            text = f"{program.title}: {program.description}"
            if not runs_to_goal(scene, program.lines):
                apart.append(f"{name} ({title})")
                continue
            programs += 1
            clean = judge_both(program.lines, scene, goal_text=text)
            made = corrupt_program(scene, program.lines, args.seed, name, text)
            judged = judge_both(made.lines, scene, goal_text=text) if made else None
            for policy in TRIM_POLICIES:
                control(list(program.lines), clean[policy], tallies[policy])
                if made is not None and judged is not None:
                    score(made, judged[policy], clean[policy], tallies[policy])
    report(tallies, programs, apart)
    print(f"time: {time.perf_counter() - start:.0f} s")


if __name__ == "__main__":
    main()
