"""The served graph as an MCP tool: `langgraph dev`'s `/mcp` endpoint through the official `mcp`
client (streamable HTTP), as Claude Desktop, Cursor or a LangChain agent would call it.

The server is `tests/test_server.py`'s fixture (its own `langgraph dev` on a free loopback port,
in a temporary folder, with a minimal environment); nothing leaves the machine.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from planverify.api import Verifier
from planverify.records.episode import Episode, iter_jsonl
from planverify.records.result import VerificationResult

from . import test_server as dev
from .conftest import COFFEE_PLAN, ROOT

pytest.importorskip("mcp", reason="the mcp client is not installed (pip install -e '.[dev]')")
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

pytestmark = [dev.pytestmark, pytest.mark.usefixtures("no_proxy")]
no_proxy = dev.no_proxy  # no proxy settings reach the clients (the servers are on loopback)
server = dev.server  # module-scoped: one `langgraph dev` for the tests of this module

TOOL = "planverify"
SAMPLE = [e for e in iter_jsonl(ROOT / "examples" / "episodes.jsonl") if isinstance(e, Episode)]


def text_of(answer: Any) -> str:
    (content,) = answer.content
    assert content.type == "text"
    return str(content.text)


async def test_the_mcp_tool_lists_documented_inputs_and_answers_the_cli_record(
    server: str,
) -> None:
    episode = SAMPLE[0]
    assert episode.scene is not None and episode.goal
    arguments = {
        "episode_id": episode.id,
        "goal": episode.goal,
        "actions": episode.actions,
        "scene": episode.scene.model_dump(mode="json"),
    }
    async with (
        streamable_http_client(f"{server}/mcp") as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        tools = (await session.list_tools()).tools
        (tool,) = [t for t in tools if t.name == TOOL]
        assert "Judge" in (tool.description or "") and "refined" in (tool.description or "")
        schema = tool.input_schema
        assert list(schema["properties"]) == [
            "episode_id",
            "goal",
            "domain",
            "actions",
            "scene",
            "task",
            "teach_task",
            "program",
        ]
        assert schema["required"] == ["actions"]
        assert all(field.get("description") for field in schema["properties"].values())

        answer = await session.call_tool(TOOL, arguments)
        assert not answer.is_error, text_of(answer)
        record = VerificationResult.model_validate_json(text_of(answer))  # JSON, not a repr
        assert answer.structured_content == json.loads(text_of(answer))

        minimal = await session.call_tool(TOOL, {"actions": COFFEE_PLAN})  # only actions needed
        bare = VerificationResult.model_validate_json(text_of(minimal))

        missing = await session.call_tool(TOOL, {"goal": "Make coffee."})
        assert missing.is_error, "actions are required"

    given = Episode(id=episode.id, goal=episode.goal, actions=episode.actions, scene=episode.scene)
    local = await Verifier().averify(given)  # what the tool was given: no task family
    assert record.status == "ok" and record.refined != record.original
    assert record.model_dump() == local.model_dump(), "the tool answers what a local run gives"
    alone = await Verifier().averify(Episode(id="episode", actions=COFFEE_PLAN))
    assert bare.status == "ok" and bare.model_dump() == alone.model_dump()


async def test_an_assistant_with_its_own_settings_is_its_own_tool(server: str) -> None:
    from langgraph_sdk import get_client

    sdk = get_client(url=server, api_key=None)
    assistant = await sdk.assistants.create(
        dev.GRAPH, context={"judge": "baseline", "max_iterations": 1}, name="planverify baseline"
    )
    try:
        async with (
            streamable_http_client(f"{server}/mcp") as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            names = {t.name for t in (await session.list_tools()).tools}
            assert {TOOL, "planverify_baseline"} <= names
            answer = await session.call_tool("planverify_baseline", {"actions": COFFEE_PLAN})
            record = VerificationResult.model_validate_json(text_of(answer))
    finally:
        await sdk.assistants.delete(assistant["assistant_id"])
    local = await Verifier(judge="baseline", max_iterations=1).averify(
        Episode(id="episode", actions=COFFEE_PLAN)
    )
    assert record.settings is not None and record.settings.judge == "baseline"
    assert (record.stop_reason, record.iterations) == ("max_iterations", 1)
    assert record.model_dump() == local.model_dump()


async def test_an_assistant_with_a_trim_policy_answers_under_it(server: str) -> None:
    from langgraph_sdk import get_client

    sdk = get_client(url=server, api_key=None)
    assistant = await sdk.assistants.create(
        dev.GRAPH, context={"judge": "baseline", "trim": "minimal"}, name="planverify minimal"
    )
    try:
        async with (
            streamable_http_client(f"{server}/mcp") as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            answer = await session.call_tool("planverify_minimal", {"actions": COFFEE_PLAN})
            record = VerificationResult.model_validate_json(text_of(answer))
    finally:
        await sdk.assistants.delete(assistant["assistant_id"])
    local = await Verifier(judge="baseline", trim="minimal").averify(
        Episode(id="episode", actions=COFFEE_PLAN)
    )
    assert record.settings is not None and record.settings.trim == "minimal"
    assert record.model_dump() == local.model_dump()


async def test_a_teach_game_through_the_tool_equals_a_local_run(
    server: str, shared_dir: Path
) -> None:
    from planverify.inputs.sources import load_episodes

    games = shared_dir / "teach" / "games" / "valid_seen"
    episode = next(e for e in load_episodes([games]) if len(e.actions) < 80)
    assert episode.scene is not None and episode.teach_task is not None
    arguments = {
        "episode_id": episode.id,
        "goal": episode.goal,
        "actions": episode.actions,
        "scene": episode.scene.model_dump(mode="json"),
        "teach_task": episode.teach_task,
    }
    async with (
        streamable_http_client(f"{server}/mcp") as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        answer = await session.call_tool(TOOL, arguments)
    record = VerificationResult.model_validate_json(text_of(answer))
    given = Episode(
        id=episode.id,
        goal=episode.goal,
        actions=episode.actions,
        scene=episode.scene,
        teach_task=episode.teach_task,
    )
    assert record.model_dump() == (await Verifier().averify(given)).model_dump()
