"""Token usage per role."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, SerializerFunctionWrapHandler, model_serializer


class TokenUsage(BaseModel):
    """Tokens spent by one role.

    Tokens of calls that timed out, were interrupted, or got an answer without a token count (a
    server that ignores `stream_options.include_usage`) are unknown: with `unknown_calls` above
    0, the token counts are a lower bound.
    """

    calls: int = 0  # model calls made
    input_tokens: int = 0  # prompt tokens
    output_tokens: int = 0  # completion tokens (reasoning included)
    unknown_calls: int = 0  # of `calls`, those whose tokens are not known (see above)

    @model_serializer(mode="wrap")
    def _omit_zero_unknown(self, handler: SerializerFunctionWrapHandler) -> Any:
        """Records without timed-out calls look as they did before the field existed."""
        data = handler(self)
        if isinstance(data, dict) and not data.get("unknown_calls"):
            data.pop("unknown_calls", None)
        return data

    @property
    def total(self) -> int:
        """Input and output tokens together."""
        return self.input_tokens + self.output_tokens

    def __add__(self, other: TokenUsage) -> TokenUsage:
        return TokenUsage(
            calls=self.calls + other.calls,
            input_tokens=self.input_tokens + other.input_tokens,
            output_tokens=self.output_tokens + other.output_tokens,
            unknown_calls=self.unknown_calls + other.unknown_calls,
        )


def unknown_note(unknown_calls: int) -> str:
    """What to add to a token count or cost when some calls' tokens are unknown.

    >>> unknown_note(0), unknown_note(2)
    ('', 'at least: 2 calls with tokens unknown (timed out, or not counted by the server)')
    """
    if not unknown_calls:
        return ""
    calls = "1 call" if unknown_calls == 1 else f"{unknown_calls} calls"
    return f"at least: {calls} with tokens unknown (timed out, or not counted by the server)"


def add_usage(left: dict[str, TokenUsage], right: dict[str, TokenUsage]) -> dict[str, TokenUsage]:
    """Reducer: sum token usage per role."""
    merged = dict(left)
    for role, usage in right.items():
        merged[role] = merged.get(role, TokenUsage()) + usage
    return merged
