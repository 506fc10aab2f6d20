"""The CLI's event loop: uvloop where installed, asyncio's own otherwise."""

from __future__ import annotations

import asyncio

import pytest

from planverify import runner


async def loop_kind() -> str:
    await asyncio.sleep(0)
    return type(asyncio.get_running_loop()).__module__


def test_runs_on_uvloop_when_installed() -> None:
    pytest.importorskip("uvloop", reason="uvloop is not installed on this platform")
    assert runner.run(loop_kind()).startswith("uvloop")


def test_falls_back_to_asyncio(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(runner, "loop_factory", lambda: None)
    assert runner.run(loop_kind()).startswith("asyncio")
