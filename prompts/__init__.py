"""Plain-text prompt templates, rendered with `str.format`. Imports nothing else of planverify.

>>> "{plan}" in template("judge_user")
True
>>> len(PROMPT_VERSION)
8
"""

from __future__ import annotations

import hashlib
from functools import cache
from importlib import resources

NAMES = (
    "judge_system",
    "judge_user",
    "judge_continue",
    "planner_system",
    "planner_user",
    "goal_system",
    "goal_user",
)


DOMAIN_NAMES = ("judge_system_virtualhome", "planner_system_virtualhome")
"""Templates of other domains than TEACh: outside `PROMPT_VERSION` (a TEACh run's settings do
not change with them); a domain records its own templates' version (`template_version`)."""


@cache
def template(name: str) -> str:
    """The text of a prompt template shipped in this package."""
    if name not in NAMES and name not in DOMAIN_NAMES:
        raise KeyError(f"no prompt template named {name!r}")
    return resources.files(__name__).joinpath(f"{name}.txt").read_text(encoding="utf-8")


def render(name: str, **values: str) -> str:
    """Fill a template. Values are inserted verbatim: they are never re-read as a template."""
    return template(name).format(**values)


def _version() -> str:
    digest = hashlib.sha256()
    for name in NAMES:
        digest.update(template(name).encode())
    return digest.hexdigest()[:8]


PROMPT_VERSION = _version()  # changes whenever any TEACh template changes


def template_version(name: str) -> str:
    """A short hash of one template, for a domain's settings."""
    return hashlib.sha256(template(name).encode()).hexdigest()[:8]
