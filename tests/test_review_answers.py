"""A person's answer to a review pause: every shape other than accept, reject or the edit dict
is refused in one line that names the shape."""

from __future__ import annotations

from typing import Any

import pytest
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command

from planverify.graphs.context import VerifierContext
from planverify.graphs.graph import build_verifier
from planverify.graphs.review import apply_review
from planverify.records.critique import Critique
from planverify.stores.serde import state_serializer

from .conftest import scripted
from .test_graph import CLEAN, GOAL, PLAN, judged

BAD = [
    {"flags": "x"},
    {"flags": 3},
    {"flags": [None]},
    {"flags": [{"step": None}]},
    {"flags": [{"step": True}]},
    {"flags": [{"step": 2, "reason": ["x"]}]},
    {"missing": 3},
    {"missing": [None]},
    {"flag": [1]},
    [1],
    5,
    1,  # equal to True, but no answer
]


@pytest.mark.parametrize("answer", BAD)
def test_an_answer_of_another_shape_is_refused_in_one_readable_line(answer: Any) -> None:
    with pytest.raises(ValueError) as info:
        apply_review(Critique(), answer, PLAN)
    text = str(info.value)
    assert text.startswith("review answer: ") and "\n" not in text
    assert '"flags": [{"step": N' in text, "it says what an answer looks like"


def test_answers_of_the_documented_shapes_still_work() -> None:
    edited = apply_review(Critique(), {"flags": [3, {"step": "4"}], "missing": None}, PLAN)
    assert [f.step for f in edited.flags] == [2, 3]
    assert apply_review(Critique(), "accept", PLAN) == Critique()
    assert apply_review(Critique(), False, PLAN).dropped


async def test_a_bad_resume_is_asked_again_with_its_problem_and_a_good_one_then_finishes() -> None:
    graph = build_verifier(checkpointer=InMemorySaver(serde=state_serializer()))
    config: Any = {"configurable": {"thread_id": "bad-answer"}}
    judge = scripted(judged(PLAN, (3, "walks off"), (4, "walks back")), judged(CLEAN))
    context = VerifierContext(judge=judge, review=True)
    first = await graph.ainvoke(
        {"episode_id": "r", "goal": GOAL, "actions": PLAN}, config, context=context
    )
    assert "problem" not in first["__interrupt__"][0].value
    again = await graph.ainvoke(Command(resume={"flags": "x"}), config, context=context)
    question = again["__interrupt__"][0].value
    assert 'flags must be a list, not "x"; answer' in question["problem"]
    assert question["critique"] == first["__interrupt__"][0].value["critique"]
    done = await graph.ainvoke(Command(resume="accept"), config, context=context)
    assert "__interrupt__" not in done and done["stop_reason"] is not None
    assert [s.action for s in done["plan"]] == CLEAN


async def test_a_served_resume_with_null_is_refused_in_one_line() -> None:
    from planverify.graphs.served import InputError, served_graph

    graph = served_graph()
    with pytest.raises(InputError, match="null is no review answer"):
        async for _ in graph.astream(Command(resume=None), {"configurable": {"thread_id": "t"}}):
            pass
