"""User text (file paths, model names, config values, messages quoting them) is shown
literally: never parsed as rich markup, never passed to the terminal as control codes."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path

import pytest
import typer
from rich.console import Console

from costsched.cli.common import friendly_errors, table, user_text
from costsched.model import InvalidInput

HOSTILE = ["[bold red]x", "[/]", "\x1b[2J", "[link=file:///etc]x[/link]", "a\\", "\u202eevil"]
SHOWN = {"\x1b[2J": "\\x1b[2J", "\u202eevil": "\\u202eevil"}  # control codes made visible


def _visible(text: str) -> str:
    return text.replace("\x1b", "\\x1b")


def _render(*objects: object) -> str:
    """What a color terminal would get, without rich's own style codes."""
    out = io.StringIO()
    console = Console(file=out, width=300, force_terminal=True, color_system="truecolor")
    for obj in objects:
        console.print(obj, highlight=False)
    return re.sub(r"\x1b\[[0-9;]*m", "", out.getvalue())


@pytest.mark.parametrize("text", HOSTILE)
def test_user_text_prints_literally(text: str) -> None:
    out = _render(f"[red]error:[/red] {user_text(text)}", table(text, ["job"], [[text]]))
    assert out.count(SHOWN.get(text, text)) == 3, out
    assert "\x1b" not in out and "\u202e" not in out


def test_friendly_errors_escape_the_message(capsys: pytest.CaptureFixture) -> None:
    @friendly_errors
    def fails() -> None:
        raise InvalidInput("job '[/]' and '[bold red]x': \x1b[2J")

    with pytest.raises(typer.Exit) as exc:
        fails()
    assert exc.value.exit_code == 2
    err = capsys.readouterr().err
    assert "job '[/]' and '[bold red]x': \\x1b[2J" in err and "\x1b" not in err


@pytest.mark.parametrize("name", ["[bold red]x", "[/]", "[link=file:///etc]x[/link]"])
def test_import_error_naming_a_hostile_path(cli, tmp_path: Path, name: str) -> None:
    bad = tmp_path / f"{name}.json"
    bad.parent.mkdir(parents=True, exist_ok=True)  # "[/]": a folder "[" and a file "]"
    bad.write_text("{not json")
    good = tmp_path / "good.json"
    good.write_text(json.dumps({"SpotPriceHistory": [{
        "AvailabilityZone": "us-east-2a", "InstanceType": "p3.2xlarge",
        "ProductDescription": "Linux/UNIX", "SpotPrice": "0.9364",
        "Timestamp": "2020-03-23T13:59:14.000Z"}]}))
    result = cli("prices", "import", str(bad), str(good))
    assert result.exit_code == 1
    assert f"error: {bad}: not valid JSON" in result.output
    assert "1 new row," in result.output


@pytest.mark.parametrize("name", ["[bold red]x", "[/]", "\x1b[2J"])
def test_export_to_a_hostile_path(cli, tmp_path: Path, name: str) -> None:
    path = tmp_path / f"{name}.csv"
    path.parent.mkdir(parents=True, exist_ok=True)
    result = cli("prices", "export", str(path))
    assert result.exit_code == 0 and path.is_file()
    assert "to " + _visible(str(path)) in result.output


@pytest.mark.parametrize("model", ["[bold red]x", "[/]", "\x1b[2J"])
def test_throughput_set_with_a_hostile_model_name(cli, tmp_path: Path, model: str) -> None:
    file = tmp_path / "tp.csv"
    result = cli("throughput", "set", model, "V100", "2.5", "--file", str(file))
    assert result.exit_code == 0, result.output
    assert f"saved {_visible(model)} on 1xV100" in result.output


def test_config_values_are_shown_literally(cli, tmp_path: Path) -> None:
    config = tmp_path / "c.toml"
    config.write_text('[collect]\ngcp_project = "[bold red]x"\n'
                      '[notify]\ncommand = ["[/]", "\\u001b[2J"]\n')
    result = cli("config", "show", "--config", str(config))
    assert result.exit_code == 0, result.output
    assert "[bold red]x" in result.output and "'[/]' '\\x1b[2J'" in result.output
