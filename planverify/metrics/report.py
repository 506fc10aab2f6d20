"""Scores over many episodes: reports by error type, task and evidence level, with bootstrap
intervals.
"""

from __future__ import annotations

import math
import random
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from pydantic import BaseModel, Field

from planverify.metrics.counts import (
    METRICS,
    OTHER_CONTENT,
    Counts,
    EpisodeScore,
    Mode,
    labels_of,
    plan_mismatch,
    score_labels,
    tally,
)
from planverify.metrics.plan import (
    clean_plan,
    motionless,
    motionless_counts,
    never,
    outcome_of,
    plan_counts,
    score_plan,
)
from planverify.records.episode import Episode
from planverify.records.evidence import LEVELS, Evidence
from planverify.records.reading import as_read
from planverify.records.result import VerificationResult
from planverify.records.trim import TrimPolicy, labels_under

# --------------------------------------------------------------------------- aggregates


def score_episode(episode: Episode, result: VerificationResult, *, mode: Mode) -> EpisodeScore:
    """Score one result in either mode; static mode reads the first pass of `result.history`.

    Without a recorded history, static mode falls back on the removals in `result.verdicts`
    (and has no `#MISSING` critiques to score), and says so in the notes.

    Besides the label-level `counts`, the score carries `without_motion` (the same scoring with
    motion steps and their labels left out, see `motionless`) and, when the episode has a
    `clean` plan, `plan_level` (`score_plan`, with and without motion).
    """
    score = score_labels(episode, result, mode)
    score.without_motion = motionless_counts(episode, result, mode)
    try:
        with_motion = score_plan(episode, result, mode=mode)
    except ValueError as exc:  # a `clean` that is no plan: no plan-level figures
        score.notes.append(str(exc))
        with_motion = None
    if with_motion is not None:
        without = score_plan(episode, result, mode=mode, motion=False)
        assert without is not None
        score.plan_level = {"with_motion": with_motion, "without_motion": without}
    return score


class Interval(BaseModel):
    """A confidence interval."""

    low: float
    high: float


class Scores(BaseModel):
    """Summed counts of a group of episodes, the metrics and their bootstrap intervals."""

    episodes: int = 0  # episodes in the group
    counts: Counts = Field(default_factory=Counts)  # summed confusion counts
    recall: float | None = None
    precision: float | None = None  # None per error type: false positives have no type
    f1: float | None = None
    recall_ci: Interval | None = None
    precision_ci: Interval | None = None
    f1_ci: Interval | None = None


def bootstrap(
    counts: Sequence[tuple[int, int, int]],
    *,
    resamples: int = 1000,
    seed: int | str = 0,
    confidence: float = 0.95,
    metrics: Iterable[str] = ("recall", "precision", "f1"),
) -> dict[str, Interval | None]:
    """Percentile bootstrap intervals of the metrics, resampling the (tp, fp, fn) of episodes.

    Each resample draws as many episodes as there are, with replacement, and recomputes the
    metric from the summed counts; resamples where the metric is undefined are left out, and a
    metric never defined gets None. Same input and seed, same intervals.

    >>> data = [(1, 0, 0), (0, 1, 1), (2, 0, 0), (1, 0, 1)]
    >>> ci = bootstrap(data, seed=1)
    >>> ci["recall"].low <= 4 / 6 <= ci["recall"].high
    True
    >>> bootstrap(data, seed=1) == ci
    True
    """
    wanted = list(metrics)
    if not counts or resamples <= 0:
        return {name: None for name in wanted}
    rng = random.Random(seed)
    tps, fps, fns = (list(column) for column in zip(*counts, strict=True))
    population = range(len(counts))
    values: dict[str, list[float]] = {name: [] for name in wanted}
    for _ in range(resamples):
        draw = rng.choices(population, k=len(counts))
        tp = sum(map(tps.__getitem__, draw))
        fp = sum(map(fps.__getitem__, draw))
        fn = sum(map(fns.__getitem__, draw))
        for name in wanted:
            value = METRICS[name](tp, fp, fn)
            if value is not None:
                values[name].append(value)
    tail = (1 - confidence) / 2
    out: dict[str, Interval | None] = {}
    for name in wanted:
        got = sorted(values[name])
        if not got:
            out[name] = None
            continue
        last = len(got) - 1
        out[name] = Interval(
            low=got[math.floor(tail * last)], high=got[math.ceil((1 - tail) * last)]
        )
    return out


def summarize(
    counts: Sequence[Counts],
    *,
    typed: bool = True,
    resamples: int = 1000,
    seed: int | str = 0,
    confidence: float = 0.95,
) -> Scores:
    """The `Scores` of a group of episodes given their counts (one `Counts` per episode).

    With `typed=False` (per error type) false positives are unknown, so only recall is given.

    >>> s = summarize([Counts(tp=1), Counts(tp=1, fp=1, fn=1)], resamples=200)
    >>> s.counts, s.recall, s.precision
    (Counts(tp=2, fp=1, fn=1, tn=0), 0.6666666666666666, 0.6666666666666666)
    """
    total = sum(counts, Counts())
    metrics = ("recall", "precision", "f1") if typed else ("recall",)
    ci = bootstrap(
        [(c.tp, c.fp, c.fn) for c in counts],
        resamples=resamples,
        seed=seed,
        confidence=confidence,
        metrics=metrics,
    )
    return Scores(
        episodes=len(counts),
        counts=total,
        recall=total.recall,
        precision=total.precision if typed else None,
        f1=total.f1 if typed else None,
        recall_ci=ci.get("recall"),
        precision_ci=ci.get("precision"),
        f1_ci=ci.get("f1"),
    )


class Report(BaseModel):
    """The scores of a run: overall, per error type, per task family, and per episode."""

    mode: Mode  # how results were scored
    overall: Scores  # all scored episodes
    by_error: dict[str, Scores] = Field(default_factory=dict)  # recall per label error type
    by_task: dict[str, Scores] = Field(default_factory=dict)  # per task family
    episodes: list[EpisodeScore] = Field(default_factory=list)  # one per scored episode
    failed: list[str] = Field(default_factory=list)  # scored episodes whose result was unusable
    mismatched: list[str] = Field(default_factory=list)  # results computed on other content
    missing: list[str] = Field(default_factory=list)  # episodes without a result (not scored)
    unmatched: list[str] = Field(default_factory=list)  # results without an episode
    unlabelled: list[str] = Field(default_factory=list)  # episodes without labels (not scored)
    notes: list[str] = Field(default_factory=list)  # anything unusual about the input
    without_motion: Scores | None = None  # like `overall`, motion steps and labels left out
    plan_level: dict[str, Scores] | None = None  # "with_motion", "without_motion": episodes
    # with a `clean` plan only (None when none has one)
    min_evidence: Evidence | None = None  # only changes at or above this level were scored
    trim: TrimPolicy | None = None  # the trim policy results were read under (None: their own)


@dataclass
class _Pairing:
    """Annotated episodes and results paired by id, and what could not be paired."""

    pairs: list[tuple[Episode, VerificationResult]]  # labelled episodes with their result
    missing: list[str]  # labelled episodes without a result
    unmatched: list[str]  # results without an episode
    unlabelled: list[str]  # episodes without labels
    notes: list[str]  # repeated ids (the first one is used)


def _pair_by_id(episodes: Iterable[Episode], results: Iterable[VerificationResult]) -> _Pairing:
    by_id: dict[str, VerificationResult] = {}
    notes: list[str] = []
    for result in results:
        if result.id in by_id:
            notes.append(f"result {result.id}: repeated id, the first one is used")
        else:
            by_id[result.id] = result
    paired = _Pairing([], [], [], [], notes)
    seen: set[str] = set()
    for episode in episodes:
        if episode.id in seen:
            notes.append(f"episode {episode.id}: repeated id, the first one is used")
            continue
        seen.add(episode.id)
        if episode.labels is None:
            paired.unlabelled.append(episode.id)
        elif episode.id not in by_id:
            paired.missing.append(episode.id)
        else:
            paired.pairs.append((episode, by_id[episode.id]))
    paired.unmatched = [rid for rid in by_id if rid not in seen]
    return paired


def score_results(
    episodes: Iterable[Episode],
    results: Iterable[VerificationResult],
    *,
    mode: Mode,
    resamples: int = 1000,
    seed: int = 0,
    confidence: float = 0.95,
    min_evidence: Evidence | None = None,
    trim: TrimPolicy | None = None,
) -> Report:
    """Score results against annotated episodes, pairing them by id.

    With `trim`, each result is read under that trim policy first (`VerificationResult.under`:
    none is verified again; None: the policy it ran under), then filtered by `min_evidence`
    (`planverify.records.reading.as_read`).

    With `min_evidence`, only removals and insertions at or above that evidence level are
    scored: those below it are treated as if they had not been made (the step is kept, the
    insertion left out; `VerificationResult.only`), so a labelled step removed below the level
    is a false negative, and a wrong removal below it no false positive.

    An episode is scored when it has labels (`[]` is a clean episode) and a result; a result
    with status "error" counts as finding nothing (its episode's labels are FNs) and is listed
    in `failed`. Episodes without a result are listed in `missing` and not scored, results
    without an episode in `unmatched`, episodes without labels in `unlabelled`. When an id
    appears more than once, the first episode and the first result are used.

    Per-episode bootstrap intervals resample all scored episodes for the overall and per-error
    scores and the episodes of a family for its scores.

    >>> from planverify.records.episode import Label
    >>> plan = ["Driver.PickUp('Mug')", "Driver.PickUp('Mug')"]
    >>> eps = [Episode(id="a", actions=plan, task="Coffee",
    ...                labels=[Label(type="REMOVE", index=1, error="duplicate")]),
    ...        Episode(id="b", actions=plan, labels=[])]
    >>> from planverify.records.result import Verdict
    >>> res = [VerificationResult(id="a", verdicts=[
    ...            Verdict(index=0, action=plan[0], verdict="keep"),
    ...            Verdict(index=1, action=plan[1], verdict="remove")]),
    ...        VerificationResult(id="b", status="error", error="timeout"),
    ...        VerificationResult(id="c")]
    >>> report = score_results(eps, res, mode="iterative", resamples=100)
    >>> report.overall.counts, report.overall.recall, report.overall.precision
    (Counts(tp=1, fp=0, fn=0, tn=1), 1.0, 1.0)
    >>> report.failed, report.unmatched, sorted(report.by_task)
    (['b'], ['c'], ['Coffee', 'unknown'])
    """
    if trim is not None or min_evidence is not None:
        results = (as_read(r, trim=trim, min_evidence=min_evidence) for r in results)
    paired = _pair_by_id(episodes, results)
    scored = _score_pairs(paired, mode=mode, trim=trim)
    group = _Grouping(resamples=resamples, seed=seed, confidence=confidence)
    return Report(
        mode=mode,
        overall=group([s.counts for s in scored], "overall"),
        by_error=_by_error(scored, group),
        by_task=_by_task(scored, group),
        episodes=scored,
        failed=[s.id for s in scored if s.status == "error"],
        mismatched=[s.id for s in scored if OTHER_CONTENT in s.notes],
        missing=paired.missing,
        unmatched=paired.unmatched,
        unlabelled=paired.unlabelled,
        notes=paired.notes,
        without_motion=group([s.without_motion or s.counts for s in scored], "without_motion"),
        plan_level=_plan_level(scored, group),
        min_evidence=min_evidence,
        trim=trim,
    )


def _score_pairs(paired: _Pairing, *, mode: Mode, trim: TrimPolicy | None) -> list[EpisodeScore]:
    """The score of each paired episode, under `trim` (None: the policy its result ran under)."""
    return [
        score_episode(episode_under(episode, trim or result.trim), result, mode=mode)
        for episode, result in paired.pairs
    ]


@dataclass(frozen=True)
class _Grouping:
    """How a report summarizes a group of episodes: `summarize` with the report's bootstrap
    settings, each group drawing its own resamples (seeded `seed:key`)."""

    resamples: int
    seed: int
    confidence: float

    def __call__(self, items: Sequence[Counts], key: str, *, typed: bool = True) -> Scores:
        """The `Scores` of the group `key` (`typed=False`: per error type, recall only)."""
        return summarize(
            items,
            typed=typed,
            resamples=self.resamples,
            seed=f"{self.seed}:{key}",
            confidence=self.confidence,
        )


def _by_error(scored: list[EpisodeScore], group: _Grouping) -> dict[str, Scores]:
    """Recall per label error type, each over every scored episode."""
    error_types = sorted({kind for s in scored for kind in s.by_error})
    return {
        kind: group([s.by_error.get(kind, Counts()) for s in scored], f"error:{kind}", typed=False)
        for kind in error_types
    }


def _by_task(scored: list[EpisodeScore], group: _Grouping) -> dict[str, Scores]:
    """The scores per task family, over the episodes of the family."""
    tasks = sorted({s.task for s in scored})
    return {
        task: group([s.counts for s in scored if s.task == task], f"task:{task}") for task in tasks
    }


def _plan_level(scored: list[EpisodeScore], group: _Grouping) -> dict[str, Scores] | None:
    """Plan-level scores with and without motion, over the episodes with a `clean` plan (None
    when none has one)."""
    planned = [s.plan_level for s in scored if s.plan_level is not None]
    if not planned:
        return None
    return {
        key: group([p[key] for p in planned], f"plan:{key}")
        for key in ("with_motion", "without_motion")
    }


BELOW_LEVEL = (
    "only removals and insertions at level {level} or stronger are scored; those below it "
    "count as not made (the step kept, the insertion left out)"
)  # what `min_evidence` means, as reports say it


class LevelScores(BaseModel):
    """The removals at one evidence level, scored as if no other change had been made."""

    level: Evidence  # the evidence level
    removals: int = 0  # removals at this level, over the usable results
    share: float | None = None  # their share of all removals (None: there is none)
    labels: Counts = Field(default_factory=Counts)  # label level (MISSING labels are FNs)
    plan: Counts | None = None  # plan level, over episodes with a `clean` plan (None: none has)
    excused: Counts | None = None  # plan level against the base's own plan (`base` given)


def evidence_levels(
    episodes: Iterable[Episode],
    results: Iterable[VerificationResult],
    *,
    mode: Mode,
    base: Mapping[str, Sequence[str]] | None = None,
    motion: bool = True,
) -> dict[Evidence, LevelScores]:
    """Per evidence level, how many removals are at that level and how precise they are, each
    level scored as if only its removals had been made (insertions left out, so `precision` is
    the removals' own). Counts are pooled over the labelled episodes with a usable result,
    paired by id (the first of each); unusable results remove nothing.

    `labels` are label-level counts, `plan` plan-level counts (`plan_counts` against `clean`,
    episodes that have it), and `excused`, when `base` maps episode ids to the plan the same
    judge keeps of the uncorrupted episode, plan-level counts against that plan instead: a
    removal the base makes itself is not held against the judge. With `motion` False, motion
    steps, their labels and their removals are left out of the counts and of `removals`.

    >>> from planverify.records.episode import Label
    >>> plan = ["Driver.PickUp('Mug')", "Driver.Move(1.0)", "Driver.PickUp('Mug')"]
    >>> episode = Episode(id="e", actions=plan, labels=[Label(type="REMOVE", index=2)])
    >>> from planverify.records.result import Verdict
    >>> result = VerificationResult(id="e", verdicts=[
    ...     Verdict(index=0, action=plan[0], verdict="keep"),
    ...     Verdict(index=1, action=plan[1], verdict="remove", evidence="heuristic"),
    ...     Verdict(index=2, action=plan[2], verdict="remove", evidence="proven")])
    >>> table = evidence_levels([episode], [result], mode="iterative")
    >>> [(s.level, s.removals, s.share, s.labels.precision) for s in table.values()]
    [('proven', 1, 0.5, 1.0), ('goal-text', 0, 0.0, None), ('heuristic', 1, 0.5, 0.0)]
    """
    by_id: dict[str, VerificationResult] = {}
    for item in results:
        by_id.setdefault(item.id, item)
    table = {level: LevelScores(level=level) for level in LEVELS}
    seen: set[str] = set()
    for episode in episodes:
        result = by_id.get(episode.id)
        if episode.id in seen or episode.labels is None or result is None:
            continue
        seen.add(episode.id)
        if result.status == "error" or plan_mismatch(episode, result):
            continue
        for level, scores in table.items():
            _add_level(scores, episode, result.only({level}), mode, base, motion)
    total = sum(scores.removals for scores in table.values())
    for scores in table.values():
        scores.share = scores.removals / total if total else None
    return table


def _add_level(
    scores: LevelScores,
    episode: Episode,
    view: VerificationResult,
    mode: Mode,
    base: Mapping[str, Sequence[str]] | None,
    motion: bool,
) -> None:
    """Add one episode's removals at one level (`view`: the result with only those made)."""
    removed = outcome_of(episode, view, mode)[0]
    scored, outcome = (episode, view) if motion else motionless(episode, view)
    counted = removed if motion else outcome_of(scored, outcome, mode, checked=False)[0]
    scores.removals += len(counted)
    scores.labels += tally(scored, mode, counted, [], never, str, []).counts
    clean = clean_plan(episode)
    if clean is not None:
        here = plan_counts(episode.actions, clean, removed, motion=motion)
        scores.plan = here if scores.plan is None else scores.plan + here
    if base is not None and episode.id in base:
        here = plan_counts(episode.actions, base[episode.id], removed, motion=motion)
        scores.excused = here if scores.excused is None else scores.excused + here


def infer_mode(results: Sequence[VerificationResult]) -> Mode:
    """How results were made: their settings say; for records written before results carried
    settings, a run with any `static` stop is static (an iterative run never stops so, and a
    static run whose Judge raised nothing anywhere scores the same either way).

    Raises ValueError when the results mix static and iterative runs.
    """
    modes: set[str] = {r.settings.mode for r in results if r.settings is not None}
    legacy = [r for r in results if r.settings is None]
    if legacy:
        modes.add("static" if any(r.stop_reason == "static" for r in legacy) else "iterative")
    if len(modes) > 1:
        raise ValueError("the results mix static and iterative runs: score them separately")
    return "static" if modes == {"static"} else "iterative"


def _pct(value: float | None) -> str:
    return "n/a" if value is None else f"{100 * value:.1f}"


def _ci(interval: Interval | None) -> str:
    return "" if interval is None else f" [{_pct(interval.low)}, {_pct(interval.high)}]"


def format_report(report: Report) -> str:
    """A plain-text summary of a report: one line per group, percentages with 95% intervals."""
    rows = [("overall", report.overall)]
    rows += [(f"error {k}", v) for k, v in report.by_error.items()]
    rows += [(f"task {k}", v) for k, v in report.by_task.items()]
    if report.without_motion is not None:
        rows.append(("overall without motion", report.without_motion))
    for key, value in (report.plan_level or {}).items():
        rows.append((f"plan level {key.replace('_', ' ')}", value))
    out = [f"mode: {report.mode}, episodes scored: {report.overall.episodes}"]
    if report.trim is not None:
        out.append(f"trim: results read under {report.trim}")
    if report.min_evidence is not None:
        out.append(f"evidence: {BELOW_LEVEL.format(level=report.min_evidence)}")
    for name, s in rows:
        c = s.counts
        out.append(
            f"{name}: tp={c.tp} fp={c.fp} fn={c.fn} "
            f"recall={_pct(s.recall)}{_ci(s.recall_ci)} "
            f"precision={_pct(s.precision)}{_ci(s.precision_ci)} "
            f"f1={_pct(s.f1)}{_ci(s.f1_ci)}"
        )
    for name, ids in (
        ("failed", report.failed),
        ("without result", report.missing),
        ("results without episode", report.unmatched),
        ("without labels", report.unlabelled),
    ):
        if ids:
            out.append(
                f"{name}: {len(ids)} ({', '.join(ids[:5])}{', ...' if len(ids) > 5 else ''})"
            )
    return "\n".join(out)


def episode_under(episode: Episode, trim: TrimPolicy) -> Episode:
    """An annotated episode as a trim policy scores it: the labels that are errors under it
    (`labels_under`), and under `natural` the clean plan those labels make, since the steps only
    `minimal` removes belong to it. A `clean` that maps each policy to its plan (the `natural`
    annotation files) gives the policy's own."""
    labels = episode.labels or []
    kept = labels_under(labels, trim)
    clean = (episode.model_extra or {}).get("clean")
    if len(kept) == len(labels) and not isinstance(clean, dict):
        return episode
    data = episode.model_dump(mode="json", exclude_none=True)
    data["labels"] = [label.model_dump(mode="json", exclude_none=True) for label in kept]
    if isinstance(clean, dict):
        data["clean"] = clean[trim]
    elif trim == "natural":
        data["clean"] = gold_plan(episode.model_copy(update={"labels": kept}))
    return Episode.model_validate(data)


def gold_plan(episode: Episode) -> list[str]:
    """The plan its labels describe: REMOVE-labelled steps dropped, MISSING steps added.

    MISSING steps with the same `after` go in label order.

    >>> from planverify.records.episode import Label
    >>> gold_plan(Episode(id="e", actions=["Driver.Move(1.0)", "Driver.PickUp('Mug')"],
    ...     labels=[Label(type="REMOVE", index=0),
    ...             Label(type="MISSING", after=-1, action="Driver.Open('Fridge')")]))
    ["Driver.Open('Fridge')", "Driver.PickUp('Mug')"]
    """
    labels = labels_of(episode)
    drop = {label.index for label in labels if label.type == "REMOVE"}
    added: dict[int, list[str]] = {}
    for label in labels:
        if label.type == "MISSING" and label.after is not None and label.action is not None:
            added.setdefault(label.after, []).append(label.action)
    out = list(added.get(-1, []))
    for i, line in enumerate(episode.actions):
        if i not in drop:
            out.append(line)
        out += added.get(i, [])
    return out
