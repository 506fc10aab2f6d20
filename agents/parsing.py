"""Turn a Judge's free-text answer into a `Critique`, defensively.

Model output is untrusted: a flag is applied only when it can be tied to one real step of the
plan the Judge was shown; everything else is dropped with the reason recorded.

>>> plan = ["Driver.Move(1.0)", "Driver.Move(-1.0)", "Driver.PickUp('Mug')"]
>>> answer = '''
... ACTION: 1. Driver.Move(1.0)
... ANNOTATION: undone by the next step. #REMOVE: cancels with step 2
... ACTION: 3. Driver.PickUp('Mug')
... ANNOTATION: needed.
... #MISSING: Driver.ToggleOn('CoffeeMachine') to brew
... '''
>>> c = parse_judge_text(answer, plan)
>>> [(f.step, f.reason) for f in c.flags]
[(0, 'cancels with step 2')]
>>> c.missing[0].action
"Driver.ToggleOn('CoffeeMachine')"
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from planverify.critique import Critique, Dropped, Flag, Missing
from planverify.notation import NotationError, parse_action

_THINK = re.compile(r"<think(?:ing)?>.*?(?:</think(?:ing)?>|\Z)", re.S | re.I)
_ACTION_CALL = re.compile(
    r"\b(?:Driver|Commander)\s*\.\s*[A-Za-z_]\w*\s*\((?:[^()'\"]|'(?:\\.|[^'\\])*'|\"(?:\\.|[^\"\\])*\")*\)"
)
_BLOCK_START = re.compile(
    r"^(?:step\s*)?(?P<pre>\d+)?\s*[.):]?\s*action\s*(?P<num>\d+)?\s*[:.\-]\s*(?P<rest>.*)$", re.I
)
_NUMBERED = re.compile(r"^(?:step\s*)?(?P<num>\d+)\s*[.):\-]\s*(?P<rest>.*)$", re.I)
_LEAD_NUMBER = re.compile(r"^\s*(?:step\s*)?\[?(?P<num>\d+)\]?\s*[.):\-]?\s+")
_REMOVE = re.compile(r"#\s*REMOVE\b\s*[:\-]?\s*(?P<reason>.*)", re.I | re.S)
_MISSING = re.compile(r"#\s*MISSING\b\s*[:\-]?\s*(?P<text>.*)", re.I)
_MARKUP = re.compile(r"(\*\*|__|`+)")
_EMPTY_REASONS = {"", "none", "n/a", "na", "no", "nothing", "-", "null"}


@dataclass
class _Block:
    number: int | None  # step number the Judge wrote, if any
    action: str | None  # action text the Judge copied, if any
    text: list[str] = field(default_factory=list)  # the rest of the block


def strip_reasoning(text: str) -> str:
    """Drop `<think>` blocks of reasoning models (an unclosed one runs to the end)."""
    text = _THINK.sub("", text)
    if "</think>" in text:
        text = text.rsplit("</think>", 1)[1]
    return text


def _clean_line(line: str) -> str:
    line = _MARKUP.sub("", line).strip()
    line = re.sub(r"^(?:[-*+>]\s+|#{1,6}\s+)", "", line)
    return line.strip()


def canonical(line: str) -> str | None:
    """The canonical text of an action, or None when the text is not an action."""
    try:
        return str(parse_action(line))
    except NotationError:
        return None


def find_action(text: str) -> str | None:
    """The first action call written in a piece of text, canonicalised."""
    m = _ACTION_CALL.search(text)
    return canonical(m.group(0)) if m else None


class StepResolver:
    """Ties a (number, action text) reference from a Judge to one step, or says why not."""

    def __init__(self, plan: Sequence[str]) -> None:
        self.plan = [canonical(line) or line for line in plan]
        self.cursor = -1

    def resolve(self, number: int | None, action: str | None) -> int | str:
        """A 0-based step index, or the reason the reference cannot be tied to a step."""
        n = len(self.plan)
        if action is None:
            if number is None:
                return "names no step (no action text and no number)"
            if not 1 <= number <= n:
                return f"step number {number} is outside the plan (1-{n})"
            self.cursor = number - 1
            return number - 1
        if number is not None and 1 <= number <= n and self.plan[number - 1] == action:
            self.cursor = number - 1
            return number - 1
        candidates = [i for i, line in enumerate(self.plan) if line == action]
        if not candidates:
            return "the action is not a step of the plan"
        later = [i for i in candidates if i > self.cursor]
        if later:
            index = later[0]
        elif len(candidates) == 1:
            index = candidates[0]
        else:
            return "the action occurs several times and the reference is ambiguous"
        self.cursor = index
        return index


def _blocks(text: str) -> tuple[list[_Block], list[str]]:
    """Split an answer into per-step blocks and collect its #MISSING texts."""
    blocks: list[_Block] = []
    missing: list[str] = []
    lines = [_clean_line(raw) for raw in text.splitlines()]
    for k, line in enumerate(lines):
        if not line:
            continue
        if m := _MISSING.search(line):
            body = m["text"].strip()
            if not body and k + 1 < len(lines):
                body = lines[k + 1]
            missing.append(body)
            line = line[: m.start()].strip()
            if not line:
                continue
        start = _BLOCK_START.match(line)
        if start and not line.lower().startswith("annotation"):
            rest = start["rest"]
            num = start["num"] or start["pre"]
            lead = _LEAD_NUMBER.match(rest)
            if lead:
                num = num or lead["num"]
                rest = rest[lead.end() :]
            action_text = _ACTION_CALL.match(rest.strip())
            blocks.append(
                _Block(
                    number=int(num) if num else None,
                    action=canonical(action_text.group(0)) if action_text else None,
                    text=[rest[action_text.end() :] if action_text else rest],
                )
            )
            continue
        numbered = _NUMBERED.match(line)
        if numbered and _ACTION_CALL.match(numbered["rest"].strip()):
            rest = numbered["rest"].strip()
            call = _ACTION_CALL.match(rest)
            assert call is not None
            blocks.append(
                _Block(int(numbered["num"]), canonical(call.group(0)), [rest[call.end() :]])
            )
            continue
        if blocks:
            blocks[-1].text.append(re.sub(r"^annotation\s*[:\-]\s*", "", line, flags=re.I))
        elif _REMOVE.search(line):
            blocks.append(_Block(None, None, [line]))
    return blocks, missing


def _reason(annotation: str) -> str | None:
    m = _REMOVE.search(annotation)
    if not m:
        return None
    reason = m["reason"].strip().strip("'\"").strip()
    reason = re.split(r"\s*#\s*MISSING\b", reason, flags=re.I)[0].strip()
    if reason.lower().rstrip(".") in _EMPTY_REASONS:
        return None
    return reason


def add_flag(
    critique: Critique, plan: Sequence[str], index: int | str, reason: str, text: str
) -> None:
    """Record a flag on a resolved step, or a dropped entry with why it cannot apply."""
    if isinstance(index, str):
        critique.dropped.append(Dropped(text=text, why=index))
        return
    step = plan[index]
    if parse_action(step).is_dialogue:
        critique.dropped.append(
            Dropped(text=text, why=f"step {index + 1} is dialogue, which is never removed")
        )
    elif any(f.step == index for f in critique.flags):
        critique.dropped.append(Dropped(text=text, why=f"step {index + 1} is already flagged"))
    else:
        critique.flags.append(Flag(step=index, action=step, reason=reason))


def add_missing(critique: Critique, description: str) -> None:
    """Record a #MISSING entry, with the concrete action it names when it names a valid one."""
    description = description.strip().strip("'\"").strip()
    if description.lower().rstrip(".") in _EMPTY_REASONS or description.lower().startswith(
        ("none", "nothing is missing", "no missing")
    ):
        return
    if description.startswith("<") and description.endswith(">"):
        critique.dropped.append(Dropped(text=description, why="template placeholder, not content"))
        return
    action = find_action(description)
    if action is not None:
        parsed = parse_action(action)
        if not parsed.known or parsed.agent != "Driver" or parsed.is_dialogue:
            critique.dropped.append(
                Dropped(text=description, why="missing step is not a Driver action in the notation")
            )
            action = None
    if any(m.description == description for m in critique.missing):
        return
    critique.missing.append(Missing(description=description, action=action))


def parse_judge_text(text: str, plan: Sequence[str]) -> Critique:
    """Parse the text protocol (`ACTION:`/`ANNOTATION:` with `#REMOVE`, then `#MISSING`)."""
    critique = Critique()
    blocks, missing = _blocks(strip_reasoning(text))
    resolver = StepResolver(plan)
    for block in blocks:
        annotation = " ".join(t for t in block.text if t)
        reason = _reason(annotation)
        if reason is None and block.number is None and block.action is None:
            continue
        index = resolver.resolve(block.number, block.action)
        if reason is not None:
            shown = f"{block.number or '?'}. {block.action or ''} #REMOVE: {reason}".strip()
            add_flag(critique, resolver.plan, index, reason, shown)
    for description in missing:
        add_missing(critique, description)
    critique.flags.sort(key=lambda f: f.step)
    return critique
