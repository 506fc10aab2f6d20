"""The adaptive limit on model calls in flight (`planverify.llm.concurrency`), on simulated servers
with a fake clock: no sockets, no sleeping."""

from __future__ import annotations

import asyncio
import heapq
from dataclasses import dataclass, field
from typing import Any

import pytest

from planverify.llm.concurrency import (
    Budget,
    CallGate,
    LimitEstimator,
    Sample,
    describe_gates,
    gate_for,
    starts_at_cap,
)

LONG = Budget(idle=120.0, total=None)  # a 120 s timeout on answers that are not streamed


@dataclass
class Server:
    """A server with `slots` that serves each call for `service` seconds, first come first
    served, and a client that keeps as many calls in flight as the estimator allows."""

    slots: int  # calls served at once
    service: float  # seconds per call
    estimator: LimitEstimator  # the limit under test
    budget: Budget = LONG  # the client's timeouts
    tokens: int | None = None  # output tokens reported per answer
    saturated: bool = False  # the client was busy on the CPU through every call
    now: float = 0.0  # the fake clock
    free: list[float] = field(default_factory=list)  # when each slot is free again
    due: list[tuple[float, float, int, int]] = field(default_factory=list)  # (end, sent, n, epoch)
    limits: list[int] = field(default_factory=list)  # the limit after each answer
    latencies: list[float] = field(default_factory=list)  # of every answer

    def __post_init__(self) -> None:
        self.free = [0.0] * self.slots

    def send(self) -> None:
        while len(self.due) < self.estimator.limit:
            slot = min(range(self.slots), key=self.free.__getitem__)
            end = max(self.now, self.free[slot]) + self.service
            self.free[slot] = end
            heapq.heappush(self.due, (end, self.now, len(self.due) + 1, self.estimator.epoch))

    def run(self, answers: int) -> None:
        self.send()
        for _ in range(answers):
            end, sent, inflight, epoch = heapq.heappop(self.due)
            self.now = end
            sample = Sample(end - sent, self.tokens, inflight, epoch, self.saturated)
            self.latencies.append(sample.latency)
            self.estimator.answered(sample, self.budget)
            self.limits.append(self.estimator.limit)
            self.send()


def test_slow_start_doubles_up_to_the_cap_on_a_wide_server() -> None:
    server = Server(slots=64, service=1.0, estimator=LimitEstimator(cap=8))
    server.run(40)
    assert server.limits[0] == 1 and 2 in server.limits and 4 in server.limits
    assert max(server.limits) == 8 and server.limits[-1] == 8  # the cap, never more
    assert server.estimator.slow_start


def test_a_four_slot_server_settles_at_four_or_just_above() -> None:
    server = Server(slots=4, service=1.0, estimator=LimitEstimator(cap=8))
    server.run(200)
    settled = server.limits[100:]
    assert min(settled) >= 3 and max(settled) <= 6
    assert sum(limit >= 4 for limit in settled) > 0.8 * len(settled)


def test_latency_grown_while_the_client_was_busy_lowers_nothing() -> None:
    # the same four-slot server, but every answer came while this process was busy on the CPU:
    # the delay may be the client's own, so the limit is not cut (it still rises while flat)
    busy = Server(slots=4, service=1.0, estimator=LimitEstimator(cap=8), saturated=True)
    busy.run(200)
    assert busy.limits[-1] == 8 and sorted(busy.limits) == busy.limits


def test_a_client_busy_through_a_call_marks_its_sample_saturated() -> None:
    times = iter([0.0, 1.0])
    cpu = iter([5.0, 5.95, 10.0, 10.1])
    gate = CallGate(LimitEstimator(cap=2), clock=lambda: next(times), cpu_clock=lambda: next(cpu))
    seen: list[Sample] = []
    gate.estimator.answered = lambda sample, budget: seen.append(sample)  # type: ignore[method-assign]
    ticket = gate._take()
    ticket.sent()
    ticket.answered(None, LONG)
    times = iter([2.0, 3.0])
    ticket = gate._take()
    ticket.sent()
    ticket.answered(None, LONG)
    assert [s.saturated for s in seen] == [True, False]


def test_a_one_slot_server_mostly_gets_one_call_and_never_waits_past_the_timeout() -> None:
    server = Server(
        slots=1, service=1.0, estimator=LimitEstimator(cap=8), budget=Budget(30.0, None)
    )
    server.run(200)
    assert max(server.limits) <= 2
    assert sum(limit == 1 for limit in server.limits[50:]) > 0.6 * 150
    assert max(server.latencies) <= 2.0 + 1e-9  # at most one call ever waits on the server


def test_a_slow_one_slot_server_is_never_sent_a_second_call() -> None:
    # two calls of 20 s do not fit well within 30 s: the second would wait 20 s on the server
    server = Server(
        slots=1, service=20.0, estimator=LimitEstimator(cap=8), budget=Budget(30.0, None)
    )
    server.run(50)
    assert set(server.limits) == {1}


def test_the_timeout_guard_scales_with_the_parallelism_seen() -> None:
    # 4 slots, 20 s a call, 100 s timeout: 8 in flight would make the last wait 40 s <= 50 s
    server = Server(
        slots=4, service=20.0, estimator=LimitEstimator(cap=16), budget=Budget(100.0, None)
    )
    server.run(100)
    assert max(server.limits) <= 8 and max(server.latencies) <= 40.0 + 1e-9
    assert sum(limit >= 4 for limit in server.limits[50:]) > 40


def test_a_streamed_call_may_queue_behind_another_when_its_first_token_fits_the_timeout() -> None:
    # 10 s answers, 30 s without progress allowed: a streamed call queued behind one other sees
    # its first token after 10 s (fits within half of 30 s); an answer that is not streamed
    # shows nothing for 20 s, which does not
    streamed = Server(slots=2, service=10.0, estimator=LimitEstimator(cap=8))
    streamed.budget = Budget(idle=30.0, total=600.0, streamed=True)
    streamed.run(40)
    assert max(streamed.limits) >= 2  # never a first token later than one answer's time:
    assert max(streamed.latencies) <= 20.0 + 1e-9
    whole = Server(slots=2, service=10.0, estimator=LimitEstimator(cap=8))
    whole.budget = Budget(idle=30.0, total=600.0, streamed=False)
    whole.run(40)
    assert set(whole.limits) == {1}
    capped = Server(slots=2, service=10.0, estimator=LimitEstimator(cap=8))
    capped.budget = Budget(idle=30.0, total=30.0, streamed=True)  # --max-call-time bounds it too
    capped.run(40)
    assert set(capped.limits) == {1}


def test_after_an_interruption_the_limit_never_rises_above_one() -> None:
    server = Server(slots=64, service=1.0, estimator=LimitEstimator(cap=8, limit=4))
    server.estimator.interrupted()
    assert server.estimator.limit == 1 and server.estimator.single
    server.run(100)  # answers as flat as can be
    assert set(server.limits) == {1}


def test_cloud_endpoints_start_at_the_cap_and_unknown_servers_at_one() -> None:
    for key in ("openai", "google_genai", "groq", "https://api.deepseek.com"):
        assert starts_at_cap(key) and gate_for(key, 8).limit == 8, key
    for key in ("http://127.0.0.1:8080/v1", "https://llm.example.org/v1", "ChatOpenAI"):
        assert not starts_at_cap(key) and gate_for(key, 8).limit == 1, key


def test_presets_with_a_base_url_point_to_known_cloud_apis() -> None:
    from planverify.agents import provider_key
    from planverify.llm.models import parse_spec, presets

    urls = [name for name, entry in presets().items() if "base_url" in entry]
    assert urls  # the shipped presets have one (DeepSeek)
    for name in urls:
        assert starts_at_cap(provider_key(parse_spec(name))), name


def test_latency_per_token_is_what_counts_when_tokens_are_known() -> None:
    estimator = LimitEstimator(cap=8)
    # answers of 10, 20 and 40 tokens at the same 0.1 s per token: flat, so the limit rises
    for i, tokens in enumerate([10, 20, 40, 10, 20, 40]):
        estimator.answered(Sample(0.1 * tokens, tokens, estimator.limit, estimator.epoch), LONG)
        assert i < 5 or estimator.limit > 1
    assert estimator.limit >= 4


def test_latency_that_grows_with_calls_in_flight_lowers_the_limit() -> None:
    estimator = LimitEstimator(cap=8, limit=8)
    for _ in range(8):
        estimator.answered(Sample(1.0, None, 8, 0), LONG)  # learn the baseline: 1 s
    assert estimator.limit == 8
    epoch = estimator.epoch
    for _ in range(8):
        estimator.answered(Sample(4.0, None, 8, epoch), LONG)  # 4x slower at 8 in flight
    assert estimator.limit == 2 and not estimator.slow_start


def test_a_timeout_or_overload_halves_the_limit_once_per_round() -> None:
    estimator = LimitEstimator(cap=8, limit=8)
    sent = estimator.epoch
    estimator.overloaded(sent, waited=120.0)
    assert estimator.limit == 4
    estimator.overloaded(sent, waited=120.0)  # sent before the decrease: no second halving
    assert estimator.limit == 4
    estimator.overloaded(estimator.epoch)  # a 429 on a call sent after it
    assert estimator.limit == 2 and estimator.parallel == 1
    estimator.overloaded(estimator.epoch)
    estimator.overloaded(estimator.epoch)
    assert estimator.limit == 1


def test_a_timeout_keeps_the_limit_from_rising_past_what_fits() -> None:
    estimator = LimitEstimator(cap=8)
    estimator.overloaded(estimator.epoch, waited=30.0)  # the slowest call took the whole 30 s
    for _ in range(10):  # as long as the timeout is among the recent highs
        estimator.answered(Sample(1.0, None, 1, estimator.epoch), Budget(30.0, None))
    assert estimator.limit == 1


def test_no_raise_while_the_limit_is_not_in_use() -> None:
    estimator = LimitEstimator(cap=8, limit=4)
    for _ in range(20):
        estimator.answered(Sample(1.0, None, 1, estimator.epoch), LONG)  # one call at a time
    assert estimator.limit == 4


def test_the_cap_bounds_the_start() -> None:
    assert LimitEstimator(cap=1, limit=3).limit == 1


def ticks() -> tuple[list[float], CallGate]:
    clock = [0.0]
    return clock, CallGate(LimitEstimator(cap=4), clock=lambda: clock[0])


async def test_calls_beyond_the_limit_wait_in_order_and_their_latency_starts_when_sent() -> None:
    clock, gate = ticks()
    first = await gate.enter()
    first.sent()
    order: list[int] = []

    async def call(i: int) -> None:
        ticket = await gate.enter()
        order.append(i)
        ticket.sent()
        ticket.answered(10, LONG)

    waiting = [asyncio.create_task(call(i)) for i in range(3)]
    await asyncio.sleep(0)
    assert order == [] and len(gate.waiters) == 3
    clock[0] = 5.0  # the waiters' 5 s in our queue are not part of any latency
    first.answered(10, LONG)
    await asyncio.gather(*waiting)
    assert order == [0, 1, 2] and gate.inflight == 0
    assert list(gate.estimator.highs) == [5.0, 0.0, 0.0, 0.0]  # theirs: sent, answered at once


async def test_a_cancelled_waiter_gives_its_turn_to_the_next() -> None:
    _, gate = ticks()
    first = await gate.enter()
    first.sent()
    doomed = asyncio.create_task(gate.enter())
    after = asyncio.create_task(gate.enter())
    await asyncio.sleep(0)
    doomed.cancel()
    first.release()
    ticket = await asyncio.wait_for(after, 1.0)
    assert doomed.cancelled() and gate.inflight == 1
    ticket.release()
    assert gate.inflight == 0 and not gate.waiters


async def test_a_waiter_cancelled_just_after_its_turn_came_hands_it_on() -> None:
    _, gate = ticks()
    first = await gate.enter()
    doomed = asyncio.create_task(gate.enter())
    after = asyncio.create_task(gate.enter())
    await asyncio.sleep(0)
    first.release()  # the slot goes to `doomed`, delivered on the next loop iteration
    doomed.cancel()
    ticket = await asyncio.wait_for(after, 1.0)
    assert gate.inflight == 1
    ticket.release()
    assert gate.inflight == 0


async def test_a_higher_limit_lets_waiters_through_at_once() -> None:
    clock, gate = ticks()
    first = await gate.enter()
    first.sent()
    second = asyncio.create_task(gate.enter())
    await asyncio.sleep(0)
    clock[0] = 1.0
    first.answered(None, LONG)  # freed; the other gets the slot
    (await second).sent()
    assert gate.limit == 1
    gate.estimator.limit = 2
    third, fourth = (asyncio.create_task(gate.enter()) for _ in range(2))
    await asyncio.sleep(0)
    assert third.done() and not fourth.done()
    fourth.cancel()
    with pytest.raises(asyncio.CancelledError):
        await fourth


def test_gates_are_shared_per_provider_and_cap_and_described() -> None:
    assert gate_for("http://a/v1", 8) is gate_for("http://a/v1", 8)
    assert gate_for("http://a/v1", 8) is not gate_for("http://a/v1", 4)

    @dataclass
    class Policy:
        provider: str
        concurrency: int

    @dataclass
    class Agent:
        policy: Policy

    one = Agent(Policy("http://describe/v1", 8))
    assert describe_gates(one, one) == "limit 1/8"
    assert describe_gates(object()) == ""
    both = describe_gates(one, Agent(Policy("openai", 3)))
    assert both == "limit 1/8 (http://describe/v1), limit 3/3 (openai)"  # a cloud: at the cap


def test_spellings_of_one_server_share_its_limits() -> None:
    from planverify.llm.calls import CallPolicy

    def layer(provider: str) -> tuple[Any, Any]:
        own = CallPolicy(provider=provider, concurrency=5, rps=2.0).layers()[0]
        return own.gate, own.limits

    spellings = [
        "http://Spelled.example/v1",
        "http://spelled.example/v1/",
        "HTTP://spelled.example:80/v1",
    ]
    assert len({id(part) for url in spellings for part in layer(url)}) == 2
    assert layer("http://spelled.example/v2")[0] is not layer(spellings[0])[0]
    assert layer("https://spelled.example/v1")[0] is not layer(spellings[0])[0]


def test_servers_under_one_allow_list_entry_share_the_operators_ceilings() -> None:
    from planverify.graphs.policy import (
        ALLOWED_ENV,
        MAX_CONCURRENCY_ENV,
        MAX_RPS_ENV,
        ServingPolicy,
    )
    from planverify.llm.calls import CallPolicy

    policy = ServingPolicy.from_env(
        {
            ALLOWED_ENV: "http://127.0.0.1:8123/, http://127.0.0.1:8123/v1",
            MAX_CONCURRENCY_ENV: "2",
            MAX_RPS_ENV: "3",
        }
    )

    def outer(provider: str) -> tuple[Any, Any]:
        layers = CallPolicy(provider=provider, ceilings=policy.ceilings).layers()
        return layers[-1].gate, layers[-1].limits

    urls = ["http://127.0.0.1:8123/v1", "http://127.0.0.1:8123/v1/", "http://127.0.0.1:8123/other"]
    assert len({id(part) for url in urls for part in outer(url)}) == 2
    assert outer("http://127.0.0.1:8124/v1")[0] is not outer(urls[0])[0]
