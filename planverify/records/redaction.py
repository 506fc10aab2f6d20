"""Secrets never stored or printed: URLs without their user info, secret parameters redacted.

A base URL may carry credentials (`http://user:password@host/v1`) and a model parameter may be
a key (`--model-param api_key=...`, `default_headers={"Authorization": ...}`). What planverify
stores (results, journals, checkpoints, caches, exports) and prints (errors, progress) shows
such URLs without their user info and such parameters as `REDACTED`; the settings hash leaves
the parameters out (`planverify.records.result.RunSettings.key`).

>>> public_url("http://user:pw@127.0.0.1:8000/v1?api_key=k&x=1")
'http://127.0.0.1:8000/v1?api_key=REDACTED&x=1'
>>> scrub("cannot reach https://me:pw@example.org/v1: refused")
'cannot reach https://example.org/v1: refused'
>>> [name for name in ("api_key", "max_tokens", "default_headers", "seed") if secret_name(name)]
['api_key', 'default_headers']
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

REDACTED = "REDACTED"  # what a secret value is replaced with

# Words that make a parameter's name a secret's. Whole words of the name only: `max_tokens`
# (words max, tokens) is no secret, `access_token` and `api_key` are.
SECRET_WORDS = frozenset(
    {
        "key",
        "apikey",
        "token",
        "password",
        "passwd",
        "authorization",
        "auth",
        "secret",
        "header",
        "headers",
        "credential",
        "credentials",
        "cookie",
    }
)
_WORD = re.compile(r"[A-Z]?[a-z0-9]+|[A-Z]+(?![a-z])")
_URL = re.compile(r"\b[a-zA-Z][a-zA-Z0-9+.-]*://[^\s'\"<>()\[\]{}]+")


def name_words(name: str) -> set[str]:
    """The lower-case words of a parameter name (`openai_api_key`, `defaultHeaders`, `X-Api-Key`).

    >>> sorted(name_words("openaiApiKey")), sorted(name_words("X-Api-Key"))
    (['api', 'key', 'openai'], ['api', 'key', 'x'])
    """
    return {word.lower() for word in _WORD.findall(name)}


def secret_name(name: str) -> bool:
    """Whether a parameter's name says its value is a secret (a key, token, password, header)."""
    return not SECRET_WORDS.isdisjoint(name_words(name))


def public_url(url: str) -> str:
    """A URL without user info, and with the values of secret-named query parameters redacted
    (the URL as it is when there is nothing to remove or it does not parse)."""
    try:
        parts = urlsplit(url)
        host = parts.hostname
        port = parts.port
    except ValueError:
        return url
    if not parts.scheme or host is None:
        return url
    netloc = parts.netloc
    if "@" in netloc:
        netloc = f"[{host}]" if ":" in host else host
        if port is not None:
            netloc += f":{port}"
    query = parts.query
    if query:
        pairs = parse_qsl(query, keep_blank_values=True)
        if any(secret_name(k) for k, _ in pairs):
            query = urlencode([(k, REDACTED if secret_name(k) else v) for k, v in pairs])
    if (netloc, query) == (parts.netloc, parts.query):
        return url
    return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))


def scrub(text: str) -> str:
    """Free text (an error message, a log line) with every URL in it made public."""
    if "://" not in text:
        return text
    return _URL.sub(lambda m: public_url(m[0]), text)


def redacted(params: Mapping[str, Any]) -> dict[str, Any]:
    """Parameters with secret-named values replaced by `REDACTED`, also inside nested mappings
    (`model_kwargs`, `extra_body`), and URLs made public."""
    return {str(name): _redact(str(name), value) for name, value in params.items()}


def _redact(name: str, value: Any) -> Any:
    if secret_name(name):
        return REDACTED
    if isinstance(value, Mapping):
        return redacted(value)
    if isinstance(value, str):
        return scrub(value)
    return value


def without_secrets(params: Mapping[str, Any]) -> dict[str, Any]:
    """Parameters without the secret-named ones (at any depth): what the settings hash reads."""
    return {
        str(name): without_secrets(value) if isinstance(value, Mapping) else value
        for name, value in params.items()
        if not secret_name(str(name))
    }
