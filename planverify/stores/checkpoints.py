"""Reading verification runs back from a checkpoint store: a SQLite file or a PostgreSQL URL."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import closing, contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.sqlite import SqliteSaver

from planverify.graphs.graph import build_verifier
from planverify.graphs.state import PlanState
from planverify.records.result import RunSettings
from planverify.stores.serde import state_serializer


class StoreError(ValueError):
    """A checkpoint store that cannot be read (one line: which, and why)."""


@contextmanager
def _reading(store: str | Path) -> Iterator[None]:
    """Turn a store's errors into `StoreError`: not a store of planverify, or unreachable."""
    try:
        yield
    except sqlite3.Error as exc:
        raise StoreError(f"{store} is not a planverify checkpoint store ({exc})") from None
    except Exception as exc:
        if type(exc).__module__.split(".")[0] != "psycopg":
            raise
        reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise StoreError(f"cannot read the checkpoints in {store} ({reason})") from None


def _is_postgres(store: str | Path) -> bool:
    return str(store).startswith(("postgresql://", "postgres://"))


def _pattern(episode_id: str) -> str:
    return episode_id.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "#%"


def episode_threads(store: str | Path, episode_id: str) -> list[str]:
    """Checkpoint threads of an episode (one per run settings), oldest first."""
    with _reading(store):
        if _is_postgres(store):
            import psycopg

            with psycopg.connect(str(store)) as db:
                rows = db.execute(
                    "SELECT thread_id, MIN(checkpoint_id) FROM checkpoints WHERE "
                    "checkpoint_ns = '' AND thread_id LIKE %s GROUP BY thread_id ORDER BY 2",
                    (_pattern(episode_id),),
                ).fetchall()
        else:
            # a file: URI, so that '#', '?' and '%' in the path are part of the path
            uri = Path(store).absolute().as_uri() + "?mode=ro"
            with closing(sqlite3.connect(uri, uri=True)) as sqlite:
                rows = sqlite.execute(
                    "SELECT thread_id, MIN(rowid) FROM checkpoints WHERE thread_id LIKE ? "
                    "ESCAPE '\\' GROUP BY thread_id ORDER BY 2",
                    (_pattern(episode_id),),
                ).fetchall()
    # the settings key never holds '#': "a#b#<key>" is a thread of episode "a#b", not of "a"
    return [row[0] for row in rows if "#" not in row[0][len(episode_id) + 1 :]]


@dataclass
class StoredRun:
    """One verification run read back from a store."""

    state: PlanState  # its latest state
    checkpoints: int  # how many checkpoints it has
    settings: RunSettings | None  # the settings it ran under (None for stores from before)
    started: str | None  # when its first checkpoint was written (ISO 8601)

    def label(self) -> str:
        """Judge, planner, mode and iteration cap, in one line."""
        if self.settings is None:
            return "settings not recorded"
        s = self.settings
        return ", ".join(
            [f"judge {s.judge}", f"planner {s.planner}", s.mode, f"cap {s.max_iterations}"]
        )

    def start_time(self) -> str:
        """When the run started, to the second, in UTC: `2026-11-25 09:14:03 UTC`."""
        if not self.started:
            return "not recorded"
        when = datetime.fromisoformat(self.started)
        if when.tzinfo is not None:
            when = when.astimezone(UTC)
        return when.strftime("%Y-%m-%d %H:%M:%S") + (" UTC" if when.tzinfo else "")


def load_history(store: str | Path, thread: str) -> StoredRun:
    """The latest state of a thread, its settings and how many checkpoints it has."""
    config: RunnableConfig = {"configurable": {"thread_id": thread}}
    with _reading(store):
        if _is_postgres(store):
            from langgraph.checkpoint.postgres import PostgresSaver

            with PostgresSaver.from_conn_string(str(store)) as postgres:
                postgres.serde = state_serializer()
                history = list(build_verifier(checkpointer=postgres).get_state_history(config))
        else:
            with SqliteSaver.from_conn_string(str(store)) as saver:
                saver.serde = state_serializer()
                history = list(build_verifier(checkpointer=saver).get_state_history(config))
    latest = history[0].values if history else {}
    settings = next(
        (m["settings"] for s in history if "settings" in (m := dict(s.metadata or {}))), None
    )
    return StoredRun(
        state=PlanState.model_validate(latest),
        checkpoints=len(history),
        settings=RunSettings.model_validate_json(settings) if isinstance(settings, str) else None,
        started=history[-1].created_at if history else None,
    )
