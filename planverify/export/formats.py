"""The export formats: rows made from curated episodes.

- `episodes`: the input record with every key kept, `actions` replaced by the final plan and a
  `verification` object (verdicts, insertions, settings, stop reason);
- `sft`: `{"messages": [system, user, assistant]}` (chat templates, TRL's SFT trainer);
- `preference`: `{"prompt", "chosen", "rejected"}` (TRL's DPO columns), the final plan chosen
  over the input, for episodes that changed;
- `recovery`: one record per removed block: what came before, the block with the Judge's
  reasons, and the steps that undo or correct it.

Every row carries `impossible` (in `episodes`, under `verification`): the steps of the final
plan that human decisions left impossible in the simulator (`feasible.Impossible`), empty when
none.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, Literal

from planverify.export.curate import Curated
from planverify.records.notation import Action, parse_action

Format = Literal["episodes", "sft", "preference", "recovery"]
FORMATS: tuple[Format, ...] = ("episodes", "sft", "preference", "recovery")

SYSTEM = (
    "You are the Driver, a household robot in a simulated home. Read the goal and the "
    "Commander's instructions, then answer with the actions that carry out the task, one per "
    "line, in the notation Agent.Verb(args), for example Driver.PickUp('Mug') or "
    "Driver.PutAOnB('Mug', 'CoffeeMachine')."
)
SYSTEM_SCRIPT = (
    "You are a household robot in a simulated home. Read the goal, then answer with the steps "
    "that carry out the task, one per line, as VirtualHome script lines [VERB] <object> (k.ID), "
    "for example [WALK] <kitchen> (1.11) or [GRAB] <mug> (1.45)."
)  # the system message of a VirtualHome episode (no dialogue)
SYSTEM_INTERLEAVED = (
    "You are the Driver, a household robot in a simulated home, talking with the Commander who "
    "knows the task. Answer with the whole episode, one line at a time in the notation "
    "Agent.Verb(args): the dialogue as Commander.Say('...') and Driver.Say('...') lines where "
    "it happens, and your actions, for example Driver.PickUp('Mug')."
)


@dataclass(frozen=True)
class Options:
    """How rows are made."""

    interleave: bool = False  # sft/preference: Say lines stay in the assistant turn
    min_removed: int = 0  # preference: only episodes with at least this many steps removed


def rows(fmt: Format, items: list[Curated], options: Options) -> Iterator[dict[str, Any]]:
    """The rows of one format, in the order of the items."""
    for item in items:
        if fmt == "episodes":
            yield episode_row(item)
        elif fmt == "sft":
            yield sft_row(item, options)
        elif fmt == "preference":
            if item.changed and len(item.removed) >= options.min_removed:
                yield preference_row(item, options)
        else:
            yield from recovery_rows(item)


# --- episodes --------------------------------------------------------------------------------


def episode_row(item: Curated) -> dict[str, Any]:
    """The input record, final plan as `actions`, and what verification did to it."""
    result = item.result
    data = item.episode.model_dump(mode="json", exclude_unset=True)  # as it was given
    labels = data.pop("labels", None)  # they index the input plan: kept with the verdicts
    data["actions"] = item.plan
    verdicts = []
    for i, verdict in enumerate(result.verdicts):
        keep = item.kept[i]
        judge_keeps = verdict.verdict == "keep" or i in item.restored  # before any decision
        entry: dict[str, Any] = {"index": i, "action": verdict.action}
        entry["verdict"] = "keep" if keep else "remove"
        entry["reason"] = None if keep else item.reason(i)
        entry["iteration"] = None if keep else verdict.iteration
        entry["evidence"] = item.evidence(i)
        entry["overruled"] = judge_keeps != keep and result.stop_reason != "static"
        verdicts.append(entry)
    verification: dict[str, Any] = {
        "input_digest": result.input_digest,
        "settings": result.settings.model_dump(mode="json") if result.settings else None,
        "stop_reason": result.stop_reason,
        "iterations": result.iterations,
        "revisions": result.revisions,
        "verdicts": verdicts,
        "inserted": [
            {**inserted.model_dump(mode="json"), "overruled": False}
            for k, inserted in enumerate(result.inserted)
            if k not in item.dropped
        ],
        "decisions": item.decided,
        "min_evidence": item.min_evidence,
        "trim": item.trim,
        "impossible": marks(item),
    }
    if labels is not None:
        verification["labels"] = labels
    data["verification"] = verification
    return data


def marks(item: Curated) -> list[dict[str, int | str]]:
    """The steps the decisions left impossible in the simulator, as a row shows them."""
    return [step.as_record() for step in item.impossible]


# --- chat formats ----------------------------------------------------------------------------


def _parsed(lines: list[str], read: Callable[[str], Action]) -> list[tuple[str, Action]]:
    return [(line, read(line)) for line in lines]


def user_turn(item: Curated, interleave: bool) -> str:
    """The goal and, unless the dialogue goes in the answer, the dialogue as dialogue."""
    goal = item.result.goal or item.episode.goal or "(no goal given)"
    parts = [f"Goal: {goal}"]
    if not interleave:
        spoken = [
            f"{action.agent}: {action.text}"
            for _, action in _parsed(item.original, item.episode.step_of)
            if action.is_dialogue
        ]
        parts.append("Dialogue:\n" + ("\n".join(spoken) if spoken else "(none)"))
    return "\n\n".join(parts)


def assistant_turn(
    plan: list[str], interleave: bool, read: Callable[[str], Action] = parse_action
) -> str:
    """The plan's Driver actions, one per line (with `interleave`, the Say lines too); `read`
    reads a line of the episode's notation (`Episode.step_of`)."""
    steps = _parsed(plan, read)
    return "\n".join(line for line, action in steps if interleave or not action.is_dialogue)


def system_message(item: Curated, interleave: bool) -> str:
    """The system message for the episode's domain (TEACh's with or without dialogue)."""
    if item.episode.domain not in (None, "teach"):
        return SYSTEM_SCRIPT
    return SYSTEM_INTERLEAVED if interleave else SYSTEM


def prompt(item: Curated, interleave: bool) -> list[dict[str, str]]:
    """The system and user messages."""
    return [
        {"role": "system", "content": system_message(item, interleave)},
        {"role": "user", "content": user_turn(item, interleave)},
    ]


def sft_row(item: Curated, options: Options) -> dict[str, Any]:
    """`{"id", "task", "messages": [system, user, assistant]}`."""
    content = assistant_turn(item.plan, options.interleave, item.episode.step_of)
    answer = {"role": "assistant", "content": content}
    return {
        "id": item.result.id,
        "task": item.task,
        "messages": [*prompt(item, options.interleave), answer],
        "impossible": marks(item),
    }


def preference_row(item: Curated, options: Options) -> dict[str, Any]:
    """`{"prompt", "chosen", "rejected"}`: the final plan chosen over the input."""
    read = (options.interleave, item.episode.step_of)
    return {
        "id": item.result.id,
        "task": item.task,
        "prompt": prompt(item, options.interleave),
        "chosen": [{"role": "assistant", "content": assistant_turn(item.plan, *read)}],
        "rejected": [{"role": "assistant", "content": assistant_turn(item.original, *read)}],
        "removed": len(item.removed),
        "inserted": item.insertions,
        "impossible": marks(item),
    }


# --- recovery --------------------------------------------------------------------------------

UNDO_VERBS = {
    ("Open", "Close"),
    ("Close", "Open"),
    ("ToggleOn", "ToggleOff"),
    ("ToggleOff", "ToggleOn"),
    ("PutAOnB", "PickUp"),  # the re-pick-up
    ("PickUp", "PutAOnB"),  # put back down
    ("TurnLeft", "TurnRight"),
    ("TurnRight", "TurnLeft"),
}


def undoes(later: Action, earlier: Action) -> bool:
    """Whether `later` reverses `earlier` (a move back, a re-pick-up, a door closed again)."""
    if not (later.known and earlier.known) or later.is_dialogue or earlier.is_dialogue:
        return False
    if later.verb == earlier.verb and later.verb in ("Move", "TurnLeft", "TurnRight"):
        return (
            later.value is not None and earlier.value is not None and later.value == -earlier.value
        )
    if (earlier.verb, later.verb) not in UNDO_VERBS:
        return False
    if later.verb in ("TurnLeft", "TurnRight"):
        return later.value == earlier.value
    return bool(later.objects and earlier.objects and later.objects[0] == earlier.objects[0])


def blocks(item: Curated) -> list[list[int]]:
    """Runs of removed input steps; dialogue between two removed steps does not break a run."""
    removed = set(item.removed)
    runs: list[list[int]] = []
    current: list[int] = []
    for i, line in enumerate(item.original):
        if i in removed:
            current.append(i)
        elif not item.episode.step_of(line).is_dialogue and current:
            runs.append(current)
            current = []
    if current:
        runs.append(current)
    return runs


def recovery_rows(item: Curated) -> Iterator[dict[str, Any]]:
    """One record per removed block: context, the block with reasons, and the recovery."""
    original = item.original
    actions = [item.episode.step_of(line) for line in original]
    runs = blocks(item)
    for position, run in enumerate(runs):
        undone: set[int] = set()
        recovery: list[dict[str, Any]] = []
        errors: list[int] = []
        for j in run:
            match = next(
                (i for i in reversed(errors) if i not in undone and undoes(actions[j], actions[i])),
                None,
            )
            if match is None:
                errors.append(j)
                continue
            undone.add(match)
            recovery.append(
                {
                    "index": j,
                    "action": original[j],
                    "kind": "undo",
                    "removed": True,
                    "undoes": match,
                }
            )
        touched = {actions[i].objects[0] for i in errors if actions[i].objects}
        end = runs[position + 1][0] if position + 1 < len(runs) else len(original)
        for k in range(run[-1] + 1, end):
            if item.kept[k] and actions[k].objects and actions[k].objects[0] in touched:
                recovery.append(
                    {
                        "index": k,
                        "action": original[k],
                        "kind": "correction",
                        "removed": False,
                        "undoes": None,
                    }
                )
                break
        yield {
            "id": item.result.id,
            "position": position,
            "task": item.task,
            "goal": item.result.goal or item.episode.goal,
            "context": original[: run[0]],
            "block": [
                {
                    "index": i,
                    "action": original[i],
                    "reason": item.reason(i) or "",
                    "evidence": item.evidence(i),
                }
                for i in run
            ],
            "recovery": recovery,
            "impossible": marks(item),
        }
