"""The leave-one-out check of the GPU model rule, and the figures docs/throughput.md shows."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from costsched import throughput as tp
from costsched.throughput_check import fit_scale, leave_one_out

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
    assert row["unfitted"] == pytest.approx(p100 * ratio)
    assert row["published"] == pytest.approx(5.458)
    # Its factor is fitted on the other 77 rows only.
    others = check.rows.drop(row.name)
    assert row["scale"] == pytest.approx(fit_scale(others["published"] / others["unfitted"]))
    assert row["estimated"] == pytest.approx(p100 * ratio * row["scale"])


def test_a_model_on_one_gpu_only_is_not_checked() -> None:
    rows = pd.DataFrame([("only", "V100", 1, 2.0, "s"), ("pair", "V100", 1, 2.0, "s"),
                         ("pair", "P100", 1, 1.0, "s")], columns=tp.COLUMNS)
    check = leave_one_out(rows)
    assert sorted(check.rows["gpu_model"]) == ["P100", "V100"]
    assert set(check.rows["model"]) == {"pair"}


def test_the_factor_is_a_low_quantile_never_above_one() -> None:
    assert fit_scale(pd.Series([0.5, 1.0, 1.5, 2.0, 2.5])) == pytest.approx(1.0)
    assert fit_scale(pd.Series([0.4, 0.6, 0.8, 1.0, 1.2])) == pytest.approx(0.6)
    assert fit_scale(pd.Series([0.4, 0.6, 0.8, 1.0, 1.2]), quantile=0.5) == pytest.approx(0.8)


@pytest.mark.parametrize("precision", tp.PRECISIONS)
def test_the_rules_factor_is_the_one_the_bundled_rows_fit(precision: str) -> None:
    check = leave_one_out(precision=precision)
    assert tp.RULE_SCALE[precision] == round(check.fitted_scale(), 3)
    assert tp.RULE_SCALE[precision] < 1


@pytest.mark.parametrize("precision", tp.PRECISIONS)
def test_the_fitted_rule_errs_slow_on_most_held_out_rows(precision: str) -> None:
    check = leave_one_out(precision=precision)
    assert check.optimistic_share < check.unfitted_optimistic_share
    assert check.optimistic_share <= 0.3


@pytest.mark.parametrize(("precision", "before", "after"), [
    ("fp32", ("x1.40", "55%"), ("x1.50", "26%")),
    ("fp16", ("x1.80", "33%"), ("x2.03", "26%"))])
def test_the_docs_show_the_figures_the_check_gives(precision: str, before: tuple[str, str],
                                                   after: tuple[str, str]) -> None:
    check = leave_one_out(precision=precision)
    assert (f"x{check.unfitted_error_factor:.2f}",
            f"{check.unfitted_optimistic_share:.0%}") == before
    assert (f"x{check.error_factor:.2f}", f"{check.optimistic_share:.0%}") == after
    text = DOC.read_text()
    assert f"| {precision} | speed-index ratio alone | {before[0]} | {before[1]} of rows |" in text
    assert f"| {precision} | with the fitted factor | {after[0]} | {after[1]} of rows |" in text
    assert f"x{tp.RULE_SCALE['fp32']:.3g} in fp32 and x{tp.RULE_SCALE['fp16']:.3g} in fp16" \
        in " ".join(text.split())


def test_the_a10g_figure_the_docs_give() -> None:
    table = tp.ThroughputTable()
    model = "ResNet-50 (batch size 64)"
    ratio = (table.get(model, "A10G").steps_per_second
             / table.get(model, "V100").steps_per_second)
    assert f"A10G is estimated at {ratio:.2f}x a V100" in " ".join(DOC.read_text().split())
