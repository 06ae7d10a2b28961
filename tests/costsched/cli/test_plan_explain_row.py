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
        assert doc["explain"][-2].startswith(f"a move here from {labels[0]}: ")
        assert doc["explain"][-1].startswith("lost work assumed: ")  # (before it runs)


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


def test_a_misspelt_label_is_answered_with_the_close_ones(cli, tmp_path: Path) -> None:  # noqa: ANN001
    """A label in another case or with colons is the ranked one; a misspelt market says the
    market to write, a misspelt instance type the close labels, each in one line."""
    path = tmp_path / "sky.yaml"
    path.write_text(TASK)
    first = json.loads(cli("plan", path, "--at", AT, "--json").stdout)["rankings"][0][
        "ranking"][0]["offering"]
    cloud, place, kind, market = first.split()
    shown = cli("plan", path, "--at", AT, "--json", "--explain",
                f"{cloud.upper()}:{place}:{kind}:{market.upper()}")
    assert shown.exit_code == 0, shown.output
    assert json.loads(shown.stdout)["offering"] == first
    spt = cli("plan", path, "--at", AT, "--explain", f"{cloud} {place} {kind} spt")
    assert spt.exit_code == 2
    assert spt.stderr.strip() == (f"error: --explain offering '{cloud} {place} {kind} spt': "
                                  "market 'spt': expected one of on-demand, spot; did you "
                                  "mean 'spot'?")
    typo = cli("plan", path, "--at", AT, "--explain", f"{cloud} {place} {kind}x {market}")
    assert typo.stderr.strip().startswith(
        f"error: --explain '{cloud} {place} {kind}x {market}': not in the plan's ranking; "
        f"did you mean '{first}'")
