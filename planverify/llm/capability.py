"""What a model server can do, learned from its answers, and remembered for the process.

Servers that speak the OpenAI wire format differ: some take `response_format: json_schema`, some
only `json_object`, some no tools, some reject `temperature` or `seed` for a reasoning model. A
refusal of that kind is a capability answer, not a transient error: resending the same request
cannot succeed, whatever the status code (llama-cpp-python answers HTTP 500).
`planverify.llm.errors.refusal` tells such an error apart; `Learned` remembers per model and base URL
what worked and what did not, so later calls go straight to a request the server takes.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any

from planverify.llm.tables import SharedTable

# Output methods, in the order they are tried; "text" is the text protocol, always available.
METHODS = ("json_schema", "function_calling", "json_mode", "text")


@dataclass
class Learned:
    """What one model at one server was found to take."""

    method: str | None = None  # the output method that last worked
    failed: set[str] = field(default_factory=set)  # output methods refused or ignored
    dropped: set[str] = field(default_factory=set)  # request parameters refused

    def methods(self) -> list[str]:
        """The output methods to try, best first: the one that worked, else those not failed."""
        if self.method is not None:
            return [self.method] + [m for m in METHODS if m not in self.failed | {self.method}]
        return [m for m in METHODS if m not in self.failed]


# bounded: a served process meets model names and servers chosen by its runs
_LEARNED: SharedTable[tuple[str, str], Learned] = SharedTable(lambda key: Learned())
_LOCK = threading.Lock()  # episodes of several threads (one event loop each) share the records


def model_key(model: Any) -> tuple[str, str]:
    """Which model at which server: its name and base URL (a model object without a name is
    its own key)."""
    name = getattr(model, "model_name", None) or getattr(model, "model", None)
    where = next(
        (
            value
            for attr in ("openai_api_base", "groq_api_base", "base_url")
            if isinstance(value := getattr(model, attr, None), str) and value
        ),
        type(model).__name__,
    )
    if not isinstance(name, str) or not name:
        name = f"{type(model).__name__}@{id(model):x}"
    return name, where


def learned(key: tuple[str, str]) -> Learned:
    """What is known about a model at a server (an empty record the first time)."""
    return _LEARNED.get(key)


def learn(
    key: tuple[str, str],
    *,
    worked: str | None = None,
    failed: str | None = None,
    dropped: str | None = None,
) -> None:
    """Record an output method that worked or failed, or a parameter the server refused."""
    with _LOCK:
        record = _LEARNED.get(key)
        if worked is not None:
            record.method = worked
        if failed is not None:
            record.failed.add(failed)
            if record.method == failed:
                record.method = None
        if dropped is not None:
            record.dropped.add(dropped)


def forget() -> None:
    """Forget everything learned (tests)."""
    with _LOCK:
        _LEARNED.clear()
