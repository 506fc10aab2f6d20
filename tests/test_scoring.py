"""Scoring: static and iterative rules on hand-computed cases, aggregates and bootstrap intervals."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from planverify.metrics import (
    Counts,
    actions_in,
    bootstrap,
    clean_plan,
    common_subsequence_length,
    format_report,
    gold_plan,
    missing_matches,
    motion_step,
    motionless,
    plan_counts,
    same_step,
    score_episode,
    score_iterative,
    score_plan,
    score_results,
    score_static,
    summarize,
)
from planverify.metrics.plan import proposal_errors
from planverify.noise.injected import corrupt_many
from planverify.records.critique import Critique, Flag, Missing
from planverify.records.episode import Episode, Label, Scene, SceneObject
from planverify.records.history import Iteration
from planverify.records.notation import parse_action
from planverify.records.result import Inserted, Verdict, VerificationResult
from planverify.world.mentions import mentions_type, mentions_verb

SAY = "Commander.Say('Make coffee please.')"
PICK = "Driver.PickUp('Mug')"
PUT = "Driver.PutAOnB('Mug', 'CoffeeMachine')"
ON = "Driver.ToggleOn('CoffeeMachine')"
LEFT = "Driver.TurnLeft(90.0)"
RIGHT = "Driver.TurnRight(90.0)"
MOVE = "Driver.Move(0.25)"


def remove(index: int, error: str | None = None) -> Label:
    return Label(type="REMOVE", index=index, error=error)  # type: ignore[arg-type]


def missing(after: int, action: str, error: str | None = "missing_step") -> Label:
    return Label(type="MISSING", after=after, action=action, error=error)  # type: ignore[arg-type]


def episode(actions: list[str], labels: list[Label] | None, **extra: object) -> Episode:
    ep = Episode(id=str(extra.pop("id", "e")), actions=actions, labels=labels, **extra)  # type: ignore[arg-type]
    if labels is not None:
        ep.validate_labels()
    return ep


def flags(*steps: int) -> list[Flag]:
    return [Flag(step=s, action="", reason="flagged") for s in steps]


def result(
    ep: Episode,
    removed: set[int] = frozenset(),  # type: ignore[assignment]
    inserted: list[tuple[int, str]] = (),  # type: ignore[assignment]
    **fields: object,
) -> VerificationResult:
    return VerificationResult(
        id=ep.id,
        original=ep.actions,
        verdicts=[
            Verdict(index=i, action=line, verdict="remove" if i in removed else "keep")
            for i, line in enumerate(ep.actions)
        ],
        inserted=[Inserted(after_index=a, action=line, iteration=1) for a, line in inserted],
        **fields,  # type: ignore[arg-type]
    )


# --------------------------------------------------------------------------- matching


def test_same_step_ignores_instance_numbers_but_not_verbs_or_types() -> None:
    p = parse_action
    assert same_step(p("Driver.PickUp('Mug2')"), p("Driver.PickUp('Mug')"))
    assert same_step(p("Driver.PutAOnB('Mug', 'Sink2')"), p("Driver.PutAOnB('Mug3', 'Sink')"))
    assert not same_step(p("Driver.PickUp('Mug')"), p("Driver.PickUp('Cup')"))
    assert not same_step(p("Driver.PickUp('Mug')"), p("Driver.Open('Mug')"))
    assert not same_step(p("Driver.PutAOnB('Mug', 'Sink')"), p("Driver.PutAOnB('Sink', 'Mug')"))


@pytest.mark.parametrize(
    ("text", "verb", "kind"),
    [
        ("switch on the coffee machine", "ToggleOn", "CoffeeMachine"),
        ("Turn the Coffee Machine on", "ToggleOn", "CoffeeMachine"),
        ("start the coffeemachine", "ToggleOn", "CoffeeMachine"),
        ("the bread was never sliced", "Slice", "Bread"),
        ("cut the tomato", "Slice", "Tomato"),
        ("pour water into the plant", "PourFromAIntoB", "HousePlant"),
        ("place the mug in the sink", "PutAOnB", "Sink"),
        ("grab the knife", "PickUp", "Knife"),
        ("take a knife", "PickUp", "Knife2"),
        ("shut the fridge", "Close", "Fridge"),
        ("turn off the stove", "ToggleOff", "StoveKnob"),
        ("rinse the plate", "Clean", "Plate"),
        ("fill the pot", "Fill", "Pot"),
        ("open the microwave", "Open", "Microwave"),
    ],
)
def test_synonyms_and_type_names(text: str, verb: str, kind: str) -> None:
    assert mentions_verb(text, verb)
    assert mentions_type(text, kind)


def test_names_are_matched_as_words() -> None:
    assert not mentions_type("boil the potato", "Pot")
    assert not mentions_type("take the mugshot", "Mug")
    assert mentions_type("wash the mugs", "Mug")
    assert not mentions_verb("the return of the mug", "PickUp")
    assert not mentions_verb("toggle the coffee machine off", "ToggleOn")


def test_actions_in_text_with_or_without_agent() -> None:
    got = actions_in("do Driver.ToggleOn('Toaster') then Slice('Bread2') and Commander.Say('x')")
    assert [str(a) for a in got] == ["Driver.ToggleOn('Toaster')", "Driver.Slice('Bread2')"]
    assert actions_in("nothing here (really)") == []


def test_missing_critique_matching() -> None:
    on = parse_action(ON)
    assert missing_matches(Missing(description="switch on the coffee machine"), on)
    assert missing_matches(Missing(description="make coffee", action=ON), on)
    assert missing_matches(
        Missing(description="add Driver.ToggleOn('CoffeeMachine2') at the end"), on
    )
    assert not missing_matches(Missing(description="turn on the toaster"), on)
    assert not missing_matches(Missing(description="the coffee machine"), on)  # no verb
    assert not missing_matches(Missing(description="switch it on"), on)  # no object
    put = parse_action("Driver.PutAOnB('BreadSliced', 'Toaster')")
    assert missing_matches(Missing(description="put a slice of bread in the toaster"), put)
    assert not missing_matches(Missing(description="put the bread down"), put)
    move = parse_action("Driver.Move(0.5)")
    assert not missing_matches(Missing(description="move forward"), move)
    assert missing_matches(Missing(description="x", action="Driver.Move(1.0)"), move)


# --------------------------------------------------------------------------- static


def test_static_flags_tp_fn_fp_tn() -> None:
    ep = episode([SAY, PICK, LEFT, RIGHT, PUT], [remove(2, "cancelling_navigation"), remove(3)])
    score = score_static(ep, Critique(flags=flags(2, 4)))
    assert score.counts == Counts(tp=1, fp=1, fn=1, tn=1)
    assert score.found == [0] and score.missed == [1]
    assert score.false_positives == [f"step 5: {PUT}"]
    assert score.by_error == {
        "cancelling_navigation": Counts(tp=1),
        "other": Counts(fn=1),
    }


def test_static_ignores_dialogue_out_of_range_and_repeated_flags() -> None:
    ep = episode([SAY, PICK, PICK], [remove(2, "duplicate")])
    score = score_static(ep, Critique(flags=[*flags(0, 9), *flags(2, 2)]))
    assert score.counts == Counts(tp=1, tn=1)
    assert any("dialogue" in n for n in score.notes)
    assert any("out of range" in n for n in score.notes)


def test_static_missing_critiques() -> None:
    ep = episode([PICK, PUT], [missing(1, ON)])
    found = score_static(
        ep, Critique(missing=[Missing(description="Switch on the coffee machine")])
    )
    assert found.counts == Counts(tp=1, tn=2)
    wrong = score_static(ep, Critique(missing=[Missing(description="Turn on the toaster")]))
    assert wrong.counts == Counts(fp=1, fn=1, tn=2)
    assert wrong.false_positives == ["missing: Turn on the toaster"]


def test_a_label_is_found_once_and_a_critique_finds_one_label() -> None:
    ep = episode([PICK, PUT], [missing(1, ON), missing(1, ON)])
    twice = [Missing(description="turn on the coffee machine")] * 3
    assert score_static(ep, Critique(missing=twice)).counts == Counts(tp=2, fp=1, tn=2)
    one = [Missing(description="turn on the coffee machine")]
    assert score_static(ep, Critique(missing=one)).counts == Counts(tp=1, fn=1, tn=2)


def test_pairing_is_the_largest_one_not_greedy() -> None:
    toaster = "Driver.ToggleOn('Toaster')"
    ep = episode([PICK], [missing(0, ON), missing(0, toaster)])
    critiques = [
        Missing(description="turn on the toaster and the coffee machine"),  # either label
        Missing(description="switch on the coffee machine"),  # only the first
    ]
    score = score_static(ep, Critique(missing=critiques))
    assert score.counts == Counts(tp=2, tn=1)


def test_static_twin_rule() -> None:
    toggle = "Driver.ToggleOn('Toaster')"
    ep = episode([toggle, toggle], [remove(1, "duplicate")])
    assert score_static(ep, Critique(flags=flags(0))).counts == Counts(tp=1)
    # dialogue between identical steps keeps them in one run
    ep = episode([toggle, SAY, toggle], [remove(2, "duplicate")])
    assert score_static(ep, Critique(flags=flags(0))).counts == Counts(tp=1)
    # another step between: removing the first gives another plan
    ep = episode([MOVE, PICK, MOVE], [remove(2)])
    assert score_static(ep, Critique(flags=flags(0))).counts == Counts(fp=1, fn=1, tn=1)
    # flagging both is one TP and one FP
    ep = episode([toggle, toggle], [remove(1)])
    assert score_static(ep, Critique(flags=flags(0, 1))).counts == Counts(tp=1, fp=1)


def test_empty_and_all_dialogue_episodes() -> None:
    empty = score_static(episode([], []), Critique())
    assert empty.counts == Counts()
    assert (empty.counts.recall, empty.counts.precision, empty.counts.f1) == (None, None, None)
    talk = episode([SAY, "Driver.Say('ok')"], [])
    assert score_static(talk, Critique(flags=flags(0, 1))).counts == Counts()
    # a missing step before the first line of an all-dialogue plan
    ep = episode([SAY], [missing(-1, PICK)])
    score = score_iterative(ep, result(ep, inserted=[(-1, "Driver.PickUp('Mug2')")]))
    assert score.counts == Counts(tp=1)


def test_clean_episode_flags_are_false_positives() -> None:
    score = score_static(episode([PICK, PUT], []), Critique(flags=flags(1)))
    assert score.counts == Counts(fp=1, tn=1)
    assert score.counts.recall is None and score.counts.precision == 0.0


# --------------------------------------------------------------------------- iterative


def test_iterative_removals() -> None:
    ep = episode([SAY, PICK, LEFT, RIGHT, PUT], [remove(2), remove(3)])
    score = score_iterative(ep, result(ep, removed={2, 4}))
    assert score.counts == Counts(tp=1, fp=1, fn=1, tn=1)
    assert score_iterative(ep, result(ep, removed={0})).counts == Counts(fn=2, tn=2)


def test_iterative_twin_rule() -> None:
    toggle = "Driver.ToggleOn('Toaster')"
    ep = episode([toggle, toggle, PICK], [remove(1, "duplicate")])
    score = score_iterative(ep, result(ep, removed={0}))
    assert score.counts == Counts(tp=1, tn=1) and score.false_positives == []
    # a twin serves one label only; the nearest twin is used
    ep = episode([toggle, toggle, toggle], [remove(1), remove(2)])
    assert score_iterative(ep, result(ep, removed={0})).counts == Counts(tp=1, fn=1)
    ep = episode([toggle, SAY, toggle, toggle], [remove(0), remove(3)])
    assert score_iterative(ep, result(ep, removed={2})).counts == Counts(tp=1, fn=1)


def test_iterative_insertions() -> None:
    ep = episode([PICK, PUT], [missing(1, ON), missing(-1, "Driver.Open('Cabinet')")])
    got = score_iterative(
        ep,
        result(
            ep,
            inserted=[
                (1, "Driver.ToggleOn('CoffeeMachine2')"),
                (0, "Driver.Clean('Mug')"),
                (-1, "Driver.Open('Cabinet3')"),
            ],
        ),
    )
    assert got.counts == Counts(tp=2, fp=1, tn=2)
    assert got.false_positives == ["inserted: Driver.Clean('Mug')"]
    none = score_iterative(ep, result(ep))
    assert none.counts == Counts(fn=2, tn=2)
    assert none.by_error == {"missing_step": Counts(fn=2)}


def test_failed_or_mismatched_results_find_nothing() -> None:
    ep = episode([PICK, LEFT, RIGHT], [remove(1), remove(2)])
    failed = VerificationResult.failed(ep, "rate limited")
    for mode in ("static", "iterative"):
        score = score_episode(ep, failed, mode=mode)  # type: ignore[arg-type]
        assert score.status == "error" and score.counts == Counts(fn=2)
        assert "rate limited" in score.notes[0]
    other = result(ep, removed={1, 2})
    other.original = [PICK]
    assert score_iterative(ep, other).status == "error"


def test_unlabelled_episode_cannot_be_scored() -> None:
    with pytest.raises(ValueError, match="no labels"):
        score_static(episode([PICK], None), Critique())


# --------------------------------------------------------------------------- static via results


def test_static_mode_reads_the_first_pass_of_the_history() -> None:
    ep = episode([PICK, LEFT, RIGHT, PUT], [remove(1), remove(2), missing(3, ON)])
    first = Critique(flags=flags(1, 2), missing=[Missing(description="start the coffee machine")])
    later = Critique(flags=flags(3))
    res = result(
        ep,
        removed={1, 2},
        history=[Iteration(iteration=1, critique=first), Iteration(iteration=2, critique=later)],
        stop_reason="static",
    )
    assert score_episode(ep, res, mode="static").counts == Counts(tp=3, tn=2)
    # without a history, the verdicts give the flags
    bare = result(ep, removed={1, 3})
    score = score_episode(ep, bare, mode="static")
    assert score.counts == Counts(tp=1, fp=1, fn=2, tn=1)
    assert any("verdicts" in n for n in score.notes)


# --------------------------------------------------------------------------- reports


def test_report_pairs_by_id_and_lists_what_was_not_scored() -> None:
    a = episode(
        [PICK, LEFT, RIGHT], [remove(1, "cancelling_navigation"), remove(2)], id="a", task="Coffee"
    )
    b = episode([PICK, PUT], [], id="b", task="Coffee")
    c = episode([PICK], [missing(0, ON)], id="c", task="Toast")
    d = episode([PICK], None, id="d")
    e = episode([PICK], [], id="e")
    results = [
        result(a, removed={1}),
        result(b, removed={1}),
        VerificationResult.failed(c, "boom"),
        result(d),
        result(a, removed=set()),  # repeated id: ignored
        VerificationResult(id="zzz"),
    ]
    report = score_results([a, b, c, d, e, a], results, mode="iterative", resamples=50)
    assert report.overall.counts == Counts(tp=1, fp=1, fn=2, tn=2)
    assert report.overall.episodes == 3
    assert report.overall.recall == pytest.approx(1 / 3)
    assert report.overall.precision == pytest.approx(1 / 2)
    assert report.overall.f1 == pytest.approx(2 / 5)
    assert report.failed == ["c"]
    assert report.missing == ["e"]
    assert report.unmatched == ["zzz"]
    assert report.unlabelled == ["d"]
    assert len(report.notes) == 2  # a repeated result id and a repeated episode id
    assert set(report.by_error) == {"cancelling_navigation", "other", "missing_step"}
    assert report.by_error["other"].counts == Counts(fn=1)
    assert report.by_error["cancelling_navigation"].recall == 1.0
    assert report.by_error["cancelling_navigation"].precision is None  # FPs have no type
    assert report.by_task["Coffee"].counts == Counts(tp=1, fp=1, fn=1, tn=2)
    assert report.by_task["Toast"].counts == Counts(fn=1)
    text = format_report(report)
    assert "overall: tp=1 fp=1 fn=2" in text and "failed: 1 (c)" in text


def test_a_perfect_verifier_scores_one_on_corrupted_episodes() -> None:
    plan = [
        SAY,
        "Driver.Move(1.0)",
        PICK,
        "Driver.TurnLeft(90.0)",
        PUT,
        ON,
        "Driver.Slice('Bread')",
    ]
    scene = Scene(
        objects=[
            SceneObject(id="CounterTop|1", type="CounterTop", receptacle=True),
            SceneObject(id="Cabinet|1", type="Cabinet", receptacle=True, openable=True),
            SceneObject(id="Toaster|1", type="Toaster", receptacle=True, toggleable=True),
            SceneObject(id="Apple|1", type="Apple", pickupable=True, parent=["CounterTop"]),
        ]
    )
    clean = [Episode(id=f"p{i}", actions=plan, scene=scene, task="Coffee") for i in range(40)]
    annotated = list(corrupt_many(clean, seed=3, max_steps=None))
    assert any(ep.labels for ep in annotated)
    iterative, static = [], []
    for ep in annotated:
        labels = ep.labels or []
        drop = {lab.index for lab in labels if lab.type == "REMOVE"}
        adds = [(lab.after, lab.action) for lab in labels if lab.type == "MISSING"]
        iterative.append(result(ep, removed=drop, inserted=adds))  # type: ignore[arg-type]
        critique = Critique(
            flags=flags(*sorted(drop)),
            missing=[Missing(description="needed", action=action) for _, action in adds],
        )
        static.append(result(ep, removed=drop, history=[Iteration(iteration=1, critique=critique)]))
    for mode, results in (("iterative", iterative), ("static", static)):
        report = score_results(  # every label removed: the minimal reading
            annotated,
            results,
            mode=mode,
            resamples=100,
            trim="minimal",  # type: ignore[arg-type]
        )
        c = report.overall.counts
        assert c.fp == c.fn == 0 and c.tp == sum(len(ep.labels or []) for ep in annotated)
        assert report.overall.recall == report.overall.precision == report.overall.f1 == 1.0
        assert report.overall.recall_ci is not None and report.overall.recall_ci.low == 1.0


# --------------------------------------------------------------------------- metrics and intervals


def test_zero_denominators() -> None:
    assert Counts().recall is None and Counts().precision is None and Counts().f1 is None
    assert Counts(fp=2).recall is None and Counts(fp=2).precision == 0.0
    assert Counts(fp=2).f1 == 0.0
    assert Counts(fn=1).precision is None and Counts(fn=1).recall == 0.0
    assert Counts(tp=2, fp=2, fn=0).f1 == pytest.approx(2 * 0.5 * 1.0 / 1.5)


def sample_counts(n: int, seed: int) -> list[tuple[int, int, int]]:
    rng = random.Random(seed)
    return [(rng.randint(0, 3), rng.randint(0, 1), rng.randint(0, 2)) for _ in range(n)]


def test_bootstrap_brackets_the_estimate_and_is_deterministic() -> None:
    data = sample_counts(60, 7)
    tp, fp, fn = (sum(col) for col in zip(*data, strict=True))
    point = Counts(tp=tp, fp=fp, fn=fn)
    ci = bootstrap(data, seed=11)
    assert ci == bootstrap(data, seed=11)
    assert ci != bootstrap(data, seed=12)
    for name in ("recall", "precision", "f1"):
        interval = ci[name]
        value = getattr(point, name)
        assert interval is not None and interval.low < value < interval.high
        assert interval.high - interval.low < 0.3
    wider = bootstrap(data, seed=11, confidence=0.99)["recall"]
    assert wider is not None and ci["recall"] is not None
    assert wider.low <= ci["recall"].low and wider.high >= ci["recall"].high


def test_bootstrap_edge_cases() -> None:
    assert bootstrap([]) == {"recall": None, "precision": None, "f1": None}
    assert bootstrap([(1, 0, 0)], resamples=0)["recall"] is None
    only_fp = bootstrap([(0, 1, 0), (0, 0, 0)], resamples=50)
    assert only_fp["recall"] is None
    assert only_fp["precision"] is not None and only_fp["precision"].high == 0.0
    one = bootstrap([(2, 1, 1)], resamples=20)["recall"]
    assert one is not None and one.low == one.high == pytest.approx(2 / 3)


def test_summarize_per_error_type_has_recall_only() -> None:
    s = summarize([Counts(tp=1), Counts(fn=1)], typed=False, resamples=50)
    assert s.recall == 0.5 and s.precision is None and s.f1 is None
    assert s.recall_ci is not None and s.precision_ci is None


def test_gold_plan_applies_labels() -> None:
    ep = episode(
        [SAY, LEFT, RIGHT, PICK, PUT],
        [remove(1), remove(2), missing(-1, "Driver.Open('Cabinet')"), missing(4, ON)],
    )
    assert gold_plan(ep) == ["Driver.Open('Cabinet')", SAY, PICK, PUT, ON]


def test_the_readme_worked_example() -> None:
    from planverify.records.result import Inserted, Verdict, VerificationResult

    plan = [
        "Driver.PickUp('Mug')",
        "Driver.Move(0.5)",
        "Driver.Move(0.5)",
        "Driver.PutAOnB('Mug', 'Sink')",
    ]
    episode = Episode(
        id="w",
        actions=plan,
        labels=[
            Label(type="REMOVE", index=2, error="duplicate"),
            Label(
                type="MISSING", after=3, action="Driver.ToggleOn('Faucet')", error="missing_step"
            ),
        ],
    )

    def result(inserted: str) -> VerificationResult:
        return VerificationResult(
            id="w",
            original=plan,
            refined=[plan[0], plan[2], plan[3], inserted],
            verdicts=[
                Verdict(index=i, action=a, verdict="remove" if i == 1 else "keep")
                for i, a in enumerate(plan)
            ],
            inserted=[Inserted(after_index=3, action=inserted, iteration=1)],
            stop_reason="no_objections",
        )

    good = score_iterative(episode, result("Driver.ToggleOn('Faucet')")).counts
    assert (good.tp, good.fp, good.fn) == (2, 0, 0)
    wrong = score_iterative(episode, result("Driver.ToggleOn('Microwave')")).counts
    assert (wrong.tp, wrong.fp, wrong.fn) == (1, 1, 1)


# --------------------------------------------------------------------------- plan level

SHELF = "Driver.PutAOnB('Mug', 'Shelf')"
OOPS = "Driver.Say('oops')"
TOAST = "Driver.ToggleOn('Toaster')"


def test_lcs_and_plan_counts_by_hand() -> None:
    assert common_subsequence_length("ABCBDAB", "BDCABA") == 4
    assert common_subsequence_length([], []) == 0 and common_subsequence_length(["a"], ["b"]) == 0
    clean = [PICK, PUT]
    noisy = [PICK, SHELF, OOPS, PICK, PUT]
    # either of the two pick-ups can go with the wrong put-down: the plan comes out the same
    assert plan_counts(noisy, clean, {1, 3}) == Counts(tp=2, tn=2)
    assert plan_counts(noisy, clean, {0, 1}) == Counts(tp=2, tn=2)
    # the remark is dialogue: removing it is ignored, not counted
    assert plan_counts(noisy, clean, {1, 2, 3}) == Counts(tp=2, tn=2)
    # removing the needed put-down shortens the common subsequence: one FP, an error left
    assert plan_counts(noisy, clean, {1, 4}) == Counts(tp=1, fp=1, fn=1, tn=1)
    assert plan_counts(noisy, clean, set()) == Counts(fn=2, tn=2)
    assert plan_counts(noisy, clean, {0, 1, 3, 4}) == Counts(tp=2, fp=2, tn=0)
    # steps compare as canonical lines
    assert plan_counts(['Driver.PickUp("Mug")', PICK], [PICK], {1}) == Counts(tp=1, tn=1)


def test_plan_level_equivalent_removals_score_the_same_where_labels_do_not() -> None:
    # labels on the wrong put-down and the re-pickup; removing the first pick-up instead
    # leaves the same plan, but it is no twin of the labelled one (steps lie between them)
    ep = episode([PICK, SHELF, OOPS, PICK, PUT], [remove(1), remove(3)], clean=[PICK, PUT])
    other = score_episode(ep, result(ep, removed={0, 1}), mode="iterative")
    assert other.counts == Counts(tp=1, fp=1, fn=1, tn=1)
    assert other.plan_level == {
        "with_motion": Counts(tp=2, tn=2),
        "without_motion": Counts(tp=2, tn=2),
    }
    labelled = score_episode(ep, result(ep, removed={1, 3}), mode="iterative")
    assert labelled.counts == Counts(tp=2, tn=2) and labelled.plan_level == other.plan_level


def test_plan_level_identical_steps_apart_are_the_same_only_without_motion() -> None:
    ep = episode([TOAST, MOVE, TOAST], [remove(2, "duplicate")], clean=[TOAST, MOVE])
    first = score_episode(ep, result(ep, removed={0}), mode="iterative")
    assert first.counts == Counts(fp=1, fn=1, tn=1)
    # with motion, [Move, Toast] is not the clean plan; without, both leave [Toast]
    assert first.plan_level == {
        "with_motion": Counts(fp=1, fn=1, tn=1),
        "without_motion": Counts(tp=1, tn=1),
    }
    # label level: twins once the move between them is gone
    assert first.without_motion == Counts(tp=1)
    last = score_episode(ep, result(ep, removed={2}), mode="iterative")
    assert last.plan_level == {
        "with_motion": Counts(tp=1, tn=2),
        "without_motion": Counts(tp=1, tn=1),
    }


def test_plan_level_missing_steps_and_insertions() -> None:
    clean = [PICK, PUT, ON]
    ep = episode([PICK, SHELF, PICK, PUT], [remove(1), remove(2), missing(3, ON)], clean=clean)
    fine = result(ep, removed={0, 1}, inserted=[(3, "Driver.ToggleOn('CoffeeMachine2')")])
    assert score_plan(ep, fine, mode="iterative") == Counts(tp=3, tn=2)
    wrong = result(ep, removed={1, 2}, inserted=[(3, TOAST)])
    assert score_plan(ep, wrong, mode="iterative") == Counts(tp=2, fp=1, fn=1, tn=2)
    # the insertion no label asks for, and the label no insertion answers
    assert proposal_errors(ep, wrong, mode="iterative") == ([TOAST], [parse_action(ON)], 0)
    assert proposal_errors(ep, fine, mode="iterative") == ([], [], 1)
    critique = Critique(
        flags=flags(1, 2), missing=[Missing(description="switch on the coffee machine")]
    )
    static = result(ep, history=[Iteration(iteration=1, critique=critique)])
    assert score_plan(ep, static, mode="static") == Counts(tp=3, tn=2)
    failed = VerificationResult(id="e", status="error", error="boom")
    assert score_plan(ep, failed, mode="iterative") == Counts(fn=3, tn=2)
    assert score_plan(episode([PICK], []), fine, mode="iterative") is None  # no clean plan


def test_motion_is_left_out_of_plans_labels_and_proposals() -> None:
    plan = [PICK, LEFT, RIGHT, MOVE, PUT]
    ep = episode(
        plan,
        [remove(1, "cancelling_navigation"), remove(2, "cancelling_navigation")],
        clean=[PICK, MOVE, PUT],
    )
    # the loop removes the unlabelled move, keeps the turns, inserts a motion step
    res = result(ep, removed={3}, inserted=[(0, "Driver.Move(1.0)")])
    score = score_episode(ep, res, mode="iterative")
    assert score.counts == Counts(fp=2, fn=2, tn=2)
    assert score.without_motion == Counts(tn=2)
    assert score.plan_level == {
        "with_motion": Counts(fp=2, fn=2, tn=2),
        "without_motion": Counts(tn=2),
    }
    plain, outcome = motionless(ep, res)
    assert plain.actions == [PICK, PUT] and plain.labels == []
    assert [v.index for v in outcome.verdicts] == [0, 1] and outcome.inserted == []
    # a MISSING label after a motion step moves to the step before it
    ep = episode([PICK, MOVE, PUT], [missing(1, ON), missing(2, "Driver.TurnLeft(90.0)")])
    plain, _ = motionless(ep, result(ep))
    assert [(lab.after, lab.action) for lab in plain.labels or []] == [(0, ON)]


def test_motionless_renumbers_the_first_judge_pass() -> None:
    ep = episode([MOVE, PICK, SHELF], [remove(2)])
    critique = Critique(
        flags=flags(0, 2),
        missing=[Missing(description="x", action="Driver.Move(1.0)"), Missing(description="y")],
    )
    res = result(ep, history=[Iteration(iteration=1, critique=critique)])
    _, outcome = motionless(ep, res)
    first = outcome.history[0].critique
    assert [f.step for f in first.flags] == [1] and [m.description for m in first.missing] == ["y"]
    score = score_episode(ep, res, mode="static")
    assert score.counts == Counts(tp=1, fp=3, tn=1)  # the move and two critiques
    assert score.without_motion == Counts(tp=1, fp=1, tn=1)


def test_report_keeps_overall_and_adds_plan_level_only_with_clean_plans() -> None:
    with_clean = episode(
        [PICK, SHELF, PICK, PUT], [remove(1), remove(2)], clean=[PICK, PUT], id="a"
    )
    without = episode([PICK, PICK], [remove(1)], id="b")
    results = [result(with_clean, removed={0, 1}), result(without, removed={1})]
    report = score_results([with_clean, without], results, mode="iterative", resamples=50)
    assert report.overall.counts == Counts(tp=2, fp=1, fn=1, tn=2)  # label level, unchanged
    assert report.plan_level is not None
    assert report.plan_level["with_motion"].episodes == 1
    assert report.plan_level["with_motion"].counts == Counts(tp=2, tn=2)
    assert (
        report.without_motion is not None and report.without_motion.counts == report.overall.counts
    )
    dumped = report.model_dump(mode="json")
    assert {"mode", "overall", "plan_level", "without_motion"} <= set(dumped)
    assert "plan level with motion" in format_report(report)
    alone = score_results([without], results[1:], mode="iterative", resamples=0)
    assert alone.plan_level is None


def test_clean_must_be_a_plan() -> None:
    with pytest.raises(ValueError, match="clean must be a list"):
        clean_plan(episode([PICK], [], clean="Driver.PickUp('Mug')"))
    with pytest.raises(ValueError, match="clean"):
        clean_plan(episode([PICK], [], clean=["not an action"]))
    assert clean_plan(episode([PICK], [], clean=[f" {PICK} "])) == [PICK]
    broken = episode([PICK], [], clean=["not an action"])
    score = score_episode(broken, result(broken), mode="iterative")
    assert score.plan_level is None and "clean" in score.notes[0]


PLAN_VOCABULARY = [PICK, PUT, SHELF, ON, TOAST, MOVE, LEFT, RIGHT, OOPS, SAY]


def scored_lines(lines: list[str], motion: bool) -> list[str]:
    steps = [parse_action(line) for line in lines]
    return [
        str(step) for step in steps if not step.is_dialogue and (motion or not motion_step(step))
    ]


@settings(max_examples=300)
@given(
    noisy=st.lists(st.sampled_from(PLAN_VOCABULARY), max_size=12),
    clean=st.lists(st.sampled_from(PLAN_VOCABULARY), max_size=12),
    removed=st.sets(st.integers(min_value=0, max_value=11)),
    motion=st.booleans(),
)
def test_plan_counts_invariants(
    noisy: list[str], clean: list[str], removed: set[int], motion: bool
) -> None:
    c = plan_counts(noisy, clean, removed, motion=motion)
    everything, gold = scored_lines(noisy, motion), scored_lines(clean, motion)
    kept = scored_lines([line for i, line in enumerate(noisy) if i not in removed], motion)
    assert min(c.tp, c.fp, c.fn, c.tn) >= 0
    assert c.tp + c.fp == len(everything) - len(kept)  # every scored removal counts once
    assert c.tp + c.fn == len(everything) - common_subsequence_length(
        everything, gold
    )  # the errors
    assert c.tn == common_subsequence_length(kept, gold)
    # move each removal to an identical neighbour: same kept plan, same counts
    moved = set()
    for i in sorted(removed):
        j = i + 1
        if j < len(noisy) and noisy[j] == noisy[i] and j not in removed and j not in moved:
            moved.add(j)
        else:
            moved.add(i)
    assert plan_counts(noisy, clean, moved, motion=motion) == c
