"""The README's Python examples run as shown, and its commands exist."""

from __future__ import annotations

import re

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
