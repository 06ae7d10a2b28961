"""The plan's on-demand V100 baseline is marked as estimated when its V100 speed is
costsched's estimate (the text's `*`, --json's `estimated`), as the ranking's rows are; so
is each row's "vs OD V100", which rests on the row's speed and the baseline's."""

from __future__ import annotations

import json
import re
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
    assert "* from an estimated V100 speed" in line
    assert re.search(r", [\d.]+\* h x \$[\d.]+/h = \$[\d.]+\* ", line), line


def test_a_given_baseline_is_not(cli, tmp_path: Path) -> None:  # noqa: ANN001
    path = spec(tmp_path, {"V100": 10.0})
    doc = json.loads(cli("plan", path, "--json", "--top", "3").stdout)
    assert doc["jobs"][0]["baseline"]["estimated"] is False
    [line] = [x for x in cli("plan", path, "--top", "3").output.splitlines()
              if "baseline:" in x]
    assert "*" not in line


def vs_cells(text: str) -> dict[str, str]:
    """{offering: its "vs OD V100" cell} of a plan table printed with --wide."""
    out = {}
    for line in text.splitlines():
        cells = [c.strip() for c in line.split("\u2502")]
        if len(cells) > 3 and cells[1].isdigit():
            out[cells[2]] = cells[-2]
    return out


def test_vs_od_v100_is_marked_where_its_speeds_are_estimated(cli, tmp_path: Path) -> None:  # noqa: ANN001
    # Speeds given for V100 and T4 (the baseline's too): only the other rows are estimated.
    path = spec(tmp_path, {"V100": 10.0, "T4": 4.0})
    doc = json.loads(cli("plan", path, "--json", "--top", "30").stdout)
    rows = doc["rankings"][0]["ranking"]
    cells = vs_cells(cli("plan", path, "--top", "30", "--wide").stdout)
    assert len(cells) == len(rows) and {r["throughput_estimated"] for r in rows} == {True, False}
    for r in rows:
        cell = cells[r["offering"]]
        assert cell == f"{r['vs_on_demand_v100']:.2f}x" + ("*" if r["throughput_estimated"]
                                                            else "")
    # The baseline's own V100 speed estimated: every comparison rests on it.
    path = spec(tmp_path, {"A100": 10.0})
    cells = vs_cells(cli("plan", path, "--top", "5", "--wide").stdout)
    assert cells and all(c.endswith("x*") for c in cells.values())
