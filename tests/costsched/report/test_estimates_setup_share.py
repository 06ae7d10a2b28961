"""A job whose training took its plan's hours but whose cost reads over (its setup, which
a local run's expected dollars leave out) is never called 'cost over' without the share of
its billed hours outside training, and where they went as far as costsched knows (its
setup only where measured); and `report`'s text and --json carry each table's note (the
words the HTML file has), one source for them."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone
from types import SimpleNamespace

import pytest

from costsched.report.estimates import estimate_table, vs_estimate
from costsched.report.outside import REST, Causes
from costsched.report.tables import TABLES

T0 = datetime(2026, 3, 1, tzinfo=timezone.utc)


def _at(hours: float) -> datetime:
    return T0 + timedelta(hours=hours)


def test_a_cost_over_by_setup_alone_names_the_hours_outside_training() -> None:
    # Planned 1 h for $1 (no start: a local run); 0.4 h of setup before its first step,
    # then 1 h of training: 1.4 h billed, $1.40.
    predictions = {1: dict(job_id=1, expected_hours=1.0, expected_usd=1.0, usd_per_hour=1.0,
                           model="mf", gpu_count=1, gpu_model="L4", expected_preemptions=0.0)}
    jobs = {1: SimpleNamespace(id=1, name="slow-setup", state="succeeded", steps_done=4000.0,
                               steps_total=4000.0, spec={"launcher": "local"})}
    lives = [(SimpleNamespace(job_id=1, start_at=_at(0), end_at=_at(1.4)), 1.4)]
    readings = [(1, 1, 0.0, int(_at(0.4).timestamp()), 4000.0, int(_at(1.4).timestamp()))]
    [row] = estimate_table(predictions, jobs, lives, [], {}, readings)  # type: ignore[arg-type]
    assert row["training_hours_ratio"] == pytest.approx(1.0)
    assert row["usd_ratio"] == pytest.approx(1.4)
    # its setup not measured: where those hours lie, never a cause costsched does not know
    assert row["vs_estimate"] == \
        f"hours within, cost over (28% of its billed hours outside training: {REST})"
    measured = Causes(setup_seconds=0.4 * 3600, measured=1, instances=1)  # its agent's word
    [row] = estimate_table(predictions, jobs, lives, [], {}, readings,  # type: ignore[arg-type]
                           causes={1: measured})
    assert row["vs_estimate"] == \
        "hours within, cost over (28% of its billed hours outside training: its setup)"


def test_a_cost_over_with_no_hours_outside_training_says_no_cause() -> None:
    assert vs_estimate(1.0, 1.4) == "hours within, cost over"
    assert vs_estimate(1.0, 1.4, "") == "hours within, cost over"
    why = f"30% of its billed hours outside training: {REST}"
    assert vs_estimate(1.0, 0.5, why) == "hours within, cost under"  # nothing to explain
    # Training hours over too: the cost's share outside training is still said (a job
    # whose cost is 1.93x for hours 1.43x has its setups to account for the rest).
    assert vs_estimate(1.3, 1.4, why) == f"over ({why})"
    assert vs_estimate(1.3, 1.4) == "over"


def test_report_text_and_json_carry_each_tables_note(cli) -> None:  # noqa: ANN001
    doc = json.loads(cli("report", "--json").stdout)
    assert doc["notes"] == {t.name: t.note for t in TABLES if t.note}
    [estimates] = [t for t in TABLES if t.name == "estimates"]
    assert "on the local launcher, which boots none" in estimates.note


def test_report_text_says_the_estimates_note_under_its_table(tmp_path) -> None:  # noqa: ANN001
    from tests.costsched.report.report_stores import outputs

    out = outputs("estimates", f"sqlite:///{tmp_path / 'estimates.sqlite'}", html=False)
    [estimates] = [t for t in TABLES if t.name == "estimates"]
    text = " ".join(out["all.text"].split())
    assert "Estimate versus actual, per job" in text
    assert estimates.note in text, text
    assert json.loads(out["all.json"])["notes"]["estimates"] == estimates.note
