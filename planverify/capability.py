"""What a model server can do, learned from its answers, and remembered for the process.

Servers that speak the OpenAI wire format differ: some take `response_format: json_schema`, some
only `json_object`, some no tools, some reject `temperature` or `seed` for a reasoning model. A
refusal of that kind is a capability answer, not a transient error: resending the same request
cannot succeed, whatever the status code (llama-cpp-python answers HTTP 500). `refusal` tells
such an error apart; `Learned` remembers per model and base URL what worked and what did not, so
later calls go straight to a request the server takes.

Errors are matched by their text (the SDKs put the server's message in it): a refusal word
("not supported", "Input should be", "unrecognized", ...) together with what was refused (the
output method or a parameter's name). Gateway errors (502-504) and 429 are never refusals.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from planverify.calls import causes, status_of
from planverify.tables import SharedTable

# Output methods, in the order they are tried; "text" is the text protocol, always available.
METHODS = ("json_schema", "function_calling", "json_mode", "text")

_REFUSED = re.compile(
    r"not supported|unsupported|(?:does|do|is) not support|doesn'?t support|not available|"
    r"input should be|not allowed|not permitted|not implemented|unrecogni[sz]ed|unknown|"
    r"invalid|extra (?:inputs|fields)|unexpected|cannot be used|only the default",
    re.I,
)
_METHOD_WORDS = {
    "json_schema": re.compile(r"response_format|json_schema|structured output|guided", re.I),
    "function_calling": re.compile(r"\btools?\b|tool_choice|tool.call|function.call", re.I),
    "json_mode": re.compile(r"response_format|json_object|json mode", re.I),
}
# the names a provider may use for a parameter we sent under another name
_ALIASES = {"max_tokens": ("max_tokens", "max_completion_tokens", "max_output_tokens")}
_TRANSIENT = frozenset({408, 429, 502, 503, 504})


def _refusing(exc: BaseException) -> BaseException | None:
    """The error in the chain that reads like a refusal of the request's content, if any."""
    for error in causes(exc):
        status = status_of(error)
        if status is not None and (status < 400 or status in _TRANSIENT):
            return None
        if status is not None and _REFUSED.search(str(error)):
            return error
    return None


def refusal(exc: BaseException) -> bool:
    """Whether an error is a server refusing an output method or a request parameter (never
    worth retrying as it is)."""
    error = _refusing(exc)
    if error is None:
        return False
    text = str(error)
    words = [*_METHOD_WORDS.values(), re.compile(r"param", re.I)]
    return any(w.search(text) for w in words) or getattr(error, "param", None) is not None


def refuses_method(exc: BaseException, method: str) -> bool:
    """Whether an error refuses the output method a request used."""
    error = _refusing(exc)
    words = _METHOD_WORDS.get(method)
    return error is not None and words is not None and words.search(str(error)) is not None


def refused_parameter(exc: BaseException, sent: Iterable[str]) -> str | None:
    """The parameter (one of `sent`) an error refuses, if it names one."""
    error = _refusing(exc)
    if error is None:
        return None
    named = getattr(error, "param", None)
    text = str(error)
    for name in sent:
        for alias in _ALIASES.get(name, (name,)):
            if named == alias or re.search(rf"(?<![\w.]){re.escape(alias)}(?!\w)", text):
                return name
    return None


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
