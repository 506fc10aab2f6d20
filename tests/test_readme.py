"""The README's Python examples run as shown, and its commands exist."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.conftest import ROOT

README = (ROOT / "README.md").read_text(encoding="utf-8")
BLOCKS = re.findall(r"```python\n(.*?)```", README, re.S)


@pytest.mark.parametrize("code", BLOCKS, ids=[f"block{i}" for i in range(len(BLOCKS))])
def test_python_examples_run(code: str) -> None:
    exec(compile(code, "README.md", "exec"), {})


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
            decisions = {"format": "planverify-decisions", "version": 1, "decisions": []}
            (tmp_path / "decisions.json").write_bytes(orjson.dumps(decisions))
        result = CliRunner().invoke(app, words[1:])
        assert result.exit_code == 0, (line, result.output)
        ran.append(words[1])
    assert ran == ["verify", "review", "export"]
    assert (tmp_path / "review" / "index.html").is_file()
    assert len((tmp_path / "sft.jsonl").read_bytes().splitlines()) == 3
