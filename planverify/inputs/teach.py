"""Load TEACh game files (`*.game.json`) as episodes in the action notation.

A game is converted by `convert_game`: the interactions of all its tasks and episodes, in time
order, become one plan (`game_actions`). Driver motion is aggregated into net `Move`/`TurnLeft`/
`TurnRight` steps, object interactions become one-line actions on named objects, and utterances of
either agent become `Say` lines. The initial state of every object becomes the episode's `scene`.

`iter_games` streams episodes file by file (one parsed game in memory at a time), yielding an
`EpisodeError` for a file that cannot be read or converted; `LoadSummary` counts both.

>>> game = {"tasks": [{"task_name": "Coffee", "desc": "Prepare coffee in a clean mug.",
...   "episodes": [{"episode_id": "e1", "interactions": [
...     {"agent_id": 1, "action_id": 2, "time_start": 1.0, "success": 1},
...     {"agent_id": 1, "action_id": 2, "time_start": 2.0, "success": 1},
...     {"agent_id": 1, "action_id": 200, "time_start": 3.0, "success": 1, "oid": "Mug|+1|+2|+3"},
...   ]}]}]}
>>> game_actions(game)
['Driver.Move(0.5)', "Driver.PickUp('Mug')"]
>>> convert_game(game).task
'Coffee'
"""

from __future__ import annotations

import glob
import re
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import ValidationError

from planverify.records.episode import Episode, EpisodeError, Scene, SceneObject, parse_episode
from planverify.records.jsonl import load_json
from planverify.records.notation import escape_text
from planverify.world.classes import base_type

__all__ = [
    "SPLITS",
    "LoadSummary",
    "convert_game",
    "expand_inputs",
    "game_actions",
    "iter_games",
    "load_game",
    "object_type_of",
    "reason_of",
    "split_of",
]

SPLITS = frozenset({"train", "valid_seen", "valid_unseen", "test_seen", "test_unseen"})
"""TEACh's split names; a game file's parent directory named like one of these gives its split."""

GAME_SUFFIX = ".game.json"
AGENT_NAMES = {0: "Commander", 1: "Driver"}  # TEACh's fixed agent ids

# Driver motion: action id -> (kind, default amount); the sign gives the direction.
MOVES = {2: 0.25, 3: -0.25, 12: 0.5, 13: -0.5}  # Forward, Backward, Double Forward/Backward
TURNS = {4: 90.0, 5: -90.0}  # Turn Left, Turn Right (degrees, counter-clockwise positive)
UTTERANCES = frozenset({100, 101})  # Text, Speech
PICKUP, PLACE, POUR = 200, 201, 211
ONE_OBJECT = {
    202: "Open",
    203: "Close",
    204: "ToggleOn",
    205: "ToggleOff",
    206: "Slice",
    207: "Dirty",
    208: "Clean",
    209: "Fill",
    210: "Empty",
    212: "Break",
}
# every action id TEACh defines (a game's `definitions.actions`); those not converted above
# (camera, navigation, progress checks, beeps) are skipped on purpose, any other id is counted
KNOWN_ACTIONS = frozenset(
    {0, 1, *range(2, 14), 100, 101, 102, *range(200, 213), 300, 400, 401, 500, 501, 502}
)
UNKNOWN_ACTIONS = "unknown_action_ids"  # the episode key counting them: {"id": interactions}

_DIGITS_SUFFIX = re.compile(r"_\d+$")
_TYPE = re.compile(r"^[A-Z][A-Za-z]*$")
_GLOB_CHARS = frozenset("*?[")

MotionKind = Literal["move", "turn"]


# --------------------------------------------------------------------------- structure access


def _where(path: str, key: str | int) -> str:
    return f"{path}[{key}]" if isinstance(key, int) else (f"{path}.{key}" if path else key)


def _field(data: Mapping[str, Any], key: str, kind: type | tuple[type, ...], path: str) -> Any:
    """`data[key]`, checked to be of `kind`; raise ValueError naming the place otherwise."""
    where = _where(path, key)
    if key not in data:
        raise ValueError(f"missing key: {where}")
    value = data[key]
    if isinstance(value, bool) or not isinstance(value, kind):
        raise ValueError(f"wrong type: {where} is {type(value).__name__}")
    return value


def _records(data: Mapping[str, Any], key: str, path: str) -> list[tuple[str, Mapping[str, Any]]]:
    """The objects of the list `data[key]`, each with its place in the file."""
    items = _field(data, key, list, path)
    out = []
    for i, item in enumerate(items):
        where = _where(_where(path, key), i)
        if not isinstance(item, Mapping):
            raise ValueError(f"wrong type: {where} is {type(item).__name__}")
        out.append((where, item))
    return out


def _episodes(data: Mapping[str, Any]) -> list[tuple[str, Mapping[str, Any]]]:
    """Every episode of every task of a game, each with its place in the file.

    An episode whose id was already seen is a repeat of it (one real game lists its only
    episode twice, the copy without dialogue annotations) and is left out.
    """
    episodes, seen = [], set()
    for where, task in _records(data, "tasks", ""):
        for place, episode in _records(task, "episodes", where):
            key = _field(episode, "episode_id", (str, int), place)
            if key not in seen:
                seen.add(key)
                episodes.append((place, episode))
    if not episodes:
        raise ValueError("no episodes: the game has no task episode")
    return episodes


def _interactions(data: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The interactions of all episodes, stable-sorted by `time_start`."""
    events: list[Mapping[str, Any]] = []
    for where, episode in _episodes(data):
        for place, event in _records(episode, "interactions", where):
            _field(event, "agent_id", int, place)
            _field(event, "action_id", int, place)
            _field(event, "time_start", (int, float), place)
            events.append(event)
    return sorted(events, key=lambda event: float(event["time_start"]))


# --------------------------------------------------------------------------- conversion


def object_type_of(oid: str) -> str:
    """The object type of a simulator object id.

    >>> object_type_of("Mug|+00.10|+00.90|-01.20")
    'Mug'
    >>> object_type_of("Sink|-00.60|+00.93|-03.39|SinkBasin")
    'SinkBasin'
    >>> object_type_of("Bread|-01.87|+00.99|-00.82|BreadSliced_3")
    'BreadSliced'
    """
    parts = oid.split("|")
    return _DIGITS_SUFFIX.sub("", parts[-1]) if len(parts) > 4 else parts[0]


def _number(value: float) -> str:
    """A motion amount as written in the notation: `repr(round(v, 2))`."""
    return repr(round(float(value), 2))


def _utterance(event: Mapping[str, Any]) -> str:
    """The corrected utterance when non-empty, else the raw one, whitespace collapsed."""
    for key in ("corrected_utterance", "utterance"):
        text = event.get(key)
        if isinstance(text, str) and text.strip():
            return " ".join(text.split())
    return ""


def _move_amount(event: Mapping[str, Any], default: float) -> float:
    """|pose_delta[0]| with the sign of the direction; `default` when pose_delta is absent."""
    delta = event.get("pose_delta")
    if not delta:
        return default
    if not isinstance(delta, list) or not isinstance(delta[0], int | float):
        raise ValueError(f"wrong type: pose_delta {delta!r} at time {event['time_start']}")
    return abs(float(delta[0])) if default > 0 else -abs(float(delta[0]))


@dataclass
class _Conversion:
    """The state of one game's conversion: emitted lines, the open motion run, names, held object."""

    lines: list[str] = field(default_factory=list)
    names: dict[str, str] = field(default_factory=dict)  # oid -> name in the notation
    counts: Counter[str] = field(default_factory=Counter)  # type -> names given
    run_kind: MotionKind | None = None
    run_total: float = 0.0
    held: str | None = None  # oid of the object in the Driver's hand
    unknown: Counter[int] = field(default_factory=Counter)  # action ids TEACh does not define

    def name(self, oid: str) -> str:
        """The notation name of an object: its type, then `Type2`, `Type3`, ... for more oids."""
        if oid not in self.names:
            kind = object_type_of(oid)
            if not _TYPE.match(kind):
                raise ValueError(f"bad object id: {oid!r} has no usable object type")
            self.counts[kind] += 1
            number = self.counts[kind]
            self.names[oid] = kind if number == 1 else f"{kind}{number}"
        return self.names[oid]

    def motion(self, kind: MotionKind, amount: float) -> None:
        """Add a motion event to the open run, ending a run of the other kind first."""
        if self.run_kind != kind:
            self.flush()
            self.run_kind = kind
        self.run_total += amount

    def flush(self) -> None:
        """End the open run, emitting its net motion unless it is zero."""
        kind, net = self.run_kind, round(self.run_total, 2)
        self.run_kind, self.run_total = None, 0.0
        if kind is None or net == 0:
            return
        if kind == "move":
            self.lines.append(f"Driver.Move({_number(net)})")
        elif net > 0:
            self.lines.append(f"Driver.TurnLeft({_number(net)})")
        else:
            self.lines.append(f"Driver.TurnRight({_number(-net)})")

    def emit(self, line: str) -> None:
        """Emit a non-motion line; it ends the open run."""
        self.flush()
        self.lines.append(line)

    def say(self, agent: str, event: Mapping[str, Any]) -> None:
        """An utterance becomes a Say line; an empty one emits nothing."""
        text = _utterance(event)
        if text:
            self.emit(f"{agent}.Say('{escape_text(text)}')")

    def interact(self, action: int, oid: str) -> None:
        """A successful object interaction of the Driver on `oid`."""
        if action == PICKUP:
            self.emit(f"Driver.PickUp('{self.name(oid)}')")
            self.held = oid
        elif action in (PLACE, POUR) and self.held is not None:
            verb = "PutAOnB" if action == PLACE else "PourFromAIntoB"
            self.emit(f"Driver.{verb}('{self.name(self.held)}', '{self.name(oid)}')")
            if action == PLACE:
                self.held = None
        elif action in ONE_OBJECT:
            self.emit(f"Driver.{ONE_OBJECT[action]}('{self.name(oid)}')")

    def step(self, event: Mapping[str, Any]) -> None:
        """Convert one interaction; anything not listed in the rules is skipped."""
        action, agent = event["action_id"], AGENT_NAMES.get(event["agent_id"])
        if action not in KNOWN_ACTIONS:
            self.unknown[action] += 1
            return
        if event.get("success") != 1 or agent is None:
            return
        if action in UTTERANCES:
            self.say(agent, event)
        elif agent != "Driver":
            return
        elif action in MOVES:
            self.motion("move", _move_amount(event, MOVES[action]))
        elif action in TURNS:
            self.motion("turn", TURNS[action])
        elif PICKUP <= action <= 212:
            oid = event.get("oid")
            if isinstance(oid, str) and oid:
                self.interact(action, oid)


def _convert(data: Mapping[str, Any]) -> _Conversion:
    conversion = _Conversion()
    for event in _interactions(data):
        conversion.step(event)
    conversion.flush()
    return conversion


def game_actions(data: Mapping[str, Any]) -> list[str]:
    """The plan of a game: one line in the action notation per emitted step.

    Raises ValueError when the game's structure is malformed.
    """
    return _convert(data).lines


# --------------------------------------------------------------------------- episode fields


def _task_objects(task: Mapping[str, Any], out: list[str]) -> list[str]:
    """Object types and classes named by a task definition's conditions, in order of appearance.

    Components with determiner "0" (none needed) are left out.
    """
    components = task.get("components")
    if not isinstance(components, Mapping):
        return out
    for component in components.values():
        if not isinstance(component, Mapping) or str(component.get("determiner")) == "0":
            continue
        if isinstance(component.get("task"), Mapping):
            _task_objects(component["task"], out)
        conditions = component.get("conditions")
        if isinstance(conditions, Mapping):
            for key in ("objectType", "simbotObjectClass"):
                value = conditions.get(key)
                if isinstance(value, str) and value not in out:
                    out.append(value)
    return out


def _flag(obj: Mapping[str, Any], key: str) -> bool:
    return bool(obj.get(key))


def _scene_object(obj: Mapping[str, Any], name: str | None) -> SceneObject:
    """An object's initial state from the simulator's own flags.

    TEACh's `simbot*` states (`simbotIsFilledWithWater`, `simbotIsCooked`, ...) are not read:
    every shared game stores the same `custom_object_metadata` dict in its initial and final
    states, so they describe the end of the game (a mug the player filled reads as filled from
    the start), and a simulator started from them would call the very steps that did the work
    unnecessary.
    """
    oid = str(obj["objectId"])
    parents = obj.get("parentReceptacles") or []
    return SceneObject(
        id=oid,
        type=str(obj.get("objectType") or object_type_of(oid)),
        name=name,
        pickupable=_flag(obj, "pickupable"),
        receptacle=_flag(obj, "receptacle"),
        toggleable=_flag(obj, "toggleable"),
        toggled=_flag(obj, "isToggled"),
        openable=_flag(obj, "openable"),
        open=_flag(obj, "isOpen"),
        dirty=_flag(obj, "isDirty"),
        filled=_flag(obj, "isFilledWithLiquid"),
        sliced=_flag(obj, "isSliced"),
        cooked=_flag(obj, "isCooked"),
        parent=list(dict.fromkeys(object_type_of(str(p)) for p in parents)),
        within=list(dict.fromkeys(str(p) for p in parents)),
    )


def _scene(episode: Mapping[str, Any], where: str, names: Mapping[str, str]) -> Scene | None:
    """The initial state of every object of an episode, or None when it has no initial state."""
    state = episode.get("initial_state")
    if state is None:
        return None
    if not isinstance(state, Mapping):
        raise ValueError(f"wrong type: {where}.initial_state is {type(state).__name__}")
    objects = []
    for place, obj in _records(state, "objects", f"{where}.initial_state"):
        oid = _field(obj, "objectId", str, place)
        objects.append(_scene_object(obj, names.get(oid)))
    return Scene(objects=objects, made_from=_made_from(names))


def _made_from(names: Mapping[str, str]) -> dict[str, str]:
    """The whole each slice (or cracked egg) the plan names comes from: TEACh's id of a slice is
    its whole's id with a part added (`Bread|-01.52|+00.99|-00.29|BreadSliced_3`).

    A basin's id extends its sink's too (`Sink|1|2|3|SinkBasin`): it is no part cut off.

    >>> _made_from({"Bread|1|2|3": "Bread2", "Bread|1|2|3|BreadSliced_3": "BreadSliced",
    ...             "Sink|4|5|6": "Sink", "Sink|4|5|6|SinkBasin": "SinkBasin"})
    {'BreadSliced': 'Bread2'}
    """
    out = {}
    for oid, name in names.items():
        whole = oid.rpartition("|")[0]
        if whole in names and base_type(kind := object_type_of(oid)) != kind:
            out[name] = names[whole]
    return out


def convert_game(
    data: Mapping[str, Any], *, source: str = "<game>", split: str | None = None
) -> Episode:
    """Convert one parsed TEACh game into an `Episode`.

    The episode's `id` is the game's (first) episode id, `task` the task name, `goal` the task
    description, `scene` the initial object states and `teach_task` the game's task definition
    (`tasks[0]` without its `episodes`, verbatim). Extra fields: `split`, `source`, `world`,
    `task_objects` (the object types the task definition names) and, when some interactions
    have an action id TEACh does not define (left out of the plan), `unknown_action_ids`
    (id -> interactions).
    Raises `EpisodeError(source, 0, message)` with a one-line message on malformed content.
    """
    try:
        if not isinstance(data, Mapping):
            raise ValueError(f"not a JSON object: the game is {type(data).__name__}")
        tasks = _records(data, "tasks", "")
        where, first = _episodes(data)[0]
        conversion = _convert(data)
        record = {
            "id": first["episode_id"],
            "goal": " ".join(str(task.get("desc") or "") for _, task in tasks).strip() or None,
            "actions": conversion.lines,
            "task": _field(tasks[0][1], "task_name", str, tasks[0][0]),
            "scene": _scene(first, where, conversion.names),
            "split": split,
            "source": source,
            "world": first.get("world"),
            "task_objects": _task_objects(tasks[0][1], []),
            "teach_task": {k: v for k, v in tasks[0][1].items() if k != "episodes"},
        }
        if conversion.unknown:
            record[UNKNOWN_ACTIONS] = {str(k): n for k, n in sorted(conversion.unknown.items())}
    except (ValueError, TypeError, KeyError, ValidationError) as exc:
        raise EpisodeError(source, 0, _one_line(exc)) from None
    return parse_episode(record, source=source).read_from(source, 0)


def _one_line(exc: Exception) -> str:
    text = exc.errors()[0]["msg"] if isinstance(exc, ValidationError) else str(exc)
    return " ".join(text.split()) or type(exc).__name__


# --------------------------------------------------------------------------- files


def split_of(path: Path) -> str | None:
    """The TEACh split of a game file: its parent directory's name when that is a known split."""
    return path.parent.name if path.parent.name in SPLITS else None


def _in_split(path: Path, split: str | None) -> bool:
    return split is None or split in path.absolute().parent.parts


def _expand_one(text: str) -> list[Path]:
    """The game files of one input; a path that does not exist is returned as is."""
    path = Path(text)
    if path.is_dir():
        return [p for p in path.rglob(f"*{GAME_SUFFIX}") if p.is_file()]
    if path.exists() or not _GLOB_CHARS & set(text):
        return [path]
    matches = [Path(m) for m in glob.glob(text, recursive=True)]
    if not matches:
        return [path]
    return [p for m in matches for p in (_expand_one(str(m)) if m.is_dir() else [m])]


def expand_inputs(inputs: Iterable[str | Path], *, split: str | None = None) -> list[Path]:
    """The game files named by files, directories and glob patterns, sorted and deduplicated.

    A directory contributes every `*.game.json` below it (recursively); a glob pattern every
    match (directories expanded the same way); a file itself, whatever its name. With `split`,
    only files whose absolute path has a directory component equal to it are kept (so
    `games/` with `split="valid_seen"` keeps `games/valid_seen/*.game.json`). A path that does
    not exist (or a pattern matching nothing) is kept, so that loading it reports the error.
    """
    found: set[Path] = set()
    for item in inputs:
        for path in _expand_one(str(item)):
            if not path.exists() or _in_split(path, split):
                found.add(path)
    return sorted(found)


def load_game(path: Path, *, split: str | None = None) -> Episode:
    """Read and convert one game file; raise `EpisodeError` naming the file on any problem."""
    source = str(path)
    try:
        data = load_json(path)
    except FileNotFoundError:
        raise EpisodeError(source, 0, "no such file or directory") from None
    except OSError as exc:
        raise EpisodeError(source, 0, f"unreadable: {exc.strerror or exc}") from None
    except ValueError as exc:
        raise EpisodeError(source, 0, str(exc)) from None
    return convert_game(data, source=source, split=split_of(path) or split)


def iter_games(
    paths: Iterable[str | Path], *, split: str | None = None
) -> Iterator[Episode | EpisodeError]:
    """Stream the episodes of game files, directories and globs (see `expand_inputs`).

    One game is parsed at a time; a file that cannot be loaded yields an `EpisodeError` and the
    next file goes on. An episode's split is its directory's (see `split_of`), else `split`.
    """
    for path in expand_inputs(paths, split=split):
        try:
            yield load_game(path, split=split)
        except EpisodeError as exc:
            yield exc


@dataclass
class LoadSummary:
    """Counts of a load: episodes read, files skipped, and why (by error kind)."""

    read: int = 0
    skipped: int = 0
    reasons: Counter[str] = field(default_factory=Counter)
    unknown_actions: Counter[str] = field(default_factory=Counter)  # action id -> interactions
    games_with_unknown: int = 0  # games read that had some

    def add(self, item: Episode | EpisodeError) -> None:
        """Count one loaded episode or error."""
        if isinstance(item, EpisodeError):
            self.skipped += 1
            self.reasons[reason_of(item)] += 1
        else:
            self.read += 1
            unknown = unknown_actions(item)
            self.unknown_actions.update(unknown)
            self.games_with_unknown += bool(unknown)

    def track(self, items: Iterable[Episode | EpisodeError]) -> Iterator[Episode | EpisodeError]:
        """Pass `items` through, counting each (`for x in summary.track(iter_games(...))`)."""
        for item in items:
            self.add(item)
            yield item

    def __str__(self) -> str:
        text = f"read {self.read} game(s), skipped {self.skipped}"
        if self.reasons:
            text += " (" + ", ".join(f"{r}: {n}" for r, n in self.reasons.most_common()) + ")"
        if self.unknown_actions:
            ids = ", ".join(f"{k}: {n}" for k, n in self.unknown_actions.most_common())
            text += (
                f"; left out {self.unknown_actions.total()} interaction(s) with an action id "
                f"TEACh does not define, in {self.games_with_unknown} game(s) (id: count {ids})"
            )
        return text


def unknown_actions(episode: Episode) -> Counter[str]:
    """Interactions of a converted game left out for an action id TEACh does not define, by
    id (empty for other episodes)."""
    counts = (episode.model_extra or {}).get(UNKNOWN_ACTIONS)
    if not isinstance(counts, dict):
        return Counter()
    return Counter({str(k): n for k, n in counts.items() if isinstance(n, int)})


# what a message says first about the one record it is about: "episode 'x': ", "label 3: "
_RECORD_PREFIX = re.compile(
    r"""^(?:(?:episode (?:'(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*")|label \d+): )+"""
)
_NUMBER_ALONE = re.compile(r"(?<![\w.-])\d+(?![\w.-])")


def reason_of(error: EpisodeError) -> str:
    """The kind of a load error, the same for every record it happens to: its `reason`, else
    its message up to the first colon or parenthesis (`malformed JSON`, `not UTF-8 text`,
    ...), without the episode or label it names first and with positions as N, which
    summaries print inside their own parentheses.

    >>> reason_of(EpisodeError("a.jsonl", 4, "episode 'x: y': goal holds a NUL character"))
    'goal holds a NUL character'
    >>> reason_of(EpisodeError("a.jsonl", 2, "label 3: REMOVE index 9 out of range"))
    'REMOVE index N out of range'
    """
    if error.reason:
        return error.reason
    message = _RECORD_PREFIX.sub("", error.message)
    return _NUMBER_ALONE.sub("N", re.split(r"[:()]", message, maxsplit=1)[0].strip())
