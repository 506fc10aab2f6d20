"""Every figure of the documentation comes from a command, and the cheap ones are what the code
gives today.

Figures live in `docs/figures/`, written by `benchmarks/figures.py` with the command that wrote
them, the date and the commit; pages include them (`--8<-- "figures/NAME.md"`). The cheap ones
(`eval` on the bundled sample, export counts of the sample) are computed again here and must
match what the pages show.
"""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path
from types import ModuleType

import pytest

from .conftest import ROOT

DOCS = ROOT / "docs"
FIGURES = DOCS / "figures"
INCLUDE = re.compile(r'^--8<-- "figures/(?P<name>[\w-]+)\.md"$', re.M)


def figures_module() -> ModuleType:
    """`benchmarks/figures.py`, imported from its path (benchmarks/ is no package)."""
    spec = importlib.util.spec_from_file_location(
        "docs_figures", ROOT / "benchmarks" / "figures.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


FIG = figures_module()


def included() -> dict[str, list[str]]:
    """Figure name -> the pages that include it."""
    pages: dict[str, list[str]] = {}
    for page in DOCS.rglob("*.md"):
        if FIGURES in page.parents:
            continue
        for match in INCLUDE.finditer(page.read_text(encoding="utf-8")):
            pages.setdefault(match["name"], []).append(page.name)
    return pages


def test_every_included_figure_exists_and_says_where_it_comes_from() -> None:
    pages = included()
    assert {"eval_sample", "export_counts", "judge_quality", "bench_verify"} <= set(pages)
    for name in pages:
        text = (FIGURES / f"{name}.md").read_text(encoding="utf-8")
        assert text.startswith(FIG.HEADER), name
        stamped = re.search(
            r"^\*Written by `.+` on \d{4}-\d\d-\d\d at commit `\w+`\.\*$", text, re.M
        )
        pending = '!!! note "Not yet generated"' in text and "make figures" in text
        assert stamped or pending, f"{name}: neither a command, date and commit nor a pending note"


def test_every_figure_file_is_shown_and_made_by_make_figures() -> None:
    """No figure file is orphaned, and `make figures` writes every one."""
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    pages = included()
    for path in FIGURES.glob("*.md"):
        assert path.stem in pages, f"{path.name} is on no page"
        made = path.stem in FIG.CHEAP or re.search(rf"\$\(FIGURE\) {path.stem} -- ", makefile)
        assert made, f"make figures does not write {path.name}"


@pytest.mark.parametrize("name", sorted(FIG.CHEAP))
def test_cheap_figures_match_what_the_commands_give_today(name: str) -> None:
    body, command = FIG.cheap_body(name)
    shown = (FIGURES / f"{name}.md").read_text(encoding="utf-8")
    assert f"*Written by `{command}` on " in shown
    assert FIG.body_of(shown) == body.strip(), (
        f"docs/figures/{name}.md is stale: run `python benchmarks/figures.py --cheap`"
    )


def test_a_figure_file_keeps_its_command_date_and_commit(tmp_path: Path) -> None:
    path = FIG.write_figures(
        "demo",
        "| a |\n| --- |\n| 1 |",
        command="planverify x",
        date="2026-01-02",
        commit="abc1234",
        folder=tmp_path,
    )
    text = path.read_text(encoding="utf-8")
    assert "*Written by `planverify x` on 2026-01-02 at commit `abc1234`.*" in text
    assert FIG.body_of(text) == "| a |\n| --- |\n| 1 |"


def test_a_benchmark_s_output_becomes_a_figure(tmp_path: Path) -> None:
    code = "print('episodes/s  64.1')"
    path = FIG.run_benchmark("speed", [sys.executable, "-c", code], folder=tmp_path)
    text = path.read_text(encoding="utf-8")
    assert "*Written by `python -c " in text
    assert FIG.body_of(text) == "```text\nepisodes/s  64.1\n```"


def test_a_failing_benchmark_leaves_the_figure_as_it_was(tmp_path: Path) -> None:
    (tmp_path / "speed.md").write_text("before\n", encoding="utf-8")
    with pytest.raises(SystemExit, match="exited 3"):
        FIG.run_benchmark("speed", [sys.executable, "-c", "raise SystemExit(3)"], folder=tmp_path)
    assert (tmp_path / "speed.md").read_text(encoding="utf-8") == "before\n"


def test_pages_show_no_figure_of_their_own() -> None:
    """Measured figures (seconds, episodes per second, a percentage with a decimal) appear only in
    figure files, never typed into a page."""
    measured = re.compile(r"\b\d+\.\d+ ?(?:s|ms|%|episodes/s)\b")
    for page in [ROOT / "README.md", *DOCS.glob("*.md")]:
        if page.name == "annotation.md":
            continue  # the annotation guide quotes counts of its own files
        text = re.sub(r"```.*?```", "", page.read_text(encoding="utf-8"), flags=re.S)
        found = measured.findall(text)
        assert not found, f"{page.name}: {found}"


def test_a_markdown_table_stays_a_table_and_other_output_a_text_block() -> None:
    table = "| a | b |\n| --- | --- |\n| 1 | 2 |\n"
    assert FIG.as_markdown(table) == table.strip()
    assert FIG.as_markdown("rate  64.1/s\n") == "```text\nrate  64.1/s\n```"
