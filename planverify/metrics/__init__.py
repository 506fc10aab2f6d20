"""Score verification results against annotated episodes: recall, precision and F1 over errors.

The positives are the erroneous steps of an annotated episode (`Episode.labels`): every REMOVE
label (a step that should go) and every MISSING label (a step that should be added). Dialogue
(`Say`) lines are never scored, neither as positives nor as false alarms.

Two steps *match* when they have the same verb and the same object types, the instance number
of a name being ignored (`Mug2` matches `Mug`); see `same_step`.

Static mode scores the first Judge pass (`VerificationResult.history[0].critique`):

- a REMOVE label is a true positive (TP) when its step is flagged, a false negative (FN) if not;
- a flag on an unlabelled, non-dialogue step is a false positive (FP);
- a MISSING label is found when a `#MISSING` critique matches it (`missing_matches`): the
  critique contains a matching action, or it names the label's object type(s) together with
  the verb or one of its synonyms (`planverify.world.mentions.VERB_SYNONYMS`); a critique that finds no label is an FP.

Iterative mode scores the refined plan against the input:

- a removed labelled step is a TP, a removed unlabelled step an FP, a kept labelled step an FN;
- a MISSING label is found when a step inserted by the loop (`result.inserted`) matches it;
  an insertion that finds no label is an FP, a MISSING label left unfound an FN.

Rules shared by both modes:

- *Twins.* When a labelled step is kept but an identical unlabelled step of the same run was
  removed (or flagged) instead, the plan comes out the same, so the pair counts as one TP and
  that removal is not an FP. A run is a stretch of identical action lines, dialogue between
  them ignored (`ToggleOn('Toaster')`, `Say(..)`, `ToggleOn('Toaster')`); identical lines with
  other steps between them are not twins, since removing the other one gives another plan.
- *One to one.* Each label is found at most once and each critique or insertion accounts for
  at most one label. Among several possible pairings the largest one is used, found by
  augmenting paths that try proposals in their order and labels in label order, so the result
  is deterministic.
- The position a `#MISSING` critique or an insertion gives is not checked, only what it adds.

Plan-level scores (`score_plan`) need the annotated record's `clean` plan, the plan before any
error was injected, and do not depend on which labelled step a removal hits: over non-dialogue
steps compared as canonical lines, the errors are the noisy steps outside a longest common
subsequence (LCS) of the noisy and clean plans; a removal is a false positive only when it
shortens the LCS of the kept plan and the clean plan (FP = |LCS(noisy, clean)| - |LCS(kept,
clean)|), TP = removals - FP and FN = errors - TP. Proposed steps are paired with MISSING labels
as above. Both label-level and plan-level scores are also given without motion steps
(`motionless`: `Move`, `TurnLeft`, `TurnRight` dropped from the plans, the labels and the
proposals).

Counts are kept overall and per error type (the label's `error`, `"other"` when unset). False
positives have no error type: they count overall (and per task family) only, so per error type
only recall is defined. A result whose status is "error" (or that was computed on another
plan) finds nothing: all labels of its episode are FNs.

Conventions for empty denominators (`Counts`): recall is None when there are no positives,
precision is None when nothing was flagged or added, and F1 = 2TP / (2TP + FP + FN) -- the
harmonic mean of precision and recall when both are defined -- is None only when all three
counts are zero. So a judge that flags nothing on an erroneous plan has recall 0, precision
None and F1 0; a judge that flags nothing on a clean plan has all three None.

Confidence intervals (`bootstrap`) are percentile bootstrap intervals over episodes: the
episodes are drawn with replacement, counts summed and the metric recomputed, 1000 times by
default, with a seeded `random.Random`, so a report is reproducible.

>>> from planverify.records.critique import Critique, Flag
>>> from planverify.records.episode import Episode, Label
>>> episode = Episode(id="e1", actions=["Driver.PickUp('Mug')", "Driver.PickUp('Mug')"],
...     labels=[Label(type="REMOVE", index=1, error="duplicate")])
>>> score_static(episode, Critique(flags=[Flag(step=1, action="", reason="again")])).counts
Counts(tp=1, fp=0, fn=0, tn=1)
"""

from __future__ import annotations

from planverify.metrics.counts import (
    OTHER,
    UNKNOWN_TASK,
    Counts,
    EpisodeScore,
    Mode,
    score_iterative,
    score_static,
)
from planverify.metrics.matching import actions_in, missing_matches, same_step
from planverify.metrics.plan import (
    canonical,
    clean_plan,
    common_subsequence_length,
    motion_step,
    motionless,
    plan_counts,
    score_plan,
)
from planverify.metrics.report import (
    Interval,
    LevelScores,
    Report,
    Scores,
    bootstrap,
    episode_under,
    evidence_levels,
    format_report,
    gold_plan,
    infer_mode,
    score_episode,
    score_results,
    summarize,
)

__all__ = [
    "OTHER",
    "UNKNOWN_TASK",
    "Counts",
    "EpisodeScore",
    "Interval",
    "LevelScores",
    "Mode",
    "Report",
    "Scores",
    "actions_in",
    "bootstrap",
    "canonical",
    "clean_plan",
    "common_subsequence_length",
    "episode_under",
    "evidence_levels",
    "format_report",
    "gold_plan",
    "infer_mode",
    "missing_matches",
    "motion_step",
    "motionless",
    "plan_counts",
    "same_step",
    "score_episode",
    "score_iterative",
    "score_plan",
    "score_results",
    "score_static",
    "summarize",
]
