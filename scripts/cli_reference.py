"""The command-line reference, written from the `planverify` program itself, so it cannot drift.

Walks the Click-style command Typer builds from `planverify.cli.program.app` and writes one section per
command: what it does, its usage line, its arguments and options with their types and defaults,
and the page that says more (the command's epilog).

- `python scripts/cli_reference.py` prints the Markdown;
- as an MkDocs hook (`hooks:` in mkdocs.yml) it fills the line `<!-- cli-reference -->` of a page
  at build time, so the site always shows the options of the code it was built from.
"""

from __future__ import annotations

import enum
import re
import sys
from pathlib import Path
from typing import Any, Literal, get_args, get_origin

MARKER = "<!-- cli-reference -->"
DOCS_PAGE = re.compile(r"docs/([\w.-]+\.md(?:#[\w-]+)?)")
RICH_TAG = re.compile(r"\[/?(?:bold|italic|dim|red|green|yellow|blue|cyan|magenta)\]")


# Typer builds on a Click of its own (`typer._click`), so parameters are told apart by their
# `param_type_name` rather than by class.
Param = Any


def program() -> Any:
    """The command group behind the `planverify` command."""
    from typer.main import get_command

    from planverify.cli.program import app

    return get_command(app)


def is_argument(param: Param) -> bool:
    return bool(param.param_type_name == "argument")


def is_flag(param: Param) -> bool:
    return bool(getattr(param, "is_flag", False))


def plain(text: str | None) -> str:
    """Help text as Markdown: one paragraph per blank line, Rich's style tags left out."""
    if not text:
        return ""
    paragraphs = [" ".join(part.split()) for part in text.strip().split("\n\n")]
    markdown = RICH_TAG.sub("", "\n\n".join(p for p in paragraphs if p))
    return markdown.replace("*", "\\*").replace("<", "&lt;")


def value_of(param: Param) -> str:
    """What an option takes, read from its type hint (empty for a flag)."""
    if is_flag(param):
        return ""
    if param.metavar:
        return str(param.metavar)
    return type_name(param.type_descriptor.annotation)


def type_name(annotation: Any) -> str:
    """A type hint in words: the choices of a `Literal` or an enum, else the type's name."""
    args = [arg for arg in get_args(annotation) if arg is not type(None)]
    if get_origin(annotation) is Literal:
        return "|".join(str(arg) for arg in args)
    if isinstance(annotation, type) and issubclass(annotation, enum.Enum):
        return "|".join(str(member.value) for member in annotation)
    if args:  # Optional[X], list[X], X | None
        return type_name(args[0])
    names = {str: "TEXT", int: "INTEGER", float: "FLOAT", Path: "PATH", bool: "BOOLEAN"}
    return names.get(annotation, getattr(annotation, "__name__", "VALUE").upper())


def default_of(param: Param) -> str:
    """The default worth naming: none for required values, empty lists and off flags."""
    default = param.default
    if param.required or default is None or default in ((), [], False):
        return ""
    if callable(default):
        return ""
    if isinstance(default, list | tuple):
        default = ", ".join(str(item) for item in default)
    return f" (default: `{default}`)"


def param_line(param: Param) -> str:
    """One bullet: the names, the value it takes, its default and its help."""
    names = [*param.opts, *param.secondary_opts]
    if is_argument(param):
        names = [str(param.metavar or param.name).upper()]
    shown = ", ".join(f"`{name}`" for name in names)
    value = value_of(param)
    if value and not is_argument(param):
        shown += f" `{value}`"
    required = " (required)" if param.required and not is_argument(param) else ""
    help_text = plain(getattr(param, "help", None))
    return f"- {shown}{required}{default_of(param)}: {help_text}".rstrip(": ")


def command_section(name: str, command: Any, parent: Any) -> list[str]:
    """The Markdown section of one command."""
    ctx = command.context_class(command, info_name=name, parent=parent)
    usage = " ".join(command.collect_usage_pieces(ctx))
    params = [p for p in command.get_params(ctx) if not getattr(p, "hidden", False)]
    arguments = [param_line(p) for p in params if is_argument(p)]
    options = [param_line(p) for p in params if not is_argument(p)]
    lines = [f"## `planverify {name}` {{#{name}}}", "", plain(command.help), ""]
    lines += ["```text", f"planverify {name} {usage}", "```", ""]
    if arguments:
        lines += ["**Arguments**", "", *arguments, ""]
    lines += ["**Options**", "", *options, ""]
    if command.epilog:
        lines += [linked(plain(command.epilog)), ""]
    return lines


def linked(text: str) -> str:
    """An epilog on the site: its `docs/PAGE.md` names as links (checked by the strict build)."""
    text = text.replace(" (the site: make docs)", "")
    return DOCS_PAGE.sub(lambda m: f"[{m[1]}]({m[1]})", text)


def reference() -> str:
    """The reference of every command, in the order `planverify --help` lists them."""
    group = program()
    root = group.context_class(group, info_name="planverify")
    lines = [
        f"Every command of planverify {version()}, as `planverify COMMAND --help` prints it.",
        "",
    ]
    for name in group.list_commands(root):
        command = group.get_command(root, name)
        if command is not None and not command.hidden:
            lines += command_section(name, command, root)
    return "\n".join(lines).rstrip() + "\n"


def version() -> str:
    from planverify import __version__

    return __version__


def on_page_markdown(markdown: str, **_: Any) -> str:
    """MkDocs hook: the reference in place of its marker line."""
    if MARKER not in markdown:
        return markdown
    return markdown.replace(MARKER, reference())


if __name__ == "__main__":
    sys.stdout.write(reference())
