"""A Judge's answer must judge every Driver step: what is left out (or cut at the token limit) is
asked for once more, and a pass still incomplete is recorded and never ends as no_objections."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

from langchain_core.messages import AIMessage

from planverify import verify_plan
from planverify.agents.coverage import left_out, merge
from planverify.agents.judge import ModelJudge
from planverify.records.critique import Critique, Flag, Missing

from .conftest import scripted
from .test_graph import structured

GOAL = "Tidy up the kitchen."
SAY = "Commander.Say('Tidy up, please.')"
PLAN = [f"Driver.Move({n}.0)" for n in range(1, 13)]  # twelve Driver steps


def steps(plan: Sequence[str], numbers: Sequence[int], flagged: Sequence[int] = ()) -> str:
    """A text-protocol answer judging only the 1-based `numbers`, flagging those in `flagged`."""
    lines = []
    for n in numbers:
        note = "walks for nothing #REMOVE: pointless" if n in flagged else "needed"
        lines += [f"ACTION: {n}. {plan[n - 1]}", f"ANNOTATION: {note}"]
    return "\n".join(lines)


def asked_for(prompt_text: str) -> list[str]:
    """The step lines a continuation prompt lists between its <steps> tags."""
    body = prompt_text.split("<steps>\n", 1)[1].split("\n</steps>", 1)[0]
    return body.splitlines()


def test_an_answer_that_stops_after_step_one_is_asked_for_the_other_eleven() -> None:
    judge = scripted(
        steps(PLAN, [1], flagged=[1]),  # step 1 of 12, then nothing
        steps(PLAN, range(2, 13), flagged=[5]) + "\n#MISSING: Driver.Clean('Sink') to finish",
    )
    reply = asyncio.run(ModelJudge(judge).ajudge(GOAL, PLAN))
    assert len(judge.prompts) == 2
    follow_up = judge.prompts[1]
    assert follow_up[:2] == judge.prompts[0], "the same instructions, goal and plan"
    assert asked_for(str(follow_up[-1].content)) == [f"{n}. {PLAN[n - 1]}" for n in range(2, 13)]
    assert [f.step for f in reply.critique.flags] == [0, 4], "flags of both answers"
    assert [m.action for m in reply.critique.missing] == ["Driver.Clean('Sink')"]
    assert reply.uncovered == []
    assert (reply.usage.calls, reply.usage.input_tokens) == (2, 20), "the follow-up is counted"


def test_a_complete_answer_is_not_asked_again() -> None:
    judge = scripted(steps(PLAN, range(1, 13)))
    reply = asyncio.run(ModelJudge(judge).ajudge(GOAL, PLAN))
    assert len(judge.prompts) == 1 and reply.uncovered == []


def test_dialogue_need_not_be_judged() -> None:
    plan = [SAY, *PLAN[:2]]
    judge = scripted(steps(plan, [2, 3]))
    reply = asyncio.run(ModelJudge(judge).ajudge(GOAL, plan))
    assert len(judge.prompts) == 1 and reply.uncovered == []


def test_a_step_flagged_by_both_answers_is_flagged_once() -> None:
    first = Critique(
        flags=[Flag(step=2, action=PLAN[2], reason="first")],
        missing=[Missing(description="clean the sink", action="Driver.Clean('Sink')")],
    )
    second = Critique(
        flags=[
            Flag(step=2, action=PLAN[2], reason="again"),
            Flag(step=4, action=PLAN[4], reason="x"),
        ],
        missing=[Missing(description="the sink, cleaned", action="Driver.Clean('Sink')")],
    )
    merged = merge(first, second, PLAN)
    assert [(f.step, f.reason) for f in merged.flags] == [(2, "first"), (4, "x")]
    assert [d.why for d in merged.dropped] == ["step 3 is already flagged"]
    assert len(merged.missing) == 1, "the same concrete action is missing once"


def test_an_answer_cut_at_the_token_limit_is_continued_from_its_last_step() -> None:
    cut = AIMessage(
        content=steps(PLAN, range(1, 7)) + "\nACTION: 7. Driver.Move(7.0)\nANNOTATION: walk",
        response_metadata={"finish_reason": "length"},
    )
    judge = scripted(cut, steps(PLAN, range(7, 13), flagged=[7]))
    reply = asyncio.run(ModelJudge(judge).ajudge(GOAL, PLAN))
    listed = asked_for(str(judge.prompts[1][-1].content))
    assert listed == [f"{n}. {PLAN[n - 1]}" for n in range(7, 13)], "the cut step too"
    assert [f.step for f in reply.critique.flags] == [6]
    assert reply.uncovered == []


def test_a_cut_answer_is_continued_even_when_it_named_every_step() -> None:
    cut = AIMessage(
        content=steps(PLAN, range(1, 13)), response_metadata={"finish_reason": "length"}
    )
    judge = scripted(cut, steps(PLAN, [12]) + "\n#MISSING: Driver.Clean('Sink')")
    reply = asyncio.run(ModelJudge(judge).ajudge(GOAL, PLAN))
    assert asked_for(str(judge.prompts[1][-1].content)) == [f"12. {PLAN[11]}"]
    assert [m.action for m in reply.critique.missing] == ["Driver.Clean('Sink')"]


def test_a_pass_still_incomplete_is_recorded_and_never_ends_as_no_objections() -> None:
    judge = scripted(steps(PLAN, [1]), steps(PLAN, [2, 3]))  # no objections, steps 4-12 unjudged
    result = verify_plan(PLAN, GOAL, judge=judge, max_iterations=1, certify=False)
    assert result.status == "ok", result.error
    assert result.stop_reason == "incomplete"
    (record,) = result.history
    assert record.incomplete and record.uncovered == list(range(3, 12))
    assert any("steps 4-12 unjudged" in w and "pass 1" in w for w in result.warnings)
    assert result.refined == PLAN


def test_an_incomplete_pass_without_objections_is_judged_again() -> None:
    judge = scripted(steps(PLAN, [1]), steps(PLAN, [2]), steps(PLAN, range(1, 13)))
    result = verify_plan(PLAN, GOAL, judge=judge, max_iterations=3, certify=False)
    assert (result.stop_reason, result.iterations, result.revisions) == ("no_objections", 2, 0)
    assert [r.incomplete for r in result.history] == [True, False]


def test_the_same_plan_is_looked_at_once_more_then_the_loop_stops_as_incomplete() -> None:
    lazy = steps(PLAN, [1])  # each pass: an answer and its follow-up, both judging step 1 only
    judge = scripted(lazy, lazy, lazy, lazy, steps(PLAN, range(1, 13)))
    result = verify_plan(PLAN, GOAL, judge=judge, max_iterations=5, certify=False)
    assert (result.stop_reason, result.iterations, result.revisions) == ("incomplete", 2, 0)
    assert [r.incomplete for r in result.history] == [True, True]
    assert len(judge.prompts) == 4, "two passes, each with its one follow-up; no third pass"


def test_an_incomplete_last_pass_at_the_cap_stops_as_incomplete_even_after_edits() -> None:
    judge = scripted(
        steps(PLAN, range(1, 13), flagged=[1]),
        steps(PLAN[1:], [1], flagged=[1]),  # pass 2: one step, flagged, then nothing
        steps(PLAN[1:], [1]),
    )
    result = verify_plan(PLAN, GOAL, judge=judge, max_iterations=2, certify=False)
    assert (result.stop_reason, result.iterations, result.revisions) == ("incomplete", 2, 2)
    assert [r.incomplete for r in result.history] == [False, True]
    assert result.refined == PLAN[2:], "the flags the incomplete pass did give are applied"


def test_a_static_run_keeps_its_stop_reason_and_records_the_incomplete_pass() -> None:
    judge = scripted(steps(PLAN, [1], flagged=[1]), "I am done.")
    result = verify_plan(PLAN, GOAL, judge=judge, static=True, certify=False)
    assert result.stop_reason == "static" and result.refined == PLAN
    assert result.history[0].uncovered == list(range(1, 12))
    assert any("steps 2-12 unjudged" in w for w in result.warnings)
    assert [v.verdict for v in result.verdicts][:2] == ["remove", "keep"]


def test_a_structured_answer_keeping_too_few_steps_is_asked_for_the_rest() -> None:
    judge = structured(
        {"remove": [{"step": 2, "action": PLAN[1], "reason": "back and forth"}], "keep": [1]},
        {"keep": list(range(3, 12)), "remove": [{"step": 12, "action": PLAN[11], "reason": "z"}]},
    )
    reply = asyncio.run(ModelJudge(judge, output="structured").ajudge(GOAL, PLAN))
    assert asked_for(str(judge.prompts[1][-1].content)) == [
        f"{n}. {PLAN[n - 1]}" for n in range(3, 13)
    ]
    assert [f.step for f in reply.critique.flags] == [1, 11]
    assert reply.uncovered == [] and reply.usage.calls == 2


def test_a_structured_answer_without_a_keep_list_speaks_for_the_whole_plan() -> None:
    judge = structured({"remove": [{"step": 2, "action": PLAN[1], "reason": "x"}]})
    reply = asyncio.run(ModelJudge(judge, output="structured").ajudge(GOAL, PLAN))
    assert len(judge.prompts) == 1 and reply.uncovered == []


def test_a_structured_follow_up_still_short_leaves_the_pass_incomplete() -> None:
    judge = structured({"keep": [1, 2]}, {"keep": [3]})
    reply = asyncio.run(ModelJudge(judge, output="structured").ajudge(GOAL, PLAN))
    assert reply.uncovered == list(range(3, 12))


def test_left_out_counts_only_the_steps_asked_for() -> None:
    assert left_out(PLAN, [3, 4], cut=False, among=[3, 4, 5]) == [5]
    assert left_out(PLAN, None, cut=True) == [], "a whole structured answer"


def test_a_server_answer_cut_at_the_length_limit_is_continued_over_http() -> None:
    from langchain_openai import ChatOpenAI

    from tests.fake_openai import FakeOpenAI, Reply

    plan = PLAN[:4]

    def respond(body: dict[str, Any]) -> Reply:
        asked = str(body["messages"][-1]["content"])
        if "<steps>" in asked:  # the follow-up: judge what the cut answer left out
            return Reply(content=steps(plan, [3, 4], flagged=[4]), usage=(30, 12))
        cut = steps(plan, [1, 2]) + "\nACTION: 3. Driver.Move(3.0)\nANNOTATION: wal"
        return Reply(content=cut, finish_reason="length", usage=(25, 16))

    with FakeOpenAI(respond) as server:
        model = ChatOpenAI(model="m", base_url=server.base_url, api_key="x", max_retries=0)
        result = verify_plan(plan, GOAL, judge=model, static=True, certify=False)
        bodies = list(server.requests)
    assert result.status == "ok", result.error
    assert len(bodies) == 2
    listed = asked_for(str(bodies[1]["messages"][-1]["content"]))
    assert listed == ["3. Driver.Move(3.0)", "4. Driver.Move(4.0)"]
    (record,) = result.history
    assert not record.incomplete and [f.step for f in record.critique.flags] == [3]
    assert not any("unjudged" in w for w in result.warnings)
    assert result.usage["judge"].model_dump() == {
        "calls": 2,
        "input_tokens": 55,
        "output_tokens": 28,
    }
