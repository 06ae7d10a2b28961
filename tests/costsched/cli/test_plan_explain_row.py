"""`plan --explain N` (and `--from N`) take the row number the plan's table shows, as well
as the offering's label; a number out of range is refused in one line naming the rows.
With nothing collected: the bundled list prices."""

from __future__ import annotations

import json
from pathlib import Path

TASK = ("name: rows\nresources:\n  infra: aws\n  accelerators: T4\n  use_spot: true\n"
        "run: python train.py\n")
AT = "2026-11-28"


def test_a_row_number_explains_the_offering_of_that_row(cli, tmp_path: Path) -> None:  # noqa: ANN001
    path = tmp_path / "sky.yaml"
    path.write_text(TASK)
    ranked = json.loads(cli("plan", path, "--at", AT, "--json").stdout)["rankings"][0]
    labels = [r["offering"] for r in ranked["ranking"]]
    assert len(labels) >= 2
    table = cli("plan", path, "--at", AT, "--wide").stdout
    assert f"│ 2 │ {labels[1]}" in table  # the row as the table numbers it
    for given in ("2", "#2"):  # (a label: as before)
        shown = cli("plan", path, "--at", AT, "--explain", given, "--from", "1", "--json")
        assert shown.exit_code == 0, shown.output
        doc = json.loads(shown.stdout)
        assert doc["offering"] == labels[1]
        assert doc["explain"][0] == f"{labels[1]}: preemption hazard"
        assert doc["explain"][-1].startswith(f"a move here from {labels[0]}: ")


def test_a_row_number_out_of_range_names_the_rows(cli, tmp_path: Path) -> None:  # noqa: ANN001
    path = tmp_path / "sky.yaml"
    path.write_text(TASK)
    rows = len(json.loads(cli("plan", path, "--at", AT, "--json", "--top", "1000").stdout)[
        "rankings"][0]["ranking"])
    assert rows > 1
    for given in ("0", str(rows + 1)):
        refused = cli("plan", path, "--at", AT, "--explain", given, "--top", str(rows))
        assert refused.exit_code == 2
        assert refused.stderr.splitlines()[-1] == (
            f"error: --explain {given}: the plan of rows has rows 1 to {rows}; expected a "
            "row number there or an offering's label")
