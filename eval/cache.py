"""A model response cache in one SQLite file, through LangChain's own cache interface.

`SQLiteCache` is a `langchain_core.caches.BaseCache`: a chat model given it (`model.cache =
cache`, or `init_chat_model(..., cache=cache)`) looks every request up by its prompt and its
settings before calling the provider and stores the answer after. A rerun of an evaluation
therefore makes no model call and gives the same numbers. Offline judges make no model calls
and need no cache. The settings (LangChain's `llm_string`: the model's constructor arguments,
which can hold a server URL with credentials or a header with a key) are stored as their
SHA-256 digest, never as text.

>>> import tempfile
>>> from langchain_core.outputs import Generation
>>> with tempfile.TemporaryDirectory() as folder:
...     cache = SQLiteCache(Path(folder) / "cache.sqlite")
...     cache.update("prompt", "model", [Generation(text="hello")])
...     found = cache.lookup("prompt", "model")
...     missing = cache.lookup("prompt", "another model")
...     cache.close()
>>> found[0].text, missing, (cache.hits, cache.misses)
('hello', None, (1, 1))
"""

from __future__ import annotations

import hashlib
import sqlite3
import threading
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TypeVar

from langchain_core._api import LangChainBetaWarning
from langchain_core.caches import BaseCache
from langchain_core.language_models import BaseChatModel
from langchain_core.load import dumps, loads
from langchain_core.messages import AIMessage, AIMessageChunk
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, Generation

__all__ = ["DEFAULT_CACHE", "SQLiteCache", "with_cache"]

DEFAULT_CACHE = Path(".planverify") / "model-cache.sqlite"  # relative to the working directory

# What a cache file may turn back into objects: answers only, never arbitrary classes.
_ALLOWED = (Generation, ChatGeneration, ChatGenerationChunk, AIMessage, AIMessageChunk)

M = TypeVar("M")


class SQLiteCache(BaseCache):
    """Model answers keyed by (prompt, llm_string), in one SQLite file; safe across threads.

    LangChain's async lookups run the sync methods in a thread pool, hence the lock. Every
    update is committed at once, so an interrupted run keeps the answers it paid for.
    """

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)  # the SQLite file, created (with its folder) on first use
        self.hits = 0  # lookups answered from the file
        self.misses = 0  # lookups that went on to the model
        self._lock = threading.Lock()
        self._conn: sqlite3.Connection | None = None

    def _db(self) -> sqlite3.Connection:
        """The open connection (call with the lock held); a run that never asks a model
        leaves no file behind."""
        if self._conn is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            conn = sqlite3.connect(self.path, check_same_thread=False)
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute(
                "CREATE TABLE IF NOT EXISTS answers ("
                " llm_string TEXT NOT NULL, prompt TEXT NOT NULL, answer TEXT NOT NULL,"
                " PRIMARY KEY (llm_string, prompt))"
            )
            conn.commit()
            self._conn = conn
        return self._conn

    def lookup(self, prompt: str, llm_string: str) -> Sequence[Generation] | None:
        """The stored answer to `prompt` under the model settings `llm_string`, or None."""
        with self._lock:
            row = (
                self._db()
                .execute(
                    "SELECT answer FROM answers WHERE llm_string = ? AND prompt = ?",
                    (_digest(llm_string), prompt),
                )
                .fetchone()
            )
            if row is None:
                self.misses += 1
                return None
            self.hits += 1
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", LangChainBetaWarning)
            found: list[Generation] = loads(row[0], allowed_objects=_ALLOWED)
        return found

    def update(self, prompt: str, llm_string: str, return_val: Sequence[Generation]) -> None:
        """Store the answer to `prompt` under the model settings `llm_string`."""
        answer = dumps(list(return_val))
        with self._lock:
            db = self._db()
            db.execute(
                "INSERT OR REPLACE INTO answers VALUES (?, ?, ?)",
                (_digest(llm_string), prompt, answer),
            )
            db.commit()

    def clear(self, **kwargs: Any) -> None:
        """Forget every answer."""
        with self._lock:
            db = self._db()
            db.execute("DELETE FROM answers")
            db.commit()

    def __len__(self) -> int:
        with self._lock:
            count: int = self._db().execute("SELECT COUNT(*) FROM answers").fetchone()[0]
        return count

    def close(self) -> None:
        """Close the file (using the cache again reopens it)."""
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None


def _digest(llm_string: str) -> str:
    """What the file keeps of a model's settings: a digest, which may hold no secret."""
    return "sha256:" + hashlib.sha256(llm_string.encode()).hexdigest()


def with_cache(model: M, cache: BaseCache | None) -> M:
    """A copy of a chat model that uses `cache`; anything else (or no cache) as it is.

    The copy leaves the caller's model untouched (a shallow copy: a fake model's scripted
    replies are shared with it).
    """
    if cache is None or not isinstance(model, BaseChatModel):
        return model
    copy: M = model.model_copy(update={"cache": cache})
    return copy
