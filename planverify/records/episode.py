"""Episode records: the JSONL input of `planverify verify` (and, with labels, of scoring).

A plain record is `{"id", "goal"?, "actions": [...], "task"?, "scene"?, "teach_task"?}`; unknown
extra keys are kept and ignored. A record of another domain says so (`"domain": "virtualhome"`,
with its `program`): its actions are lines in that domain's notation, which the domain reads.
`read_episodes` validates line by line and reports errors with line numbers.

An episode's identity is its id *and* its content: `input_digest` hashes everything that can
change a verification result (goal, actions, scene, task, teach_task, and the domain and
program when given), so a result is only ever reused for the very input it was computed on.
Annotations (`labels`, `clean`) are not input.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Iterator, Mapping, Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any, Literal

import orjson
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)

from planverify.records.jsonl import DESCRIPTIONS, Kind, location, record_kind, records
from planverify.records.notation import Action, NotationError, opaque_step, parse_action

InjectedError = Literal[
    "detour",
    "misplacement",
    "premature_toggle",
    "cancelling_navigation",
    "pointless_open_close",
    "duplicate",
    "missing_step",
]  # the error taxonomy `planverify corrupt` injects
NaturalError = Literal[
    "wrong_placement",
    "wrong_object",
    "ineffective_action",
    "nonexistent_object",
]  # kinds only the natural generator makes (it also makes `detour`, `missing_step`)
ErrorType = Literal[InjectedError, NaturalError, "other"]  # what a label's `error` may say
PROGRAM_NAME = r"^[A-Za-z0-9_]{1,64}$"  # a program names data of its domain, never a path
Domain = Literal["teach", "virtualhome"]  # the household a plan is for; no domain means TEACh


class SceneObject(BaseModel):
    """The initial state of one object in the scene (TEACh's `init_state`)."""

    model_config = ConfigDict(extra="allow")

    id: str  # the simulator's object id
    type: str  # TEACh object type, e.g. "Mug"
    name: str | None = None  # the object's name in the plan's notation, if the plan mentions it
    pickupable: bool = False  # can be picked up
    receptacle: bool = False  # other objects can be put on or in it
    toggleable: bool = False  # can be switched on and off
    toggled: bool = False  # switched on at the start
    openable: bool = False  # can be opened
    open: bool = False  # open at the start
    dirty: bool = False  # dirty at the start
    filled: bool = False  # filled with liquid at the start
    sliced: bool = False  # sliced at the start
    cooked: bool = False  # cooked at the start
    parent: list[str] = Field(default_factory=list)  # types of the receptacles it starts in
    within: list[str] = Field(default_factory=list)  # ids of the receptacles it starts in


class Scene(BaseModel):
    """The initial state of every object of an episode."""

    model_config = ConfigDict(extra="allow")

    objects: list[SceneObject] = Field(default_factory=list)  # one entry per object
    made_from: dict[str, str] = Field(default_factory=dict)  # plan name of a slice (or cracked
    # egg) -> plan name of the whole it is cut from: which whole's slices a cut makes


class Label(BaseModel):
    """A ground-truth error in an annotated episode."""

    model_config = ConfigDict(extra="allow")

    type: Literal["REMOVE", "MISSING"]  # REMOVE: a step to drop; MISSING: a step to add
    index: int | None = None  # REMOVE: 0-based position in `actions`
    after: int | None = None  # MISSING: 0-based position it follows, -1 = before the first
    action: str | None = None  # MISSING: the step that should be there
    reason: str | None = None  # free-text rationale
    error: ErrorType | None = None  # error category


def action_lines(actions: list[str]) -> list[str]:
    """The actions, stripped; `ValueError` naming the first one that is not a single line in
    the notation (`Agent.Verb(args)`)."""
    return list(_action_lines(tuple(actions)))


@lru_cache(maxsize=256)  # a run's state is validated again at every step, with the same plan
def _action_lines(actions: tuple[str, ...]) -> tuple[str, ...]:
    for i, line in enumerate(actions):
        try:
            parse_action(line)
        except NotationError as exc:
            raise ValueError(f"action {i + 1}: {exc}") from None
    return tuple(line.strip() for line in actions)


def single_lines(actions: list[str]) -> list[str]:
    """The actions, stripped; `ValueError` naming the first one that is empty or not one line."""
    for i, line in enumerate(actions):
        if not line.strip() or "\n" in line.strip() or "\r" in line.strip():
            raise ValueError(
                f"action {i + 1}: {'empty' if not line.strip() else 'not a single line'}"
            )
    return [line.strip() for line in actions]


class Episode(BaseModel):
    """One plan to verify."""

    model_config = ConfigDict(extra="allow")

    id: str  # episode id, unique within a run
    domain: Domain | None = None  # the household the plan is for; None: TEACh
    goal: str | None = None  # natural-language goal; inferred when missing
    actions: list[str]  # the plan, one action per line in the notation
    task: str | None = None  # task family, e.g. TEACh's "Coffee"
    scene: Scene | None = None  # initial object states, when known
    teach_task: dict[str, Any] | None = None  # TEACh's task definition (`tasks[0]`, no episodes)
    program: str | None = Field(  # VirtualHome: the program whose scene graph and goal apply
        default=None, pattern=PROGRAM_NAME
    )
    labels: list[Label] | None = None  # ground truth of an annotated episode
    _origin: tuple[str, int] | None = PrivateAttr(default=None)  # (file, line) it was read from

    @field_validator("id", mode="before")
    @classmethod
    def _id_as_text(cls, value: Any) -> Any:
        if isinstance(value, bool):  # an int to Python, but `true` names no episode
            raise ValueError("must be text or an integer, not a boolean")
        return str(value) if isinstance(value, int) else value

    @field_validator("id")
    @classmethod
    def _id_not_empty(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("must not be empty")
        return value

    @model_validator(mode="before")
    @classmethod
    def _no_nul(cls, data: Any) -> Any:
        if isinstance(data, dict) and (where := nul_in(data)) is not None:
            episode = data.get("id")
            raise ValueError(f"episode {episode!r}: {where} holds a NUL character")
        return data

    @field_validator("actions")
    @classmethod
    def _actions_are_lines(cls, value: list[str], info: ValidationInfo) -> list[str]:
        if "domain" in info.data and info.data["domain"] in (None, "teach"):
            return action_lines(value)
        return single_lines(value)  # another domain (or one not known) reads its own notation

    def parsed(self) -> list[Action]:
        """The actions as typed `Action`s (another domain's steps as `opaque_step`s)."""
        return [self.step_of(line) for line in self.actions]

    def step_of(self, line: str) -> Action:
        """A line of this episode's notation as an `Action`: TEACh's parsed, another domain's
        opaque (compared by its text)."""
        return parse_action(line) if self.domain in (None, "teach") else opaque_step(line)

    @property
    def input_digest(self) -> str:
        """A digest of everything that can change this episode's verification result."""
        return input_digest(
            goal=self.goal,
            actions=self.actions,
            scene=self.scene,
            task=self.task,
            teach_task=self.teach_task,
            domain=self.domain,
            program=self.program,
        )

    def __eq__(self, other: object) -> bool:  # where it was read is not part of the record
        if not isinstance(other, Episode):
            return NotImplemented
        return (
            self.__dict__ == other.__dict__ and self.__pydantic_extra__ == other.__pydantic_extra__
        )

    __hash__ = None  # type: ignore[assignment]  # mutable, like every pydantic model

    @property
    def origin(self) -> str:
        """Where the record was read: `file:line`, or the `source` field, or "input"."""
        if self._origin is not None:
            return f"{self._origin[0]}:{self._origin[1]}" if self._origin[1] else self._origin[0]
        return str((self.model_extra or {}).get("source") or "input")

    def read_from(self, source: str, line: int) -> Episode:
        """Record where the episode was read (for messages); returns the episode."""
        self._origin = (source, line)
        return self

    def validate_labels(self) -> None:
        """Check that labels point at real, non-dialogue steps; raise ValueError if not (labels
        and steps counted from 1, the 0-based `index` or `after` quoted as given). A record of
        another domain than TEACh has no dialogue, and its MISSING actions are in its notation."""
        teach = self.domain in (None, "teach")
        dialogue = [a.is_dialogue for a in self.parsed()] if teach else [False] * len(self.actions)
        plan = f"a plan of {len(dialogue)} step(s)"
        for number, label in enumerate(self.labels or [], start=1):
            if label.type == "REMOVE":
                if label.index is None or not 0 <= label.index < len(dialogue):
                    step = "" if label.index is None else f"step {label.index + 1} of "
                    raise ValueError(
                        f"label {number}: REMOVE index {label.index} out of range ({step}{plan})"
                    )
                if dialogue[label.index]:
                    raise ValueError(
                        f"label {number}: REMOVE on dialogue step {label.index + 1} "
                        f"(index {label.index}), which is never removed"
                    )
            else:
                if label.after is None or not -1 <= label.after < len(dialogue):
                    step = "" if label.after is None else f"after step {label.after + 1} of "
                    raise ValueError(
                        f"label {number}: MISSING after {label.after} out of range ({step}{plan})"
                    )
                if label.action is None:
                    raise ValueError(f"label {number}: MISSING needs an action")
                if not teach:
                    continue
                try:
                    parse_action(label.action, strict=True)
                except NotationError as exc:
                    raise ValueError(f"label {number}: {exc}") from None


def input_digest(
    *,
    goal: str | None,
    actions: Sequence[str],
    scene: Scene | Mapping[str, Any] | None,
    task: str | None,
    teach_task: Mapping[str, Any] | None,
    domain: str | None = None,
    program: str | None = None,
) -> str:
    """The content digest of a verification input (hex SHA-256 of its canonical JSON). The
    domain and program count only when given, so a TEACh record keeps the digest it always had.

    >>> a = input_digest(goal="g", actions=["Driver.Move(1.0)"], scene=None, task=None, teach_task=None)
    >>> a == input_digest(goal="g", actions=[" Driver.Move(1.0) "], scene=None, task=None, teach_task=None)
    True
    >>> a == input_digest(goal="g2", actions=["Driver.Move(1.0)"], scene=None, task=None, teach_task=None)
    False
    """
    lines = [line.strip() for line in actions]
    if isinstance(scene, Scene):
        return _scene_input_digest(scene, (goal, lines, task, teach_task, domain, program))
    if isinstance(scene, BaseModel):
        scene = scene.model_dump(mode="json")
    if isinstance(scene, Mapping):
        scene = _without_late_defaults(scene)
    return _digest(scene, goal, lines, task, teach_task, domain, program)


def _digest(scene: Mapping[str, Any] | None, *given: Any) -> str:
    goal, lines, task, teach_task, domain, program = given
    content = {
        "goal": goal,
        "actions": lines,
        "scene": scene,
        "task": task,
        "teach_task": teach_task,
    }
    content.update({k: v for k, v in (("domain", domain), ("program", program)) if v is not None})
    return hashlib.sha256(orjson.dumps(content, option=orjson.OPT_SORT_KEYS)).hexdigest()


_DIGESTS: dict[int, tuple[Scene, tuple[Any, ...], str]] = {}  # the last inputs', by scene identity


def _scene_input_digest(scene: Scene, given: tuple[Any, ...]) -> str:
    """The digest of an input with this scene and the rest `given`, computed once per scene
    object and input: a run digests its input twice (the result's digest, and the graph's own
    record of it), and the scene, most of what is hashed, is the same object both times."""
    cached = _DIGESTS.get(id(scene))
    if cached is not None and cached[0] is scene and cached[1] == given:
        return cached[2]
    digest = _digest(_dump_without_late_defaults(scene), *given)
    if len(_DIGESTS) >= 64:  # a batch digests each input twice, close together
        _DIGESTS.clear()
    _DIGESTS[id(scene)] = (scene, given, digest)
    return digest


def _dump_without_late_defaults(scene: Scene) -> dict[str, Any]:
    """`_without_late_defaults` of the scene's JSON dump, made in place: the dump is ours."""
    dump = scene.model_dump(mode="json")
    for obj in dump["objects"]:
        for key in _LATE_FIELDS:
            if obj.get(key) == []:
                del obj[key]
    if not dump.get("made_from"):
        dump.pop("made_from", None)
    return dump


def _without_late_defaults(scene: Mapping[str, Any]) -> Mapping[str, Any]:
    """A scene without the empty values of fields added after digests were first stored (an
    object's `within`, the scene's `made_from`), so that a record written before them keeps its
    digest."""
    objects = scene.get("objects")
    if "made_from" in scene and not scene["made_from"]:
        scene = {k: v for k, v in scene.items() if k != "made_from"}
    if not isinstance(objects, list):
        return scene
    return {**scene, "objects": [_object_without_late_defaults(o) for o in objects]}


def _object_without_late_defaults(obj: Any) -> Any:
    """One scene object without its empty late fields: the object itself when it has none, else
    a copy with them deleted (cheaper than rebuilding each object key by key)."""
    if not isinstance(obj, Mapping):
        return obj
    late = [k for k in _LATE_FIELDS if k in obj and obj[k] == []]
    if not late and isinstance(obj, dict):
        return obj
    copy = dict(obj)
    for key in late:
        del copy[key]
    return copy


_LATE_FIELDS = frozenset({"within"})  # SceneObject fields newer than the first stored digests


def nul_in(value: Any, where: str = "") -> str | None:
    """Where a NUL character is in a record's keys or text (`goal`, `actions[2]`, ...), if
    anywhere: no checkpoint store keeps one (PostgreSQL refuses it in text and JSON)."""
    try:
        if b"\\u0000" not in orjson.dumps(value):
            return None
    except TypeError:  # models and other objects: look at every value
        pass
    if isinstance(value, str):
        return (where or "text") if "\0" in value else None
    if isinstance(value, BaseModel):
        value = value.model_dump()
    if isinstance(value, Mapping):
        for key, item in value.items():
            inner = f"{where}.{key}" if where else str(key)
            if "\0" in str(key):
                return inner
            if (found := nul_in(item, inner)) is not None:
                return found
    elif isinstance(value, list | tuple):
        for i, item in enumerate(value):
            if (found := nul_in(item, f"{where}[{i}]")) is not None:
                return found
    return None


class EpisodeError(ValueError):
    """A record or source that could not be read; names the source and line (0: the whole
    source). `reason` is the kind of problem summaries count it under, when the message does
    not start with it (see `teach.reason_of`). Pickles intact, so it crosses process boundaries."""

    def __init__(self, source: str, line: int, message: str, reason: str | None = None) -> None:
        where = f"{source}:{line}" if line else source
        super().__init__(f"{where}: {message}")
        self.source, self.line, self.message, self.reason = source, line, message, reason

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.source, self.line, self.message, self.reason))


def problems(exc: ValidationError) -> list[str]:
    """One line per problem of a validation error: where (the field, the item counted from 1:
    `jsonl.location`), what is wrong, and the value given when it is short (URLs without their
    user info)."""
    from planverify.records.redaction import scrub

    lines = []
    for err in exc.errors():
        message = err["msg"].removeprefix("Value error, ")
        where = location(err["loc"])
        line = f"{where}: {message}" if where else message
        given = err.get("input")
        if err["type"] != "missing" and isinstance(given, str | int | float | bool):
            shown = scrub(repr(given))
            if len(shown) <= 60:
                line += f" (got {shown})"
        lines.append(line)
    return lines


def _one_line(exc: ValidationError) -> str:
    return "; ".join(problems(exc))


def parse_episode(data: Any, *, source: str = "<input>", line: int = 0) -> Episode:
    """Validate one record; raise `EpisodeError` with a one-line message."""
    if not isinstance(data, dict):
        raise EpisodeError(source, line, "a record must be a JSON object")
    try:
        episode = Episode.model_validate(data)
        if episode.labels is not None:
            episode.validate_labels()
    except ValidationError as exc:
        raise EpisodeError(source, line, _one_line(exc)) from None
    except ValueError as exc:
        raise EpisodeError(source, line, str(exc)) from None
    return episode


EXPECTED = 'expected episode records like {"id", "goal"?, "actions": [...], "scene"?}'
OTHER_FILES: frozenset[Kind] = frozenset({"results", "TEACh game"})  # files that are not input


def iter_jsonl(path: Path) -> Iterator[Episode | EpisodeError]:
    """Read a JSONL file, yielding an episode or an error for each non-blank line.

    Each line is validated on its own. A file whose first record of a known kind is of another
    kind altogether (results of `verify`, a TEACh game) gives one error for the whole file
    rather than one per record.
    """
    source = str(path)
    read_any = False
    for record in records(path):
        if record.problem is not None:
            yield EpisodeError(source, record.line, record.problem)
            continue
        data = record.data
        kind = record_kind(data)
        if kind in OTHER_FILES:
            if not read_any:
                yield EpisodeError(
                    source, 0, f"not an episodes file: it holds {DESCRIPTIONS[kind]}; {EXPECTED}"
                )
                return
            yield EpisodeError(source, record.line, f"not an episode: {DESCRIPTIONS[kind]}")
            continue
        read_any = True
        if isinstance(data, dict) and "actions" not in data:
            keys = ", ".join(sorted(map(str, data))[:6]) or "none"
            yield EpisodeError(source, record.line, f"not an episode: no `actions` (keys: {keys})")
            continue
        try:
            yield parse_episode(data, source=source, line=record.line).read_from(
                source, record.line
            )
        except EpisodeError as exc:
            yield exc


def read_episodes(paths: Iterable[Path]) -> tuple[list[Episode], list[EpisodeError]]:
    """Read every record of the given JSONL files; errors are collected, not raised."""
    episodes: list[Episode] = []
    errors: list[EpisodeError] = []
    for path in paths:
        for item in iter_jsonl(path):
            (errors if isinstance(item, EpisodeError) else episodes).append(item)  # type: ignore[arg-type]
    return episodes, errors


def dump_jsonl_line(record: BaseModel | dict[str, Any]) -> bytes:
    """One JSONL line (with newline) for a model or a dict."""
    data = (
        record.model_dump(mode="json", exclude_none=True)
        if isinstance(record, BaseModel)
        else record
    )
    return orjson.dumps(data) + b"\n"
