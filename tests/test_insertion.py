"""The missing-step search's pairs of candidates (`repair.insertion._close_pairs`): the same pairs,
in the same order, as every two candidates compared with each other."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from planverify.records.notation import parse_action
from planverify.world.repair.insertion import PAIR_REACH, Template, _close_pairs

ACTIONS = [parse_action(a) for a in ("Driver.ToggleOn('Faucet')", "Driver.Open('Fridge')")]


def every_two(candidates: list[Template]) -> list[list[Template]]:
    """The definition: each candidate with each later one, when near and for another action."""
    return [
        sorted([a, b], key=lambda c: c[0])
        for k, a in enumerate(candidates)
        for b in candidates[k + 1 :]
        if str(a[1]) != str(b[1]) and abs(a[0] - b[0]) <= PAIR_REACH
    ]


@given(
    st.lists(
        st.tuples(st.integers(0, 12), st.sampled_from(ACTIONS), st.sampled_from(["a", "b"])),
        max_size=30,
    )
)
def test_close_pairs_are_every_two_near_candidates_in_order(candidates: list[Template]) -> None:
    assert _close_pairs(candidates) == every_two(candidates)
