"""The action notation: one `Agent.Verb(args)` per line, parsed into a typed `Action`.

>>> a = parse_action("Driver.PutAOnB('Mug', 'CoffeeMachine')")
>>> a.verb, a.objects
('PutAOnB', ('Mug', 'CoffeeMachine'))
>>> str(a)
"Driver.PutAOnB('Mug', 'CoffeeMachine')"
>>> parse_action(r"Commander.Say('it\\'s in the fridge')").text
"it's in the fridge"
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache
from typing import Literal

from pydantic import BaseModel, ConfigDict

Agent = Literal["Driver", "Commander"]
AGENTS: tuple[str, ...] = ("Driver", "Commander")

SAY = "Say"
MOTION_VERBS = frozenset({"Move", "TurnLeft", "TurnRight"})
TWO_OBJECT_VERBS = frozenset({"PutAOnB", "PourFromAIntoB"})
ONE_OBJECT_VERBS = frozenset(
    {
        "PickUp",
        "Open",
        "Close",
        "ToggleOn",
        "ToggleOff",
        "Slice",
        "Clean",
        "Dirty",
        "Fill",
        "Empty",
        "Break",
    }
)
VERBS = frozenset({SAY}) | MOTION_VERBS | TWO_OBJECT_VERBS | ONE_OBJECT_VERBS

_LINE = re.compile(r"^\s*(?P<agent>[A-Za-z_]\w*)\.(?P<verb>[A-Za-z_]\w*)\((?P<args>.*)\)\s*$", re.S)
_OBJECT = re.compile(r"^[A-Z][A-Za-z]*\d*$")
_NUMBER = re.compile(r"^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$")
_INSTANCE = re.compile(r"\d+$")
# every character `str.splitlines` breaks at: an action is one line in every reader's sense
_LINE_BREAK = re.compile("[\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029]")


class NotationError(ValueError):
    """A line that is not an action in the notation."""


class Action(BaseModel):
    """One parsed step of a plan.

    Known verbs keep typed arguments; an unknown verb keeps its raw text (`known` is False)
    so a plan is never lost because of a verb this version does not model.
    """

    model_config = ConfigDict(frozen=True)

    agent: str  # "Driver" or "Commander" for known actions
    verb: str  # one of VERBS when known
    objects: tuple[str, ...] = ()  # object names, e.g. ("Mug2", "Sink")
    amount: str | None = None  # numeric literal of a motion verb, kept as written
    text: str | None = None  # unescaped utterance of a Say
    raw: str | None = None  # the original line, kept only for unknown verbs

    @property
    def known(self) -> bool:
        """Whether the verb is part of the notation."""
        return self.raw is None

    @property
    def is_dialogue(self) -> bool:
        """Say lines are dialogue: context for the Judge, never removed."""
        return self.verb == SAY and self.known

    @property
    def value(self) -> float | None:
        """The motion amount as a float."""
        return None if self.amount is None else float(self.amount)

    @property
    def object_types(self) -> tuple[str, ...]:
        """Object names without instance numbers (`Mug2` -> `Mug`)."""
        return tuple(object_type(o) for o in self.objects)

    def __str__(self) -> str:
        return format_action(self)


def object_type(name: str) -> str:
    """The TEACh object type of a name: the name without its instance number."""
    return _INSTANCE.sub("", name) or name


def escape_text(text: str) -> str:
    r"""Escape an utterance for a single-quoted Say argument (`\` -> `\\`, `'` -> `\'`)."""
    return text.replace("\\", "\\\\").replace("'", "\\'")


def format_action(action: Action) -> str:
    """Write an action back in the notation (the inverse of `parse_action`)."""
    if action.raw is not None:
        return action.raw
    if action.verb == SAY:
        args = f"'{escape_text(action.text or '')}'"
    elif action.verb in MOTION_VERBS:
        args = action.amount or ""
    else:
        args = ", ".join(f"'{o}'" for o in action.objects)
    return f"{action.agent}.{action.verb}({args})"


def _split_args(args: str) -> list[str]:
    """Split an argument list into tokens; quoted strings are returned unescaped with quotes."""
    tokens: list[str] = []
    i, n = 0, len(args)
    while i < n:
        ch = args[i]
        if ch.isspace() or ch == ",":
            i += 1
            continue
        if ch in "'\"":
            quote, j, buf = ch, i + 1, []
            while j < n and args[j] != quote:
                if args[j] == "\\" and j + 1 < n:
                    j += 1
                buf.append(args[j])
                j += 1
            if j >= n:
                raise NotationError(f"unterminated string in ({args})")
            tokens.append(quote + "".join(buf) + quote)
            i = j + 1
        else:
            j = i
            while j < n and args[j] != ",":
                j += 1
            tokens.append(args[i:j].strip())
            i = j
    return tokens


def _unquote(token: str) -> str | None:
    if len(token) >= 2 and token[0] == token[-1] and token[0] in "'\"":
        return token[1:-1]
    return None


def opaque_step(line: str) -> Action:
    """A step of another domain's notation, which this one does not read: never dialogue, and
    equal to another only when its text is (`Action.raw`)."""
    return Action(agent="", verb="", raw=line.strip())


def parse_action(line: str, *, strict: bool = False) -> Action:
    """Parse one line of the notation.

    An unknown verb (or a known verb with arguments of the wrong shape) gives an opaque
    action that keeps the raw line, unless `strict` is set, which raises `NotationError`.
    A line that is not `Agent.Verb(...)` at all, or holds a line break (any `str.splitlines`
    breaks at) inside it, always raises `NotationError`.
    """
    return _parse_cached(line, strict)


@lru_cache(maxsize=1 << 16)
def _parse_cached(line: str, strict: bool) -> Action:  # actions are frozen, so sharing is safe
    text = line.strip()
    if _LINE_BREAK.search(text):
        raise NotationError(f"{text!r} spans several lines: an action is one line")
    m = _LINE.match(text)
    if not m:
        raise NotationError(f"not an action in Agent.Verb(args) form: {text!r}")
    agent, verb, args = m["agent"], m["verb"], m["args"]
    try:
        return _typed(agent, verb, args)
    except NotationError:
        if strict:
            raise
        return Action(agent=agent, verb=verb, raw=text)


@lru_cache(maxsize=1 << 16)
def written(line: str) -> str:
    """A line as the notation writes it (`str(parse_action(line))`), worked out once per line:
    every pass of every episode writes its plan's lines."""
    return format_action(parse_action(line))


def _typed(agent: str, verb: str, args: str) -> Action:
    if agent not in AGENTS:
        raise NotationError(f"unknown agent {agent!r}; expected Driver or Commander")
    if verb not in VERBS:
        raise NotationError(f"unknown verb {verb!r}")
    tokens = _split_args(args)
    if verb == SAY:
        said = _unquote(tokens[0]) if len(tokens) == 1 else None
        if said is None:
            raise NotationError(f"{verb} takes one quoted text")
        return Action(agent=agent, verb=verb, text=said)
    if agent != "Driver":
        raise NotationError(f"only the Driver acts; {agent} can only Say")
    if verb in MOTION_VERBS:
        if len(tokens) != 1 or not _NUMBER.match(tokens[0]):
            raise NotationError(f"{verb} takes one number")
        return Action(agent=agent, verb=verb, amount=tokens[0])
    want = 2 if verb in TWO_OBJECT_VERBS else 1
    names = [_unquote(t) for t in tokens]
    if len(names) != want or not all(n is not None and _OBJECT.match(n) for n in names):
        raise NotationError(f"{verb} takes {want} quoted object name(s) like 'Mug' or 'Mug2'")
    return Action(agent=agent, verb=verb, objects=tuple(n for n in names if n is not None))


def dialogue_lines(actions: Iterable[Action]) -> list[str]:
    """The utterances among these steps as "Agent: text" lines, the form goal readers take.

    >>> dialogue_lines([parse_action("Commander.Say('water the plant')"), parse_action("Driver.Move(1.0)")])
    ['Commander: water the plant']
    """
    return [f"{a.agent}: {a.text}" for a in actions if a.is_dialogue]


def diagnose(action: Action) -> str | None:
    """Why an opaque action is not in the notation, or None for a known action."""
    if action.known:
        return None
    m = _LINE.match(action.raw or "")
    assert m is not None
    try:
        _typed(m["agent"], m["verb"], m["args"])
    except NotationError as exc:
        return str(exc)
    return None  # pragma: no cover - an opaque action always fails _typed
