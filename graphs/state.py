"""The typed state that flows through the verification graph."""

from __future__ import annotations

import operator
from typing import Annotated, Any

from pydantic import BaseModel, Field, ValidationInfo, field_validator

from planverify.records.critique import Critique, Dropped, Veto
from planverify.records.episode import PROGRAM_NAME, Domain, Scene, action_lines, single_lines
from planverify.records.history import Edit, Iteration, Step, StopReason, merge_history
from planverify.records.usage import TokenUsage, add_usage


class VerifyInput(BaseModel):
    """A robot's plan to verify: its actions (required), and optionally its goal, an id, the
    scene's initial object states, its task family, TEACh's task definition, and the domain
    and VirtualHome program when it is not TEACh's."""

    episode_id: str = Field(
        default="episode", description="Identifies the plan in the result (its `id`)."
    )
    goal: str | None = Field(
        default=None,
        description="What the plan should achieve, in one sentence, e.g. 'Make a mug of "
        "coffee.' When missing, the Commander's words in the plan's dialogue are used.",
    )
    domain: Domain | None = Field(
        default=None,
        description="The household the plan is for: 'teach' (the default when missing) or "
        "'virtualhome', whose actions are VirtualHome script lines such as "
        "'[WALK] <kitchen> (1.11)'.",
    )
    actions: list[str] = Field(
        description="The plan, one action per item in the notation `Agent.Verb(args)`: Driver "
        "actions such as \"Driver.PickUp('Mug')\", \"Driver.PutAOnB('Mug', 'CoffeeMachine')\", "
        '"Driver.Move(1.0)", "Driver.ToggleOn(\'CoffeeMachine\')", and dialogue lines '
        "\"Commander.Say('...')\" or \"Driver.Say('...')\", which are context, never removed."
    )
    scene: Scene | None = Field(
        default=None,
        description='Initial state of every object, `{"objects": [{"id", "type", '
        '"name", "toggled", "open", "dirty", "filled", "parent", ...}]}`; the '
        "offline Judge simulates the plan over it. Optional: without it the Judge is cautious.",
    )
    task: str | None = Field(
        default=None,
        description="The task family, e.g. TEACh's 'Coffee' or 'Water Plant' (optional): "
        "it helps read the goal, and it is part of the plan's identity (the result's "
        "`input_digest` covers it).",
    )
    teach_task: dict[str, Any] | None = Field(
        default=None,
        description="TEACh's task definition (`tasks[0]` of a game file, without episodes), "
        "when the plan comes from TEACh.",
    )

    program: str | None = Field(
        default=None,
        pattern=PROGRAM_NAME,
        description="VirtualHome: the installed program (e.g. 'file628_2') whose scene graph "
        "and goal conditions the plan's object ids refer to.",
    )

    @field_validator("actions")
    @classmethod
    def _actions_are_lines(cls, value: list[str], info: ValidationInfo) -> list[str]:
        if info.data.get("domain") in (None, "teach"):
            return action_lines(value)  # which step is wrong, and how
        return single_lines(value)  # another domain reads its own notation


class PlanState(VerifyInput):
    """The whole state of one verification."""

    input_digest: str | None = None  # digest of the input as given (`Episode.input_digest`)
    plan: list[Step] = Field(default_factory=list)  # the current plan
    dialogue: list[str] = Field(default_factory=list)  # utterances, as context
    iteration: int = 0  # Judge passes so far
    pending: Critique | None = None  # the latest critique, until the Planner applies it
    history: Annotated[list[Iteration], merge_history] = Field(default_factory=list)  # per pass
    warnings: Annotated[list[str], operator.add] = Field(default_factory=list)  # input notes
    stop_reason: StopReason | None = None  # why the loop ended; None while it runs
    usage: Annotated[dict[str, TokenUsage], add_usage] = Field(default_factory=dict)  # by role

    def lines(self) -> list[str]:
        """The current plan as action lines."""
        return [step.action for step in self.plan]


def checkpoint_types() -> tuple[type[BaseModel], ...]:
    """The state's own types, allowed when a checkpointer deserialises state."""
    from planverify.records.critique import Flag, Missing
    from planverify.records.episode import SceneObject

    return (
        PlanState,
        VerifyInput,
        Step,
        Edit,
        Iteration,
        TokenUsage,
        Critique,
        Flag,
        Missing,
        Dropped,
        Veto,
        Scene,
        SceneObject,
    )
