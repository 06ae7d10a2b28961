"""A SkyPilot accelerator set is a set: a task that gives no work is planned per hour of
work on one of its GPUs, chosen by a rule that does not read the order the set is written
in (the slowest by the catalog's speed index, then by name), and the title names it. Both
orders of a set so give the same table and the same JSON."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from costsched.work import unit_gpu

TASK = """\
name: moons
resources:
  accelerators: {accelerators}
  use_spot: true
run: python train.py
"""


def task(folder: Path, accelerators: str) -> Path:
    path = folder / "sky.yaml"
    path.write_text(TASK.format(accelerators=accelerators))
    return path


def without_times(doc: dict) -> dict:
    doc.pop("at", None)
    for ranking in doc["rankings"]:
        for row in ranking["ranking"]:
            row.pop("price_age_hours", None)
    return doc


@pytest.mark.parametrize("orders", [("{T4: 1, L4: 1}", "{L4: 1, T4: 1}"),
                                    ("{A10G: 1, L4: 1, T4: 1}", "{L4: 1, T4: 1, A10G: 1}")])
def test_both_orders_give_one_table_and_one_json(cli, tmp_path: Path,  # noqa: ANN001
                                                  orders: tuple[str, str]) -> None:
    at = "2026-11-01T00:00:00Z"
    tables, docs = [], []
    for accelerators in orders:
        path = task(tmp_path, accelerators)
        shown = cli("plan", path, "--at", at, "--top", "5", "--wide")
        assert shown.exit_code == 0, shown.output
        tables.append(shown.stdout)
        out = cli("plan", path, "--at", at, "--top", "5", "--json")
        assert out.exit_code == 0, out.output
        docs.append(without_times(json.loads(out.stdout)))
    assert tables[0] == tables[1]
    assert docs[0] == docs[1]
    assert "moons: work not given: per hour of work on 1xT4 (the slowest GPU of the task)" \
        in " ".join(tables[0].split())


def test_the_unit_is_the_slowest_member_then_the_first_by_name() -> None:
    assert unit_gpu([("L4", 1), ("T4", 1)]) == ("T4", 1)
    assert unit_gpu([("T4", 1), ("L4", 1)]) == ("T4", 1)
    assert unit_gpu([("A100", 1), ("V100", 1), ("H100", 1)]) == ("V100", 1)
    assert unit_gpu([("T4", 4), ("T4", 1)]) == ("T4", 1)
    assert unit_gpu([("A100-80GB", 1), ("A100", 1)]) == ("A100", 1)
    assert unit_gpu([("L4", 1)]) == ("L4", 1)
