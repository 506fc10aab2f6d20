"""The Judge-output parser: format variants, the safety rules, real model outputs, properties.

The safety rules every test here leans on:
1. a flag is tied to a real step or dropped with a reason, never moved to another step;
2. dialogue (Say) is never flagged;
3. no input makes the parser raise;
4. `#MISSING: none` adds nothing, and a MISSING naming an action outside the notation keeps its
   description without an action and records why.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from planverify.agents.parsing import (
    StepResolver,
    add_flag,
    add_missing,
    canonical,
    find_action,
    parse_judge_text,
    strip_reasoning,
)
from planverify.records.critique import Critique
from planverify.records.notation import parse_action

PLAN = [
    "Driver.Say('what should I do?')",  # 1
    "Commander.Say('make coffee')",  # 2
    "Driver.Move(1.0)",  # 3
    "Driver.Move(-1.0)",  # 4
    "Driver.PickUp('Mug')",  # 5
    "Driver.TurnLeft(90.0)",  # 6
    "Driver.PutAOnB('Mug', 'CoffeeMachine')",  # 7
    "Driver.TurnLeft(90.0)",  # 8
]
DIALOGUE = "is dialogue, which is never removed"
PLACEHOLDER = "template placeholder"
PLACEHOLDER_WHY = "echoed template placeholder, not content"
ANNOTATED = "ANNOTATION: undone by step 3. #REMOVE: cancels step 3"


def flagged(text: str, plan: list[str] = PLAN) -> dict[int, str]:
    """1-based step -> reason, for the flags the parser finds."""
    return {f.step + 1: f.reason for f in parse_judge_text(text, plan).flags}


def whys(critique: Critique) -> list[str]:
    return [d.why for d in critique.dropped]


def assert_sound(critique: Critique, plan: list[str]) -> None:
    """Rules 1 and 2: every flag names a real, non-dialogue step, as it reads in the plan."""
    steps = [f.step for f in critique.flags]
    assert len(steps) == len(set(steps)), "at most one flag per step"
    for flag in critique.flags:
        assert 0 <= flag.step < len(plan)
        assert plan[flag.step] == flag.action
        assert not parse_action(plan[flag.step]).is_dialogue
        assert flag.reason.strip()
    assert all(d.why for d in critique.dropped)


# --- format variants: every answer below means "remove step 4" -------------------------------


@pytest.mark.parametrize(
    "answer",
    [
        f"ACTION: 4. Driver.Move(-1.0)\n{ANNOTATED}",
        f"ACTION: 4) Driver.Move(-1.0)\n{ANNOTATED}",
        f"ACTION: Step 4: Driver.Move(-1.0)\n{ANNOTATED}",
        f"ACTION: [4] Driver.Move(-1.0)\n{ANNOTATED}",
        f"ACTION 4: Driver.Move(-1.0)\n{ANNOTATED}",
        f"ACTION #4: Driver.Move(-1.0)\n{ANNOTATED}",
        f"ACTION (4): Driver.Move(-1.0)\n{ANNOTATED}",
        f"ACTION - 4 - Driver.Move(-1.0)\n{ANNOTATED}",
        f"4. ACTION: Driver.Move(-1.0)\n{ANNOTATED}",
        f"Step 4: Driver.Move(-1.0)\n{ANNOTATED}",
        f"4. Driver.Move(-1.0)\n{ANNOTATED}",
        f"4) Driver.Move(-1.0)\n{ANNOTATED}",
        f"[4] Driver.Move(-1.0)\n{ANNOTATED}",
        f"ACTION: Driver.Move(-1.0)\n{ANNOTATED}",  # no number: the action is unique
        f"ACTION: 4.\n{ANNOTATED}",  # no action text: the number is in range
        f"Step 4\nACTION: Driver.Move(-1.0)\n{ANNOTATED}",  # number on a line of its own
        f"ACTION: 4.\n\nDriver.Move(-1.0)\n\n{ANNOTATED}",
        "action: 4. driver.Move(-1.0)\nannotation: undone. #remove: cancels step 3",
    ],
    ids=lambda s: s.splitlines()[0],
)
def test_numbering_styles(answer: str) -> None:
    assert flagged(answer) == {4: "cancels step 3"}


@pytest.mark.parametrize(
    "answer",
    [
        "**ACTION:** 4. `Driver.Move(-1.0)`\n**ANNOTATION:** undone. **#REMOVE:** cancels step 3",
        "ACTION: `4. Driver.Move(-1.0)`\nANNOTATION: *undone*. `#REMOVE: cancels step 3`",
        "- ACTION: 4. Driver.Move(-1.0)\n- ANNOTATION: undone. #REMOVE: cancels step 3",
        "* ACTION: 4. Driver.Move(-1.0)\n  * ANNOTATION: undone. #REMOVE: cancels step 3",
        "> ACTION: 4. Driver.Move(-1.0)\n> ANNOTATION: undone. #REMOVE: cancels step 3",
        "### ACTION 4: Driver.Move(-1.0)\nANNOTATION: undone. #REMOVE: cancels step 3",
        "### Step 4\n**ACTION:** Driver.Move(-1.0)\nANNOTATION: undone. #REMOVE: cancels step 3",
        "```\nACTION: 4. Driver.Move(-1.0)\nANNOTATION: undone. #REMOVE: cancels step 3\n```",
        "```text\nACTION: 4. Driver.Move(-1.0)\n```\nANNOTATION: undone. #REMOVE: cancels step 3",
        "1. **Driver.Say('what should I do?')**: dialogue\n"
        "4. **Driver.Move(-1.0)**: undone. #REMOVE: cancels step 3",
    ],
    ids=["bold", "backticks", "dash-bullets", "star-bullets", "quote", "header", "step-header",
         "fenced", "fence-between", "bold-list"],
)  # fmt: skip
def test_markdown(answer: str) -> None:
    assert flagged(answer) == {4: "cancels step 3"}


@pytest.mark.parametrize(
    "annotation",
    [
        "ANNOTATION: undone. #REMOVE: cancels step 3",
        "ANNOTATION: undone. #remove: cancels step 3",
        "ANNOTATION: undone. #Remove - cancels step 3",
        "ANNOTATION: undone. #REMOVE \u2013 cancels step 3",
        "ANNOTATION: undone. # REMOVE: cancels step 3",
        "ANNOTATION: undone. #REMOVE cancels step 3",
        "ANNOTATION: undone. '#REMOVE: cancels step 3'",
        'ANNOTATION: undone. "#REMOVE: cancels step 3" as asked',
        "ANNOTATION: undone. (#REMOVE: cancels step 3)",
        "ANNOTATION: undone. \u2018#REMOVE: cancels step 3\u2019",
        "ANNOTATION: undone.\n#REMOVE: cancels step 3",  # the tag wrapped onto its own line
        "ANNOTATION: undone. #REMOVE:\ncancels step 3",  # the reason wrapped onto the next line
        "#REMOVE: cancels step 3\nANNOTATION: undone.",  # the tag before the annotation
        "ANNOTATION: no #REMOVE for now... #REMOVE: cancels step 3",  # first live tag wins
    ],
)
def test_remove_tag_variants(annotation: str) -> None:
    assert flagged(f"ACTION: 4. Driver.Move(-1.0)\n{annotation}") == {4: "cancels step 3"}


def test_remove_on_the_action_line() -> None:
    answer = "ACTION: 4. Driver.Move(-1.0) #REMOVE: cancels step 3\nACTION: 5. Driver.PickUp('Mug')"
    assert flagged(answer) == {4: "cancels step 3"}


@pytest.mark.parametrize(
    "annotation",
    [
        "ANNOTATION: needed, no #REMOVE.",
        "ANNOTATION: needed; it does not need #REMOVE here",
        "ANNOTATION: keep it without #REMOVE",
        "ANNOTATION: needed. #REMOVE: none",
        "ANNOTATION: needed. #REMOVE: N/A",
        "ANNOTATION: needed. #REMOVE: no",
        "ANNOTATION: needed. #REMOVE: nothing to remove",
    ],
)
def test_negated_or_empty_answers_are_not_removals(annotation: str) -> None:
    critique = parse_judge_text(f"ACTION: 4. Driver.Move(-1.0)\n{annotation}", PLAN)
    assert critique.flags == [] and critique.dropped == []


def test_remove_without_reason_is_dropped() -> None:
    critique = parse_judge_text("ACTION: 4. Driver.Move(-1.0)\nANNOTATION: #REMOVE:", PLAN)
    assert critique.flags == []
    assert whys(critique) == ["#REMOVE gives no reason"]


@pytest.mark.parametrize(
    "answer",
    [
        "ACTION: 4. Driver.Move(-1.0)\n"
        "ANNOTATION: <what it does and whether the goal needs it; if it should go, "
        "end with #REMOVE: <reason>>",
        "ACTION: <step number>. <the step copied exactly>\n"
        "ANNOTATION: <what it does; add '#REMOVE: <reason>' if it should go>",
        "ACTION: 4. Driver.Move(-1.0) #REMOVE: <reason",  # truncated inside the placeholder
    ],
)
def test_echoed_remove_placeholder_is_dropped(answer: str) -> None:
    critique = parse_judge_text(answer, PLAN)
    assert critique.flags == []
    assert len(critique.dropped) == 1 and PLACEHOLDER in critique.dropped[0].why


# --- reasoning blocks --------------------------------------------------------------------------

AFTER = "ACTION: 5. Driver.PickUp('Mug')\nANNOTATION: not needed. #REMOVE: unused"


@pytest.mark.parametrize(
    "answer",
    [
        f"<think>ACTION: 4. Driver.Move(-1.0) #REMOVE: x\n#MISSING: Driver.Open('Fridge')\n"
        f"</think>\n{AFTER}",
        f"<THINK>\nmaybe step 4? #REMOVE: x\n</THINK>{AFTER}",
        f"<thinking>ACTION: 4. Driver.Move(-1.0) #REMOVE: x</thinking>\n{AFTER}",
        f"ACTION: 4. Driver.Move(-1.0) #REMOVE: x\n</think>\n{AFTER}",  # template opened it
        f"<think>a</think>\n<think>ACTION: 4. #REMOVE: x</think>\n{AFTER}",
    ],
    ids=["closed", "upper-case", "thinking", "closing-only", "two-blocks"],
)
def test_flags_inside_reasoning_do_not_count(answer: str) -> None:
    critique = parse_judge_text(answer, PLAN)
    assert flagged(answer) == {5: "unused"}
    assert critique.missing == [] and critique.dropped == []


def test_unclosed_reasoning_runs_to_the_end() -> None:
    answer = (
        f"{AFTER}\n<think>on second thought, step 4 #REMOVE: x\n#MISSING: Driver.Open('Fridge')"
    )
    critique = parse_judge_text(answer, PLAN)
    assert flagged(answer) == {5: "unused"} and critique.missing == []
    assert strip_reasoning("keep <think>drop").strip() == "keep"


# --- rule 1: never the wrong step --------------------------------------------------------------


@pytest.mark.parametrize(
    ("answer", "flags", "dropped"),
    [
        pytest.param(
            "ACTION: 6. Driver.Move(-1.0)\nANNOTATION: #REMOVE: r", {4: "r"}, [],
            id="number-disagrees-unique-action-wins",
        ),
        pytest.param(
            "ACTION: 12. Driver.Move(-1.0)\nANNOTATION: #REMOVE: r", {4: "r"}, [],
            id="number-out-of-range-unique-action-wins",
        ),
        pytest.param(
            "ACTION: 4. Driver.Move(2.0)\nANNOTATION: #REMOVE: r", {},
            ["the action is not a step of the plan"], id="action-not-in-plan",
        ),
        pytest.param(
            "ACTION: 4. Driver.Teleport('Kitchen')\nANNOTATION: #REMOVE: r", {},
            ["the action is not a step of the plan"], id="unknown-verb",
        ),
        pytest.param(
            "ACTION: 4. Driver.Say('what's this')\nANNOTATION: #REMOVE: r", {},
            ["the action is not a step of the plan"], id="unreadable-copy-wrong-number",
        ),
        pytest.param(
            "ACTION: 4. Robot.Move(-1.0)\nANNOTATION: #REMOVE: r", {},
            ["the action is not a step of the plan"], id="unknown-agent",
        ),
        pytest.param(
            "ACTION: 9.\nANNOTATION: #REMOVE: r", {}, ["step number 9 is outside the plan (1-8)"],
            id="number-alone-out-of-range",
        ),
        pytest.param(
            "ACTION: 0.\nANNOTATION: #REMOVE: r", {}, ["step number 0 is outside the plan (1-8)"],
            id="step-zero",
        ),
        pytest.param(
            "ACTION:\nANNOTATION: #REMOVE: r", {},
            ["names no step (no action text and no number)"], id="nothing-named",
        ),
        pytest.param(
            "ACTION: 8. Driver.TurnLeft(90.0)\nANNOTATION: ok\n\n"
            "ACTION: 3. Driver.TurnLeft(90.0)\nANNOTATION: #REMOVE: r", {},
            ["the action occurs several times and the reference is ambiguous"],
            id="repeated-action-behind-the-cursor",
        ),
        pytest.param(
            "ACTION: Driver.TurnLeft(90.0)\nANNOTATION: #REMOVE: a\n"
            "ACTION: Driver.TurnLeft(90.0)\nANNOTATION: #REMOVE: b", {6: "a", 8: "b"}, [],
            id="repeated-action-read-in-order",
        ),
        pytest.param(
            "ACTION: 3. Driver.Move(1.0)\nANNOTATION: fine\nANNOTATION: #REMOVE: r", {},
            ["annotation with no ACTION line of its own"], id="second-annotation",
        ),
        pytest.param(
            "ANNOTATION: #REMOVE: r\nACTION: 4. Driver.Move(-1.0)", {},
            ["annotation with no ACTION line of its own"], id="annotation-before-action",
        ),
        pytest.param(
            "ACTION: 3. Driver.Move(1.0)\nANNOTATION: fine.\n"
            "Driver.Move(-1.0) undoes it #REMOVE: r", {},
            ["an action line inside an annotation: unclear which step it is about"],
            id="action-line-inside-annotation",
        ),
        pytest.param(
            "Mark bad steps with #REMOVE: reason.\n\nACTION: 3. Driver.Move(1.0)\nANNOTATION: ok",
            {}, ["outside any step's block"], id="prose-before",
        ),
        pytest.param(
            "ACTION: 3. Driver.Move(1.0)\nANNOTATION: ok\n\nAlso step 4 #REMOVE: r", {},
            ["outside any step's block"], id="prose-after-blank-line",
        ),
        pytest.param(
            "ACTION: 3. Driver.Move(1.0)\nANNOTATION: ok\nSummary:\nstep 4 #REMOVE: r", {},
            ["outside any step's block"], id="prose-after-heading",
        ),
        pytest.param(
            "ACTION: 3. Driver.Move(1.0)\nANNOTATION: ok\n```\nstep 4 #REMOVE: r", {},
            ["outside any step's block"], id="prose-after-fence",
        ),
    ],
)  # fmt: skip
def test_flags_never_move_to_another_step(
    answer: str, flags: dict[int, str], dropped: list[str]
) -> None:
    critique = parse_judge_text(answer, PLAN)
    assert_sound(critique, PLAN)
    assert flagged(answer) == flags
    assert whys(critique) == dropped


@pytest.mark.parametrize(
    "copy",
    [
        'Driver.PutAOnB("Mug", "CoffeeMachine")',
        "Driver.PutAOnB('Mug','CoffeeMachine')",
        "Driver . PutAOnB ( 'Mug' , 'CoffeeMachine' )",
        "PutAOnB('Mug', 'CoffeeMachine')",
        "'Driver.PutAOnB('Mug', 'CoffeeMachine')'",
    ],
)
def test_copied_action_formatting_is_canonicalised(copy: str) -> None:
    # number 2 disagrees (a Say): only a correctly read copy can find step 7
    assert flagged(f"ACTION: 2. {copy}\nANNOTATION: #REMOVE: r") == {7: "r"}


def test_motion_amounts_compare_as_numbers() -> None:
    assert flagged("ACTION: Driver.TurnLeft(90)\nANNOTATION: #REMOVE: r") == {6: "r"}
    assert flagged("ACTION: 2. Driver.Move(-1)\nANNOTATION: #REMOVE: r") == {4: "r"}


def test_flag_keeps_the_step_as_written_in_the_plan() -> None:
    plan = ['Driver.PickUp("Mug")', "Driver.Move(1)"]
    critique = parse_judge_text("ACTION: Driver.PickUp('Mug') #REMOVE: r", plan)
    assert [(f.step, f.action) for f in critique.flags] == [(0, 'Driver.PickUp("Mug")')]


def test_reordered_and_missing_blocks() -> None:
    answer = (
        "ACTION: 7. Driver.PutAOnB('Mug', 'CoffeeMachine')\nANNOTATION: #REMOVE: late\n\n"
        "ACTION: 4. Driver.Move(-1.0)\nANNOTATION: #REMOVE: early\n\n"
        "ACTION: Driver.TurnLeft(90.0)\nANNOTATION: #REMOVE: turn"
    )
    # the unnumbered TurnLeft follows the cursor (step 4): its next occurrence is step 6
    assert flagged(answer) == {4: "early", 6: "turn", 7: "late"}


def test_repeated_answer_flags_each_step_once() -> None:
    once = "ACTION: 3. Driver.Move(1.0)\nANNOTATION: #REMOVE: a\n\nACTION: 4. Driver.Move(-1.0)\n"
    critique = parse_judge_text(once + "ANNOTATION: #REMOVE: b\n\n" + once, PLAN)
    assert flagged(once + "\n" + once) == {3: "a"}
    assert [(f.step, f.reason) for f in critique.flags] == [(2, "a"), (3, "b")]
    assert whys(critique) == ["step 3 is already flagged"]


@pytest.mark.parametrize(
    ("answer", "flags"),
    [
        ("ACTION: 4. Driver.Move(-1.0)\nANNOTATION: undone #REMOVE: cancels st", {4: "cancels st"}),
        ("ACTION: 3. Driver.Move(1.0) #REMOVE: a\nACTION: 4. Driver.Mo", {3: "a"}),
        ("ACTION: 3. Driver.Move(1.0) #REMOVE: a\nACTION", {3: "a"}),
        ("ACTION: 3. Driver.Move(1.0) #REMOVE: a\nANNOTATION: #REM", {3: "a"}),
        ("ACTION: 3. Driver.Move(1.0) #REMOVE: a\n#MISS", {3: "a"}),
        ("<think>step 3 is bad #REMOVE", {}),
        ("ACTION: 4. Driver.PickUp('Mu", {}),
    ],
)
def test_truncated_output(answer: str, flags: dict[int, str]) -> None:
    assert flagged(answer) == flags


# --- rule 2: dialogue ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "answer",
    [
        "ACTION: 2. Commander.Say('make coffee')\nANNOTATION: #REMOVE: chatter",
        "ACTION: 2.\nANNOTATION: #REMOVE: chatter",
        "ACTION: Commander.Say('make coffee')\nANNOTATION: #REMOVE: chatter",
        'ACTION: 7. Commander.Say("make coffee")\nANNOTATION: #REMOVE: chatter',
    ],
)
def test_dialogue_is_never_flagged(answer: str) -> None:
    critique = parse_judge_text(answer, PLAN)
    assert critique.flags == []
    assert whys(critique) == [f"step 2 {DIALOGUE}"]


def test_say_with_unreadable_arguments_is_still_dialogue() -> None:
    plan = ["Driver.Say(hello)", "Driver.Move(1.0)"]
    critique = parse_judge_text("ACTION: 1.\nANNOTATION: #REMOVE: chatter", plan)
    assert critique.flags == [] and whys(critique) == [f"step 1 {DIALOGUE}"]


# --- rule 4: missing steps -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("line", "description", "action"),
    [
        (
            "#MISSING: Driver.ToggleOn('CoffeeMachine') to brew",
            "Driver.ToggleOn('CoffeeMachine') to brew",
            "Driver.ToggleOn('CoffeeMachine')",
        ),
        ("#missing - ToggleOn(\"CoffeeMachine\")", 'ToggleOn("CoffeeMachine")',
         "Driver.ToggleOn('CoffeeMachine')"),
        ("'#MISSING: Driver.Clean('Mug')' is needed", "Driver.Clean('Mug')", "Driver.Clean('Mug')"),
        ("#MISSING: wash the mug first", "wash the mug first", None),
        ("#MISSING:\n- Driver.ToggleOn('CoffeeMachine')", "Driver.ToggleOn('CoffeeMachine')",
         "Driver.ToggleOn('CoffeeMachine')"),
        ("Nothing brews: #MISSING: Nothing turns it on, Driver.ToggleOn('CoffeeMachine')",
         "Nothing turns it on, Driver.ToggleOn('CoffeeMachine')",
         "Driver.ToggleOn('CoffeeMachine')"),
        ("ANNOTATION: fine. #MISSING: a clean mug", "a clean mug", None),
    ],
)  # fmt: skip
def test_missing(line: str, description: str, action: str | None) -> None:
    critique = parse_judge_text(f"ACTION: 3. Driver.Move(1.0)\n{line}", PLAN)
    assert [(m.description, m.action) for m in critique.missing] == [(description, action)]
    assert critique.flags == [] and critique.dropped == []


@pytest.mark.parametrize(
    "line",
    [
        "#MISSING: none",
        "#MISSING: None.",
        "#MISSING: nothing",
        "#MISSING: Nothing is missing.",
        "#MISSING: No missing steps",
        "#MISSING: n/a",
        "There is no #MISSING step.",
        "#MISSING:",
        "<think>#MISSING: Driver.ToggleOn('CoffeeMachine')</think>",
    ],
)
def test_nothing_missing(line: str) -> None:
    critique = parse_judge_text(f"ACTION: 3. Driver.Move(1.0)\n{line}", PLAN)
    assert critique.missing == [] and critique.dropped == []


@pytest.mark.parametrize(
    "line",
    [
        "#MISSING: Driver.Teleport('Kitchen') to get there",
        "#MISSING: Commander.Say('hurry up')",
        "#MISSING: Driver.Say('done')",
        "#MISSING: Driver.PickUp(Mug)",
    ],
)
def test_missing_action_outside_the_notation_keeps_the_description(line: str) -> None:
    critique = parse_judge_text(line, PLAN)
    description = line.removeprefix("#MISSING: ")
    assert [(m.description, m.action) for m in critique.missing] == [(description, None)]
    assert whys(critique) == ["missing step is not a Driver action in the notation"]


@pytest.mark.parametrize(
    "line",
    [
        "#MISSING: <what is needed>",
        "#MISSING: <the step as an action, e.g. Driver.ToggleOn('CoffeeMachine'), and why>",
        "#MISSING: <the step as an action, e.g. Driver.ToggleOn('Coff",
    ],
)
def test_echoed_missing_placeholder_is_dropped(line: str) -> None:
    critique = parse_judge_text(line, PLAN)
    assert critique.missing == []
    assert len(critique.dropped) == 1 and PLACEHOLDER in critique.dropped[0].why


def test_several_missing_tags_and_duplicates() -> None:
    answer = (
        "#MISSING: Driver.Open('Fridge') #MISSING: Driver.Close('Fridge')\n"
        "#MISSING: Driver.Open('Fridge')\nSteps missing:\n- not a tag, not an entry"
    )
    critique = parse_judge_text(answer, PLAN)
    assert [m.action for m in critique.missing] == [
        "Driver.Open('Fridge')",
        "Driver.Close('Fridge')",
    ]


def test_bare_missing_tag_does_not_swallow_the_next_step() -> None:
    critique = parse_judge_text("#MISSING:\nACTION: 4. Driver.Move(-1.0) #REMOVE: r", PLAN)
    assert critique.missing == [] and flagged("#MISSING:\nACTION: 4. #REMOVE: r") == {4: "r"}


def test_untagged_missing_list_is_not_read() -> None:
    """Only `#MISSING` lines are protocol; a prose 'Steps missing:' list is not an entry."""
    answer = "ACTION: 3. Driver.Move(1.0)\nANNOTATION: ok\n\nSteps missing:\n- turn on the machine"
    assert parse_judge_text(answer, PLAN).missing == []


# --- public helpers -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Driver.PutAOnB('Mug','Sink')", "Driver.PutAOnB('Mug', 'Sink')"),
        ('Driver.PickUp("Mug")', "Driver.PickUp('Mug')"),
        ("`Driver.Move(1.0)`", "Driver.Move(1.0)"),
        ("Open('Fridge')", "Driver.Open('Fridge')"),
        ("Driver.Fly('Kite')", "Driver.Fly('Kite')"),  # unknown verb: kept as written
        ("Say('hi')", None),  # whose line? no agent can be assumed for dialogue
        ("not an action", None),
        ("", None),
    ],
)
def test_canonical(text: str, expected: str | None) -> None:
    assert canonical(text) == expected


def test_find_action() -> None:
    assert find_action("first Driver.Open(\u201cFridge\u201d) then Close('Fridge')") == (
        "Driver.Open('Fridge')"
    )
    assert find_action("ReOpen('Fridge') or Robot.Open('Fridge')") is None


def test_resolver_cursor_and_add_flag() -> None:
    resolver = StepResolver(PLAN)
    assert resolver.resolve(None, "Driver.TurnLeft(90.0)") == 5
    assert resolver.resolve(None, "Driver.TurnLeft(90.0)") == 7
    assert "ambiguous" in str(resolver.resolve(None, "Driver.TurnLeft(90.0)"))
    assert resolver.resolve(3, None) == 2 and resolver.cursor == 2
    critique = Critique()
    add_flag(critique, PLAN, 2, "r", "3")
    add_flag(critique, PLAN, 99, "r", "99")
    add_flag(critique, PLAN, "names no step", "r", "?")
    assert [f.step for f in critique.flags] == [2]
    assert whys(critique) == ["step number 100 is outside the plan (1-8)", "names no step"]
    add_missing(critique, "  'none'  ")
    assert critique.missing == []


# --- real outputs of a 1.5B model -----------------------------------------------------------------

FIXTURES = Path(__file__).resolve().parents[1].parent / "shared" / "fixtures"
QWEN = FIXTURES / "qwen1.5b-judge-outputs.jsonl"
needs_fixtures = pytest.mark.skipif(
    not QWEN.exists(), reason=f"shared fixture {QWEN.name} is not available next to the repo"
)


def qwen(index: int) -> dict[str, Any]:
    record: dict[str, Any] = json.loads(QWEN.read_text(encoding="utf-8").splitlines()[index])
    return record


NO_STEP = "names no step (no action text and no number)"
MUG = "The robot should be able to clean the mug before pouring coffee."
PATH = "The robot should have a clear path to the dining table and the forks."
BOIL = "The robot should be instructed to boil the potato after placing it on the pot."
REDUNDANT = "This action is redundant."


def expect(
    flags: tuple[int, ...] = (),
    missing: tuple[str, ...] = (),
    dropped: dict[str, int] | None = None,
) -> dict[str, Any]:
    """Expected facts: 1-based flagged steps (all with REDUNDANT), missing texts, dropped whys."""
    return {"flags": dict.fromkeys(flags, REDUNDANT), "missing": missing, "dropped": dropped or {}}


@needs_fixtures
@pytest.mark.parametrize(
    ("index", "expected"),
    [
        # complete and well-formed, but nothing tagged; "Steps missing:" bullets are untagged prose
        pytest.param(0, expect(), id="0-no-tags"),
        pytest.param(1, expect(), id="1-no-tags"),
        pytest.param(2, expect(missing=(MUG,)), id="2-one-missing"),
        # the template echoed 29 times, then cut off at "ACTION"
        pytest.param(3, expect(dropped={PLACEHOLDER_WHY: 29}), id="3-placeholders"),
        # every step tagged '#REMOVE: ...' in quotes; three of them are Say lines
        pytest.param(
            4,
            expect(
                flags=(1, 2, 4, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
                dropped={f"step {s} {DIALOGUE}": 1 for s in (3, 5, 16)},
            ),
            id="4-all-flagged-but-dialogue",
        ),
        # "ACTION: #REMOVE: ..." 27 times: no step is ever named
        pytest.param(5, expect(dropped={NO_STEP: 27}), id="5-no-step-named"),
        pytest.param(6, expect(missing=(PATH,)), id="6-one-missing"),
        pytest.param(7, expect(), id="7-no-tags"),
        pytest.param(8, expect(), id="8-no-tags"),
        pytest.param(9, expect(missing=(BOIL,)), id="9-one-missing"),
        pytest.param(10, expect(), id="10-no-tags"),
    ],
)
def test_qwen_outputs(index: int, expected: dict[str, Any]) -> None:
    record = qwen(index)
    critique = parse_judge_text(record["output"], record["actions"])
    assert_sound(critique, record["actions"])
    assert {f.step + 1: f.reason for f in critique.flags} == expected["flags"]
    assert [(m.description, m.action) for m in critique.missing] == [
        (d, None) for d in expected["missing"]
    ]
    assert Counter(whys(critique)) == Counter(expected["dropped"])


@needs_fixtures
def test_qwen_record_4_details() -> None:
    record = qwen(4)
    critique = parse_judge_text(record["output"], record["actions"])
    dropped_lines = [d.text.split(" #REMOVE")[0] for d in critique.dropped]
    assert dropped_lines == [
        "?. Driver.Say('hi how can I help today?')",
        "?. Commander.Say('can you water the plant')",
        "?. Driver.Say('anything else?')",
    ]
    # the last block ends at the blank line: the "Steps missing:" prose is not part of a reason
    assert critique.dropped[-1].text.endswith("#REMOVE: This action is redundant.")
    # unnumbered repeats of TurnRight(90.0) and Move(1.75) are read in order
    assert [f.action for f in critique.flags if f.step in (9, 13)] == ["Driver.Move(1.75)"] * 2


@needs_fixtures
@pytest.mark.parametrize("index", [0, 1, 2, 6, 7, 8, 9, 10])
def test_qwen_outputs_tagged_everywhere_resolve_to_their_own_step(index: int) -> None:
    """These outputs copy every step in order, some without numbers; tag each one."""
    record = qwen(index)
    plan: list[str] = record["actions"]
    tagged = record["output"].replace("\nANNOTATION: ", "\nANNOTATION: #REMOVE: probe. ")
    critique = parse_judge_text(tagged, plan)
    says = [i for i, line in enumerate(plan) if parse_action(line).is_dialogue]
    assert [f.step for f in critique.flags] == [i for i in range(len(plan)) if i not in says]
    assert whys(critique) == [f"step {i + 1} {DIALOGUE}" for i in says]


@needs_fixtures
@pytest.mark.parametrize("index", range(11))
def test_qwen_outputs_shuffled_or_cut_stay_sound(index: int) -> None:
    record = qwen(index)
    output: str = record["output"]
    blocks = output.split("\n\n")
    for variant in ("\n\n".join(reversed(blocks)), output[: len(output) // 2], output * 2):
        assert_sound(parse_judge_text(variant, record["actions"]), record["actions"])


# --- properties -----------------------------------------------------------------------------------

POOL = [
    *PLAN,
    "Driver.Open('Fridge')",
    "Driver.PourFromAIntoB('Bowl', 'HousePlant')",
    "Commander.Say('it\\'s in the fridge')",
    "Driver.Teleport('Roof')",
]
FRAGMENTS = [
    "ACTION:", "ACTION", "ANNOTATION:", "#REMOVE:", "#remove -", "'#REMOVE: x'", "#MISSING:",
    "#MISSING: none", "<reason>", "<think>", "</think>", "Step ", "[", "]", "(", ")", "1.", "3)",
    "**", "`", "```", "- ", "### ", "\n", "\n\n", " ", "'", '"', ":", "no ", "Driver.", "Move(",
    "Say('", "\\", "0", "99999999999999", "Steps missing:",
]  # fmt: skip

plans = st.lists(st.sampled_from(POOL), min_size=1, max_size=8)
pieces = st.one_of(
    st.sampled_from(FRAGMENTS),
    st.sampled_from(POOL),
    st.sampled_from(POOL).map(lambda s: s.replace("'", '"').replace(", ", ",")),
    st.integers(min_value=-2, max_value=12).map(str),
    st.text(max_size=12),
)


def test_pathological_input_is_parsed_soundly() -> None:
    # huge, repetitive answers are parsed like any other (a pattern that backtracks would hang
    # here); benchmarks print speed, tests never time
    for answer in (
        "ACTION: 4. Driver.Move(-1.0) " + "#REMOVE:" * 20_000,
        "#MISSING: x " * 20_000,
        "no " * 20_000 + "#REMOVE: x",
        "<think>" * 5_000 + "(" * 20_000,
    ):
        assert_sound(parse_judge_text(answer, PLAN), PLAN)


@settings(max_examples=400, database=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=st.text(max_size=400), plan=plans)
def test_arbitrary_text_never_raises(text: str, plan: list[str]) -> None:
    assert_sound(parse_judge_text(text, plan), plan)
    canonical(text), find_action(text), strip_reasoning(text)


@settings(max_examples=600, database=None, suppress_health_check=[HealthCheck.too_slow])
@given(parts=st.lists(pieces, max_size=60), plan=plans)
def test_text_built_from_plan_lines_and_tags_stays_sound(parts: list[str], plan: list[str]) -> None:
    assert_sound(parse_judge_text("".join(parts), plan), plan)


@settings(max_examples=200, database=None)
@given(plan=plans, data=st.data())
def test_well_formed_answers_are_read_exactly(plan: list[str], data: st.DataObject) -> None:
    chosen = data.draw(st.sets(st.integers(0, len(plan) - 1)))
    numbered = data.draw(st.booleans())
    lines = []
    for i, step in enumerate(plan):
        lines.append(f"ACTION: {i + 1}. {step}" if numbered else f"ACTION: {step}")
        lines.append(f"ANNOTATION: step. #REMOVE: reason {i}" if i in chosen else "ANNOTATION: ok")
    critique = parse_judge_text("\n".join(lines), plan)
    dialogue = {i for i, s in enumerate(plan) if parse_action(s).is_dialogue}
    # without numbers, a repeated step is read in order; with them, each block names its own step
    assert {f.step for f in critique.flags} == chosen - dialogue
    assert all(f.reason == f"reason {f.step}" for f in critique.flags)
    assert len(critique.dropped) == len(chosen & dialogue)
