"""The optimizer's own job vocabulary: a `Workload` is planned without any job spec, the job
spec's `ResolvedJob` is planned as one and handed back as it came, and the optimizer loads
neither the job spec, the store, the store's prices nor the configuration."""

from __future__ import annotations

import subprocess
import sys
from dataclasses import replace
from datetime import datetime, timezone

import pandas as pd

from costsched.jobspec import ResolvedJob, parse, resolve
from costsched.optimize.collection.build import collection_problem
from costsched.optimize.job import Workload
from costsched.optimize.planner import plan_job, plan_jobs, prepare
from costsched.prices import prices_at
from costsched.throughput import ThroughputTable

AT = datetime(2020, 3, 1, tzinfo=timezone.utc)


def resolved(name: str = "resnet", nodes: int = 1) -> ResolvedJob:
    spec = parse({"name": name, "model": "ResNet-50 (batch size 64)", "steps": 50_000,
                  "envs": {"SEED": "1"}, "num_nodes": nodes,
                  "checkpoint": {"interval_minutes": 30, "restart_minutes": 5},
                  "constraints": {"clouds": ["aws"], "regions": ["us-east-1"]}})
    return resolve(spec, ThroughputTable(), AT, source="jobs/resnet.yaml")


def offerings() -> pd.DataFrame:
    return prepare(prices_at(None, AT, clouds=["aws"], regions=["us-east-1"]))


def bare(job: ResolvedJob) -> Workload:
    return Workload(job.job, job.table, job.checkpoint_hours, job.restart_hours,
                    order=job.order, nodes=job.nodes)


def test_a_workload_is_planned_as_its_job_spec_is() -> None:
    spec_job, market = resolved(nodes=2), offerings()
    work = bare(spec_job)
    assert type(work) is Workload and isinstance(spec_job, Workload)
    from_spec, from_work = plan_job(spec_job, market), plan_job(work, market)
    pd.testing.assert_frame_equal(from_spec.ranked, from_work.ranked)
    assert from_work.best is not None and (from_work.ranked["nodes"] == 2).all()
    assert from_work.job is work
    assert from_spec.job is spec_job and from_spec.job.envs == {"SEED": "1"}
    assert from_spec.job.source == "jobs/resnet.yaml"  # what only the views read, kept


def test_plans_of_jobs_that_rank_alike_hand_each_job_back() -> None:
    first = resolved("a")
    second = ResolvedJob(replace(first.job, name="b"), first.table, first.checkpoint_hours,
                         first.restart_hours, {"SEED": "2"}, "jobs/b.yaml")
    plans = plan_jobs([first, second], offerings())
    assert plans[0].job is first and plans[1].job is second
    assert plans[1].job.envs == {"SEED": "2"}
    assert plans[0].ranked is plans[1].ranked  # ranked once


def test_the_collection_problem_takes_workloads() -> None:
    market = offerings()
    jobs = [bare(resolved("a")), bare(resolved("b"))]
    problem = collection_problem(jobs, market)
    assert problem.jobs == ["a", "b"]


def test_the_optimizer_loads_no_job_spec_store_or_configuration() -> None:
    probe = ("import sys\n"
             "import costsched.optimize.planner, costsched.optimize.collection.build\n"
             "import costsched.optimize.collection.packing, costsched.policies\n"
             "print(' '.join(sorted(m for m in sys.modules if m in {'costsched.jobspec', "
             "'costsched.prices', 'costsched.store', 'costsched.config', "
             "'costsched.skypilot', 'costsched.taskfile'})))")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == ""
