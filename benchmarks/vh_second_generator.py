"""A second, independent generator of labelled errors in VirtualHome programs, and a scorer of the
offline (rules) Judge on them, for the development titles (`--held-out`: the held-out ones).

Written without reading the Judge or the project's own error generator, so that it does not share
their blind spots. Errors are the slips a person makes when writing a household program:

- `detour`: walking to something the goal has no use for, in another room or the same one; either
  fetching it and putting it back (`fetch_putback`) or just going to look at it (`wander`);
- `undo`: steps that undo themselves: opening and closing a cabinet nothing is taken from
  (`open_close`), putting down what the hand holds and picking it up again (`put_pick`);
- `switch`: a lamp, TV or appliance the goal does not use switched on and off, or off and on
  (`switch_pair`), or switched on while it is already on (`switch_noop`);
- `duplicate`: a step of the person written again, right after itself (`adjacent`) or a few
  steps later (`later`), where it changes nothing;
- `impossible`: a step that cannot happen: grabbing or switching on a thing in another room
  without going there (`grab_far`, `switch_far`), a step of the program written before the walk
  that makes it possible (`premature`), putting down what the hand does not hold (`put_unheld`);
- `missing_step`: a step of the person taken out so that a goal condition is no longer met.

Each program gets one to three errors, at the start, middle or end, on objects of its own scene
graph. Every corruption is checked by the package's simulator and discarded when a check fails:
the steps labelled impossible fail and no other inserted step does; a duplicate changes nothing;
the person's steps still run (unless a step they need was taken out); the corrupted program meets
the goal unless a step is missing, and then it does not; what the errors touched on objects the
person never used is as it was; and the program without the REMOVE-labelled steps and with the
MISSING steps put back runs and meets the goal as the person's program does.

The scorer runs the rules Judge through the public API (`planverify.verify_many`) under both trim
policies and scores as benchmarks/vh_quality.py does: a REMOVE label is found when the Judge flags
that step, a MISSING label when one of its missing steps is the same verb on the same nodes.
Precision is flags and missing steps that find a label over all of them; `excused` also counts a
flag on a line the Judge removes from the person's clean program too. By default the first Judge
pass is scored (`static`, as vh_quality.py does): its critique under both trim policies comes from
one search (`judge_both`, the critique `verify_many(static=True)` returns under each); `--loop`
scores the whole Judge/Planner loop's removals and insertions, through `verify_many`.

Usage: python benchmarks/vh_second_generator.py [--seeds 101 102] [--limit N] [--loop]
       [--write corrupted.jsonl] [--held-out]
"""

from __future__ import annotations

import argparse
import json
import random
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from vh_quality import held_out_titles

from planverify import VerificationResult, verify_many
from planverify.domains.virtualhome import data
from planverify.domains.virtualhome.goals import GoalCheck
from planverify.domains.virtualhome.judge import judge_both
from planverify.domains.virtualhome.notation import Argument, Step, format_step, parse_step
from planverify.domains.virtualhome.records import program_record
from planverify.domains.virtualhome.replay import Scene, goal_nodes, load_scene, state_check
from planverify.domains.virtualhome.simulate import State, StepResult, take_step
from planverify.records.critique import Critique
from planverify.records.trim import TRIM_POLICIES, TrimPolicy

try:
    from virtualhome_eval.simulation.evolving_graph.environment import Relation
except ImportError as exc:
    raise data.PackageMissing() from exc

APPROACH = frozenset({"WALK", "RUN", "FIND", "TURNTO", "LOOKAT"})
MOVING = frozenset({"WALK", "RUN", "FIND"})  # steps that take the character to a thing
SCENERY = frozenset({"Rooms", "Walls", "Ceiling", "Floor", "Floors", "Doors", "Windows"})
DUPLICABLE = frozenset(
    {"WALK", "FIND", "GRAB", "OPEN", "CLOSE", "SWITCHON", "SWITCHOFF", "TURNTO", "SIT", "PLUGIN"}
)  # verbs whose repeat changes nothing; an activity done again (SCRUB, TYPE...) is more of it
ODD_THINGS = frozenset(
    {"drawing", "mat", "towel_rack", "wall_clock", "curtain", "toilet", "phone", "powersocket"}
    | {"mousepad", "ceilinglamp", "walllamp", "closetdrawer", "console", "trashcan"}
)  # things a person does not pick up, open, switch or walk to on a whim in these scenes
ERROR_FIELD = {  # the record's `error` (planverify.records.episode.ErrorType) for each kind
    "detour": "detour",
    "undo": "other",
    "switch": "other",
    "duplicate": "duplicate",
    "impossible": "ineffective_action",
    "missing_step": "missing_step",
}
KINDS = tuple(ERROR_FIELD)
ERRORS_PER_PROGRAM = ((1, 0.55), (2, 0.3), (3, 0.15))
TRIES_PER_ERROR = 12


# --- the simulator ---------------------------------------------------------------------------


@dataclass
class Walk:
    """A script run step by step, a failed step changing nothing and the next one tried."""

    results: list[StepResult] = field(default_factory=list)
    states: list[State] = field(default_factory=list)  # states[i]: before step i; [-1]: final
    verbs: list[str] = field(default_factory=list)  # the verbs carried out, in order


def walk(lines: Sequence[str], scene: Scene) -> Walk:
    """Run every line from the scene's start, skipping (as the simulator would) those that fail."""
    run = Walk(states=[scene.start])
    state = scene.start
    for index, line in enumerate(lines):
        result, state = take_step(state, line, index)
        run.results.append(result)
        run.states.append(state)
        if result.outcome == "ok":
            run.verbs.append(parse_step(line).verb)
    return run


def unmet(scene: Scene, run: Walk) -> GoalCheck:
    """What of the goal the run leaves unmet."""
    return state_check(scene.goal, run.states[-1], run.verbs)


def runs_to_goal(scene: Scene, lines: Sequence[str]) -> bool:
    """Every line runs and the goal is met."""
    run = walk(lines, scene)
    return all(r.outcome != "failed" for r in run.results) and unmet(scene, run).met


# --- what the scene offers -------------------------------------------------------------------


@dataclass(frozen=True)
class Facts:
    """What a program's scene graph offers for errors."""

    character: int
    rooms: frozenset[int]
    related: frozenset[int]  # the program's and the goal's objects and what they are on or in
    program_nodes: frozenset[int]
    task_rooms: frozenset[int]  # the rooms of the program's and the goal's objects
    grabbable: tuple[int, ...]  # unrelated things a hand can take
    cabinets: tuple[int, ...]  # unrelated closed things that open
    switches: tuple[int, ...]  # unrelated things with a switch, on or off
    places: tuple[int, ...]  # unrelated furniture and appliances to walk to
    parent: dict[int, tuple[str, int]]  # node -> (ON or INSIDE, what it lies on or in) at start


def facts_of(scene: Scene, lines: Sequence[str]) -> Facts:
    """The scene's candidates for errors, none of them named by the program or its goal."""
    nodes = {int(n["id"]): n for n in scene.graph["nodes"]}
    rooms = frozenset(i for i, n in nodes.items() if n["category"] == "Rooms")
    character = next(i for i, n in nodes.items() if n["class_name"] == "character")
    used = {a.node for line in lines for a in parse_step(line).arguments}
    core = used | set(goal_nodes(scene.goal)) | {character}
    parent: dict[int, tuple[str, int]] = {}
    related = set(core)
    for e in scene.graph["edges"]:
        a, b, rel = int(e["from_id"]), int(e["to_id"]), str(e["relation_type"])
        if rel not in ("ON", "INSIDE") or b in rooms:
            continue
        parent.setdefault(a, (rel, b))
        if a in core or b in core:
            related |= {a, b}

    def pool(test: Callable[[dict[str, Any]], bool]) -> tuple[int, ...]:
        return tuple(
            sorted(
                i
                for i, n in nodes.items()
                if i not in related and n["category"] not in SCENERY and i in scene.rooms
                if test(n)
            )
        )

    def closed(i: int) -> bool:
        return i in parent and "CLOSED" in nodes[parent[i][1]].get("states", [])

    return Facts(
        character=character,
        rooms=rooms,
        related=frozenset(related),
        program_nodes=frozenset(used),
        task_rooms=frozenset(scene.rooms[n] for n in core - {character} if n in scene.rooms),
        grabbable=pool(
            lambda n: (
                "GRABBABLE" in n["properties"]
                and n["category"] in ("placable_objects", "Electronics", "Decor", "Props")
                and n["class_name"] not in ODD_THINGS
                and not closed(int(n["id"]))
            )
        ),
        cabinets=pool(
            lambda n: (
                {"CAN_OPEN", "CONTAINERS"} <= set(n["properties"])
                and "CLOSED" in n["states"]
                and n["category"] in ("Furniture", "Appliances")
                and n["class_name"] not in ODD_THINGS
            )
        ),
        switches=pool(
            lambda n: (
                "HAS_SWITCH" in n["properties"]
                and n["category"] in ("Lamps", "Electronics")
                and bool({"ON", "OFF"} & set(n["states"]))
                and "PLUGGED_OUT" not in n["states"]
                and n["class_name"] not in ODD_THINGS
            )
        ),
        places=pool(
            lambda n: (
                n["category"] in ("Furniture", "Appliances", "Electronics", "Lamps")
                and "GRABBABLE" not in n["properties"]
                and n["class_name"] not in ODD_THINGS
            )
        ),
        parent=parent,
    )


# --- a program being corrupted ---------------------------------------------------------------


@dataclass
class Item:
    """A line of the program being corrupted."""

    line: str
    group: int | None = None  # the error it belongs to; None for the person's own step
    deleted: bool = False  # a step of the person taken out (a MISSING label)


@dataclass(frozen=True)
class Error:
    """One error put into a program."""

    kind: str  # one of KINDS
    variant: str  # how it was made, e.g. "fetch_putback"
    place: str = "task_object"  # what it acts on: task_object, or an unused thing in a room of
    # the task (task_room) or elsewhere (other_room)


@dataclass
class Draft:
    """A program with the errors put in so far."""

    items: list[Item]
    errors: list[Error] = field(default_factory=list)

    def live(self) -> list[Item]:
        """The items that are lines of the corrupted program."""
        return [i for i in self.items if not i.deleted]

    def lines(self) -> list[str]:
        return [i.line for i in self.live()]

    def restored(self) -> list[str]:
        """The program without the REMOVE-labelled steps and with the MISSING steps put back."""
        return [i.line for i in self.items if i.group is None or i.deleted]

    def live_index(self, position: int) -> int:
        """The line of the corrupted program at an item position (the count of lines before)."""
        return sum(not i.deleted for i in self.items[:position])

    def slots(self) -> list[int]:
        """Item positions where lines may go in: never inside an error's block of lines."""
        found = []
        for q in range(len(self.items) + 1):
            before = self.items[q - 1].group if q > 0 else None
            after = self.items[q].group if q < len(self.items) else None
            if before is None or before != after:
                found.append(q)
        return found

    def insert(self, position: int, lines: Sequence[str], error: Error) -> Draft:
        group = len(self.errors)
        block = [Item(line, group) for line in lines]
        items = [*self.items[:position], *block, *self.items[position:]]
        return Draft([Item(i.line, i.group, i.deleted) for i in items], [*self.errors, error])


def line_for(verb: str, nodes: Sequence[int], scene: Scene, lines: Sequence[str]) -> str:
    """A script line on scene nodes, numbering each new object's instance after those of its
    class the script already names (the simulator goes by the node id)."""
    known: dict[int, Argument] = {}
    for line in lines:
        for a in parse_step(line).arguments:
            known.setdefault(a.node, a)
    arguments = []
    for node in nodes:
        if node in known:
            arguments.append(known[node])
            continue
        name = scene.classes[node]
        taken = [a.instance for a in known.values() if a.name == name]
        known[node] = Argument(name, max(taken, default=0) + 1, node)
        arguments.append(known[node])
    return format_step(Step(verb, tuple(arguments)))


# --- where the character is, at a place in the draft ------------------------------------------


REGIONS = ("start", "middle", "end")


@dataclass
class Context:
    """A draft, its run, and what the character does at each place in it."""

    rng: random.Random
    draft: Draft
    run: Walk
    scene: Scene
    facts: Facts
    region: str  # where in the program the error should go

    def state(self, q: int) -> State:
        return self.run.states[self.draft.live_index(q)]

    def has(self, q: int, relation: str, node: int) -> bool:
        state = self.state(q)
        ends = state.get_node(self.facts.character), state.get_node(node)
        return ends[1] is not None and bool(state.has_edge(ends[0], Relation[relation], ends[1]))

    def room(self, q: int) -> int | None:
        return next((r for r in self.facts.rooms if self.has(q, "INSIDE", r)), None)

    def close(self, q: int, node: int) -> bool:
        return self.has(q, "CLOSE", node)

    def holding(self, q: int, node: int) -> bool:
        return self.has(q, "HOLDS_RH", node) or self.has(q, "HOLDS_LH", node)

    def held(self, q: int) -> list[int]:
        state = self.state(q)
        found: set[int] = set()
        for relation in ("HOLDS_RH", "HOLDS_LH"):
            found |= set(state.get_node_ids_from(self.facts.character, Relation[relation]))
        return sorted(found)

    def seated(self, q: int) -> bool:
        node = self.state(q).get_node(self.facts.character)
        return bool({"SITTING", "LYING"} & {s.name for s in node.states})

    def node_states(self, q: int, node: int) -> set[str]:
        return {s.name for s in self.state(q).get_node(node).states}

    def moves_next(self, q: int) -> bool:
        """The person's next step takes the character somewhere (or the program ends there), so
        a detour before it needs no way back."""
        after = [i for i in self.draft.items[q:] if not i.deleted]
        if not after:
            return True
        return after[0].group is None and parse_step(after[0].line).verb in MOVING

    def in_region(self, q: int) -> bool:
        n = len(self.draft.live())
        at = self.draft.live_index(q)
        third = REGIONS[min(2, 3 * at // max(1, n))] if at < n else "end"
        return third == self.region

    def slot(self, test: Callable[[int], bool]) -> int | None:
        """A place for new lines passing `test`, in the region if there is one there."""
        good = [q for q in self.draft.slots() if test(q)]
        inside = [q for q in good if self.in_region(q)]
        pool = inside or good
        return self.rng.choice(pool) if pool else None

    def thing(self, pool: Sequence[int], q: int, other_room: bool) -> int | None:
        """An object of the pool in another room than the character's, or in the same one."""
        here = self.room(q)
        named = {a.node for i in self.draft.items for a in parse_step(i.line).arguments}
        fits = [
            n for n in pool if (self.scene.rooms.get(n) != here) == other_room and n not in named
        ]
        return self.rng.choice(fits) if fits else None

    def line(self, verb: str, *nodes: int) -> str:
        return line_for(verb, nodes, self.scene, [i.line for i in self.draft.items])

    def put(
        self, q: int, lines: Sequence[str], variant: str, kind: str, thing: int | None = None
    ) -> Draft:
        """The draft with lines put in at `q`, as one error (on `thing`, an unused object)."""
        if thing is None:
            return self.draft.insert(q, lines, Error(kind, variant))
        place = (
            "task_room" if self.scene.rooms.get(thing) in self.facts.task_rooms else "other_room"
        )
        return self.draft.insert(q, lines, Error(kind, variant, place))


def put_down(ctx: Context, thing: int, onto: int) -> str:
    """The line putting a held thing on or in another, as it lay at the start."""
    inside = (
        ctx.facts.parent.get(thing, ("ON", 0))[0] == "INSIDE" and ctx.facts.parent[thing][1] == onto
    )
    return ctx.line("PUTIN" if inside else "PUTBACK", thing, onto)


# --- the errors ------------------------------------------------------------------------------


def make_detour(ctx: Context) -> Draft | None:
    """Go to something the goal has no use for: fetch it and put it back, or just look at it."""
    fetch = ctx.rng.random() < 0.6

    def fits(q: int) -> bool:
        free = len(ctx.held(q)) < 2 or not fetch
        return ctx.moves_next(q) and not ctx.seated(q) and free

    q = ctx.slot(fits)
    if q is None:
        return None
    other = ctx.rng.random() < 0.65
    thing = ctx.thing(ctx.facts.grabbable if fetch else ctx.facts.places, q, other)
    if thing is None:
        return None
    lines = [ctx.line("WALK", thing)]
    if fetch:
        if ctx.rng.random() < 0.5:
            lines.append(ctx.line("FIND", thing))
        lines.append(ctx.line("GRAB", thing))
        parent = ctx.facts.parent.get(thing)
        if parent is None or ctx.rng.random() < 0.3:
            lines.append(ctx.line("PUTOBJBACK", thing))
        else:
            lines.append(put_down(ctx, thing, parent[1]))
    else:
        lines += [ctx.line(v, thing) for v in ("TURNTO", "LOOKAT") if ctx.rng.random() < 0.5]
    return ctx.put(q, lines, "fetch_putback" if fetch else "wander", "detour", thing)


def approach(ctx: Context, q: int, thing: int) -> list[str] | None:
    """The walk a step on `thing` at `q` needs first: none when the character is close already;
    None when a walk cannot go there (the person's next step would not bring them back)."""
    if ctx.close(q, thing):
        return []
    if not ctx.moves_next(q) or ctx.seated(q):
        return None
    return [ctx.line("WALK", thing)]


def make_undo(ctx: Context) -> Draft | None:
    """Open and close a cabinet nothing is taken from, or put down a held thing and take it up."""
    return put_pick(ctx) if ctx.rng.random() < 0.5 else open_close(ctx)


def put_pick(ctx: Context) -> Draft | None:
    """Put down what the hand holds, on furniture close by, and pick it up again."""
    q = ctx.slot(lambda q: bool(ctx.held(q)))
    if q is None:
        return None
    thing = ctx.rng.choice(ctx.held(q))
    state = ctx.state(q)
    nearby = [
        n
        for n in ctx.scene.classes
        if "SURFACES" in ctx.scene.properties.get(n, frozenset())
        and n != thing
        and state.get_node(n).category in ("Furniture", "Appliances")
        and ctx.close(q, n)
    ]
    if not nearby:
        return None
    onto = ctx.rng.choice(sorted(nearby))
    lines = [put_down(ctx, thing, onto), ctx.line("GRAB", thing)]
    return ctx.put(q, lines, "put_pick", "undo")


def go_to_unused(
    ctx: Context, things: Sequence[int], *, seated_ok: bool = False
) -> tuple[int, int, list[str]] | None:
    """A slot, a thing of `things` the goal has no use for, and the steps that go to it there."""
    q = ctx.slot(lambda q: not ctx.seated(q) or seated_ok)
    if q is None:
        return None
    thing = ctx.thing(things, q, ctx.rng.random() < 0.4)
    if thing is None:
        return None
    walk_there = approach(ctx, q, thing)
    return None if walk_there is None else (q, thing, walk_there)


def open_close(ctx: Context) -> Draft | None:
    """Open a cabinet or appliance the goal has no use for, and close it again."""
    found = go_to_unused(ctx, ctx.facts.cabinets)
    if found is None:
        return None
    at, thing, walk_there = found
    lines = [*walk_there, ctx.line("OPEN", thing), ctx.line("CLOSE", thing)]
    return ctx.put(at, lines, "open_close", "undo", thing)


def make_switch(ctx: Context) -> Draft | None:
    """Switch a thing the goal does not use on and off (or off and on), or on while it is on."""
    noop = ctx.rng.random() < 0.3
    found = go_to_unused(ctx, ctx.facts.switches, seated_ok=noop)
    if found is None:
        return None
    q, thing, walk_there = found
    on = "OFF" not in ctx.node_states(q, thing)
    if noop:
        if not on:
            return None
        lines = [*walk_there, ctx.line("SWITCHON", thing)]
        return ctx.put(q, lines, "switch_noop", "switch", thing)
    order = ("SWITCHOFF", "SWITCHON") if on else ("SWITCHON", "SWITCHOFF")
    lines = [*walk_there, *(ctx.line(v, thing) for v in order)]
    return ctx.put(q, lines, "switch_pair/" + ("off_on" if on else "on_off"), "switch", thing)


def person_steps(ctx: Context, test: Callable[[Step], bool]) -> list[int]:
    """Item positions of the person's own steps passing `test`."""
    return [
        p
        for p, i in enumerate(ctx.draft.items)
        if i.group is None and not i.deleted and test(parse_step(i.line))
    ]


def make_duplicate(ctx: Context) -> Draft | None:
    """Write a step of the person again, right after itself or a few steps later."""
    found = person_steps(ctx, lambda s: s.verb in DUPLICABLE)
    inside = [p for p in found if ctx.in_region(p + 1)]
    if not found:
        return None
    p = ctx.rng.choice(inside or found)
    later = ctx.rng.random() < 0.35
    if not later:
        return ctx.put(p + 1, [ctx.draft.items[p].line], "adjacent", "duplicate")
    slots = [q for q in ctx.draft.slots() if p + 2 <= q <= p + 4]
    if not slots:
        return None
    return ctx.put(ctx.rng.choice(slots), [ctx.draft.items[p].line], "later", "duplicate")


def make_impossible(ctx: Context) -> Draft | None:
    """A step that cannot happen where it is written."""
    variant = ctx.rng.choice(("grab_far", "switch_far", "premature", "put_unheld"))
    if variant == "premature":
        found = person_steps(ctx, lambda s: s.verb not in APPROACH and bool(s.arguments))
        if not found:
            return None
        p = ctx.rng.choice(found)
        q = ctx.slot(lambda q: q < p)
        return None if q is None else ctx.put(q, [ctx.draft.items[p].line], variant, "impossible")
    q = ctx.slot(lambda q: True)
    if q is None:
        return None
    if variant == "put_unheld":
        return put_unheld(ctx, q)
    pool = ctx.facts.grabbable if variant == "grab_far" else ctx.facts.switches
    thing = ctx.thing(pool, q, other_room=True)
    if thing is None:
        return None
    if variant == "grab_far":
        verb = "GRAB"
    else:
        verb = "SWITCHON" if "OFF" in ctx.node_states(q, thing) else "SWITCHOFF"
    return ctx.put(q, [ctx.line(verb, thing)], variant, "impossible", thing)


def put_unheld(ctx: Context, q: int) -> Draft | None:
    """Put down a thing the hand does not hold: one of the program's, or one close by."""
    mine = [
        n
        for n in sorted(ctx.facts.program_nodes)
        if "GRABBABLE" in ctx.scene.properties.get(n, frozenset()) and not ctx.holding(q, n)
    ]
    near = [n for n in ctx.facts.grabbable if ctx.close(q, n)]
    pool = mine if mine and (ctx.rng.random() < 0.6 or not near) else near
    if not pool:
        return None
    thing = ctx.rng.choice(pool)
    parent = ctx.facts.parent.get(thing)
    if parent is None:
        return None
    unused = None if thing in ctx.facts.program_nodes else thing
    return ctx.put(q, [put_down(ctx, thing, parent[1])], "put_unheld", "impossible", unused)


def make_missing(ctx: Context) -> Draft | None:
    """Take out a step of the person (not a walk or find) that the goal needs."""
    found = person_steps(ctx, lambda s: s.verb not in MOVING)
    inside = [p for p in found if ctx.in_region(p)]
    if not found:
        return None
    p = ctx.rng.choice(inside or found)
    group = len(ctx.draft.errors)
    items = [Item(i.line, i.group, i.deleted) for i in ctx.draft.items]
    items[p] = Item(items[p].line, group, deleted=True)
    verb = parse_step(items[p].line).verb
    return Draft(items, [*ctx.draft.errors, Error("missing_step", verb.lower())])


MAKERS: dict[str, Callable[[Context], Draft | None]] = {
    "detour": make_detour,
    "undo": make_undo,
    "switch": make_switch,
    "duplicate": make_duplicate,
    "impossible": make_impossible,
    "missing_step": make_missing,
}


# --- the simulator's checks ------------------------------------------------------------------


def expected(error: Error, verb: str) -> set[str]:
    """The outcomes an inserted line of this error may have in the simulator."""
    if error.kind == "impossible":
        return {"failed"}
    if error.kind == "duplicate" or (error.variant == "switch_noop" and verb == "SWITCHON"):
        return {"satisfied", "no effect"}
    if verb in APPROACH:
        return {"ok", "satisfied", "no effect"}
    return {"ok"}


def outcome(result: StepResult) -> str:
    return "no effect" if result.outcome == "ok" and not result.effects else result.outcome


def fault(draft: Draft, scene: Scene, facts: Facts, person: Walk) -> str | None:
    """Why the draft's labels are not what they say (None when every check passes)."""
    live = draft.live()
    run = walk([i.line for i in live], scene)
    gap = next((draft.live_index(p) for p, i in enumerate(draft.items) if i.deleted), None)
    for n, (item, result) in enumerate(zip(live, run.results, strict=True)):
        if item.group is None:
            if result.outcome == "failed" and (gap is None or n < gap):
                return f"the person's step {n} fails: {result.reason}"
            continue
        wanted = expected(draft.errors[item.group], parse_step(item.line).verb)
        if outcome(result) not in wanted and not (
            "no effect" in wanted and result.outcome == "ok" and "ok" in wanted
        ):
            return f"{item.line} is {outcome(result)}, not {'/'.join(sorted(wanted))}"
    left = unmet(scene, run)
    if (gap is None) != left.met:
        return "the goal is met with a step missing" if gap is not None else "the goal is lost"
    if gap is not None and only_hands(left, run.states[-1], facts):
        return "without the step, only the hand that holds a thing changes"
    touched = {
        a.node
        for i in live
        if i.group is not None
        for a in parse_step(i.line).arguments
        if a.node not in facts.program_nodes
    }
    for node in sorted(touched):
        if trace_of(person.states[-1], node, facts) != trace_of(run.states[-1], node, facts):
            return f"node {node} is left changed"
    restored = draft.restored()
    if restored != [i.line for i in draft.items if i.group is None or i.deleted]:
        return "restoring does not give the person's program"
    if not runs_to_goal(scene, restored):
        return "the restored program does not run to the goal"
    return None


def only_hands(left: GoalCheck, state: State, facts: Facts) -> bool:
    """The goal's unmet parts are only which hand holds a thing that is held (the goals name
    the hand, which a person's program does not choose)."""
    other = {"HOLDS_RH": "HOLDS_LH", "HOLDS_LH": "HOLDS_RH"}
    if left.nodes or left.actions or not left.edges:
        return False
    for edge in left.edges:
        if edge.relation not in other or edge.source != facts.character:
            return False
        ends = state.get_node(edge.source), state.get_node(edge.target)
        if not state.has_edge(ends[0], Relation[other[edge.relation]], ends[1]):
            return False
    return True


def trace_of(state: State, node: int, facts: Facts) -> tuple[frozenset[str], bool]:
    """A node's states, and whether it lies where it lay at the start."""
    found = state.get_node(node)
    names = frozenset(s.name for s in found.states)
    parent = facts.parent.get(node)
    if parent is None:
        return names, True
    home = state.get_node(parent[1])
    return names, bool(state.has_edge(found, Relation[parent[0]], home))


# --- a corrupted program ---------------------------------------------------------------------


@dataclass
class Corrupted:
    """A program with errors put in, and their labels."""

    name: str
    seed: int
    lines: list[str]
    labels: list[dict[str, Any]]
    errors: list[Error]
    clean: list[str]


def corrupt(scene: Scene, lines: Sequence[str], seed: int) -> Corrupted | None:
    """One to three checked errors put into a program (None when none could be made)."""
    rng = random.Random(f"vh-second:{seed}:{scene.name}")
    facts = facts_of(scene, lines)
    person = walk(lines, scene)
    count = rng.choices([n for n, _ in ERRORS_PER_PROGRAM], [w for _, w in ERRORS_PER_PROGRAM])[0]
    kinds = [rng.choice(KINDS) for _ in range(count)]
    kinds = [k for k in kinds if k != "missing_step"] + (
        ["missing_step"] if "missing_step" in kinds else []
    )  # at most one step taken out, and after the rest: the other checks need the whole program
    draft = Draft([Item(line) for line in lines])
    for kind in kinds:
        run = walk(draft.lines(), scene)
        for _ in range(TRIES_PER_ERROR):
            ctx = Context(rng, draft, run, scene, facts, rng.choice(REGIONS))
            made = MAKERS[kind](ctx)
            if made is not None and fault(made, scene, facts, person) is None:
                draft = made
                break
    if not draft.errors:
        return None
    return Corrupted(scene.name, seed, draft.lines(), labels_of(draft), draft.errors, list(lines))


def labels_of(draft: Draft) -> list[dict[str, Any]]:
    """The labels, in the record format of `planverify corrupt --generator virtualhome`."""
    labels: list[dict[str, Any]] = []
    for p, item in enumerate(draft.items):
        if item.group is None:
            continue
        error = draft.errors[item.group]
        field_ = (
            "pointless_open_close" if error.variant == "open_close" else ERROR_FIELD[error.kind]
        )
        tags = {
            "error": field_,
            "vh_error": error.kind,
            "variant": error.variant,
            "place": error.place,
        }
        if item.deleted:
            after = draft.live_index(p) - 1
            labels.append({"type": "MISSING", "after": after, "action": item.line, **tags})
        else:
            labels.append({"type": "REMOVE", "index": draft.live_index(p), **tags})
    return labels


def record_of(made: Corrupted, program: data.Program) -> dict[str, Any]:
    """The corrupted program as an annotated episode record."""
    record = program_record(program)
    kinds = sorted({e.kind for e in made.errors})
    record.update(
        id=f"{made.name}~s{made.seed}",
        actions=made.lines,
        labels=made.labels,
        clean=made.clean,
        vh_error="+".join(kinds),
        generator="vh_second",
        seed=made.seed,
    )
    return record


# --- the scorer ------------------------------------------------------------------------------


@dataclass
class Said:
    """What the Judge said of one plan: the steps it removes, and the steps it says are missing."""

    flags: dict[int, tuple[str, str]]  # step -> (its line, the Judge's reason)
    missing: list[str]  # missing steps, as script lines
    kept: dict[int, str]  # step -> why it was kept, for steps kept as optional


def said_of(result: VerificationResult, loop: bool) -> Said:
    """The removals and the missing steps of a result: of the first Judge pass (`static`), or
    of the whole loop (`loop`: its removals and insertions)."""
    flags = {
        v.index: (v.action, v.reason or "")
        for v in result.verdicts
        if v.verdict == "remove" and v.index is not None
    }
    kept = {v.index: v.optional.kind for v in result.verdicts if v.optional is not None}
    if loop:
        missing = [i.action for i in result.inserted]
    else:
        first = result.history[0].critique if result.history else None
        missing = [m.action for m in first.missing if m.action] if first else []
    return Said(flags, missing, {i: str(k) for i, k in kept.items() if i not in flags})


def said_of_critique(critique: Critique) -> Said:
    """The removals and the missing steps of the first Judge pass's critique."""
    flags = {f.step: (f.action, f.reason) for f in critique.flags}
    kept = {f.step: str(f.optional.kind) for f in critique.optional if f.optional is not None}
    missing = [m.action for m in critique.missing if m.action]
    return Said(flags, missing, {i: k for i, k in kept.items() if i not in flags})


def nodes(line: str) -> tuple[str, tuple[int, ...]]:
    step = parse_step(line)
    return step.verb, tuple(a.node for a in step.arguments)


@dataclass
class Tally:
    """Counts for one trim policy."""

    labels: Counter[str] = field(default_factory=Counter)  # by kind
    found: Counter[str] = field(default_factory=Counter)
    variant_labels: Counter[str] = field(default_factory=Counter)
    variant_found: Counter[str] = field(default_factory=Counter)
    region_labels: Counter[str] = field(default_factory=Counter)  # start, middle, end
    region_found: Counter[str] = field(default_factory=Counter)
    said: Counter[str] = field(default_factory=Counter)  # "all", and kind for one-kind programs
    right: Counter[str] = field(default_factory=Counter)
    excused: Counter[str] = field(default_factory=Counter)
    clean_steps: int = 0
    clean_removed: int = 0
    clean_missing: int = 0
    misses: list[str] = field(default_factory=list)
    false: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)


def score(made: Corrupted, said: Said, clean: Said, tally: Tally) -> None:
    """Count what the Judge found of one corrupted program's labels, and what else it said."""
    proposed = [nodes(m) for m in said.missing]
    removes = {label["index"] for label in made.labels if label["type"] == "REMOVE"}
    wanted = {nodes(label["action"]) for label in made.labels if label["type"] == "MISSING"}
    for label in made.labels:
        kind = label["vh_error"]
        variant = f"{kind}/{label['variant']} @{label['place']}"
        if label["type"] == "REMOVE":
            hit = label["index"] in said.flags
            where = f"step {label['index']} {made.lines[label['index']]}"
            why = said.kept.get(label["index"], "")
            answer = f"kept{' as optional ' + why if why else ''}"
        else:
            hit = nodes(label["action"]) in proposed
            where = f"MISSING after {label['after']} {label['action']}"
            answer = f"proposed {said.missing or 'nothing'}"
        tally.labels[kind] += 1
        tally.found[kind] += hit
        tally.variant_labels[variant] += 1
        tally.variant_found[variant] += hit
        region = region_of(label, len(made.lines))
        tally.region_labels[region] += 1
        tally.region_found[region] += hit
        if not hit:
            tally.misses.append(f"{made.name}~s{made.seed} [{variant}] {where} -- {answer}")
    own = {line for line, _ in clean.flags.values()}
    right = sum(step in removes for step in said.flags) + sum(p in wanted for p in proposed)
    excused = sum(s not in removes and line in own for s, (line, _) in said.flags.items())
    kinds = {e.kind for e in made.errors}
    for key in ["all", *(kinds if len(kinds) == 1 else [])]:
        tally.said[key] += len(said.flags) + len(proposed)
        tally.right[key] += right
        tally.excused[key] += excused
    for step, (line, reason) in sorted(said.flags.items()):
        if step not in removes:
            also = " (excused: the clean program loses it too)" if line in own else ""
            tally.false.append(f"{made.name}~s{made.seed} step {step} {line} -- {reason}{also}")
    for line in said.missing:
        if nodes(line) not in wanted:
            tally.false.append(f"{made.name}~s{made.seed} MISSING {line} -- proposed, no label")


def region_of(label: dict[str, Any], length: int) -> str:
    """Where in the corrupted program a label lies: its first, middle or last third."""
    at = label["index"] if label["type"] == "REMOVE" else label["after"] + 1
    return REGIONS[min(2, 3 * at // max(1, length))]


def ratio(a: int, b: int) -> str:
    return f"{a / b:.3f}" if b else "-"


def report(policy: TrimPolicy, t: Tally, show_lists: bool) -> None:
    """Print one trim policy's figures, and the misses and false flags to study."""
    labels, found = sum(t.labels.values()), sum(t.found.values())
    right, said, excused = t.right["all"], t.said["all"], t.excused["all"]
    print(
        f"[{policy}] recall {ratio(found, labels)} ({found}/{labels}), precision "
        f"{ratio(right, said)} ({right}/{said}), excused {ratio(right + excused, said)} "
        f"(+{excused} the clean program gets too)"
    )
    print(f"  {'kind':<42} {'recall':>16} {'precision (one-kind programs)':>32} {'excused':>8}")
    for kind in KINDS:
        n, hit = t.labels[kind], t.found[kind]
        p = f"{ratio(t.right[kind], t.said[kind])} ({t.right[kind]}/{t.said[kind]})"
        e = ratio(t.right[kind] + t.excused[kind], t.said[kind])
        print(f"  {kind:<42} {ratio(hit, n):>6} ({hit:>3}/{n:>3}) {p:>32} {e:>8}")
    for variant in sorted(t.variant_labels):
        n, hit = t.variant_labels[variant], t.variant_found[variant]
        print(f"    {variant:<40} {ratio(hit, n):>6} ({hit:>3}/{n:>3})")
    for region in REGIONS:
        n, hit = t.region_labels[region], t.region_found[region]
        print(f"    labels in the {region + ' third':<26} {ratio(hit, n):>6} ({hit:>3}/{n:>3})")
    print(
        f"[{policy}] clean programs: {t.clean_removed}/{t.clean_steps} steps removed, "
        f"{t.clean_missing} missing proposed"
    )
    for failure in t.failed:
        print(f"  verify error: {failure}")
    if show_lists:
        print(f"[{policy}] missed labels ({len(t.misses)}):")
        print("\n".join(f"  {line}" for line in t.misses))
        print(f"[{policy}] false flags and missing steps ({len(t.false)}):")
        print("\n".join(f"  {line}" for line in t.false))


def chosen_programs(limit: int | None, held_out: bool) -> tuple[list[str], list[str]]:
    """The programs of the development (or held-out) titles that run to their own goal, and
    those set apart."""
    held = set(held_out_titles())
    titles = data.titles_with_goals()
    kept: list[str] = []
    apart: list[str] = []
    for title in sorted(t for t in titles if (t in held) == held_out):
        for key in titles[title][:limit]:
            name = "file" + key
            program = data.read_program(name)
            if runs_to_goal(load_scene(name), program.lines):
                kept.append(name)
            else:
                apart.append(f"{name} ({title})")
    return kept, apart


def summarise(made: Sequence[Corrupted], programs: int) -> None:
    """Print what the generator made: how many errors a program, of which kinds, and where."""
    per = Counter(len(m.errors) for m in made)
    kinds = Counter(e.kind for m in made for e in m.errors)
    variants = Counter(f"{e.kind}/{e.variant} @{e.place}" for m in made for e in m.errors)
    where = Counter(region_of(label, len(m.lines)) for m in made for label in m.labels)
    print(
        f"corrupted programs: {len(made)} from {programs} programs; errors a program: "
        f"{dict(sorted(per.items()))}; labels at {dict(where)}"
    )
    print(f"  errors by kind: {dict(kinds)}")
    print(f"  errors by variant: {dict(sorted(variants.items()))}")


def judged(records: list[dict[str, Any]], policy: TrimPolicy, loop: bool) -> dict[str, Any]:
    """The rules Judge's results by record id, under a trim policy (labels are never given)."""
    inputs = [
        {k: r[k] for k in ("id", "domain", "goal", "task", "actions", "program")} for r in records
    ]
    results = verify_many(inputs, trim=policy, static=not loop, concurrency=1)
    return {r.id: r for r in results}


def judged_both(records: list[dict[str, Any]]) -> dict[str, dict[TrimPolicy, Said] | str]:
    """The first Judge pass under both trim policies by record id, from one search a record (as
    vh_quality.py does; labels are never given), or why the Judge failed on it."""
    said: dict[str, dict[TrimPolicy, Said] | str] = {}
    for record in records:
        try:
            both = judge_both(
                record["actions"], load_scene(record["program"]), goal_text=record["goal"]
            )
        except Exception as exc:  # counted as a verify error, as verify_many's status says
            said[record["id"]] = f"{type(exc).__name__}: {exc}"
            continue
        said[record["id"]] = {policy: said_of_critique(both[policy]) for policy in TRIM_POLICIES}
    return said


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[101], help="Generator seeds.")
    parser.add_argument("--limit", type=int, default=None, help="Only N programs a title.")
    parser.add_argument("--loop", action="store_true", help="Score the whole loop's edits.")
    parser.add_argument("--write", type=Path, help="Write the corrupted records here (JSONL).")
    parser.add_argument("--no-lists", action="store_true", help="Only the figures.")
    parser.add_argument("--held-out", action="store_true", help="Score the held-out titles.")
    args = parser.parse_args()
    start = time.perf_counter()
    names, apart = chosen_programs(args.limit, args.held_out)
    print(
        f"eai-eval {data.package_version()}; "
        f"{'held-out titles' if args.held_out else 'development titles (held out'}: "
        f"{', '.join(held_out_titles())}{'' if args.held_out else ')'}; seeds {args.seeds}; "
        f"scoring {'the whole loop' if args.loop else 'the first Judge pass'}"
    )
    print(f"programs: {len(names)}; not meeting their own goal (set apart): {len(apart)}")
    made: list[Corrupted] = []
    clean_records, records = [], []
    for name in names:
        program, scene = data.read_program(name), load_scene(name)
        clean_records.append(program_record(program))
        for seed in args.seeds:
            corrupted = corrupt(scene, program.lines, seed)
            if corrupted is not None:
                made.append(corrupted)
                records.append(record_of(corrupted, program))
    summarise(made, len(names))
    if args.write:
        args.write.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    print(f"generated in {time.perf_counter() - start:.0f} s")
    both = None if args.loop else judged_both(clean_records + records)
    for policy in TRIM_POLICIES:
        tally = Tally()
        answers: dict[str, Said | str] = {}
        if both is None:
            results = judged(clean_records + records, policy, args.loop)
            for key, result in results.items():
                ok = result.status == "ok"
                answers[key] = said_of(result, args.loop) if ok else str(result.error)
        else:
            answers = {k: v if isinstance(v, str) else v[policy] for k, v in both.items()}
        clean = {}
        for record in clean_records:
            answer = answers[record["id"]]
            clean[record["id"]] = answer if isinstance(answer, Said) else Said({}, [], {})
            tally.clean_steps += len(record["actions"])
            tally.clean_removed += len(clean[record["id"]].flags)
            tally.clean_missing += len(clean[record["id"]].missing)
        for corrupted, record in zip(made, records, strict=True):
            answer = answers[record["id"]]
            if isinstance(answer, str):
                tally.failed.append(f"{record['id']}: {answer}")
                continue
            score(corrupted, answer, clean[corrupted.name], tally)
        report(policy, tally, not args.no_lists)
        print(f"time so far: {time.perf_counter() - start:.0f} s")


if __name__ == "__main__":
    main()
