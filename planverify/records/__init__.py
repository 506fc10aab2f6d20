"""What flows through everything: episodes in the action notation, critiques, evidence levels, the
history of a run and its result record, token usage, and the redaction of secrets in them.

The bottom layer: imports nothing else of planverify.
"""

from planverify.records.critique import Critique, Flag, Missing
from planverify.records.episode import Episode, Label, Scene
from planverify.records.evidence import LEVELS, Evidence
from planverify.records.notation import Action, parse_action
from planverify.records.result import VerificationResult

__all__ = [
    "LEVELS",
    "Action",
    "Critique",
    "Episode",
    "Evidence",
    "Flag",
    "Label",
    "Missing",
    "Scene",
    "VerificationResult",
    "parse_action",
]
