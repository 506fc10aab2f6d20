"""A model Planner on VirtualHome programs: asked with VirtualHome's own instructions for every
missing step the Judge described, its lines read in VirtualHome's notation (others dropped with
why), and its insertions certified by the simulator; the rules Planner still puts in exactly the
steps the Judge named. Programs are read from the installed eai-eval (none of its data is kept)."""

from __future__ import annotations

import asyncio

import pytest

pytest.importorskip(
    "virtualhome_eval.simulation.evolving_graph",
    reason="VirtualHome needs eai-eval (make install adds it without its dependencies)",
)

from planverify.agents import ModelPlanner
from planverify.agents.base import Insertion, as_data
from planverify.api import verify_plan
from planverify.domains import Case, domain_of
from planverify.domains.virtualhome import data
from planverify.domains.virtualhome.adapter import DOMAIN as VIRTUALHOME
from planverify.prompts import template_version
from planverify.records.critique import Missing
from planverify.records.result import VerificationResult

from .conftest import ScriptedChatModel, scripted, structured

WATCH_TV = "file1057_1"  # Watch TV: the television on, plugged in, faced; then LOOKAT or WATCH
SWITCH_ON = "[SWITCHON] <television> (1.410)"
SWITCH_OFF = "[SWITCHOFF] <television> (1.410)"
IN_WORDS = "the television is never switched on, so there is nothing to watch"


def _program() -> list[str]:
    return list(data.read_program(WATCH_TV).lines)


def _without_switch() -> list[str]:
    return [line for line in _program() if line != SWITCH_ON]


def _after_find(plan: list[str]) -> int:
    """The 1-based number of the step that finds the television (where switching it on goes)."""
    return plan.index("[FIND] <television> (1.410)") + 1


def _all_needed(plan: list[str], *missing: str) -> str:
    """A model Judge's answer keeping every step, with `#MISSING` lines."""
    blocks = [
        f"ACTION: {i + 1}. {as_data(line)}\nANNOTATION: needed." for i, line in enumerate(plan)
    ]
    return "\n".join([*blocks, *(f"#MISSING: {text}" for text in missing)])


def _verify(
    plan: list[str],
    judge: ScriptedChatModel,
    planner: ScriptedChatModel | str,
    certify: bool | None = None,
) -> VerificationResult:
    result = verify_plan(
        plan,
        "Watch TV",
        domain="virtualhome",
        program=WATCH_TV,
        judge=judge,
        planner=planner,
        certify=certify,
    )
    assert result.status == "ok", result.error
    return result


def test_a_step_described_only_in_words_is_put_in_from_the_model_planner_s_script_line() -> None:
    plan = _without_switch()
    judge = scripted(_all_needed(plan, IN_WORDS), _all_needed(_program()))
    planner = scripted(
        f"INSERT AFTER {_after_find(plan)}: [SWITCHON] \u2039television\u203a (1.410)"
    )
    result = _verify(plan, judge, planner)
    assert [i.action for i in result.inserted] == [SWITCH_ON]
    assert result.refined == _program()
    assert result.inserted[0].reason == IN_WORDS and not result.history[0].vetoes
    system, asked = (str(m.content) for m in planner.prompts[0])
    assert "[WALK] <kitchen> (1.11)" in system and "Driver." not in system  # VirtualHome's own
    assert as_data("[FIND] <television> (1.410)") in asked and IN_WORDS in asked
    assert result.settings is not None  # its instructions' version is recorded with the domain's
    recorded = result.settings.model_dump()["domains"]["virtualhome"]
    assert recorded.endswith(
        "+planner-" + template_version(domain_of("virtualhome").planner_prompt)
    )


def test_lines_outside_virtualhome_s_notation_are_dropped_with_why() -> None:
    plan = _without_switch()
    at = _after_find(plan)
    judge = scripted(_all_needed(plan, IN_WORDS), _all_needed(_program()))
    reply = [
        f"INSERT AFTER {at}: Driver.ToggleOn('Television')",  # TEACh's notation
        f"INSERT AFTER {at}: just switch the telly on",  # words, no script line
        f"INSERT AFTER {at}: [FLY] <television> (1.410)",  # no such verb
        f"INSERT AFTER 40: {SWITCH_ON}",  # no step 40
        f"INSERT AFTER {at}: {SWITCH_ON}",
    ]
    result = _verify(plan, judge, scripted("\n".join(reply)))
    assert [i.action for i in result.inserted] == [SWITCH_ON]
    dropped = {d.text: d.why for d in result.history[0].dropped}
    notation = "not a step in the domain's notation"
    assert dropped["Driver.ToggleOn('Television')"] == notation
    assert dropped["just switch the telly on"] == notation
    assert dropped["[FLY] <television> (1.410)"] == notation
    assert dropped[SWITCH_ON] == f"position 40 is outside the plan (0-{len(plan)})"


def test_an_insertion_the_simulator_cannot_carry_out_is_vetoed_when_certifying() -> None:
    plan = _without_switch()
    early = f"INSERT AFTER 0: {SWITCH_ON}"  # before walking anywhere: the set is out of reach
    judge = scripted(_all_needed(plan, IN_WORDS))
    result = _verify(plan, judge, scripted(early))  # certify unset: the program's scene is known
    assert not result.inserted and result.refined == plan
    (veto,) = result.history[0].vetoes
    assert (veto.kind, veto.action, veto.after) == ("insertion", SWITCH_ON, -1)
    assert veto.reason.startswith("impossible where it is placed: ")
    again = scripted(_all_needed(plan, IN_WORDS), _all_needed([SWITCH_ON, *plan]))
    unchecked = _verify(plan, again, scripted(early), certify=False)
    assert [i.action for i in unchecked.inserted] == [SWITCH_ON]  # what certify refused


def test_each_insertion_is_checked_after_those_accepted_before_it() -> None:
    plan = _without_switch()
    at = _after_find(plan) - 1  # 0-based: after the step that finds the television
    twice = [Insertion(after=at, action=SWITCH_ON, reason=IN_WORDS) for _ in range(2)]
    case = Case(lines=plan, goal="Watch TV", program=WATCH_TV)
    kept, vetoes = VIRTUALHOME.certify_insertions(case, twice)
    assert kept == twice[:1]  # the second comes right after the first: the set is on already
    (veto,) = vetoes
    assert (veto.kind, veto.after) == ("insertion", at)
    assert veto.reason.startswith("changes nothing where it is placed: ")


def test_the_rules_planner_puts_in_the_named_steps_and_the_simulator_refuses_a_goal_loss() -> None:
    plan = _program()
    judge = scripted(
        _all_needed(plan, "relax on the couch afterwards", f"{SWITCH_OFF} after step 9")
    )
    result = _verify(plan, judge, "rules")
    # as before: the Planner is not a model, a step named only in words is dropped with why
    dropped = {d.text: d.why for d in result.history[0].dropped}
    assert (
        dropped["relax on the couch afterwards"]
        == "names no concrete action in the domain's notation"
    )
    # the named step is put in where the Judge placed it, then refused: it switches the set off
    assert not result.inserted and result.refined == plan
    (veto,) = result.history[0].vetoes
    assert (veto.action, veto.after) == (SWITCH_OFF, 8)
    assert veto.reason == "with it, the goal loses: ON(television.410)"
    assert result.settings is not None  # the rules Planner reads no instructions: no version
    assert "+planner-" not in result.settings.model_dump()["domains"]["virtualhome"]


def test_a_structured_answer_is_read_in_virtualhome_s_notation_too() -> None:
    plan = _without_switch()
    at = _after_find(plan)
    model = structured(
        {"insert": [{"after": at, "action": SWITCH_ON}, {"after": at, "action": "ToggleOn(TV)"}]}
    )
    planner = ModelPlanner(model, output="structured")
    system = domain_of("virtualhome").planner_prompt
    wanted = [Missing(description=IN_WORDS)]
    reply = asyncio.run(planner.ainsert("Watch TV", plan, wanted, system=system))
    assert [(i.after, i.action) for i in reply.insertions] == [(at - 1, SWITCH_ON)]
    assert [(d.text, d.why) for d in reply.dropped] == [
        ("ToggleOn(TV)", "not a step in the domain's notation")
    ]
