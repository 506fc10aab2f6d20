"""Typos in goal words: a dropped letter, two swapped letters, a misplaced space.

People type goals and dialogue in a hurry ("put the tomto in the fridge", "clean all the mu gs",
"make a sandwhich"). `Speller.fix` mends the words of a text towards a list of words worth
reading (object names, and the task words `text_goals` looks for), with `rapidfuzz`'s edit
distances, conservatively: a word it knows, or an English word close to an object name
("plan" for plant, "soon" for spoon, "late" for plate), is never changed, and a word close to
two different targets is left as it is.

>>> speller = Speller(["tomato", "potato", "mug", "sandwich", "fridge"])
>>> speller.fix(["put", "the", "tomto", "in", "the", "frige"])
['put', 'the', 'tomato', 'in', 'the', 'fridge']
>>> speller.fix(["make", "a", "sandwhich"]), speller.fix(["the", "plan", "is", "soon"])
(['make', 'a', 'sandwich'], ['the', 'plan', 'is', 'soon'])
>>> speller.fix(["po", "tato", "and", "themug", "looking"])
['potato', 'and', 'the', 'mug', 'looking']
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from functools import lru_cache

from rapidfuzz import process
from rapidfuzz.distance import OSA

# Words read as written, never mended nor taken for the name they look like: common short words
# (the glue a run-together word may start with), then English words one dropped, added or
# swapped letter away from an object or task word.
_ENGLISH = """
    a about after again all also am an and any are as at away back be been before both but by
    can could did do does done down each else even for from get go going good got had has have
    he her here him his how i if in into is it its just let like look make me more my need next
    no not now of off ok okay on once one only onto open or other our out over place please put
    same see she should so some take than thank thanks that the their them then there these they
    this those three to too two up us use want was we well were what when where which while who
    will with would yes yet you your ahead aside beside besides cannot inside outside seen four
    five six seven eight nine ten
    able ables bead bind binds bush char chars chin clan cock garage hair hairs hone hose issue
    issues lass late lean leaning lock mall older ouch panting planet plan port ports pray
    rash read ridge rise rush sand self shake soon sort sorts spot spots state stand tablet tale
    tales tool utter widow witch"""
ENGLISH = frozenset(_ENGLISH.split())

_SHORTEST = {-1: 4, 0: 5, 1: 6}  # len(word) - len(target) -> the shortest word mended that way
_LONGEST = 30  # letters: a longer "word" is no typo of a name (and is not worth the time)


class Speller:
    """Mends typos towards a fixed list of target words (lower case, letters only)."""

    def __init__(self, targets: Iterable[str], base: Callable[[str], str] = str) -> None:
        self.targets = sorted({t for t in targets if t.isalpha()})
        self._targets = frozenset(self.targets)
        self.known = self._targets | ENGLISH
        self.base = base  # a word's singular, so that "mu gs" and "tomtoes" are mended too
        self._word = lru_cache(maxsize=4096)(self._mend)
        self._knows = lru_cache(maxsize=4096)(self._known)

    def fix(self, words: Sequence[str]) -> list[str]:
        """The words with typos mended: two pieces of one target joined ("po tato"), one word
        split in two known words ("themug"), a single word mended (`word`)."""
        out: list[str] = []
        i = 0
        while i < len(words):
            word = words[i]
            if self._knows(word) and (i + 1 == len(words) or self._knows(words[i + 1])):
                out.append(word)  # the common case: nothing to mend
                i += 1
                continue
            if i + 1 < len(words) and self._joins(word, words[i + 1]):
                out.append(word + words[i + 1])
                i += 2
                continue
            out.extend(self._split(word) or [self.word(word)])
            i += 1
        return out

    def word(self, word: str) -> str:
        """A single word mended (a dropped, added or swapped letter), or the word itself."""
        if not (word.isalpha() and word.islower()) or len(word) > _LONGEST:
            return word
        return self._word(word)

    def _joins(self, left: str, right: str) -> bool:
        """Whether two words are the halves of a target split by a stray space."""
        if not (left.isalpha() and right.isalpha()) or (self._knows(left) and self._knows(right)):
            return False
        joined = left + right
        return joined not in ENGLISH and bool({joined, self.base(joined)} & self._targets)

    def _known(self, word: str) -> bool:
        """Whether a word is to be read as written (known, or no word of letters)."""
        return not word.isalpha() or word in self.known or self.base(word) in self.known

    def _split(self, word: str) -> list[str] | None:
        """A short English word run into a target ("themug", "allplates"), or None."""
        if not word.isalpha() or not 5 <= len(word) <= _LONGEST or self._knows(word):
            return None
        splits = [
            [word[:k], word[k:]]
            for k in range(1, len(word) - 2)
            if word[:k] in ENGLISH and {word[k:], self.base(word[k:])} & self._targets
        ]
        return splits[0] if len(splits) == 1 else None

    def _mend(self, word: str) -> str:
        if self._knows(word):
            return word
        mended = self._closest(word)
        if mended is None and self.base(word) != word:
            mended = self._closest(self.base(word))
        return mended or word

    def _closest(self, word: str) -> str | None:
        """The one target a typo away from a word, or None (none, or several)."""
        if len(word) < min(_SHORTEST.values()):
            return None
        close = {
            target
            for target, _, _ in process.extract(
                word, self.targets, scorer=OSA.distance, score_cutoff=1, limit=None
            )
            if self._typo(word, target)
        }
        return close.pop() if len(close) == 1 else None

    @staticmethod
    def _typo(word: str, target: str) -> bool:
        """Whether one edit from target to word is a typo worth mending at this length: a
        dropped letter, an added one, or two neighbours swapped (not a changed letter, which
        turns too many words into others: "cooker" and "cooked")."""
        shortest = _SHORTEST.get(len(word) - len(target))
        if shortest is None or len(word) < shortest:
            return False
        return len(word) != len(target) or sorted(word) == sorted(target)
