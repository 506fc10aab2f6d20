"""How close the batch runner gets to the model-latency bound, and what the framework costs.

A fake chat model (a GenericFakeChatModel) waits a fixed latency per call and answers in the
Judge's text protocol: the first pass flags the plan's first Move, the next pass finds nothing,
so every episode makes exactly two model calls (checked). Episodes go through
`planverify.runs.batch.run_batch` with a `Verifier(judge=model, planner="rules")`, the CLI's path.
Prints:

- wall time, the ideal (total model latency / concurrency) and their ratio, without a
  checkpointer and with the SQLite checkpointer (`open_checkpointer`) in each LangGraph
  durability mode: "sync" (what `Verifier` uses), "async" and "exit"; and, for comparison,
  with episodes interleaved on the event loop instead of taking turns (`planverify.eventloop.turns`);
- the framework's own time per Judge pass (latency 0, so model time is excluded), likewise;
- checkpoint bytes per Judge pass for a 50-step plan;
- peak RSS of a run of --memory-episodes episodes with SQLite, in a fresh process;
- with --breakdown, where the time per episode goes without a checkpointer;
- with --real N, only this instead: N real TEACh episodes with their scenes (the shared games,
  train and valid_seen, cycled to reach N; each episode a separate object, built before the
  clock starts), no checkpointer, certify as the CLI decides for them (on: they have a scene),
  under the trim policy given by --trim; the Judge flags a plan's first Move, then finds nothing
  in the plan without it, so an episode takes two passes when that flag is certified. Wall time, the ideal (model calls made x
  latency / concurrency) and their ratio, --repeat times. --profile FILE writes a cProfile of
  the last run; --pin-limit holds the adaptive call limit at the cap.

With a fixed latency every episode waits in step with the others, so their CPU bursts coincide;
`--jitter 0.5` spreads the latency (same mean) as real providers do.

The durability modes other than "sync" are measured by overriding the `durability` argument
`Verifier` passes to the graph; nothing in planverify is changed.

Episodes run on the CLI's event loop (`planverify.eventloop.runner`: uvloop where installed); --asyncio
measures asyncio's own loop instead.

Usage: python benchmarks/bench_latency.py [--episodes 500] [--latency 0.1] [--concurrency 32]
       [--repeat 1] [--jitter 0] [--memory-episodes 3000] [--breakdown] [--postgres URL]
       [--asyncio]
       python benchmarks/bench_latency.py --real 2000 [--trim natural|minimal] [--repeat 1]
       [--grounding] [--games DIR] [--profile FILE] [--pin-limit]
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import hashlib
import inspect
import json
import random
import re
import resource
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from pydantic import Field

from planverify.agents.base import JudgeReply
from planverify.agents.judge import judge_messages
from planverify.agents.parsing import parse_judge_text
from planverify.api import Verifier, open_checkpointer
from planverify.eventloop import runner
from planverify.inputs.teach import expand_inputs, load_game
from planverify.llm.calls import CallLimits
from planverify.records.episode import Episode, Scene
from planverify.records.trim import DEFAULT_TRIM, TRIM_POLICIES
from planverify.runs.batch import run_batch

SHARED = Path(__file__).resolve().parents[1].parent / "shared"

PLAIN_ASYNCIO = False  # --asyncio: asyncio's own event loop instead of the CLI's (uvloop)


def arun(coro: Any) -> Any:
    """Run as the CLI does (`planverify.eventloop.runner`), or on plain asyncio with --asyncio."""
    return asyncio.run(coro) if PLAIN_ASYNCIO else runner.run(coro)


_STEP = re.compile(r"^(\d+)\. (.+)$", re.M)
MODES = ("sync", "async", "exit")


def judge_answer(messages: Sequence[BaseMessage], *, flag: bool = True) -> str:
    """The Judge's text-protocol answer: the first Move of the plan shown is flagged (none with
    `flag` off)."""
    plan = str(messages[-1].content).split("<plan>")[1].split("</plan>")[0]
    lines = []
    flagged = not flag
    for number, action in _STEP.findall(plan):
        note = "needed"
        if not flagged and ".Move(" in action:
            note, flagged = "goes nowhere #REMOVE: not needed", True
        lines += [f"ACTION: {number}. {action}", f"ANNOTATION: {note}"]
    return "\n".join(lines)


class SlowJudgeModel(GenericFakeChatModel):
    """Waits `latency` seconds (asyncio.sleep), then answers as a Judge; counts its calls.

    With `jitter` j each wait is drawn uniformly from latency * [1 - j, 1 + j] (same mean).
    With `once`, a plan is not flagged when it is the one left by removing the Move flagged
    before (so a real plan of many Moves also takes two passes: one flag, then none).
    """

    messages: Iterator[Any] = iter(())  # unused: answers are computed from the prompt
    latency: float = 0.1
    jitter: float = 0.0
    calls: int = 0
    once: bool = False
    expected: set[str] = Field(
        default_factory=set
    )  # with `once`: plans that follow a flag, answered without one

    def _wait(self) -> float:
        return self.latency * random.uniform(1 - self.jitter, 1 + self.jitter)

    def _result(self, messages: list[BaseMessage]) -> ChatResult:
        self.calls += 1
        message = AIMessage(
            self._answer(messages),
            usage_metadata={"input_tokens": 300, "output_tokens": 100, "total_tokens": 400},
        )
        return ChatResult(generations=[ChatGeneration(message=message)])

    def _answer(self, messages: Sequence[BaseMessage]) -> str:
        if not self.once:
            return judge_answer(messages)
        plan = _STEP.findall(str(messages[-1].content).split("<plan>")[1].split("</plan>")[0])
        actions = [action for _, action in plan]
        if "\n".join(actions) in self.expected:
            self.expected.discard("\n".join(actions))
            return judge_answer(messages, flag=False)
        moves = [n for n, action in enumerate(actions) if ".Move(" in action]
        if moves:
            self.expected.add("\n".join(actions[: moves[0]] + actions[moves[0] + 1 :]))
        return judge_answer(messages)

    def _generate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> ChatResult:
        time.sleep(self._wait())
        return self._result(messages)

    async def _agenerate(
        self, messages: list[BaseMessage], *args: Any, **kwargs: Any
    ) -> ChatResult:
        await asyncio.sleep(self._wait())
        return self._result(messages)


def episodes(count: int, steps: int = 8) -> Iterator[Episode]:
    """Streamed like the CLI's input: one episode at a time."""
    plan = ["Commander.Say('make coffee')", "Driver.PickUp('Mug')", "Driver.Move(1.0)"]
    plan += [f"Driver.TurnLeft({90 * (n % 3 + 1)}.0)" for n in range(steps - 4)]
    plan += ["Driver.PutAOnB('Mug', 'CoffeeMachine')"]
    for n in range(count):
        yield Episode(id=f"e{n}", goal="Make coffee.", actions=plan)


class Durability:
    """The verifier's graph, with the `durability` of every run replaced."""

    def __init__(self, graph: Any, mode: str) -> None:
        self.graph = graph
        self.mode = mode

    def __getattr__(self, name: str) -> Any:
        return getattr(self.graph, name)

    async def ainvoke(self, *args: Any, **kwargs: Any) -> Any:
        if "durability" in kwargs:  # only set when there is a checkpointer
            kwargs["durability"] = self.mode
        return await self.graph.ainvoke(*args, **kwargs)


async def run(
    count: int,
    latency: float,
    concurrency: int,
    checkpoint: Path | str | None,
    *,
    steps: int = 8,
    mode: str = "sync",
    judge: Any = None,
    jitter: float = 0.0,
    turns: bool = True,
) -> tuple[float, int]:
    """Verify `count` episodes; the wall time and the number of Judge passes."""
    model = SlowJudgeModel(latency=latency, jitter=jitter)
    async with open_checkpointer(checkpoint) as saver:
        verifier = Verifier(
            judge=judge or model,
            planner="rules",
            checkpointer=saver,
            limits=CallLimits(concurrency=concurrency),  # the cap of the adaptive call limit
        )
        verifier.takes_turns &= turns  # off: asyncio interleaves the episodes step by step
        if mode != "sync":
            verifier.graph = Durability(verifier.graph, mode)  # type: ignore[assignment]
        started = time.perf_counter()
        results = (
            await run_batch(
                verifier,
                episodes(count, steps),
                total=count,
                limit=None,
                output=None,
                concurrency=concurrency,
            )
        ).results
        elapsed = time.perf_counter() - started
    assert all(r.status == "ok" for r in results), [r.error for r in results if r.error][:1]
    assert all(r.iterations == 2 for r in results)
    assert judge is not None or model.calls == 2 * count, model.calls
    return elapsed, sum(r.iterations for r in results)


def fresh(directory: Path, name: str) -> Path:
    path = directory / name
    for suffix in ("", "-wal", "-shm"):
        Path(f"{path}{suffix}").unlink(missing_ok=True)
    return path


def timed(repeat: int, *args: Any, **kwargs: Any) -> tuple[float, float, int]:
    """Best and median wall time over `repeat` runs (a fresh database each), and passes."""
    walls = []
    passes = 0
    for n in range(repeat):
        where = args[3]
        if isinstance(where, str):
            emptied(where)
        elif where is not None:
            where = fresh(where.parent, f"{where.stem}-{n}.sqlite")
        wall, passes = arun(run(*args[:3], where, **kwargs))
        walls.append(wall)
    return min(walls), statistics.median(walls), passes


def emptied(url: str) -> str:
    """A PostgreSQL checkpoint database with no threads left from an earlier run."""
    import psycopg

    with psycopg.connect(url, autocommit=True) as db:
        tables = db.execute(
            "SELECT tablename FROM pg_tables WHERE tablename IN "
            "('checkpoints', 'checkpoint_writes', 'checkpoint_blobs')"
        ).fetchall()
        if tables:
            db.execute(f"TRUNCATE {', '.join(t[0] for t in tables)}")
    return url


def db_bytes(path: Path) -> int:
    with sqlite3.connect(path) as conn:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        rows = conn.execute(
            "SELECT SUM(LENGTH(checkpoint) + LENGTH(metadata)) FROM checkpoints"
        ).fetchone()
        writes = conn.execute("SELECT SUM(LENGTH(value)) FROM writes").fetchone()
    return int(rows[0] or 0) + int(writes[0] or 0)


def rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def memory_run(count: int, concurrency: int) -> None:
    """In a fresh process: peak RSS after imports and after a SQLite run of `count` episodes."""
    before = rss_mb()
    with tempfile.TemporaryDirectory(prefix="planverify-memory-") as tmp:
        arun(run(count, 0.0, concurrency, Path(tmp) / "m.sqlite"))
    print(f"{before:.0f} {rss_mb():.0f}")


class CannedJudge:
    """The bench's Judge answer without a model call: `parse` decides whether the text is parsed
    each time or once per plan (a copy of the parsed critique is returned after that)."""

    def __init__(self, parse: bool) -> None:
        self.name = f"canned-{parse}"
        self.parse = parse
        self.seen: dict[tuple[str, ...], Any] = {}

    async def ajudge(self, goal: str, plan: Sequence[str], scene: Scene | None) -> JudgeReply:
        key = tuple(plan)
        if self.parse or key not in self.seen:
            self.seen[key] = parse_judge_text(judge_answer(judge_messages(goal, plan)), plan)
        return JudgeReply(self.seen[key].model_copy(deep=True))


def game_records(games: Path) -> list[dict[str, Any]]:
    """The episodes of the games with a scene, as records."""
    loaded = [load_game(path) for path in expand_inputs([games])]
    records = [e.model_dump(mode="json", exclude_none=True) for e in loaded if e.scene]
    if not records:
        sys.exit(f"no TEACh games with a scene under {games}; pass --games DIR")
    return records


def real_episodes(records: list[dict[str, Any]], count: int) -> list[Episode]:
    """`count` episodes of the records, cycled, each its own object (ids unique)."""
    out = []
    for n in range(count):
        record = dict(records[n % len(records)])
        cycle = n // len(records)
        if cycle:
            record["id"] = f"{record['id']}#{cycle}"
        out.append(Episode.model_validate(record))
    return out


def trimmed_verifier(trim: str, **kwargs: Any) -> Verifier:
    """A `Verifier` under this trim policy: by its `trim` argument where it takes one, else set on
    its context (and the settings recomputed from it) before any episode runs."""
    if "trim" in inspect.signature(Verifier).parameters:
        return Verifier(**{**kwargs, "trim": trim})
    verifier = Verifier(**kwargs)
    if trim != DEFAULT_TRIM:
        verifier.context = verifier.context.model_copy(update={"trim": trim})
        verifier.settings = verifier.context.settings()
        verifier.key = verifier.settings.key
    return verifier


async def run_real(
    items: list[Episode], latency: float, concurrency: int, trim: str, grounding: bool
) -> tuple[float, float, int, int, str]:
    """Verify the real episodes: wall and CPU time, model calls, Judge passes, and a digest of
    the verdicts (as `verdict_digest.py` reduces a result) to show a speed-up moved none."""
    model = SlowJudgeModel(latency=latency, once=True)
    verifier = trimmed_verifier(
        trim,
        judge=model,
        planner="rules",
        grounding=grounding,
        limits=CallLimits(concurrency=concurrency),
    )
    started, cpu = time.perf_counter(), time.process_time()
    report = await run_batch(
        verifier, items, total=len(items), limit=None, output=None, concurrency=concurrency
    )
    elapsed, cpu = time.perf_counter() - started, time.process_time() - cpu
    results = report.results
    assert all(r.status == "ok" for r in results), [r.error for r in results if r.error][:1]
    digest = hashlib.sha256()
    for result in sorted(results, key=lambda r: r.id):
        data = result.model_dump(mode="json", exclude={"settings", "usage", "cost_usd"})
        digest.update(json.dumps(data, sort_keys=True, ensure_ascii=False).encode() + b"\n")
    return elapsed, cpu, model.calls, sum(r.iterations for r in results), digest.hexdigest()


def pin_call_limit() -> None:
    """Hold the adaptive limit of model calls in flight at its cap, for this process: it starts
    there and never decreases (as `Durability` does for the graph, nothing in planverify is
    changed; the module's settings are replaced)."""
    from planverify.llm import concurrency

    setattr(concurrency, "starts_at_cap", lambda key: True)  # noqa: B010
    setattr(concurrency, "GROWN", float("inf"))  # noqa: B010


def real(args: argparse.Namespace) -> None:
    """The --real workload, --repeat times; a cProfile of the last run with --profile."""
    records = game_records(args.games)
    items = real_episodes(records, args.real)
    loop = "asyncio" if args.asyncio or runner.loop_factory() is None else "uvloop"
    print(
        f"{len(items)} real episodes with scenes, {args.latency * 1000:.0f} ms per call, "
        f"concurrency {args.concurrency}, trim {args.trim}, grounding {args.grounding}, "
        f"{loop} event loop"
    )
    arun(
        run_real(
            real_episodes(records, 64), args.latency, args.concurrency, args.trim, args.grounding
        )
    )
    for n in range(args.repeat):
        profile = cProfile.Profile() if args.profile and n == args.repeat - 1 else None
        if profile:
            profile.enable()
        wall, cpu, calls, passes, digest = arun(
            run_real(items, args.latency, args.concurrency, args.trim, args.grounding)
        )
        if profile:
            profile.disable()
            profile.dump_stats(args.profile)
        ideal = calls * args.latency / args.concurrency
        ratio = f"ratio {wall / ideal:.3f}, " if ideal else ""
        print(
            f"  wall {wall:.2f} s, ideal {ideal:.2f} s ({calls} calls, {passes} Judge passes), "
            f"{ratio}CPU {1000 * cpu / len(items):.2f} ms per episode; verdicts {digest[:16]}"
        )
        items = real_episodes(records, args.real)  # nothing carried over between runs


def breakdown(count: int, concurrency: int) -> None:
    """Time per episode without a checkpointer, latency 0, layer by layer."""

    def per_episode(judge: Any = None) -> float:
        wall, _ = arun(run(count, 0.0, concurrency, None, judge=judge))
        return 1000 * wall / count

    graph = per_episode(CannedJudge(parse=False))
    parsed = per_episode(CannedJudge(parse=True))
    full = per_episode()
    print(f"  graph with a Judge that answers at once (LangGraph + our nodes): {graph:.2f} ms")
    print(f"  + parsing the Judge's text answer:                               {parsed:.2f} ms")
    print(f"  + ModelJudge: prompt, call policy, LangChain chat model call:    {full:.2f} ms")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=500)
    parser.add_argument("--latency", type=float, default=0.1)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--repeat", type=int, default=1, help="runs per figure; best is shown")
    parser.add_argument(
        "--jitter",
        type=float,
        default=0.0,
        help="spread model latency uniformly by this fraction (0.5: 50-150 ms for 100 ms)",
    )
    parser.add_argument("--memory-episodes", type=int, default=3000)
    parser.add_argument("--breakdown", action="store_true")
    parser.add_argument(
        "--postgres", metavar="URL", help="also measure a PostgreSQL checkpointer (emptied first)"
    )
    parser.add_argument(
        "--asyncio", action="store_true", help="asyncio's own event loop, not the CLI's uvloop"
    )
    parser.add_argument(
        "--real", type=int, metavar="N", help="only the workload of N real TEACh episodes"
    )
    parser.add_argument("--trim", choices=TRIM_POLICIES, default=DEFAULT_TRIM)
    parser.add_argument("--grounding", action="store_true", help="--real: a grounded Judge")
    parser.add_argument("--games", type=Path, default=SHARED / "teach" / "games")
    parser.add_argument("--profile", metavar="FILE", help="--real: cProfile of the last run")
    parser.add_argument(
        "--pin-limit",
        action="store_true",
        help="--real: the adaptive call limit held at --concurrency (what the ratio would be "
        "if the limit did not read event-loop delay as a slower server)",
    )
    parser.add_argument("--memory-only", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    global PLAIN_ASYNCIO
    PLAIN_ASYNCIO = args.asyncio
    if args.real:
        if args.pin_limit:
            pin_call_limit()
        real(args)
        return
    if args.memory_only:
        memory_run(args.memory_only, args.concurrency)
        return
    calls = 2 * args.episodes
    ideal = calls * args.latency / args.concurrency
    spread = f" +-{args.jitter:.0%}" if args.jitter else ""
    loop = "asyncio" if args.asyncio or runner.loop_factory() is None else "uvloop"
    print(
        f"{args.episodes} episodes, {calls} model calls of {args.latency * 1000:.0f} ms{spread}, "
        f"concurrency {args.concurrency}, {loop} event loop; "
        f"ideal (total latency / concurrency) {ideal:.2f} s"
    )

    def line(label: str, best: float, median: float) -> str:
        spread = f" (median {median:.2f} s)" if args.repeat > 1 else ""
        return f"  {label:<39} {best:6.2f} s{spread}, ratio {best / ideal:.2f}"

    with tempfile.TemporaryDirectory(prefix="planverify-latency-") as tmp:
        work = Path(tmp)
        # warm up: first-run costs (imports, compiled patterns, schema caches) stay out of figures
        arun(run(100, 0.0, args.concurrency, None))
        arun(run(100, 0.0, args.concurrency, work / "warm.sqlite"))
        setups: list[tuple[str, Path | str | None, str]] = [("no checkpointer", None, "sync")]
        setups += [(f"SQLite, durability={m}", work / f"wall-{m}.sqlite", m) for m in MODES]
        if args.postgres:
            setups.append(("PostgreSQL, durability=sync", args.postgres, "sync"))
        print(f"wall time at {args.latency * 1000:.0f} ms per call (target ratio: 1.2, SQLite 1.3)")
        interleaved = [(f"{label}, interleaved", where, mode) for label, where, mode in setups[:2]]
        for label, where, mode in setups + interleaved:
            best, median, _ = timed(
                args.repeat,
                args.episodes,
                args.latency,
                args.concurrency,
                where,
                mode=mode,
                jitter=args.jitter,
                turns=not label.endswith("interleaved"),
            )
            print(line(label, best, median))
        print("framework time per Judge pass (latency 0: model time excluded)")
        for label, where, mode in setups:
            best, _, passes = timed(
                args.repeat, args.episodes, 0.0, args.concurrency, where, mode=mode
            )
            print(f"  {label:<39} {1000 * best / passes:6.2f} ms")
        where = fresh(work, "bytes.sqlite")
        _, passes = arun(run(20, 0.0, 4, where, steps=50))
        print(
            f"checkpoint bytes per Judge pass, 50-step plan: {db_bytes(where) / passes / 1000:.1f} kB"
        )
    if args.breakdown:
        print(f"time per episode, no checkpointer, latency 0, concurrency {args.concurrency}:")
        breakdown(args.episodes, args.concurrency)
    out = subprocess.run(
        [
            sys.executable,
            __file__,
            *("--memory-only", str(args.memory_episodes)),
            *("--concurrency", str(args.concurrency)),
            *(["--asyncio"] if args.asyncio else []),
        ],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.split()
    print(
        f"peak RSS, {args.memory_episodes} episodes with SQLite in a fresh process: "
        f"{out[1]} MB ({out[0]} MB after imports)"
    )


if __name__ == "__main__":
    main()
