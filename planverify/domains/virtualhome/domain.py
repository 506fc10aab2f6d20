"""What the core needs of VirtualHome, in a few functions (for a domain registry to wire in).

`program` names an installed program (e.g. "file628_2"): its initial scene graph and `vh_goal`
are read from the `eai-eval` package. Without it only the goal text is known.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence

from planverify.domains.virtualhome.data import PackageMissing
from planverify.domains.virtualhome.judge import judge_program
from planverify.domains.virtualhome.kinds import IDEMPOTENT, KINDS
from planverify.domains.virtualhome.notation import NotationError, Step, format_step, parse_step
from planverify.domains.virtualhome.repair import runs_to_goal, shortfall
from planverify.domains.virtualhome.replay import Scene, check, load_scene, trace
from planverify.domains.virtualhome.simulate import take_step
from planverify.records.critique import Critique, Flag
from planverify.records.evidence import Evidence, simulated
from planverify.records.trim import DEFAULT_TRIM, TrimPolicy

try:
    from virtualhome_eval.simulation.evolving_graph import scripts
except ImportError as exc:  # pragma: no cover - simulate already said so
    raise PackageMissing() from exc

TEXT_ONLY: Evidence = simulated(scene_known=False, goal_source="text", uses_goal=False)
_SCRIPT_LINE = re.compile(r"\[[A-Za-z_]+\](?:\s*<[^<>()]+>\s*\(\d+\.\d+\))*")
_PLACE = re.compile(r"\b(after|before)\s+(?:step|line)\s*#?\s*(\d{1,6})\b", re.I)


def judge(
    lines: Sequence[str], *, program: str | None, goal: str, trim: TrimPolicy = DEFAULT_TRIM
) -> Critique:
    """The offline Judge's critique of a program (with `program`: by simulation against its
    `vh_goal`; without: only steps useless whatever the goal)."""
    if program is None:
        return judge_text(lines)
    return judge_program(lines, load_scene(program), trim=trim, goal_text=goal)


def judge_text(lines: Sequence[str]) -> Critique:
    """Flags for steps useless whatever the scene and goal: lines that are no step the simulator
    knows, and a step written again right after itself that changes nothing the second time."""
    critique = Critique()
    for index, line in enumerate(lines):
        why = _not_a_step(line)
        if why is None and index > 0 and line.strip() == lines[index - 1].strip():
            verb = parse_step(line).verb
            why = f"repeats step {index - 1}, which changes nothing" if verb in IDEMPOTENT else None
        if why is not None:
            critique.flags.append(Flag(step=index, action=line, reason=why, evidence=TEXT_ONLY))
    return critique


def _not_a_step(line: str) -> str | None:
    try:
        step = parse_step(line)
    except NotationError as exc:
        return f"cannot happen: {exc}"
    action = scripts.Action.__members__.get(step.verb)
    if action is None:
        return f"cannot happen: unknown verb [{step.verb}]"
    if len(step.arguments) != action.value[1]:
        return f"cannot happen: [{step.verb}] takes {action.value[1]} object(s)"
    return None


def certify_flag(lines: Sequence[str], step: int, program: str) -> str | None:
    """Why the simulator refuses a model Judge's flag on a step (the program without it fails or
    meets less of its goal), or None when the removal holds."""
    if not 0 <= step < len(lines):
        return f"no step {step} in a program of {len(lines)} steps"
    scene = load_scene(program)
    before, after = (
        trace(lines, scene.start),
        trace([*lines[:step], *lines[step + 1 :]], scene.start),
    )
    if not after.completed and before.completed:
        failed = after.results[-1]
        return f"without it, step {failed.index + (failed.index >= step)} fails: {failed.reason}"
    if after.completed and before.completed:
        lost = set(check(scene, after).describe()) - set(check(scene, before).describe())
        if lost:
            return "without it, the goal loses: " + ", ".join(sorted(lost))
    return None


def certify_insertion(lines: Sequence[str], line: str, after: int, program: str) -> str | None:
    """Why the simulator refuses a step put into a program after its step `after` (0-based; -1:
    first): it cannot happen there, it changes nothing there (what it would do already holds), or
    the program with it meets less of its goal than without it; None when the step holds. An
    earlier step that cannot happen changes nothing and the run goes on, as `repair` counts."""
    if not -1 <= after < len(lines):
        return f"position {after + 1} is outside the program (0-{len(lines)})"
    scene = load_scene(program)
    state = scene.start
    for index, earlier in enumerate(lines[: after + 1]):
        _, state = take_step(state, earlier, index)
    result, _ = take_step(state, line, after + 1)
    if result.outcome == "failed":
        return f"impossible where it is placed: {result.reason}"
    if result.outcome == "satisfied":
        return f"changes nothing where it is placed: {result.reason}"
    _, without = shortfall(scene, lines)
    _, with_it = shortfall(scene, [*lines[: after + 1], line, *lines[after + 1 :]])
    lost = Counter(with_it.describe()) - Counter(without.describe())  # an action goal may repeat
    if lost:
        return "with it, the goal loses: " + ", ".join(sorted(lost.elements()))
    return None


def step_problems(lines: Sequence[str], program: str) -> list[str]:
    """Why each line cannot happen in the program's scene ("" when it can); a line that cannot
    changes nothing, and the run goes on (as an exported plan is checked)."""
    state, problems = load_scene(program).start, []
    for index, line in enumerate(lines):
        result, state = take_step(state, line, index)
        problems.append(result.reason if result.outcome == "failed" else "")
    return problems


def check_goal(lines: Sequence[str], program: str) -> bool:
    """Whether the program runs to the end and meets its `vh_goal` (True when it has none and
    runs)."""
    return runs_to_goal(load_scene(program), lines)


def object_names(program: str) -> dict[int, str]:
    """Node id -> class name, for the objects of a program's initial scene graph."""
    return dict(load_scene(program).classes)


def prompt_facts(lines: Sequence[str], program: str) -> str:
    """Facts from the scene graph for a model Judge's prompt: the goal's conditions, and for each
    object the program names, its class, room and states at the start."""
    scene = load_scene(program)
    facts = [f"Task: {scene.title}.", *_goal_facts(scene), "Objects the program names:"]
    named: dict[int, str] = {}
    for line in lines:
        try:
            named.update({a.node: a.name for a in parse_step(line).arguments})
        except NotationError:
            continue
    for node in sorted(named):
        facts.append(_object_fact(scene, node))
    return "\n".join(facts)


def _goal_facts(scene: Scene) -> list[str]:
    if scene.goal is None:
        return ["Goal conditions: none known."]
    goal = scene.goal
    parts = [str(n) for n in goal.nodes] + [str(e) for e in goal.edges]
    parts += ["do " + "|".join(sorted(a)) for a in goal.actions]
    return [
        "Goal conditions (all must hold at the end; actions in this order): " + "; ".join(parts)
    ]


def _object_fact(scene: Scene, node: int) -> str:
    name = scene.classes.get(node)
    if name is None:
        return f"- ({node}): no such node in the scene"
    found = scene.start.get_node(node)
    states = sorted(s.name for s in found.states) if found is not None else []
    room = scene.classes.get(scene.rooms.get(node, -1), "no room")
    props = ", ".join(sorted(scene.properties.get(node, ()))) or "none"
    return f"- {name} ({node}): in {room}; states {', '.join(states) or 'none'}; can: {props}"


def read_missing(text: str, plan: Sequence[str]) -> tuple[str, int | None] | None:
    """The step a model Judge's missing-step text names, as the package writes it, and the
    0-based step of `plan` it goes after (-1: first; None: not known); None when the text names
    no script line the simulator knows (an unknown verb, a wrong number of objects).

    Where it goes: where the text says (`after step 3`, `before line 5`, 1-based), else after
    the last step of the plan on its object: the last time the program went to it (else the
    last step on it), or, for a step that puts or pours one thing into another, the last step
    on what it puts."""
    found = _SCRIPT_LINE.search(text.replace("\u2039", "<").replace("\u203a", ">"))
    if found is None or _not_a_step(found.group(0)) is not None:
        return None
    step = parse_step(found.group(0))
    return format_step(step), _position(text, step, plan)


def _position(text: str, step: Step, plan: Sequence[str]) -> int | None:
    said = _PLACE.search(text)
    if said is not None and 1 <= int(said[2]) <= len(plan):
        return int(said[2]) - 1 - (said[1].lower() == "before")
    if not step.arguments:
        return None
    target = step.arguments[0].node
    on_it: list[int] = []  # the plan's steps on it (for a two-object step: on what it puts)
    went: list[int] = []  # of those, the ones that go to it, find it or face it
    for index, line in enumerate(plan):
        try:
            other = parse_step(line)
        except NotationError:
            continue
        if other.arguments[:1] and other.arguments[0].node == target:
            on_it.append(index)
            if other.verb in KINDS["approach"]:
                went.append(index)
    if len(step.arguments) == 1 and went:
        return went[-1]
    return on_it[-1] if on_it else None
