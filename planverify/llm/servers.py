"""Model-server URLs as the model clients read them: parsed strictly, and matched by prefix.

An allow-list entry (`Prefix`) is a scheme, host, port and path prefix; a URL falls under it
when it names the same server and a path at or below the prefix, whole segments only.
"""

from __future__ import annotations

from dataclasses import dataclass

import httpx

_PORTS = {"http": 80, "https": 443}


@dataclass(frozen=True)
class Prefix:
    """One entry of the allow-list: a scheme, host and port, and a path prefix."""

    scheme: str  # http or https
    host: str  # lower-case host name or address
    port: int  # the port, the scheme's default when not written
    path: str  # path prefix without a trailing slash ("" for the whole server)

    @classmethod
    def parse(cls, text: str) -> Prefix:
        """An allow-list entry (`ValueError` when it is not a plain http(s) URL)."""
        url = plain_url(text)
        return cls(url.scheme, url.host, url.port or _PORTS[url.scheme], url.path.rstrip("/"))

    def covers(self, url: httpx.URL) -> bool:
        """Whether a parsed URL is this server, at this path or below it."""
        return (
            (url.scheme, url.host, url.port or _PORTS.get(url.scheme))
            == (self.scheme, self.host, self.port)
        ) and (url.path.rstrip("/") == self.path or url.path.startswith(self.path + "/"))


def plain_url(text: str) -> httpx.URL:
    """An http(s) URL with a host, parsed as the model clients parse it (httpx), without user
    info, query, fragment or escapes that could make two parsers disagree on where it goes."""
    if any(c in text for c in "\\%") or any(c.isspace() or ord(c) < 32 for c in text):
        raise ValueError("it has escapes, backslashes or spaces")
    try:
        url = httpx.URL(text)
    except httpx.InvalidURL as exc:
        raise ValueError(str(exc)) from None
    if url.scheme not in _PORTS or not url.host:
        raise ValueError("it is not an http:// or https:// URL with a host")
    if url.userinfo:
        raise ValueError("it carries user info (credentials belong to the operator)")
    if url.query or url.fragment:
        raise ValueError("it has a query or fragment")
    return url


def server_key(provider: str) -> str:
    """The name a provider's shared limits go by: a provider name as it is, a URL as one
    spelling of its server and path (scheme and host in lower case, the port written, no user
    info, no trailing slash), so that `.../v1`, `.../v1/` and `:80` share their limits.

    >>> server_key("HTTP://Example.org/v1/"), server_key("http://example.org:80/v1")
    ('http://example.org:80/v1', 'http://example.org:80/v1')
    >>> server_key("openai")
    'openai'
    """
    if "://" not in provider:
        return provider
    try:
        url = httpx.URL(provider)
    except httpx.InvalidURL:
        return provider
    port = url.port or _PORTS.get(url.scheme)
    if url.scheme not in _PORTS or not url.host or port is None:
        return provider
    host = f"[{url.host}]" if ":" in url.host else url.host
    return f"{url.scheme}://{host}:{port}{url.path.rstrip('/')}"


def entry_key(prefix: Prefix) -> str:
    """The name of the shared limits of every server URL an allow-list entry covers."""
    host = f"[{prefix.host}]" if ":" in prefix.host else prefix.host
    return f"{prefix.scheme}://{host}:{prefix.port}{prefix.path}"
