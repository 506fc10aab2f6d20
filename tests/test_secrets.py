"""Secrets are never stored or printed: a password in `--base-url` and keys given with
`--model-param` appear in no output of any command (results, the `.partial` journal,
checkpoints, the model cache, exports, the dataset card, the review site, the eval report,
stdout and stderr), while the requests still carry them. The model server is a loopback fake
(`tests/fake_openai.py`)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from planverify.cli import app
from planverify.records.redaction import REDACTED
from planverify.records.result import VerificationResult

from .fake_openai import FakeOpenAI, Reply

pytest.importorskip("langchain_openai", reason="the openai integration is not installed")

SECRET = "pw-never-stored-91c4"  # the base URL's password, and the keys given as parameters
STEP = ["Driver.Move(1.0)"]
FINE = "ACTION: 1. Driver.Move(1.0)\nANNOTATION: the plan needs it"
PLANVERIFY = Path(sys.executable).parent / "planverify"


def with_secrets(base_url: str) -> list[str]:
    """Model options carrying the secret three ways."""
    return [
        "--judge",
        "openai:m",
        "--base-url",
        base_url.replace("http://", f"http://operator:{SECRET}@"),
        "--model-param",
        f"api_key={SECRET}",
        "--model-param",
        json.dumps({"X-Extra": SECRET}).join(("default_headers=", "")),
    ]


def everything_in(folder: Path) -> str:
    """Every file under a folder as text: raw bytes, checkpoints decoded (they are compressed)
    and Parquet tables read back."""
    from langgraph.checkpoint.sqlite import SqliteSaver

    from planverify.stores.serde import state_serializer

    texts = []
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        texts.append(path.read_bytes().decode("utf-8", errors="replace"))
        if path.name == "checkpoints.sqlite":
            with SqliteSaver.from_conn_string(str(path)) as saver:
                saver.serde = state_serializer()
                texts += [repr(item) for item in saver.list(None)]
        if path.suffix == ".parquet":
            import pyarrow.parquet as pq

            texts.append(json.dumps(pq.read_table(path).to_pylist(), default=str))
    return "\n".join(texts)


def test_a_secret_appears_in_no_output_of_any_command(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "OPENAI_API_KEY"):
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.lower(), raising=False)
    episodes = tmp_path / "episodes.jsonl"
    lines = [{"id": name, "goal": "Go.", "actions": STEP} for name in ("first", "second")]
    episodes.write_text("".join(json.dumps(e) + "\n" for e in lines), encoding="utf-8")
    annotated = tmp_path / "annotated.jsonl"
    label = {"type": "REMOVE", "index": 0, "error": "detour", "reason": "not needed"}
    annotated.write_text(json.dumps({**lines[0], "labels": [label]}) + "\n", encoding="utf-8")
    output, partial = tmp_path / "results.jsonl", tmp_path / "results.jsonl.partial"
    release = threading.Event()
    calls: list[dict[str, Any]] = []

    def respond(body: dict[str, Any]) -> Reply:
        calls.append(body)
        if len(calls) == 2:  # the second episode waits until the journal has been read
            release.wait(timeout=120)
        return Reply(content=FINE)

    printed: list[str] = []
    journal = ""
    with FakeOpenAI(respond, slots=2) as server:
        command = [str(PLANVERIFY), "verify", str(episodes), *with_secrets(server.base_url)]
        command += ["--concurrency", "1", "--output", str(output)]
        env = {**os.environ, "NO_PROXY": "127.0.0.1,localhost", "HOME": str(tmp_path)}
        with subprocess.Popen(
            command, cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE
        ) as verify:
            waited = time.monotonic() + 120
            while not journal.strip() and time.monotonic() < waited and verify.poll() is None:
                journal = partial.read_text(encoding="utf-8") if partial.exists() else ""
                time.sleep(0.1)
            release.set()
            stdout, stderr = verify.communicate(timeout=120)
        assert verify.returncode == 0, stderr.decode()
        assert journal.strip(), "the journal was read while the second episode ran"
        printed += [stdout.decode(), stderr.decode(), journal]
        headers = [h for _, h in server.arrivals]

        runner = CliRunner()
        commands = [
            ["show", "first"],
            ["export", str(output), "--episodes", str(episodes), "-o", "clean.jsonl"],
            ["export", str(output), "--episodes", str(episodes), "--parquet", "-o", "dataset"],
            ["review", str(output), "--episodes", str(episodes), "--html", "site"],
            ["eval", str(annotated), *with_secrets(server.base_url), "--report", "report"],
            ["eval", str(annotated), *with_secrets(server.base_url), "--report", "again"],
        ]
        for args in commands:
            done = runner.invoke(app, args)
            assert done.exit_code == 0, (args[0], done.output)
            printed += [done.stdout, done.stderr]
        assert "0 model calls" in done.stdout, "the second eval was answered from the cache"
    offline = ["--max-retries", "0", "--no-checkpoint", "-o", "down.jsonl"]
    down = runner.invoke(app, ["verify", str(episodes), *with_secrets(server.base_url), *offline])
    assert down.exit_code == 1 and "cannot reach" in down.stderr
    printed += [down.stdout, down.stderr]

    assert any(SECRET in str(h) for h in headers), "the requests carried the secret"
    results = [VerificationResult.model_validate_json(x) for x in output.read_text().splitlines()]
    settings = results[0].settings
    assert settings is not None and settings.base_url == server.base_url
    assert settings.models["judge"]["api_key"] == REDACTED
    assert settings.models["judge"]["default_headers"] == REDACTED
    assert (tmp_path / ".planverify" / "checkpoints.sqlite").is_file()
    assert (tmp_path / ".planverify" / "model-cache.sqlite").is_file()
    assert (tmp_path / "dataset" / "README.md").is_file() and (tmp_path / "site").is_dir()
    leaks = [text for text in [*printed, everything_in(tmp_path)] if SECRET in text]
    assert not leaks, "the secret was stored or printed"


def test_secret_parameters_are_left_out_of_the_settings_hash() -> None:
    from planverify.graphs.context import VerifierContext

    def key(**params: Any) -> str:
        return VerifierContext(judge="openai:m", model_params=params).settings().key

    assert key(api_key="one", seed=7) == key(api_key="two", seed=7) == key(seed=7)
    assert key(seed=7) != key(seed=8)
    with_url = VerifierContext(judge="openai:m", base_url=f"http://me:{SECRET}@h:1/v1")
    assert (
        with_url.settings().key
        == VerifierContext(judge="openai:m", base_url="http://h:1/v1").settings().key
    )


# ------------------------------------------------- the process's own keys, in any text

KEY = "sk-own-key-of-the-process-5e0f1c"  # longer than pydantic's quote of an argument
SHORT_KEY = "sk-short-5e0f"  # short enough to be quoted whole


def leaks(text: str, secret: str) -> bool:
    """Whether text shows a secret, whole or any 10 characters of it in a row."""
    return any(secret[i : i + 10] in text for i in range(len(secret) - 9))


@pytest.mark.parametrize("key", [KEY, SHORT_KEY])
def test_a_parameter_the_model_class_refuses_is_one_line_without_the_key(
    monkeypatch: pytest.MonkeyPatch, key: str
) -> None:
    from planverify.llm.models import ModelSpecError, load_chat_model, parse_spec

    monkeypatch.setenv("OPENAI_API_KEY", key)
    spec = parse_spec("openai:m", base_url="http://127.0.0.1:9/v1")
    with pytest.raises(ModelSpecError) as refused:
        load_chat_model(spec, model_kwargs={"model": "x"}, seed=1)
    message = str(refused.value)
    assert (
        message == "openai:m refuses its model parameters: Value error, Found model supplied twice."
    )
    assert load_chat_model(spec).openai_api_key.get_secret_value() == key  # type: ignore[attr-defined]


def test_configured_secret_values_leave_no_text(monkeypatch: pytest.MonkeyPatch) -> None:
    from planverify.llm.models import presets
    from planverify.records.redaction import scrub, withheld
    from planverify.records.result import describe_error

    token, deepseek = "token-of-the-server-77ab", "sk-deepseek-of-the-operator-1f"
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.setenv("PLANVERIFY_SERVER_TOKEN", token)
    monkeypatch.setenv("DEEPSEEK_API_KEY", deepseek)
    assert any(entry.get("api_key_env") == "DEEPSEEK_API_KEY" for entry in presets().values())
    text = f"401 for Bearer {KEY} and {token}; echoed {deepseek}; quoted '{KEY[:12]}...{KEY[-11:]}'"
    shown = scrub(text)
    assert not any(leaks(shown, secret) for secret in (KEY, token, deepseek)), shown
    assert shown.startswith("401 for Bearer REDACTED and REDACTED; echoed REDACTED")
    error = ValueError(text)
    assert not leaks(describe_error(error), KEY)
    assert withheld(ValueError("nothing secret")).args == ("nothing secret",)
    hidden = withheld(error)
    assert type(hidden).__name__ == "RedactedError" and str(hidden).startswith("ValueError: 401")
    assert not leaks(str(hidden), KEY)


def test_log_records_carry_no_secret_value(monkeypatch: pytest.MonkeyPatch) -> None:
    import io
    import logging

    from planverify.records.redaction import install_log_redaction

    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    install_log_redaction()
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    logger = logging.getLogger("planverify.tests.secrets")
    logger.addHandler(handler)
    logger.propagate = False
    try:
        logger.warning("sent %s", KEY)
        logger.warning({"event": f"structured {KEY}", "status": 401})
        try:
            raise ValueError(f"refused {KEY}")
        except ValueError:
            logger.exception("the call failed")
    finally:
        logger.removeHandler(handler)
    shown = stream.getvalue()
    assert "sent REDACTED" in shown and "structured REDACTED" in shown
    assert "ValueError: refused REDACTED" in shown and not leaks(shown, KEY), shown


def test_an_error_record_of_a_served_run_is_scrubbed(monkeypatch: pytest.MonkeyPatch) -> None:
    from planverify.graphs.context import VerifierContext
    from planverify.graphs.served import error_record

    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    record = error_record({"actions": STEP}, VerifierContext(), f"failed with {KEY}")
    assert record["error"] == "failed with REDACTED"


def test_cli_a_parameter_the_model_class_refuses_is_a_usage_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", SHORT_KEY)
    source = tmp_path / "in.jsonl"
    source.write_text(json.dumps({"id": "a", "actions": STEP}) + "\n", encoding="utf-8")
    command = ["verify", str(source), "--no-checkpoint", "-o", str(tmp_path / "out.jsonl")]
    command += ["--judge", "openai:m", "--base-url", "http://127.0.0.1:9/v1"]
    result = CliRunner().invoke(app, [*command, "--model-param", 'model_kwargs={"model": "x"}'])
    assert result.exit_code == 2, result.output
    assert result.stderr.strip().splitlines() == [
        "error: openai:m refuses its model parameters: Value error, Found model supplied twice."
    ]
    assert not leaks(result.output, SHORT_KEY)


def test_every_caller_token_of_a_server_is_a_secret(monkeypatch: pytest.MonkeyPatch) -> None:
    from planverify.records.redaction import CLIENT_TOKENS_ENV, scrub

    monkeypatch.setenv(CLIENT_TOKENS_ENV, "alice:alice-token-5e1f, bob:bob-token-77aa")
    said = scrub("bad header 'Bearer bob-token-77aa' and alice-token-5e1f from alice")
    assert said == "bad header 'Bearer REDACTED' and REDACTED from alice"
