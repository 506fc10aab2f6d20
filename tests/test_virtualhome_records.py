"""VirtualHome programs as episode records: `planverify convert --from virtualhome`, and such
records read back line by line like any other."""

from __future__ import annotations

import shutil
from pathlib import Path

import orjson
import pytest
from typer.testing import CliRunner

from planverify.cli import app
from planverify.records.episode import Episode, input_digest, read_episodes

runner = CliRunner()
RECORD = {
    "id": "drink",
    "domain": "virtualhome",
    "goal": "Drink: I take a glass and drink",
    "task": "Drink",
    "actions": ["[WALK] <dining_room> (1.201)", "[GRAB] <water_glass> (1.1000)"],
    "program": "file628_2",
}


def installed_programs() -> Path:
    pytest.importorskip(
        "virtualhome_eval",
        reason="VirtualHome needs eai-eval (make install adds it without its dependencies)",
    )
    from planverify.domains.virtualhome.data import installed_programs_dir

    return installed_programs_dir()


def write(path: Path, lines: list[bytes]) -> Path:
    path.write_bytes(b"".join(line + b"\n" for line in lines))
    return path


def test_convert_writes_a_record_for_every_installed_program(tmp_path: Path) -> None:
    folder = installed_programs()
    out = tmp_path / "vh.jsonl"
    result = runner.invoke(app, ["convert", "--from", "virtualhome", "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert "read 518 program(s), skipped 0; wrote 518 episode(s)" in result.stdout
    episodes, errors = read_episodes([out])
    assert len(episodes) == 518 and errors == []
    drink = next(e for e in episodes if e.id == "file628_2")
    text = (folder / "file628_2.txt").read_text(encoding="utf-8").splitlines()
    assert drink.domain == "virtualhome" and drink.program == "file628_2"
    assert drink.task == text[0] == "Drink"
    assert drink.goal == f"Drink: {text[1]}"
    assert drink.actions == [line for line in text if line.startswith("[")]
    assert drink.actions[0] == "[WALK] <dining_room> (1.201)"
    assert {e.domain for e in episodes} == {"virtualhome"}
    assert all(e.id == e.program for e in episodes)


def test_convert_skips_a_program_that_cannot_be_read_and_keeps_the_others(
    tmp_path: Path,
) -> None:
    folder = installed_programs()
    source = tmp_path / "programs"
    source.mkdir()
    shutil.copy(folder / "file628_2.txt", source)
    (source / "file1_1.txt").write_text("Drink\nI drink\n\n[WALK] kitchen\n", encoding="utf-8")
    out = tmp_path / "vh.jsonl"
    result = runner.invoke(app, ["convert", "--from", "virtualhome", str(source), "-o", str(out)])
    assert result.exit_code == 1
    assert "file1_1.txt: step 1: '[WALK] kitchen'" in result.stderr
    assert "read 1 program(s), skipped 1; wrote 1 episode(s)" in result.stdout
    (episode,) = read_episodes([out])[0]
    assert episode.program == "file628_2"


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (["a", "b"], "one folder or file of programs, not 2"),
        (["--split", "train"], "--split is for TEACh games"),
        (["missing-folder"], "no such file or directory: missing-folder"),
    ],
)
def test_convert_from_virtualhome_refuses_what_it_cannot_read(
    tmp_path: Path, arguments: list[str], message: str
) -> None:
    out = tmp_path / "vh.jsonl"
    result = runner.invoke(app, ["convert", "--from", "virtualhome", *arguments, "-o", str(out)])
    assert result.exit_code == 2
    assert message in result.stderr
    assert not out.exists()


def test_a_bad_virtualhome_record_costs_its_own_line(tmp_path: Path) -> None:
    path = write(
        tmp_path / "vh.jsonl",
        [
            orjson.dumps(RECORD),
            orjson.dumps({**RECORD, "id": "other", "domain": "alfred"}),
            orjson.dumps({**RECORD, "id": "blank", "actions": ["[WALK] <kitchen> (1.11)", " "]}),
            orjson.dumps({**RECORD, "id": "second"}),
        ],
    )
    episodes, errors = read_episodes([path])
    assert [e.id for e in episodes] == ["drink", "second"]
    assert [(e.line, e.message) for e in errors] == [
        (2, "domain: Input should be 'teach' or 'virtualhome' (got 'alfred')"),
        (3, "actions: action 2: empty"),
    ]


def test_the_digest_covers_domain_and_program_only_when_given() -> None:
    teach = {"id": "t", "goal": "g", "actions": ["Driver.Move(1.0)"], "task": "Coffee"}
    before = input_digest(
        goal="g", actions=["Driver.Move(1.0)"], scene=None, task="Coffee", teach_task=None
    )
    assert Episode.model_validate(teach).input_digest == before
    assert Episode.model_validate({**teach, "domain": None, "program": None}).input_digest == before
    assert Episode.model_validate({**teach, "domain": "teach"}).input_digest != before
    vh = Episode.model_validate(RECORD)
    elsewhere = Episode.model_validate({**RECORD, "program": "file628_1"})
    assert vh.input_digest != elsewhere.input_digest
    assert (
        vh.input_digest
        != Episode.model_validate(
            {**RECORD, "domain": None, "actions": ["Driver.Move(1.0)"]}
        ).input_digest
    )


def test_convert_without_the_package_says_how_to_install_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util,
        "find_spec",
        lambda name, *rest: None if name == "virtualhome_eval" else real(name, *rest),
    )
    out = tmp_path / "vh.jsonl"
    result = runner.invoke(app, ["convert", "--from", "virtualhome", "-o", str(out)])
    assert result.exit_code == 2
    assert "VirtualHome needs the eai-eval package: pip install 'planverify[virtualhome]'" in (
        result.stderr
    )
    assert not out.exists()
