"""Exit codes, one rule for every command, as the table of docs/exit-codes.md states them: each cell of the
table (a condition and a command) is a case here, run through the real command line, and the
code it exits with must be the one the table gives. A cell without a case, or a case without
a cell, fails too."""

from __future__ import annotations

import re
import shutil
import socket
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson
import pytest
from typer.testing import CliRunner

from planverify.api import verify_many
from planverify.cli import app
from planverify.records.episode import Episode, iter_jsonl
from planverify.stores.files import output_lock

from .conftest import ROOT
from .fake_openai import FakeOpenAI, Reply
from .test_cli import tiny_game

runner = CliRunner()
EPISODES = ROOT / "examples" / "episodes.jsonl"
ANNOTATED = ROOT / "examples" / "annotated.jsonl"
READERS = (
    "verify",
    "convert",
    "corrupt",
    "score",
    "eval",
    "export",
    "review",
    "show",
)  # read files
NO_VALUE = "\N{EN DASH}"  # a cell of a condition the command does not have


def readme_table() -> dict[tuple[str, str], int]:
    """(condition, command) -> exit code, from the table of docs/exit-codes.md."""
    text = (ROOT / "docs" / "exit-codes.md").read_text(encoding="utf-8")
    section = text[text.index("# Exit codes") :]
    table = re.search(r"^\|.*?(?=\n[^|])", section, flags=re.S | re.M)
    assert table is not None
    lines = table.group(0).splitlines()
    commands = [c.strip() for c in lines[0].strip("|").split("|")][1:]
    cells: dict[tuple[str, str], int] = {}
    for line in lines[2:]:
        condition, *codes = (c.strip() for c in line.strip("|").split("|"))
        assert len(codes) == len(commands), line
        for command, code in zip(commands, codes, strict=True):
            if code != NO_VALUE:
                cells[condition, command] = int(code)
    return cells


@dataclass
class Setup:
    """What a case builds its command line from: each property is a path, made when used."""

    tmp: Path
    monkeypatch: pytest.MonkeyPatch
    stack: ExitStack  # servers and locks held while the command runs
    results: Path  # results of verify on ANNOTATED
    episodes: Path = EPISODES
    annotated: Path = ANNOTATED

    def file(self, name: str, lines: list[bytes]) -> Path:
        path = self.tmp / name
        path.write_bytes(b"".join(line + b"\n" for line in lines))
        return path

    def records(self, source: Path) -> list[dict[str, Any]]:
        return [orjson.loads(line) for line in source.read_bytes().splitlines()]

    @property
    def out(self) -> Path:
        return self.tmp / "out.jsonl"

    @property
    def site(self) -> Path:
        return self.tmp / "site"

    @property
    def report(self) -> Path:
        return self.tmp / "report"

    @property
    def missing(self) -> Path:
        return self.tmp / "missing.jsonl"

    @property
    def empty(self) -> Path:
        return self.file("empty.jsonl", [])

    @property
    def bad_episodes(self) -> Path:
        """The example episodes and a line cut short."""
        return self.file("bad.jsonl", [*EPISODES.read_bytes().splitlines(), b'{"id": "x'])

    @property
    def bad_annotated(self) -> Path:
        """The annotated episodes and a line cut short."""
        return self.file("bad.jsonl", [*ANNOTATED.read_bytes().splitlines(), b'{"id": "x'])

    @property
    def episodes_copy(self) -> Path:
        return Path(shutil.copy(EPISODES, self.tmp / EPISODES.name))

    @property
    def annotated_copy(self) -> Path:
        return Path(shutil.copy(ANNOTATED, self.tmp / ANNOTATED.name))

    @property
    def cut_results(self) -> Path:
        """The results with their last line cut short."""
        data = self.results.read_bytes()
        return self.file("cut.jsonl", [data[: len(data) - 40]])

    @property
    def failed_results(self) -> Path:
        """The results with the first one an error record."""
        records = self.records(self.results)
        records[0].update(status="error", error="RuntimeError: down")
        return self.file("failed.jsonl", [orjson.dumps(r) for r in records])

    @property
    def other_content(self) -> Path:
        """The annotated episodes, the first with another goal than its result was made on."""
        records = self.records(ANNOTATED)
        records[0]["goal"] = "Another goal."
        return self.file("other.jsonl", [orjson.dumps(r) for r in records])

    def _games(self, *, good: int, bad: bool) -> Path:
        folder = self.tmp / "games" / "train"
        folder.mkdir(parents=True, exist_ok=True)
        for n in range(good):
            (folder / f"g{n}.game.json").write_bytes(orjson.dumps(tiny_game(f"g{n}")))
        if bad:
            (folder / "cut.game.json").write_bytes(b'{"tasks": [')
        return self.tmp / "games"

    @property
    def games(self) -> Path:
        return self._games(good=2, bad=False)

    @property
    def bad_games(self) -> Path:
        return self._games(good=2, bad=True)

    @property
    def only_bad_games(self) -> Path:
        return self._games(good=0, bad=True)

    @property
    def store(self) -> Path:
        """A checkpoint store holding the example episodes."""
        store = self.tmp / "cp.sqlite"
        made = runner.invoke(app, ["verify", str(EPISODES), "--checkpoint", str(store)])
        assert made.exit_code == 0, made.output
        return store

    @property
    def results_in_site(self) -> Path:
        """The results, copied over one of the files of a site built from them."""
        made = runner.invoke(app, ["review", str(self.results), "--html", str(self.site)])
        assert made.exit_code == 0, made.output
        return Path(shutil.copy(self.results, self.site / "data" / "index.js"))

    @property
    def busy(self) -> Path:
        """An output whose lock this process holds (another run)."""
        output = self.tmp / "busy.jsonl"
        self.stack.enter_context(output_lock(output))
        return output

    def model_server(self, reply: Reply) -> list[str]:
        """Options for a model judge on a loopback server that answers `reply`."""
        pytest.importorskip("langchain_openai")
        self.monkeypatch.setenv("OPENAI_API_KEY", "test-key")
        server = self.stack.enter_context(FakeOpenAI(respond=lambda body: reply))
        return ["--judge", "openai:m", "--base-url", server.base_url, "--max-retries", "0"]

    def unreachable_server(self) -> list[str]:
        """Options for a model judge on a loopback port nothing listens on."""
        pytest.importorskip("langchain_openai")
        self.monkeypatch.setenv("OPENAI_API_KEY", "test-key")
        with socket.socket() as free:
            free.bind(("127.0.0.1", 0))
            port = free.getsockname()[1]
        return ["--judge", "openai:m", "--base-url", f"http://127.0.0.1:{port}/v1"]

    def interrupt(self, target: str) -> None:
        """Ctrl-C while `target` (module.attribute) runs."""

        def pressed(*args: Any, **kwargs: Any) -> Any:
            for value in args:  # a coroutine handed over is closed, never awaited
                getattr(value, "close", lambda: None)()
            raise KeyboardInterrupt

        self.monkeypatch.setattr(target, pressed)


Case = Callable[[Setup], list[str]]


def words(template: str) -> Case:
    """A command line from a template: `{name}` is `Setup.name` (a path, made when used)."""

    class Lazy(dict[str, str]):
        def __init__(self, setup: Setup) -> None:
            super().__init__()
            self.setup = setup

        def __missing__(self, name: str) -> str:
            return str(getattr(self.setup, name))

    def build(s: Setup) -> list[str]:
        return [word.format_map(Lazy(s)) for word in template.split()]

    return build


DONE = "everything asked was done"
FAILED = (
    'some episodes failed (records with `"status": "error"`; `score` counts them as finding '
    "nothing, `export` leaves them out, `review` shows them)"
)
SKIPPED = "some input records could not be read: each is named and skipped, the rest is done"
NOTHING = (
    "nothing to produce (no episode read, no row made, no goal read); an existing output is "
    "left as it was"
)
OTHER = (
    "results computed on other content than the input episodes (`export` writes nothing; "
    "`review` shows no metadata for them)"
)
STOPPED = (
    "the run stopped early (a model server cannot be reached, a full disk); finished work is kept"
)
USAGE = "a bad option or value, a missing argument or option"
UNUSABLE = (
    "an input that cannot be used as what it is named for: missing, a directory, a file of "
    "another kind, a RESULTS line that is not a result (a line cut short), an id not in the store"
)
OVER_INPUT = "an output that is one of the inputs (for `verify`, the checkpoint store too)"
BUSY = "another run is writing the same output"
INTERRUPTED = "interrupted (Ctrl-C)"
EVAL = "--report {report} --mode static --resamples 0"
REFUSED = Reply(status=400, error="this request is refused")  # a client error: never retried

CASES: dict[tuple[str, str], Case] = {
    (DONE, "verify"): words("verify {episodes} --no-checkpoint -o {out}"),
    (DONE, "convert"): words("convert {games} -o {out}"),
    (DONE, "corrupt"): words("corrupt {episodes} -o {out}"),
    (DONE, "score"): words("score {annotated} {results}"),
    (DONE, "eval"): words(f"eval {{annotated}} {EVAL} --limit 3"),
    (DONE, "export"): words("export {results} --episodes {annotated} -o {out}"),
    (DONE, "review"): words("review {results} --html {site}"),
    (DONE, "show"): words("show coffee-detour --checkpoint {store}"),
    (DONE, "goal"): lambda s: ["goal", "put all the remotes on one sofa"],
    (DONE, "presets"): words("presets"),
    #
    (FAILED, "verify"): lambda s: [
        *words("verify {episodes} --no-checkpoint -o {out}")(s),
        *s.model_server(REFUSED),
    ],
    (FAILED, "eval"): lambda s: [
        *words(f"eval {{annotated}} {EVAL} --limit 2 --no-cache")(s),
        *s.model_server(REFUSED),
    ],
    (FAILED, "score"): words("score {annotated} {failed_results}"),
    (FAILED, "export"): words("export {failed_results} --episodes {annotated} -o {out}"),
    (FAILED, "review"): words("review {failed_results} --html {site}"),
    #
    (SKIPPED, "verify"): words("verify {bad_episodes} --no-checkpoint -o {out}"),
    (SKIPPED, "convert"): words("convert {bad_games} -o {out}"),
    (SKIPPED, "corrupt"): words("corrupt {bad_episodes} -o {out}"),
    (SKIPPED, "score"): words("score {bad_annotated} {results}"),
    (SKIPPED, "eval"): words(f"eval {{bad_annotated}} {EVAL}"),
    (SKIPPED, "export"): words("export {results} --episodes {bad_annotated} -o {out}"),
    (SKIPPED, "review"): words("review {results} --episodes {bad_annotated} --html {site}"),
    #
    (NOTHING, "verify"): words("verify {empty} --no-checkpoint -o {out}"),
    (NOTHING, "convert"): words("convert {only_bad_games} -o {out}"),
    (NOTHING, "corrupt"): words("corrupt {episodes} --max-steps 1 -o {out}"),
    (NOTHING, "export"): words(
        "export {results} --episodes {annotated} -o {out} -f preference --min-removed 1000"
    ),
    (NOTHING, "review"): words("review {empty} --html {site}"),
    (NOTHING, "goal"): words("goal xyzzy"),
    #
    (OTHER, "score"): words("score {other_content} {results}"),
    (OTHER, "export"): words("export {results} --episodes {other_content} -o {out}"),
    (OTHER, "review"): words("review {results} --episodes {other_content} --html {site}"),
    #
    (STOPPED, "verify"): lambda s: [
        *words("verify {episodes} --no-checkpoint -o {out} --max-retries 0")(s),
        *s.unreachable_server(),
    ],
    #
    **{(USAGE, c): words(f"{c} x.jsonl --no-such-option") for c in READERS},
    (USAGE, "goal"): words("goal"),
    (USAGE, "presets"): words("presets --no-such-option"),
    #
    (UNUSABLE, "verify"): words("verify {results} --no-checkpoint"),
    (UNUSABLE, "convert"): words("convert {episodes} -o {out}"),
    (UNUSABLE, "corrupt"): words("corrupt {missing} -o {out}"),
    (UNUSABLE, "score"): words("score {annotated} {cut_results}"),
    (UNUSABLE, "eval"): words("eval {results} --report {report}"),
    (UNUSABLE, "export"): words("export {cut_results} --episodes {annotated} -o {out}"),
    (UNUSABLE, "review"): words("review {cut_results} --html {site}"),
    (UNUSABLE, "show"): words("show no-such-episode --checkpoint {store}"),
    #
    (OVER_INPUT, "verify"): words("verify {episodes_copy} --no-checkpoint -o {episodes_copy}"),
    (OVER_INPUT, "convert"): words("convert {games} -o {games}/train/g0.game.json"),
    (OVER_INPUT, "corrupt"): words("corrupt {episodes_copy} -o {episodes_copy}"),
    (OVER_INPUT, "score"): words("score {annotated} {results} --json {results}"),
    (OVER_INPUT, "export"): words(
        "export {results} --episodes {annotated_copy} -o {annotated_copy}"
    ),
    (OVER_INPUT, "review"): words("review {results_in_site} --html {site}"),
    #
    (BUSY, "verify"): words("verify {episodes} --no-checkpoint -o {busy}"),
    (BUSY, "convert"): words("convert {games} -o {busy}"),
    (BUSY, "corrupt"): words("corrupt {episodes} -o {busy}"),
    (BUSY, "export"): words("export {results} --episodes {annotated} -o {busy}"),
}
WHILE = {  # where Ctrl-C stops each command
    "verify": "planverify.cli.verify.run",
    "convert": "planverify.inputs.teach.iter_games",
    "corrupt": "planverify.inputs.sources.iter_inputs",
    "score": "planverify.metrics.score_results",
    "eval": "planverify.cli.eval.read_annotated",
    "export": "planverify.export.export_results",
    "review": "planverify.review.build_site",
    "show": "planverify.stores.checkpoints.episode_threads",
    "goal": "planverify.world.text_goals.read_goal",
    "presets": "planverify.cli.presets.presets",
}


def interrupted(command: str) -> Case:
    """The command that would succeed, stopped by Ctrl-C while it works."""

    def build(s: Setup) -> list[str]:
        args = CASES[DONE, command](s)
        s.interrupt(WHILE[command])
        return args

    return build


CASES.update({(INTERRUPTED, command): interrupted(command) for command in WHILE})


# --- the table and the cases ----------------------------------------------------------------------
TABLE = readme_table()


def test_every_cell_of_the_readme_table_has_a_case() -> None:
    assert set(TABLE) == set(CASES)


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory) -> Path:
    episodes = [e for e in iter_jsonl(ANNOTATED) if isinstance(e, Episode)]
    path = tmp_path_factory.mktemp("results") / "results.jsonl"
    path.write_bytes(b"".join(r.model_dump_json().encode() + b"\n" for r in verify_many(episodes)))
    return path


@pytest.fixture
def setup(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, results: Path) -> Iterator[Setup]:
    for name in ("OPENAI_API_KEY", "GOOGLE_API_KEY", "GEMINI_API_KEY", "GROQ_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(tmp_path)  # default checkpoint and cache paths land here
    with ExitStack() as stack:
        yield Setup(tmp=tmp_path, monkeypatch=monkeypatch, stack=stack, results=results)


@pytest.mark.parametrize(
    ("condition", "command"), sorted(CASES), ids=[f"{c}-{k[:40]}" for k, c in sorted(CASES)]
)
def test_the_exit_code_is_the_one_the_readme_gives(
    setup: Setup, condition: str, command: str
) -> None:
    args = CASES[condition, command](setup)
    result = runner.invoke(app, args)
    assert result.exit_code == TABLE[condition, command], (args, result.output)
    assert "Traceback" not in result.output
    if result.exit_code == 2 and condition != USAGE:
        assert len(result.stderr.strip().splitlines()) == 1, result.stderr
    if condition == INTERRUPTED:
        assert result.stderr.startswith("interrupted"), "said, not silent"
