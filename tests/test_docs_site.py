"""The documentation site's own parts: each command's help names its page, the command-line
reference is written from the program, and doctests show as code on the API pages.

`make docs` (and `make test`) builds the site with `mkdocs build --strict`, which fails on a
broken link, anchor, include or API reference; these tests check the parts that feed it.
"""

from __future__ import annotations

import importlib.util
import re
import sys
from types import ModuleType

from .conftest import ROOT

DOCS = ROOT / "docs"


def script(name: str) -> ModuleType:
    """A module of `scripts/`, imported from its path (scripts/ is no package)."""
    spec = importlib.util.spec_from_file_location(f"docs_{name}", ROOT / "scripts" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


CLI = script("cli_reference")
DOCTESTS = script("griffe_doctests")


def nav_pages() -> set[str]:
    """The pages mkdocs.yml lists in its navigation."""
    text = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    nav = text.split("\nnav:", 1)[1].split("\n\n", 1)[0]
    return set(re.findall(r":\s*([\w/.-]+\.md)\s*$", nav, re.M))


def test_every_command_s_help_names_a_page_that_exists() -> None:
    group = CLI.program()
    root = group.context_class(group, info_name="planverify")
    pages = nav_pages()
    for name in group.list_commands(root):
        epilog = group.get_command(root, name).epilog or ""
        named = re.findall(r"docs/([\w.-]+\.md)", epilog)
        assert named, f"planverify {name} --help names no page"
        for page in named:
            assert (DOCS / page).is_file() and page in pages, f"{name}: docs/{page}"


def test_the_reference_lists_every_option_of_every_command() -> None:
    reference = CLI.reference()
    group = CLI.program()
    root = group.context_class(group, info_name="planverify")
    for name in group.list_commands(root):
        command = group.get_command(root, name)
        section = reference.split(f"## `planverify {name}`", 1)[1].split("\n## ", 1)[0]
        ctx = command.context_class(command, info_name=name, parent=root)
        for param in command.get_params(ctx):
            if param.param_type_name == "option":
                assert f"`{param.opts[0]}`" in section, (name, param.opts[0])
        assert "[" in section and "](" in section, f"{name}: its page is a link"


def test_the_reference_fills_its_marker_only() -> None:
    page = "# Command line\n\n<!-- cli-reference -->\n"
    filled = CLI.on_page_markdown(page)
    assert "<!-- cli-reference -->" not in filled and "## `planverify verify` {#verify}" in filled
    assert CLI.on_page_markdown("# Other\n") == "# Other\n"


def test_doctests_become_code_blocks() -> None:
    text = "Verify many plans.\n\n>>> f([1])\n['a'][0]\n\nMore text.\n    >>> g()\n    2"
    fenced = DOCTESTS.fence_doctests(text)
    assert fenced == (
        "Verify many plans.\n\n```pycon\n>>> f([1])\n['a'][0]\n```\n\nMore text.\n"
        "    ```pycon\n    >>> g()\n    2\n    ```"
    )


def test_the_site_is_built_by_make_test_and_ships_no_build() -> None:
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    test_recipe = makefile.split("\ntest:", 1)[1].split("\n\n", 1)[0]
    assert "scripts/build-docs.sh" in test_recipe
    assert "--strict" in (ROOT / "scripts" / "build-docs.sh").read_text(encoding="utf-8")
    assert "site/" in (ROOT / ".gitignore").read_text(encoding="utf-8").splitlines()
    for page in nav_pages():
        assert (DOCS / page).is_file(), page
