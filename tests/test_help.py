"""`planverify ... --help`: one walk over every command's help, checking the rules a new user
relies on (required options marked, arguments named one way, flags without a value type,
choices listed, the same short flags everywhere, help text shown whole)."""

from __future__ import annotations

import re
from collections import defaultdict
from pathlib import Path

import pytest
import typer
from typer.core import TyperArgument, TyperOption
from typer.testing import CliRunner

from planverify.cli import app

from .conftest import ROOT

runner = CliRunner()
GROUP = typer.main.get_command(app)
COMMANDS = dict(GROUP.commands)  # type: ignore[attr-defined]
WIDE = {"COLUMNS": "2000"}  # one row per option: help texts are not wrapped


def unboxed(text: str) -> str:
    """Text as one line of words, box drawing removed."""
    return " ".join(re.sub("[\u2500-\u257f]", " ", text).split())


def help_page(*command: str) -> str:
    """A command's help as one line of words."""
    shown = runner.invoke(app, [*command, "--help"], env=WIDE)
    assert shown.exit_code == 0, shown.output
    return unboxed(shown.stdout)


def rows(*command: str) -> list[str]:
    """The option and argument rows of a command's help, one string per row."""
    shown = runner.invoke(app, [*command, "--help"], env=WIDE)
    assert shown.exit_code == 0, shown.output
    return [" ".join(line.strip("│ ").split()) for line in shown.stdout.splitlines() if "│" in line]


def row_of(name: str, *command: str) -> str:
    """The row of an option or argument (its first name)."""
    found = [r for r in rows(*command) if f"{r.lstrip('* ')} ".startswith(f"{name} ")]
    assert len(found) == 1, (command, name, found)
    return found[0]


def options(command: str) -> list[TyperOption]:
    return [p for p in COMMANDS[command].params if isinstance(p, TyperOption)]


def test_every_command_has_a_help_page() -> None:
    assert set(COMMANDS) == {
        "verify",
        "show",
        "convert",
        "corrupt",
        "score",
        "presets",
        "goal",
        "eval",
        "export",
        "review",
    }
    top = help_page()
    for name, command in COMMANDS.items():
        assert command.help, f"{name} has no description"
        assert name in top
        assert f"Usage: planverify {name} [OPTIONS]" in help_page(name)


@pytest.mark.parametrize("command", ["", *COMMANDS])
def test_flags_show_no_value_type(command: str) -> None:
    """`--static <bool>` reads as if the flag took a value (`--static true` then makes `true`
    an input file): a flag's row shows its names and its help only."""
    path = [command] if command else []
    assert "<bool>" not in help_page(*path)
    params = COMMANDS[command].params if command else GROUP.params
    flags = ["--help", *(p.opts[0] for p in params if isinstance(p, TyperOption) and p.is_flag)]
    for flag in flags:
        assert "<" not in row_of(flag, *path)


def test_a_flag_given_a_value_is_told_so(tmp_path: Path) -> None:
    episodes = ROOT / "examples" / "episodes.jsonl"
    wrong = runner.invoke(app, ["verify", str(episodes), "--static", "true", "--no-checkpoint"])
    assert wrong.exit_code == 2
    assert "no such file or directory: true (a flag takes no value" in wrong.stderr


REQUIRED = {
    "export": {"--episodes", "--output"},
    "review": {"--html"},
    "convert": {"--output"},
    "corrupt": {"--output"},
    "eval": {"--report"},
}


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_required_options_are_marked(command: str) -> None:
    required = {o.opts[0] for o in options(command) if o.required}
    assert required == REQUIRED.get(command, set())
    for name in required:
        row = row_of(name, command)
        assert row.startswith("*") and "[required]" in row, row
    for option in options(command):
        if not option.required:
            assert "[required]" not in row_of(option.opts[0], command)


@pytest.mark.parametrize(("command", "option"), [(c, o) for c in REQUIRED for o in REQUIRED[c]])
def test_a_missing_required_option_is_a_usage_error(command: str, option: str) -> None:
    """Refused by the parser (exit 2), naming the option, before any file is looked at."""
    given = {
        "--episodes": ["--episodes", "in.jsonl"],
        "--output": ["-o", "out.jsonl"],
        "--html": ["--html", "site"],
        "--report": ["--report", "report"],
    }
    others = [word for name in REQUIRED[command] - {option} for word in given[name]]
    missing = runner.invoke(app, [command, "some.jsonl", *others])
    assert missing.exit_code == 2
    assert f"Missing option '{option}'" in unboxed(missing.stderr)


def test_arguments_are_named_one_way() -> None:
    """Every argument is an upper-case name, in its row and on the usage line."""
    seen = set()
    for name, command in COMMANDS.items():
        for argument in (p for p in command.params if isinstance(p, TyperArgument)):
            shown = argument.metavar
            assert shown is not None and re.fullmatch("[A-Z][A-Z_]*", shown), (name, shown)
            usage = f"{{{shown}}}" if argument.required else f"[{shown}]"
            assert usage in help_page(name), "the usage line names it the same way"
            seen.add(shown)
    assert {"INPUTS", "RESULTS", "DATASET", "ID", "ANNOTATED", "TEXT"} <= seen


CHOICES = {
    ("verify", "--goal"): ["given", "dialogue", "infer"],
    ("verify", "--judge-output"): ["text", "structured"],
    ("eval", "--judge-output"): ["text", "structured"],
    ("eval", "--mode"): ["static", "iterative", "both"],
    ("score", "--mode"): ["auto", "static", "iterative"],
    ("corrupt", "--generator"): ["injected", "natural", "virtualhome"],
    ("export", "--format"): ["episodes", "sft", "preference", "recovery"],
    ("export", "--split-by"): ["task", "split"],
    ("score", "--min-evidence"): ["proven", "goal-text", "heuristic"],
    ("export", "--min-evidence"): ["proven", "goal-text", "heuristic"],
    ("convert", "--from"): ["teach", "virtualhome"],
    ("verify", "--trim"): ["natural", "minimal"],
    ("eval", "--trim"): ["natural", "minimal"],
    ("score", "--trim"): ["natural", "minimal"],
    ("export", "--trim"): ["natural", "minimal"],
}


def choices_of(option: TyperOption, command: str) -> list[str] | None:
    shown = re.search(r"<([a-z_|-]+)>", row_of(option.opts[0], command))
    return shown.group(1).split("|") if shown and "|" in shown.group(1) else None


def test_choice_options_list_their_choices() -> None:
    listed = {
        (command, option.opts[0]): choices
        for command in COMMANDS
        for option in options(command)
        if (choices := choices_of(option, command)) is not None
    }
    assert listed == CHOICES


def test_the_choices_are_what_the_code_knows() -> None:
    from typing import get_args

    from planverify.export import FORMATS
    from planverify.noise import GENERATORS, GeneratorName
    from planverify.records.evidence import LEVELS
    from planverify.records.result import GoalSource
    from planverify.records.trim import TRIM_POLICIES

    assert list(get_args(GeneratorName)) == list(GENERATORS)
    assert [*GENERATORS, "virtualhome"] == CHOICES["corrupt", "--generator"]
    assert list(FORMATS) == CHOICES["export", "--format"]
    assert list(get_args(GoalSource)) == CHOICES["verify", "--goal"]
    assert list(LEVELS) == CHOICES["score", "--min-evidence"] == CHOICES["export", "--min-evidence"]
    for command in ("verify", "eval", "score", "export"):
        assert list(TRIM_POLICIES) == CHOICES[command, "--trim"]


@pytest.mark.parametrize(("command", "option"), sorted(CHOICES))
def test_a_value_outside_the_choices_is_a_usage_error_listing_them(
    command: str, option: str
) -> None:
    wrong = runner.invoke(app, [command, "x.jsonl", option, "nonsense"])
    assert wrong.exit_code == 2
    message = unboxed(wrong.stderr)
    assert f"Invalid value for '{option}'" in message
    assert all(f"'{choice}'" in message for choice in CHOICES[command, option])


def test_an_option_has_the_same_short_flag_wherever_it_appears() -> None:
    shorts: dict[str, dict[str, set[str]]] = defaultdict(dict)
    for command in COMMANDS:
        for option in options(command):
            names = option.opts + option.secondary_opts
            long = next(n for n in names if n.startswith("--"))
            shorts[long][command] = {n for n in names if not n.startswith("--")}
    for long, by_command in shorts.items():
        assert len({frozenset(s) for s in by_command.values()}) == 1, (long, by_command)
    assert shorts["--judge"]["verify"] == shorts["--judge"]["eval"] == {"-j"}
    assert shorts["--planner"]["verify"] == shorts["--planner"]["eval"] == {"-p"}


def unmarked(text: str) -> str:
    """A help text as the page should show it: rich escapes undone, whitespace collapsed."""
    return " ".join(text.replace("\\[", "[").split())


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_every_help_text_is_shown_whole(command: str) -> None:
    """Nothing in a help text is taken for markup: `pip install 'planverify[export]'` keeps
    its `[export]`."""
    page = help_page(command)
    texts = [COMMANDS[command].help or ""]
    texts += [p.help or "" for p in COMMANDS[command].params if isinstance(p, TyperOption)]
    texts += [p.help or "" for p in COMMANDS[command].params if isinstance(p, TyperArgument)]
    for text in filter(None, texts):
        assert unmarked(text) in page, text
    if command == "export":
        assert "pip install 'planverify[export]'" in page
