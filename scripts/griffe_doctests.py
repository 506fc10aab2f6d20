"""A Griffe extension for the API pages: the doctest examples in docstrings shown as code.

Docstrings here give their examples as plain doctests (`>>> ...` and the expected output), with
no section around them. As Markdown, such lines read as text, and a list in the output, such as
`['a'][0]`, as a reference link; wrapped in a `pycon` fence they show as highlighted code.
Used by mkdocs.yml (mkdocstrings' `extensions`); the docstrings themselves are left as written.
"""

from __future__ import annotations

from typing import Any

import griffe


def fence_doctests(text: str) -> str:
    """The text with each run of doctest lines (a `>>>` line up to the next blank line) fenced."""
    lines = text.split("\n")
    out: list[str] = []
    inside = False
    indent = ""
    for line in lines:
        stripped = line.lstrip()
        if not inside and stripped.startswith(">>>"):
            indent = line[: len(line) - len(stripped)]
            out.append(f"{indent}```pycon")
            inside = True
        elif inside and not stripped:
            out.append(f"{indent}```")
            inside = False
        out.append(line)
    if inside:
        out.append(f"{indent}```")
    return "\n".join(out)


class FenceDoctests(griffe.Extension):
    """Fences the doctests of every docstring it sees."""

    def on_object(self, *, obj: griffe.Object, **_: Any) -> None:
        if obj.docstring is not None and ">>>" in obj.docstring.value:
            obj.docstring.value = fence_doctests(obj.docstring.value)
