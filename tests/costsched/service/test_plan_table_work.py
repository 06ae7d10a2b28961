"""The API's plan table says, per job, whether its hours and cost are a total or those of
an hour of its work (a task that gives no work), as the CLI's table and JSON do."""

from __future__ import annotations

from pathlib import Path

import costsched

TASK = """\
name: {name}
resources:
  accelerators: T4:1
run: python train.py
"""


def test_a_task_without_work_is_marked_in_the_table_beside_one_with_it(tmp_path: Path) -> None:
    without = tmp_path / "without.yaml"
    without.write_text(TASK.format(name="hourly"))
    given = tmp_path / "given.yaml"
    given.write_text(TASK.format(name="total") + "costsched:\n  hours: 5\n")
    db = f"sqlite:///{tmp_path / 'store.sqlite'}"  # empty: the bundled list prices answer
    table = costsched.plan([str(without), str(given)], db=db).table.set_index("job")
    assert table.loc["hourly", "work_assumed"] and not table.loc["total", "work_assumed"]
    # an hour of work against five: the same offering's cost, one fifth
    hourly, total = table.loc["hourly"], table.loc["total"]
    assert hourly["offering"] == total["offering"]
    assert total["expected_cost"] > 4 * hourly["expected_cost"]
