"""A billed compute rate that differs from the stored price corrects later estimates."""

from __future__ import annotations

import pandas as pd
import pytest

from costsched.bills.imports import import_export
from costsched.costs import placement_costs
from costsched.store import PriceStore
from tests.costsched.bills import scenario
from tests.costsched.bills.exports import cur_csv_gz, cur_row

T, H = scenario.T, scenario.H
PREFIX = "s3://cur-bucket/r/"


def _billed_at(s3, rate: float) -> None:  # noqa: ANN001
    rows = [cur_row(T + h * H, T + (h + 1) * H, "SpotUsage:p3.2xlarge", rate,
                    resource="i-0aaa", line_id=f"l{h}") for h in range(3)]
    s3.put_object(Bucket="cur-bucket", Key="r/a.csv.gz", Body=cur_csv_gz(rows))


def _bill_prices(store: PriceStore) -> pd.DataFrame:
    history = store.history(cloud="aws")
    return history[history["source"] == "bill"]


def test_the_billed_rate_is_stored_as_a_price_later_estimates_use(s3, store: PriceStore
                                                                   ) -> None:  # noqa: ANN001
    ids = scenario.fill(store)
    _billed_at(s3, 1.2)
    result = import_export(store, PREFIX, now=scenario.NOW, client=s3)
    rate = result.rates.set_index("job_id").loc[ids["aws-job"]]
    assert rate["billed_usd_per_hour"] == pytest.approx(1.2)
    assert rate["estimated_usd_per_hour"] == pytest.approx(0.918)
    assert bool(rate["recorded"])
    stored = _bill_prices(store)
    assert stored[["zone", "usd_per_hour"]].values.tolist() == [["us-east-1a", 1.2]]
    assert stored["effective_at"].iloc[0] == pd.Timestamp(T + 3 * H)  # the billed span's end

    # The billed placement's own estimate stays as it was; a later one is charged the bill's.
    placed = store.jobs.placements(ids["aws-job"])
    later = placed.assign(start_at=pd.Timestamp(T + 4 * H), end_at=pd.Timestamp(T + 5 * H))
    charged = placement_costs(store, pd.concat([placed, later], ignore_index=True),
                              now=scenario.NOW)
    assert charged["usd"].tolist() == pytest.approx([3 * 0.918, 1.2])

    import_export(store, PREFIX, now=scenario.NOW, client=s3)  # again: nothing new
    assert len(_bill_prices(store)) == 1


def test_a_rate_within_the_tolerance_or_correction_off_records_nothing(s3, store: PriceStore
                                                                        ) -> None:  # noqa: ANN001
    scenario.fill(store)
    _billed_at(s3, 0.92)  # 0.2% off
    result = import_export(store, PREFIX, now=scenario.NOW, client=s3, rate_tolerance=0.01)
    assert not result.rates["recorded"].any() and _bill_prices(store).empty
    _billed_at(s3, 1.5)
    import_export(store, PREFIX, now=scenario.NOW, client=s3, correct_prices=False)
    assert _bill_prices(store).empty


def test_a_savings_plan_discount_on_the_instance_is_in_its_rate(s3, store: PriceStore
                                                                ) -> None:  # noqa: ANN001
    ids = scenario.fill(store)
    rows = []
    for h in range(3):  # covered at the on-demand rate, then the plan's negation
        rows.append(cur_row(T + h * H, T + (h + 1) * H, "SpotUsage:p3.2xlarge", 1.5,
                            line_type="SavingsPlanCoveredUsage", resource="i-0aaa",
                            line_id=f"u{h}"))
        rows.append(cur_row(T + h * H, T + (h + 1) * H, "SpotUsage:p3.2xlarge", -0.5,
                            line_type="SavingsPlanNegation", resource="i-0aaa",
                            line_id=f"n{h}"))
    rows.append(cur_row(T, T + H, "EBS:VolumeUsage.gp3", -0.2, line_type="Credit",
                        resource="i-0aaa", line_id="c"))  # not on compute: not in the rate
    s3.put_object(Bucket="cur-bucket", Key="r/a.csv.gz", Body=cur_csv_gz(rows))
    result = import_export(store, PREFIX, now=scenario.NOW, client=s3)
    rate = result.rates.set_index("job_id").loc[ids["aws-job"]]
    assert rate["billed_usd"] == pytest.approx(3.0)
    assert rate["billed_usd_per_hour"] == pytest.approx(1.0)
    assert _bill_prices(store)["usd_per_hour"].tolist() == pytest.approx([1.0])
