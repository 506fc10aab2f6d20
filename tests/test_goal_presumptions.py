"""What the rules Judge presumes of where things were when there is no scene, only the goal and
the plan: each behaviour on a small hand-written plan in TEACh notation."""

from __future__ import annotations

from planverify.world.repair import review

from .scenes import part
from .test_places import placed
from .test_repair import removed, spec_of

TOMATO_IN_FRIDGE = spec_of(
    "Put All X In One Y",
    {
        "tomato": part({"objectType": "Tomato"}),
        "fridge": part({"objectType": "Fridge", "receptacle": 1}),
    },
    [
        {
            "property": "parentReceptacles",
            "tail_entity_list": ["fridge"],
            "tail_determiner_list": ["a"],
            "head_entity_list": ["tomato"],
            "head_determiner_list": ["all"],
        }
    ],
)


# ------------------------------------------------------------ taken right after an open


def test_what_is_taken_after_walking_away_from_an_opened_container_was_not_presumed_in_it() -> None:
    reached_in = ["Driver.Open('Fridge')", "Driver.Move(0.25)", "Driver.PickUp('Tomato')"]
    assert placed(reached_in).get("Tomato").loc == "Fridge"
    # turned round and walked off: where the tomato was, nobody knows
    walked_off = [
        "Driver.Open('Fridge')",
        "Driver.TurnRight(180.0)",
        "Driver.Move(0.75)",
        "Driver.PickUp('Tomato')",
    ]
    assert placed(walked_off).get("Tomato").loc is None
    # a turn and the turn back: the Driver stands where it opened the fridge
    looked_round = [
        "Driver.Open('Fridge')",
        "Driver.TurnLeft(90.0)",
        "Driver.TurnRight(90.0)",
        "Driver.PickUp('Tomato')",
    ]
    assert placed(looked_round).get("Tomato").loc == "Fridge"


def test_what_is_brought_from_across_the_room_into_an_opened_fridge_was_put_there() -> None:
    def stored(*walk: str) -> list[str]:
        return [
            "Driver.Open('Fridge')",
            *walk,
            "Driver.PickUp('Tomato')",
            *reversed(walk),
            "Driver.PutAOnB('Tomato', 'Fridge')",
            "Driver.Close('Fridge')",
        ]

    # taken out at the open door and put back in: the tomato was in the fridge all along
    assert removed(review(stored("Driver.Move(0.25)"), scene=None, spec=TOMATO_IN_FRIDGE)) == [
        (0, 5),
        (2, 4),
    ]
    # fetched from across the room: it had to go in
    fetched = stored("Driver.TurnRight(180.0)", "Driver.Move(0.75)")
    assert removed(review(fetched, scene=None, spec=TOMATO_IN_FRIDGE)) == []
