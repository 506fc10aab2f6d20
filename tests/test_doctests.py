"""Every docstring example in the package runs and gives what it shows."""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

PACKAGE = importlib.import_module("planverify")
MODULES = [
    "planverify",
    *sorted(name for _, name, _ in pkgutil.walk_packages(PACKAGE.__path__, "planverify.")),
]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name: str) -> None:
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0, f"{result.failed} docstring example(s) failed in {name}"
