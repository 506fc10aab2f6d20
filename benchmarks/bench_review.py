"""Page weight and time to first render of the review site for 3,000 episodes.

Verifies the shared TEACh games cycled to --count episodes (ids made unique per cycle) with the
offline judge, builds the site with `planverify review --episodes`, then opens it from
`file://` in headless Chromium (Debian's `chromium` and `chromium-driver`, through Selenium) and
prints: the bytes the first view loads (index.html, assets, the episode table) and the whole
site; the time to first render (navigation start to the table drawn, the page's own
`PV_FIRST_RENDER_MS`, median of --repeat cold loads, each in a fresh browser profile); the time
to open an episode page, to sort the table and to filter it.

Usage: python benchmarks/bench_review.py [--count 3000] [--games DIR] [--results FILE] [--repeat 5]
"""

from __future__ import annotations

import argparse
import itertools
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from planverify.api import verify_many
from planverify.inputs.sources import load_episodes
from planverify.records.episode import Episode

SHARED = Path(__file__).resolve().parents[1].parent / "shared"
CHROMIUM, CHROMEDRIVER = "/usr/bin/chromium", "/usr/bin/chromedriver"


def make_inputs(games: Path, count: int, work: Path) -> tuple[Path, Path]:
    """Episodes (JSONL) cycled to `count`, and their results."""
    loaded = list(load_episodes([games]))
    episodes: list[Episode] = []
    for n, episode in enumerate(itertools.islice(itertools.cycle(loaded), count)):
        cycle = n // len(loaded)
        episodes.append(
            episode.model_copy(update={"id": f"{episode.id}#{cycle}"}) if cycle else episode
        )
    inputs = work / "episodes.jsonl"
    inputs.write_bytes(
        b"".join(e.model_dump_json(exclude_none=True).encode() + b"\n" for e in episodes)
    )
    started = time.perf_counter()
    results = verify_many(episodes, concurrency=32)
    print(f"verified {len(results)} episodes in {time.perf_counter() - started:.1f} s")
    out = work / "results.jsonl"
    out.write_bytes(b"".join(r.model_dump_json().encode() + b"\n" for r in results))
    return inputs, out


def browser(profile: Path) -> Any:
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for argument in (
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        f"--user-data-dir={profile}",
        "--window-size=1440,900",
    ):
        options.add_argument(argument)
    return webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)


def wait(driver: Any, script: str, timeout: float = 60.0) -> None:
    from selenium.webdriver.support.ui import WebDriverWait

    WebDriverWait(driver, timeout, poll_frequency=0.01).until(lambda d: d.execute_script(script))


def measure(site: Path, repeat: int) -> dict[str, list[float]]:
    url = (site / "index.html").resolve().as_uri()
    times: dict[str, list[float]] = {
        "first render": [],
        "open episode": [],
        "sort": [],
        "filter": [],
    }
    for _ in range(repeat):
        profile = Path(tempfile.mkdtemp(prefix="pv-bench-"))
        driver = browser(profile)
        try:
            driver.get(url)
            wait(driver, "return document.documentElement.dataset.ready === '1'")
            times["first render"].append(driver.execute_script("return window.PV_FIRST_RENDER_MS"))
            started = driver.execute_script(
                "window.__t = performance.now(); location.hash = 'e=2999'; return window.__t"
            )
            wait(driver, "return document.querySelector('#episode-view h1') !== null")
            times["open episode"].append(
                driver.execute_script("return performance.now()") - started
            )
            driver.execute_script("location.hash = ''")
            wait(driver, "return !document.getElementById('index-view').hidden")
            times["sort"].append(
                driver.execute_script(
                    "var t = performance.now(); document.querySelector(\"th[data-key='removed']\").click();"
                    " return performance.now() - t"
                )
            )
            times["filter"].append(
                driver.execute_script(
                    "var s = document.getElementById('f-task'); s.value = s.options[1].value;"
                    " var t = performance.now(); s.dispatchEvent(new Event('change'));"
                    " return performance.now() - t"
                )
            )
        finally:
            driver.quit()
            shutil.rmtree(profile, ignore_errors=True)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=3000)
    parser.add_argument("--games", type=Path, default=SHARED / "teach" / "games")
    parser.add_argument("--results", type=Path, help="reuse results (with --episodes)")
    parser.add_argument("--episodes", type=Path, help="the inputs of --results")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--keep", type=Path, help="work in this folder and keep it (site included)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        work = args.keep or Path(tmp)
        work.mkdir(parents=True, exist_ok=True)
        if args.results:
            inputs, results = args.episodes, args.results
        else:
            if not args.games.is_dir():
                sys.exit(f"no games at {args.games}: give --games DIR")
            inputs, results = make_inputs(args.games, args.count, work)
        site = work / "site"
        started = time.perf_counter()
        script = Path(sys.executable).parent / "planverify"  # the installed command
        command = [str(script), "review", str(results), "--html", str(site)]
        if inputs is not None:
            command += ["--episodes", str(inputs)]
        subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
        built = time.perf_counter() - started
        first = [
            site / "index.html",
            site / "data" / "index.js",
            *sorted((site / "assets").iterdir()),
        ]
        episode_files = sorted((site / "data" / "e").glob("*.js"))
        first_bytes = sum(p.stat().st_size for p in first)
        total = first_bytes + sum(p.stat().st_size for p in episode_files)
        sizes = sorted(p.stat().st_size for p in episode_files)
        print(
            f"site: {len(episode_files)} episodes, built in {built:.1f} s (CLI, imports included)"
        )
        print(
            f"first view: {first_bytes / 1e3:.0f} kB ({', '.join(f'{p.name} {p.stat().st_size / 1e3:.0f} kB' for p in first)})"
        )
        print(
            f"whole site: {total / 1e6:.1f} MB in {len(first) + len(episode_files)} files; one episode "
            f"median {statistics.median(sizes) / 1e3:.1f} kB, max {sizes[-1] / 1e3:.1f} kB"
        )
        if not (Path(CHROMIUM).exists() and Path(CHROMEDRIVER).exists()):
            sys.exit("no chromium/chromedriver: apt-get install chromium chromium-driver")
        for name, values in measure(site, args.repeat).items():
            print(
                f"{name}: median {statistics.median(values):.0f} ms "
                f"(min {min(values):.0f}, max {max(values):.0f}, {len(values)} runs)"
            )


if __name__ == "__main__":
    main()
