"""A model response cache in SQLite, so a rerun of an evaluation costs nothing and gives the same
numbers. It plugs into LangChain's cache interface (`set_llm_cache`)."""

from __future__ import annotations

import hashlib
import sqlite3
import threading
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from langchain_core._api import LangChainBetaWarning
from langchain_core.caches import BaseCache
from langchain_core.load import dumps, loads
from langchain_core.messages import AIMessage, AIMessageChunk
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, Generation

CACHED_TYPES = (Generation, ChatGeneration, ChatGenerationChunk, AIMessage, AIMessageChunk)


class SQLiteCache(BaseCache):
    """Model answers keyed by (prompt, model settings), stored in one SQLite file."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._db = sqlite3.connect(self.path, check_same_thread=False)
        self._db.execute("CREATE TABLE IF NOT EXISTS answers (key TEXT PRIMARY KEY, value TEXT)")
        self._db.commit()
        self.hits = 0  # lookups answered from the file
        self.misses = 0  # lookups that went to the model

    @staticmethod
    def _key(prompt: str, llm_string: str) -> str:
        return hashlib.sha256(f"{llm_string}\x00{prompt}".encode()).hexdigest()

    def lookup(self, prompt: str, llm_string: str) -> Sequence[Generation] | None:
        with self._lock:
            row = self._db.execute(
                "SELECT value FROM answers WHERE key = ?", (self._key(prompt, llm_string),)
            ).fetchone()
        if row is None:
            self.misses += 1
            return None
        self.hits += 1
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", LangChainBetaWarning)
            # only generations and messages: a cache file must not instantiate anything else
            found: list[Generation] = loads(row[0], allowed_objects=CACHED_TYPES)
        return found

    def update(self, prompt: str, llm_string: str, return_val: Sequence[Generation]) -> None:
        with self._lock:
            self._db.execute(
                "INSERT OR REPLACE INTO answers VALUES (?, ?)",
                (self._key(prompt, llm_string), dumps(list(return_val))),
            )
            self._db.commit()

    def clear(self, **kwargs: Any) -> None:
        with self._lock:
            self._db.execute("DELETE FROM answers")
            self._db.commit()

    def close(self) -> None:
        """Close the file."""
        with self._lock:
            self._db.close()
