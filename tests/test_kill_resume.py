"""Killing a run at random moments and running the same command again: every episode ends up in
the output exactly once, no line is torn, and finished episodes are not verified again."""

from __future__ import annotations

import os
import random
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import orjson
import pytest
from langgraph.checkpoint.sqlite import SqliteSaver

from planverify.graphs.graph import build_verifier
from planverify.records.episode import read_episodes
from planverify.records.result import VerificationResult
from planverify.stores.serde import state_serializer

from .conftest import ROOT

EPISODES = 200


def make_input(path: Path) -> list[str]:
    sample, _ = read_episodes([ROOT / "examples" / "episodes.jsonl"])
    ids = []
    with path.open("wb") as fh:
        for n in range(EPISODES):
            episode = sample[n % len(sample)].model_copy(update={"id": f"ep{n:03d}"})
            ids.append(episode.id)
            fh.write(orjson.dumps(episode.model_dump(mode="json", exclude_none=True)) + b"\n")
    return ids


def command(source: Path, out: Path, db: Path) -> list[str]:
    script = Path(sys.executable).parent / "planverify"
    return [
        str(script),
        "verify",
        str(source),
        "--checkpoint",
        str(db),
        "-o",
        str(out),
        "--concurrency",
        "16",
    ]


def finished_threads(db: Path) -> dict[str, int]:
    """Threads whose latest checkpoint ends the graph, with their checkpoint counts."""
    if not db.exists():
        return {}
    with sqlite3.connect(db) as conn:
        counts = dict(
            conn.execute("SELECT thread_id, COUNT(*) FROM checkpoints GROUP BY thread_id")
        )
    finished = {}
    with SqliteSaver.from_conn_string(str(db)) as saver:
        saver.serde = state_serializer()
        graph = build_verifier(checkpointer=saver)
        for thread, count in counts.items():
            state = graph.get_state({"configurable": {"thread_id": thread}})
            if not state.next and state.values.get("stop_reason"):
                finished[thread] = count
    return finished


def test_kill_and_rerun_keeps_every_episode_exactly_once(tmp_path: Path) -> None:
    source, out, db = tmp_path / "in.jsonl", tmp_path / "out.jsonl", tmp_path / "cp.sqlite"
    ids = make_input(source)
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    rng = random.Random(7)
    partial = out.with_name(out.name + ".partial")
    for _ in range(3):
        process = subprocess.Popen(
            command(source, out, db), env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        started = time.monotonic()  # wait for work to be under way, however slow the machine
        while not (partial.exists() and partial.stat().st_size) and time.monotonic() - started < 60:
            if process.poll() is not None:
                break
            time.sleep(0.05)
        time.sleep(rng.uniform(0.0, 1.5))  # then kill at a random moment
        process.send_signal(signal.SIGKILL)
        process.wait()
    before = finished_threads(db)
    assert before or partial.exists(), "the kills came before any work was done"

    done = subprocess.run(
        command(source, out, db), env=env, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    lines = out.read_bytes().splitlines()
    results = [VerificationResult.model_validate_json(line) for line in lines]
    assert [r.id for r in results] == ids, "each episode once, in input order"
    assert all(r.status == "ok" for r in results)
    assert not partial.exists()

    after = finished_threads(db)
    redone = [t for t, n in before.items() if after.get(t) != n]
    assert redone == [], f"finished episodes were verified again: {redone[:3]}"

    reference = subprocess.run(
        [
            *command(source, tmp_path / "ref.jsonl", db)[:3],
            "--no-checkpoint",
            "-o",
            str(tmp_path / "ref.jsonl"),
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert reference.returncode == 0, reference.stderr
    assert (tmp_path / "ref.jsonl").read_bytes() == out.read_bytes()


def _children(pid: int) -> set[int]:
    """The live child processes of `pid` (Linux `/proc`)."""
    found: set[int] = set()
    for task in Path(f"/proc/{pid}/task").glob("*/children"):
        found.update(int(n) for n in task.read_text().split())
    return {child for child in found if _alive(child)}


def _alive(pid: int) -> bool:
    """Running, and not a zombie waiting for a parent that does not reap it."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state not in ("Z", "X")


@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="reads processes from /proc")
def test_killing_verify_alone_ends_its_game_loader_and_the_rerun_works(
    shared_dir: Path, tmp_path: Path
) -> None:
    """The loader that parses TEACh games in a second process dies with its parent (killed
    alone, not with its process group), so it holds neither the output lock nor the store."""
    games = sorted((shared_dir / "teach" / "games" / "valid_seen").glob("*.game.json"))
    if not games:
        pytest.skip("no TEACh games under the shared data")
    folder = tmp_path / "games"
    folder.mkdir()
    for game in games:  # links, not copies
        (folder / game.name).symlink_to(game)
    out, db = tmp_path / "out.jsonl", tmp_path / "cp.sqlite"
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    process = subprocess.Popen(
        command(folder, out, db), env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    loaders: set[int] = set()
    started = time.monotonic()
    while not loaders and process.poll() is None and time.monotonic() - started < 60:
        loaders = _children(process.pid)
        time.sleep(0.01)
    if not loaders:
        process.kill()
        process.wait()
        pytest.skip("the run ended before its loader was seen (one core: no loader process)")
    os.kill(process.pid, signal.SIGKILL)  # the parent alone
    process.wait()

    deadline = time.monotonic() + 30  # a generous bound, not a timing figure
    while {pid for pid in loaders if _alive(pid)} and time.monotonic() < deadline:
        time.sleep(0.1)
    left = {pid for pid in loaders if _alive(pid)}
    if left:
        for pid in left:
            os.kill(pid, signal.SIGKILL)
    assert not left, "the loader outlived the killed run"

    rerun = [*command(folder, out, db), "--limit", "12"]  # the rest would only take time
    again = subprocess.run(rerun, env=env, capture_output=True, text=True, timeout=300)
    assert "is writing" not in again.stderr, again.stderr
    assert again.returncode in (0, 1), again.stderr
    assert len(out.read_bytes().splitlines()) == 12
