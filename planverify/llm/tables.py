"""Process-wide tables of shared objects, keyed by settings, that never grow without bound.

Rate limits, concurrency gates and what was learned about a model server are shared by every
caller with the same key (provider, server URL, settings). A served process takes keys from
its runs, so a table could otherwise grow with every new value a run sends. `SharedTable` keeps
at most `size` entries: past that, the least recently used entries that are idle (nobody
waits on them, nothing is in flight) are dropped; one in use is never dropped, so sharing
holds for every caller that still needs it.

>>> table = SharedTable(lambda key: [key], size=2)
>>> a = table.get("a"); b = table.get("b"); c = table.get("c")
>>> table.get("c") is c, "a" in table, len(table)
(True, False, 2)
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")

TABLE_SIZE = 256  # entries a table keeps (more while all of them are in use)


class SharedTable(Generic[K, V]):
    """One object per key, made on first use; least recently used idle entries dropped first."""

    def __init__(
        self,
        make: Callable[[K], V],
        *,
        size: int = TABLE_SIZE,
        idle: Callable[[V], bool] = lambda value: True,
    ) -> None:
        self.make = make  # builds the object of a new key
        self.size = size  # entries kept when some are idle
        self.idle = idle  # whether an entry may be dropped
        self._entries: OrderedDict[K, V] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: K) -> V:
        """The object of `key` (made now if it is new, or was dropped)."""
        with self._lock:
            found = self._entries.get(key)
            if found is not None:
                self._entries.move_to_end(key)
                return found
            made = self._entries[key] = self.make(key)
            if len(self._entries) > self.size:
                self._shrink(keep=key)
            return made

    def _shrink(self, *, keep: K) -> None:
        """Drop idle entries, least recently used first, but never `keep` (just handed out)."""
        for key in [k for k, v in self._entries.items() if k != keep and self.idle(v)]:
            if len(self._entries) <= self.size:
                return
            del self._entries[key]

    def __contains__(self, key: object) -> bool:
        return key in self._entries

    def __len__(self) -> int:
        return len(self._entries)

    def values(self) -> list[V]:
        """The entries now, as a list (a snapshot)."""
        with self._lock:
            return list(self._entries.values())

    def clear(self) -> None:
        """Forget every entry (tests)."""
        with self._lock:
            self._entries.clear()
