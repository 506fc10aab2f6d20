"""How commands that read results files (`score`, `export`, `eval`) see each result: under a
trim policy, then filtered by evidence level. One function, so that every command combines the
two the same way and in the same order.

The order matters. The trim policy comes first: `minimal` turns the kept steps that carry an
optional note into removals at the note's evidence level. The evidence filter comes second and
undoes every removal below its level, those included: a step `minimal` removes at a weak level
stays in the plan under `--trim minimal --min-evidence proven`.

A static result is scored from its one Judge pass (the critique in its history), so that pass
is read under the policy too: under `minimal` the steps it kept as optional count as flags,
under `natural` its flags with an optional note do not.

>>> from planverify.records.result import Verdict
>>> from planverify.records.trim import OptionalNote
>>> note = OptionalNote(kind="search", reason="looks for the mug", evidence="heuristic")
>>> natural = VerificationResult(
...     id="a", original=["A", "B"], refined=["A", "B"],
...     verdicts=[Verdict(index=0, action="A", verdict="keep", optional=note),
...               Verdict(index=1, action="B", verdict="keep")])
>>> as_read(natural, trim="minimal").refined
['B']
>>> as_read(natural, trim="minimal", min_evidence="proven").refined
['A', 'B']
"""

from __future__ import annotations

from planverify.records.critique import Critique
from planverify.records.evidence import Evidence, levels_from
from planverify.records.result import VerificationResult
from planverify.records.trim import TrimPolicy

__all__ = ["as_read"]


def as_read(
    result: VerificationResult,
    *,
    trim: TrimPolicy | None = None,
    min_evidence: Evidence | None = None,
) -> VerificationResult:
    """The result under the trim policy `trim` (None: the one it ran under;
    `VerificationResult.under`), then with only its removals and insertions at `min_evidence`
    or stronger (None: all of them; `VerificationResult.only`). Nothing is verified again."""
    if trim is not None:
        result = _first_pass_under(result.under(trim), trim)
    if min_evidence is not None:
        result = result.only(levels_from(min_evidence))
    return result


def _first_pass_under(result: VerificationResult, trim: TrimPolicy) -> VerificationResult:
    """A static result with its Judge pass read under `trim` (any other result as it is)."""
    if result.stop_reason != "static" or not result.history:
        return result
    first = result.history[0]
    critique = _critique_under(first.critique, trim)
    if critique == first.critique:
        return result
    history = [first.model_copy(update={"critique": critique}), *result.history[1:]]
    return result.model_copy(update={"history": history})


def _critique_under(critique: Critique, trim: TrimPolicy) -> Critique:
    """The critique's flags under `trim`: optional steps are flags (at their note's level)
    under `minimal`, and none are under `natural`."""
    if trim == "minimal":
        moved = [
            flag.model_copy(update={"evidence": flag.optional.evidence})
            if flag.optional is not None
            else flag
            for flag in critique.optional
        ]
        flags = sorted([*critique.flags, *moved], key=lambda flag: flag.step)
        return critique.model_copy(update={"flags": flags, "optional": []})
    flags = [flag for flag in critique.flags if flag.optional is None]
    optional = sorted(
        [*critique.optional, *(flag for flag in critique.flags if flag.optional is not None)],
        key=lambda flag: flag.step,
    )
    return critique.model_copy(update={"flags": flags, "optional": optional})
