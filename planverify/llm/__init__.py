"""How model calls go out: model specs and presets, request parameters, call policy (rate limits,
retries, timeouts), what failed calls mean, output methods the server takes, adaptive concurrency
and costs.

May import `records` and `eventloop` only.
"""
