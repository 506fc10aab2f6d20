"""The house rules a test can check: every function body fits on a screen.

The import layers and the absence of import cycles are checked by `scripts/import-contracts.sh`
(import-linter, against an installed build), which `make lint` and `make test` run.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from .conftest import ROOT

SOURCES = ("planverify", "graphs", "agents", "prompts", "eval")
MAX_BODY = 80  # lines of a function's body, without its signature and docstring
LONG_TABLES = {
    "planverify/export/write.py:schema": "one Arrow schema per export format, a flat table",
}  # functions allowed to be longer, each with its reason (also said in a comment at the code)


def body_lines(function: ast.FunctionDef | ast.AsyncFunctionDef) -> int:
    """The lines of a function's body, without its docstring."""
    body = function.body
    first = body[0]
    docstring = isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant)
    if docstring and isinstance(first.value.value, str) and len(body) > 1:
        body = body[1:]
    end = body[-1].end_lineno
    assert end is not None
    return end - body[0].lineno + 1


def functions(path: Path) -> list[tuple[str, int]]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return [
        (node.name, body_lines(node))
        for node in ast.walk(tree)
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
    ]


def test_the_counting_skips_the_signature_and_the_docstring(tmp_path: Path) -> None:
    source = tmp_path / "sample.py"
    source.write_text(
        'def f(\n    a: int,\n    b: int,\n) -> int:\n    """Doc."""\n    c = a + b\n    return c\n'
    )
    assert functions(source) == [("f", 2)]


@pytest.mark.parametrize("folder", SOURCES)
def test_no_function_body_is_longer_than_a_screen(folder: str) -> None:
    long = [
        f"{where}: {lines} lines"
        for path in sorted((ROOT / folder).rglob("*.py"))
        for name, lines in functions(path)
        if lines > MAX_BODY
        and (where := f"{path.relative_to(ROOT).as_posix()}:{name}") not in LONG_TABLES
    ]
    assert not long, "split these functions: " + ", ".join(long)


def test_every_exception_still_exists_and_says_why_at_the_code() -> None:
    for where, reason in LONG_TABLES.items():
        file, name = where.split(":")
        text = (ROOT / file).read_text(encoding="utf-8")
        (function,) = [
            node
            for node in ast.walk(ast.parse(text))
            if isinstance(node, ast.FunctionDef) and node.name == name
        ]
        source = ast.get_source_segment(text, function) or ""
        assert reason and "# a long flat table" in source, where
