"""The household domains a plan can be for, behind one interface, and their registry.

A domain (`Domain`) owns what is specific to one household: its notation, its offline Judge,
its checks of a model Judge's flags, the facts a model Judge's prompt gets, its objects' names,
its episode records and its error generator. The core (graphs, agents, cli, api, runs, export,
review, metrics) imports no domain module: it asks `domain_of(name)`, which imports one of the
modules of a fixed table. A record's `domain` field only ever selects among the table's entries.

- `teach`: TEACh (`planverify.domains.teach`), over `planverify.world` and the rules Judge;
- `virtualhome`: VirtualHome through `eai-eval` (`planverify.domains.virtualhome.adapter`).
"""

from __future__ import annotations

import importlib
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any, Protocol

from planverify.agents.parsing import register_missing_reader
from planverify.prompts import template_version
from planverify.records.critique import Critique, Veto
from planverify.records.episode import Episode, EpisodeError, Scene
from planverify.records.result import RunSettings
from planverify.records.trim import TrimPolicy

MODULES: dict[str, str] = {
    "teach": "planverify.domains.teach",
    "virtualhome": "planverify.domains.virtualhome.adapter",
}  # domain name -> the module whose `DOMAIN` it is; nothing else is ever imported by name
DEFAULT = "teach"  # the domain of a record that names none
RULES_PLANNER = "rules"  # the one Planner, in run settings, that never reads Planner instructions


class UnknownDomain(ValueError):
    """A domain name that is not in the registry's table."""


class DomainUnavailable(RuntimeError):
    """A known domain whose package is not installed; says how to install it."""


@dataclass(frozen=True)
class Case:
    """What a domain reads of one plan under verification."""

    lines: Sequence[str]  # the current plan, one step per line in the domain's notation
    goal: str = ""  # the goal text
    program: str | None = None  # VirtualHome: the installed program whose scene and goal apply
    scene: Scene | None = None  # TEACh: the initial object states
    task: str | None = None  # the task family or title
    teach_task: dict[str, Any] | None = None  # TEACh's task definition
    dialogue: Sequence[str] = field(default_factory=tuple)  # TEACh: utterances, as context


class Domain(Protocol):
    """What the core needs of a household domain.

    A domain with a notation of its own may also have `read_missing(text, plan)`: the step a
    model Judge's missing-step text names, in that notation, and the plan step it goes after
    (None: not known), or None. `domain_of` registers it for the domain's Judge instructions, so
    a model Judge's `#MISSING` lines become insertions there rather than TEACh-parsed text, and
    for the domain's Planner instructions, so a model Planner's lines are read in that notation.
    It may also have `step_problems(case)`: why each step of the case's plan cannot happen in
    its simulator ("" when it can; the run goes on), with which an export marks the steps a
    reviewer's decisions made impossible, as TEACh's are; and `certify_insertions(case,
    insertions)`: the insertions into the case's plan its simulator accepts, each checked where
    it goes after the ones accepted before it, and one veto (with why) per insertion it refuses
    (TEACh's loop certifies its insertions on its own path)."""

    name: str  # the registry's name of the domain, as records write it
    judge_prompt: str  # the model Judge's instructions: a template of `planverify.prompts`
    planner_prompt: str  # a model Planner's instructions: a template of `planverify.prompts`

    def version(self) -> str | None:
        """The version of the domain's own package, recorded in run settings (None: nothing
        beyond the settings' own fields, as for TEACh)."""
        ...

    def grounded(self, case: Case) -> bool:
        """Whether the case's scene or goal conditions are known (so flags can be certified)."""
        ...

    def critique(self, case: Case, trim: TrimPolicy) -> Critique:
        """The offline Judge's critique of the plan under a trim policy."""
        ...

    def certify(
        self, case: Case, critique: Critique, trim: TrimPolicy
    ) -> tuple[Critique, list[Veto]]:
        """A model Judge's critique with only the flags the domain's simulator accepts, and one
        veto (with why) per flag it refuses."""
        ...

    def first_problem(self, case: Case) -> str | None:
        """Why the domain's simulator cannot carry out the plan (its first impossible step),
        or None when it can (or when nothing is known to run it in)."""
        ...

    def prompt_facts(self, case: Case) -> str:
        """Facts from the domain's scene for a model Judge's prompt, one line each."""
        ...

    def object_names(self, case: Case) -> dict[str, str]:
        """The objects of the case's scene that its plan names: id (as text) -> name, for a
        person reviewing it (every object of the scene when the plan is empty)."""
        ...

    def records(self, source: Path | None) -> Iterator[Episode | EpisodeError]:
        """Episode records read from the domain's own files (None: its default data)."""
        ...

    def corrupt(
        self,
        episodes: Iterable[Episode],
        *,
        seed: int = 0,
        errors_per_episode: tuple[int, int] = (1, 3),
        clean_fraction: float = 0.2,
        max_steps: int | None = 25,
        summary: Any = None,
    ) -> Iterator[Episode]:
        """The episodes with labelled errors in the domain's notation (some left clean)."""
        ...


def domain_name(name: str | None) -> str:
    """The registry's name for a record's domain (None: TEACh); `UnknownDomain` otherwise."""
    key = DEFAULT if name is None else name
    if not isinstance(key, str) or key not in MODULES:
        known = ", ".join(sorted(MODULES))
        raise UnknownDomain(f"unknown domain {name!r}: planverify knows {known}")
    return key


def is_default(name: str | None) -> bool:
    """Whether a record's domain is TEACh, the domain the loop's own notation is for."""
    return domain_name(name) == DEFAULT


@cache
def domain_of(name: str | None) -> Domain:
    """The domain a record names (None: TEACh), imported from the registry's table.

    `UnknownDomain` for a name not in the table; `DomainUnavailable` when its package is not
    installed.
    """
    key = domain_name(name)
    module_name = MODULES[key]
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise DomainUnavailable(f"the {name} domain cannot be loaded: {exc}") from None
    except RuntimeError as exc:  # a domain's own "package missing" error says how to install
        raise DomainUnavailable(str(exc)) from None
    domain: Domain = module.DOMAIN
    reader = getattr(domain, "read_missing", None)
    if reader is not None and key != DEFAULT:  # TEACh's steps are the parser's own notation
        register_missing_reader(domain.judge_prompt, reader)
        register_missing_reader(domain.planner_prompt, reader)
    return domain


def domain_versions(name: str | None, *, model_planner: bool = False) -> dict[str, str]:
    """What run settings record of a domain: {name: version}, empty for TEACh (its versions are
    the settings' own fields, so a TEACh run's settings are unchanged). With `model_planner`,
    the version also names the domain's Planner instructions (`+planner-<hash>`), which only a
    model Planner reads: a run with the rules Planner keeps its key."""
    if is_default(name):
        return {}
    domain = domain_of(name)
    parts = [domain.version()]
    if model_planner:
        parts.append(f"planner-{template_version(domain.planner_prompt)}")
    version = "+".join(part for part in parts if part is not None)
    return {domain_name(name): version} if version else {}


def settings_for(settings: RunSettings, name: str | None) -> RunSettings:
    """A run's settings as recorded on a result of the domain's: for any domain but TEACh,
    with its package's version (`domains`, so a result is never reused under another version);
    for TEACh, the run's own (its key unchanged)."""
    versions = domain_versions(name, model_planner=settings.planner != RULES_PLANNER)
    if not versions:
        return settings
    return RunSettings.model_validate({**settings.model_dump(), "domains": versions})
