"""An adaptive limit on the model calls in flight to one provider or OpenAI-compatible server.

A local server (llama.cpp, a small vLLM or Ollama) may answer one request at a time; a cloud
provider answers hundreds. Sending `--concurrency` calls at once to the first makes all but one
of them queue on the server, where they run out of time. So calls to each provider (each base
URL) go through a `CallGate`: at most `limit` of them are sent at once, the rest wait in this
process, first come first served, and their timeout starts only when they are sent.

How the limit moves (`LimitEstimator`), a gradient in the style of TCP Vegas:

- Each answer is a sample: its latency divided by its output tokens when the provider reports
  them (answers differ in length; plain latency is noisy), else its plain latency. A constant
  `JITTER` is added to the latency first: on answers that take milliseconds, scheduling noise
  would otherwise look like queueing.
- The no-load baseline is the lowest such latency among the last `BASELINE_SAMPLES` answers: a
  minimum that forgets old samples, so a server that became slower for good is relearned.
- It starts at 1 for a server of unknown kind (a base URL, a chat-model object) and at the cap
  for a provider's own cloud endpoint (`starts_at_cap`): there 429s and rate-limit headers
  govern, and a slow start would only waste the first minute of a run.
- Samples are judged in rounds of about `limit` answers (between 2 and 8) to calls sent under
  the current limit; the round's mean over the baseline is the latency ratio (a median would
  miss the few calls that queue when the limit is just above what the server serves).
- Ratio at most `FLAT`, with the limit in use (most calls of the round were sent with `limit`
  calls in flight): latency stays flat as calls are added, so the limit rises, doubling per
  round at first (slow start, from 1) and by one per round after the first decrease.
- Ratio at least `GROWN`: calls queue on the server, so the limit drops to `limit / ratio`,
  the number the server actually served at once (Little's law), and waits `CALM_ROUNDS` flat
  rounds before it probes upward again.
- A call during whose flight this process was busy on the CPU almost all the time (`SATURATED`
  of the wall time, `Sample.saturated`) says nothing about the server: its answer may have
  waited for the event loop, not for the server. A round mostly of such samples lowers nothing
  (it may still raise), so a busy client does not read its own delay as a loaded server.
- A timeout, 429 or 503 halves the limit at once (once per round: calls sent before a decrease
  do not decrease it again).
- Never above the cap (`--concurrency`), and never to a value the server might not answer in
  time: having seen `parallel` calls served at once with flat latency, a limit `k` could make
  the last call wait `n = ceil(k / parallel)` service times. A streamed answer shows progress
  from its first token, so it waits `n - 1` service times without any: `k` is allowed only when
  `n - 1` of the highest recent latencies fit within `SAFETY` of `--timeout` (no progress) and
  `n` of them within `SAFETY` of `--max-call-time` (the whole call). An answer that is not
  streamed shows no progress until it is complete, so there `n` of them must fit within
  `SAFETY` of the smaller of the two (`Budget.fits`).
- A server that interrupted a streamed answer when another request arrived (llama-cpp-python
  does) serves one request at a time whatever it looks like: the limit stays at 1 for good.

Gates are shared by every caller in the process with the same provider key and cap, like the
rate limits of `planverify.llm.calls`, and hold no event-loop objects between calls: a waiter is
woken on its own loop, so several runs in threads can share a gate.
"""

from __future__ import annotations

import asyncio
import math
import statistics
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from planverify.llm.tables import SharedTable

FLAT = 1.2  # latency ratio up to which latency counts as flat
GROWN = 1.4  # latency ratio from which calls are taken to queue on the server
SAFETY = 0.5  # share of the timeout the slowest possible call may use
CALM_ROUNDS = 3  # flat rounds after a decrease before the limit rises again
BASELINE_SAMPLES = 64  # answers the no-load baseline is the minimum of
HIGH_SAMPLES = 16  # answers whose slowest latency the timeout guard uses
MAX_ROUND = 8  # most answers in one round
JITTER = 0.05  # seconds added to every latency before comparing (see `Sample.cost`)
SATURATED = 0.9  # share of a call's flight this process spent on the CPU: its latency is ours


# Providers' own cloud endpoints: the provider names of specs without a base URL, and the hosts
# of cloud APIs that shipped presets point to (`presets.toml`)
CLOUD_PROVIDERS = frozenset({"openai", "google_genai", "groq"})
CLOUD_HOSTS = frozenset(
    {"api.openai.com", "generativelanguage.googleapis.com", "api.groq.com", "api.deepseek.com"}
)


def starts_at_cap(key: str) -> bool:
    """Whether the limit of a provider key starts at the cap: a provider's own cloud endpoint
    (a provider name, or the HTTPS URL of a known cloud API), not a server of unknown kind."""
    if key in CLOUD_PROVIDERS:
        return True
    try:
        parts = urlsplit(key)
    except ValueError:
        return False
    return parts.scheme == "https" and parts.hostname in CLOUD_HOSTS


@dataclass(frozen=True)
class Budget:
    """How long a call may take, which bounds how many may queue ahead of it."""

    idle: float | None  # seconds without progress (`--timeout`), None = no limit
    total: float | None  # seconds for the whole call (`--max-call-time`), None = no limit
    streamed: bool = False  # progress shows from the first token, not only at the end

    def waits(self, high: float) -> int | None:
        """The most service times of `high` seconds a call may wait in all, its own included,
        within `SAFETY` of the budget (None: no bound)."""
        bounds: list[int] = []
        if self.total is not None:
            bounds.append(math.floor(SAFETY * self.total / high))
        if self.idle is not None:  # a streamed call shows progress once the ones ahead are done
            bounds.append(math.floor(SAFETY * self.idle / high) + int(self.streamed))
        return min(bounds, default=None)


@dataclass(frozen=True)
class Sample:
    """One answered call."""

    latency: float  # seconds from sending to the answer
    tokens: int | None  # output tokens of the answer, when the provider reported them
    inflight: int  # calls in flight when it was sent, itself included
    epoch: int  # the estimator's epoch when it was sent
    saturated: bool = False  # this process was busy on the CPU for nearly all of its flight

    @property
    def cost(self) -> float:
        """Latency per output token, or plain latency when tokens are unknown; `JITTER` is
        added first, so that milliseconds of noise on very fast answers do not look like
        queueing."""
        padded = self.latency + JITTER
        return padded / self.tokens if self.tokens else padded


@dataclass
class LimitEstimator:
    """The limit's arithmetic, without locks or clocks (see the module docstring)."""

    cap: int  # never above this (`--concurrency`)
    limit: int = 1  # calls allowed in flight now
    single: bool = False  # the server interrupts an answer for another request: never above 1
    slow_start: bool = True  # doubling per flat round until the first decrease
    parallel: int = 1  # most calls seen served at once with flat latency
    calm: int = 0  # flat rounds still needed before the next raise
    epoch: int = 0  # bumped at every change: samples of older epochs judge nothing
    round: list[Sample] = field(default_factory=list)  # samples of this epoch's current round
    costs: deque[float] = field(default_factory=lambda: deque(maxlen=BASELINE_SAMPLES))
    highs: deque[float] = field(default_factory=lambda: deque(maxlen=HIGH_SAMPLES))

    def __post_init__(self) -> None:
        self.limit = min(self.limit, self.cap)
        self.parallel = min(self.parallel, self.limit)

    @property
    def baseline(self) -> float | None:
        """The no-load latency (per token when known), or None before any answer."""
        return min(self.costs) if self.costs else None

    def answered(self, sample: Sample, budget: Budget) -> None:
        """Take an answer into account; the limit may change."""
        self.costs.append(sample.cost)
        self.highs.append(sample.latency)
        if sample.epoch != self.epoch:
            return
        self.round.append(sample)
        if len(self.round) >= min(max(self.limit, 2), MAX_ROUND):
            self._judge_round(budget)

    def overloaded(self, epoch: int, waited: float | None = None) -> None:
        """A timeout (after `waited` seconds), 429 or 503 for a call sent in `epoch`: halve."""
        if waited is not None:
            self.highs.append(waited)
        if epoch != self.epoch:
            return  # the limit already went down since that call was sent
        self._set(max(1, self.limit // 2))

    def interrupted(self) -> None:
        """The server interrupted an answer because another request arrived: one at a time,
        from now on."""
        self.single = True
        if self.limit > 1:
            self._set(1)

    def _judge_round(self, budget: Budget) -> None:
        baseline = self.baseline
        assert baseline is not None
        ratio = statistics.fmean(s.cost for s in self.round) / baseline if baseline else 1.0
        busy = sum(s.inflight >= self.limit for s in self.round) * 2 >= len(self.round)
        ours = sum(s.saturated for s in self.round) * 2 > len(self.round)
        self.round = []
        if ratio >= GROWN and not ours:
            self._set(max(1, round(self.limit / ratio)))
        elif ratio <= FLAT and busy:
            self.parallel = max(self.parallel, self.limit)
            if self.calm > 0:
                self.calm -= 1
                return
            wanted = self.limit * 2 if self.slow_start else self.limit + 1
            raised = min(wanted, 1 if self.single else self.cap, self._safe(budget))
            if raised > self.limit:
                self.limit, self.epoch = raised, self.epoch + 1

    def _safe(self, budget: Budget) -> int:
        """The highest limit whose slowest call would still fit the budget."""
        high = max(self.highs, default=0.0)
        waits = budget.waits(high) if high > 0 else None
        return self.cap if waits is None else self.parallel * waits

    def _set(self, lower: int) -> None:
        """Decrease to `lower`; probing upward resumes slowly, after calm rounds."""
        self.limit = min(lower, self.limit)
        self.parallel = min(self.parallel, self.limit)
        self.slow_start, self.calm = False, CALM_ROUNDS
        self.epoch += 1
        self.round = []


@dataclass
class Ticket:
    """One call's place in the gate: `sent()` when it goes out, then exactly one of
    `answered`, `overloaded` or `release`."""

    gate: CallGate  # the gate it belongs to
    inflight: int = 0  # calls in flight when it was let through, itself included
    epoch: int = 0  # the estimator's epoch then
    start: float | None = None  # when it was sent
    start_cpu: float = 0.0  # this process's CPU time then
    open: bool = True  # still holds its slot

    def sent(self) -> None:
        """The call goes out now: its latency counts from here."""
        self.start, self.start_cpu = self.gate.clock(), self.gate.cpu_clock()

    def answered(self, tokens: int | None, budget: Budget) -> None:
        """The call was answered (`tokens`: output tokens when reported)."""
        if self.start is not None:
            latency = self.gate.clock() - self.start
            busy = self.gate.cpu_clock() - self.start_cpu
            saturated = latency > 0 and busy >= SATURATED * latency
            sample = Sample(latency, tokens, self.inflight, self.epoch, saturated)
            self.gate.finish(self, lambda e: e.answered(sample, budget))
        else:
            self.release()

    def overloaded(self, timed_out: bool = False, keep: bool = False) -> Ticket | None:
        """The call timed out or the server said 429 or 503; with `keep`, the slot is kept for
        a retry when the limit still allows it (the retry's ticket, else None)."""
        waited = self.gate.clock() - self.start if timed_out and self.start is not None else None
        return self.gate.finish(self, lambda e: e.overloaded(self.epoch, waited), keep)

    def interrupted(self, keep: bool = False) -> Ticket | None:
        """The server interrupted the call's streamed answer for another request (`keep` as
        for `overloaded`)."""
        return self.gate.finish(self, lambda e: e.interrupted(), keep)

    def release(self) -> None:
        """The call ended in a way that says nothing about load (another error, cancelled)."""
        self.gate.finish(self, lambda e: None)


_Waiter = tuple[asyncio.AbstractEventLoop, "asyncio.Future[None]"]


@dataclass
class CallCount:
    """Model-call attempts that have ended, in this process (the progress line shows them
    until episodes finish: a model run may take minutes before its first one does)."""

    ended: int = 0  # attempts that held a slot and gave it up
    lock: threading.Lock = field(default_factory=threading.Lock)

    def add(self) -> None:
        """One more attempt ended."""
        with self.lock:
            self.ended += 1


CALLS = CallCount()


@dataclass
class CallGate:
    """At most `estimator.limit` calls in flight; the others wait here, first come first served."""

    estimator: LimitEstimator  # decides the limit
    clock: Callable[[], float] = time.monotonic  # replaced in tests
    cpu_clock: Callable[[], float] = time.process_time  # this process's CPU time (tests: fake)
    inflight: int = 0  # calls holding a slot
    waiters: deque[_Waiter] = field(default_factory=deque)  # calls waiting, oldest first
    lock: threading.Lock = field(default_factory=threading.Lock)  # runs in threads share gates

    @property
    def limit(self) -> int:
        """The current limit."""
        return self.estimator.limit

    @property
    def cap(self) -> int:
        """The most the limit can be."""
        return self.estimator.cap

    def describe(self) -> str:
        """`limit 3/8`."""
        return f"limit {self.limit}/{self.cap}"

    async def enter(self) -> Ticket:
        """Wait for a slot (not for the server: the call's timeout has not started)."""
        loop = asyncio.get_running_loop()
        with self.lock:
            if not self.waiters and self.inflight < self.limit:
                return self._take()
            future: asyncio.Future[None] = loop.create_future()
            self.waiters.append((loop, future))
        try:
            await future
        except asyncio.CancelledError:
            with self.lock:
                if (loop, future) in self.waiters:
                    self.waiters.remove((loop, future))
                    raise
            if future.done() and not future.cancelled():
                self._hand_on()  # a slot was handed over just as this call was cancelled
            raise
        return Ticket(self, self.inflight, self.estimator.epoch)

    def _take(self) -> Ticket:
        self.inflight += 1
        return Ticket(self, self.inflight, self.estimator.epoch)

    def finish(
        self, ticket: Ticket, update: Callable[[LimitEstimator], None], keep: bool = False
    ) -> Ticket | None:
        """Free the ticket's slot after `update` has told the estimator how the call went; with
        `keep`, hand the slot on to a new ticket instead (for a retry that goes at once) when
        the calls in flight are still within the limit."""
        with self.lock:
            if not ticket.open:
                return None
            ticket.open = False
            CALLS.add()
            update(self.estimator)
            if keep and self.inflight <= self.limit:
                return Ticket(self, self.inflight, self.estimator.epoch)
            self.inflight -= 1
        self._wake()
        return None

    def _hand_on(self) -> None:
        with self.lock:
            self.inflight -= 1
        self._wake()

    def _wake(self) -> None:
        """Hand free slots to the oldest waiters (each woken on its own event loop)."""
        while True:
            with self.lock:
                if not self.waiters or self.inflight >= self.limit:
                    return
                loop, future = self.waiters.popleft()
                self.inflight += 1
            try:
                loop.call_soon_threadsafe(self._deliver, future)
            except RuntimeError:  # its event loop is closed: the slot goes to the next one
                with self.lock:
                    self.inflight -= 1

    def _deliver(self, future: asyncio.Future[None]) -> None:
        if future.cancelled():
            self._hand_on()
        else:
            future.set_result(None)


def _idle(gate: CallGate) -> bool:
    with gate.lock:
        return gate.inflight == 0 and not gate.waiters


def _new_gate(key: tuple[str, int]) -> CallGate:
    provider, cap = key
    start = cap if starts_at_cap(provider) else 1
    return CallGate(LimitEstimator(cap=cap, limit=start, parallel=start))


_GATES: SharedTable[tuple[str, int], CallGate] = SharedTable(_new_gate, idle=_idle)


def gate_for(key: str, cap: int) -> CallGate:
    """The gate shared by every caller of the same provider (or server) with the same cap (a
    bounded table: gates nobody uses are dropped once there are many); its limit starts at the
    cap for a cloud endpoint (`starts_at_cap`), else at 1."""
    return _GATES.get((key, cap))


def describe_gates(*agents: Any) -> str:
    """The limits of the gates the agents' call policies use: `limit 3/8`, with the provider
    named when there are several ("" when no agent calls a model)."""
    names: dict[tuple[str, int], str] = {}  # (the limits' key, cap): the provider as given
    for agent in agents:
        policy = getattr(agent, "policy", None)
        provider, cap = getattr(policy, "provider", None), getattr(policy, "concurrency", None)
        key = getattr(policy, "key", provider)
        if isinstance(provider, str) and isinstance(key, str) and isinstance(cap, int):
            names.setdefault((key, cap), provider)
    gates = [(provider, gate_for(*key)) for key, provider in names.items()]
    if len(gates) == 1:
        return gates[0][1].describe()
    return ", ".join(f"{gate.describe()} ({provider})" for provider, gate in gates)


def call_progress() -> tuple[int, int]:
    """(model-call attempts ended, calls in flight now) over every gate of this process."""
    return CALLS.ended, sum(gate.inflight for gate in _GATES.values())
