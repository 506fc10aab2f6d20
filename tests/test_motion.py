"""Motion that changes nothing: the rules Judge removes it with evidence `proven`, and keeps
motion that moves the Driver anywhere a later step is taken; certify accepts a model Judge's
flags on it."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from planverify.agents.rules import critique_of
from planverify.records.critique import Critique, Flag
from planverify.records.notation import parse_action
from planverify.world import Grounding
from planverify.world.certify import certify_flags
from planverify.world.repair import Review, review
from planverify.world.rules import Pose, net_motion, poses

from .test_repair import BREW, COFFEE, KITCHEN, judge, removed

SAY = "Commander.Say('the mug is by the toaster')"
GROUNDING = Grounding(scene=KITCHEN, spec=COFFEE)


def evidence(plan: Sequence[str], verdicts: Review) -> dict[int, str | None]:
    return {f.step: f.evidence for f in critique_of(plan, verdicts, GROUNDING).flags}


def gone(plan: Sequence[str]) -> list[int]:
    """The steps the rules Judge removes, each checked to be `proven`."""
    verdicts = judge(plan)
    levels = evidence(plan, verdicts)
    assert set(levels.values()) <= {"proven"}, levels
    return sorted(levels)


@pytest.mark.parametrize(
    ("motion", "expected"),
    [
        # a move and the move back with only dialogue between (87 such pairs in the shared games)
        (["Driver.Move(-0.25)", SAY, "Driver.Move(0.25)"], [0, 2]),
        (["Driver.TurnLeft(90.0)", SAY, SAY, "Driver.TurnRight(90.0)"], [0, 3]),
        # a turn by a multiple of 360 degrees
        (["Driver.TurnRight(360.0)"], [0]),
        (["Driver.TurnLeft(720.0)"], [0]),
        (["Driver.Move(0.0)"], [0]),
        # a move and the move back with other motion between whose net they leave: translations
        # commute with translations, turns with turns
        (["Driver.Move(0.5)", "Driver.Move(1.0)", "Driver.Move(-0.5)"], [0, 2]),
        (["Driver.TurnLeft(90.0)", "Driver.TurnLeft(90.0)", "Driver.TurnRight(90.0)"], [1, 2]),
        (["Driver.Move(1.0)", "Driver.TurnLeft(360.0)", "Driver.Move(-1.0)"], [0, 1, 2]),
        (["Driver.Move(0.5)", "Driver.TurnLeft(360.0)", "Driver.TurnLeft(90.0)", SAY], [1]),
        # a run mixing moves and turns that nets to zero: four sides of a square
        (["Driver.Move(1.0)", "Driver.TurnLeft(90.0)"] * 4, list(range(8))),
        (
            [
                "Driver.TurnLeft(180.0)",
                "Driver.Move(1.0)",
                SAY,
                "Driver.TurnRight(180.0)",
                "Driver.Move(1.0)",
            ],
            [0, 1, 3, 4],
        ),
    ],
)
def test_motion_that_changes_no_later_pose_goes_as_proven(
    motion: list[str], expected: list[int]
) -> None:
    assert gone([*motion, *BREW]) == expected


@pytest.mark.parametrize(
    "motion",
    [
        ["Driver.Move(0.5)", "Driver.Move(-0.25)"],
        ["Driver.TurnLeft(90.0)", "Driver.TurnLeft(90.0)"],
        ["Driver.Move(1.0)", SAY, "Driver.TurnLeft(90.0)", "Driver.Move(1.0)"],
        # translation and rotation do not commute: this ends a metre off
        [
            "Driver.Move(1.0)",
            "Driver.TurnLeft(90.0)",
            "Driver.Move(-1.0)",
            "Driver.TurnRight(90.0)",
        ],
        # a turn and the turn back around a move: the Driver ends a metre to the left
        ["Driver.TurnLeft(90.0)", "Driver.Move(1.0)", "Driver.TurnRight(90.0)"],
        # a move and the move back around a turn
        ["Driver.Move(1.0)", "Driver.TurnLeft(90.0)", "Driver.Move(-1.0)"],
    ],
)
def test_motion_that_moves_the_driver_stays(motion: list[str]) -> None:
    assert removed(judge([*motion, *BREW])) == []


def test_a_move_and_its_reverse_around_an_interaction_stay() -> None:
    # the walk to the mug and back: the pick-up is made from where the move led
    plan = ["Driver.Move(1.0)", BREW[0], "Driver.Move(-1.0)", *BREW[1:]]
    assert removed(judge(plan)) == []


def test_the_walk_around_a_removed_detour_goes_only_when_it_nets_to_zero() -> None:
    detour = ["Driver.PickUp('Apple')", "Driver.PutAOnB('Apple', 'DiningTable')"]
    plan = ["Driver.Move(1.0)", *detour, SAY, "Driver.Move(-1.0)", *BREW]
    verdicts = judge(plan)
    assert sorted(s for r in verdicts.removals for s in r.steps) == [0, 1, 2, 4]
    # the walk rests on the detour's removal: as sure as that (here proven by the goal)
    motion = next(r for r in verdicts.removals if 0 in r.steps)
    assert motion.uses_goal and motion.known
    # a walk there and not back stays (no guess at which motion led to the detour)
    plan = ["Driver.Move(1.0)", *detour, "Driver.Move(-0.5)", *BREW]
    assert sorted(s for r in judge(plan).removals for s in r.steps) == [1, 2]


def test_the_whole_run_goes_before_pairs_inside_it_and_the_choice_is_deterministic() -> None:
    plan = ["Driver.Move(1.0)", "Driver.Move(-0.5)", SAY, "Driver.Move(0.5)", "Driver.Move(-1.0)"]
    verdicts = judge([*plan, *BREW])
    assert removed(verdicts) == [(0, 1, 3, 4)]
    assert verdicts.removals[0].reason == (
        "steps 1, 2, 4, 5 (Driver.Move(1.0); Driver.Move(-0.5); Driver.Move(0.5); "
        "Driver.Move(-1.0)), with only dialogue between them, bring the Driver back to where it "
        "stood, facing the same way: every later pose is the same"
    )
    # three moves of which two cancel: the adjacent pair goes, the first move stays
    assert removed(
        judge(["Driver.Move(0.25)", "Driver.Move(0.25)", "Driver.Move(-0.25)", *BREW])
    ) == [(1, 2)]


def test_the_reasons_name_each_form() -> None:
    turn = judge(["Driver.TurnRight(360.0)", *BREW]).removals[0].reason
    assert turn == (
        "Driver.TurnRight(360.0) (step 1) turns the Driver to face as it did: every later pose "
        "is the same"
    )
    pair = judge(["Driver.Move(0.5)", "Driver.Move(1.0)", "Driver.Move(-0.5)", *BREW])
    assert pair.removals[0].reason.startswith(
        "Driver.Move(0.5) is undone by Driver.Move(-0.5) (steps 1, 3), and the motion between"
    )
    adjacent = judge(["Driver.Move(0.5)", "Driver.Move(-0.5)", *BREW]).removals[0].reason
    assert "undone by the next step" in adjacent


def test_the_rules_judge_removes_nothing_more_from_its_own_repair() -> None:
    plan = [
        "Driver.Move(0.25)",
        "Driver.TurnLeft(90.0)",
        SAY,
        "Driver.TurnRight(90.0)",
        "Driver.Move(0.25)",
        "Driver.TurnLeft(360.0)",
        *BREW,
    ]
    verdicts = judge(plan)
    assert removed(verdicts) == [(1, 3), (5,)]
    assert removed(judge(verdicts.repaired(plan))) == []


def test_poses_compose_translation_and_rotation_in_order() -> None:
    square = [parse_action(s) for s in ["Driver.Move(1.0)", "Driver.TurnLeft(90.0)"] * 4]
    assert poses(square)[-1] == Pose()
    off = [
        parse_action(s)
        for s in [
            "Driver.Move(1.0)",
            "Driver.TurnLeft(90.0)",
            "Driver.Move(-1.0)",
            "Driver.TurnRight(90.0)",
        ]
    ]
    assert poses(off)[-1] == Pose(1.0, -1.0, 0.0)
    assert net_motion(off) == (1.41, 0)


# ---------------------------------------------------------------------------- certify

PLAN = [
    "Driver.Move(-0.25)",
    SAY,
    "Driver.Move(0.25)",
    "Driver.TurnRight(360.0)",
    "Driver.Move(1.0)",
    "Driver.PickUp('Apple')",
    "Driver.PutAOnB('Apple', 'DiningTable')",
    "Driver.Move(-1.0)",
    *BREW,
]


def test_certify_accepts_a_model_judges_flags_on_motion_that_changes_nothing() -> None:
    for steps in ([0, 2], [3], [4, 5, 6, 7]):  # the last: a detour with the walk to it and back
        critique = Critique(flags=[Flag(step=s, action=PLAN[s], reason="no-op") for s in steps])
        kept, vetoes, _ = certify_flags(PLAN, critique, GROUNDING)
        assert ([f.step for f in kept.flags], vetoes) == (steps, [])


def test_a_reverse_brought_next_by_removals_is_not_called_the_next_step() -> None:
    from .test_repair import COFFEE, KITCHEN

    # the faucet starts off: switching it off changes nothing and goes, then the moves meet
    plan = ["Driver.Move(1.0)", "Driver.ToggleOff('Faucet')", "Driver.Move(-1.0)"]
    reasons = [r.reason for r in review(plan, scene=KITCHEN, spec=COFFEE).removals if 0 in r.steps]
    assert reasons and all("the next step" not in reason for reason in reasons), reasons
