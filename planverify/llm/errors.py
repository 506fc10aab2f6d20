"""What a failed model call means: retry it, give up, or learn that the server refuses a request.

Provider errors are recognised by shape, without importing any provider package: an HTTP status
(`status_code`, `status`, `code`, `response.status_code`), LangChain's `ModelError.is_retryable`
(what langchain-google-genai raises), or the SDK's class name; wrappers are looked through via
`raise ... from`. A refusal of an output method or a parameter is matched by its text (the SDKs
put the server's message in it): a refusal word ("not supported", "Input should be",
"unrecognized", ...) together with what was refused. Gateway errors (502-504) and 429 are never
refusals.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator

RETRYABLE_NAMES = frozenset(
    {
        # openai, groq (and other Stainless-generated SDKs)
        "RateLimitError",
        "APITimeoutError",
        "APIConnectionError",
        "InternalServerError",
        "ServiceUnavailableError",
        # google-api-core
        "ResourceExhausted",
        "ServiceUnavailable",
        "DeadlineExceeded",
        "TooManyRequests",
        # httpx and aiohttp, when an SDK lets them through
        "ConnectError",
        "ConnectTimeout",
        "ReadTimeout",
        "WriteTimeout",
        "PoolTimeout",
        "ReadError",
        "RemoteProtocolError",
        "ServerDisconnectedError",
        "ClientConnectorError",
    }
)


class ModelCallFailed(RuntimeError):
    """A model call that still failed after its retries (the graph does not retry it again)."""

    model: str = ""  # the model's name, as in the run settings
    unknown_calls: int = 0  # attempts that timed out: their tokens are unknown


class ProviderUnreachable(ModelCallFailed):
    """The provider or server could not be connected to at all, even after retries; later calls
    to it fail at once with this error, and a batch stops starting new episodes."""

    def __init__(self, provider: str, message: str) -> None:
        super().__init__(f"cannot reach {provider}: {message}")
        self.provider = provider


class Interrupted(RuntimeError):
    """A streamed answer that ended without a finish reason: the server stopped it (for another
    request), so it is incomplete; worth retrying."""


CONNECTION_NAMES = frozenset({"ConnectError", "ClientConnectorError", "gaierror"})


def unreachable(exc: BaseException) -> bool:
    """Whether an error means no connection could be made at all (refused, unknown host), as
    opposed to a slow or failing server that was reached."""
    for error in causes(exc):
        name = type(error).__name__
        if name == "APITimeoutError":
            return False
        if isinstance(error, ConnectionRefusedError) or name in CONNECTION_NAMES:
            return True
    return False


def unreachable_provider(exc: BaseException) -> ProviderUnreachable | None:
    """The `ProviderUnreachable` behind an error, if there is one."""
    return next((e for e in causes(exc) if isinstance(e, ProviderUnreachable)), None)


def causes(exc: BaseException) -> Iterator[BaseException]:
    """The exception and the ones it was raised from (`raise X from e`), innermost last."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen and len(seen) < 10:
        seen.add(id(current))
        yield current
        current = current.__cause__


def status_of(exc: BaseException) -> int | None:
    """The HTTP status an exception carries, if any (provider SDKs name it differently)."""
    for attribute in ("status_code", "status", "code", "http_status"):
        value = getattr(exc, attribute, None)
        if isinstance(value, int) and not isinstance(value, bool) and 100 <= value < 600:
            return value
    response = getattr(exc, "response", None)
    value = getattr(response, "status_code", None)
    return value if isinstance(value, int) and 100 <= value < 600 else None


def retryable(exc: BaseException) -> bool:
    """Rate limits (429), server errors (5xx), timeouts and lost connections are worth retrying;
    other client errors (bad request, auth, not found) are not, nor a call already given up on,
    nor a server refusing an output method or a parameter, whatever its status."""
    if refusal(exc):
        return False
    for error in causes(exc):
        if isinstance(error, ModelCallFailed):
            return False
        if isinstance(error, TimeoutError | ConnectionError | Interrupted):
            return True
        status = status_of(error)
        if status is not None:
            return status == 429 or status >= 500
        if getattr(error, "is_retryable", None) is True:  # langchain_core ModelError
            return True
        if type(error).__name__ in RETRYABLE_NAMES:
            return True
    return False


TIMEOUT_NAMES = frozenset({"APITimeoutError", "ReadTimeout", "DeadlineExceeded"})


def timed_out(exc: BaseException) -> bool:
    """Whether an attempt ran out of time: the server may have spent tokens on it anyway."""
    return any(
        isinstance(e, TimeoutError) or type(e).__name__ in TIMEOUT_NAMES for e in causes(exc)
    )


def interrupted(exc: BaseException) -> bool:
    """Whether an attempt's streamed answer was interrupted by the server (see `Interrupted`)."""
    return any(isinstance(e, Interrupted) for e in causes(exc))


def overloaded(exc: BaseException) -> bool:
    """Whether an error says the server has too much to do: a timeout, 429, 503 or 504."""
    if timed_out(exc):
        return True
    return any(status_of(e) in (429, 503, 504) for e in causes(exc))


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
