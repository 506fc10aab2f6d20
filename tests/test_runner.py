"""The CLI's event loop: uvloop where installed, asyncio's own otherwise."""

from __future__ import annotations

import asyncio
import gc

import pytest

from planverify.eventloop import runner


async def loop_kind() -> str:
    await asyncio.sleep(0)
    return type(asyncio.get_running_loop()).__module__


def test_runs_on_uvloop_when_installed() -> None:
    pytest.importorskip("uvloop", reason="uvloop is not installed on this platform")
    assert runner.run(loop_kind()).startswith("uvloop")


def test_falls_back_to_asyncio(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(runner, "loop_factory", lambda: None)
    assert runner.run(loop_kind()).startswith("asyncio")


def test_fewer_collections_while_batches_run_then_the_thresholds_as_they_were() -> None:
    before = gc.get_threshold()
    with runner.fewer_collections():
        with runner.fewer_collections():  # overlapping batches: the outermost one restores
            assert gc.get_threshold()[0] >= runner.YOUNG_THRESHOLD
        assert gc.get_threshold()[0] >= runner.YOUNG_THRESHOLD
    assert gc.get_threshold() == before


def collected(obj: object) -> bool:
    """Whether the cyclic collector looks at `obj` (frozen objects are left out)."""
    return any(o is obj for o in gc.get_objects())


def test_a_batch_freezes_what_exists_until_it_ends() -> None:
    before = [1, 2]
    with runner.fewer_collections():
        made = [3, 4]
        with runner.fewer_collections():  # overlapping batches: the outermost one thaws
            assert not collected(before) and collected(made)
        assert not collected(before)
    assert collected(before) and gc.get_freeze_count() == 0


def test_a_freeze_the_program_made_itself_is_left_as_it_was() -> None:
    own = [1, 2]
    gc.freeze()
    try:
        with runner.fewer_collections():
            made = [3, 4]
            assert collected(made)
        assert not collected(own) and gc.get_freeze_count() > 0
    finally:
        gc.unfreeze()
