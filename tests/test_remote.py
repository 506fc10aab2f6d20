"""`RemoteVerifier`: the batch runner driving a LangGraph server instead of the local graph.

The server is `tests/test_server.py`'s fixture (imported, so this module starts its own
`langgraph dev` on a free loopback port, in a temporary folder, with the same minimal
environment). The client sends no API key and ignores proxy settings, so nothing leaves the
machine; the offline Judges and Planner need no model.
"""

from __future__ import annotations

import http.server
import threading
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from planverify.api import Verifier
from planverify.graphs.graph import recursion_limit
from planverify.records.episode import Episode, iter_jsonl
from planverify.records.result import VerificationResult
from planverify.runs.batch import run_batch
from planverify.runs.remote import (
    GRAPH_ID,
    KEY_VARIABLES,
    RemoteError,
    RemoteVerifier,
    api_key_from_env,
)

from . import test_server as dev
from .conftest import COFFEE_PLAN, COFFEE_REFINED, ROOT

pytestmark = dev.pytestmark
server = dev.server  # module-scoped: one `langgraph dev` for the tests of this module

SAMPLE = [e for e in iter_jsonl(ROOT / "examples" / "episodes.jsonl") if isinstance(e, Episode)]
DIALOGUE_ONLY = Episode(id="chat-only", actions=["Commander.Say('Nothing to do today.')"])


@pytest.fixture(autouse=True)
def offline_client(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """No proxy (the server is on loopback) and no API key in the client's environment."""
    for name in dev.PROXY_VARIABLES:
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.lower(), raising=False)
    for name in KEY_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    yield


async def batch(verifier: Any, episodes: list[Episode], output: Path) -> list[VerificationResult]:
    """Run `run_batch` as `planverify verify` does, with an output file."""
    report = await run_batch(
        verifier, iter(episodes), total=len(episodes), limit=None, output=output, concurrency=4
    )
    assert not report.skipped
    return report.results


def records(output: Path) -> list[VerificationResult]:
    return [VerificationResult.model_validate_json(x) for x in output.read_bytes().splitlines()]


async def runs_of(verifier: RemoteVerifier, episode: Episode) -> list[dict[str, Any]]:
    runs = await verifier.client.runs.list(verifier.thread_of(episode), limit=100)
    return [dict(run) for run in runs]


async def test_a_batch_on_the_server_equals_the_local_one_and_a_rerun_makes_no_new_runs(
    server: str, tmp_path: Path
) -> None:
    episodes = SAMPLE[:3]
    assert all(e.scene is not None for e in episodes), "the sample carries scenes"
    local = await batch(Verifier(), episodes, tmp_path / "local.jsonl")

    out = tmp_path / "remote.jsonl"
    async with RemoteVerifier(server) as verifier:
        await verifier.check()
        remote = await batch(verifier, episodes, out)
        assert [r.model_dump() for r in remote] == [r.model_dump() for r in local]
        assert [r.id for r in records(out)] == [e.id for e in episodes], "input order"
        assert not out.with_name(out.name + ".partial").exists()
        assert all(r.status == "ok" and r.stop_reason for r in remote)

        thread = await verifier.client.threads.get(verifier.thread_of(episodes[0]))
        assert thread["metadata"]["episode_id"] == episodes[0].id
        assert thread["metadata"]["settings"] == verifier.key == Verifier().key
        first = {e.id: await runs_of(verifier, e) for e in episodes}
        assert all(len(runs) == 1 for runs in first.values()), "one run per episode"
        run = first[episodes[0].id][0]
        assert run["kwargs"]["config"]["recursion_limit"] == recursion_limit(5)

        again = await batch(verifier, episodes, out)  # the journal is gone: the threads answer
        assert [r.model_dump() for r in again] == [r.model_dump() for r in local]
        assert records(out) == again
        for e in episodes:
            assert await runs_of(verifier, e) == first[e.id], f"{e.id}: no new run"


async def test_an_episode_stopped_part_way_continues_from_its_checkpoint(server: str) -> None:
    episode = Episode(id="half-done", goal="Make coffee.", actions=COFFEE_PLAN)
    async with RemoteVerifier(server, judge="baseline") as verifier:
        thread = verifier.thread_of(episode)
        await verifier.client.threads.create(thread_id=thread)
        first = await verifier.client.runs.create(
            thread,
            GRAPH_ID,
            input={"episode_id": episode.id, "goal": episode.goal, "actions": COFFEE_PLAN},
            context=verifier.context.model_dump(mode="json"),
            interrupt_before=["planner"],  # stands for a run cut short after the first Judge
        )
        await verifier.client.runs.join(thread, first["run_id"])
        state = await verifier.client.threads.get_state(thread)
        assert state["next"] == ["planner"] and not state["values"].get("stop_reason")

        result = await verifier.averify(episode)
        assert result.status == "ok", result.error
        assert (result.refined, result.stop_reason, result.iterations) == (
            COFFEE_REFINED,
            "no_objections",
            2,
        )
        runs = await runs_of(verifier, episode)
        assert len(runs) == 2
        assert runs[0]["kwargs"]["input"] is None, "continued, not started again"
        local = await Verifier(judge="baseline").averify(episode)
        assert result.model_dump() == local.model_dump()


async def test_a_run_already_queued_for_the_episode_is_waited_for_not_repeated(
    server: str,
) -> None:
    plan = [*COFFEE_PLAN, "Driver.Wave('Hand')"]  # an unknown verb: one warning per input
    episode = Episode(id="queued", goal="Make coffee.", actions=plan)
    async with RemoteVerifier(server, judge="baseline") as verifier:
        thread = verifier.thread_of(episode)
        await verifier.client.threads.create(thread_id=thread)
        await verifier.client.runs.create(  # as left by a client stopped while it waited
            thread,
            GRAPH_ID,
            input={"episode_id": episode.id, "goal": episode.goal, "actions": plan},
            context=verifier.context.model_dump(mode="json"),
            config={"recursion_limit": recursion_limit(5)},
        )
        result = await verifier.averify(episode)
        assert result.status == "ok" and result.refined == [*COFFEE_REFINED, plan[-1]]
        assert len(await runs_of(verifier, episode)) == 1
        assert len(result.warnings) == 1, "the input went in once"


async def test_an_episode_failing_on_the_server_is_an_error_record_and_the_batch_goes_on(
    server: str, tmp_path: Path
) -> None:
    # An unknown Judge spec fails inside the run, at the first Judge call; a dialogue-only
    # plan never calls the Judge, so it finishes.
    episodes = [
        Episode(id="fails-1", goal="Make coffee.", actions=COFFEE_PLAN),
        DIALOGUE_ONLY,
        Episode(id="fails-2", goal="Make coffee.", actions=COFFEE_PLAN[:1]),
    ]
    out = tmp_path / "out.jsonl"
    async with RemoteVerifier(server, judge="nope:x") as verifier:
        await verifier.check()  # the spec is the server's business, not the probe's
        results = await batch(verifier, episodes, out)
        assert [r.id for r in records(out)] == [e.id for e in episodes]
        assert [r.status for r in results] == ["error", "ok", "error"]
        failed = results[0]
        assert failed.error is not None and failed.error.startswith("ModelSpecError: ")
        assert "unknown provider 'nope'" in failed.error
        assert failed.refined == COFFEE_PLAN, "a failed episode keeps its input"
        assert results[1].stop_reason == "no_objections"

        again = await verifier.averify(episodes[0])  # resumes the failed thread: fails again
        assert again.status == "error" and again.error == failed.error
        runs = await runs_of(verifier, episodes[0])
        assert [r["status"] for r in runs] == ["error", "error"]
        assert runs[0]["kwargs"]["input"] is None, "the rerun continued from the checkpoint"


async def test_an_unreachable_server_is_one_clear_error() -> None:
    url = f"http://127.0.0.1:{dev.free_port()}"  # nothing listens there
    async with RemoteVerifier(url) as verifier:
        with pytest.raises(RemoteError, match=rf"^no LangGraph server at {url} \(ConnectError"):
            await verifier.check()


class Refusing(http.server.BaseHTTPRequestHandler):
    """Answers every POST with 403, like a server that wants another API key."""

    def do_POST(self) -> None:
        self.send_response(403)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.mark.parametrize(
    ("handler", "message"),
    [
        (http.server.BaseHTTPRequestHandler, "the server at {url} answered 501 to a LangGraph"),
        (
            Refusing,
            "the LangGraph server at {url} refused the request (403): set PLANVERIFY_SERVER_TOKEN",
        ),
    ],
    ids=["not-langgraph", "key-refused"],
)
async def test_a_server_that_cannot_be_used_is_one_clear_error(
    handler: type[http.server.BaseHTTPRequestHandler], message: str
) -> None:
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    serving = threading.Thread(target=httpd.serve_forever, daemon=True)
    serving.start()
    url = f"http://127.0.0.1:{httpd.server_address[1]}"
    try:
        async with RemoteVerifier(url) as verifier:
            with pytest.raises(RemoteError) as failure:
                await verifier.check()
        assert str(failure.value).startswith(message.format(url=url))
    finally:
        httpd.shutdown()
        httpd.server_close()


def test_only_specs_and_http_urls_are_accepted() -> None:
    with pytest.raises(TypeError, match="specs"):
        RemoteVerifier("http://127.0.0.1:1", judge=object())  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="http"):
        RemoteVerifier("127.0.0.1:2024")
    with pytest.raises(ValueError, match="max_iterations"):
        RemoteVerifier("http://127.0.0.1:1", max_iterations=0)


def test_thread_ids_are_uuids_fixed_by_episode_and_settings() -> None:
    one, same = RemoteVerifier("http://h:1"), RemoteVerifier("http://h:2")
    other = RemoteVerifier("http://h:1", max_iterations=2)
    a, b = Episode(id="a", actions=COFFEE_PLAN), Episode(id="b", actions=COFFEE_PLAN)
    edited = Episode(id="a", actions=COFFEE_PLAN[:-1])
    assert str(uuid.UUID(one.thread_of(a))) == one.thread_of(a) == same.thread_of(a)
    assert one.thread_of(a) != one.thread_of(b)
    assert one.thread_of(a) != other.thread_of(a)
    assert one.thread_of(a) != one.thread_of(edited), "other content, other thread"


def test_the_api_key_is_the_given_one_else_the_first_variable_set(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def sent(verifier: RemoteVerifier) -> str | None:
        return verifier.client.http.client.headers.get("x-api-key")

    assert api_key_from_env() is None and sent(RemoteVerifier("http://h:1")) is None
    monkeypatch.setenv("LANGSMITH_API_KEY", "smith")
    assert sent(RemoteVerifier("http://h:1")) == "smith"
    monkeypatch.setenv("LANGGRAPH_API_KEY", "graph")
    assert sent(RemoteVerifier("http://h:1")) == "graph"
    assert sent(RemoteVerifier("http://h:1", api_key="given")) == "given"
    assert sent(RemoteVerifier("http://h:1", api_key="")) is None


async def test_a_changed_episode_under_the_same_id_gets_its_own_thread_on_the_server(
    server: str, tmp_path: Path
) -> None:
    first = Episode(id="edited", goal="Make coffee.", actions=COFFEE_PLAN)
    edited = Episode(id="edited", goal="Make coffee.", actions=COFFEE_PLAN[:-1])
    async with RemoteVerifier(server) as verifier:
        (old,) = await batch(verifier, [first], tmp_path / "1.jsonl")
        (new,) = await batch(verifier, [edited], tmp_path / "2.jsonl")
        assert verifier.thread_of(first) != verifier.thread_of(edited)
        assert new.original == edited.actions and new.input_digest == edited.input_digest
        assert old.input_digest == first.input_digest != new.input_digest
        runs_before = await runs_of(verifier, first)
        (again,) = await batch(verifier, [first], tmp_path / "3.jsonl")
        assert again.model_dump() == old.model_dump()
        assert await runs_of(verifier, first) == runs_before, "read back, not run again"
