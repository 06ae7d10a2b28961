"""`logs JOB --all --node N`: one node's output on every instance a gang ran on (a node
lost and replaced: both of its rounds), under the lines `--all` heads them with; the options
that cannot go together are refused saying so, with the command that does what was meant."""

from __future__ import annotations

import json
import shlex
from datetime import datetime, timedelta, timezone
from pathlib import Path

from typer.testing import CliRunner

from costsched.cli import app
from costsched.store import PriceStore
from tests.costsched.cli.test_look import KEY, env, finished_job  # noqa: F401 - fixture by name

AT = datetime(2026, 1, 1, tzinfo=timezone.utc)


def _moved_gang(db: str, instances: Path) -> int:
    """A gang of 2 nodes that ran on two instances (moved once), its node 1 lost and
    replaced on the first; each node's output left in its folder."""
    store = PriceStore(db)
    job = store.jobs.create("gang", {"name": "gang", "launcher": "local",
                                     "spec": {"name": "gang", "num_nodes": 2}}, 10.0, at=AT)
    for n in (1, 2):
        at = AT + timedelta(hours=n)
        store.jobs.place(job, KEY, gpu_model="V100", gpu_count=1, at=at, usd_per_hour=1.0,
                         reason="launch" if n == 1 else "start", instance=f"{job}-{n}")
        store.jobs.end_placement(job, at + timedelta(minutes=30))
    store.jobs.transition(job, "succeeded", at=AT + timedelta(hours=3))
    store.dispose()
    for n in (1, 2):
        folder = instances / f"{job}-{n}"
        (folder / "nodes" / "1").mkdir(parents=True)
        (folder / "instance.json").write_text(json.dumps({"job_id": job}))
        (folder / "job.log").write_text(f"instance {n} rank 0\n")
        (folder / "nodes" / "1" / "job.log").write_text(f"instance {n} rank 1\n")
    lost = instances / f"{job}-1" / "nodes" / "1.lost-1"
    lost.mkdir()
    (lost / "job.log").write_text("instance 1 rank 1 round 1\n")
    return job


def test_all_with_node_shows_that_node_on_every_instance(env, tmp_path: Path) -> None:  # noqa: ANN001, F811
    job = _moved_gang(env["COSTSCHED_DB"], tmp_path / "instances")
    shown = CliRunner().invoke(app, ["logs", str(job), "--all", "--node", "1"])
    assert shown.exit_code == 0, shown.output
    out = shown.stdout
    assert "rank 0" not in out, out
    heads = [line for line in out.splitlines() if line.startswith("--- ")]
    assert [h.split(" (")[0] for h in heads] == [
        f"--- instance {job}-1, node 1, lost in round 1",
        f"--- instance {job}-1, node 1, replaced, from round 2",
        f"--- instance {job}-2, node 1"], heads
    assert "instance 1 rank 1 round 1\n" in out and "instance 2 rank 1\n" in out
    every = CliRunner().invoke(app, ["logs", str(job), "--all"])  # every node, as before
    assert every.exit_code == 0 and "instance 1 rank 0" in every.stdout, every.output
    zero = CliRunner().invoke(app, ["logs", str(job), "--all", "--node", "0"])
    assert zero.exit_code == 0 and "rank 1" not in zero.stdout, zero.output
    assert "instance 1 rank 0" in zero.stdout and "instance 2 rank 0" in zero.stdout
    beyond = CliRunner().invoke(app, ["logs", str(job), "--all", "--node", "2"])
    assert beyond.exit_code == 2
    assert beyond.output.strip() == f"error: --node 2: job {job} has 2 nodes (0 to 1)"


def test_follow_with_all_or_a_node_is_refused_saying_what_does_it(
        env, tmp_path: Path) -> None:  # noqa: ANN001, F811
    job = _moved_gang(env["COSTSCHED_DB"], tmp_path / "instances")
    both = CliRunner().invoke(app, ["logs", str(job), "--all", "--follow"])
    assert both.exit_code == 2
    assert both.output.strip() == (
        "error: --all and --follow cannot be given together: --follow follows the job "
        "across its instances itself; --all shows what each instance printed")
    node = CliRunner().invoke(app, ["logs", str(job), "--follow", "--node", "1"])
    assert node.exit_code == 2
    said = node.output.strip()
    assert said.startswith("error: --follow and --node 1 cannot be given together"), said
    hint = said.split("`")[1]  # the command it names works as written
    works = CliRunner().invoke(app, shlex.split(hint)[1:])
    assert works.exit_code == 0 and "instance 2 rank 1" in works.stdout, works.output


def test_a_node_of_a_job_of_one_node(env, tmp_path: Path) -> None:  # noqa: ANN001, F811
    job = finished_job(env["COSTSCHED_DB"], tmp_path / "instances")
    zero = CliRunner().invoke(app, ["logs", str(job), "--all", "--node", "0"])
    assert zero.exit_code == 0 and zero.stdout.endswith("one\ntwo\nthree\n"), zero.output
    one = CliRunner().invoke(app, ["logs", str(job), "--all", "--node", "1"])
    assert one.exit_code == 2 and one.output.strip() == (
        f"error: --node 1: job {job} has 1 node (0)")
