"""Files and input (issue 23): nothing lost, nothing overwritten by surprise.

An output is never an input; a failed run never replaces good results; two runs never write
one output at once; `review` only ever deletes what it wrote; a full disk is one line and the
rerun continues; one bad line costs that line only; input of any encoding, and of the wrong
kind, is named as what it is; nothing an input holds reaches the terminal as control
characters; `show` takes any path; long names are cut with a hash.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest
from typer.testing import CliRunner, Result

from planverify.cli import app
from planverify.eventloop.runner import run
from planverify.inputs.sources import load_episodes
from planverify.records.episode import Episode, EpisodeError, iter_jsonl
from planverify.records.result import RunSettings, VerificationResult
from planverify.runs import batch as batch_module
from planverify.runs.batch import run_batch

from .conftest import ROOT
from .test_cli import tiny_game

runner = CliRunner()
EXAMPLES = ROOT / "examples" / "episodes.jsonl"
ANNOTATED = ROOT / "examples" / "annotated.jsonl"
PLAN = ["Driver.PickUp('Mug')", "Driver.Move(0.5)", "Driver.Move(-0.5)"]
PLANVERIFY = Path(sys.executable).parent / "planverify"


def jsonl(path: Path, *records: object) -> Path:
    path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in records))
    return path


def episodes(n: int, prefix: str = "e") -> list[dict[str, Any]]:
    return [{"id": f"{prefix}{i:03d}", "goal": "Carry the mug.", "actions": PLAN} for i in range(n)]


def ids(path: Path) -> list[str]:
    return [orjson.loads(line)["id"] for line in path.read_bytes().splitlines()]


def verify(*args: str | Path) -> Result:
    return runner.invoke(app, ["verify", *map(str, args)])


def said(result: Result) -> str:
    return " ".join(result.stderr.split())


def no_traceback(result: Result) -> None:
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    assert "Traceback" not in result.output


# --- 1. an output is never an input --------------------------------------------------------


def test_an_output_that_is_an_input_is_refused_and_the_input_kept(tmp_path: Path) -> None:
    source = jsonl(tmp_path / "in.jsonl", *episodes(3))
    before = source.read_bytes()
    link = tmp_path / "link.jsonl"
    link.symlink_to(source)
    hard = tmp_path / "hard.jsonl"
    os.link(source, hard)
    for output in (source, link, hard):
        refused = verify(source, "--no-checkpoint", "-o", output)
        assert refused.exit_code == 2, refused.output
        assert f"the output {output} is also an input" in said(refused)
    results = tmp_path / "results.jsonl"
    assert verify(source, "--no-checkpoint", "-o", results).exit_code == 0
    annotated = tmp_path / "annotated.jsonl"
    annotated.write_bytes(ANNOTATED.read_bytes())
    commands = [
        ["export", str(results), "--episodes", str(source), "-o", str(source)],
        ["export", str(results), "--episodes", str(source), "-o", str(results)],
        ["corrupt", str(source), "-o", str(link)],
        ["score", str(annotated), str(results), "--json", str(annotated)],
    ]
    for command in commands:
        refused = runner.invoke(app, command)
        assert refused.exit_code == 2, (command, refused.output)
        assert "is also an input" in said(refused), command
    games = tmp_path / "games" / "train"
    games.mkdir(parents=True)
    game = games / "g.game.json"
    game.write_bytes(orjson.dumps(tiny_game("g")))
    refused = runner.invoke(app, ["convert", str(games.parent), "-o", str(game)])
    assert refused.exit_code == 2 and "is also an input" in said(refused)
    assert source.read_bytes() == before and orjson.loads(game.read_bytes())["tasks"]
    assert annotated.read_bytes() == ANNOTATED.read_bytes() and len(ids(results)) == 3


# --- 2. a failed run never replaces good results ---------------------------------------------


def test_a_run_that_skipped_lines_leaves_the_output_unless_accept_skipped(tmp_path: Path) -> None:
    source = jsonl(tmp_path / "in.jsonl", *episodes(20))
    out = tmp_path / "out.jsonl"
    assert verify(source, "--no-checkpoint", "-o", out).exit_code == 0
    before = out.read_bytes()
    whole = source.read_bytes()
    source.write_bytes(whole[: whole.index(b"\n") + 30])  # one good line, one cut short
    kept = verify(source, "--no-checkpoint", "-o", out)
    assert kept.exit_code == 1
    assert f"{out} is left as it was because 1 input(s) were skipped" in said(kept)
    assert "--accept-skipped" in said(kept)
    assert out.read_bytes() == before
    journal = out.with_name("out.jsonl.partial")
    assert [orjson.loads(line)["result"]["id"] for line in journal.read_bytes().splitlines()] == [
        "e000"
    ]
    accepted = verify(source, "--no-checkpoint", "-o", out, "--accept-skipped")
    assert accepted.exit_code == 1  # a line was still skipped, and said so
    assert ids(out) == ["e000"] and not journal.exists()


def test_a_run_stopped_by_an_unreachable_server_leaves_the_output(tmp_path: Path) -> None:
    pytest.importorskip("langchain_openai")
    import socket

    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    source = jsonl(tmp_path / "in.jsonl", *episodes(20))
    out = tmp_path / "out.jsonl"
    assert verify(source, "--no-checkpoint", "-o", out).exit_code == 0
    before = out.read_bytes()
    args = ["--judge", "openai:some-model", "--base-url", f"http://127.0.0.1:{port}/v1"]
    args += ["--max-retries", "0", "--concurrency", "1", "--no-checkpoint", "-o", str(out)]
    for extra in ([], ["--accept-skipped"]):  # whatever the settings
        stopped = verify(source, *args, *extra)
        assert stopped.exit_code == 1
        assert "is left as it was because the run stopped early" in said(stopped)
        assert out.read_bytes() == before
    journal = [
        orjson.loads(line) for line in out.with_name("out.jsonl.partial").read_bytes().splitlines()
    ]
    assert journal and all(line["result"]["status"] == "error" for line in journal)


class FailsSome:
    """A verifier whose results for `failing` ids are errors (same settings as the others)."""

    def __init__(self, failing: set[str]) -> None:
        self.settings = RunSettings(judge="rules", planner="rules")
        self.key = self.settings.key
        self.failing = failing

    async def averify(self, episode: Episode) -> VerificationResult:
        if episode.id in self.failing:
            return VerificationResult.failed(episode, "TimeoutError: slow", self.settings)
        result = VerificationResult(
            id=episode.id, input_digest=episode.input_digest, original=list(episode.actions)
        )
        result.settings = self.settings
        return result


def test_an_error_never_replaces_an_ok_record_of_the_same_episode(tmp_path: Path) -> None:
    batch = [Episode.model_validate(e) for e in episodes(4)]
    out = tmp_path / "out.jsonl"

    def once(verifier: FailsSome) -> Any:
        return run(run_batch(verifier, batch, total=4, limit=None, output=out, concurrency=2))

    assert [r.status for r in once(FailsSome(set())).results] == ["ok"] * 4
    report = once(FailsSome({"e001", "e002"}))
    assert [orjson.loads(line)["status"] for line in out.read_bytes().splitlines()] == ["ok"] * 4
    assert report.kept_over_errors == ["e001", "e002"]
    other = FailsSome({"e003"})
    other.settings = RunSettings(judge="rules", planner="rules", max_iterations=2)
    other.key = other.settings.key
    once(other)  # other settings: the error is this run's answer
    assert [orjson.loads(line)["status"] for line in out.read_bytes().splitlines()][3] == "error"


def test_an_export_or_review_that_makes_nothing_leaves_the_old_output(tmp_path: Path) -> None:
    results = tmp_path / "results.jsonl"
    assert verify(EXAMPLES, "--no-checkpoint", "-o", results).exit_code == 0
    out = jsonl(tmp_path / "pairs.jsonl", {"earlier": "export"})
    before = out.read_bytes()
    args = ["export", str(results), "--episodes", str(EXAMPLES), "-f", "preference"]
    none = runner.invoke(app, [*args, "--min-removed", "1000", "-o", str(out)])
    assert none.exit_code == 1 and "no preference row to write" in said(none)
    assert out.read_bytes() == before
    site = tmp_path / "site"
    assert runner.invoke(app, ["review", str(results), "--html", str(site)]).exit_code == 0
    made = {p: p.read_bytes() for p in site.rglob("*") if p.is_file()}
    empty = tmp_path / "empty.jsonl"
    empty.write_bytes(b"")
    nothing = runner.invoke(app, ["review", str(empty), "--html", str(site)])
    assert nothing.exit_code == 1 and "left as it was" in said(nothing)
    assert {p: p.read_bytes() for p in site.rglob("*") if p.is_file()} == made


# --- 3. two runs on one output -----------------------------------------------------------------


def test_two_writers_of_one_file_never_share_a_temporary_file(tmp_path: Path) -> None:
    out = tmp_path / "out.jsonl"

    def lines() -> Iterator[bytes]:
        yield b"first\n"
        batch_module.write_atomically(out, iter([b"other\n"]))  # a second writer, meanwhile
        yield b"second\n"

    batch_module.write_atomically(out, lines())
    assert out.read_bytes() == b"first\nsecond\n"  # whole: the last one wins, never a mix

    def broken() -> Iterator[bytes]:
        yield b"half"
        raise RuntimeError("the writer died")

    with pytest.raises(RuntimeError):
        batch_module.write_atomically(out, broken())
    assert out.read_bytes() == b"first\nsecond\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.jsonl"]  # no temporary file left


def test_a_second_run_on_one_output_exits_2_until_the_first_is_killed(tmp_path: Path) -> None:
    source = jsonl(tmp_path / "in.jsonl", *episodes(3))
    out = tmp_path / "out.jsonl"
    holder = subprocess.Popen(  # holds OUTPUT.lock as a running verify does
        [
            sys.executable,
            "-c",
            "import fcntl, os, sys, time\n"
            "fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT)\n"
            "fcntl.flock(fd, fcntl.LOCK_EX)\n"
            "os.write(fd, str(os.getpid()).encode())\n"
            "print('locked', flush=True)\n"
            "time.sleep(600)\n",
            str(tmp_path / "out.jsonl.lock"),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "locked\n"
        busy = verify(source, "--no-checkpoint", "-o", out)
        assert busy.exit_code == 2
        assert f"another run (pid {holder.pid}) is writing {out}" in said(busy)
        assert not out.exists()
    finally:
        holder.send_signal(signal.SIGKILL)  # as `kill -9`: the kernel releases the lock
        holder.wait()
    orphan = tmp_path / f".out.jsonl.{holder.pid}.0badc0de.tmp"  # what the killed run left
    orphan.write_bytes(b"half a file")
    done = verify(source, "--no-checkpoint", "-o", out)
    assert done.exit_code == 0, done.output
    assert len(ids(out)) == 3 and sorted(p.name for p in tmp_path.iterdir()) == [
        "in.jsonl",
        "out.jsonl",
    ]
    fd = os.open(tmp_path / "probe.lock", os.O_RDWR | os.O_CREAT)  # flock works here
    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    os.close(fd)


# --- 4. review writes only into folders it made ----------------------------------------------


def test_review_refuses_a_folder_it_did_not_make_and_removes_only_its_own_files(
    tmp_path: Path,
) -> None:
    results = tmp_path / "results.jsonl"
    assert verify(EXAMPLES, "--no-checkpoint", "-o", results).exit_code == 0
    mine = tmp_path / "mine"
    (mine / "data" / "e").mkdir(parents=True)
    (mine / "index.html").write_text("my page")
    (mine / "data" / "e" / "notes.txt").write_text("my notes")
    refused = runner.invoke(app, ["review", str(results), "--html", str(mine)])
    assert refused.exit_code == 2 and "did not write" in said(refused)
    assert (mine / "index.html").read_text() == "my page"
    assert (mine / "data" / "e" / "notes.txt").read_text() == "my notes"

    site = tmp_path / "site"
    assert runner.invoke(app, ["review", str(results), "--html", str(site)]).exit_code == 0
    assert len(list((site / "data" / "e").glob("*.js"))) == 10
    (site / "data" / "e" / "notes.txt").write_text("added later")
    fewer = jsonl(
        tmp_path / "fewer.jsonl", *[orjson.loads(x) for x in results.read_bytes().splitlines()[:4]]
    )
    again = runner.invoke(app, ["review", str(fewer), "--html", str(site)])
    assert again.exit_code == 0, again.output
    assert sorted(p.name for p in (site / "data" / "e").iterdir()) == [
        "000000.js",
        "000001.js",
        "000002.js",
        "000003.js",
        "notes.txt",
    ]


# --- 5. a full disk ----------------------------------------------------------------------------

FULL_DISK = {
    "journal": """
import errno, pathlib
real_open = pathlib.Path.open
class Full:
    def __init__(self, sink):
        self.sink, self.writes = sink, 0
    def write(self, data):
        self.writes += 1
        if self.writes > 5:
            raise OSError(errno.ENOSPC, "No space left on device")
        return self.sink.write(data)
    def __getattr__(self, name):
        return getattr(self.sink, name)
def fake_open(self, mode="r", *args, **kwargs):
    sink = real_open(self, mode, *args, **kwargs)
    return Full(sink) if self.name.endswith(".partial") and "a" in mode else sink
pathlib.Path.open = fake_open
""",
    "output": """
import errno, os
def fsync(fd):
    raise OSError(errno.ENOSPC, "No space left on device")
os.fsync = fsync
""",
    "checkpoint": """
from planverify.stores.sqlite import BatchedSqliteSaver
real_flush = BatchedSqliteSaver.flush
def flush(self):
    if len(self.pending.known or ()) > 10:  # 10 episodes in, the file may not grow any more:
        pages = self.conn.execute("PRAGMA page_count").fetchone()[0]  # SQLite's SQLITE_FULL
        self.conn.execute(f"PRAGMA max_page_count = {pages}")
    return real_flush(self)
BatchedSqliteSaver.flush = flush
""",
    "closing": """
import sqlite3
from planverify.stores.sqlite import BatchedSqliteSaver
real_exit = BatchedSqliteSaver.__aexit__
def full():
    error = sqlite3.OperationalError("database or disk is full")
    error.sqlite_errorcode = sqlite3.SQLITE_FULL
    raise error
async def closing(self, *exc_info):  # the batch is done: its last checkpoints find no room
    self.flush = full
    return await real_exit(self, *exc_info)
BatchedSqliteSaver.__aexit__ = closing
""",
}


@pytest.mark.parametrize("where", list(FULL_DISK))
def test_a_full_disk_is_one_line_and_the_rerun_continues(tmp_path: Path, where: str) -> None:
    source = jsonl(tmp_path / "in.jsonl", *episodes(100))
    out = tmp_path / "out.jsonl"
    out.write_bytes(b'{"id": "earlier"}\n')
    db = tmp_path / "cp.sqlite"
    args = ["verify", str(source), "--checkpoint", str(db), "-o", str(out), "--concurrency", "4"]
    script = FULL_DISK[where] + "\nfrom planverify.cli import main\nmain()\n"
    full = subprocess.run(
        [sys.executable, "-c", script, *args], capture_output=True, text=True, check=False
    )
    assert full.returncode == 1, full.stderr
    errors = [line for line in full.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and "Traceback" not in full.stderr, full.stderr
    line = " ".join(full.stderr[full.stderr.index("error:") :].split())
    if where == "closing":  # the output was written: the run says what it could not store
        assert f"cannot store the last checkpoints in {db}: the disk is full; the batch" in line
        assert ids(out) == [e["id"] for e in episodes(100)]
    else:
        what = {
            "journal": f"{out}.partial",
            "output": str(out),
            "checkpoint": f"checkpoints in {db}",
        }
        assert f"{what[where]}: the disk is full; kept: {out} as it was" in line, line
        assert out.read_bytes() == b'{"id": "earlier"}\n'
    again = subprocess.run([str(PLANVERIFY), *args], capture_output=True, text=True, check=False)
    assert again.returncode == 0, again.stderr
    assert ids(out) == [e["id"] for e in episodes(100)]


# --- 6. one bad line costs that line only ----------------------------------------------------


def test_a_bad_first_record_costs_that_line_only(tmp_path: Path) -> None:
    source = jsonl(tmp_path / "in.jsonl", {}, *episodes(2))
    out = tmp_path / "out.jsonl"
    result = verify(source, "--no-checkpoint", "-o", out)
    assert result.exit_code == 1
    assert f"{source}:1: not an episode: no `actions` (keys: none)" in said(result)
    assert ids(out) == ["e000", "e001"]
    game = jsonl(tmp_path / "game.jsonl", tiny_game("g"), *episodes(1))
    (whole,) = list(iter_jsonl(game))
    assert isinstance(whole, EpisodeError) and whole.line == 0
    assert "not an episodes file: it holds a TEACh game" in str(whole)


# --- 7. robust reading ---------------------------------------------------------------------------


def test_reading_takes_a_bom_and_names_bad_bytes_empty_ids_and_nul_characters(
    tmp_path: Path,
) -> None:
    good = orjson.dumps({"id": 7, "goal": "Carry the mug.", "actions": PLAN})
    path = tmp_path / "in.jsonl"
    path.write_bytes(
        b"\xef\xbb\xbf"
        + good
        + b"\n"
        + b'{"id": "latin", "goal": "caf\xe9", "actions": []}\n'
        + orjson.dumps({"id": " ", "actions": PLAN})
        + b"\n"
        + orjson.dumps({"id": "nul", "goal": "Carry\x00 the mug.", "actions": PLAN})
        + b"\n"
    )
    first, latin, empty, nul = list(iter_jsonl(path))
    assert isinstance(first, Episode) and first.id == "7"  # integer ids are read as text
    offset = 3 + len(good) + 1 + len(b'{"id": "latin", "goal": "caf')
    assert str(latin) == f"{path}:2: not UTF-8 text (byte 0xe9 at offset {offset})"
    assert str(empty) == f"{path}:3: id: must not be empty (got ' ')"
    assert str(nul) == f"{path}:4: episode 'nul': goal holds a NUL character"
    named = jsonl(tmp_path / "in[1].jsonl", *episodes(1))  # a name, not a pattern
    assert [e.id for e in load_episodes([named])] == ["e000"]
    game = tmp_path / "bom.game.json"
    game.write_bytes(b"\xef\xbb\xbf" + orjson.dumps(tiny_game("bom")))
    converted = runner.invoke(app, ["convert", str(game), "-o", str(tmp_path / "g.jsonl")])
    assert converted.exit_code == 0, converted.output


# --- 8. files of the wrong kind ------------------------------------------------------------------


def test_files_of_the_wrong_kind_are_named_with_what_was_expected(tmp_path: Path) -> None:
    results = tmp_path / "results.jsonl"
    assert verify(ANNOTATED, "--no-checkpoint", "-o", results).exit_code == 0
    cases = [
        (
            ["score", str(ANNOTATED), str(ANNOTATED)],
            f"{ANNOTATED} holds annotated episodes (records with `actions` and `labels`); "
            "RESULTS expects results of `planverify verify`",
        ),
        (
            ["score", str(EXAMPLES), str(results)],
            f"{EXAMPLES} holds episodes without labels (records with `actions`); ANNOTATED",
        ),
        (
            ["review", str(ANNOTATED), "--html", str(tmp_path / "site")],
            f"{ANNOTATED} holds annotated episodes",
        ),
        (
            ["export", str(EXAMPLES), "--episodes", str(EXAMPLES), "-o", str(tmp_path / "x.jsonl")],
            f"{EXAMPLES} holds episodes without labels",
        ),
        (["review", str(tmp_path), "--html", str(tmp_path / "site")], f"{tmp_path} is a directory"),
    ]
    for args, message in cases:
        refused = runner.invoke(app, args)
        assert refused.exit_code == 2, (args, refused.output)
        assert message in said(refused), (args, said(refused))
    assert not (tmp_path / "site").exists() and not (tmp_path / "x.jsonl").exists()


# --- 9. control characters -----------------------------------------------------------------------


def test_control_characters_in_ids_goals_and_names_are_printed_escaped(tmp_path: Path) -> None:
    evil = "ep\x1b]0;owned\x07\x1b[2J"
    record = {"id": evil, "goal": "Carry\x1b[31m the mug.", "actions": PLAN}
    folder = tmp_path / "odd\x1b]2;name\x07dir"
    folder.mkdir()
    source = jsonl(folder / "in.jsonl", record, record)
    (folder / "in.jsonl").write_bytes(source.read_bytes() + b"{broken\n")
    db = tmp_path / "cp.sqlite"
    ran = verify(source, "--checkpoint", db, "-o", tmp_path / "out.jsonl")
    shown = runner.invoke(app, ["show", evil, "--checkpoint", str(db)])
    assert shown.exit_code == 0, shown.output
    for result in (ran, shown):
        assert "\x1b" not in result.output and "\x07" not in result.output
    assert "ep\\x1b]0;owned\\x07\\x1b[2J" in said(ran)  # the repeated id
    assert "odd\\x1b]2;name\\x07dir" in said(ran)  # the file name of the broken line
    assert "goal: Carry\\x1b[31m the mug." in shown.stdout


# --- 10. show --checkpoint -----------------------------------------------------------------------


def test_show_takes_any_path_and_names_a_file_that_is_not_a_store(tmp_path: Path) -> None:
    folder = tmp_path / "runs #1? 100%"
    folder.mkdir()
    db = folder / "a#b?c%41.sqlite"
    source = jsonl(tmp_path / "in.jsonl", *episodes(1))
    assert verify(source, "--checkpoint", db).exit_code == 0
    before = sorted(p.name for p in tmp_path.rglob("*"))
    shown = runner.invoke(app, ["show", "e000", "--checkpoint", str(db)])
    assert shown.exit_code == 0, shown.output
    assert "Judge pass 1" in shown.stdout
    assert sorted(p.name for p in tmp_path.rglob("*")) == before  # no stray file
    text = tmp_path / "notes.txt"
    text.write_text("not a database\n" * 100)
    bad = runner.invoke(app, ["show", "e000", "--checkpoint", str(text)])
    no_traceback(bad)
    assert bad.exit_code == 2
    assert len(bad.stderr.strip().splitlines()) == 1
    assert f"{text} is not a planverify checkpoint store" in said(bad)


# --- 11. long names ------------------------------------------------------------------------------


def test_long_split_names_are_cut_with_a_hash(tmp_path: Path) -> None:
    long = "Make " + "very " * 80 + "sure"
    records = [
        {**episodes(1)[0], "id": "a", "task": long + " A"},
        {**episodes(1)[0], "id": "b", "task": long + " B"},
        {**episodes(1)[0], "id": "c", "task": "Coffee"},
    ]
    source = jsonl(tmp_path / "in.jsonl", *records)
    results = tmp_path / "results.jsonl"
    assert verify(source, "--no-checkpoint", "-o", results).exit_code == 0
    out = tmp_path / "by-task"
    done = runner.invoke(
        app,
        ["export", str(results), "--episodes", str(source), "--split-by", "task", "-o", str(out)],
    )
    assert done.exit_code == 0, done.output
    names = sorted(p.stem for p in out.glob("*.jsonl"))
    assert len(names) == 3 and "coffee" in names
    assert all(len(name) <= 80 for name in names)
    cut = [name for name in names if name != "coffee"]
    assert cut[0][:71] == cut[1][:71] and cut[0] != cut[1]  # same start, apart by the hash


# --- 9. issue 33: the store is an input, outputs are regular files, locks follow the file ------


def test_an_output_that_is_the_checkpoint_store_is_refused_and_the_store_kept(
    tmp_path: Path,
) -> None:
    source = jsonl(tmp_path / "in.jsonl", *episodes(2))
    store = tmp_path / "cp.sqlite"
    assert verify(source, "--checkpoint", store, "-o", tmp_path / "first.jsonl").exit_code == 0
    before = store.read_bytes()
    link = tmp_path / "store-link.sqlite"
    link.symlink_to(store)
    hard = tmp_path / "store-hard.sqlite"
    os.link(store, hard)
    for output in (store, link, hard):
        refused = verify(source, "--checkpoint", store, "-o", output)
        assert refused.exit_code == 2, refused.output
        assert "is the checkpoint store" in said(refused)
    partial_clash = verify(source, "--checkpoint", store, "-o", tmp_path / "cp")  # cp.partial
    assert partial_clash.exit_code == 0, "only the store's own name clashes"
    refused = verify(
        source, "--checkpoint", tmp_path / "o.jsonl.partial", "-o", tmp_path / "o.jsonl"
    )
    assert refused.exit_code == 2 and "is the checkpoint store" in said(refused)
    assert store.read_bytes() == before


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_an_output_that_is_not_a_regular_file_is_refused_and_left_as_it_is(
    tmp_path: Path,
) -> None:
    source = jsonl(tmp_path / "in.jsonl", *episodes(2))
    results = tmp_path / "results.jsonl"
    assert verify(source, "--no-checkpoint", "-o", results).exit_code == 0
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    link = tmp_path / "to-fifo.jsonl"
    link.symlink_to(fifo)
    commands = [
        ["verify", str(source), "--no-checkpoint", "-o"],
        ["corrupt", str(source), "-o"],
        ["export", str(results), "--episodes", str(source), "-o"],
    ]
    for command in commands:
        for output in (fifo, link):
            refused = runner.invoke(app, [*command, str(output)])
            no_traceback(refused)
            assert refused.exit_code == 2, (command, refused.output)
            assert f"the output {output} exists and is not a regular file" in said(refused)
    annotated = tmp_path / "annotated.jsonl"
    assert runner.invoke(app, ["corrupt", str(source), "-o", str(annotated)]).exit_code == 0
    scored = tmp_path / "scored.jsonl"
    assert verify(annotated, "--no-checkpoint", "-o", scored).exit_code == 0
    for output in (fifo, link):
        refused = runner.invoke(app, ["score", str(annotated), str(scored), "--json", str(output)])
        no_traceback(refused)
        assert refused.exit_code == 2 and "is not a regular file" in said(refused)
    assert fifo.is_fifo() and link.is_symlink()
    journal = tmp_path / "o.jsonl.partial"
    os.mkfifo(journal)
    refused = verify(source, "--no-checkpoint", "-o", tmp_path / "o.jsonl")
    assert refused.exit_code == 2 and "is not a regular file" in said(refused)
    assert journal.is_fifo()


def test_an_output_that_is_a_symlink_is_written_through_to_its_target(tmp_path: Path) -> None:
    source = jsonl(tmp_path / "in.jsonl", *episodes(2))
    target = tmp_path / "kept" / "results.jsonl"
    target.parent.mkdir()
    target.write_bytes(b"stale\n")
    link = tmp_path / "link.jsonl"
    link.symlink_to(target)
    done = verify(source, "--no-checkpoint", "-o", link)
    assert done.exit_code == 0, done.output
    assert link.is_symlink() and link.resolve() == target.resolve()
    assert ids(target) == ["e000", "e001"]
    corrupted = runner.invoke(app, ["corrupt", str(source), "-o", str(link)])
    assert corrupted.exit_code == 0, corrupted.output
    assert link.is_symlink() and "labels" in orjson.loads(target.read_bytes().splitlines()[0])
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.jsonl", "kept", "link.jsonl"]


def test_a_hard_link_or_symlink_to_an_output_shares_its_lock(tmp_path: Path) -> None:
    from planverify.stores.files import OutputBusy, output_lock

    out = tmp_path / "out.jsonl"
    out.write_bytes(b"")
    hard = tmp_path / "hard.jsonl"
    os.link(out, hard)
    link = tmp_path / "dir-link"
    link.symlink_to(tmp_path)
    with output_lock(out):
        for other in (hard, link / "out.jsonl"):
            with pytest.raises(OutputBusy), output_lock(other):
                pass
    with output_lock(hard):  # free again once the first holder is done
        pass


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="reads descriptors from /proc")
def test_a_child_forked_while_an_output_is_locked_holds_no_copy_of_the_lock(tmp_path: Path) -> None:
    """A process forked by a run (the TEACh loader) must not keep the run's output locked when
    it outlives the run: it closes its copies of the lock's descriptors."""
    from planverify.stores.files import lock_path, output_lock

    out = tmp_path / "out.jsonl"
    out.write_bytes(b"")
    locked = {str(lock_path(out)), str(out)}
    with output_lock(out):
        child = os.fork()
        if child == 0:  # the child: does any of its descriptors refer to the locked files?
            held = 0
            try:
                for fd in os.listdir("/proc/self/fd"):
                    with contextlib.suppress(OSError):
                        held += os.readlink(f"/proc/self/fd/{fd}") in locked
            finally:
                os._exit(min(held, 100))
        _, status = os.waitpid(child, 0)
    assert os.waitstatus_to_exitcode(status) == 0, "the forked child holds the lock's files"
