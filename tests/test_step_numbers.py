"""Step numbers, one rule: record fields are 0-based positions, text for people counts from 1."""

from __future__ import annotations

import contextlib
import io
import re
import sys
from types import ModuleType

import pytest
from pydantic import ValidationError

from graphs.state import VerifyInput
from planverify.records.episode import EpisodeError, parse_episode, problems

from .conftest import ROOT

MOVE = "Driver.Move(1.0)"


def input_problems(**fields: object) -> list[str]:
    with pytest.raises(ValidationError) as caught:
        VerifyInput.model_validate(fields)
    return problems(caught.value)


def test_the_server_names_a_bad_action_by_its_step_counted_from_1() -> None:
    assert input_problems(actions=["walk to the mug"]) == [
        "actions: action 1: not an action in Agent.Verb(args) form: 'walk to the mug'"
    ]
    assert input_problems(actions=[MOVE, MOVE, "walk"])[0].startswith("actions: action 3: ")


def test_an_item_of_the_wrong_type_is_counted_from_1_too() -> None:
    assert input_problems(actions=[MOVE, 7]) == ["action 2: Input should be a valid string (got 7)"]
    scene = {"objects": [{"id": "Mug|1", "type": "Mug"}, {"id": "Sink|1"}]}
    assert input_problems(actions=[MOVE], scene=scene) == ["scene.object 2, type: Field required"]


def test_a_location_counts_list_items_from_1_under_their_list_name() -> None:
    from planverify.records.jsonl import location

    assert location(("actions", 0)) == "action 1"
    assert location(("scene", "objects", 2, "parent", 0)) == "scene.object 3, parent 1"
    assert location(("settings", "models", "judge")) == "settings.models.judge"
    assert location((4,)) == "item 5"


def test_a_bad_label_is_counted_from_1_and_quotes_its_index_as_given() -> None:
    plan = ["Commander.Say('Make coffee.')", MOVE]
    with pytest.raises(EpisodeError) as caught:
        parse_episode(
            {
                "id": "x",
                "actions": plan,
                "labels": [{"type": "REMOVE", "index": 1}, {"type": "REMOVE", "index": 2}],
            }
        )
    assert (
        caught.value.message
        == "label 2: REMOVE index 2 out of range (step 3 of a plan of 2 step(s))"
    )


def readme_block(containing: str) -> str:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    blocks = re.findall(r"^```python\n(.*?)^```", text, re.M | re.S)
    (block,) = [b for b in blocks if containing in b]
    return block


def test_the_readme_example_prints_the_steps_its_reasons_count(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    code = readme_block("print(result.stop_reason)")
    module = ModuleType("readme_api_example")
    monkeypatch.setitem(sys.modules, module.__name__, module)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, "README.md", "exec"), module.__dict__)
    original = module.__dict__["result"].original
    printed = re.findall(r"^step (\d+): (\S+) - ", out.getvalue(), re.M)
    assert printed, out.getvalue()
    for number, action in printed:
        assert original[int(number) - 1] == action
    assert ("3", MOVE) in printed, "the move undone by the next step is step 3 of the plan"
