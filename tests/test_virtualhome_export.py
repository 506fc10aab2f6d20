"""An export checks a reviewer's decisions on a VirtualHome plan with VirtualHome's simulator (the
domain's `step_problems`, through the registry), as it checks TEACh's with TEACh's."""

from __future__ import annotations

import pytest

pytest.importorskip(
    "virtualhome_eval.simulation.evolving_graph",
    reason="VirtualHome needs eai-eval (make install adds it without its dependencies)",
)

from planverify.api import verify_plan
from planverify.domains.virtualhome import data
from planverify.domains.virtualhome.domain import step_problems
from planverify.export.curate import Decision, curate
from planverify.export.feasible import episode_problems
from planverify.records.episode import Episode

WASH_HANDS = "file517_1"  # Wash hands: find the soap, grab it, scrub, rinse, wipe
GRAB_SOAP = "[GRAB] <soap> (1.1000)"


def _episode() -> Episode:
    lines = list(data.read_program(WASH_HANDS).lines)
    return Episode(
        id=WASH_HANDS, goal="Wash hands", actions=lines, domain="virtualhome", program=WASH_HANDS
    )


def test_step_problems_say_why_each_step_cannot_happen_and_go_on() -> None:
    lines = [line for line in data.read_program(WASH_HANDS).lines if line != GRAB_SOAP]
    problems = step_problems(lines, WASH_HANDS)
    assert len(problems) == len(lines)
    wipe = lines.index("[WIPE] <hands_both> (1.1001)")
    assert [i for i, p in enumerate(problems) if p] == [wipe]
    assert "does not hold anything" in problems[wipe]


def test_a_virtualhome_plan_a_decision_made_impossible_is_marked() -> None:
    episode = _episode()
    result = verify_plan(
        episode.actions,
        episode.goal or "",
        id=episode.id,
        domain="virtualhome",
        program=WASH_HANDS,
    )
    assert result.status == "ok" and result.refined == episode.actions
    grab = episode.actions.index(GRAB_SOAP)
    removed = Decision(id=episode.id, index=grab, verdict="remove", action=GRAB_SOAP)
    (item,) = curate([result], [episode], [removed]).curated
    assert item.decided == 1
    assert [(s.action, "does not hold anything" in s.problem) for s in item.impossible] == [
        ("[WIPE] <hands_both> (1.1001)", True)
    ]
    kept = Decision(id=episode.id, index=grab, verdict="keep")
    (item,) = curate([result], [episode], [kept]).curated
    assert item.impossible == []


def test_a_virtualhome_record_without_a_program_is_not_checked() -> None:
    episode = _episode().model_copy(update={"program": None})
    assert episode_problems(episode) is None
    assert episode_problems(_episode()) is not None
