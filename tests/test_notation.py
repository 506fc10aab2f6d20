"""The action notation: parsing, byte-identical formatting, escapes and opaque actions."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from planverify.records.notation import (
    MOTION_VERBS,
    ONE_OBJECT_VERBS,
    TWO_OBJECT_VERBS,
    NotationError,
    diagnose,
    escape_text,
    format_action,
    object_type,
    parse_action,
)

TYPES = ["Mug", "CoffeeMachine", "SinkBasin", "BreadSliced", "Faucet", "HousePlant", "Knife"]
object_names = st.builds(
    lambda kind, number: kind + (str(number) if number > 1 else ""),
    st.sampled_from(TYPES),
    st.integers(1, 12),
)
numbers = st.one_of(
    st.floats(-1000, 1000, allow_nan=False).map(lambda v: repr(round(v, 2))),
    st.integers(-360, 360).map(str),
)
utterances = st.text(st.characters(blacklist_categories=("Cs", "Cc")), max_size=60)


@st.composite
def action_lines(draw: st.DrawFn) -> str:
    kind = draw(st.sampled_from(["say", "motion", "one", "two"]))
    if kind == "say":
        agent = draw(st.sampled_from(["Driver", "Commander"]))
        return f"{agent}.Say('{escape_text(draw(utterances))}')"
    if kind == "motion":
        return f"Driver.{draw(st.sampled_from(sorted(MOTION_VERBS)))}({draw(numbers)})"
    if kind == "one":
        return f"Driver.{draw(st.sampled_from(sorted(ONE_OBJECT_VERBS)))}('{draw(object_names)}')"
    a, b = draw(object_names), draw(object_names)
    return f"Driver.{draw(st.sampled_from(sorted(TWO_OBJECT_VERBS)))}('{a}', '{b}')"


@given(action_lines())
def test_every_line_round_trips_byte_for_byte(line: str) -> None:
    action = parse_action(line, strict=True)
    assert action.known
    assert format_action(action) == line
    assert parse_action(str(action)) == action


@given(utterances)
def test_say_text_survives_escaping(text: str) -> None:
    line = f"Commander.Say('{escape_text(text)}')"
    assert parse_action(line).text == text


def test_escaped_quotes_and_backslashes() -> None:
    line = r"Driver.Say('it\'s a \\ backslash')"
    action = parse_action(line)
    assert action.text == "it's a \\ backslash"
    assert str(action) == line


@pytest.mark.parametrize(
    ("line", "verb", "objects", "amount"),
    [
        ("Driver.PickUp('Mug2')", "PickUp", ("Mug2",), None),
        ("Driver.PutAOnB('Mug', 'CoffeeMachine')", "PutAOnB", ("Mug", "CoffeeMachine"), None),
        (
            "Driver.PourFromAIntoB('Cup', 'HousePlant')",
            "PourFromAIntoB",
            ("Cup", "HousePlant"),
            None,
        ),
        ("Driver.Move(-0.5)", "Move", (), "-0.5"),
        ("Driver.TurnRight(90.0)", "TurnRight", (), "90.0"),
    ],
)
def test_typed_fields(line: str, verb: str, objects: tuple[str, ...], amount: str | None) -> None:
    action = parse_action(line)
    assert (action.verb, action.objects, action.amount) == (verb, objects, amount)
    assert not action.is_dialogue


def test_object_types_drop_instance_numbers() -> None:
    assert parse_action("Driver.PutAOnB('Mug2', 'Sink')").object_types == ("Mug", "Sink")
    assert object_type("BreadSliced3") == "BreadSliced"


@pytest.mark.parametrize(
    ("line", "why"),
    [
        ("Driver.Teleport('Kitchen')", "unknown verb 'Teleport'"),
        ("Commander.PickUp('Mug')", "only the Driver acts"),
        ("Robot.PickUp('Mug')", "unknown agent 'Robot'"),
        ("Driver.PickUp('Mug', 'Cup')", "PickUp takes 1 quoted object name"),
        ("Driver.Move('far')", "Move takes one number"),
        ("Driver.PickUp('mug')", "PickUp takes 1 quoted object name"),
    ],
)
def test_unknown_or_malformed_verbs_become_opaque_actions(line: str, why: str) -> None:
    action = parse_action(line)
    assert not action.known
    assert not action.is_dialogue
    assert str(action) == line
    assert why in (diagnose(action) or "")
    with pytest.raises(NotationError, match=why.split("'")[0]):
        parse_action(line, strict=True)


@pytest.mark.parametrize("line", ["", "pick up the mug", "Driver.PickUp", "Driver PickUp('Mug')"])
def test_lines_outside_the_notation_raise(line: str) -> None:
    with pytest.raises(NotationError, match=r"Agent\.Verb"):
        parse_action(line)


def test_unterminated_string_is_reported_in_strict_mode() -> None:
    with pytest.raises(NotationError, match="unterminated"):
        parse_action("Driver.Say('oops)", strict=True)


@pytest.mark.parametrize("brk", ["\n", "\r", "\u2028", "\u2029", "\x85", "\x0b", "\x0c", "\x1c"])
def test_an_action_with_a_line_break_inside_is_not_an_action(brk: str) -> None:
    for line in (f"Commander.Say('a{brk}b')", f"Driver.Teleport('a{brk}b')"):
        with pytest.raises(NotationError, match="spans several lines"):
            parse_action(line)
