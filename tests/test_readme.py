"""The examples of the README and of `docs/` run as shown.

Every fenced block marked `python` or `py` in `README.md` and `docs/*.md` runs as a test, unless
the line right before its fence is a skip marker that says why: `<!-- skip-test: reason -->`
(e.g. the block needs a running server or a model key). A block that neither runs nor carries
a marker fails; so does a marker with no reason or no block under it.

Every command of the README's shell blocks runs too, in order, in a fresh folder (with small
made-up TEACh games where a command reads them), and every option a documented `planverify`
command line gives, in the README or in `docs/`, exists.
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
    assert sum(name.startswith("README.md") for name in names) >= 2
    assert any(name.startswith("scaling.md") for name in names)
    skipped = [block for block in BLOCKS if block.marks]
    assert len(skipped) < len(BLOCKS) / 2, "most examples run"


def test_readme_gives_the_two_commands() -> None:
    assert "make demo" in README and "make test" in README
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    assert re.search(r"^demo:", makefile, re.M) and re.search(r"^test:", makefile, re.M)
    assert "make test" in (ROOT / ".ci" / "run").read_text(encoding="utf-8")


def test_the_readme_is_short() -> None:
    assert len(README.splitlines()) <= 250, "the README is an overview; the rest is in docs/"


def shell_commands(text: str) -> list[str]:
    """The commands of a document's `bash` blocks, continued lines joined, comments kept."""
    commands = []
    for fence in FENCE.finditer(text):
        if fence["lang"] != "bash":
            continue
        body = textwrap.dedent(fence["body"]).replace("\\\n", " ")
        commands += [line for line in body.splitlines() if line.strip()]
    return commands


def documented_commands() -> list[tuple[str, str]]:
    """(document, command) for every `planverify` command of the README's and docs' blocks."""
    found = []
    for path in DOCUMENTS:
        for line in shell_commands(path.read_text(encoding="utf-8")):
            if line.lstrip().startswith(("planverify ", ".venv/bin/planverify ")):
                found.append((path.name, line))
    return found


def test_documented_options_exist() -> None:
    """Every option a documented `planverify` command line gives is one of that command's."""
    import shlex

    from typer.main import get_command

    from planverify.cli import app

    group = get_command(app)
    root = group.context_class(group, info_name="planverify")
    checked = 0
    for document, line in documented_commands():
        words = shlex.split(line, comments=True)
        command = group.get_command(root, words[1])
        assert command is not None, f"{document}: no command {words[1]!r}: {line}"
        ctx = command.context_class(command, info_name=words[1], parent=root)
        options = {
            opt for param in command.get_params(ctx) for opt in [*param.opts, *param.secondary_opts]
        }
        given = {word.split("=", 1)[0] for word in words[2:] if word.startswith("-")}
        assert given <= options, f"{document}: {sorted(given - options)} in {line}"
        checked += 1
    assert checked >= 20


def quick_start() -> list[str]:
    """The lines of the README's quick start (the first shell block under its heading)."""
    section = README.split("## Quick start", 1)[1]
    block = re.search(r"```bash\n(.*?)```", section, re.S)
    assert block is not None
    return block.group(1).splitlines()


def demo_commands() -> list[list[str]]:
    """What `make demo` runs, from the Makefile: its `planverify` lines, paths filled in."""
    import shlex

    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    recipe = makefile.split("\ndemo:", 1)[1].split("\n\n", 1)[0]
    lines = [
        line.strip().lstrip("@").replace("$(BIN)/", "").replace("$(DEMO)", ".planverify/demo")
        for line in recipe.splitlines()
        if "$(BIN)/planverify" in line
    ]
    assert lines, "make demo runs planverify"
    return [shlex.split(line) for line in lines]


def test_every_readme_command_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every command of the README's shell blocks, in order, in a fresh folder: `planverify`
    lines as written, with stand-ins where a line needs what no test has: `make demo` runs the
    Makefile's own demo commands, the TEACh games are small made-up games, and the decisions are
    what the site's "Download decisions" saves when nothing was overruled."""
    import shlex

    import orjson
    from typer.testing import CliRunner

    from planverify.cli import app

    from .test_cli import tiny_game

    monkeypatch.chdir(tmp_path)
    (tmp_path / "examples").symlink_to(ROOT / "examples")
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    runner = CliRunner()
    ran = []
    for line in shell_commands(README):
        words = shlex.split(line, comments=True)
        if not words:
            continue
        if words[0] == "make":
            assert re.search(rf"^{words[1]}:", makefile, re.M), line
            if words[1] == "demo":
                for demo in demo_commands():
                    result = runner.invoke(app, demo[1:])
                    assert result.exit_code == 0, (demo, result.output)
        elif words[0] == "source":
            assert words[1] == ".venv/bin/activate", line  # the venv `make install` makes
        elif words[:2] == ["mkdir", "-p"] and "ln" in words:
            games = tmp_path / "teach" / "games" / "valid_seen"
            games.mkdir(parents=True)
            for n in range(3):
                (games / f"g{n}.game.json").write_bytes(orjson.dumps(tiny_game(f"g{n}")))
        elif words[0] == "planverify":
            if "--decisions" in words:
                decisions = {"format": "planverify-decisions", "version": 2, "decisions": []}
                (tmp_path / "decisions.json").write_bytes(orjson.dumps(decisions))
            result = runner.invoke(app, words[1:])
            assert result.exit_code == 0, (line, result.output)
            ran.append(words[1])
        else:
            pytest.fail(f"a README command this test cannot run: {line}")
    assert ran == ["show", "verify", "review", "export"]
    assert (tmp_path / "review" / "index.html").is_file()
    assert len((tmp_path / "sft.jsonl").read_bytes().splitlines()) == 3


def test_the_quick_start_is_short_and_says_how_to_run_without_activating() -> None:
    lines = quick_start()
    assert len(lines) <= 10, "a quick start is ten lines at most"
    assert "source .venv/bin/activate" in lines[0] and ".venv/bin/planverify" in lines[0]
