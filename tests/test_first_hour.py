"""What a new user meets in the first hour: `make demo`'s output and the README's Quick start.

`make demo` runs here against this test's interpreter (its venv stands in for `.venv`, a fresh
stamp says it is installed) and writes into a temporary folder."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from .conftest import ROOT

README = (ROOT / "README.md").read_text(encoding="utf-8")


def quick_start() -> str:
    """The README's Quick start section."""
    return README.split("## Quick start", 1)[1].split("\n## ", 1)[0]


@pytest.mark.skipif(shutil.which("make") is None, reason="needs make")
def test_the_demo_is_short_and_says_what_to_do_next(tmp_path: Path) -> None:
    stamp = tmp_path / "installed"
    stamp.touch()  # newer than pyproject.toml: nothing to install
    venv = Path(sys.executable).parent.parent
    done = subprocess.run(
        ["make", "-s", "demo", f"VENV={venv}", f"STAMP={stamp}", f"DEMO={tmp_path / 'demo'}"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    shown = done.stdout + done.stderr
    assert (tmp_path / "demo" / "results.jsonl").is_file()
    assert "digest" not in shown and "thread" not in shown
    assert shown.count("Driver.PickUp('Apple')") == 1, "each removal is printed once"
    assert "model tokens" not in shown, "an offline run spends no tokens worth a row"
    next_steps = shown.split("next:", 1)[1]
    assert "planverify show" in next_steps and "planverify review" in next_steps
    assert "Quick start" in next_steps
    assert len(shown.splitlines()) < 60


def test_the_quick_start_says_where_the_games_come_from_before_it_reads_them() -> None:
    """`teach/games` is in no clone: the Quick start names the download and makes the folder
    before the first command that reads it."""
    section = quick_start()
    assert "teach_download" in section and "github.com/alexa/teach" in section
    lines = section.splitlines()
    made = next(i for i, line in enumerate(lines) if line.startswith("mkdir -p teach && ln -s"))
    read = next(i for i, line in enumerate(lines) if "teach/games" in line and "planverify" in line)
    assert made < read
    assert "planverify show coffee-detour" in section


def test_the_quick_start_reads_results_with_the_inputs_verify_read() -> None:
    """review and export given more episodes than verify read (all splits for one) report
    hundreds of episodes left out on the happy path."""
    commands = [
        line.split("#", 1)[0]
        for line in quick_start().splitlines()
        if line.startswith(("planverify verify", "planverify review", "planverify export"))
    ]
    verify = next(c for c in commands if c.startswith("planverify verify"))
    split = re.search(r"--split \S+", verify)
    assert split is not None
    for command in commands:
        if "--episodes" in command:
            assert split[0] in command, command


def test_export_says_which_inputs_verify_never_read_and_is_quiet_without_them(
    tmp_path: Path,
) -> None:
    from typer.testing import CliRunner

    from planverify.cli import app

    runner = CliRunner()
    examples = ROOT / "examples" / "episodes.jsonl"
    results = tmp_path / "results.jsonl"
    made = runner.invoke(
        app, ["verify", str(examples), "--limit", "3", "--no-checkpoint", "-o", str(results)]
    )
    assert made.exit_code == 0, made.output
    wider = runner.invoke(
        app,
        ["export", str(results), "--episodes", str(examples), "-o", str(tmp_path / "a.jsonl")],
    )
    assert wider.exit_code == 0, wider.output
    (line,) = [line for line in wider.stderr.splitlines() if line.startswith("left out:")]
    assert f"7 input episode(s) with no result in {results} (not verified)" in line
    assert "give --episodes (and --split) as verify read them" in line
    read = tmp_path / "read.jsonl"
    read.write_bytes(b"".join(examples.read_bytes().splitlines(keepends=True)[:3]))
    same = runner.invoke(
        app, ["export", str(results), "--episodes", str(read), "-o", str(tmp_path / "b.jsonl")]
    )
    assert same.exit_code == 0 and "left out" not in same.output
