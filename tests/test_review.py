"""`planverify review`: the static site, built in Python and rendered in a real headless browser.

The browser tests use Debian's `chromium` and `chromium-driver` through Selenium (the driver
named explicitly, so Selenium Manager never downloads one) and skip when they are missing. The
site is opened from `file://`, as a reviewer would; nothing is served or fetched.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest
from typer.testing import CliRunner

from planverify.api import verify_many
from planverify.cli import app
from planverify.export import curate, read_decisions
from planverify.records.episode import Episode, iter_jsonl
from planverify.records.result import VerificationResult
from planverify.review import MARKER, attach, build_site, read_entries

from .conftest import ROOT

EXAMPLES = ROOT / "examples" / "episodes.jsonl"
SAMPLE = [e for e in iter_jsonl(EXAMPLES) if isinstance(e, Episode)]
CHROMIUM = Path("/usr/bin/chromium")
CHROMEDRIVER = Path("/usr/bin/chromedriver")
runner = CliRunner()


LEVELS_OF_FIRST = ["proven", "proven", "goal-text", "heuristic"]  # its four removals, in order


def removals(record: dict[str, Any]) -> list[dict[str, Any]]:
    return [v for v in record["verdicts"] if v["verdict"] == "remove"]


@pytest.fixture(scope="module")
def results_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    results = verify_many(SAMPLE)
    failed = VerificationResult.failed(
        Episode(id="broken <b>html</b>", actions=["Driver.Move(1.0)"]), "RuntimeError: down"
    )
    records = [r.model_dump(mode="json") for r in results] + [failed.model_dump(mode="json")]
    records[1]["history"][0]["vetoes"] = [
        {"kind": "flag", "action": records[1]["original"][2], "step": 2, "reason": "disagreed"}
    ]
    for record in records[1:-1]:  # levels set by hand, so that the filters' counts are known
        for change in [*removals(record), *record["inserted"]]:
            change["evidence"] = "goal-text"
    for verdict, level in zip(removals(records[0]), LEVELS_OF_FIRST, strict=True):
        verdict["evidence"] = level
    for verdict in removals(records[2]):
        del verdict["evidence"]  # a record written before levels: heuristic
    path = tmp_path_factory.mktemp("review") / "results.jsonl"
    path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in records))
    return path


@pytest.fixture(scope="module")
def site(results_file: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("site")
    done = runner.invoke(
        app, ["review", str(results_file), "--html", str(folder), "--episodes", str(EXAMPLES)]
    )
    assert done.exit_code == 0, done.output
    return folder


def script_data(path: Path, call: str) -> Any:
    text = path.read_text(encoding="utf-8")
    assert text.startswith(call + "(") and text.rstrip().endswith(");")
    body = text[len(call) + 1 : text.rstrip().rindex(")")]
    return json.loads(f"[{body}]")


def test_the_site_is_static_files_with_lazy_episode_scripts(site: Path) -> None:
    assert (site / "index.html").is_file() and (site / "assets" / "review.js").is_file()
    page = (site / "index.html").read_text(encoding="utf-8")
    assert "http://" not in page and "https://" not in page, "no CDN, nothing fetched"
    assert '<script src="data/index.js"></script>' in page
    (index,) = script_data(site / "data" / "index.js", "PV.index")
    rows = [dict(zip(index["columns"], row, strict=True)) for row in index["rows"]]
    assert [r["id"] for r in rows[:-1]] == [e.id for e in SAMPLE]
    assert rows[0]["task"] == "Coffee" and rows[0]["removed"] == 4
    assert rows[-1]["stop"] == "error"
    assert rows[1]["vetoes"] == 1 and rows[0]["vetoes"] == 0, "history[*].vetoes, when present"
    files = sorted((site / "data" / "e").glob("*.js"))
    assert len(files) == len(rows)
    n, episode = script_data(files[0], "PV.episode")
    assert n == 0 and episode["id"] == SAMPLE[0].id
    assert [s["v"] for s in episode["steps"]].count("remove") == 4
    assert episode["steps"][1]["who"] == "Commander", "dialogue goes as dialogue"
    assert "&lt;b&gt;html" not in page and "broken <b>" not in page, "ids reach the page as data"
    review = (ROOT / "planverify" / "review" / "assets" / "review.js").read_text(encoding="utf-8")
    assert "innerHTML" not in review and "fetch(" not in review and "XMLHttpRequest" not in review


def test_the_pages_get_the_level_of_every_change(site: Path) -> None:
    (index,) = script_data(site / "data" / "index.js", "PV.index")
    assert index["levels"] == ["proven", "goal-text", "heuristic"]
    levels = [dict(zip(index["columns"], row, strict=True))["levels"] for row in index["rows"]]
    assert levels[0] == [2, 1, 1] and levels[2] == [0, 0, 2], "old records: heuristic"
    _, episode = script_data(site / "data" / "e" / "000000.js", "PV.episode")
    assert [s.get("e") for s in episode["steps"] if s["v"] == "remove"] == LEVELS_OF_FIRST
    assert all("e" not in s for s in episode["steps"] if s["v"] == "keep")
    summary = (site / "index.html").read_text(encoding="utf-8")
    assert "proven 2, goal-text " in summary, "removals by level in the summary"


def test_results_without_optional_steps_read_the_same_under_both_trim_policies(
    site: Path,
) -> None:
    (index,) = script_data(site / "data" / "index.js", "PV.index")
    assert index["trim"] == "natural" and index["trims"] == ["natural", "minimal"]
    for values in index["rows"]:
        row = dict(zip(index["columns"], values, strict=True))
        as_run = [row["refined"], row["removed"], row["levels"]]
        assert row["natural"] == row["minimal"] == as_run and row["optional"] == 0
    _, episode = script_data(site / "data" / "e" / "000000.js", "PV.episode")
    assert not [s for s in episode["steps"] if "o" in s or "t" in s]


def test_without_episodes_the_site_shows_what_the_results_hold(
    results_file: Path, tmp_path: Path
) -> None:
    entries = read_entries(results_file)
    build_site(entries, tmp_path, title="bare")
    (index,) = script_data(tmp_path / "data" / "index.js", "PV.index")
    assert {row[index["columns"].index("task")] for row in index["rows"]} == {None}
    other = tmp_path / "other.jsonl"
    records = [orjson.loads(line) for line in EXAMPLES.read_bytes().splitlines()]
    records[0]["goal"] = "Another goal."
    other.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in records))
    assert attach(entries, iter_jsonl(other)) == [SAMPLE[0].id], "other content is not joined"


def test_a_tampered_marker_never_removes_a_folder_or_what_lies_outside(
    results_file: Path, tmp_path: Path
) -> None:
    entries = read_entries(results_file)
    site = tmp_path / "site"
    build_site(entries, site, title="first")
    outside = tmp_path / "keep.txt"
    outside.write_text("mine")
    (site / "data" / "e" / "sub").mkdir()
    marker = site / MARKER
    listed = orjson.loads(marker.read_bytes())
    listed["files"] += ["data", "data/e", "data/e/sub", ".", "", "../keep.txt", "data/../.."]
    marker.write_bytes(orjson.dumps(listed))
    build_site(entries[:2], site, title="again")  # crashed on a listed folder
    assert (site / "data" / "e" / "sub").is_dir() and outside.read_text() == "mine"
    assert sorted(p.name for p in (site / "data" / "e").iterdir()) == [
        "000000.js",
        "000001.js",
        "sub",
    ]
    assert orjson.loads(marker.read_bytes())["files"][-1] == "index.html", "listed anew"


@pytest.fixture(scope="module")
def odd_site(results_file: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A site whose data looks like code: task families and splits named after JavaScript's
    object internals, placeholders of the page's template in the title and a task family,
    and an episode with an unknown verb (warned about) as its third step."""
    records = [orjson.loads(line) for line in results_file.read_bytes().splitlines()]
    records[0].update(task="constructor", split="__proto__")
    records[1].update(task="{{title}}", split="constructor")
    records[2].update(task="__proto__", split="hasOwnProperty")
    odd = Episode(
        id="odd-verb", goal="Get to the kitchen.", actions=[*SAMPLE[0].actions[:2], TELEPORT]
    )
    records.append(verify_many([odd])[0].model_dump(mode="json"))
    path = tmp_path_factory.mktemp("odd") / "odd.jsonl"
    path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in records))
    folder = tmp_path_factory.mktemp("odd-site")
    done = runner.invoke(app, ["review", str(path), "--html", str(folder), "--title", ODD_TITLE])
    assert done.exit_code == 0, done.output
    return folder


TELEPORT = "Driver.Teleport('Kitchen')"
PHONE = 420  # CSS pixels: a phone held upright
ODD_TITLE = "{{summary}} of {{count}}"


def test_nothing_from_the_data_is_expanded_as_a_template(odd_site: Path) -> None:
    page = (odd_site / "index.html").read_text(encoding="utf-8")
    assert f"<title>{ODD_TITLE} · planverify review</title>" in page
    assert f'<span class="title">{ODD_TITLE}</span>' in page
    assert page.count('<section class="summary">') == 1, "the summary is put in once"
    assert ">{{title}}</text>" in page, "a task family in the chart stays as written"


def test_a_pass_shows_each_reason_once_per_step(site: Path) -> None:
    """The rules Planner's edits carry the reasons of the flags they apply: the page gives the
    flag's reason, and the edit on the same step says no more."""
    _, episode = script_data(site / "data" / "e" / "000000.js", "PV.episode")
    (first, *_) = episode["passes"]
    assert first["flags"] and first["edits"]
    shown = [(f[1], f[2]) for f in first["flags"]]
    shown += [(e[1], e[2]) for e in first["edits"] if e[2] is not None]
    assert len(shown) == len(set(shown)), "no reason twice for one step"
    flagged = {f[1] for f in first["flags"]}
    assert all(e[2] is None for e in first["edits"] if e[1] in flagged)


def test_warnings_count_steps_from_1_as_the_page_does(odd_site: Path) -> None:
    (index,) = script_data(odd_site / "data" / "index.js", "PV.index")
    n = next(row[0] for row in index["rows"] if row[1] == "odd-verb")
    _, episode = script_data(odd_site / "data" / "e" / f"{n:06d}.js", "PV.episode")
    assert episode["steps"][2]["a"] == TELEPORT
    assert episode["warnings"][0].startswith("step 3: unknown verb 'Teleport'")


# --- in a browser ----------------------------------------------------------------------------


@pytest.fixture
def browser() -> Iterator[Any]:
    if not (CHROMIUM.exists() and CHROMEDRIVER.exists()):
        pytest.skip(
            "no browser: the review site test needs Debian's chromium and chromium-driver "
            "(apt-get install chromium chromium-driver)"
        )
    webdriver = pytest.importorskip("selenium.webdriver", reason="selenium is not installed")
    from selenium.webdriver.chrome.service import Service

    profile = tempfile.mkdtemp(prefix="pv-chromium-")
    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for argument in (
        "--headless=new",
        "--no-sandbox",  # CI runs as root
        "--disable-gpu",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        f"--user-data-dir={profile}",
        "--window-size=1366,900",
    ):
        options.add_argument(argument)
    driver = webdriver.Chrome(service=Service(str(CHROMEDRIVER)), options=options)
    driver.set_page_load_timeout(60)
    try:
        yield driver
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)


def wait_for(driver: Any, script: str, timeout: float = 20.0) -> Any:
    from selenium.webdriver.support.ui import WebDriverWait

    return WebDriverWait(driver, timeout).until(lambda d: d.execute_script(script))


def test_the_site_renders_episodes_reasons_and_keeps_decisions_across_a_reload(
    browser: Any, site: Path, tmp_path: Path, results_file: Path
) -> None:
    from selenium.webdriver.common.by import By

    url = (site / "index.html").resolve().as_uri()
    browser.get(url)
    wait_for(browser, "return document.documentElement.dataset.ready === '1'")
    ids = [a.text for a in browser.find_elements(By.CSS_SELECTOR, "#rows td.id a")]
    assert ids[: len(SAMPLE)] == [e.id for e in SAMPLE] and len(ids) == len(SAMPLE) + 1
    assert "broken <b>html</b>" in ids, "shown as text, not markup"
    summary = browser.find_element(By.CSS_SELECTOR, ".summary").text
    assert "steps removed" in summary and "Removed steps per task family" in summary

    browser.find_element(By.LINK_TEXT, SAMPLE[0].id).click()
    wait_for(browser, "return document.querySelector('#episode-view h1') !== null")
    removed = browser.find_elements(By.CSS_SELECTOR, ".original li.step.removed")
    assert len(removed) == 4
    action = removed[0].find_element(By.CSS_SELECTOR, "code.action")
    assert "line-through" in action.value_of_css_property("text-decoration-line")
    reason = removed[0].find_element(By.CSS_SELECTOR, ".reason").text
    assert "Apple" in reason, "the Judge's reason is shown beside the struck-through step"
    assert browser.find_elements(By.CSS_SELECTOR, ".original li.say.commander .bubble")
    assert len(browser.find_elements(By.CSS_SELECTOR, ".history details")) == 2
    first_pass = browser.find_element(By.CSS_SELECTOR, ".history details")
    said = [r.text for r in first_pass.find_elements(By.CSS_SELECTOR, ".reason")]
    assert said and "Apple" in said[0]
    assert said.count(said[0]) == 2, "on its two steps once each, not again under the edits"

    removed[0].find_element(By.CSS_SELECTOR, "button.decide").click()  # keep it after all
    wait_for(
        browser, "return document.querySelectorAll('.original li.step.overruled').length === 1"
    )
    browser.refresh()
    wait_for(browser, "return document.querySelector('#episode-view h1') !== null")
    kept = browser.find_elements(By.CSS_SELECTOR, ".original li.step.overruled")
    assert len(kept) == 1 and "Kept by the reviewer" in kept[0].text, "survives a reload"
    assert browser.find_element(By.ID, "decided").text == "1 decision"
    assert len(browser.find_elements(By.CSS_SELECTOR, ".original li.step.removed")) == 3

    body = browser.find_element(By.TAG_NAME, "body")
    body.send_keys("j")
    wait_for(
        browser,
        f"return document.querySelector('#episode-view h1')?.textContent === {json.dumps(SAMPLE[1].id)}",
    )
    body.send_keys("k")
    wait_for(
        browser,
        f"return document.querySelector('#episode-view h1')?.textContent === {json.dumps(SAMPLE[0].id)}",
    )

    decisions = tmp_path / "decisions.json"
    downloaded = browser.execute_script("return PV.decisionsFile()")
    assert json.loads(downloaded)["version"] == 2
    (written,) = json.loads(downloaded)["decisions"]
    assert (written["index"], written["step"]) == (4, 5), "0-based index, and the step shown"
    decisions.write_text(downloaded, encoding="utf-8")
    (decision,) = read_decisions(decisions)
    assert (decision.id, decision.verdict, decision.index) == (SAMPLE[0].id, "keep", 4)
    results = [
        VerificationResult.model_validate_json(x) for x in results_file.read_bytes().splitlines()
    ]
    (item, *_) = curate(results, SAMPLE, [decision]).curated
    assert "Driver.PickUp('Apple')" in item.plan, "the export applies the browser's decision"

    browser.get(url)  # the index: filters and sorting
    wait_for(browser, "return document.documentElement.dataset.ready === '1'")
    browser.find_element(By.CSS_SELECTOR, "th[data-key='removed']").click()
    first = browser.find_element(By.CSS_SELECTOR, "#rows td.id a").text
    assert first in ("coffee-detour", "breakfast-mixed"), "most removals first"
    browser.find_element(By.ID, "f-decided").click()
    assert [a.text for a in browser.find_elements(By.CSS_SELECTOR, "#rows td.id a")] == [
        SAMPLE[0].id
    ]


def test_a_decision_stays_with_the_results_it_was_made_on(
    browser: Any, results_file: Path, tmp_path: Path
) -> None:
    """Two sites of other results for the same episodes: a step the Planner inserted in one is
    not the step at the same place in the other, so a decision made on one stays there."""
    from selenium.webdriver.common.by import By

    records = [orjson.loads(line) for line in results_file.read_bytes().splitlines()]
    n = next(k for k, r in enumerate(records) if r["inserted"])
    made_on = records[n]["inserted"][0]["action"]
    sites = {}
    for name in ("one", "other"):
        if name == "other":
            records[n]["inserted"][0]["action"] = "Driver.Open('Fridge')"
        path = tmp_path / f"{name}.jsonl"
        path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in records))
        build_site(read_entries(path), tmp_path / name, title=name)
        sites[name] = (tmp_path / name / "index.html").resolve().as_uri()

    def open_episode(site: str) -> None:
        browser.get(f"{sites[site]}#e={n}")
        wait_for(browser, "return document.querySelector('#episode-view h1') !== null")

    open_episode("one")
    (added,) = browser.find_elements(By.CSS_SELECTOR, ".refined li.inserted")
    assert made_on in added.text
    added.find_element(By.CSS_SELECTOR, "button.decide").click()
    wait_for(browser, "return document.querySelectorAll('.refined li.rejected').length === 1")
    assert browser.find_element(By.ID, "decided").text == "1 decision"

    open_episode("other")
    assert not browser.find_elements(By.CSS_SELECTOR, ".refined li.rejected")
    (added,) = browser.find_elements(By.CSS_SELECTOR, ".refined li.inserted")
    assert "Driver.Open('Fridge')" in added.text, "the other site's insertion stands"
    assert browser.find_element(By.ID, "decided").text == "0 decisions"
    assert json.loads(browser.execute_script("return PV.decisionsFile()"))["decisions"] == []

    open_episode("one")
    assert len(browser.find_elements(By.CSS_SELECTOR, ".refined li.rejected")) == 1
    (decision,) = json.loads(browser.execute_script("return PV.decisionsFile()"))["decisions"]
    assert (decision["inserted"], decision["action"]) == (0, made_on)


def test_every_change_shows_its_level_and_the_level_filters_episodes_and_steps(
    browser: Any, site: Path
) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    browser.get((site / "index.html").resolve().as_uri())
    wait_for(browser, "return document.documentElement.dataset.ready === '1'")
    everything = len(browser.find_elements(By.CSS_SELECTOR, "#rows td.id a"))
    levels = Select(browser.find_element(By.ID, "f-evidence"))
    assert [o.text for o in levels.options] == [
        "All evidence levels",
        "with proven changes (1)",
        "with goal-text changes (8)",  # set by hand on every episode but the first and third
        "with heuristic changes (2)",
    ]
    levels.select_by_value("proven")
    assert [a.text for a in browser.find_elements(By.CSS_SELECTOR, "#rows td.id a")] == [
        SAMPLE[0].id
    ], "only the episode with a proven change"
    levels.select_by_value("heuristic")
    shown = [a.text for a in browser.find_elements(By.CSS_SELECTOR, "#rows td.id a")]
    assert shown == [SAMPLE[0].id, SAMPLE[2].id], "an old record's removals are heuristic"

    browser.find_element(By.LINK_TEXT, SAMPLE[0].id).click()
    wait_for(browser, "return document.querySelector('#episode-view h1') !== null")
    removed = browser.find_elements(By.CSS_SELECTOR, ".original li.step.removed")
    pills = [li.find_element(By.CSS_SELECTOR, ".pill.evidence").text for li in removed]
    assert pills == LEVELS_OF_FIRST, "every removal shows its level"
    assert not browser.find_elements(By.CSS_SELECTOR, ".original li.step:not(.removed) .evidence")
    dimmed = [li for li in removed if "off-level" in li.get_attribute("class")]
    assert len(dimmed) == 3, "the episode page filters steps by the index's level"
    assert (
        "Showing heuristic changes: 1 of 4"
        in browser.find_element(By.CSS_SELECTOR, ".level-note").text
    )
    assert float(dimmed[0].value_of_css_property("opacity")) < 1

    Select(browser.find_element(By.ID, "ep-evidence")).select_by_value("proven")
    wait_for(
        browser, "return document.querySelectorAll('.original li.step.off-level').length === 2"
    )
    assert (
        "Showing proven changes: 2 of 4"
        in browser.find_element(By.CSS_SELECTOR, ".level-note").text
    )
    Select(browser.find_element(By.ID, "ep-evidence")).select_by_value("")
    wait_for(browser, "return document.querySelectorAll('li.step.off-level').length === 0")
    assert not browser.find_elements(By.CSS_SELECTOR, ".level-note")
    browser.find_element(By.TAG_NAME, "body").send_keys("u")
    wait_for(browser, "return !document.getElementById('index-view').hidden")
    assert len(browser.find_elements(By.CSS_SELECTOR, "#rows td.id a")) == everything, (
        "the episode page's choice is the index's filter"
    )


def test_a_site_of_teach_games_lists_them_with_their_split_and_opens_one(
    browser: Any, shared_dir: Path, tmp_path: Path
) -> None:
    from selenium.webdriver.common.by import By

    from planverify.inputs.sources import load_episodes

    games = shared_dir / "teach" / "games" / "valid_seen"
    episodes = list(load_episodes([games]))[:25]
    results = tmp_path / "results.jsonl"
    results.write_bytes(
        b"".join(r.model_dump_json().encode() + b"\n" for r in verify_many(episodes))
    )
    done = runner.invoke(
        app, ["review", str(results), "--html", str(tmp_path / "site"), "--episodes", str(games)]
    )
    assert done.exit_code == 0, done.output
    browser.get((tmp_path / "site" / "index.html").resolve().as_uri())
    wait_for(browser, "return document.documentElement.dataset.ready === '1'")
    rows = browser.find_elements(By.CSS_SELECTOR, "#rows tr")
    assert len(rows) == 25 and all("valid_seen" in row.text for row in rows)
    browser.find_element(By.CSS_SELECTOR, "th[data-key='removed']").click()
    browser.find_element(By.CSS_SELECTOR, "#rows td.id a").click()
    wait_for(browser, "return document.querySelector('#episode-view h1') !== null")
    removed = browser.find_elements(By.CSS_SELECTOR, ".original li.step.removed .reason")
    assert removed and all(r.text for r in removed)


def decide_buttons_shown(browser: Any) -> list[Any]:
    """The Keep/Remove/Reject buttons of the episode page, each checked to be visible as it is,
    with the pointer on none of them (nothing hovered)."""
    from selenium.webdriver.common.by import By

    buttons = browser.find_elements(By.CSS_SELECTOR, "li.step button.decide")
    assert buttons
    for button in buttons:
        assert button.is_displayed() and button.size["width"] > 0
        assert button.value_of_css_property("opacity") == "1", button.text
        assert button.value_of_css_property("visibility") == "visible"
    return buttons


def test_on_a_phone_the_page_fits_the_title_is_whole_and_the_buttons_show(
    browser: Any, odd_site: Path
) -> None:
    """420 px wide, a touch screen (no hover): nothing scrolls sideways, the title wraps
    instead of being cut, the Keep/Remove buttons are there, and filter values named like
    JavaScript's object internals are values like any other."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    browser.execute_cdp_cmd(
        "Emulation.setDeviceMetricsOverride",
        {"width": PHONE, "height": 860, "deviceScaleFactor": 1, "mobile": True},
    )
    browser.execute_cdp_cmd("Emulation.setTouchEmulationEnabled", {"enabled": True})
    browser.get((odd_site / "index.html").resolve().as_uri())
    wait_for(browser, "return document.documentElement.dataset.ready === '1'")
    # content wider than the screen would scroll sideways (or, on a phone, be zoomed out to fit)
    wide = "return document.documentElement.scrollWidth"
    assert browser.execute_script(wide) <= PHONE, "the index does not scroll sideways"
    assert browser.execute_script("return window.innerWidth") == PHONE
    title = browser.find_element(By.CSS_SELECTOR, ".top .title")
    assert title.text == ODD_TITLE
    whole = (
        "const t = arguments[0], r = t.getBoundingClientRect(); "
        "return t.scrollWidth <= t.clientWidth && r.left >= 0 && r.right <= window.innerWidth"
    )
    assert browser.execute_script(whole, title), "the title is not cut"

    options = {
        select: [o.text for o in Select(browser.find_element(By.ID, select)).options]
        for select in ("f-task", "f-split")
    }
    assert {"constructor (1)", "__proto__ (1)", "{{title}} (1)"} <= set(options["f-task"])
    assert {"__proto__ (1)", "constructor (1)", "hasOwnProperty (1)"} <= set(options["f-split"])
    Select(browser.find_element(By.ID, "f-task")).select_by_value("__proto__")
    shown = [a.text for a in browser.find_elements(By.CSS_SELECTOR, "#rows td.id a")]
    assert shown == [SAMPLE[2].id]
    Select(browser.find_element(By.ID, "f-task")).select_by_value("")
    Select(browser.find_element(By.ID, "f-split")).select_by_value("constructor")
    shown = [a.text for a in browser.find_elements(By.CSS_SELECTOR, "#rows td.id a")]
    assert shown == [SAMPLE[1].id]

    browser.get((odd_site / "index.html").resolve().as_uri() + "#e=0")
    wait_for(browser, "return document.querySelector('#episode-view h1') !== null")
    assert browser.execute_script(wide) <= PHONE, "the episode page does not scroll sideways"
    buttons = decide_buttons_shown(browser)
    assert all(b.location["x"] + b.size["width"] <= PHONE for b in buttons), "on screen"
    buttons[0].click()  # a tap decides
    wait_for(browser, "return document.querySelectorAll('li.step.overruled').length === 1")


def test_the_refined_plan_is_numbered_in_itself_with_the_original_numbers_beside(
    browser: Any, odd_site: Path
) -> None:
    from selenium.webdriver.common.by import By

    browser.get((odd_site / "index.html").resolve().as_uri() + "#e=0")
    wait_for(browser, "return document.querySelector('#episode-view h1') !== null")
    decide_buttons_shown(browser)  # on a wide screen too, without hovering
    original = [
        li.find_element(By.CSS_SELECTOR, ".body").text.split("\n")[-1]
        for li in browser.find_elements(By.CSS_SELECTOR, ".original li.step")
    ]
    refined = browser.find_elements(By.CSS_SELECTOR, ".refined li.step")
    count = browser.find_element(By.CSS_SELECTOR, ".refined h2 .count").text
    assert count.startswith(f"{len(refined)} steps")
    numbers = [li.find_element(By.CSS_SELECTOR, ".idx").text for li in refined]
    assert numbers == [str(k) for k in range(1, len(refined) + 1)]
    for li in refined:
        was = li.find_element(By.CSS_SELECTOR, ".was").text
        if was == "new":
            continue
        step = int(was.removeprefix("was "))
        text = li.find_element(By.CSS_SELECTOR, ".body").text.split("\n")[-1]
        assert original[step - 1] == text, (was, text)
    assert len({li.find_element(By.CSS_SELECTOR, ".was").text for li in refined}) == len(refined)


def test_decisions_stored_before_version_2_download_as_version_2(
    browser: Any, site: Path, results_file: Path, tmp_path: Path
) -> None:
    """The browser kept a step's 0-based index as `step` before version 2 of the file: such a
    decision downloads under `index`, with the step the page shows as `step`."""
    from selenium.webdriver.common.by import By

    (entry, *_) = read_entries(results_file)
    removed = next(v for v in entry.result.verdicts if v.verdict == "remove")
    stored = {
        "id": entry.result.id,
        "result": entry.result_key,
        "input_digest": entry.result.input_digest,
        "verdict": "keep",
        "action": removed.action,
        "note": None,
        "step": removed.index,
        "inserted": None,
        "at": "2026-01-01T00:00:00Z",
    }
    key = f"{entry.result.id}\0{entry.result_key}\0s{removed.index}"
    url = (site / "index.html").resolve().as_uri()
    browser.get(url)
    wait_for(browser, "return document.documentElement.dataset.ready === '1'")
    browser.execute_script(
        "localStorage.setItem('planverify-review-decisions-v2', JSON.stringify(arguments[0]))",
        {key: stored},
    )
    browser.get(f"{url}#e={entry.n}")
    browser.refresh()  # only the hash changed: load the page again, with what is stored
    wait_for(browser, "return document.querySelector('#episode-view h1') !== null")
    assert len(browser.find_elements(By.CSS_SELECTOR, ".original li.step.overruled")) == 1
    downloaded = json.loads(browser.execute_script("return PV.decisionsFile()"))
    assert downloaded["version"] == 2
    (written,) = downloaded["decisions"]
    assert (written["index"], written["step"]) == (removed.index, removed.index + 1)
    assert "inserted" not in written
    file = tmp_path / "decisions.json"
    file.write_text(json.dumps(downloaded), encoding="utf-8")
    (decision,) = read_decisions(file)
    episodes = [e for e in SAMPLE if e.id == entry.result.id]
    (item,) = curate([entry.result], episodes, [decision]).curated
    assert removed.action in item.plan, "the stored decision still keeps the step it was made on"
