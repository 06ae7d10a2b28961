"""The planner's refusals (which `plan` and `launch` print alike) mark a cost or hours that
rest on an estimated speed, as the plan's table does, and name the key that gives the
measured one; figures on given speeds are not marked."""

from __future__ import annotations

import dataclasses
import re
from datetime import datetime, timezone

import pytest

from costsched.jobspec import parse, resolve
from costsched.optimize.planner import plan_job, prepare
from costsched.optimize.unmatched import deadline_missed
from costsched.optimize.unmatched_estimates import estimate_said, steps_estimated
from costsched.prices import prices_at
from costsched.throughput import ThroughputTable

AT = datetime(2020, 3, 1, tzinfo=timezone.utc)


def _job(**fields: object):  # noqa: ANN202
    spec = parse({"name": "fit", "run": "true", **fields})
    return resolve(spec, ThroughputTable(), AT, source="fit.yaml")


@pytest.fixture(scope="module")
def offerings(recorded_store):  # noqa: ANN001, ANN201
    return prepare(prices_at(recorded_store, AT))


def test_a_budget_short_on_an_estimated_speed_is_marked(offerings) -> None:  # noqa: ANN001
    job = _job(throughputs={"V100": 5.0}, steps=400_000,
               constraints={"gpu_models": ["K80"], "budget": 0.5})
    reason = plan_job(job, offerings).reason
    assert re.search(r"is \$[\d.,]+\* short: .* costs \$[\d.,]+\* \([^;]+, each at \$[\d.]+/h; "
                     r"\* from an estimated speed "
                     r"on \d+xK80: `throughputs: \{(\"K80:\d+\"|K80): STEPS_PER_S\}` in "
                     r"fit\.yaml",
                     reason), reason


def test_a_budget_short_on_given_speeds_is_not(offerings) -> None:  # noqa: ANN001
    job = _job(throughputs={"V100": 5.0}, steps=400_000,
               constraints={"gpu_models": ["V100"], "gpu_counts": [1], "budget": 0.5})
    reason = plan_job(job, offerings).reason
    assert "short" in reason and "*" not in reason, reason


def test_a_budget_short_reads_as_the_user_set_it_and_its_figures_add_up(offerings) -> None:  # noqa: ANN001
    """The budget, the shortfall and the cost at one precision ('budget $0.0010'), so
    that budget + short = cost as written."""
    job = _job(throughputs={"V100": 5.0}, steps=400_000,
               constraints={"gpu_models": ["V100"], "gpu_counts": [1], "budget": 0.001})
    reason = plan_job(job, offerings).reason
    found = re.search(r"budget \$(0\.0010) is \$([\d.,]+) short: .*, costs \$([\d.,]+)", reason)
    assert found, reason
    budget, short, cost = (float(g.replace(",", "")) for g in found.groups())
    assert budget + short == pytest.approx(cost)
    assert len({len(g.split(".")[1]) for g in found.groups()}) == 1, reason


def test_the_words_name_every_estimate_and_each_key_once() -> None:
    job = _job(throughputs={"A100": 10.0}, hours=2, reference_gpu="K80:8")
    assert steps_estimated(job)
    mark, said = estimate_said(job, {"throughput_estimated": True, "gpu_model": "K80",
                                     "gpu_count": 8})
    assert mark == "*"
    assert said == (' (* from an estimated speed on 8xK80 and the steps of 2 h of work on 8xK80 '
                    'at an estimated speed: `throughputs: {"K80:8": STEPS_PER_S}` in fit.yaml '
                    "gives the measured figure)")
    # A SkyPilot task writes the key under its `costsched:` section.
    task = dataclasses.replace(job, sky=True)
    assert estimate_said(task, {"throughput_estimated": True, "gpu_model": "K80",
                                "gpu_count": 8})[1].endswith(
        "in fit.yaml (under `costsched:`) gives the measured figure)")
    assert estimate_said(job, {"throughput_estimated": False, "gpu_model": "A100",
                               "gpu_count": 1})[0] == "*"  # its steps still rest on one
    given = _job(throughputs={"A100": 10.0}, hours=2, reference_gpu="A100")
    assert estimate_said(given, {"throughput_estimated": False}) == ("", "")


def test_the_deadline_line_marks_the_hours_to_run_not_the_start() -> None:
    line = deadline_missed("fit", 10, "aws us-east-1 g4dn.xlarge spot", 30.0, 0.25,
                           ("*", " (* from an estimated speed on 1xT4: ...)"))
    assert line.endswith("needs 30.25* h (30.00* h to run and 0.25 h to start) (* from an "
                         "estimated speed on 1xT4: ...); it would meet a deadline at least "
                         "30.25* h from now"), line


def test_a_stored_jobs_budget_short_on_an_estimated_speed_is_marked(offerings) -> None:  # noqa: ANN001
    """A stored job started again or recovered: its own budget's refusal marks the cost of
    its steps left as the plan's does, and names the key."""
    from costsched.own_budget import OwnBudget
    from costsched.service.jobs.decider import BudgetShort, JobNow, _refuse_short

    def refused(job) -> str:  # noqa: ANN001
        now = JobNow(job, AT, "dynamic-aware", "us-east-1", None, job.job.steps,
                     budget=OwnBudget(0.5, 0.1))
        with pytest.raises(BudgetShort) as caught:
            _refuse_short(now, job, plan_job(job, offerings))
        return str(caught.value)

    line = refused(_job(throughputs={"V100": 5.0}, steps=400_000,
                        constraints={"gpu_models": ["K80"], "budget": 0.5}))
    assert re.search(r"expected to cost \$[\d.,]+\* \(\$[\d.,]+ for [\d.,]+ h of work .*\) "
                     r"on the cheapest offering it allows, .* "
                     r"\(\$[\d.,]+ spent\) \(\* from an estimated speed on \d+xK80: "
                     r"`throughputs: \{(\"K80:\d+\"|K80): STEPS_PER_S\}` in fit\.yaml", line), line
    given = refused(_job(throughputs={"V100": 5.0}, steps=400_000,
                         constraints={"gpu_models": ["V100"], "gpu_counts": [1],
                                      "budget": 0.5}))
    assert "*" not in given, given


def test_a_sum_of_several_jobs_figures_names_each_estimate_and_key_once() -> None:
    """A collection's budget sums its jobs' costs: marked when any rests on an estimate,
    each estimate and key said once (a sweep's jobs share theirs), given speeds unsaid."""
    from costsched.optimize.unmatched_estimates import estimates_said

    a, b = (_job(throughputs={"V100": 5.0}, steps=1000) for _ in range(2))
    k80 = {"throughput_estimated": True, "gpu_model": "K80", "gpu_count": 1}
    t4 = {"throughput_estimated": True, "gpu_model": "T4", "gpu_count": 4}
    given = {"throughput_estimated": False, "gpu_model": "V100", "gpu_count": 1}
    assert estimates_said([(a, given), (b, given)]) == ("", "")
    assert estimates_said([(a, k80), (b, given)]) == estimate_said(a, k80)
    assert estimates_said([(a, k80), (b, k80)]) == estimate_said(a, k80)
    mark, said = estimates_said([(a, k80), (b, t4), (a, given)])
    assert mark == "*" and said == (
        ' (* from an estimated speed on 1xK80 and an estimated speed on 4xT4: `throughputs: '
        '{K80: STEPS_PER_S, "T4:4": STEPS_PER_S}` in fit.yaml gives the measured figures)')
