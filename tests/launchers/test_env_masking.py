"""An env of the job named like a secret (WANDB_API_KEY, given in the task's `envs`, stored
with the job in plain text as `plan` and `launch` warn) is masked in the job's log on its
instance, as a `--secret` is: a real local-launcher job prints it, and no file under the
instance's folder holds it; an env named otherwise is written as printed. A cloud's startup
script passes the same names to its agent."""

from __future__ import annotations

from pathlib import Path

from costsched.migration.launcher import LaunchSpec
from launchers.local import LocalLauncher
from tests.launchers.test_local import OFFERING, wait_for

VALUE = "wandb-live-5c0ffee5c0ffee"
PLAIN = "visible-123456"


def test_a_secret_named_env_is_masked_in_the_job_log(tmp_path: Path) -> None:
    launcher = LocalLauncher(tmp_path / "instances", grace_seconds=5, poll_seconds=0.1)
    spec = LaunchSpec(job_id=7, job_name="train", offering=OFFERING,
                      command='echo "key $WANDB_API_KEY plain $PLAIN_SETTING"',
                      checkpoint_uri=str(tmp_path / "store"), attempt="a1",
                      envs={"WANDB_API_KEY": VALUE, "PLAIN_SETTING": PLAIN})
    assert spec.masked_names == ("WANDB_API_KEY",)
    instance = launcher.launch(spec)
    wait_for(lambda: launcher.status(instance.id).state in ("succeeded", "failed"))
    log = launcher.logs(instance.id)
    assert f"plain {PLAIN}" in log and "key ***" in log, log
    for path in (tmp_path / "instances").rglob("*"):
        if path.is_file():
            assert VALUE.encode() not in path.read_bytes(), path


def test_a_clouds_startup_script_masks_the_same_names() -> None:
    from launchers.userdata import payload

    spec = LaunchSpec(job_id=7, job_name="train", offering=OFFERING, command="true",
                      checkpoint_uri="s3://bucket/ckpt", attempt="a1",
                      envs={"WANDB_API_KEY": VALUE, "PLAIN_SETTING": PLAIN},
                      secret_names=("HF_TOKEN",))
    doc = payload(spec, "", secret_refs={"HF_TOKEN": "/costsched/7/HF_TOKEN"})
    assert doc["mask_envs"] == ["WANDB_API_KEY"]
