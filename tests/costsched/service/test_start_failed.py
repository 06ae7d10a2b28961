"""`start` of a failed job: its command exited non-zero after checkpoints were published
(a bug at step 700 of 2,400, its checkpoint at 600). `status` says how to start it again
(the command works as printed); `start` resumes it from its newest verified checkpoint with
the code packed at its launch, or with `--repack` its workdir packed again (the bug fixed);
its cost so far is kept and the new run's charges add to it, and it is no recovery. Real
local-launcher jobs (subprocesses), a SQLite store."""

from __future__ import annotations

import re
import shlex
import sys
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
import yaml

from costsched.cli.status_lines import print_status
from costsched.model import InvalidInput
from costsched.service import jobs as service
from costsched.store import PriceStore
from launchers.local import LocalLauncher
from tests.costsched.migration.test_edges import FakeLauncher
from tests.costsched.service.job_scripts import PREAMBLE
from tests.costsched.service.test_jobs import set_prices, wait_for

STEPS, SAVED, BUG = 2400, 600, 700
# The code launched: checkpoints step 600 and reports it; once `go` exists it reaches step
# 700 and hits its bug (exit 1); a run that resumes from the checkpoint hits it once `again`
# exists (it runs until then).
BUGGY = PREAMBLE + f"""\
go = Path(sys.argv[1])
if (saved / "step.txt").exists():
    print("resumed from step", (saved / "step.txt").read_text(), flush=True)
    while not go.with_name("again").exists():
        time.sleep(0.05)
else:
    (saved / "step.txt").write_text("{SAVED}")
    report({SAVED})
    while not go.exists():
        time.sleep(0.05)
report({BUG})
print("loss is nan at step {BUG}", flush=True)
sys.exit(1)
"""
# The code fixed: resumes from the checkpoint and does the rest of the steps.
FIXED = PREAMBLE + f"""\
start = (saved / "step.txt").read_text() if (saved / "step.txt").exists() else "0"
print("fixed: resumed from step", start, flush=True)
(saved / "step.txt").write_text("{STEPS}")
report({STEPS})
time.sleep(0.5)
"""
# Fails at step 100, before any checkpoint.
AT_ONCE = PREAMBLE + """\
report(100)
print("no such file: data.csv", flush=True)
sys.exit(2)
"""


@pytest.fixture()
def local(tmp_path: Path, db_path: Path, monkeypatch: pytest.MonkeyPatch):  # noqa: ANN201
    """The store the CLI opens (`cli`), and the local launcher it makes (its instances
    under $COSTSCHED_INSTANCES)."""
    instances = tmp_path / "instances"
    monkeypatch.setenv("COSTSCHED_INSTANCES", str(instances))
    store = PriceStore(str(db_path))
    set_prices(store, {"us-east-1a": 1.0, "us-east-1b": 2.0},
               datetime.now(timezone.utc) - timedelta(hours=1))
    launcher = LocalLauncher(instances, grace_seconds=5)
    yield store, launcher
    for instance in launcher.instances():
        launcher.terminate(instance.id)
    store.dispose()


def _project(tmp_path: Path, code: str) -> tuple[Path, Path]:
    """A project folder holding the job's script, and its job file (workdir: the folder)."""
    project = tmp_path / "proj"
    project.mkdir(exist_ok=True)
    (project / "train.py").write_text(code)
    spec = {"name": "train", "workdir": ".", "throughputs": {"V100": 0.01}, "steps": STEPS,
            "run": f"{sys.executable} train.py {tmp_path / 'go'}",
            "constraints": {"regions": ["us-east-1"], "markets": ["spot"]},
            "checkpoint": {"interval_minutes": 30, "size_gb": 1.0}}
    path = project / "job.yaml"
    path.write_text(yaml.safe_dump(spec))
    return project, path


def _failed(store: PriceStore, launcher: LocalLauncher, tmp_path: Path, code: str,
            saved: int | None) -> int:
    """A job launched with `code`, failed on its instance (after its checkpoint at
    `saved`, when given), closed as failed by a pass."""
    _, path = _project(tmp_path, code)
    [job] = service.launch(store, path, launcher=launcher, wait_seconds=20,
                           checkpoint_root=str(tmp_path / "checkpoints"))
    first = str(store.jobs.placements(job.id)["instance"].iloc[-1])
    if saved is not None:
        wait_for(lambda: launcher.status(first).checkpoint_step == saved)
        (tmp_path / "go").touch()
    # (closed already, maybe, by the launch's own wait: its instance then ended)
    wait_for(lambda: store.jobs.get(job.id).state == "failed"
             or launcher.status(first).state == "failed")
    service.reconcile(store, launcher)
    assert store.jobs.get(job.id).state == "failed"
    return job.id


def _said(store: PriceStore, launcher: LocalLauncher, job: int,
          capsys: pytest.CaptureFixture[str]) -> str:
    """What `status JOB` prints under the job, its lines joined."""
    capsys.readouterr()
    print_status(service.status(store, launcher, job, reconcile_first=False), json_out=False)
    return " ".join(capsys.readouterr().out.split())


def _commands(said: str) -> list[str]:
    """The `costsched start ...` commands a line names, as printed."""
    return re.findall(r"`(costsched start [^`]*)`", said)


def _run(cli, command: str):  # noqa: ANN001, ANN202
    """A command as printed, run: `costsched` is the CLI."""
    words = shlex.split(command)
    assert words[0] == "costsched", command
    return cli(*words[1:])


def _bill(store: PriceStore, launcher: LocalLauncher, job: int) -> tuple[float, list]:
    [s] = service.status(store, launcher, job, reconcile_first=False)
    return s.cost.total_usd, [(p.instance, p.usd) for p in s.cost.charged]


def test_a_failed_job_starts_again_from_its_checkpoint_and_repacked_code_succeeds(
        local, tmp_path: Path, cli, capsys: pytest.CaptureFixture[str]) -> None:  # noqa: ANN001
    store, launcher = local
    job = _failed(store, launcher, tmp_path, BUGGY, SAVED)
    said = _said(store, launcher, job, capsys)
    assert f"`costsched start {job}` starts it again from step {SAVED:,}, its newest " \
           "verified checkpoint's" in said, said
    plain, repack = _commands(said)
    assert (plain, repack) == (f"costsched start {job}", f"costsched start {job} --repack")
    spent, charged = _bill(store, launcher, job)
    assert spent > 0 and len(charged) == 1

    # Started again as it was launched: the code packed at its launch, which fails again.
    started = _run(cli, plain)
    assert started.exit_code == 0, started.output
    assert "code: the code packed at its launch" in " ".join(started.output.split())
    second = str(store.jobs.placements(job)["instance"].iloc[-1])
    (tmp_path / "again").touch()
    wait_for(lambda: launcher.status(second).state == "failed")
    assert f"resumed from step {SAVED}" in launcher.logs(second, tail=5)
    service.reconcile(store, launcher)
    assert store.jobs.get(job).state == "failed"

    # The bug fixed in the project's folder; the start as printed, with --repack.
    (tmp_path / "proj" / "train.py").write_text(FIXED)
    said = _said(store, launcher, job, capsys)
    assert repack in _commands(said), said
    started = _run(cli, repack)
    assert started.exit_code == 0, started.output
    out = " ".join(started.output.split())
    assert f"code: its workdir {tmp_path / 'proj'} packed again now" in out, out
    third = str(store.jobs.placements(job)["instance"].iloc[-1])
    wait_for(lambda: launcher.status(third).state == "succeeded")
    assert f"fixed: resumed from step {SAVED}" in launcher.logs(third, tail=5)
    service.reconcile(store, launcher)
    record = store.jobs.get(job)
    assert (record.id, record.state, record.steps_done) == (job, "succeeded", STEPS)

    # One job, three runs: the first's charge kept as it was, each charged once, the total
    # their sum; a start is no recovery.
    total, every = _bill(store, launcher, job)
    assert [i for i, _ in every] == list(store.jobs.placements(job)["instance"].astype(str))
    assert every[0] == charged[0] and len(every) == 3
    assert total == pytest.approx(sum(usd for _, usd in every))
    assert list(store.jobs.placements(job)["reason"]) == ["launch", "start", "start"]
    [s] = service.status(store, launcher, job, reconcile_first=False)
    assert s.recoveries == 0
    assert [m.kind for m in store.moves.of_job(job)] == ["launch", "start", "start"]

    refused = cli("start", str(job))  # done: one line, naming its state
    assert refused.exit_code != 0
    line = " ".join(refused.output.split())
    assert f"job {job} (train) has succeeded: only a stopped or failed job" in line, line
    assert len(store.jobs.placements(job)) == 3


def test_a_failed_job_with_no_checkpoint_starts_from_step_0(
        local, tmp_path: Path, cli, capsys: pytest.CaptureFixture[str]) -> None:  # noqa: ANN001
    store, launcher = local
    job = _failed(store, launcher, tmp_path, AT_ONCE, None)
    said = _said(store, launcher, job, capsys)
    assert f"`costsched start {job}` starts it again from step 0: it published no " \
           "checkpoint" in said, said
    assert store.jobs.get(job).steps_done == 100
    started = service.start(store, launcher, job)
    assert started.state in ("launching", "running")
    assert store.jobs.get(job).steps_done == 0  # where it starts over


@pytest.fixture()
def fake(store: PriceStore, tmp_path: Path) -> tuple[FakeLauncher, int]:
    """A job of no workdir on the in-memory launcher, failed on its instance."""
    set_prices(store, {"us-east-1a": 1.0}, datetime.now(timezone.utc) - timedelta(hours=1))
    spec = {"name": "train", "throughputs": {"V100": 0.5}, "steps": 3600, "run": "true",
            "constraints": {"regions": ["us-east-1"], "markets": ["spot"]}}
    path = tmp_path / "train.yaml"
    path.write_text(yaml.safe_dump(spec))
    launcher = FakeLauncher()
    [job] = service.launch(store, path, launcher=launcher,
                           checkpoint_root=str(tmp_path / "ckpt"))
    return launcher, job.id


def test_a_running_job_is_refused_in_one_line_naming_what_to_do(
        store: PriceStore, fake) -> None:  # noqa: ANN001
    launcher, job = fake
    with pytest.raises(InvalidInput) as info:
        service.start(store, launcher, job)
    said = str(info.value)
    assert "\n" not in said and said.startswith(
        f"job {job} (train) is running: only a stopped or failed job, or one that ended "
        "short of its steps, can be started again"), said
    assert f"`costsched status {job}`" in said, said


def test_repack_of_a_job_without_a_workdir_is_refused_in_one_line(
        store: PriceStore, fake) -> None:  # noqa: ANN001
    launcher, job = fake
    launcher.set(str(store.jobs.placements(job)["instance"].iloc[-1]), "failed")
    service.reconcile(store, launcher)
    assert store.jobs.get(job).state == "failed"
    with pytest.raises(InvalidInput) as info:
        service.start(store, launcher, job, repack=True)
    said = str(info.value)
    assert "\n" not in said and said.startswith(
        f"job {job} (train): --repack: its file names no workdir, so no code was packed"), said
    assert store.jobs.get(job).state == "failed"  # nothing changed
