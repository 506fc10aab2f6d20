"""planverify: verify and clean embodied-AI task plans with an iterative Judge/Planner loop."""

from planverify.api import Verifier, averify_many, averify_plan, verify_many, verify_plan
from planverify.graphs.subgraph import graph
from planverify.records.critique import Critique, Dropped, Flag, Missing
from planverify.records.episode import Episode
from planverify.records.result import VerificationResult

__all__ = [
    "Critique",
    "Dropped",
    "Episode",
    "Flag",
    "Missing",
    "VerificationResult",
    "Verifier",
    "averify_many",
    "averify_plan",
    "graph",
    "verify_many",
    "verify_plan",
]
__version__ = "0.1.0"
