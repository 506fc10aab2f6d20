"""Whether a Judge's answer judged every Driver step, and the one follow-up that asks for the rest.

A text answer covers a step when it has a block tied to that step with some verdict text; a
structured answer covers the steps it lists to keep or to remove. An answer stopped by the
output-token limit may have its last block cut, so that step is asked for again too.

>>> plan = ["Commander.Say('Coffee, please.')", "Driver.PickUp('Mug')", "Driver.Move(1.0)"]
>>> driver_steps(plan)
[1, 2]
>>> left_out(plan, [1], cut=False), left_out(plan, [1, 2], cut=True)
([2], [2])
>>> spans([1, 2, 3, 5, 8, 9])
'2-4, 6, 9-10'
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from functools import lru_cache

from langchain_core.messages import HumanMessage

from planverify.agents.base import as_data
from planverify.agents.parsing import add_flag, canonical
from planverify.prompts import render
from planverify.records.critique import Critique, Missing
from planverify.records.notation import NotationError, parse_action


def driver_steps(plan: Sequence[str]) -> list[int]:
    """The 0-based steps a Judge must judge: every step that is not dialogue (a line of
    another domain's notation is a step)."""
    return [i for i, line in enumerate(plan) if not _dialogue(line)]


@lru_cache(maxsize=1 << 16)  # every pass asks it of every line of its plan
def _dialogue(line: str) -> bool:
    try:
        return parse_action(line).is_dialogue
    except NotationError:
        return False


def left_out(
    plan: Sequence[str],
    covered: Sequence[int] | None,
    *,
    cut: bool,
    among: Iterable[int] | None = None,
) -> list[int]:
    """The steps of `among` (default: every Driver step) an answer did not judge.

    `covered` lists the steps it judged in the order written (None: the answer accounts for the
    whole plan by its form); after a cut the last of them may be cut too, so it is left out.
    """
    wanted = driver_steps(plan) if among is None else sorted(among)
    if covered is None:
        return []
    missed = set(wanted) - set(covered)
    if cut and covered:
        missed.add(covered[-1])
    return sorted(missed & set(wanted))


def spans(steps: Iterable[int]) -> str:
    """0-based steps as 1-based numbers with runs joined: `2-4, 6`."""
    numbers = sorted({s + 1 for s in steps})
    runs: list[list[int]] = []
    for n in numbers:
        if runs and n == runs[-1][-1] + 1:
            runs[-1].append(n)
        else:
            runs.append([n])
    return ", ".join(str(r[0]) if len(r) == 1 else f"{r[0]}-{r[-1]}" for r in runs)


def continuation(plan: Sequence[str], steps: Sequence[int]) -> HumanMessage:
    """The follow-up prompt: exactly the steps left out, numbered as in the plan, as data."""
    listed = "\n".join(f"{i + 1}. {plan[i]}" for i in steps)
    return HumanMessage(render("judge_continue", steps=as_data(listed)))


def merge(first: Critique, second: Critique, plan: Sequence[str]) -> Critique:
    """Both answers' flags (a step flagged by both keeps the first flag and records the second
    as dropped), missing steps once each, and everything either dropped."""
    merged = first.model_copy(deep=True)
    lines = [canonical(line) or line for line in plan]
    for flag in second.flags:
        add_flag(merged, lines, flag.step, flag.reason, f"{flag.step + 1}. {flag.action}")
    for item in second.missing:
        if not any(_repeats(item, known) for known in merged.missing):
            merged.missing.append(item)
    merged.dropped.extend(second.dropped)
    merged.flags.sort(key=lambda f: f.step)
    return merged


def _repeats(item: Missing, known: Missing) -> bool:
    """Whether a missing step repeats another: the same words, or the same concrete action."""
    same_action = item.action is not None and item.action == known.action
    return item.description == known.description or same_action
