"""Every docstring example in the package runs and gives what it shows."""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

PACKAGES = [
    "planverify",
    "planverify.agents",
    "planverify.eval",
    "planverify.graphs",
    "planverify.prompts",
    "planverify.world",
]
MODULES = sorted(
    {
        name
        for package in PACKAGES
        for _, name, _ in pkgutil.iter_modules(
            importlib.import_module(package).__path__, prefix=f"{package}."
        )
    }
    | set(PACKAGES)
)


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name: str) -> None:
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0, f"{result.failed} docstring example(s) failed in {name}"
