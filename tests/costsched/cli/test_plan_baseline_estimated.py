"""The plan's on-demand V100 baseline is marked as estimated when its V100 speed is
costsched's estimate (the text's `*`, --json's `estimated`), as the ranking's rows are."""

from __future__ import annotations

import json
from pathlib import Path

import yaml


def spec(folder: Path, throughputs: dict) -> Path:
    path = folder / "job.yaml"
    path.write_text(yaml.safe_dump({"name": "fit", "steps": 36000, "run": "true",
                                    "throughputs": throughputs}))
    return path


def test_an_estimated_baseline_is_marked(cli, tmp_path: Path) -> None:  # noqa: ANN001
    path = spec(tmp_path, {"A100": 10.0})
    doc = json.loads(cli("plan", path, "--json", "--top", "3").stdout)
    assert doc["jobs"][0]["baseline"]["estimated"] is True
    text = cli("plan", path, "--top", "3").output
    [line] = [x for x in text.splitlines() if "baseline:" in x]
    assert "h, $" in line and "* from an estimated V100 speed" in line
    assert line.split(" at ", 1)[1].split(",")[1].strip().split(" ")[0].endswith("*")


def test_a_given_baseline_is_not(cli, tmp_path: Path) -> None:  # noqa: ANN001
    path = spec(tmp_path, {"V100": 10.0})
    doc = json.loads(cli("plan", path, "--json", "--top", "3").stdout)
    assert doc["jobs"][0]["baseline"]["estimated"] is False
    [line] = [x for x in cli("plan", path, "--top", "3").output.splitlines()
              if "baseline:" in x]
    assert "*" not in line
