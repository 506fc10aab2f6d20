"""How model calls go out: per-provider request and token rates, a timeout, and retries with
exponential backoff and full jitter on rate limits, server errors, timeouts and lost connections.

Limits are shared by every episode of a process that talks to the same provider (or the same
OpenAI-compatible server), so `--concurrency 64` never means 64 requests at once against a
30-requests-per-second quota.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from langchain_core.rate_limiters import InMemoryRateLimiter

T = TypeVar("T")

RETRYABLE_NAMES = frozenset(
    {
        "RateLimitError",
        "APITimeoutError",
        "APIConnectionError",
        "InternalServerError",
        "ServiceUnavailableError",
        "ResourceExhausted",
        "ServiceUnavailable",
        "DeadlineExceeded",
        "TooManyRequests",
    }
)


class ModelCallFailed(RuntimeError):
    """A model call that still failed after its retries (the graph does not retry it again)."""


def status_of(exc: BaseException) -> int | None:
    """The HTTP status an exception carries, if any (provider SDKs name it differently)."""
    for attribute in ("status_code", "status", "code", "http_status"):
        value = getattr(exc, attribute, None)
        if isinstance(value, int) and 100 <= value < 600:
            return value
    response = getattr(exc, "response", None)
    value = getattr(response, "status_code", None)
    return value if isinstance(value, int) else None


def retryable(exc: BaseException) -> bool:
    """Rate limits (429), server errors (5xx), timeouts and lost connections are worth retrying;
    other client errors (bad request, auth, not found) are not."""
    if isinstance(exc, TimeoutError | ConnectionError):
        return True
    status = status_of(exc)
    if status is not None:
        return status == 429 or status >= 500
    return type(exc).__name__ in RETRYABLE_NAMES


def retry_after(exc: BaseException) -> float | None:
    """Seconds a provider asked us to wait (a `Retry-After` header), if it said."""
    headers = getattr(getattr(exc, "response", None), "headers", None)
    if headers is None:
        return None
    try:
        value = headers.get("retry-after")
        return float(value) if value is not None else None
    except (TypeError, ValueError):
        return None


@dataclass
class TokenWindow:
    """Tokens spent in the last minute, against a tokens-per-minute budget."""

    per_minute: int  # the budget
    spent: deque[tuple[float, int]] = field(default_factory=deque)  # (time, tokens)
    clock: Callable[[], float] = time.monotonic  # replaced in tests

    def used(self) -> int:
        """Tokens counted in the last 60 seconds."""
        horizon = self.clock() - 60.0
        while self.spent and self.spent[0][0] <= horizon:
            self.spent.popleft()
        return sum(n for _, n in self.spent)

    def wait_for(self, tokens: int) -> float:
        """Seconds until `tokens` more fit in the budget (0 when they fit now)."""
        need = min(tokens, self.per_minute)
        if self.used() + need <= self.per_minute:
            return 0.0
        running, now = self.used(), self.clock()
        for stamp, n in self.spent:
            running -= n
            if running + need <= self.per_minute:
                return max(stamp + 60.0 - now, 0.0)
        return 60.0

    def add(self, tokens: int) -> None:
        """Count tokens now (negative to correct an estimate)."""
        self.spent.append((self.clock(), tokens))


@dataclass
class Limits:
    """The shared limits of one provider."""

    requests: InMemoryRateLimiter | None = None  # requests per second
    tokens: TokenWindow | None = None  # tokens per minute
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)  # serialises token bookkeeping


_LIMITS: dict[tuple[str, float | None, int | None], Limits] = {}


def limits_for(key: str, rps: float | None, tpm: int | None) -> Limits:
    """The limits shared by every caller of the same provider with the same settings."""
    found = _LIMITS.get((key, rps, tpm))
    if found is None:
        found = Limits(
            requests=InMemoryRateLimiter(
                requests_per_second=rps, check_every_n_seconds=0.02, max_bucket_size=max(1.0, rps)
            )
            if rps
            else None,
            tokens=TokenWindow(tpm) if tpm else None,
        )
        _LIMITS[(key, rps, tpm)] = found
    return found


@dataclass(frozen=True)
class CallPolicy:
    """Rate limits, timeout and retries for the model calls of one Judge or Planner."""

    provider: str = "default"  # whose limits apply (provider name, or the server's base URL)
    rps: float | None = None  # requests per second, None = no limit
    tpm: int | None = None  # tokens per minute, None = no limit
    timeout: float | None = 120.0  # seconds per call, None = none
    max_retries: int = 5  # retries after the first attempt
    base_delay: float = 1.0  # first backoff ceiling, doubled each retry
    max_delay: float = 60.0  # backoff ceiling
    sleep: Callable[[float], Awaitable[Any]] = asyncio.sleep  # replaced in tests

    async def call(
        self,
        make: Callable[[], Awaitable[T]],
        *,
        estimate: int = 0,
        spent: Callable[[T], int] | None = None,
    ) -> T:
        """Run `make()` under the limits; `estimate` is the call's expected tokens, and
        `spent(result)` its real count, used to correct the tokens-per-minute window."""
        shared = limits_for(self.provider, self.rps, self.tpm)
        attempt = 0
        while True:
            await self._admit(shared, estimate)
            try:
                if self.timeout is None:
                    result = await make()
                else:
                    async with asyncio.timeout(self.timeout):
                        result = await make()
            except Exception as exc:
                if not retryable(exc) or attempt >= self.max_retries:
                    if attempt:
                        raise ModelCallFailed(
                            f"{type(exc).__name__}: {exc} (after {attempt + 1} attempts)"
                        ) from exc
                    raise
                attempt += 1
                ceiling = min(self.max_delay, self.base_delay * 2 ** (attempt - 1))
                await self.sleep(retry_after(exc) or random.uniform(0, ceiling))
                continue
            if shared.tokens is not None and spent is not None:
                async with shared.lock:
                    shared.tokens.add(spent(result) - estimate)
            return result

    async def _admit(self, shared: Limits, estimate: int) -> None:
        if shared.requests is not None:
            await shared.requests.aacquire()
        if shared.tokens is None:
            return
        async with shared.lock:
            while (delay := shared.tokens.wait_for(estimate)) > 0:
                await self.sleep(delay)
            shared.tokens.add(estimate)


@dataclass(frozen=True)
class CallLimits:
    """User settings for model calls (`--rps`, `--tpm`, `--timeout`, `--max-retries`)."""

    rps: float | None = None  # requests per second per provider, None = no limit
    tpm: int | None = None  # tokens per minute per provider, None = no limit
    timeout: float | None = 120.0  # seconds per call
    max_retries: int = 5  # retries on rate limits, server errors and timeouts

    def policy(self, provider: str) -> CallPolicy:
        """The call policy of one provider under these settings."""
        return CallPolicy(
            provider=provider,
            rps=self.rps,
            tpm=self.tpm,
            timeout=self.timeout,
            max_retries=self.max_retries,
        )


def estimate_tokens(text: str, expected_output: int = 400) -> int:
    """A rough count for rate limiting: about four characters a token, plus the answer."""
    return len(text) // 4 + expected_output
