"""What a SkyPilot task leaves to the launch, through the CLI: `plan` works and names it,
`launch` refuses in one line until it is given, and nothing is stored meanwhile. Variables
are filled from envs (then --env) in the bucket names, mount paths and the checkpoint
location, so the job's checkpoint location is the bucket, never the `${...}` text. A task
in a Docker image runs in its container on the local launcher (a stand-in `docker` on
PATH), or is refused in one line where the machine has no container runtime."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from tests.launchers import fake_docker


def _jobs(cli) -> list:  # noqa: ANN001
    shown = json.loads(cli("status", "--json").stdout)
    return shown["jobs"] if isinstance(shown, dict) else shown


def _wait_final(cli, job_id: int) -> str:  # noqa: ANN001
    deadline = time.monotonic() + 90
    while True:
        [job] = [j for j in _jobs(cli) if j["id"] == job_id]
        if job["state"] in ("succeeded", "failed") or time.monotonic() > deadline:
            return job["state"]
        time.sleep(0.3)


@pytest.mark.parametrize(("mounts", "envs", "plan_says", "launch_says"), [
    ("  /out:\n    name: ${BUCKET}\n    mode: MOUNT\n", "envs:\n  BUCKET:\n",
     "launch needs: file_mounts./out: ${BUCKET} has no value", "BUCKET"),
    ("  /checkpoint:\n    name:\n    mode: MOUNT\n", "",
     "launch needs: file_mounts./checkpoint.name: no bucket name",
     "field file_mounts./checkpoint.name: no bucket name"),
    ("  /a:\n    name: bucket-a\n    mode: MOUNT\n  /b:\n    name: bucket-b\n    mode: MOUNT\n",
     "", "several writable bucket mounts (/a, /b)",
     "field file_mounts: several writable bucket mounts (/a, /b): say which holds the "
     "checkpoints with costsched.checkpoint.location: PATH"),
    ("  /data: s3://team-data/${MISSING}\n", "",
     "${MISSING} is not one of the task's envs",
     "field file_mounts./data: ${MISSING} is not one of the task's envs"),
])
def test_plan_names_what_launch_needs_and_launch_refuses_in_one_line(
        cli, tmp_path: Path, mounts: str, envs: str, plan_says: str,  # noqa: ANN001
        launch_says: str) -> None:
    path = tmp_path / "task.yaml"
    path.write_text(f"resources: {{accelerators: V100:1}}\n{envs}file_mounts:\n{mounts}"
                    "run: python train.py\n")
    planned = cli("plan", path)
    assert planned.exit_code == 0, planned.output
    assert plan_says in " ".join(planned.output.split()), planned.output
    launched = cli("launch", path, "--wait", "0")
    assert launched.exit_code != 0
    [line] = launched.output.strip().splitlines()
    assert line.startswith(f"error: {path}: ") and launch_says in line, line
    assert _jobs(cli) == []  # nothing stored


def test_a_task_without_run_is_planned_and_refused_at_launch(cli, tmp_path: Path  # noqa: ANN001
                                                             ) -> None:
    path = tmp_path / "task.yaml"
    path.write_text("resources: {accelerators: T4:1}\nsetup: pip install numpy\n")
    planned = cli("plan", path)
    assert planned.exit_code == 0, planned.output
    assert "launch needs: run: the task has no run command" in " ".join(planned.output.split())
    launched = cli("launch", path, "--wait", "0")
    assert launched.exit_code == 2
    assert launched.output.strip().splitlines() == [
        f"error: {path}: field run: the task has no run command: costsched runs it as the "
        "job (`sky launch` makes a cluster without one)"]
    assert _jobs(cli) == []  # nothing stored, nothing launched to run nothing


@pytest.fixture()
def s3(monkeypatch: pytest.MonkeyPatch, tmp_path: Path):  # noqa: ANN201
    pytest.importorskip("flask", reason="moto's server mode needs moto[server]")
    from tests.costsched.test_skypilot_launch import s3_server

    yield from s3_server.__wrapped__(monkeypatch, tmp_path)


def test_a_bucket_named_by_an_env_is_the_checkpoint_location_not_its_variable(
        cli, db_path: Path, tmp_path: Path, s3: str,  # noqa: ANN001
        monkeypatch: pytest.MonkeyPatch) -> None:
    import boto3

    from costsched.store import PriceStore

    monkeypatch.setenv("COSTSCHED_INSTANCES", str(tmp_path / "instances"))
    path = tmp_path / "task.yaml"
    path.write_text("resources: {accelerators: V100:1}\n"
                    "envs:\n  MY_BUCKET: my-ckpt-bucket\n  ROOT: /ckpt\n"
                    "file_mounts:\n  ${ROOT}:\n    name: ${MY_BUCKET}\n    mode: MOUNT\n"
                    "run: echo done\n")
    planned = cli("plan", path)
    assert planned.exit_code == 0 and "checkpoints go to s3://my-ckpt-bucket" in \
        " ".join(planned.output.split()), planned.output

    # the bucket does not exist yet: one line, and no job left pending
    refused = cli("launch", path, "--wait", "0")
    assert refused.exit_code != 0
    [line] = [t for t in refused.output.splitlines() if t.startswith("error:")]  # no server log
    assert line == ("error: checkpoint store s3://my-ckpt-bucket: bucket my-ckpt-bucket does "
                    "not exist"), line
    assert _jobs(cli) == []

    boto3.client("s3", region_name="us-east-1").create_bucket(Bucket="my-ckpt-bucket")
    launched = cli("launch", path, "--wait", "0", "--json")
    assert launched.exit_code == 0, launched.output
    [job] = json.loads(launched.stdout)
    store = PriceStore(str(db_path))
    record = store.jobs.get(job["id"])
    store.dispose()
    assert record.checkpoint_location == (f"s3://my-ckpt-bucket/job-{job['id']}-"
                                          f"{record.spec['checkpoint_scope']}")
    assert "${" not in json.dumps(record.spec)
    assert _wait_final(cli, job["id"]) == "succeeded"


def test_the_checkpoint_location_of_the_costsched_section_takes_envs_too(
        cli, tmp_path: Path) -> None:  # noqa: ANN001
    path = tmp_path / "task.yaml"
    path.write_text("resources: {accelerators: V100:1}\nenvs:\n  RUN: r7\n"
                    f"costsched:\n  checkpoint: {{location: '{tmp_path}/ckpt/${{RUN}}'}}\n"
                    "run: echo done\n")
    from costsched.taskfile import load

    [spec] = load(path)
    assert spec.checkpoint.location == f"{tmp_path}/ckpt/r7"
    path.write_text(path.read_text().replace("  RUN: r7\n", "  RUN:\n"))
    planned = cli("plan", path)
    assert planned.exit_code == 0
    assert "launch needs: costsched.checkpoint.location: ${RUN} has no value" in \
        " ".join(planned.output.split())
    assert load(path, envs={"RUN": "r8"})[0].checkpoint.location == f"{tmp_path}/ckpt/r8"


DOCKER_TASK = """\
name: in-a-container
resources:
  accelerators: V100:1
  image_id: docker:python:3.11-slim
envs:
  GREETING: hello
run: echo "$GREETING from the container" > "$CHECKPOINT_DIR/out.txt"
"""


def test_a_docker_image_task_on_the_local_launcher(cli, tmp_path: Path,  # noqa: ANN001
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    instances = tmp_path / "instances"
    monkeypatch.setenv("COSTSCHED_INSTANCES", str(instances))
    path = tmp_path / "task.yaml"
    path.write_text(DOCKER_TASK)
    monkeypatch.setenv("PATH", "/usr/bin:/bin")  # no container runtime
    refused = cli("launch", path, "--wait", "0")
    assert refused.exit_code != 0
    [line] = refused.output.strip().splitlines()
    assert line == (f"error: {path}: field resources.image_id: docker:python:3.11-slim: the "
                    "local launcher runs the job on this machine, which has no container "
                    "runtime ('docker' is not on PATH); install Docker, or launch on aws or "
                    "gcp")
    assert _jobs(cli) == []

    log = tmp_path / "docker.log"
    fake_docker.install(tmp_path / "bin", log)
    monkeypatch.setenv("PATH", f"{tmp_path / 'bin'}:/usr/bin:/bin")
    launched = cli("launch", path, "--wait", "0", "--json")
    assert launched.exit_code == 0, launched.output
    [job] = json.loads(launched.stdout)
    assert _wait_final(cli, job["id"]) == "succeeded"
    [folder] = [p.parent for p in instances.glob("*/instance.json")]
    assert (folder / "checkpoints" / "out.txt").read_text() == "hello from the container\n"
    [run] = [c for c in fake_docker.calls(log) if c["cmd"] == "run"]
    assert run["image"] == "python:3.11-slim" and run["env"] == {}  # GREETING: by file
    assert "image_id not applied" not in (folder / "agent.log").read_text()


def test_a_docker_image_task_is_refused_while_the_docker_daemon_is_stopped(
        cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: ANN001
    """Docker installed, its daemon stopped: one line naming the fix, before anything is
    stored, launched or armed (no job, no instance folder, no supervisor's log)."""
    instances = tmp_path / "instances"
    monkeypatch.setenv("COSTSCHED_INSTANCES", str(instances))
    path = tmp_path / "task.yaml"
    path.write_text(DOCKER_TASK)
    log = tmp_path / "docker.log"
    fake_docker.install(tmp_path / "bin", log, stopped=True)
    monkeypatch.setenv("PATH", f"{tmp_path / 'bin'}:/usr/bin:/bin")
    refused = cli("launch", path, "--wait", "0")
    assert refused.exit_code == 2, refused.output
    [line] = refused.output.strip().splitlines()
    assert line == (f"error: {path}: field resources.image_id: docker:python:3.11-slim: the "
                    "local launcher runs the job on this machine, which has Docker, whose "
                    f"daemon does not answer ({fake_docker.STOPPED}); start Docker (sudo "
                    "systemctl start docker), or launch on aws or gcp")
    assert _jobs(cli) == []
    assert not list(instances.glob("*/instance.json"))
    assert "Recovery armed" not in refused.output
    assert [c["cmd"] for c in fake_docker.calls(log)] == ["version"]  # asked, nothing pulled


def test_a_cpu_task_launches_on_a_cpu_instance(cli, db_path: Path, tmp_path: Path,  # noqa: ANN001
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    from costsched import catalog
    from costsched.store import PriceStore

    monkeypatch.setenv("COSTSCHED_INSTANCES", str(tmp_path / "instances"))
    path = tmp_path / "task.yaml"
    path.write_text("name: eval\nresources: {cpus: 2+, infra: aws}\nrun: echo evaluated\n")
    launched = cli("launch", path, "--wait", "0", "--json")
    assert launched.exit_code == 0, launched.output
    [job] = json.loads(launched.stdout)
    assert _wait_final(cli, job["id"]) == "succeeded"
    store = PriceStore(str(db_path))
    [placement] = store.jobs.placements(job["id"]).to_dict("records")
    store.dispose()
    row = catalog.lookup("aws", placement["instance_type"])
    assert row["gpu_count"] == 0 and placement["gpu_count"] == 0 and row["vcpus"] >= 2


def test_a_local_file_mount_that_is_not_there_is_refused_at_launch(
        cli, tmp_path: Path) -> None:  # noqa: ANN001
    """A local path mounted is copied from this machine at each start: one missing is
    refused in one line naming the field, before anything is stored (not a failed job)."""
    path = tmp_path / "task.yaml"
    path.write_text("resources: {accelerators: V100:1}\nfile_mounts:\n  /cfg: ./configs\n"
                    "run: python train.py\n")
    launched = cli("launch", path, "--wait", "0")
    assert launched.exit_code == 2
    [line] = launched.output.strip().splitlines()
    assert line == (f"error: {path}: field file_mounts./cfg: local path './configs': no "
                    f"such file or folder (relative to the file's folder, {tmp_path})"), line
    assert _jobs(cli) == []
