"""`planverify review` under both trim policies: steps only `minimal` removes (an `optional`
note on their verdict) are shown apart from removals, and a switch reads every result under
`natural` (kept, marked optional) or `minimal` (removed).

The results are built by hand, as a Judge that trims would write them under each policy.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import orjson
import pytest
from typer.testing import CliRunner

from planverify.cli import app
from planverify.export import curate, read_decisions
from planverify.records.episode import Episode
from planverify.records.result import RunSettings, Verdict, VerificationResult, plan_of
from planverify.records.trim import OptionalNote, TrimPolicy
from planverify.review import build_site, read_entries

from .test_review import browser, script_data, wait_for

__all__ = ["browser"]  # the headless Chromium fixture of test_review
runner = CliRunner()

EPISODE = Episode(
    id="apple-after-a-search",
    goal="Put an apple on the dining table.",
    actions=[
        "Commander.Say('Bring the apple to the table.')",
        "Driver.Open('Cabinet')",
        "Driver.Close('Cabinet')",
        "Driver.Open('Fridge')",
        "Driver.PickUp('Apple')",
        "Driver.Close('Fridge')",
        "Driver.TurnLeft(90.0)",
        "Driver.PutAOnB('Apple', 'DiningTable')",
    ],
)
SEARCH = OptionalNote(
    kind="search", reason="the cabinet is opened only to look for the apple", evidence="heuristic"
)
OPTIONAL = {1: SEARCH, 2: SEARCH}  # the steps only `minimal` removes
TURN = 6  # a removal under either policy
TURN_REASON = "a turn that leads nowhere"


def verdict(i: int, trim: TrimPolicy) -> Verdict:
    """Step i's verdict as a trimming Judge writes it under `trim`: the optional note on a kept
    step of a natural run, on a removal of a minimal run."""
    action = EPISODE.actions[i]
    note = OPTIONAL.get(i)
    if i == TURN:
        return Verdict(
            index=i,
            action=action,
            verdict="remove",
            reason=TURN_REASON,
            iteration=1,
            evidence="goal-text",
        )
    if note is not None and trim == "minimal":
        return Verdict(
            index=i,
            action=action,
            verdict="remove",
            reason=note.reason,
            iteration=1,
            evidence=note.evidence,
            optional=note,
        )
    noted = None if note is None else 1  # the Judge pass that noted it
    return Verdict(index=i, action=action, verdict="keep", iteration=noted, optional=note)


def trimmed(trim: TrimPolicy, id: str = EPISODE.id) -> VerificationResult:
    verdicts = [verdict(i, trim) for i in range(len(EPISODE.actions))]
    kept = [v.verdict == "keep" for v in verdicts]
    return VerificationResult(
        id=id,
        input_digest=EPISODE.input_digest,
        settings=RunSettings(judge="rules", planner="rules", trim=trim),
        goal=EPISODE.goal,
        original=list(EPISODE.actions),
        refined=plan_of(EPISODE.actions, kept, []),
        verdicts=verdicts,
        iterations=1,
        stop_reason="no_objections",
    )


def results_file(folder: Path, *results: VerificationResult) -> Path:
    path = folder / "results.jsonl"
    path.write_bytes(b"".join(orjson.dumps(r.model_dump(mode="json")) + b"\n" for r in results))
    return path


def built(folder: Path, *results: VerificationResult, trim: TrimPolicy | None = None) -> Path:
    site = folder / "site"
    build_site(read_entries(results_file(folder, *results)), site, title="trim", trim=trim)
    return site


def index_rows(site: Path) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    (index,) = script_data(site / "data" / "index.js", "PV.index")
    return index, [dict(zip(index["columns"], row, strict=True)) for row in index["rows"]]


def test_both_readings_come_from_under_and_agree_with_the_other_run() -> None:
    """The fixture itself: a natural run read under minimal is the minimal run, and back."""
    natural, minimal = trimmed("natural"), trimmed("minimal")
    assert natural.under("minimal").verdicts == minimal.verdicts
    assert natural.under("minimal").refined == minimal.refined
    assert minimal.under("natural").verdicts == natural.verdicts
    assert minimal.under("natural").refined == natural.refined
    assert len(natural.refined) == 7 and len(minimal.refined) == 5


def test_optional_steps_reach_the_page_apart_from_removals(tmp_path: Path) -> None:
    site = built(tmp_path, trimmed("natural"))
    _, episode = script_data(site / "data" / "e" / "000000.js", "PV.episode")
    assert episode["trim"] == "natural"
    steps = episode["steps"]
    note = {"kind": "search", "reason": SEARCH.reason, "e": "heuristic"}
    assert [k for k, s in enumerate(steps) if "o" in s] == [1, 2]
    assert steps[1]["v"] == "keep" and steps[1]["o"] == note and "e" not in steps[1]
    assert steps[1]["t"] == {
        "natural": {"v": "keep", "e": None, "r": None},
        "minimal": {"v": "remove", "e": "heuristic", "r": SEARCH.reason},
    }, "its verdict under each policy, as `under` reads it"
    turn = steps[TURN]
    assert (turn["v"], turn["r"]) == ("remove", TURN_REASON)
    assert "o" not in turn and "t" not in turn, "a plain removal is the same under both"

    index, (row,) = index_rows(site)
    assert index["trim"] == "natural" and index["ran"] == {"natural": 1}
    assert (row["trim"], row["optional"]) == ("natural", 2)
    assert (row["refined"], row["removed"]) == (7, 1), "as the run made it"
    assert row["natural"] == [7, 1, [0, 1, 0]]
    assert row["minimal"] == [5, 3, [0, 1, 2]], "the optional steps removed, at their level"


def test_the_summary_is_written_under_each_policy_and_the_page_has_the_switch(
    tmp_path: Path,
) -> None:
    page = (built(tmp_path, trimmed("natural")) / "index.html").read_text(encoding="utf-8")
    assert page.count('<section class="summary">') == 1
    assert '<div class="trim-view" data-trim="natural">' in page
    assert '<div class="trim-view" data-trim="minimal" hidden>' in page, "shown when chosen"
    natural, minimal = page.split('data-trim="minimal" hidden>')
    assert "8 → 7" in natural and "8 → 5" in minimal
    assert "optional steps" in natural and "search 2" in natural
    assert 'id="trim" role="group" aria-label="Trim policy"' in page
    assert '<button type="button" data-trim="natural"' in page
    assert '<button type="button" data-trim="minimal"' in page


@pytest.mark.parametrize(
    ("runs", "opens_on"),
    [
        (["natural"], "natural"),
        (["minimal"], "minimal"),
        (["minimal", "minimal", "natural"], "minimal"),
        (["minimal", "natural"], "natural"),  # as many under each: the default policy
    ],
)
def test_the_site_opens_on_the_policy_the_results_ran_under(
    tmp_path: Path, runs: list[TrimPolicy], opens_on: TrimPolicy
) -> None:
    results = [trimmed(trim, id=f"{EPISODE.id}-{k}") for k, trim in enumerate(runs)]
    index, rows = index_rows(built(tmp_path, *results))
    assert index["trim"] == opens_on
    for row, trim in zip(rows, runs, strict=True):
        assert row["trim"] == trim
        assert (row["natural"][:2], row["minimal"][:2]) == ([7, 1], [5, 3]), "either run"


def test_the_command_says_how_many_steps_are_optional(tmp_path: Path) -> None:
    results = results_file(tmp_path, trimmed("minimal"))
    done = runner.invoke(app, ["review", str(results), "--html", str(tmp_path / "site")])
    assert done.exit_code == 0, done.output
    said = " ".join(done.output.split())
    assert "2 optional step(s)" in said and "the site opens on minimal" in said
    index, _ = index_rows(tmp_path / "site")
    assert index["trim"] == "minimal"
    page = (tmp_path / "site" / "index.html").read_text(encoding="utf-8")
    assert '<div class="trim-view" data-trim="natural" hidden>' in page


def test_a_site_can_be_built_to_open_on_the_other_policy(tmp_path: Path) -> None:
    index, _ = index_rows(built(tmp_path, trimmed("natural"), trim="minimal"))
    assert index["trim"] == "minimal"


# --- in a browser ----------------------------------------------------------------------------


def classes(element: Any) -> set[str]:
    return set((element.get_attribute("class") or "").split())


def test_the_switch_turns_an_optional_step_from_kept_to_removed(
    browser: Any, tmp_path: Path
) -> None:
    from selenium.webdriver.common.by import By

    other = trimmed("natural", id="no-options").model_copy(
        update={
            "verdicts": [
                v.model_copy(update={"optional": None}) for v in trimmed("natural").verdicts
            ]
        }
    )
    site = built(tmp_path, trimmed("natural"), other)
    browser.get((site / "index.html").resolve().as_uri())
    wait_for(browser, "return document.documentElement.dataset.ready === '1'")
    pressed = "return document.querySelector('#trim [aria-pressed=true]').dataset.trim"
    assert browser.execute_script(pressed) == "natural", "opens on the policy of the run"
    removed = [c.text for c in browser.find_elements(By.CSS_SELECTOR, "#rows td.removed-cell")]
    assert removed == ["1", "1"]
    assert browser.find_element(By.CSS_SELECTOR, ".trim-view[data-trim='natural']").is_displayed()

    browser.find_element(By.CSS_SELECTOR, "#trim button[data-trim='minimal']").click()
    wait_for(browser, "return document.documentElement.dataset.trim === 'minimal'")
    removed = [c.text for c in browser.find_elements(By.CSS_SELECTOR, "#rows td.removed-cell")]
    assert removed == ["3", "1"], "the counts follow the switch; no note, no change"
    assert browser.find_element(By.CSS_SELECTOR, ".trim-view[data-trim='minimal']").is_displayed()
    assert not browser.find_element(
        By.CSS_SELECTOR, ".trim-view[data-trim='natural']"
    ).is_displayed()

    browser.find_element(By.CSS_SELECTOR, "#trim button[data-trim='natural']").click()
    browser.find_element(By.LINK_TEXT, EPISODE.id).click()
    wait_for(browser, "return document.querySelector('#episode-view h1') !== null")
    steps = browser.find_elements(By.CSS_SELECTOR, ".original li.step")
    search = steps[1]
    assert {"optional"} <= classes(search) and "removed" not in classes(search)
    assert search.find_element(By.CSS_SELECTOR, ".pill.optional").text == "optional · search"
    assert SEARCH.reason in search.find_element(By.CSS_SELECTOR, ".optional-reason").text
    assert "removed" in classes(steps[TURN]) and "optional" not in classes(steps[TURN])
    assert not steps[TURN].find_elements(By.CSS_SELECTOR, ".pill.optional")
    legend = browser.find_element(By.CSS_SELECTOR, ".legend .l-optional").text
    assert "(kept here)" in legend
    refined = browser.find_elements(By.CSS_SELECTOR, ".refined li.step")
    assert (
        len(refined) == 7
        and len(browser.find_elements(By.CSS_SELECTOR, ".refined li.optional")) == 2
    )
    assert browser.find_element(By.CSS_SELECTOR, ".original h2 .count").text == (
        "8 steps, 1 removed, 2 optional"
    )

    browser.find_element(By.CSS_SELECTOR, "#trim button[data-trim='minimal']").click()
    wait_for(browser, "return document.querySelectorAll('.original li.step.removed').length === 3")
    search = browser.find_elements(By.CSS_SELECTOR, ".original li.step")[1]
    assert {"optional", "removed"} <= classes(search), "removed, still marked optional"
    line = search.find_element(By.CSS_SELECTOR, "code.action")
    assert "line-through" in line.value_of_css_property("text-decoration-line")
    assert search.find_element(By.CSS_SELECTOR, ".pill.optional").text == "optional · search"
    assert SEARCH.reason in search.find_element(By.CSS_SELECTOR, ".reason").text
    assert search.find_element(By.CSS_SELECTOR, ".pill.evidence").text == "heuristic"
    assert len(browser.find_elements(By.CSS_SELECTOR, ".refined li.step")) == 5
    assert not browser.find_elements(By.CSS_SELECTOR, ".refined li.optional")
    assert "(removed here)" in browser.find_element(By.CSS_SELECTOR, ".legend .l-optional").text


def test_a_decision_on_an_optional_step_holds_under_either_policy_and_exports(
    browser: Any, tmp_path: Path
) -> None:
    """Decisions name a step and the verdict chosen, whatever the switch shows: the reviewer
    removes an optional step under natural; it stays removed under minimal, and the file names
    the step by index, with its kind for people reading it."""
    from selenium.webdriver.common.by import By

    result = trimmed("natural")
    site = built(tmp_path, result)
    browser.get((site / "index.html").resolve().as_uri() + "#e=0")
    wait_for(browser, "return document.querySelector('#episode-view h1') !== null")
    step = browser.find_elements(By.CSS_SELECTOR, ".original li.step")[2]
    step.find_element(By.CSS_SELECTOR, "button.decide").click()
    wait_for(browser, "return document.querySelectorAll('.original li.overruled').length === 1")
    assert len(browser.find_elements(By.CSS_SELECTOR, ".refined li.step")) == 6

    browser.find_element(By.CSS_SELECTOR, "#trim button[data-trim='minimal']").click()
    wait_for(browser, "return document.documentElement.dataset.trim === 'minimal'")
    overruled = browser.find_elements(By.CSS_SELECTOR, ".original li.overruled")
    assert len(overruled) == 1 and "Removed by the reviewer" in overruled[0].text
    assert len(browser.find_elements(By.CSS_SELECTOR, ".refined li.step")) == 5

    downloaded = json.loads(browser.execute_script("return PV.decisionsFile()"))
    (written,) = downloaded["decisions"]
    assert (written["index"], written["verdict"], written["optional"]) == (2, "remove", "search")
    file = tmp_path / "decisions.json"
    file.write_text(json.dumps(downloaded), encoding="utf-8")
    (decision,) = read_decisions(file)
    (item,) = curate([result], [EPISODE], [decision]).curated
    assert EPISODE.actions[2] not in item.plan and EPISODE.actions[1] in item.plan
