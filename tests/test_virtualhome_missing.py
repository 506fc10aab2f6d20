"""A model Judge's `#MISSING` lines on a VirtualHome program: read in VirtualHome's notation (by
the domain's reader, which the registry gives the parser), placed, and put in by the loop; on a
TEACh plan the parser reads them as before."""

from __future__ import annotations

import pytest

pytest.importorskip(
    "virtualhome_eval.simulation.evolving_graph",
    reason="VirtualHome needs eai-eval (make install adds it without its dependencies)",
)

from planverify.agents.base import as_data
from planverify.agents.parsing import missing_reader, read_judge_text
from planverify.api import verify_plan
from planverify.domains import domain_of
from planverify.domains.virtualhome import data
from planverify.domains.virtualhome.domain import read_missing

from .conftest import scripted

WASH_HANDS = "file517_1"  # Wash hands: find the soap, grab it, scrub, rinse, wipe
GRAB_SOAP = "[GRAB] <soap> (1.1000)"


def _broken() -> list[str]:
    lines = list(data.read_program(WASH_HANDS).lines)
    return [line for line in lines if line != GRAB_SOAP]


def test_the_reader_takes_a_script_line_and_places_it_after_the_approach() -> None:
    plan = _broken()
    find = plan.index("[FIND] <soap> (1.1000)")
    assert read_missing(f"{GRAB_SOAP}: the wiping needs it in hand", plan) == (GRAB_SOAP, find)
    assert read_missing("[GRAB] \u2039soap\u203a (1.1000)", plan) == (GRAB_SOAP, find)
    assert read_missing(f"{GRAB_SOAP} after step 2", plan) == (GRAB_SOAP, 1)
    assert read_missing(f"before line 1: {GRAB_SOAP}", plan) == (GRAB_SOAP, -1)
    put = "[PUTBACK] <soap> (1.1000) <sink> (1.42)"  # goes after the last step on the soap
    assert read_missing(put, plan) == (put, find)
    assert read_missing("[FLY] <soap> (1.1000)", plan) is None  # no such verb
    assert read_missing("[GRAB] <soap> (1.1000) <sink> (1.42)", plan) is None  # one object
    assert read_missing("Driver.PickUp('Soap')", plan) is None  # TEACh's notation


def test_the_registry_gives_the_parser_virtualhome_s_reader_only() -> None:
    domain = domain_of("virtualhome")
    reader = missing_reader(domain.judge_prompt)
    assert reader is not None and missing_reader(domain_of(None).judge_prompt) is None
    plan = _broken()
    answer = f"ACTION: 1. {as_data(plan[0])}\nANNOTATION: needed.\n#MISSING: {GRAB_SOAP}"
    critique, _ = read_judge_text(answer, plan, reader)
    assert [(m.action, m.after) for m in critique.missing] == [(GRAB_SOAP, plan.index(plan[3]))]
    unread, _ = read_judge_text(answer, plan)  # without it, as TEACh's parser reads it
    assert [m.action for m in unread.missing] == [None]
    bad, _ = read_judge_text("#MISSING: [FLY] <soap> (1.1000)", plan, reader)
    assert [m.action for m in bad.missing] == [None] and bad.dropped


def _all_needed(plan: list[str]) -> str:
    return "\n".join(
        f"ACTION: {i + 1}. {as_data(line)}\nANNOTATION: needed." for i, line in enumerate(plan)
    )


def test_a_model_judge_s_missing_step_is_put_in_on_a_virtualhome_program() -> None:
    plan = _broken()
    whole = list(data.read_program(WASH_HANDS).lines)
    model = scripted(f"{_all_needed(plan)}\n#MISSING: {GRAB_SOAP}", _all_needed(whole))
    result = verify_plan(plan, "Wash hands", domain="virtualhome", program=WASH_HANDS, judge=model)
    assert result.status == "ok", result.error
    assert [i.action for i in result.inserted] == [GRAB_SOAP]
    assert result.refined == whole
