"""The state at the start of a plan: a scene's objects, with what the rules make of them at once."""

from __future__ import annotations

from collections.abc import Iterable

from planverify.records.episode import Scene
from planverify.world.rules import settle
from planverify.world.state import SceneIndex, State, from_scene

_SCENES: dict[int, tuple[Scene, State]] = {}  # the last scenes' states, by identity


def _scene_state(scene: Scene) -> State:
    """The state a scene describes (computed once per scene object, then copied)."""
    cached = _SCENES.get(id(scene))
    if cached is not None and cached[0] is scene:
        return cached[1]
    state = from_scene(scene)
    settle(state)
    if len(_SCENES) >= 256:
        _SCENES.clear()
    _SCENES[id(scene)] = (scene, state)
    return state


def initial_state(scene: Scene | None, *, names: Iterable[str] = ()) -> State:
    """The state at the start of a plan: the scene's objects and initial states, the Driver's
    hands empty. Objects the scene names (`SceneObject.name`) get that key, the others their
    id; `names` are plan names to resolve now."""
    if scene is None:
        state = State(SceneIndex(known=False))
    else:
        base = _scene_state(scene)
        state = State(
            SceneIndex(known=True, types=base.index.types, made_from=scene.made_from),
            dict(base.objects),
            None,
            dict(base.spare),
            {},
        )
        # A name the plan uses that the scene does not (`Tap`, `Countertop`: renamed) is first
        # the scene's object of that type the plan no longer names, where it is. A name in
        # TEACh's own numbering (`Bread3`) next to a scene name of its type that the plan uses
        # (`Bread`) is another instance: the scene's names stay theirs, so that a plan without
        # some of its steps still names the same objects.
        used = set(names)
        state.kept = frozenset(o.type for o in scene.objects if o.name in used)
        for o in scene.objects:
            if o.name is not None and o.name not in used:
                state.renamed.setdefault(o.type, []).append(o.name)
    for name in names:
        state.key(name)
    return state
