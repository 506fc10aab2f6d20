"""The figures of the documentation, each written by the command that measures it.

Every figure a page of `docs/` shows lives in a file of `docs/figures/`, which the page includes
(`--8<-- "figures/NAME.md"`). The file says which command wrote it, on which date and at which
commit, above what the command measured:

- the cheap figures (`CHEAP`: `eval` on the bundled sample, export counts of the sample) are
  computed here, by the `planverify` commands a reader would run; `tests/test_docs_figures.py`
  computes them again and checks that the pages show what the code gives today;
- the expensive ones are benchmark scripts run over the shared TEACh games (`make figures`):
  `python benchmarks/figures.py NAME -- COMMAND...` runs COMMAND, keeps what it prints and writes
  it as figure NAME. Until it has run, `--pending` writes a file that says so and how to run it.

    python benchmarks/figures.py --cheap                                   # eval_sample, export_counts
    python benchmarks/figures.py judge_quality -- python benchmarks/judge_quality.py
    python benchmarks/figures.py --pending judge_quality -- python benchmarks/judge_quality.py
"""

from __future__ import annotations

import argparse
import datetime
import re
import shlex
import subprocess
import sys
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FIGURES = ROOT / "docs" / "figures"
HEADER = "<!-- written by benchmarks/figures.py: do not edit by hand -->"
STAMP = re.compile(
    r"^\*Written by `.*` on \S+ at commit `\S+`\.\*$|^!!! note \"Not yet generated\"$"
)
SAMPLE = "examples/episodes.jsonl"
ANNOTATED_SAMPLE = "examples/annotated.jsonl"
EXPORT_FORMATS = ("episodes", "sft", "preference", "recovery")


def current_commit() -> str:
    """The short hash of the checkout's HEAD, or `unknown` outside a git checkout."""
    try:
        done = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True
        )
    except OSError:
        return "unknown"
    return done.stdout.strip() or "unknown"


def stamp(command: str, date: str | None = None, commit: str | None = None) -> str:
    """The line above a figure: the command that wrote it, the date and the commit."""
    date = date or datetime.date.today().isoformat()
    return f"*Written by `{command}` on {date} at commit `{commit or current_commit()}`.*"


def write_figures(
    name: str,
    body: str,
    *,
    command: str,
    date: str | None = None,
    commit: str | None = None,
    folder: Path = FIGURES,
) -> Path:
    """Write figure NAME (Markdown) under `folder`, stamped with its command, date and commit."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.md"
    text = f"{HEADER}\n\n{stamp(command, date, commit)}\n\n{body.strip()}\n"
    path.write_text(text, encoding="utf-8")
    return path


def write_pending(name: str, command: str, folder: Path = FIGURES) -> Path:
    """A figure file that says the figure has not been measured yet, and how to measure it."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.md"
    note = (
        f'!!! note "Not yet generated"\n\n    Run `make figures` to measure this figure; it runs\n'
        f"    `{command}` over the shared TEACh games and writes its output here."
    )
    path.write_text(f"{HEADER}\n\n{note}\n", encoding="utf-8")
    return path


def body_of(text: str) -> str:
    """A figure file's measurements: the file less its header and stamp (for comparisons)."""
    lines = [line for line in text.splitlines() if line != HEADER and not STAMP.match(line)]
    return "\n".join(lines).strip()


def as_markdown(output: str) -> str:
    """A command's printed output for a page: a Markdown table as it is, anything else as a fenced
    text block (its columns kept as printed)."""
    lines = [line for line in output.strip().splitlines() if line.strip()]
    if lines and all(line.lstrip().startswith("|") for line in lines):
        return "\n".join(lines)
    return f"```text\n{output.rstrip()}\n```"


def run_benchmark(name: str, argv: Sequence[str], folder: Path = FIGURES) -> Path:
    """Run a benchmark command from the repository root and write what it prints as figure NAME."""
    done = subprocess.run(list(argv), cwd=ROOT, capture_output=True, text=True)
    if done.returncode != 0:
        sys.stderr.write(done.stderr)
        raise SystemExit(
            f"{shlex.join(argv)} exited {done.returncode}; figure {name} left as it was"
        )
    return write_figures(name, as_markdown(done.stdout), command=shown(argv), folder=folder)


def shown(argv: Sequence[str]) -> str:
    """A command as a reader would type it: the interpreter as `python`."""
    words = list(argv)
    if words and Path(words[0]).name.startswith("python"):
        words[0] = "python"
    return shlex.join(words)


def planverify(*args: str, cwd: Path = ROOT) -> str:
    """Run a `planverify` command (the one installed next to this interpreter); its stdout."""
    script = Path(sys.executable).parent / "planverify"
    argv = [str(script)] if script.exists() else [sys.executable, "-m", "planverify.cli"]
    done = subprocess.run([*argv, *args], cwd=cwd, capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"planverify {shlex.join(args)} exited {done.returncode}: {done.stderr}")
    return done.stdout


def eval_sample(work: Path) -> tuple[str, str]:
    """`planverify eval` on the bundled annotated sample: its static, grid and convergence tables."""
    args = [
        "eval",
        ANNOTATED_SAMPLE,
        "--judge",
        "rules",
        "--judge",
        "baseline",
        "--planner",
        "rules",
    ]
    planverify(*args, "--report", str(work / "report"), "--no-cache")
    report = (work / "report" / "report.md").read_text(encoding="utf-8")
    tables = [
        ("One Judge pass per judge (static)", section_table(report, "## Static", 0)),
        ("Judge x Planner through the loop (iterative)", section_table(report, "## Iterative", 1)),
        ("Convergence", section_table(report, "## Convergence", 0)),
    ]
    body = "\n\n".join(f"**{title}**\n\n{table}" for title, table in tables)
    return body, shlex.join(["planverify", *args, "--report", "DIR"])


def section_table(report: str, heading: str, which: int) -> str:
    """The `which`-th Markdown table of the report's section under `heading`."""
    section = report.split(heading, 1)[1].split("\n## ", 1)[0]
    tables: list[str] = re.findall(r"(?:^\|.*\|$\n?)+", section, re.M)
    return tables[which].strip()


def export_counts(work: Path) -> tuple[str, str]:
    """Rows per format of `planverify export` on the bundled sample, verified offline."""
    results = work / "results.jsonl"
    planverify("verify", SAMPLE, "--no-checkpoint", "-o", str(results))
    rows = ["| format | rows |", "| --- | --- |"]
    for fmt in EXPORT_FORMATS:
        out = work / f"{fmt}.jsonl"
        planverify("export", str(results), "--episodes", SAMPLE, "-f", fmt, "-o", str(out))
        rows.append(f"| `{fmt}` | {len(out.read_bytes().splitlines())} |")
    command = (
        f"planverify verify {SAMPLE} -o results.jsonl; "
        f"planverify export results.jsonl --episodes {SAMPLE} -f FORMAT -o OUT"
    )
    return "\n".join(rows), command


CHEAP: dict[str, Callable[[Path], tuple[str, str]]] = {
    "eval_sample": eval_sample,
    "export_counts": export_counts,
}


def cheap_body(name: str) -> tuple[str, str]:
    """Figure NAME's Markdown and its command, computed in a scratch folder."""
    with tempfile.TemporaryDirectory() as scratch:
        return CHEAP[name](Path(scratch))


def main(argv: Sequence[str] | None = None) -> None:
    args = list(sys.argv[1:] if argv is None else argv)
    command = args[args.index("--") + 1 :] if "--" in args else []
    own = args[: args.index("--")] if "--" in args else args
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("name", nargs="?", help="the figure to write (docs/figures/NAME.md)")
    parser.add_argument("--cheap", action="store_true", help="write every cheap figure")
    parser.add_argument("--pending", action="store_true", help="mark NAME as not yet measured")
    options = parser.parse_args(own)
    if options.cheap:
        for name in CHEAP:
            body, shown_command = cheap_body(name)
            print(write_figures(name, body, command=shown_command).relative_to(ROOT))
        return
    if options.name is None or not command:
        parser.error("give NAME -- COMMAND..., or --cheap")
    if options.pending:
        print(write_pending(options.name, shown(command)).relative_to(ROOT))
    else:
        print(run_benchmark(options.name, command).relative_to(ROOT))


if __name__ == "__main__":
    main()
