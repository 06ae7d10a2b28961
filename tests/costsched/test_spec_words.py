"""A job file's small mistakes each get one precise line: the field as written (never an
internal one, never twice), a throughput's GPU, the forms `hours` and `budget` accept,
GPU counts in numeric order, a tiny deadline said as written, the closest spelling first."""

from __future__ import annotations

import pandas as pd
import pytest

from costsched.amounts import parse_usd
from costsched.jobspec import parse
from costsched.model import InvalidInput
from costsched.optimize.unmatched_deadline import deadline_said
from costsched.vocabulary import closest, did_you_mean
from tests.costsched.optimize.test_unmatched import NOW, job, market

BASE = {"name": "n", "run": "x", "steps": 100, "throughputs": {"L4": 1}}


def refused(**fields: object) -> str:
    with pytest.raises(InvalidInput) as exc:
        parse({**BASE, **fields}, "f.yaml")
    return str(exc.value)


def test_num_nodes_zero_is_named_once_as_written() -> None:
    said = refused(num_nodes=0)
    assert said == "f.yaml: job 'n': field num_nodes: 0: expected at least 1"
    assert parse({**BASE, "num_nodes": 2}, "f.yaml").task.num_nodes == 2


def test_a_throughput_is_named_by_its_gpu() -> None:
    said = refused(throughputs={"L4": 0})
    assert "field throughputs.L4: 0: expected a positive number of steps per second" in said
    assert "field throughputs: " not in said


@pytest.mark.parametrize(("written", "hours"), [("90m", 1.5), ("1.5h", 1.5), (2, 2.0),
                                                 ("2", 2.0)])
def test_work_hours_take_the_forms_a_deadline_takes(written: object, hours: float) -> None:
    spec = parse({**BASE, "steps": None, "hours": written, "reference_gpu": "L4"}, "f.yaml")
    assert spec.hours == hours


def test_work_hours_that_do_not_read_say_the_accepted_forms() -> None:
    said = refused(steps=None, hours="soon", reference_gpu="L4")
    assert "field hours: 'soon': expected a number of hours, such as 1.5 or '90m'" in said
    said = refused(steps=None, hours="2026-12-01T00:00Z", reference_gpu="L4")
    assert "expected a number of hours, such as 1.5 or '90m'" in said


@pytest.mark.parametrize("written", ["5 USD", "USD 5", "$5", "5usd", "usd5", 5, "5"])
def test_a_budget_in_usd_is_taken_in_each_usual_form(written: object) -> None:
    assert parse({**BASE, "constraints": {"budget": written}}, "f.yaml").constraints.budget == 5


@pytest.mark.parametrize("written", ["€5", "5 EUR", "£5", "5 gbp"])
def test_a_budget_in_another_currency_is_refused_as_such(written: str) -> None:
    said = refused(constraints={"budget": written})
    assert f"field constraints.budget: {written!r}: only USD is taken" in said
    assert "such as 50 or '$50'" in said


def test_a_budget_that_is_no_amount_says_the_usd_forms() -> None:
    said = refused(constraints={"budget": "5k"})
    assert said.endswith("field constraints.budget: '5k': expected an amount of USD, such "
                         "as 50 or '$50'")
    with pytest.raises(ValueError, match="expected an amount of USD"):
        parse_usd("five")


def test_priced_gpu_counts_read_in_numeric_order() -> None:
    from costsched.optimize.unmatched import unmatched

    rows = market()
    more = [rows.iloc[0].to_dict() | {"gpu_count": n, "instance_type": f"t{n}"}
            for n in (16, 2, 4)]
    frame = pd.concat([rows, pd.DataFrame(more)], ignore_index=True)
    found = unmatched(job(gpu_counts=(3,)), frame, NOW, now=NOW)
    assert found is not None and "priced: 1, 2, 4, 8, 16" in found.line("j")


@pytest.mark.parametrize(("hours", "said"), [(0.001, "0.001 h"), (2, "2 h"),
                                              (0.5, "0.5 h"), (1 / 12, "5 min")])
def test_a_deadline_reads_as_written_never_as_zero(hours: float, said: str) -> None:
    assert deadline_said(hours) == said


def test_a_deadline_of_no_short_form_never_reads_as_zero() -> None:
    assert deadline_said(0.000734) not in ("0.00 h", "0 h")
    assert deadline_said(0.000734).startswith("0.0007")


def test_the_closest_spelling_comes_first() -> None:
    regions = ["us-west-1", "us-east-1", "us-west1", "us-east1"]
    assert closest("us-est-1", regions)[0] == "us-east-1"
    assert did_you_mean("us-est-1", regions).startswith("; did you mean 'us-east-1'")
    # a swap is one slip, ahead of names farther away
    assert closest("us-esat-1", regions)[0] == "us-east-1"
