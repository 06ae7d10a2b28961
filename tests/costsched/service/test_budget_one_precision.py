"""A budget stop's line reads each amount at one precision, chosen once for the whole line
(the stop and the hint that gives the job enough): '$0.0478 spent + ... would pass the
budget of $0.08; give it enough: ... ($0.0478 spent + ...', never '$0.05 spent' in one half
and '$0.0478 spent' in the other; a cleanly round line keeps two decimals; its parts add
up as written."""

from __future__ import annotations

import re
from decimal import Decimal
from pathlib import Path

import pandas as pd
import pytest

from costsched.config import BudgetsConfig
from costsched.service.jobs import caps, start_check
from costsched.service.jobs.budget_state import BudgetState
from costsched.store import PriceStore

AT = pd.Timestamp("2026-01-01T00:00:00Z").to_pydatetime()
KEY = ("aws", "us-east-1", "us-east-1a", "p3.2xlarge", "spot", "linux")
PLAN = "*: at its plan's speed, as it has logged no steps of its own yet"


@pytest.fixture
def priced(db_path: Path) -> PriceStore:
    store = PriceStore(f"sqlite:///{db_path}")
    store.ingest(pd.DataFrame([dict(
        cloud="aws", region="us-east-1", zone="us-east-1a", instance_type="p3.2xlarge",
        market="spot", os="linux", gpu_model="V100", gpu_count=1, vcpus=8, memory_gb=61.0,
        usd_per_hour=1.0, effective_at=AT, source="test")]))
    return store


def _stopped(store: PriceStore, budget: float, seconds: float):  # noqa: ANN202
    """A job that ran `seconds` at $1/h under its own `budget`, stopped a minute ago."""
    start = pd.Timestamp("2026-03-01T22:00:00Z").to_pydatetime()
    job = store.jobs.create("ar", {"spec": {"name": "ar", "constraints": {"budget": budget}}},
                            100, at=start)
    store.jobs.place(job, KEY, gpu_model="V100", gpu_count=1, at=start, usd_per_hour=1.0,
                     reason="launch")
    end = start + pd.Timedelta(seconds=seconds)
    store.jobs.end_placement(job, end)
    return job, end + pd.Timedelta(minutes=1)


def _refusal(store: PriceStore, budget: float, seconds: float, interval: float,
             rest: float, steps: float, start: float) -> str:
    job, at = _stopped(store, budget, seconds)
    said = start_check.start_refusal(store, job, 1.0, at, BudgetsConfig(), interval, rest_usd=rest,
                              steps_left=steps, start_usd=start)
    assert said is not None
    return str(said).replace(f"job {job} ", "job N ")


def test_the_trial_s_line_reads_its_spend_at_one_precision(priced: PriceStore) -> None:
    """$0.0478 spent (172 s at $1/h), a rest of $0.0025 (9 s: charged ahead as 10 s,
    $0.0028, not the next 206 s) and a budget of $0.05: one precision, '$0.0478 spent' in
    both halves."""
    said = _refusal(priced, 0.05, 172, 206, rest=0.0025, steps=1333, start=0.00003)
    assert said == (
        "job N (ar) is at its budget: $0.0478 spent + $0.0028 for the next watch interval "
        "would pass the budget of $0.0500; give it enough: `costsched start ar --budget 0.054` "
        "($0.0478 spent + $0.0025* expected for its 1,333 steps left + <$0.0001 to start it "
        "+ $0.0028 for the next watch interval (10 s, to its end at its pace); their exact "
        "sum rounded up to 3 decimals); that amount also holds its rest taking about 11 s "
        "longer than priced (10 s charged ahead + 3 s its rounding up adds, less 2 s of the "
        "watch's margins); " + PLAN), said


def test_a_cleanly_round_line_keeps_two_decimals(priced: PriceStore) -> None:
    said = _refusal(priced, 3.01, 3 * 3600, 72, rest=0.4, steps=40, start=0.25)
    assert said == (
        "job N (ar) is at its budget: $3.00 spent + $0.02 for the next watch interval would "
        "pass the budget of $3.01; give it enough: `costsched start ar --budget 3.67` ($3.00 "
        "spent + $0.40* expected for its 40 steps left + $0.25 to start it + $0.02 for the "
        "next watch interval); that amount also holds its rest taking about 70 s longer "
        "than priced; " + PLAN), said


_MONEY = re.compile(r"(<?)\$([\d,]+\.\d+)")


def _amounts(text: str) -> list[tuple[str, Decimal]]:
    """Each '$' amount of `text` as written: its digits and its value ('<$0.0001': 0)."""
    return [(m.group(2), Decimal(0) if m.group(1) else Decimal(m.group(2).replace(",", "")))
            for m in _MONEY.finditer(text)]


CASES = [  # spent for (seconds at $1/h), interval, rest, start, budget
    (172, 206, 0.0025, 0.00003, 0.05),
    (172, 206, 0.0025, 0.0, 0.05),
    (3 * 3600, 72, 0.4, 0.25, 3.01),
    (54, 60, 0.015, 0.015, 0.03),
    (3614.4, 1705, 4.504, 0.0, 1.2),
    (11, 3, 0.0007, 0.0001, 0.004),
    (231.5, 100, 0.0431, 0.0094, 0.09),
]


@pytest.mark.parametrize(("seconds", "interval", "rest", "start", "budget"), CASES)
def test_every_amount_of_the_line_adds_up_as_written(
        priced: PriceStore, seconds: float, interval: float, rest: float, start: float,
        budget: float) -> None:
    said = _refusal(priced, budget, seconds, interval, rest=rest, steps=100, start=start)
    stop, hint = said.split("; give it enough: ")
    passed = "would pass the budget of" in stop  # else: less than it needs, in words
    verdict = _amounts(stop.split("would pass the budget of")[0]) if passed else []
    cap = _amounts(stop.split("budget of")[1])
    amount = Decimal(re.search(r"--budget ([\d.]+)`", hint).group(1))
    parts = _amounts(hint.split("` (")[1])
    # the cap visibly passed; the parts no more than the budget that holds them, and
    # equal to it where the line does not say it is their exact sum rounded up
    assert not passed or sum(v for _, v in verdict) > cap[0][1], said
    total = sum(v for _, v in parts)
    assert total <= amount, said
    assert (total == amount) == ("rounded up" not in hint), said
    # every amount but the budget as set at one precision, the spend alike in both halves
    places = {len(d.split(".")[1]) for d, _ in verdict + parts}
    assert len(places) == 1, said
    assert not verdict or verdict[0] == parts[0], said
    # none of them reads $0.00 (one below the last decimal reads '<$0.0001')
    assert all(v > 0 for _, v in verdict + parts) or "<$" in hint, said
    assert not re.search(r"(?<!<)\$0\.0+\b(?![\d])", said), said


def _state(spent: float, next_usd: float, rest: float, cap: float) -> BudgetState:
    return BudgetState("job 7 (ar)", "job", cap, "total", spent, next_usd, spent + rest,
                       (7,), (7,), next_usd={7: next_usd}, spent_by_job={7: spent},
                       to_end_usd={7: rest})


def test_a_stop_reads_its_spend_at_the_precision_of_the_hint_beside_it() -> None:
    """The watch's stop is what `status` joins the hint to: it reads its spend at the
    decimals the job's rest needs ($0.0025: four), as the hint will."""
    said = caps.stop_why(_state(0.047778, 0.057222, 0.0025, 0.08), 7, 0.057222, 0.0,
                         "206 s at $1.0000/h")
    assert said == ("$0.0478 spent + $0.0572 for the next watch interval (206 s at "
                    "$1.0000/h) would pass the budget of $0.0800"), said
    clean = caps.stop_why(_state(3.0, 0.02, 0.4, 3.01), 7, 0.02, 0.0, "", start_usd=0.25)
    assert clean == ("$3.00 spent + $0.02 for the next watch interval would pass the budget "
                     "of $3.01"), clean
    assert caps.stop_why(_state(3.0, 0.01, 0.4, 3.01), 7, 0.01, 0.0, "") is None


def test_a_start_refused_for_its_cost_reads_its_spend_as_its_hint_does() -> None:
    """`start`'s refusal when no offering's cost fits what is left: its words ('$0.0478
    spent', never '$0.05') and its hint at one precision; a clean one at cents."""
    from costsched.own_budget import OwnBudget
    from costsched.service.jobs.budget_refusal import BudgetShort
    from costsched.service.jobs.stop_line import short_places

    short = BudgetShort("ar", OwnBudget(0.08, 0.047778), 1333, "aws us-east-1a p3.2xlarge "
                        "spot", 0.0611, 1.0)
    assert "($0.05 spent)" in short.why  # alone, its own precision
    places = short_places(short, 0.0025, 0.00003, 0.057222)
    assert short.said(places).endswith("more than the $0.0322 left of its budget of $0.0800 "
                                       "($0.0478 spent)")
    assert "($0.0478 spent + $0.0025* expected" in caps.enough(
        "ar", 0.047778, 0.0025, 1333, 0.00003, 0.057222, places=places)
    clean = BudgetShort("ar", OwnBudget(3.01, 3.0), 40, "x", 0.65, 1.0)
    places = short_places(clean, 0.4, 0.25, 0.02)
    assert clean.said(places).endswith("more than the $0.01 left of its budget of $3.01 "
                                       "($3.00 spent)")
    assert "($3.00 spent + $0.40* expected" in caps.enough("ar", 3.0, 0.4, 40, 0.25, 0.02,
                                                           places=places)


def test_a_hint_reads_the_spend_at_no_fewer_decimals_than_its_stop_did(
        priced: PriceStore) -> None:
    """`status` joins the hint to the stop's line as the watch recorded it ('$3.000
    spent', where its cap read passed only at three decimals): the hint reads it so too."""
    job, at = _stopped(priced, 3.01, 3 * 3600)
    said = start_check.start_refusal(priced, job, 1.0, at, BudgetsConfig(), 72, rest_usd=0.4,
                              steps_left=40, start_usd=0.25, least=3)
    assert said is not None and said.fix.startswith(
        "give it enough: `costsched start ar --budget 3.67` ($3.000 spent + $0.400* "
        "expected for its 40 steps left + $0.250 to start it + $0.020 for the next watch "
        "interval); "), said.fix
