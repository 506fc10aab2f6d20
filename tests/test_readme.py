"""The Python examples of the README and of `docs/` run as shown, and the README's commands exist.

Every fenced block marked `python` or `py` in `README.md` and `docs/*.md` runs as a test, unless
the line right before its fence is a skip marker that says why: `<!-- skip-test: reason -->`
(e.g. the block needs a running server or a model key). A block that neither runs nor carries
a marker fails; so does a marker with no reason or no block under it.
"""

from __future__ import annotations

import re
import sys
import textwrap
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from tests.conftest import ROOT

README = (ROOT / "README.md").read_text(encoding="utf-8")
DOCUMENTS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
FENCE = re.compile(
    r"^(?P<indent>[ \t]*)```(?P<lang>\S*)[^\n]*\n(?P<body>.*?)^(?P=indent)```", re.M | re.S
)
MARKER = re.compile(r"<!--\s*skip-test\b:?\s*(?P<reason>.*?)\s*-->")
PYTHON = {"python", "py"}


def python_blocks(path: Path) -> list[Any]:
    """A test parameter per Python block of a document: its code, or a skip with the reason."""
    text = path.read_text(encoding="utf-8")
    blocks = []
    for fence in FENCE.finditer(text):
        if fence["lang"] not in PYTHON:
            continue
        line = text.count("\n", 0, fence.start()) + 1
        before = text[: fence.start()].rstrip("\n").rsplit("\n", 1)[-1]
        marker = MARKER.search(before)
        name = f"{path.name}:{line}"
        code = textwrap.dedent(fence["body"])
        marks = [pytest.mark.skip(reason=marker["reason"])] if marker else []
        blocks.append(pytest.param(name, code, id=name, marks=marks))
    return blocks


BLOCKS = [block for path in DOCUMENTS for block in python_blocks(path)]


@pytest.mark.parametrize(("name", "code"), BLOCKS)
def test_python_examples_run(name: str, code: str, monkeypatch: pytest.MonkeyPatch) -> None:
    module = ModuleType("docs_example")  # a module of its own, where typing finds its names
    monkeypatch.setitem(sys.modules, module.__name__, module)
    exec(compile(code, name, "exec"), module.__dict__)


def test_every_skip_marker_gives_a_reason_and_sits_on_a_python_block() -> None:
    for path in DOCUMENTS:
        lines = path.read_text(encoding="utf-8").splitlines()
        for n, line in enumerate(lines):
            marker = MARKER.search(line)
            if marker is None:
                continue
            where = f"{path.name}:{n + 1}"
            assert marker["reason"], f"{where}: a skip marker says why"
            fence = lines[n + 1].strip() if n + 1 < len(lines) else ""
            assert fence.removeprefix("```") in PYTHON, f"{where}: no Python block right below"


def test_the_harness_finds_the_blocks_it_must() -> None:
    names = [block.values[0] for block in BLOCKS]
    assert sum(name.startswith("README.md") for name in names) >= 5
    assert any(name.startswith("scaling.md") for name in names)
    skipped = [block for block in BLOCKS if block.marks]
    assert len(skipped) < len(BLOCKS) / 2, "most examples run"


def test_readme_gives_the_two_commands() -> None:
    assert "make demo" in README and "make test" in README
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    assert re.search(r"^demo:", makefile, re.M) and re.search(r"^test:", makefile, re.M)
    assert "make test" in (ROOT / ".ci" / "run").read_text(encoding="utf-8")


def test_documented_verify_options_exist() -> None:
    from typer.main import get_command

    from planverify.cli import app

    command = get_command(app)
    verify = command.commands["verify"]  # type: ignore[attr-defined]
    options = {opt for param in verify.params for opt in param.opts}
    documented = set(
        re.findall(r"`(--[a-z-]+)", README.split("## Command line")[1].split("###")[0])
    )
    assert documented <= options, documented - options


def quick_start() -> list[str]:
    """The lines of the README's quick start (the first shell block under its heading)."""
    section = README.split("## Quick start", 1)[1]
    block = re.search(r"```bash\n(.*?)```", section, re.S)
    assert block is not None
    return block.group(1).splitlines()


def test_the_quick_start_takes_teach_games_to_a_review_site(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Its `planverify` lines, run as written (with `teach/games` a folder of small games),
    verify the games, build the review site and export with downloaded decisions."""
    import shlex

    import orjson
    from typer.testing import CliRunner

    from planverify.cli import app

    from .test_cli import tiny_game

    lines = quick_start()
    assert len(lines) <= 10, "a quick start is ten lines at most"
    assert lines[0].startswith("make demo") and "source .venv/bin/activate" in lines[1]
    assert ".venv/bin/planverify" in lines[1], "how to run without activating"
    monkeypatch.chdir(tmp_path)
    games = tmp_path / "teach" / "games" / "valid_seen"
    games.mkdir(parents=True)
    for n in range(3):
        (games / f"g{n}.game.json").write_bytes(orjson.dumps(tiny_game(f"g{n}")))
    ran = []
    for line in lines:
        words = shlex.split(line, comments=True)
        if not words or words[0] != "planverify":
            continue
        if "--decisions" in words:  # what the site's "Download decisions" saves
            decisions = {"format": "planverify-decisions", "version": 2, "decisions": []}
            (tmp_path / "decisions.json").write_bytes(orjson.dumps(decisions))
        result = CliRunner().invoke(app, words[1:])
        assert result.exit_code == 0, (line, result.output)
        ran.append(words[1])
    assert ran == ["verify", "review", "export"]
    assert (tmp_path / "review" / "index.html").is_file()
    assert len((tmp_path / "sft.jsonl").read_bytes().splitlines()) == 3
