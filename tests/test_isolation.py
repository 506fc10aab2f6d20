"""Callers of one served graph are kept apart (issue 33, item 9), and `verify --server` keeps
its output when the server goes away mid-batch (item 4).

One `langgraph dev` on loopback (`tests/test_server.py`'s `launch`) serves with an operator
token and two caller tokens, `alice` and `bob`. Thread ids are no secret in principle, so each
test takes the attacker's side: bob knows alice's thread ids and tries to read, run, take and
fill them; a thread a caller's own client reads back is checked against the input it sent.
"""

from __future__ import annotations

import os
import signal
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from typer.testing import CliRunner

from planverify.cli import app
from planverify.graphs.policy import TOKEN_ENV
from planverify.records.episode import Episode
from planverify.records.result import VerificationResult
from planverify.runs.auth import CLIENT_TOKENS_ENV, OWNER
from planverify.runs.remote import GRAPH_ID, KEY_VARIABLES, RemoteVerifier, disagreement

from . import test_server as dev
from .conftest import COFFEE_PLAN, COFFEE_REFINED

pytestmark = dev.pytestmark

OPERATOR_TOKEN = "operator-token-5d1c"
TOKENS = {"alice": "alice-token-0e7a", "bob": "bob-token-93f2"}
EPISODE = Episode(id="iso", goal="Make coffee.", actions=COFFEE_PLAN)


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    env = {
        TOKEN_ENV: OPERATOR_TOKEN,
        CLIENT_TOKENS_ENV: ",".join(f"{name}:{token}" for name, token in TOKENS.items()),
    }
    with dev.launch(tmp_path_factory.mktemp("isolated"), env=env) as url:
        yield url


@pytest.fixture(autouse=True)
def offline_client(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    for name in (*dev.PROXY_VARIABLES, *KEY_VARIABLES):
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.lower(), raising=False)
    yield


def as_caller(url: str, token: str) -> Any:
    return dev.sdk_client(url, headers={"Authorization": f"Bearer {token}"})


def remote(url: str, token: str, monkeypatch: pytest.MonkeyPatch) -> RemoteVerifier:
    """`verify --server`'s verifier, for the caller whose token is in the environment."""
    monkeypatch.setenv(TOKEN_ENV, token)
    return RemoteVerifier(url, judge="baseline")


def status(call: Any) -> int:
    with pytest.raises(httpx.HTTPStatusError) as refused:
        call()
    return int(refused.value.response.status_code)


async def test_a_caller_cannot_see_run_take_or_fill_another_callers_threads(
    served: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    async with remote(served, TOKENS["alice"], monkeypatch) as alice:
        result = await alice.averify(EPISODE)
        assert result.status == "ok" and result.refined == COFFEE_REFINED, result.error
        thread = alice.thread_of(EPISODE)
    bob = as_caller(served, TOKENS["bob"])
    assert status(lambda: bob.threads.get(thread)) == 404
    assert status(lambda: bob.threads.get_state(thread)) == 404
    assert status(lambda: bob.threads.update_state(thread, {"refined": []})) in (403, 404)
    assert status(lambda: bob.runs.create(thread, GRAPH_ID, input={"actions": COFFEE_PLAN})) in (
        403,
        404,
    )
    assert status(lambda: bob.threads.create(thread_id=thread, if_exists="do_nothing")) == 409
    assert status(lambda: bob.threads.delete(thread)) == 404
    assert all(t["metadata"].get(OWNER) == "bob" for t in bob.threads.search(limit=100))
    own = bob.threads.create(metadata={OWNER: "alice"})  # cannot pass a thread off as alice's
    assert own["metadata"][OWNER] == "bob"
    assert thread not in {t["thread_id"] for t in bob.threads.search(limit=100)}
    alice_sdk = as_caller(served, TOKENS["alice"])
    assert alice_sdk.threads.get(thread)["metadata"][OWNER] == "alice"
    assert status(lambda: alice_sdk.threads.get(own["thread_id"])) == 404

    monkeypatch.setenv(TOKEN_ENV, TOKENS["bob"])
    assert RemoteVerifier(served, judge="baseline").thread_of(EPISODE) != thread, (
        "thread ids depend on the caller's token: no one else can compute them"
    )


def test_requests_without_a_known_token_are_refused_studio_header_or_not(served: str) -> None:
    for headers in ({}, {"Authorization": "Bearer nope"}, {"x-auth-scheme": "langsmith"}):
        with dev.sdk_client(served, headers=headers) as stranger:
            assert status(lambda: stranger.threads.search(limit=1)) == 401, headers


def test_only_the_operator_creates_changes_or_deletes_assistants(served: str) -> None:
    bob = as_caller(served, TOKENS["bob"])
    assert status(lambda: bob.assistants.create(GRAPH_ID, name=GRAPH_ID)) == 403
    assert [a["name"] for a in bob.assistants.search(graph_id=GRAPH_ID)] == [GRAPH_ID]
    operator = as_caller(served, OPERATOR_TOKEN)
    made = operator.assistants.create(GRAPH_ID, context={"max_iterations": 2}, name="two passes")
    try:
        assert status(lambda: bob.assistants.update(made["assistant_id"], name="mine")) == 403
        assert status(lambda: bob.assistants.delete(made["assistant_id"])) == 403
        ran = bob.runs.wait(None, made["assistant_id"], input={"actions": COFFEE_PLAN})
        assert isinstance(ran, dict) and ran["refined"] == COFFEE_REFINED, "callers run them"
    finally:
        operator.assistants.delete(made["assistant_id"])


async def test_a_finished_thread_that_disagrees_with_the_input_is_not_taken_as_ok(
    served: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    alice_sdk = as_caller(served, TOKENS["alice"])
    async with remote(served, TOKENS["alice"], monkeypatch) as alice:
        scratch = alice_sdk.threads.create()["thread_id"]  # a genuine run to copy from
        alice_sdk.runs.wait(
            scratch,
            GRAPH_ID,
            input={"episode_id": EPISODE.id, "goal": EPISODE.goal, "actions": COFFEE_PLAN},
            context=alice.context.model_dump(mode="json"),
        )
        genuine = alice_sdk.threads.get_state(scratch)["values"]
        genuine.pop("history")  # the dev server takes no history through update_state
        forgeries = {
            "unexplained": (genuine, "history"),  # the refined plan, without the passes
            "digest": ({**genuine, "input_digest": "0" * 16}, "other content"),
        }
        for name, (values, problem) in forgeries.items():
            episode = EPISODE.model_copy(update={"id": f"forged-{name}"})
            forged = {**values, "episode_id": episode.id}
            thread = alice.thread_of(episode)
            alice_sdk.threads.create(thread_id=thread, graph_id=GRAPH_ID)
            alice_sdk.threads.update_state(thread, forged, as_node="record")
            assert not alice_sdk.threads.get_state(thread)["next"], "planted as finished"
            result = await alice.averify(episode)
            assert result.status == "error", f"{name}: a forged record was taken as ok"
            assert problem in (result.error or ""), result.error


def test_records_are_checked_against_the_input_and_their_own_history() -> None:
    from planverify.api import Verifier
    from planverify.eventloop.runner import run

    result = run(Verifier(judge="baseline").averify(EPISODE))
    assert disagreement(result, EPISODE) is None
    other = EPISODE.model_copy(update={"actions": COFFEE_PLAN[:3]})
    assert disagreement(result, other) == "a run on other content"
    unchanged = result.model_copy(update={"refined": list(COFFEE_PLAN)})
    assert disagreement(unchanged, EPISODE) == "a refined plan its history does not produce"
    reordered = result.model_copy(update={"refined": list(reversed(result.refined))})
    assert disagreement(reordered, EPISODE) == "a refined plan its history does not produce"


def test_a_server_dying_mid_batch_leaves_the_output_and_keeps_the_runs_results(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    episodes = [EPISODE.model_copy(update={"id": f"die-{n}"}) for n in range(5)]
    source = tmp_path / "in.jsonl"
    source.write_text("".join(e.model_dump_json() + "\n" for e in episodes), encoding="utf-8")
    out = tmp_path / "out.jsonl"
    partial = out.with_name(out.name + ".partial")
    runner = CliRunner()
    monkeypatch.delenv(TOKEN_ENV, raising=False)
    (tmp_path / "server").mkdir()
    with dev.launch(tmp_path / "server") as url:
        command = ["verify", str(source), "--server", url, "--concurrency", "1", "-o", str(out)]
        first = runner.invoke(app, command)
        assert first.exit_code == 0, first.output
        complete = out.read_bytes()

        finished = 0
        averify = RemoteVerifier.averify

        async def then_die(self: RemoteVerifier, episode: Episode) -> VerificationResult:
            nonlocal finished
            result = await averify(self, episode)
            finished += 1
            if finished == 1:  # the server goes away after the first episode
                process = dev.PROCESSES[url]
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()
            return result

        monkeypatch.setattr(RemoteVerifier, "averify", then_die)
        died = runner.invoke(app, [*command[:-2], "--max-iterations", "2", "-o", str(out)])
    assert died.exit_code == 1, died.output
    assert out.read_bytes() == complete, "the finished output is left as it was"
    said = " ".join(died.stderr.split())
    assert f"the LangGraph server at {url} stopped answering" in said
    assert f"{out} is left as it was" in said
    journal = [line for line in partial.read_bytes().splitlines() if line]
    assert len(journal) <= 2, "no episode started after the server was gone"
    assert b'"status":"ok"' in journal[0]


def test_the_operator_configures_callers_by_name_and_token() -> None:
    from planverify.runs.auth import Caller, CallerConfigError, caller_of, callers_from_env

    table = callers_from_env({TOKEN_ENV: "op", CLIENT_TOKENS_ENV: " alice:a1 , bob:b2 ,"})
    assert caller_of("Bearer op", table) == Caller("operator", operator=True)
    assert caller_of("bearer a1", table) == Caller("alice", operator=False)
    assert caller_of("Bearer b", table) is None and caller_of(None, table) is None
    assert callers_from_env({}) == {}, "no token: an open server"
    for wrong in ("alice", "alice:", "operator:x", "alice:a1,alice:a2", "alice:op", "a:x,b:x"):
        with pytest.raises(CallerConfigError):
            callers_from_env({TOKEN_ENV: "op", CLIENT_TOKENS_ENV: wrong})
    with pytest.raises(CallerConfigError, match=TOKEN_ENV):
        callers_from_env({CLIENT_TOKENS_ENV: "alice:a1"})
