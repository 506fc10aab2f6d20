"""Secrets never stored or printed: URLs without their user info, secret parameters redacted,
and the values of the process's own secrets nowhere.

A base URL may carry credentials (`http://user:password@host/v1`) and a model parameter may be
a key (`--model-param api_key=...`, `default_headers={"Authorization": ...}`). What planverify
stores (results, journals, checkpoints, caches, exports) and prints (errors, progress) shows
such URLs without their user info and such parameters as `REDACTED`; the settings hash leaves
the parameters out (`planverify.records.result.RunSettings.key`).

The process's own secrets are the values of the environment variables declared with
`secret_variables` (the provider keys `planverify.llm.models` knows, a preset's `api_key_env`,
the server token): `scrub` replaces them, and the heads and tails of them that a truncated quote
leaves (`'sk-abc...xyz'`), in every text it is given, whatever put them there (an SDK's error
quoting its arguments, a server echoing a header). `install_log_redaction` holds every log
record of the process to the same rule, and `withheld` an exception that leaves it.

>>> public_url("http://user:pw@127.0.0.1:8000/v1?api_key=k&x=1")
'http://127.0.0.1:8000/v1?api_key=REDACTED&x=1'
>>> scrub("cannot reach https://me:pw@example.org/v1: refused")
'cannot reach https://example.org/v1: refused'
>>> [name for name in ("api_key", "max_tokens", "default_headers", "seed") if secret_name(name)]
['api_key', 'default_headers']
"""

from __future__ import annotations

import logging
import os
import re
import traceback
from collections.abc import Callable, Mapping
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

REDACTED = "REDACTED"  # what a secret value is replaced with
SERVER_TOKEN_ENV = "PLANVERIFY_SERVER_TOKEN"  # the bearer token of a planverify server
CLIENT_TOKENS_ENV = "PLANVERIFY_CLIENT_TOKENS"  # the server's other callers, NAME:TOKEN pairs
MIN_SECRET = 6  # shorter values are not redacted: replacing them would garble ordinary text
FRAGMENT = 10  # the shortest head or tail of a secret redacted on its own

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


_SECRET_VARIABLES: set[str] = {SERVER_TOKEN_ENV}


def secret_variables(*names: str) -> None:
    """Declare environment variables whose values are secrets (keys, tokens): `scrub` removes
    their values from every text from then on."""
    _SECRET_VARIABLES.update(names)


def secret_values(environ: Mapping[str, str] | None = None) -> list[str]:
    """The values of the declared secret variables that are set (read at each call: the
    environment may change), longest first."""
    env = os.environ if environ is None else environ
    values = {env.get(name, "").strip() for name in sorted(_SECRET_VARIABLES)}
    for entry in env.get(CLIENT_TOKENS_ENV, "").split(","):  # NAME:TOKEN pairs
        values.add(entry.partition(":")[2].strip())
    return sorted((v for v in values if len(v) >= MIN_SECRET), key=len, reverse=True)


def without_secret_values(text: str, secrets: list[str] | None = None) -> str:
    """Text with every secret value, and every head or tail of one at least `FRAGMENT`
    characters long, replaced by `REDACTED`.

    >>> without_secret_values("key sk-0123456789abcdef, quoted 'sk-0123456...6789abcdef'",
    ...                       ["sk-0123456789abcdef"])
    "key REDACTED, quoted 'REDACTED...REDACTED'"
    """
    secrets = secret_values() if secrets is None else secrets
    for secret in secrets:  # whole values first: another secret may share a head with one
        text = text.replace(secret, REDACTED)
    for secret in secrets:
        if len(secret) > FRAGMENT:
            text = _without_fragments(text, secret)
    return text


def _without_fragments(text: str, secret: str) -> str:
    """Text without the heads and tails of a secret that truncated quoting leaves."""
    spans: list[tuple[int, int]] = []
    head, tail = secret[:FRAGMENT], secret[-FRAGMENT:]
    start = text.find(head)
    while start >= 0:
        end = start + FRAGMENT
        while end < len(text) and end - start < len(secret) and text[end] == secret[end - start]:
            end += 1
        spans.append((start, end))
        start = text.find(head, end)
    end = text.find(tail)
    while end >= 0:
        start, inside = end, len(secret) - FRAGMENT
        while start > 0 and inside > 0 and text[start - 1] == secret[inside - 1]:
            start, inside = start - 1, inside - 1
        spans.append((start, end + FRAGMENT))
        end = text.find(tail, end + 1)
    for start, end in sorted(_merged(spans), reverse=True):
        text = text[:start] + REDACTED + text[end:]
    return text


def _merged(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    merged: list[tuple[int, int]] = []
    for start, end in sorted(spans):
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(end, merged[-1][1]))
        else:
            merged.append((start, end))
    return merged


def scrub(text: str) -> str:
    """Free text (an error message, a log line) without the process's secret values, and with
    every URL in it made public."""
    text = without_secret_values(text)
    if "://" not in text:
        return text
    return _URL.sub(lambda m: public_url(m[0]), text)


class RedactedError(RuntimeError):
    """An error whose text held a secret of the process: its type's name and its text with the
    secret values redacted (`withheld`)."""


def withheld(exc: BaseException) -> BaseException:
    """The exception itself when its text names no secret value, else a `RedactedError` with
    the redacted text (raise it `from None`: the original must not travel with it)."""
    text = str(exc)
    clean = scrub(text)
    if clean == text:
        return exc
    return RedactedError(f"{type(exc).__name__}: {clean}")


class SecretsFilter(logging.Filter):
    """Removes the process's secret values from a log record: its message and arguments (plain
    or a structlog event dict) and its traceback (formatted into the message when it held one)."""

    def filter(self, record: logging.LogRecord) -> bool:
        secrets = secret_values()
        if not secrets:
            return True
        if isinstance(record.msg, Mapping):
            record.msg = {k: _clean_value(v, secrets) for k, v in record.msg.items()}
        else:
            try:
                text = record.getMessage()
            except (TypeError, ValueError):  # a malformed call: the handler reports it
                return True
            clean = without_secret_values(text, secrets)
            if clean != text:
                record.msg, record.args = clean, ()
        if record.exc_info and record.exc_info[1] is not None:
            shown = "".join(traceback.format_exception(*record.exc_info))
            clean = without_secret_values(shown, secrets)
            if clean != shown:
                record.msg = f"{record.getMessage()}\n{clean.rstrip()}"
                record.args, record.exc_info, record.exc_text = (), None, None
        return True


def _clean_value(value: Any, secrets: list[str]) -> Any:
    return without_secret_values(value, secrets) if isinstance(value, str) else value


_INSTALLED: list[Callable[..., logging.LogRecord]] = []  # the record factory it wraps, once


def install_log_redaction() -> None:
    """Hold every log record the process makes, whatever logger and handler it goes to, to
    `SecretsFilter` (a record factory that filters each record as it is made; once)."""
    if _INSTALLED:
        return
    made = logging.getLogRecordFactory()
    secrets = SecretsFilter()

    def record(*args: Any, **kwargs: Any) -> logging.LogRecord:
        new = made(*args, **kwargs)
        secrets.filter(new)
        return new

    _INSTALLED.append(made)
    logging.setLogRecordFactory(record)


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
