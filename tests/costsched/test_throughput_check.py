"""The leave-one-out check of the GPU model rule, and the figures docs/throughput.md shows."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from costsched import throughput as tp
from costsched.throughput_check import leave_one_out

DOC = Path(__file__).resolve().parents[2] / "docs" / "throughput.md"


def test_every_row_with_a_partner_is_estimated_without_itself() -> None:
    check = leave_one_out()
    assert len(check.rows) == 78 and set(check.rows["gpu_model"]) == {"K80", "P100", "V100"}
    assert check.rows["basis"].str.startswith("estimate:").all()
    # One row worked by hand: V100 estimated from P100 by the speed-index ratio.
    row = check.rows[(check.rows["model"] == "ResNet-50 (batch size 64)")
                     & (check.rows["gpu_model"] == "V100")].iloc[0]
    ratio = tp.GPU_SPECS["V100"].speed_index() / tp.GPU_SPECS["P100"].speed_index()
    p100 = tp.bundled()
    p100 = p100[(p100["model"] == "ResNet-50 (batch size 64)") & (p100["gpu_model"] == "P100")
                & (p100["gpu_count"] == 1)]["steps_per_second"].iloc[0]
    assert row["estimated"] == pytest.approx(p100 * ratio)
    assert row["published"] == pytest.approx(5.458)


def test_a_model_on_one_gpu_only_is_not_checked() -> None:
    rows = pd.DataFrame([("only", "V100", 1, 2.0, "s"), ("pair", "V100", 1, 2.0, "s"),
                         ("pair", "P100", 1, 1.0, "s")], columns=tp.COLUMNS)
    check = leave_one_out(rows)
    assert sorted(check.rows["gpu_model"]) == ["P100", "V100"]
    assert set(check.rows["model"]) == {"pair"}


@pytest.mark.parametrize(("precision", "factor", "share"), [("fp32", "x1.40", "55%"),
                                                            ("fp16", "x1.80", "33%")])
def test_the_docs_show_the_figures_the_check_gives(precision: str, factor: str,
                                                   share: str) -> None:
    check = leave_one_out(precision=precision)
    assert f"x{check.error_factor:.2f}" == factor
    assert f"{check.optimistic_share:.0%}" == share
    assert f"| {precision} | {factor} | {share} of rows |" in DOC.read_text()
