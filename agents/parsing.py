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

How the answer is read, line by line (after `<think>` blocks are removed):

- a block starts at an `ACTION` line, or at a numbered line (`3.`, `3)`, `Step 3:`, `[3]`)
  holding an action; a bare action line starts one too, except right after an annotation;
- the block's text is the rest of its first line, its lines up to the `ANNOTATION` line, and
  that annotation with the lines that follow it directly; a blank line, a code fence, a
  heading or a `#MISSING` line ends it;
- a second `ANNOTATION` with no `ACTION` in between, and any prose outside a block, belongs to
  no step: a `#REMOVE` found there is dropped, never given to a neighbouring step.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import NamedTuple

from planverify.records.critique import Critique, Dropped, Flag, Missing
from planverify.records.evidence import WEAKEST, Evidence
from planverify.records.notation import SAY, VERBS, Action, NotationError, parse_action
from planverify.records.trim import OptionalNote

_THINK = re.compile(r"<(think|thinking|reasoning)>.*?(?:</\1\s*>|\Z)", re.S | re.I)
_THINK_END = re.compile(r"</(?:think|thinking|reasoning)\s*>", re.I)

_VERB_ALT = "|".join(sorted(VERBS - {SAY}))  # verbs a call may be written with no agent
_STRING = r"'(?:\\.|[^'\\])*'|\"(?:\\.|[^\"\\])*\""
_CALL = re.compile(
    rf"(?:\b(?i:Driver|Commander)\s*\.\s*[A-Za-z_]\w*|(?<![.\w])(?:{_VERB_ALT}))"
    rf"\s*\((?:[^()'\"]|{_STRING})*\)"
)
_CALL_START = re.compile(rf"[A-Za-z_]\w*\s*\.\s*[A-Za-z_]\w*\s*\(|(?:{_VERB_ALT})\s*\(")
_AGENTLESS = re.compile(rf"(?:{_VERB_ALT})\s*\(")
_CALL_SPACING = re.compile(r"^([A-Za-z_]\w*)\s*\.\s*([A-Za-z_]\w*)\s*\(")
_AGENT_CASE = re.compile(r"^(driver|commander)\b", re.I)

_NUMBER = re.compile(r"(?:step\s*#?\s*|#\s*)?[\[(]?\s*(\d{1,9})(?!\d)\s*[\])]?\s*[.:)\-]?\s*", re.I)
_ACTION_WORD = re.compile(r"action\s*(?=[:.\-#\[(\d]|$)[:.\-]?\s*", re.I)
_ANNOTATION_WORD = re.compile(r"annotation\b\s*[:.\-]?\s*", re.I)
_REMOVE = re.compile(r"#\s*REMOVE\b\s*[:\-\u2013\u2014]?\s*", re.I)
_MISSING = re.compile(r"#\s*MISSING\b\s*[:\-\u2013\u2014]?\s*", re.I)
_ANY_TAG = re.compile(r"#\s*(?:REMOVE|MISSING)\b", re.I)
_NEGATED = re.compile(
    r"\b(?:no|not|without|never|don'?t|nor)(?:\s+(?:need|needs|to|use|add|any|a))*\W*$", re.I
)

_MARKUP = re.compile(r"\*+|__|`+")
_LEADER = re.compile(r"^(?:[-+\u2022]\s+|>\s*|#{1,6}\s+(?!(?:remove|missing)\b))+", re.I)
_LEADER_FIRST = frozenset("-+\u2022>#")  # the characters a `_LEADER` match can start with
_HEADING = re.compile(r"#{1,6}\s+(?!(?:remove|missing)\b)", re.I)
_QUOTES = str.maketrans({"\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"'})
_CLOSERS = {"'": "'", '"': '"', "(": ")", "[": "]"}

_NO_REASON = re.compile(r"^(?:none|nothing|n/?a|null)\b|^(?:no|-)?$", re.I)
_NOTHING_MISSING = re.compile(
    r"^(?:none|nothing|n/?a|null|no\s+(?:missing|further|additional|other|more)\b|no\s+steps?\b)",
    re.I,
)
_PLACEHOLDER = "echoed template placeholder, not content"


@dataclass
class _Block:
    number: int | None  # step number the Judge wrote, if any
    action: str | None  # action text the Judge copied (canonical when readable), if any
    text: list[str] = field(default_factory=list)  # the rest of the block
    noted: bool = False  # an ANNOTATION line has been read
    why: str | None = None  # set when the block can never name a step


def strip_reasoning(text: str) -> str:
    """Drop `<think>` blocks of reasoning models (an unclosed one runs to the end).

    A closing tag with no opening one (the template opened it) ends the reasoning too.
    """
    return _THINK_END.split(_THINK.sub("", text))[-1]


def _parse(line: str) -> Action | None:
    text = line.strip().translate(_QUOTES).strip("`").strip()
    if _AGENTLESS.match(text):
        text = "Driver." + text
    text = _CALL_SPACING.sub(r"\1.\2(", _AGENT_CASE.sub(lambda m: m[1].capitalize(), text))
    try:
        return parse_action(text)
    except NotationError:
        return None


@lru_cache(maxsize=1 << 16)  # plans repeat their lines, and each pass re-reads the plan
def canonical(line: str) -> str | None:
    """The canonical text of an action, or None when the text is not an action.

    Quoting, spacing and a missing `Driver.` on an action verb do not matter:
    >>> canonical('PickUp ( "Mug" )'), canonical("Driver.PutAOnB('Mug','Sink')")
    ("Driver.PickUp('Mug')", "Driver.PutAOnB('Mug', 'Sink')")
    """
    action = _parse(line)
    return None if action is None else str(action)


@lru_cache(maxsize=1 << 16)
def _key(line: str) -> str:
    """What two copies of one step share: the canonical text, with motion amounts as numbers
    (a line outside the notation, such as another domain's, as written, with the angle quotes
    `as_data` put in its prompt read back as `<` and `>`)."""
    action = _parse(line)
    if action is None:
        return line.strip().replace("\u2039", "<").replace("\u203a", ">")
    if action.known and action.amount is not None:
        return f"{action.agent}.{action.verb}({float(action.amount)!r})"
    return str(action)


def find_action(text: str) -> str | None:
    """The first action call written in a piece of text, canonicalised."""
    m = _CALL.search(text.translate(_QUOTES))
    return canonical(m.group(0)) if m else None


class StepResolver:
    """Ties a (number, action text) reference from a Judge to one step, or says why not.

    The action text wins over a number that disagrees with it, but only when it names one
    step: the first occurrence after the previous reference, or its only occurrence.
    """

    def __init__(self, plan: Sequence[str]) -> None:
        lines, keys = _plan_keys(tuple(plan))
        self.plan = list(lines)
        self._keys = keys
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
        key = _key(action)
        if number is not None and 1 <= number <= n and self._keys[number - 1] == key:
            self.cursor = number - 1
            return number - 1
        candidates = [i for i, k in enumerate(self._keys) if k == key]
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


@lru_cache(maxsize=256)  # one plan is resolved several times a pass, and again next pass
def _plan_keys(plan: tuple[str, ...]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """A plan's steps as `StepResolver` shows them (canonical) and compares them (`_key`)."""
    return tuple(canonical(line) or line for line in plan), tuple(_key(line) for line in plan)


def _clean_line(line: str) -> str:
    if not line.isascii():  # the quotes `_QUOTES` replaces are not ASCII
        line = line.translate(_QUOTES)
    if "*" in line or "__" in line or "`" in line:  # the only text `_MARKUP` matches
        line = _MARKUP.sub("", line)
    line = line.strip()
    if line[:1] in _LEADER_FIRST:  # `_LEADER` matches only from one of these
        line = _LEADER.sub("", line)
    return line.strip()


def _tag_body(before: str, after: str) -> str:
    """The text a tag carries: to the next tag or line end, or the closing quote if quoted."""
    body, _, more = after.partition("\n")
    if not body.strip():  # `#REMOVE:` ending a line: the reason is on the next one
        body = more.partition("\n")[0]
    if tag := _ANY_TAG.search(body):
        body = body[: tag.start()]
    opener = before.rstrip()[-1:]
    if opener in _CLOSERS and _CLOSERS[opener] in body:
        body = body[: body.rindex(_CLOSERS[opener])]
    return body.strip().strip("'\"").strip()


def _negated(before: str) -> bool:
    """Whether a tag is denied by the words just before it (`no #REMOVE`, `not need #MISSING`)."""
    return _NEGATED.search(before[-48:]) is not None


def _split_missing(line: str) -> tuple[str, list[str]]:
    """The line without its #MISSING tags, and the (non-negated) texts they carry."""
    tags = list(_MISSING.finditer(line)) if "#" in line else []
    texts = []
    for k, tag in enumerate(tags):
        end = tags[k + 1].start() if k + 1 < len(tags) else len(line)
        before = line[max(0, tag.start() - 48) : tag.start()]
        if not _negated(before):
            texts.append(_tag_body(before, line[tag.end() : end]))
    rest = line[: tags[0].start()] if tags else line
    return rest.rstrip(" '\"([").strip(), texts


Head = tuple[int | None, str | None, str]  # a block's first line: number, action, the rest


def _head(line: str) -> tuple[Head, bool] | None:
    """(number, action, rest) when the line can start a block, else None; and whether it starts
    one right after an annotation too (an ACTION word or a number; a bare action does not)."""
    number: int | None = None
    rest = line
    if m := _NUMBER.match(rest):
        number, rest = int(m[1]), rest[m.end() :]
    keyword = _ACTION_WORD.match(rest)
    if keyword:
        rest = rest[keyword.end() :]
        if number is None and (m := _NUMBER.match(rest)):
            number, rest = int(m[1]), rest[m.end() :]
    rest = rest.lstrip("'\"")
    call = _CALL.match(rest)
    action: str | None = None
    if call:
        action = canonical(call.group(0)) or call.group(0)
        tail = rest[call.end() :]
    else:
        if _CALL_START.match(rest):  # a copy we cannot read still disagrees with the number
            action = _ANY_TAG.split(rest)[0].strip()
        tail = rest
    always = keyword is not None or (number is not None and (action is not None or not rest))
    return ((number, action, tail), always) if always or action is not None else None


class _Line(NamedTuple):
    """What `_blocks` reads of one line of an answer, whatever comes before it."""

    stripped: str  # the line without surrounding whitespace
    cleaned: str  # without markup and list leaders (`_clean_line`)
    rest: str  # `cleaned` without its #MISSING tags
    found: tuple[str, ...]  # the texts those tags carry (negated ones left out)
    note: str | None  # the annotation, when `rest` starts with the ANNOTATION word
    head: Head | None  # what `rest` says when it can start a block (`_head`)
    always: bool  # whether it starts one right after an annotation too


@lru_cache(maxsize=1 << 16)  # answers repeat lines: every pass's, and a Judge's stock notes
def _read_line(raw: str) -> _Line | None:
    """A line of an answer as `_Line`; None for a blank line or a code fence."""
    stripped = raw.strip()
    cleaned = _clean_line(stripped)
    if not cleaned or stripped.startswith(("```", "~~~")):
        return None
    rest, found = _split_missing(cleaned)
    m = _ANNOTATION_WORD.match(rest)
    head, always = _head(rest) or (None, False)
    note = rest[m.end() :] if m else None
    return _Line(stripped, cleaned, rest, tuple(found), note, head, always)


def _tagged(line: str) -> bool:
    """Whether a line holds a #MISSING tag or starts with an ACTION or ANNOTATION word."""
    return bool(_MISSING.search(line) or _ACTION_WORD.match(line) or _ANNOTATION_WORD.match(line))


def _blocks(text: str) -> tuple[list[_Block], list[str]]:
    """Split an answer into per-step blocks and collect its #MISSING texts."""
    blocks: list[_Block] = []
    missing: list[str] = []
    current: _Block | None = None  # the block that still takes lines
    wants_missing = False  # the last line was a bare `#MISSING:`
    for raw in text.splitlines():
        read = _read_line(raw)
        if read is None:
            if current is not None and current.noted:
                current = None
            continue
        if wants_missing and not _tagged(read.cleaned):
            wants_missing = False
            missing.append(read.cleaned)
            continue
        line, found = read.rest, read.found
        if found:
            missing.extend(t for t in found if t)
            wants_missing = not found[-1]
            if not line:
                current = None
                continue
        after_note = current is not None and current.noted
        if read.head is not None and (read.always or not after_note):
            number, action, rest = read.head
            if (
                current is not None
                and not current.noted
                and current.action is None
                and not "".join(current.text)
                and number is None
            ):  # `Step 3` on a line of its own, then the copied action
                current.action = action
                current.text.append(rest)
            else:
                current = _Block(number, action, [rest])
                blocks.append(current)
            continue
        if read.note is not None:
            if current is not None and not current.noted:
                current.text.append(read.note)
                current.noted = True
            else:
                current = _Block(None, None, [read.note], noted=True)
                current.why = "annotation with no ACTION line of its own"
                blocks.append(current)
            continue
        if after_note and _CALL_START.match(line):
            current = _Block(None, None, [line], noted=True)
            current.why = "an action line inside an annotation: unclear which step it is about"
            blocks.append(current)
            continue
        if _HEADING.match(read.stripped) or (line.endswith(":") and len(line.split()) <= 4):
            current = None
        if current is not None:
            current.text.append(line)
        elif _REMOVE.search(line):
            current = _Block(None, None, [line], noted=True, why="outside any step's block")
            blocks.append(current)
    return blocks, missing


def _removal(annotation: str) -> tuple[str, str | None] | None:
    """The first live `#REMOVE` as (reason, None), or (text, why) when it cannot be applied.

    Negated tags (`no #REMOVE`) and explicit non-answers (`#REMOVE: none`) are not removals.
    """
    fallback: tuple[str, str | None] | None = None
    tags = list(_REMOVE.finditer(annotation)) if "#" in annotation else []
    for k, tag in enumerate(tags):
        end = tags[k + 1].start() if k + 1 < len(tags) else len(annotation)
        before = annotation[max(0, tag.start() - 48) : tag.start()]
        if _negated(before):
            continue
        reason = _tag_body(before, annotation[tag.end() : end])
        if reason.startswith("<"):
            fallback = fallback or (reason, _PLACEHOLDER)
        elif not reason:
            fallback = fallback or (reason, "#REMOVE gives no reason")
        elif not _NO_REASON.match(reason.rstrip(".!")):
            return reason, None
    return fallback


def _is_dialogue(line: str) -> bool:
    action = _parse(line)
    return action is not None and action.verb == SAY


def add_flag(
    critique: Critique,
    plan: Sequence[str],
    index: int | str,
    reason: str,
    text: str,
    *,
    evidence: Evidence = WEAKEST,
    optional: OptionalNote | None = None,
) -> None:
    """Record a flag on a resolved step, or a dropped entry with why it cannot apply."""
    if isinstance(index, str):
        critique.dropped.append(Dropped(text=text, why=index))
    elif not 0 <= index < len(plan):
        why = f"step number {index + 1} is outside the plan (1-{len(plan)})"
        critique.dropped.append(Dropped(text=text, why=why))
    elif _is_dialogue(plan[index]):
        why = f"step {index + 1} is dialogue, which is never removed"
        critique.dropped.append(Dropped(text=text, why=why))
    elif any(f.step == index for f in critique.flags):
        critique.dropped.append(Dropped(text=text, why=f"step {index + 1} is already flagged"))
    else:
        critique.flags.append(
            Flag(
                step=index, action=plan[index], reason=reason, evidence=evidence, optional=optional
            )
        )


MissingReader = Callable[[str, Sequence[str]], "tuple[str, int | None] | None"]
# how a domain reads a #MISSING text against the plan: (its step, the 0-based plan step it goes
# after, None when unknown), or None when the text names no step in the domain's notation
_MISSING_READERS: dict[str, MissingReader] = {}  # instructions template -> its domain's reader


def register_missing_reader(template: str, reader: MissingReader) -> None:
    """Read the #MISSING lines of a model Judge given another domain's instructions (`template`)
    with that domain's reader (the registry does this when it loads the domain), so its steps
    are never read as TEACh's."""
    _MISSING_READERS[template] = reader


def missing_reader(template: str) -> MissingReader | None:
    """The reader registered for a Judge instructions template (None: TEACh's notation)."""
    return _MISSING_READERS.get(template)


def add_missing(
    critique: Critique,
    description: str,
    plan: Sequence[str] = (),
    reader: MissingReader | None = None,
) -> None:
    """Record a #MISSING entry, with the concrete action it names when it names a valid one
    (with `reader`: a step in another domain's notation, and where in `plan` it goes)."""
    if reader is not None:
        _add_domain_missing(critique, description, plan, reader)
        return
    description = description.strip().strip("'\"").strip()
    if description.startswith("<"):
        critique.dropped.append(Dropped(text=description, why=_PLACEHOLDER))
        return
    action = find_action(description)
    if not description or (action is None and _NOTHING_MISSING.match(description)):
        return
    if action is not None:
        parsed = _parse(action)
        if parsed is None or not parsed.known or parsed.agent != "Driver" or parsed.is_dialogue:
            why = "missing step is not a Driver action in the notation"
            critique.dropped.append(Dropped(text=description, why=why))
            action = None
    if all(m.description != description for m in critique.missing):
        critique.missing.append(Missing(description=description, action=action))


def _add_domain_missing(
    critique: Critique, description: str, plan: Sequence[str], reader: MissingReader
) -> None:
    description = description.strip().strip("'\"").strip()
    if not description or _NOTHING_MISSING.match(description):
        return
    read = reader(description, plan)
    if read is None:
        why = "missing step is not a step in the domain's notation"
        critique.dropped.append(Dropped(text=description, why=why))
    action, after = read if read is not None else (None, None)
    if all(m.description != description for m in critique.missing):
        critique.missing.append(Missing(description=description, action=action, after=after))


def parse_judge_text(text: str, plan: Sequence[str]) -> Critique:
    """Parse the text protocol (`ACTION:`/`ANNOTATION:` with `#REMOVE`, then `#MISSING`)."""
    return read_judge_text(text, plan)[0]


def read_judge_text(
    text: str, plan: Sequence[str], reader: MissingReader | None = None
) -> tuple[Critique, list[int]]:
    """`parse_judge_text`, and the 0-based steps the answer judged (blocks tied to one step),
    in the order it wrote them (`reader`: another domain's reader of #MISSING texts)."""
    critique = Critique()
    covered: list[int] = []
    blocks, missing = _blocks(strip_reasoning(text))
    resolver = StepResolver(plan)
    for block in blocks:
        index = block.why or resolver.resolve(block.number, block.action)
        if isinstance(index, int) and "".join(block.text).strip():  # a verdict, not a bare copy
            covered.append(index)
        removal = _removal("\n".join(block.text))
        if removal is None:
            continue
        reason, why = removal
        number = "?" if block.number is None else str(block.number)
        shown = f"{number}. {block.action or ''} #REMOVE: {reason}"
        if why is not None:
            critique.dropped.append(Dropped(text=shown, why=why))
        else:
            add_flag(critique, plan, index, reason, shown)
    for description in missing:
        add_missing(critique, description, plan, reader)
    critique.flags.sort(key=lambda f: f.step)
    return critique, covered
