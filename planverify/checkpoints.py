"""Reading verification runs back from a SQLite checkpoint file."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.sqlite import SqliteSaver

from planverify.graphs.graph import build_verifier
from planverify.graphs.state import PlanState
from planverify.serde import state_serializer


def episode_threads(path: Path, episode_id: str) -> list[str]:
    """Checkpoint threads of an episode (one per run settings), oldest first."""
    with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as db:
        rows = db.execute(
            "SELECT thread_id, MIN(rowid) FROM checkpoints WHERE thread_id LIKE ? ESCAPE '\\' "
            "GROUP BY thread_id ORDER BY 2",
            (episode_id.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "#%",),
        ).fetchall()
    # the settings key never holds '#': "a#b#<key>" is a thread of episode "a#b", not of "a"
    return [row[0] for row in rows if "#" not in row[0][len(episode_id) + 1 :]]


def load_history(path: Path, thread: str) -> tuple[PlanState, int]:
    """The latest state of a thread and how many checkpoints it has."""
    with SqliteSaver.from_conn_string(str(path)) as saver:
        saver.serde = state_serializer()
        graph = build_verifier(checkpointer=saver)
        config: RunnableConfig = {"configurable": {"thread_id": thread}}
        history = list(graph.get_state_history(config))
        latest = history[0].values if history else {}
    return PlanState.model_validate(latest), len(history)
