"""The agent's supervisor on a cloud instance, executed: the startup script EC2 holds (moto
in server mode) runs under bash in a sandbox, as in tests/launchers/test_boot_path. The
agent is killed with SIGKILL while the job runs: the supervisor stops what is left of the
job (it checkpoints on SIGTERM), publishes its checkpoints, starts the agent again, and the
job resumes from its newest checkpoint and finishes with the bytes of an uninterrupted run,
never running twice at once. The same with a secret: read from SSM at boot, deleted there
once read, kept for the restarted agent in a file its owner alone reads, and in no log."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import sysconfig
from pathlib import Path

import pandas as pd
import pytest
import yaml

pytest.importorskip("flask", reason="moto's server mode needs moto[server]")

from costsched.service import jobs as service  # noqa: E402
from costsched.store import PriceStore  # noqa: E402
from launchers.aws import AwsLauncher  # noqa: E402
from launchers.checkpoints import open_store  # noqa: E402
from launchers.userdata import checkout_install  # noqa: E402
from tests.job_folders import folder_of  # noqa: E402
from tests.launchers import test_boot_path as boot  # noqa: E402
from tests.launchers.moto_images import IMAGE
from tests.launchers.test_boot_path import (  # noqa: E402
    AT,
    BUCKET,
    PROJECT,
    Metadata,
    ec2_instance,
    wait_for,
    write_job,
)

metadata, moto_server = boot.metadata, boot.moto_server  # the fixtures

SECRET = "hf_s3cr3t-value-4d9c2e"


def heartbeat_pid(workdir: Path) -> int | None:
    try:
        return int(json.loads((workdir / "heartbeat").read_text())["pid"])
    except (OSError, ValueError, KeyError):
        return None


@pytest.mark.results
def test_a_killed_agent_is_started_again_and_the_job_finishes_once(
        tmp_path: Path, moto_server: str, metadata: Metadata) -> None:
    import boto3

    s3 = boto3.client("s3", region_name="us-east-1")
    s3.create_bucket(Bucket=BUCKET)
    ec2 = boto3.client("ec2", region_name="us-east-1")
    image = IMAGE
    launcher = AwsLauncher(image_id=image, install=checkout_install(sysconfig.get_paths()[
        "purelib"]), root=str(tmp_path / "i1" / "root"))
    store = PriceStore(f"sqlite:///{tmp_path / 'store.sqlite'}")
    store.ingest(pd.DataFrame([dict(
        cloud="aws", region="us-east-1", zone="us-east-1a", instance_type="p3.2xlarge",
        market="spot", os="linux", gpu_model="V100", gpu_count=1, vcpus=8, memory_gb=61.0,
        usd_per_hour=0.9, effective_at=AT, source="test")]))
    # The job holds after a step, checkpointed, while this file exists: the agent is killed
    # and started again while it trains, never after it ended, however slowly the machine
    # starts the new agent.
    hold = tmp_path / "hold"
    hold.touch()
    spec = write_job(tmp_path)
    held = yaml.safe_load(spec.read_text())
    held["run"] += f" --hold-while {hold}"
    spec.write_text(yaml.safe_dump(held))
    [job] = service.launch(store, [spec], launcher=launcher,
                           checkpoint_root=f"s3://{BUCKET}/jobs")
    instance_id = str(store.jobs.placements(job.id)["instance"].iloc[-1])
    checkpoints = open_store(f"s3://{BUCKET}/jobs/{folder_of(store, job.id)}")
    instance = ec2_instance(ec2, instance_id, tmp_path / "i1", moto_server, metadata,
                            image_has_env=True)
    try:
        wait_for(lambda: any(c.part("state.npz") for c in checkpoints.list()))
        first = heartbeat_pid(instance.workdir)
        assert first is not None
        os.kill(first, signal.SIGKILL)  # the agent dies (the out-of-memory killer, say)
        wait_for(lambda: heartbeat_pid(instance.workdir) not in (None, first))
        # the new agent stops the old job and resumes it: then it may run to its end
        wait_for(lambda: "resumed at step" in (instance.workdir / "job.log").read_text(
            errors="replace"), timeout=300)
        hold.unlink()
        status = instance.wait()
    finally:
        instance.kill()
    console = (instance.sandbox / "console.log").read_text(errors="replace")
    assert status["state"] == "succeeded", (status, console)
    assert "the agent was killed (signal 9)" in console
    assert "starting the agent again (1 of 5)" in console
    log = (instance.workdir / "job.log").read_text()
    # the old job was stopped (and checkpointed) before the new agent resumed it: once
    stopped_at = int(log.split("stopped at step")[1].split()[0])
    assert log.count("stopped at step") == 1 and log.count("done at step") == 1, log
    assert f"resumed at step {stopped_at}" in log, log
    assert log.index("stopped at step") < log.index(f"resumed at step {stopped_at}")

    reference = tmp_path / "reference"
    subprocess.run([sys.executable, "train.py", "--steps", boot.STEPS], cwd=PROJECT, check=True,
                   env={**os.environ, "CHECKPOINT_DIR": str(reference)}, capture_output=True)
    result = [c.part("result.npy") for c in checkpoints.list() if c.part("result.npy")][-1]
    got = checkpoints.fetch(result, tmp_path / "got")
    assert got.read_bytes() == (reference / "result.npy").read_bytes()


@pytest.mark.results
def test_boot_reads_the_secret_from_ssm_deletes_it_and_says_it_nowhere(
        tmp_path: Path, moto_server: str, metadata: Metadata) -> None:
    import boto3

    from launchers.base import LaunchSpec
    from tests.launchers.test_aws import offering

    s3 = boto3.client("s3", region_name="us-east-1")
    s3.create_bucket(Bucket=BUCKET)
    ssm = boto3.client("ssm", region_name="us-east-1")
    ec2 = boto3.client("ec2", region_name="us-east-1")
    root = tmp_path / "i1" / "root"
    launcher = AwsLauncher(image_id=IMAGE,
                           install=checkout_install(sysconfig.get_paths()["purelib"]),
                           root=str(root))
    digest = ("import hashlib, os; open('../seen', 'w').write("
              "hashlib.sha256(os.environ['HF_TOKEN'].encode()).hexdigest())")
    job = LaunchSpec(1, "secret", f"{sys.executable} -c \"{digest}\"", offering(),
                     f"s3://{BUCKET}/jobs/job-1", "launch-1",
                     envs={"HF_TOKEN": SECRET}, secret_names=("HF_TOKEN",))
    got = launcher.launch(job)
    assert len(ssm.describe_parameters()["Parameters"]) == 1
    instance = ec2_instance(ec2, got.id, tmp_path / "i1", moto_server, metadata,
                            image_has_env=True)
    try:
        status = instance.wait()
    finally:
        instance.kill()
    console = (instance.sandbox / "console.log").read_text(errors="replace")
    assert status["state"] == "succeeded", (status, console)
    import hashlib

    assert (instance.workdir / "seen").read_text() == hashlib.sha256(
        SECRET.encode()).hexdigest()
    assert ssm.describe_parameters()["Parameters"] == []  # deleted once read
    import base64

    user_data = base64.b64decode(ec2.describe_instance_attribute(
        InstanceId=got.id.split("/")[1], Attribute="userData")["UserData"]["Value"]).decode()
    for text in (console, (instance.workdir / "job.log").read_text(),
                 (instance.workdir / "status.json").read_text(), user_data):
        assert SECRET not in text
    # the job's environment was kept for the agent's restarts (0600), and goes with the job
    assert list((root / "run").iterdir()) == []
    for path in root.rglob("*"):
        if path.is_file():
            assert SECRET.encode() not in path.read_bytes(), path


def test_the_systemd_unit_restarts_the_supervisor_and_holds_no_job_field() -> None:
    from launchers.base import LaunchSpec
    from launchers.userdata import read_payload, startup_script
    from tests.launchers.test_aws import offering

    job = LaunchSpec(4, "n", "python train.py", offering(), "s3://b/jobs/job-4", "a1",
                     envs={"HF_TOKEN": SECRET, "LR": "0.1"}, secret_names=("HF_TOKEN",))
    script = startup_script(job, install="true", notice_url="http://127.0.0.1:9/",
                            root="/opt/costsched", secret_refs={"HF_TOKEN": "/costsched/x"})
    unit = read_payload(script)["unit"]
    lines = unit.splitlines()
    assert "Restart=on-failure" in lines and "KillMode=process" in lines
    assert "ExecStart=@ROOT@/bin/python -m launchers.agent_supervisor @LAUNCH@" in lines
    assert SECRET not in unit and "0.1" not in unit and "train.py" not in unit
    assert SECRET not in script


def test_the_startup_scripts_loop_starts_a_killed_supervisor_again_and_never_a_second_agent(
        tmp_path: Path) -> None:
    """Without systemd: the supervisor is killed while its agent runs; the script's loop
    starts another, which waits for that agent (never a second one) and, the job having
    ended meanwhile, starts nothing."""
    from launchers.base import LaunchSpec
    from launchers.userdata import startup_script
    from tests.launchers.test_aws import offering

    real = Path(__file__).resolve().parents[2] / "launchers"
    root = tmp_path / "root"
    (root / "bin").mkdir(parents=True)
    (root / "bin" / "python").symlink_to(sys.executable)  # stands for the made venv
    fake = tmp_path / "fake" / "launchers"
    fake.mkdir(parents=True)
    (fake / "__init__.py").write_text(f"__path__.append({str(real)!r})\n")
    runs, parent = tmp_path / "runs", tmp_path / "parent"
    (fake / "agent.py").write_text(  # a stand-in agent: says it ran, lives 4 s, succeeds
        "import json, os, sys, time\n"
        "from pathlib import Path\n"
        "STATUS, CHECKPOINTS = 'status.json', 'checkpoints'\n"
        "if __name__ == '__main__':\n"
        "    os.setpgid(0, 0)\n"
        f"    with open({str(runs)!r}, 'a') as out: out.write(f'{{os.getpid()}}\\n')\n"
        f"    Path({str(parent)!r}).write_text(str(os.getppid()))\n"
        "    time.sleep(4)\n"
        "    workdir = sys.argv[sys.argv.index('--workdir') + 1]\n"
        "    Path(workdir, STATUS).write_text(json.dumps({'state': 'succeeded'}))\n")
    job = LaunchSpec(5, "n", "python train.py", offering(), str(tmp_path / "ckpt"), "a1")
    script = startup_script(job, install="true", notice_url="http://127.0.0.1:9/",
                            root=str(root))
    env = {"PATH": os.environ["PATH"], "HOME": str(tmp_path),
           "PYTHONPATH": os.pathsep.join([str(fake.parent), str(real.parent)])}
    boot_script = subprocess.Popen(["bash", "-c", script], env=env, cwd=tmp_path,
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        wait_for(parent.exists, timeout=60)
        supervisor = int(parent.read_text())
        assert b"launchers.agent_supervisor" in Path(f"/proc/{supervisor}/cmdline").read_bytes()
        os.kill(supervisor, signal.SIGKILL)  # the supervisor dies
        out, err = boot_script.communicate(timeout=60)
    finally:
        if boot_script.poll() is None:
            boot_script.kill()
    assert boot_script.returncode == 0, err
    assert len(runs.read_text().splitlines()) == 1  # one agent, once
    assert "the job ended" in err  # the second supervisor saw it and started nothing
