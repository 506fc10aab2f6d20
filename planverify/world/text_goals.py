"""Goal specs read from words: a task description, or what the Commander says.

When an episode has no TEACh task definition (a model-written plan, another data set), the goal
is read from text. `read_goal` maps the goal, or when the goal says nothing (a greeting such as
"hi"), the Commander's lines onto one of TEACh's task families and its parameters, and builds the
same `GoalSpec` that `parse_teach_task` gives for the real task definition (the same components,
counts, states and relations; component names may differ).

>>> reading = read_goal("put all the remotes on one coffee table", [])
>>> reading.spec.task, [c.describe() for c in reading.spec.components]
('Put All X In One Y', ['every RemoteControl', 'a CoffeeTable'])
>>> [r.describe() for r in reading.spec.relations]
['all RemoteControl on one CoffeeTable']
>>> reading = read_goal("hi", ["Commander: today we need to make a salad",
...     "Driver: what should I do first?", "Commander: slice a tomato, we need 2 slices",
...     "Commander: then the potato needs to be cooked, one slice", "Commander: no lettuce"])
>>> sorted((c.select, c.count) for c in reading.spec.components if c.select.endswith("Sliced"))
[('PotatoSliced', 1), ('TomatoSliced', 2)]
>>> reading = read_goal("hello, what is my task?", ["Commander: bring me the teddy bear"])
>>> reading.goal_read, reading.focus, reading.note
(False, ['TeddyBear'], 'no goal condition read: the words name no TEACh task')

Text is untrusted: it only ever selects among the families and object names below, through
bounded regular expressions over a normalised copy of at most `MAX_CHARS` characters.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field

from planverify.world.classes import CLASSES_OF_TYPE, TYPES, types_of
from planverify.world.goal_families import FAMILIES, count_of, spec_of
from planverify.world.goals import GoalSpec
from planverify.world.near_types import fit_to_plan
from planverify.world.spelling import Speller
from planverify.world.vocabulary import phrases, singular, words_of

__all__ = ["MAX_CHARS", "NO_GOAL", "Reading", "commander_words", "read_goal"]

MAX_CHARS = 20_000
"""Only this much of a goal, and of the Commander's words, is read."""


NO_GOAL = "no goal condition read"
"""How the note of a reading without a spec begins (`Reading.goal_read` is False)."""


@dataclass
class Reading:
    """What `read_goal` read: a spec, or the object types named and why no spec was made."""

    spec: GoalSpec | None  # the goal spec read (source "text"); None when none can be made
    focus: list[str]  # TEACh object types the text names, in order of first mention
    request: str  # the text the spec was read from (the goal, or the Commander's words)
    note: str | None = None  # when spec is None: `NO_GOAL`, a colon and why, on one line

    @property
    def goal_read(self) -> bool:
        """Whether any goal condition was read. When not, the objects named (`focus`) are all
        that is known: a Judge can remove only what is useless whatever the goal."""
        return self.spec is not None


# ----------------------------------------------------------------------------- words

_NUMBERS = {
    "one": "1",
    "two": "2",
    "three": "3",
    "four": "4",
    "five": "5",
    "six": "6",
    "seven": "7",
    "eight": "8",
    "nine": "9",
    "ten": "10",
    "single": "1",
    "both": "2",
    "second": "2",
    "third": "3",
}
_PHRASE_NUMBERS = re.compile(r"\b(?:a\s+)?(?:couple|pair)(?:\s+of)?\b", re.I)
_NOT = re.compile(r"n't\b|\b(?:dont|wont|doesnt|didnt)\b", re.I)
_WORD = re.compile(r"[A-Za-z]+|\d+|,")
_SENTENCE = re.compile(r"[.!?;:\n]+")
_NAMES = frozenset(n for names in phrases().values() for n in names)

# Words that name an object only in some uses; read as objects only inside longer phrases.
_NOT_OBJECTS = frozenset(
    {"can", "light", "safe", "key", "card", "cell", "tap", "ball", "bat", "mobile", "seat"}
)

# Which name a phrase standing for several stands for in a goal (TEACh's tasks use classes for
# "chairs" and "tables"; "dishes" are its Dishware).
_PREFER: dict[str, str] = {
    "chair": "Chairs",
    "table": "Tables",
    "dish": "Dishware",
    "knife": "Knife",
    "glass": "Cup",
}

_LONGEST = 4  # words in the longest object phrase tried
_LONGEST_SENTENCE = 80  # words; a longer run without a full stop is read in parts


@dataclass
class _Text:
    """A text normalised for reading: sentences of lower-case words, digits for numbers, and
    `@Name` for each object phrase (the TEACh type or class it stands for)."""

    sentences: list[str] = field(default_factory=list)
    focus: list[str] = field(default_factory=list)
    spoken: bool = False  # the Commander's words, not a written goal

    @property
    def whole(self) -> str:
        return " . ".join(self.sentences)


def _pick(phrase: str, names: frozenset[str], scene: Collection[str] | None) -> str:
    """One name for an object phrase: the scene's only type among them, a preferred name, the
    type named word for word, or the class that covers the others."""
    if len(names) == 1:
        return next(iter(names))
    if scene is not None:
        present = sorted(n for n in names if n in TYPES and n in scene)
        if len(present) == 1:
            return present[0]
    if phrase in _PREFER:
        return _PREFER[phrase]
    for name in sorted(names):
        if name in TYPES and " ".join(words_of(name)) == phrase:
            return name
    for name in sorted(names):
        covered = types_of(name)
        if all(types_of(other) <= covered for other in names):
            return name
    return sorted(names)[0]


def _exact(token: str) -> str | None:
    """A word written as a TEACh name ("RemoteControl", "Chairs", "Plates"), or None."""
    if not token[:1].isupper():
        return None
    for form in (token, token[:-1] if token.endswith("s") else "", singular(token)):
        if form in _NAMES:
            return form
    return None


_TASK_TEXT = """
    bake boil boiled boiling breakfast chop chopped clean cleaned cleaning coffee cook cooked
    cooking cut fried fry grill grilled heat heated microwave microwaved piece pieces place placed
    pour poured put rinse rinsed roast roasted salad sandwich scrub serve served slice sliced
    slices slicing toast toasted wash washed washing water watered watering"""
_TASK_WORDS = _TASK_TEXT.split()
"""Words of the task patterns below that typos are mended towards (with the object names)."""


def _speller() -> Speller:
    """A speller for the words worth reading: object names and the task words."""
    return Speller([w for p in phrases() for w in p.split()] + _TASK_WORDS, singular)


def _mended(words: list[str]) -> list[str]:
    """The words of a sentence with typos mended (words written as TEACh names kept)."""
    out: list[str] = []
    run: list[str] = []
    for word in [*words, ""]:
        if word and _exact(word) is None:
            run.append(word.lower())
            continue
        out += _SPELLER.fix(run) + ([word] if word else [])
        run = []
    return out


def _normalise(text: str, scene: Collection[str] | None, *, spoken: bool = False) -> _Text:
    table = phrases()
    text = text[:MAX_CHARS].replace("\u2019", "'").replace("(s)", "s")
    text = _PHRASE_NUMBERS.sub(" two ", text)
    out = _Text(spoken=spoken)
    for raw in _SENTENCE.split(_NOT.sub(" not", text)):
        words = _mended(_WORD.findall(raw))
        lower = [w.lower() for w in words]
        tokens: list[str] = []
        i = 0
        while i < len(words):
            found: tuple[int, str] | None = None
            exact = _exact(words[i])
            if exact is not None:
                found = (1, exact)
            for n in range(min(_LONGEST, len(words) - i), 0, -1):
                if found is not None:
                    break
                chunk = [singular(w) for w in lower[i : i + n]]
                if n == 1 and lower[i] in _NOT_OBJECTS:  # "keys" are a key chain
                    continue
                for phrase in (" ".join(chunk), "".join(chunk)):
                    names = table.get(phrase)
                    if names:
                        found = (n, _pick(phrase, names, scene))
                        break
            if found is None:
                tokens.append(_NUMBERS.get(lower[i], lower[i]))
                i += 1
                continue
            size, name = found
            tokens.append("@" + name)
            for kind in sorted(types_of(name)) or [name]:
                if kind not in out.focus:
                    out.focus.append(kind)
            i += size
        for start in range(0, len(tokens), _LONGEST_SENTENCE):
            out.sentences.append(" ".join(tokens[start : start + _LONGEST_SENTENCE]))
    return out


# ----------------------------------------------------------------------------- reading

_FOODS = ("Lettuce", "Tomato", "Potato", "Apple", "Bread", "Egg")
_SALAD = ("Lettuce", "Tomato", "Potato")
_SINKS = frozenset({"Sink", "SinkBasin", "Faucet", "DishSponge", "SoapBottle", "SoapBar"})
_DISHES = frozenset({"Plate", "Bowl"})
_SPOTS = {
    "CounterTop": "CounterTop",
    "DiningTable": "DiningTable",
    "Tables": "DiningTable",
    "CoffeeTable": "DiningTable",
    "SideTable": "DiningTable",
}

_MENTION = re.compile(r"@(\w+)")
_COOK = re.compile(
    r"\b(?:cook|cooks|cooked|cooking|fry|fried|frying|roast|roasted|bake|baked|heat|heated|"
    r"grill|grilled|microwave|microwaved)\b"
)
_SLICE = re.compile(r"\b(?:slice|slices|sliced|slicing|cut|cuts|chop|chopped|piece|pieces)\b")
_CLEAN = re.compile(
    r"(?<!\ba )(?<!\ban )(?<!\bthe )"  # not "a clean plate"
    r"\b(?:clean|cleaned|cleaning|rinse|rinsed|rinsing|wash|washed|washing|scrub)\b"
)
_BOIL = re.compile(r"\bboil(?:s|ed|ing)?\b")
_TOAST = re.compile(r"\btoast(?:s|ed|ing)?\b")
_WATER = re.compile(r"\b(?:water|watered|watering|pour|poured|pouring|hydrate)\b")
_COFFEE = re.compile(r"\bcoffees?\b(?!\s+(?:making|maker|machine|pot|@))")
_NUMBER = r"(\d+|a|an)"
_PIECES = r"(?:slices?|pieces?)"
_COUNTS = (
    # "2 slices of tomato", "a slice of cooked potato", "1 more slice of the lettuce"
    re.compile(
        rf"\b{_NUMBER}\s+(more\s+)?(?:[a-z]+\s+){{0,2}}?{_PIECES}\s+(?:of\s+)?"
        r"(?:(?:the|a|an)\s+)?(?:[a-z]+\s+)?@(\w+)"
    ),
    # "2 tomato slices", "two cooked potato slices"
    re.compile(rf"\b{_NUMBER}\s+(more\s+)?(?:[a-z]+\s+)?@(\w+)\s+{_PIECES}\b"),
    # "1 lettuce 1 tomato", "2 of the tomato"
    re.compile(r"\b(\d+)\s+(more\s+)?(?:of\s+(?:the\s+)?)?@(\w+)\b"),
)
_TWICE = re.compile(r"@(\w+)\s+(?:[a-z]+\s+)?twice\b")
_BARE_COUNT = re.compile(rf"\b(\d+)\s+(more\s+)?(?:[a-z]+\s+)?{_PIECES}\b(?!\s+of\b)")
_NEGATED = re.compile(r"\b(?:no|not|without|nope|skip)\s+(?:[a-z]+\s+){0,3}?@(\w+)")
_DEPOSIT = re.compile(
    r"\b(?:put|puts|putting|place|places|placing|placed|move|moves|moving|bring|bringing|"
    r"keep|set|store|leave|return|transfer|drop|carry|throw|toss|dump|need|needs|want|like|go|"
    r"goes|be)\b"
)
_FETCH = re.compile(r"\b(?:take|taking|grab|get|pick|find|collect|collecting|gather|gathering)\b")
_LOCATOR = re.compile(
    r"\b(?:next to|close to|beside|besides|near|by|left of|right of|behind|in front of|under|"
    r"underneath|above|below|across from|opposite|from|with|using)\s+"
    r"(?:(?:the|a|an|1)\s+)?@\w+"
)
_ONTO = re.compile(
    r"\b(?:on|onto|in|into|inside|to|at)\s+"
    r"(?P<det>(?:(?:the|a|an|any|1|single|same|top|of|my|your|our|this|that|these|those)\s+)"
    r"{0,4})@(?P<y>\w+)"
)
_WHERE_IS = re.compile(r"\b(?:is|are|was|were|there|find|found|check|look|search)\b")
_ONE = re.compile(
    r"(?:\b(?:on|onto|in|into|to)\s+(?:(?:a|the)\s+)?(?:1|single|same)|\b(?:single|same))"
    r"\s+(?:[a-z]+\s+)?@(\w+)"
)
_LIST_END = re.compile(r"\b(?:in|on|with|from|at|to|under|using|then|so|it|them)\b")
_CLASS_NAMES = sorted({c for t in CLASSES_OF_TYPE.values() for c in t})
_PUT_FAMILIES = ("Put All X On Y", "Put All X In One Y")
_THERE_ARE = re.compile(r"\bthere\s+(?:is|are)\b")
_ASKS = re.compile(
    "|".join(p.pattern for p in (_CLEAN, _DEPOSIT, _SLICE, _COOK, _BOIL, _TOAST, _WATER, _COFFEE))
)
_DIRTY = re.compile(r"\b(?:dirty|filthy|unclean|messy)\b")
# Words standing in for objects the goal line does not name ("put them all in one cabinet")
_STAND_IN = re.compile(r"\b(?:it|them|they|all|everything|stuff|things?|items?|objects?)\b")
_SPELLER = _speller()


@dataclass
class _Found:
    """A family with its parameters; `complete` when the text said everything it needs."""

    family: str
    params: list[str]
    complete: bool = True


def _mentions(text: str) -> list[str]:
    return _MENTION.findall(text)


def _counts(t: _Text) -> tuple[dict[str, int], set[str], set[str]]:
    """Slice counts said per food (the most said, plus any "more"), the foods named (not
    as landmarks: "the knife is by the bread"), and the foods said not to be wanted."""
    counts: dict[str, int] = {}
    named: set[str] = set()
    negated: set[str] = set()
    last: str | None = None
    for sentence in t.sentences:
        said: list[tuple[int, str, int, bool]] = []  # position, food, count, "more"
        spans: list[tuple[int, int]] = []
        for pattern in _COUNTS:
            for m in pattern.finditer(sentence):
                food = m.group(3)
                if food in _FOODS and not any(a <= m.start() < b for a, b in spans):
                    n = count_of(m.group(1)) if m.group(1).isdigit() else 1
                    said.append((m.start(), food, n, bool(m.group(2))))
                    spans.append((m.start(), m.end()))
        for m in _BARE_COUNT.finditer(sentence):
            if any(a <= m.start() < b for a, b in spans):
                continue
            before = [f for f in _mentions(sentence[: m.start()]) if f in _FOODS]
            food = before[-1] if before else last
            if food is not None:
                said.append((m.start(), food, count_of(m.group(1)), bool(m.group(2))))
        if sentence.isdigit() and last is not None:
            said.append((0, last, count_of(sentence), False))
        for m in _TWICE.finditer(sentence):
            if m.group(1) in _FOODS:
                said.append((m.start(), m.group(1), 2, False))
        for _, food, n, more in sorted(said):
            if more:
                counts[food] = (counts.get(food) or 1) + n
            else:
                counts[food] = max(counts.get(food, 0), n)
        for m in _NEGATED.finditer(sentence):
            if m.group(1) in _FOODS:
                negated.add(m.group(1))
        foods = [f for f in _mentions(sentence) if f in _FOODS]
        named.update(f for f in _mentions(_LOCATOR.sub(" ", sentence)) if f in _FOODS)
        if _TOAST.search(sentence):
            named.add("Bread")
        if foods:
            last = foods[-1]
    return counts, named, negated


def _amount(food: str, counts: dict[str, int], named: set[str], negated: set[str]) -> int:
    if counts.get(food):
        return counts[food]
    if food in negated:
        return 0
    return 1 if food in named else 0


def _dish(t: _Text) -> str:
    """The dish food is served on or in: Bowl when the text serves into a bowl, else Plate."""
    for sentence in t.sentences:
        for m in _ONTO.finditer(sentence):
            if m.group("y") in _DISHES:
                return m.group("y")
    found = [m for m in _mentions(t.whole) if m in _DISHES]
    return found[0] if found else "Plate"


def _subject(sentence: str) -> str | None:
    """The object a sentence is about, for a later "put it there": what is to be found or
    fetched ("find the newspaper", "there are 2 remotes"), else the first object named."""
    for pattern in (_FETCH, _THERE_ARE):
        m = pattern.search(sentence)
        if m is not None:
            found = _mentions(sentence[m.end() :])
            if found:
                return found[0]
    found = _mentions(_LOCATOR.sub(" ", sentence))
    return found[0] if found and not _WHERE_IS.search(sentence) else None


def _read_put(t: _Text) -> _Found | None:
    """Put all X on/in (one) Y: the first sentence that puts an object somewhere (with the
    next one when it names the place, and the object of an earlier one for "it")."""
    earlier: str | None = None
    for i, sentence in enumerate(t.sentences):
        text = _LOCATOR.sub(" ", sentence)
        for verb in _DEPOSIT.finditer(text):
            after = text[verb.end() :]
            onto = _ONTO.search(after)
            if onto is None and i + 1 < len(t.sentences):
                after = f"{after} {_LOCATOR.sub(' ', t.sentences[i + 1])}"
                onto = _ONTO.match(after.rstrip(), len(text) - verb.end() + 1)
            if onto is None:
                continue
            where = onto.group("y")
            moved = [m for m in _mentions(after[: onto.start()]) if m != where]
            if not moved:
                before = text[: verb.start()]
                fetch = list(_FETCH.finditer(before))
                pool = before[fetch[-1].end() :] if fetch else before
                moved = [m for m in _mentions(pool) if m != where]
            if not moved and earlier is not None and earlier != where:
                moved = [earlier]
            if not moved and _STAND_IN.search(after[: onto.start()]):
                moved = _named_later(t.sentences[i + 1 :], {where})
            if not moved:
                continue
            kinds = types_of(where) or {where}
            one = bool(re.search(r"\b(?:1|single|same)\b", onto.group("det"))) or any(
                (types_of(m.group(1)) or {m.group(1)}) & kinds for m in _ONE.finditer(t.whole)
            )
            prep = "in" if onto.group(0).startswith("in") else "on"
            family = "Put All X In One Y" if one else "Put All X On Y"
            return _Found(family, [moved[0], prep, where])
        earlier = _subject(sentence) or earlier
    return None


def _named_later(sentences: Sequence[str], besides: Collection[str]) -> list[str]:
    """For "put them all there", "clean everything": the object the next sentence naming one
    is about ("grab the salt shakers", "the cups are dirty"), places and tools aside."""
    for sentence in sentences:
        found = _subject(sentence)
        if found is None and _DIRTY.search(sentence):
            found = next(iter(_mentions(_LOCATOR.sub(" ", sentence))), None)
        if found is not None and found not in besides:
            return [found]
    return []


def _cover(names: Sequence[str]) -> str:
    """One name for several objects named together: the smallest class holding them all
    ("cups and mugs": Drinkware), else the first."""
    if len(set(names)) == 1:
        return names[0]
    need = {k for n in names for k in types_of(n) or {n}}
    fits = [c for c in _CLASS_NAMES if need <= types_of(c)]
    return min(fits, key=lambda c: (len(types_of(c)), c)) if fits else names[0]


def _read_clean(t: _Text, every_default: bool = True) -> _Found | None:
    """Clean (all) X: the first objects a sentence asks to clean (sinks and sponges aside).

    The Commander's "a mug" is loose talk: read from spoken words, it is every mug."""
    for i, sentence in enumerate(t.sentences):
        text = _LOCATOR.sub(" ", sentence)
        for verb in _CLEAN.finditer(text):
            listed = _LIST_END.split(text[verb.end() :], maxsplit=1)[0]
            after = [m for m in _mentions(listed) if m not in _SINKS]
            before = text[: verb.start()]
            fetch = list(_FETCH.finditer(before))
            pool = _mentions(before[fetch[-1].end() :] if fetch else before)
            found = after or [m for m in reversed(pool) if m not in _SINKS][:1]
            if not found and _STAND_IN.search(text[verb.end() :]):
                found = _named_later(t.sentences[i + 1 :], _SINKS)
            if not found:
                continue
            what = _cover(found)
            single = re.search(rf"\b(?:a|an|1)\s+(?:dirty\s+)?@{found[0]}\b", text)
            every = every_default and (single is None or t.spoken)
            return _Found("Clean All X" if every else "Clean X", [what])
    return None


def _read_slices(t: _Text, family: str | None) -> _Found | None:
    """Slices of a food: served in a dish (`N ...`), cooked or not."""
    counts = _counts(t)[0]
    order = [m for m in _mentions(t.whole) if m in _FOODS and m != "Egg"]
    counted = [f for f in order if counts.get(f)]
    if not order:
        return None
    food = (counted or order)[0]
    n = counts.get(food) or 1
    cooked = (
        "Cooked" in family
        if family and family not in ("Sliced X", "N Slices Of X In Y")
        else bool(_COOK.search(t.whole))
    )
    if family is None and t.spoken and food == "Potato":
        cooked = True  # TEACh's potato slices are cooked, said or not
    if family in ("N Slices Of X In Y", "N Cooked Slices Of X In Y"):
        cooked = family.startswith("N Cooked")
    served = family is not None and family.startswith("N ")
    dishes = [m for m in _mentions(t.whole) if m in _DISHES]
    # The Commander often names the dish late or not at all: spoken slices are served.
    if served or (family is None and (dishes or t.spoken)):
        dish = _dish(t)
        name = "N Cooked Slices Of X In Y" if cooked else "N Slices Of X In Y"
        return _Found(name, [str(n), food, "in" if dish == "Bowl" else "on", dish])
    if family == "Sliced X":
        cooked = False
    return _Found("Cooked Slice Of X" if cooked else "Sliced X", [food])


def _read_meal(t: _Text, family: str) -> _Found:
    """Sandwich, Salad or Breakfast, with what the text says about their parts."""
    counts, named, negated = _counts(t)
    whole = t.whole

    def amount(food: str) -> str:
        return str(_amount(food, counts, named, negated))

    if family == "Sandwich":
        said = bool(named & {"Lettuce", "Tomato"})
        params = [amount("Lettuce"), amount("Tomato")] if said else ["1", "1"]
        return _Found(family, params, said)
    if family == "Salad":
        said = bool(named & set(_SALAD))
        params = [amount(f) for f in _SALAD] if said else ["1", "1", "1"]
        return _Found(family, params, said)
    coffee = bool(_COFFEE.search(whole)) or "Mug" in _mentions(whole)
    two = re.search(r"\b(?:2|another)\s+(?:[a-z]+\s+){0,2}?(?:@Mug|@Cup|coffees?)\b", whole)
    sandwich = bool(re.search(r"\bsandwich", whole)) or (
        "Bread" in named and bool(named & {"Lettuce", "Tomato"})
    )
    salad = bool(re.search(r"\bsalad", whole)) or (not sandwich and len(named & set(_SALAD)) >= 2)
    toast = not sandwich and "Bread" in named
    potatoes = not salad and "Potato" in named
    apple = "Apple" in named
    dish = _dish(t)
    params = [
        "2" if two else "1",  # TEACh's breakfasts always have coffee
        "1" if toast else "0",
        "1" if potatoes else "0",
        dish,
        str(counts.get("Apple") or 1) if apple else "0",
        dish,
        "1" if sandwich else "0",
        amount("Lettuce") if sandwich else "0",
        amount("Tomato") if sandwich else "0",
        "1" if salad else "0",
        *([amount(f) for f in _SALAD] if salad else ["0", "0", "0"]),
        _spot(t),
    ]
    said = coffee or sandwich or salad or toast or potatoes or apple
    return _Found(family, params, said)


def _spot(t: _Text) -> str:
    """Where a breakfast is served: the last counter or table something is taken to or put on
    (sentences that say where things are left aside)."""
    spot = "CounterTop"
    for sentence in t.sentences:
        if _WHERE_IS.search(sentence):
            continue
        for m in _ONTO.finditer(_LOCATOR.sub(" ", sentence)):
            spot = _SPOTS.get(m.group("y"), spot)
    return spot


def _sliced_foods(t: _Text) -> set[str]:
    """Foods named in sentences that slice or count slices."""
    return {
        m
        for sentence in t.sentences
        if _SLICE.search(sentence)
        for m in _mentions(sentence)
        if m in _FOODS
    }


def _family_of(t: _Text) -> str | None:
    """The family a text asks for, by its most telling words."""
    whole = t.whole
    named = set(_mentions(whole))
    foods = _sliced_foods(t)
    toast = bool(_TOAST.search(whole)) or ("Bread" in foods and "Toaster" in named)
    coffee = bool(_COFFEE.search(whole))
    sandwich = bool(re.search(r"\bsandwich", whole))
    salad = bool(re.search(r"\bsalad", whole))
    if re.search(r"\bbreakfast", whole) or (coffee and (sandwich or salad or toast or foods)):
        return "Breakfast"
    if sandwich:
        return "Sandwich"
    if salad:
        return "Salad"
    if coffee:
        return "Coffee"
    if "HousePlant" in named and _WATER.search(whole):
        return "Water Plant"
    if toast and not named & {"Lettuce", "Tomato", "Potato"}:
        # Spoken: the Commander often names the plate late or not at all.
        return "Plate Of Toast" if "Plate" in named or t.spoken else "Toast"
    counts = _counts(t)[0]
    if _BOIL.search(whole) and named & set(_FOODS) and not counts:
        return "Boil X"
    if foods or (_COOK.search(whole) and named & set(_FOODS) and named & _DISHES):
        foods = foods or named & set(_FOODS)
        if len(foods & set(_SALAD)) >= 2 and "Bread" not in foods:
            return "Salad"
        if "Bread" in foods and foods & {"Lettuce", "Tomato"}:
            return "Sandwich"
        return "slices"
    if _CLEAN.search(whole) and _read_clean(t) is not None:
        return "clean"
    if _read_put(t) is not None:
        return "put"
    return None


def _read(t: _Text, family: str | None) -> _Found | None:
    """A family and its parameters from a normalised text (`family`: when already known)."""
    family = family or _family_of(t)
    if family is None:
        return None
    if family in ("Coffee", "Water Plant", "Toast", "Plate Of Toast"):
        return _Found(family, [])
    if family in ("Sandwich", "Salad", "Breakfast"):
        return _read_meal(t, family)
    if family == "Boil X":
        after = _BOIL.search(t.whole)
        pool = t.whole[after.start() :] if after else t.whole
        foods = [m for m in _mentions(pool) + _mentions(t.whole) if m in _FOODS]
        return _Found(family, [foods[0]]) if foods else None
    if family in ("slices", "Sliced X", "Cooked Slice Of X") or family.startswith("N "):
        return _read_slices(t, None if family == "slices" else family)
    if family in ("clean", "Clean X", "Clean All X"):
        found = _read_clean(t, every_default=family != "Clean X")
        if found is not None and family != "clean":
            found.family = family
        return found
    found = _read_put(t)
    if found is not None and family != "put":
        found.family = family
    return found


# ----------------------------------------------------------------------------- the entry point


def _family_name(task: str | None) -> str | None:
    """TEACh's family name for `task` (case and spacing aside), or None."""
    if not task:
        return None
    key = " ".join(task.split()).lower()
    return next((f for f in FAMILIES if f.lower() == key), None)


def commander_words(dialogue: Sequence[str]) -> list[str]:
    """The Commander's utterances of a dialogue kept as "Commander: text" / "Driver: text"
    lines; a line naming no speaker counts as the Commander's.

    >>> commander_words(["Commander: make coffee", "Driver: ok", "water the plant"])
    ['make coffee', 'water the plant']
    """
    out: list[str] = []
    for line in dialogue:
        speaker, sep, text = str(line).partition(":")
        who = speaker.strip().lower()
        if sep and who == "driver":
            continue
        words = text if sep and who == "commander" else str(line)
        if words.strip():
            out.append(" ".join(words.split()))
    return out


def read_goal(
    goal: str | None,
    dialogue: Sequence[str],
    *,
    task: str | None = None,
    scene_types: Collection[str] | None = None,
    plan: Sequence[str] = (),
) -> Reading:
    """Read a goal spec from a goal text, or from the Commander's words when the goal does not
    say enough (a greeting, or "Make a salad." without its ingredients).

    `task`, a TEACh family name, picks the family (the text still gives its parameters);
    `scene_types`, the object types of a known scene, settles names such as "table"; `plan`,
    the plan's action lines, settles a near type ("cups" for the plan's Mug: `fit_to_plan`).

    >>> read_goal("Serve 2 slice(s) of Tomato in a Bowl.", []).spec.text
    'Serve 2 slice(s) of Tomato in a Bowl.'
    >>> read_goal("put the books on the table", [], scene_types={"CoffeeTable", "Book"}).spec.text
    'Put all Book on any CoffeeTable.'
    >>> read_goal("put the books on the table", []).spec.text
    'Put all Book on any Tables.'
    """
    reading = _reading(
        goal, dialogue, task, None if scene_types is None else frozenset(scene_types)
    )
    if reading.spec is not None and plan:
        reading.spec = fit_to_plan(reading.spec, plan)
    return reading


def _reading(
    goal: str | None, dialogue: Sequence[str], task: str | None, scene: frozenset[str] | None
) -> Reading:
    hint = _family_name(task)
    goal_text = (goal or "").strip()
    own = _normalise(goal_text, scene)
    found = _read(own, hint)
    words = commander_words(dialogue)
    if found is not None and found.complete:
        _class_said(found, words)
        spec = spec_of(found.family, found.params)
        return Reading(spec, own.focus, goal_text)
    says = found is not None and (hint is None or _read(own, None) is not None)
    asks = says or own.focus or _ASKS.search(own.whole) is not None  # not a bare greeting
    parts = ([goal_text] if asks else []) + words
    request = "\n".join(parts)
    if words:
        text = _normalise(request, scene, spoken=True)
        more = _read(text, hint or (found.family if found else None))
        if more is not None and (more.complete or found is None):
            _class_said(more, words)
            return Reading(_made(more), text.focus, request)
        focus = text.focus
    else:
        focus = own.focus
    if found is not None and found.family != "Breakfast":
        return Reading(_made(found), focus, request or goal_text)
    if found is not None:
        note = f"{NO_GOAL}: the breakfast's parts are not said"
    elif not request:
        note = f"{NO_GOAL}: no goal text and no Commander words"
    else:
        note = f"{NO_GOAL}: the words name no TEACh task"
    return Reading(None, focus, request or goal_text, note)


def _class_said(found: _Found, words: Sequence[str]) -> None:
    """The class the Commander names for the objects the goal line names by type ("clean all
    the cups" and "I mean all the drinkware"): the smallest class named word for word that
    holds them, in place of their type."""
    if found.family not in ("Clean X", "Clean All X", *_PUT_FAMILIES):
        return
    kinds = types_of(found.params[0])
    said = " ".join(words)[:MAX_CHARS].lower()
    named = [
        c
        for c in _CLASS_NAMES
        if kinds < types_of(c) and re.search(rf"\b{c.lower()}s?\b", said) is not None
    ]
    if named:
        found.params[0] = min(named, key=lambda c: (len(types_of(c)), c))


def _made(found: _Found) -> GoalSpec:
    return spec_of(found.family, found.params)
