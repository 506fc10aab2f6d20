"""The two labelled-error generators: `injected` (the paper's error taxonomy) and `natural`
(human-like mistakes), and what they share.

May import `records` and `world`.
"""

from typing import Literal

from planverify.noise.common import ANNOTATION_KEYS, CorruptSummary, Generator
from planverify.noise.injected import corrupt_episode, corrupt_many
from planverify.noise.natural import natural_episode, natural_many

GeneratorName = Literal["injected", "natural"]
GENERATORS: dict[GeneratorName, Generator] = {"injected": corrupt_many, "natural": natural_many}
"""The error generators by name (`planverify corrupt --generator`)."""

__all__ = [
    "ANNOTATION_KEYS",
    "GENERATORS",
    "CorruptSummary",
    "Generator",
    "GeneratorName",
    "corrupt_episode",
    "corrupt_many",
    "natural_episode",
    "natural_many",
]
