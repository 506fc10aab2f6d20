"""Token usage per role."""

from __future__ import annotations

from pydantic import BaseModel


class TokenUsage(BaseModel):
    """Tokens spent by one role."""

    calls: int = 0  # model calls made
    input_tokens: int = 0  # prompt tokens
    output_tokens: int = 0  # completion tokens (reasoning included)

    @property
    def total(self) -> int:
        """Input and output tokens together."""
        return self.input_tokens + self.output_tokens

    def __add__(self, other: TokenUsage) -> TokenUsage:
        return TokenUsage(
            calls=self.calls + other.calls,
            input_tokens=self.input_tokens + other.input_tokens,
            output_tokens=self.output_tokens + other.output_tokens,
        )


def add_usage(left: dict[str, TokenUsage], right: dict[str, TokenUsage]) -> dict[str, TokenUsage]:
    """Reducer: sum token usage per role."""
    merged = dict(left)
    for role, usage in right.items():
        merged[role] = merged.get(role, TokenUsage()) + usage
    return merged
