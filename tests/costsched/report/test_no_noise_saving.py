"""A saving is no saving when it is a float's noise (the same charges added up in another
order: 4.3e-19 in `--json`) or smaller than the last decimal shown: it reads 0, in the
JSON and in every view, and its baseline reads as the spend beside it, never 'saved
$0.000001' by a job that ran on the baseline itself."""

from __future__ import annotations

from types import SimpleNamespace

from costsched.amounts import NOISE, no_noise
from costsched.report.cells import added_up, shown_rows, shown_totals
from costsched.report.columns import JOB_COLUMNS
from costsched.report.data import _job_table, totals


def _row(usd: float, on_demand: float, static: float) -> dict:
    return dict(zip(JOB_COLUMNS, (1, "fit", "succeeded", 1, 0.01, usd, 0.0, usd, on_demand,
                                  on_demand - usd, static, static - usd), strict=True))


def test_the_json_saving_of_the_same_charges_is_zero() -> None:
    job = SimpleNamespace(id=1, name="fit", state="succeeded")
    piece = SimpleNamespace(placement=SimpleNamespace(job_id=1))
    # Three pieces charged 0.1, 0.2 (0.30000000000000004 summed) on the launch choice
    # kept, whose baseline sums the same charges as 0.3.
    spent = [(piece, 0.5, 0.1, 0.1), (piece, 0.5, 0.2, 0.2)]
    [row] = _job_table([job], spent, [], {1: 0.3}, {1: 1})
    assert 0.1 + 0.2 - 0.3 != 0  # the noise the saving must not carry
    assert row["saved_vs_launch_choice_usd"] == 0.0 and row["saved_vs_on_demand_usd"] == 0.0
    noisy = _row(0.1 + 0.2, 0.3, 0.3)
    assert totals([noisy, noisy])["saved_vs_launch_choice_usd"] == 0.0


def test_no_noise_is_the_one_rule_of_a_sums_error() -> None:
    assert no_noise(4.3e-19) == no_noise(-6.9e-18) == 0.0
    assert no_noise(NOISE) == NOISE and no_noise(-0.51) == -0.51
    assert no_noise(float("nan")) != no_noise(float("nan"))  # NaN stays (no baseline)


def test_a_saving_below_the_last_decimal_shown_reads_zero_beside_its_baseline() -> None:
    """The ran-on-demand job: its on-demand baseline (0.0024325 exactly) alone reads
    $0.002433, its spend, the sum of its placements as written, $0.002432."""
    row = _row(0.0024325, 0.0024325 + 1e-12, 0.0024325)
    tables = {"jobs": [row], "clouds": [], "days": [], "scale": {"usd": 6, "hours": 4},
              "parts": {"jobs": [{"compute_usd": [0.00121624, 0.00121626],
                                  "billed_hours": [0.005, 0.005]}]}}
    _, [shown] = shown_rows("jobs", tables)
    assert shown["usd"] == 0.002432
    assert shown["saved_vs_on_demand_usd"] == 0.0 == shown["saved_vs_launch_choice_usd"]
    assert shown["on_demand_usd"] == shown["launch_choice_usd"] == shown["usd"]
    assert shown_totals(tables)["saved_vs_on_demand_usd"] == 0.0
    # Without the store's scale (a frame of the Python API), alike.
    # A spend of $0.00243 (0.0024349) against a baseline of $0.00244 (0.002435): 1e-7.
    [plain] = added_up([_row(0.0024349, 0.002435, 0.0024348)], {"usd": 5, "hours": 2})
    assert plain["saved_vs_on_demand_usd"] == 0.0 == plain["saved_vs_launch_choice_usd"]
    assert plain["on_demand_usd"] == plain["launch_choice_usd"] == plain["usd"]


def test_a_saving_at_the_last_decimal_shown_stays() -> None:
    [plain] = added_up([_row(0.00243, 0.00244, 0.00242)], {"usd": 5, "hours": 2})
    assert plain["saved_vs_on_demand_usd"] == 0.00001
    assert plain["saved_vs_launch_choice_usd"] == -0.00001


def test_a_jobs_billed_difference_of_noise_is_zero() -> None:
    """`report --billed`: a job's days billed 0.1 over, 0.2 over and 0.3 under its estimate
    differ from it by nothing, not 5.6e-17."""
    import pandas as pd

    from costsched.report.billed import DAY_COLUMNS, _job_table

    days = pd.DataFrame([{**dict.fromkeys(DAY_COLUMNS[3:], 0.0), "day": d, "job_id": 1,
                          "name": "fit", "estimated_usd": 1.0, "billed_usd": 1.0 + gap,
                          "difference_usd": gap}
                         for d, gap in enumerate((0.1, 0.2, -0.3))])
    [row] = _job_table(days, 0.05).to_dict("records")
    assert row["difference_usd"] == 0.0 and row["difference_share"] == 0.0


def test_a_running_job_on_its_launch_choice_alone_saves_nothing_at_any_moment(
        any_store) -> None:  # noqa: ANN001 - the stores' fixture
    """Its baseline and its spend were charged to different moments (a second apart at
    7 h 0.7 s): 'saved vs launch choice $0.00028' one moment, nothing the next."""
    import pandas as pd

    from costsched.report import build
    from costsched.store import OBSERVATION_COLUMNS
    from tests.costsched.report.test_estimates import EAST, at, planned_job

    any_store.ingest(pd.DataFrame([(*EAST, "V100", 1, 8, 61.0, 1.0, pd.Timestamp(at(-1)),
                                    "test")], columns=OBSERVATION_COLUMNS))
    job = planned_job(any_store, "run")
    any_store.jobs.record_step(job, 1000, at=at(1))
    any_store.jobs.record_step(job, 18000, at=at(5))
    for now in (5 + 0.5 / 3600, 7 + 0.7 / 3600, 7.3 + 0.1 / 3600):
        [row] = build(any_store, now=at(now)).rows["jobs"]
        assert row["saved_vs_launch_choice_usd"] == 0.0, (now, row)  # was 0.00028 at 7 h 0.7 s
        assert row["launch_choice_usd"] == row["usd"]
