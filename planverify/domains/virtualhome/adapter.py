"""VirtualHome as a domain of the registry (`planverify.domains.domain_of("virtualhome")`).

A thin layer over `domain` (judge, certify, prompt facts, object names), `records` and
`corrupt`; it needs the `eai-eval` package (importing it without raises `PackageMissing`).
"""

from __future__ import annotations

import contextlib
import random
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

from planverify.agents.base import Insertion
from planverify.domains import Case, DomainUnavailable
from planverify.domains.virtualhome import domain
from planverify.domains.virtualhome.corrupt import corrupt_program
from planverify.domains.virtualhome.data import PackageMissing, package_version
from planverify.domains.virtualhome.judge import RULES_VERSION
from planverify.domains.virtualhome.notation import NotationError, parse_step
from planverify.domains.virtualhome.records import iter_records
from planverify.domains.virtualhome.repair import runs_to_goal
from planverify.domains.virtualhome.replay import load_scene, trace
from planverify.noise import CorruptSummary
from planverify.prompts import template_version
from planverify.records.critique import Critique, Veto
from planverify.records.episode import Episode, EpisodeError
from planverify.records.trim import TrimPolicy

NOTATION = (
    "Steps are VirtualHome script lines: `[VERB] <object> (k.ID)`, e.g. `[WALK] <kitchen> "
    "(1.11)`, `[PUTBACK] <mug> (1.45) <table> (1.20)`; ID is the object's node in the scene."
)
MISSES_GOAL = "left out: misses its own goal"  # a program the simulator says fails its goal
NO_GOAL = "left out: no vh_goal"  # a program without goal conditions: no label can be checked


class VirtualHome:
    """VirtualHome through the installed `eai-eval` package's simulator and data."""

    name = "virtualhome"
    judge_prompt = "judge_system_virtualhome"
    planner_prompt = "planner_system_virtualhome"

    def version(self) -> str | None:
        """The `eai-eval` version, the offline Judge's version and the version of this domain's
        Judge instructions."""
        rules = f"rules-{RULES_VERSION}"
        return f"{package_version()}+{rules}+judge-{template_version(self.judge_prompt)}"

    def grounded(self, case: Case) -> bool:
        return case.program is not None

    def critique(self, case: Case, trim: TrimPolicy) -> Critique:
        return domain.judge(case.lines, program=case.program, goal=case.goal, trim=trim)

    def certify(
        self, case: Case, critique: Critique, trim: TrimPolicy
    ) -> tuple[Critique, list[Veto]]:
        if case.program is None:
            return critique, []
        kept = critique.model_copy(update={"flags": []})
        vetoes: list[Veto] = []
        for flag in critique.flags:
            why = domain.certify_flag(case.lines, flag.step, case.program)
            if why is None:
                kept.flags.append(flag)
            else:
                vetoes.append(Veto(kind="flag", action=flag.action, step=flag.step, reason=why))
        return kept, vetoes

    def certify_insertions(
        self, case: Case, insertions: Sequence[Insertion]
    ) -> tuple[list[Insertion], list[Veto]]:
        """The insertions the simulator accepts (`domain.certify_insertion`), each checked where
        it goes in the plan with the ones accepted before it, in order; one veto per refusal."""
        if case.program is None:
            return list(insertions), []
        kept: list[Insertion] = []
        vetoes: list[Veto] = []
        current = list(case.lines)
        for insertion in sorted(insertions, key=lambda i: i.after):
            at = insertion.after + len(kept)  # the accepted ones before it shift its place
            why = domain.certify_insertion(current, insertion.action, at, case.program)
            if why is None:
                kept.append(insertion)
                current.insert(at + 1, insertion.action)
            else:
                veto = Veto(
                    kind="insertion", action=insertion.action, after=insertion.after, reason=why
                )
                vetoes.append(veto)
        return kept, vetoes

    def first_problem(self, case: Case) -> str | None:
        if case.program is None:
            return None
        run = trace(case.lines, load_scene(case.program).start)
        if run.completed:
            return None
        last = run.results[-1]
        return f"step {last.index + 1} ({case.lines[last.index]}): {last.reason}"

    def step_problems(self, case: Case) -> list[str]:
        """Why each step of the plan cannot happen in the program's scene ("" when it can), for
        an export to mark what a reviewer's decisions made impossible."""
        if case.program is None:
            return [""] * len(case.lines)
        return domain.step_problems(case.lines, case.program)

    def read_missing(self, text: str, plan: Sequence[str]) -> tuple[str, int | None] | None:
        """The script line a model Judge's missing-step text names, and the plan step it goes
        after (`domain.read_missing`); the registry gives it to the model Judge's parser."""
        return domain.read_missing(text, plan)

    def prompt_facts(self, case: Case) -> str:
        if case.program is None:
            return NOTATION
        return NOTATION + "\n" + domain.prompt_facts(case.lines, case.program)

    def object_names(self, case: Case) -> dict[str, str]:
        if case.program is None:
            return {}
        named = _named_nodes(case.lines)
        return {
            str(node): name
            for node, name in sorted(domain.object_names(case.program).items())
            if not case.lines or node in named
        }

    def records(self, source: Path | None) -> Iterator[Episode | EpisodeError]:
        try:
            yield from iter_records(source)
        except PackageMissing as exc:  # the package's data, read as records go by
            raise DomainUnavailable(str(exc)) from None

    def corrupt(
        self,
        episodes: Iterable[Episode],
        *,
        seed: int = 0,
        errors_per_episode: tuple[int, int] = (1, 3),
        clean_fraction: float = 0.2,
        max_steps: int | None = 25,
        summary: Any = None,
    ) -> Iterator[Episode]:
        """Annotated copies of programs: one labelled error each (`corrupt.corrupt_program`),
        or none for a `clean_fraction` share, drawn per program from the seed and its id. Records
        without `program`, programs without a `vh_goal` and programs that do not meet their own
        goal are left out (counted in `summary.changes`); `errors_per_episode` only says
        whether any error is wanted."""
        tally = summary if summary is not None else CorruptSummary()
        for episode in episodes:
            tally.read += 1
            if max_steps is not None and len(episode.actions) > max_steps:
                tally.too_long += 1
                continue
            made = _annotated(episode, seed, clean_fraction, errors_per_episode[1] > 0)
            if isinstance(made, str):
                tally.changes[made] += 1
                continue
            if made.labels:
                tally.corrupted += 1
                tally.kinds[str((made.model_extra or {})["vh_error"])] += 1
            else:
                tally.clean += 1
            yield made


def _named_nodes(lines: Iterable[str]) -> set[int]:
    nodes: set[int] = set()
    for line in lines:
        with contextlib.suppress(NotationError):
            nodes.update(argument.node for argument in parse_step(line).arguments)
    return nodes


def _annotated(episode: Episode, seed: int, clean_fraction: float, errors: bool) -> Episode | str:
    """The episode with its labels (none when drawn clean), or why it is left out."""
    if episode.program is None or episode.domain != "virtualhome":
        return "left out: no VirtualHome program"
    scene = load_scene(episode.program)
    if scene.goal is None:
        return NO_GOAL
    if not runs_to_goal(scene, episode.actions):
        return MISSES_GOAL
    data = episode.model_dump(mode="json", exclude_none=True)
    data |= {"labels": [], "clean": list(episode.actions)}
    clean = random.Random(f"{seed}:{episode.id}:clean").random() < clean_fraction
    made = (
        None
        if clean or not errors
        else corrupt_program(scene, episode.actions, seed, episode.id, episode.goal or "")
    )
    if made is not None:
        data["actions"] = list(made.lines)
        data["labels"] = [label.model_dump(mode="json", exclude_none=True) for label in made.labels]
        data["vh_error"] = made.error
    return Episode.model_validate(data)


DOMAIN = VirtualHome()
