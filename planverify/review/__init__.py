"""`planverify review`: a static review site for a results file.

The site opens from `file://` with no server and nothing from the network: `index.html`, its
stylesheet and script in `assets/`, the episode table in `data/index.js`, and one
`data/e/NNNNNN.js` per episode, loaded only when that episode is opened. Browsers refuse
`fetch` on `file://`, so every data file is a script that hands its data to the page
(`PV.index(...)`, `PV.episode(n, ...)`).

The index lists every episode (sortable, filterable, paginated) under the batch summary and
three charts; an episode page shows the original plan beside the refined one, removed steps
struck through and inserted steps highlighted with their reasons, the dialogue as dialogue, and
each Judge pass's critique. A reviewer can overrule any verdict; decisions are kept in the
browser (localStorage), under a digest of the result they were made on (`Entry.result_key`),
so that a site of other results for the same episodes does not take them up, and downloaded as a
JSON file that `planverify export --decisions` applies.

Results carry the steps only the `minimal` trim policy removes (`Verdict.optional`) whichever
policy they ran under, so the site shows both: a switch reads every result under `natural`
(such steps kept, marked optional with their kind and reason) or `minimal` (removed, still
marked), and the counts, summary and refined plans follow it. It opens on the policy the
results ran under. Both readings come from `VerificationResult.under`; the page only shows them.
A decision names a step and the verdict the reviewer chose, so it means the same under either
policy; one on an optional step also names the step's kind (`optional`), for people reading it.

The site goes into a new or empty folder, or one it was written to before: `MARKER` lists the
files review wrote there, and a rebuild deletes only those. A folder with other files is refused.

The command is `planverify.cli.review`. May import `export`, `stores` and `records`.
"""

from __future__ import annotations

import hashlib
import html
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from importlib import resources
from pathlib import Path
from typing import Any

import orjson

from planverify.domains import Case, DomainUnavailable, domain_of, is_default
from planverify.export.curate import DECISIONS_FORMAT, DECISIONS_VERSION, same_content
from planverify.export.manifest import listed, mark, remove_stale
from planverify.records.episode import Episode, EpisodeError
from planverify.records.evidence import LEVELS
from planverify.records.history import Iteration
from planverify.records.jsonl import UnusableFile, expect, read_all
from planverify.records.notation import NotationError, parse_action
from planverify.records.result import Verdict, VerificationResult
from planverify.records.trim import DEFAULT_TRIM, TRIM_POLICIES, TrimPolicy
from planverify.review.charts import bar_chart, column_chart

ASSETS = ("review.css", "review.js")
_PLACEHOLDER = re.compile(r"\{\{(title|summary|count)\}\}")
MARKER = ".planverify-review.json"  # in a folder review made: the files it wrote there
MARKER_FORMAT = "planverify-review-site"


class ReviewError(ValueError):
    """A results file that cannot be reviewed (one line)."""


class SiteRefused(ValueError):
    """A folder the site must not be written into (one line)."""


@dataclass
class Entry:
    """One result with what the site shows about it."""

    n: int  # position in the results file, the episode's number on the site
    result: VerificationResult
    raw: dict[str, Any]  # the record as written (keys this version does not model included)
    episode: Episode | None = None  # its input episode, when given and of the same content

    @cached_property
    def result_key(self) -> str:
        """A digest of the record as written: the site keeps a reviewer's decisions under it,
        so that they never apply to another result of the same episode."""
        return hashlib.sha256(orjson.dumps(self.raw, option=orjson.OPT_SORT_KEYS)).hexdigest()[:16]

    @cached_property
    def views(self) -> dict[TrimPolicy, VerificationResult]:
        """The result read under each trim policy (`VerificationResult.under`)."""
        return {trim: self.result.under(trim) for trim in TRIM_POLICIES}

    @property
    def optional(self) -> int:
        """Steps with an optional note: kept under `natural`, removed under `minimal`."""
        return sum(v.optional is not None for v in self.result.verdicts)

    @property
    def vetoes(self) -> int:
        """Vetoed critiques: `history[*].vetoes` when the record has it, else 0."""
        total = 0
        for record in self.raw.get("history") or []:
            vetoes = record.get("vetoes") if isinstance(record, dict) else None
            if isinstance(vetoes, list):
                total += len(vetoes)
            elif isinstance(vetoes, int) and not isinstance(vetoes, bool):
                total += max(vetoes, 0)
        return total

    def meta(self, key: str) -> str | None:
        """Task family, split or source: from the episode, else from the record."""
        value: Any = None
        if self.episode is not None:
            value = (
                self.episode.task if key == "task" else (self.episode.model_extra or {}).get(key)
            )
        if value is None:
            value = self.raw.get(key)
        return None if value is None else str(value)


@dataclass
class Site:
    """What was built."""

    directory: Path
    entries: list[Entry]
    bytes_first_view: int = 0  # index.html, assets and the index data
    bytes_total: int = 0  # everything written
    files: int = 0
    mismatched: list[str] = field(default_factory=list)  # results on other content than inputs
    trim: TrimPolicy = DEFAULT_TRIM  # the trim policy the site opens on


def read_entries(path: Path) -> list[Entry]:
    """The results of a file, with their raw records: `UnusableFile` when it is not a results
    file or a line is not a result, `ReviewError` when it holds none."""
    if (problem := expect(path, "results", "RESULTS")) is not None:
        raise UnusableFile(problem)
    entries = [
        Entry(n=n, result=result, raw=record.data)
        for n, (record, result) in enumerate(read_all(path, VerificationResult, "a result record"))
    ]
    if not entries:
        raise ReviewError(f"{path} holds no results")
    return entries


def attach(entries: Sequence[Entry], episodes: Iterable[Episode | EpisodeError]) -> list[str]:
    """Give entries their input episodes (same id and content); returns the ids whose episode
    has other content (their metadata is not used)."""
    by_id = {e.result.id: e for e in entries}
    mismatched: list[str] = []
    for item in episodes:
        if isinstance(item, EpisodeError) or item.id not in by_id:
            continue
        entry = by_id[item.id]
        if same_content(item, entry.result):
            entry.episode = item
        else:
            mismatched.append(item.id)
    return mismatched


# --- what the pages get -----------------------------------------------------------------------


def _step(line: str) -> dict[str, Any]:
    """An action line for the page: dialogue as speaker and text."""
    try:
        action = parse_action(line)
    except NotationError:
        return {"a": line}
    if action.is_dialogue:
        return {"a": line, "who": action.agent, "say": action.text}
    return {"a": line}


def edits_shown(record: Iteration) -> list[list[str | None]]:
    """A pass's edits for the page, `[kind, action, reason]`: the reason is left out (None)
    when a flag of the same pass gave it for the same step, so that each reason shows once."""
    flagged = {(flag.action, flag.reason) for flag in record.critique.flags}
    return [
        [e.kind, e.action, None if (e.action, e.reason) in flagged else e.reason]
        for e in record.edits
    ]


def verdict_shown(verdict: Verdict) -> dict[str, Any]:
    """A verdict's fate for the page: `v`, and `e` (level) and `r` (reason) when it has them."""
    shown: dict[str, Any] = {"v": verdict.verdict}
    if verdict.evidence is not None:
        shown["e"] = verdict.evidence
    if verdict.reason:
        shown["r"] = verdict.reason
    return shown


def steps_shown(entry: Entry) -> list[dict[str, Any]]:
    """The input steps for the page, each with its verdict as the run made it; a step with an
    optional note also has the note (`o`) and its verdict under each trim policy (`t`)."""
    result = entry.result
    steps = []
    for k, verdict in enumerate(result.verdicts):
        step = {**_step(verdict.action), **verdict_shown(verdict)}
        if verdict.iteration is not None:
            step["it"] = verdict.iteration
        if verdict.optional is not None:
            note = verdict.optional
            step["o"] = {"kind": note.kind, "reason": note.reason, "e": note.evidence}
        under = {trim: entry.views[trim].verdicts[k] for trim in TRIM_POLICIES}
        if verdict.optional is not None or any(v != verdict for v in under.values()):
            # the page swaps these in: absent keys are cleared (a kept step has no level)
            step["t"] = {
                trim: {"v": None, "e": None, "r": None, **verdict_shown(v)}
                for trim, v in under.items()
            }
        steps.append(step)
    if not steps:  # failed results have no verdicts: show the input plan
        steps = [{**_step(line), "v": "keep"} for line in result.original]
    return steps


def episode_data(entry: Entry) -> dict[str, Any]:
    """Everything an episode page shows."""
    result = entry.result
    settings = result.settings
    steps = steps_shown(entry)
    passes = []
    raw_history = entry.raw.get("history") or []
    for k, record in enumerate(result.history):
        critique = record.critique
        raw = raw_history[k] if k < len(raw_history) and isinstance(raw_history[k], dict) else {}
        vetoes = raw.get("vetoes")
        passes.append(
            {
                "it": record.iteration,
                "flags": [[f.step, f.action, f.reason, f.evidence] for f in critique.flags],
                "missing": [[m.description, m.action] for m in critique.missing],
                "dropped": [[d.text, d.why] for d in [*critique.dropped, *record.dropped]],
                "edits": edits_shown(record),
                "vetoes": [
                    v if isinstance(v, str) else orjson.dumps(v).decode()
                    for v in (vetoes if isinstance(vetoes, list) else [])
                ],
            }
        )
    return {
        "n": entry.n,
        "id": result.id,
        "digest": result.input_digest,
        "result": entry.result_key,
        "goal": result.goal,
        "task": entry.meta("task"),
        "split": entry.meta("split"),
        "source": entry.meta("source"),
        "status": result.status,
        "error": result.error,
        "stop": result.stop_reason,
        "iterations": result.iterations,
        "judge": settings.judge if settings else None,
        "planner": settings.planner if settings else None,
        "mode": settings.mode if settings else None,
        "trim": result.trim,
        "cost": result.cost_usd,
        "steps": steps,
        "inserted": [
            [i.after_index, i.action, i.reason, i.iteration, i.evidence] for i in result.inserted
        ],
        "passes": passes,
        "warnings": result.warnings,
        **scene_objects(entry),
    }


def scene_objects(entry: Entry) -> dict[str, Any]:
    """`{"objects": [[id, name], ...]}`: the scene's objects the plan names (input and inserted
    steps), by name, for an episode of another domain than TEACh whose record is given (its ids
    mean nothing without the scene); `{}` otherwise (TEACh's pages are as they were)."""
    episode = entry.episode
    if episode is None or is_default(episode.domain):
        return {}
    lines = [*entry.result.original, *(i.action for i in entry.result.inserted)]
    try:
        names = domain_of(episode.domain).object_names(Case(lines=lines, program=episode.program))
    except (DomainUnavailable, ValueError, OSError):
        return {}
    return {"objects": [[node, name] for node, name in names.items()]} if names else {}


INDEX_COLUMNS = (
    "n",
    "id",
    "task",
    "split",
    "stop",
    "steps",
    "refined",
    "removed",
    "inserted",
    "iterations",
    "vetoes",
    "cost",
    "result",
    "goal",
    "levels",
    "trim",
    "optional",
    *TRIM_POLICIES,
)  # `refined`, `removed` and `levels` as the run made them; `natural` and `minimal`: the same
# three under that policy (`view_counts`), which the page shows


def index_row(entry: Entry) -> list[Any]:
    """One row of the episode table (see `INDEX_COLUMNS`)."""
    result = entry.result
    goal = (result.goal or "")[:160]
    return [
        entry.n,
        result.id,
        entry.meta("task"),
        entry.meta("split"),
        result.stop_reason if result.status == "ok" else "error",
        len(result.original),
        len(result.refined),
        sum(v.verdict == "remove" for v in result.verdicts),
        len(result.inserted),
        result.iterations,
        entry.vetoes,
        result.cost_usd,
        entry.result_key,
        goal,
        changes_by_level(result),
        result.trim,
        entry.optional,
        *(view_counts(entry.views[trim]) for trim in TRIM_POLICIES),
    ]


def view_counts(result: VerificationResult) -> list[Any]:
    """`[refined, removed, levels]` of a result as one trim policy reads it."""
    removed = sum(v.verdict == "remove" for v in result.verdicts)
    return [len(result.refined), removed, changes_by_level(result)]


def changes_by_level(result: VerificationResult) -> list[int]:
    """Removals and insertions at each evidence level, strongest first (`LEVELS`)."""
    levels = Counter(v.evidence for v in result.verdicts if v.verdict == "remove")
    levels.update(item.evidence for item in result.inserted)
    return [levels[level] for level in LEVELS]


# --- summary ----------------------------------------------------------------------------------


def summary_html(entries: Sequence[Entry], trim: TrimPolicy = DEFAULT_TRIM) -> str:
    """The batch summary and its charts, as HTML (every text escaped): once under each trim
    policy, the one of `trim` shown until the page's switch chooses (`data-trim`)."""
    judges = Counter(
        f"{e.result.settings.judge} / {e.result.settings.planner}"
        for e in entries
        if e.result.settings
    )
    made_with = ", ".join(f"{name} ({count:,})" for name, count in judges.most_common(3))
    line = f'<p class="made">Judge / planner: {html.escape(made_with)}</p>' if made_with else ""
    views = "".join(
        f'<div class="trim-view" data-trim="{policy}"{"" if policy == trim else " hidden"}>'
        f"{summary_view(entries, policy)}</div>"
        for policy in TRIM_POLICIES
    )
    return f'<section class="summary">{views}{line}</section>'


def summary_view(entries: Sequence[Entry], trim: TrimPolicy) -> str:
    """The summary's figures and charts with every result read under `trim`."""
    read = [(e, e.views[trim]) for e in entries]
    ok = [(e, r) for e, r in read if r.status == "ok"]
    per_task: Counter[str] = Counter()
    for e, r in ok:
        per_task[e.meta("task") or "(no task family)"] += sum(
            v.verdict == "remove" for v in r.verdicts
        )
    stops = Counter((r.stop_reason or "unknown") if r.status == "ok" else "error" for _, r in read)
    iterations = Counter(r.iterations for _, r in ok)
    charts = [
        ("Removed steps per task family", bar_chart(per_task.most_common(12))),
        ("Stop reasons", bar_chart(stops.most_common())),
        (
            "Judge passes to converge",
            column_chart([(str(k), iterations[k]) for k in sorted(iterations)]),
        ),
    ]
    chart_html = "".join(
        f'<figure class="chart"><figcaption>{html.escape(title)}</figcaption>{svg}</figure>'
        for title, svg in charts
    )
    return f'<div class="figures">{figures_html(read)}</div><div class="charts">{chart_html}</div>'


def figures_html(read: Sequence[tuple[Entry, VerificationResult]]) -> str:
    """The summary's figure cards, of results as one trim policy reads them."""
    ok = [r for _, r in read if r.status == "ok"]
    removed = sum(sum(v.verdict == "remove" for v in r.verdicts) for r in ok)
    by_level = Counter(v.evidence for r in ok for v in r.verdicts if v.verdict == "remove")
    kinds = Counter(v.optional.kind for r in ok for v in r.verdicts if v.optional is not None)
    before = sum(len(r.original) for r in ok)
    after = sum(len(r.refined) for r in ok)
    changed = sum(r.refined != r.original for r in ok)
    passes = sum(r.iterations for r in ok) / len(ok) if ok else 0.0
    costs = [r.cost_usd for _, r in read if r.usage]
    cost = f"${sum(c for c in costs if c is not None):,.2f}"
    cost_note = (
        "no model calls"
        if not costs
        else ("some models unpriced" if any(c is None for c in costs) else "")
    )
    figures = [
        ("episodes", f"{len(read):,}", f"{len(ok):,} ok, {len(read) - len(ok):,} error"),
        ("changed", f"{changed:,}", f"{100 * changed / len(ok):.0f}% of ok" if ok else ""),
        (
            "steps removed",
            f"{removed:,}",
            f"of {before:,}; {before:,} → {after:,}; "
            + ", ".join(f"{level} {by_level[level]:,}" for level in LEVELS),
        ),
        (
            "optional steps",
            f"{kinds.total():,}",
            "kept under natural, removed under minimal"
            + "".join(f"; {kind} {count:,}" for kind, count in kinds.most_common(4)),
        ),
        ("steps inserted", f"{sum(len(r.inserted) for r in ok):,}", ""),
        ("mean Judge passes", f"{passes:.2f}", ""),
        ("vetoed critiques", f"{sum(e.vetoes for e, _ in read):,}", ""),
        ("cost", cost, cost_note),
    ]
    return "".join(
        f'<div class="figure"><div class="value">{html.escape(value)}</div>'
        f'<div class="label">{html.escape(label)}</div>'
        + (f'<div class="note">{html.escape(note)}</div>' if note else "")
        + "</div>"
        for label, value, note in figures
    )


# --- the site ---------------------------------------------------------------------------------


def _js(call: str, *args: Any) -> bytes:
    return f"{call}(".encode() + b",".join(orjson.dumps(a) for a in args) + b");\n"


def page(title: str, summary: str, count: int) -> str:
    """index.html: the template's `{{title}}`, `{{summary}}` and `{{count}}` filled in one pass,
    so that text from the data (a title, a task family) is never read as a placeholder."""
    template = resources.files("planverify.review").joinpath("assets/index.html").read_text("utf-8")
    values = {"title": html.escape(title), "summary": summary, "count": f"{count:,}"}
    return _PLACEHOLDER.sub(lambda found: values[found.group(1)], template)


def site_files(entries: Sequence[Entry]) -> list[str]:
    """The files a site of these entries is made of, relative to its folder."""
    return [
        "index.html",
        *(f"assets/{name}" for name in ASSETS),
        "data/index.js",
        *(f"data/e/{entry.n:06d}.js" for entry in entries),
    ]


def earlier_files(directory: Path) -> list[str]:
    """The files review wrote into `directory` before (from its marker); `SiteRefused` when it
    is a folder with files that review did not make."""
    if not directory.exists() or not any(directory.iterdir()):
        return []
    files = listed(directory, MARKER, MARKER_FORMAT)
    if files is None:
        raise SiteRefused(
            f"--html {directory} holds files that planverify review did not write (no "
            f"{MARKER} in it): give a new or empty folder"
        )
    return files


def ran_under(entries: Sequence[Entry]) -> TrimPolicy:
    """The trim policy most of these results ran under (`natural` when as many ran under each)."""
    counts = Counter(e.result.trim for e in entries)
    return max(TRIM_POLICIES, key=lambda trim: (counts[trim], trim == DEFAULT_TRIM))


def build_site(
    entries: Sequence[Entry],
    directory: Path,
    *,
    title: str,
    mismatched: Sequence[str] = (),
    trim: TrimPolicy | None = None,
) -> Site:
    """Write the site into `directory`: a new or empty folder, or one an earlier site was
    written to (`SiteRefused` otherwise). Of the earlier site's files, those this one does not
    write again are removed; no other file is touched. The site opens on trim policy `trim`
    (default: the one the results ran under, `ran_under`)."""
    trim = trim or ran_under(entries)
    earlier = earlier_files(directory)
    files = site_files(entries)
    directory.mkdir(parents=True, exist_ok=True)
    mark(directory, MARKER, MARKER_FORMAT, [*earlier, *files])  # a build cut short knows all
    for folder in ("assets", "data/e"):
        (directory / folder).mkdir(parents=True, exist_ok=True)
    site = Site(directory=directory, entries=list(entries), mismatched=list(mismatched), trim=trim)
    written: list[Path] = []
    for name in ASSETS:
        target = directory / "assets" / name
        target.write_bytes(
            resources.files("planverify.review").joinpath(f"assets/{name}").read_bytes()
        )
        written.append(target)
    index = directory / "data" / "index.js"
    index.write_bytes(
        _js(
            "PV.index",
            {
                "title": title,
                "columns": list(INDEX_COLUMNS),
                "rows": [index_row(e) for e in entries],
                "levels": list(LEVELS),
                "trim": trim,
                "trims": list(TRIM_POLICIES),
                "ran": dict(Counter(e.result.trim for e in entries)),
                "format": DECISIONS_FORMAT,
                "version": DECISIONS_VERSION,
            },
        )
    )
    written.append(index)
    html_file = directory / "index.html"
    html_file.write_text(page(title, summary_html(entries, trim), len(entries)), encoding="utf-8")
    written.append(html_file)
    site.bytes_first_view = sum(p.stat().st_size for p in written)
    for entry in entries:
        target = directory / "data" / "e" / f"{entry.n:06d}.js"
        target.write_bytes(_js("PV.episode", entry.n, episode_data(entry)))
        written.append(target)
    remove_stale(directory, earlier, files)
    mark(directory, MARKER, MARKER_FORMAT, files)
    site.files = len(written)
    site.bytes_total = sum(p.stat().st_size for p in written)
    return site
