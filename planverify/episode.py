"""Episode records: the JSONL input of `planverify verify` (and, with labels, of scoring).

A plain record is `{"id", "goal"?, "actions": [...], "task"?, "scene"?}`; unknown extra keys are
kept and ignored. `read_episodes` validates line by line and reports errors with line numbers.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any, Literal

import orjson
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from planverify.notation import Action, NotationError, parse_action

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


class Scene(BaseModel):
    """The initial state of every object of an episode."""

    model_config = ConfigDict(extra="allow")

    objects: list[SceneObject] = Field(default_factory=list)  # one entry per object


class Label(BaseModel):
    """A ground-truth error in an annotated episode."""

    model_config = ConfigDict(extra="allow")

    type: Literal["REMOVE", "MISSING"]  # REMOVE: a step to drop; MISSING: a step to add
    index: int | None = None  # REMOVE: 0-based position in `actions`
    after: int | None = None  # MISSING: 0-based position it follows, -1 = before the first
    action: str | None = None  # MISSING: the step that should be there
    reason: str | None = None  # free-text rationale
    error: ErrorType | None = None  # error category


class Episode(BaseModel):
    """One plan to verify."""

    model_config = ConfigDict(extra="allow")

    id: str  # episode id, unique within a run
    goal: str | None = None  # natural-language goal; inferred when missing
    actions: list[str]  # the plan, one action per line in the notation
    task: str | None = None  # task family, e.g. TEACh's "Coffee"
    scene: Scene | None = None  # initial object states, when known
    labels: list[Label] | None = None  # ground truth of an annotated episode

    @field_validator("id", mode="before")
    @classmethod
    def _id_as_text(cls, value: Any) -> Any:
        return str(value) if isinstance(value, int) else value

    @field_validator("actions")
    @classmethod
    def _actions_are_lines(cls, value: list[str]) -> list[str]:
        for i, line in enumerate(value):
            if "\n" in line.strip():
                raise ValueError(f"action {i} spans several lines")
            try:
                parse_action(line)
            except NotationError as exc:
                raise ValueError(f"action {i}: {exc}") from None
        return [line.strip() for line in value]

    def parsed(self) -> list[Action]:
        """The actions as typed `Action`s."""
        return [parse_action(line) for line in self.actions]

    def validate_labels(self) -> None:
        """Check that labels point at real, non-dialogue steps; raise ValueError if not."""
        steps = self.parsed()
        for k, label in enumerate(self.labels or []):
            if label.type == "REMOVE":
                if label.index is None or not 0 <= label.index < len(steps):
                    raise ValueError(f"label {k}: REMOVE index {label.index} out of range")
                if steps[label.index].is_dialogue:
                    raise ValueError(f"label {k}: REMOVE on dialogue line {label.index}")
            else:
                if label.after is None or not -1 <= label.after < len(steps):
                    raise ValueError(f"label {k}: MISSING after {label.after} out of range")
                if label.action is None:
                    raise ValueError(f"label {k}: MISSING needs an action")
                try:
                    parse_action(label.action, strict=True)
                except NotationError as exc:
                    raise ValueError(f"label {k}: {exc}") from None


class EpisodeError(ValueError):
    """A record that could not be read; names the source and line."""

    def __init__(self, source: str, line: int, message: str) -> None:
        super().__init__(f"{source}:{line}: {message}")
        self.source, self.line, self.message = source, line, message


def _one_line(exc: ValidationError) -> str:
    parts = []
    for err in exc.errors():
        where = ".".join(str(p) for p in err["loc"]) or "record"
        parts.append(f"{where}: {err['msg'].removeprefix('Value error, ')}")
    return "; ".join(parts)


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


def iter_jsonl(path: Path) -> Iterator[Episode | EpisodeError]:
    """Read a JSONL file, yielding an episode or an error for each non-blank line."""
    source = str(path)
    with path.open("rb") as fh:
        for number, raw in enumerate(fh, start=1):
            if not raw.strip():
                continue
            try:
                data = orjson.loads(raw)
            except orjson.JSONDecodeError as exc:
                yield EpisodeError(source, number, f"malformed JSON ({exc})")
                continue
            try:
                yield parse_episode(data, source=source, line=number)
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
