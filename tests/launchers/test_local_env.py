"""A local job keeps the machine's numeric and device settings (config launch.pass_env) and
so computes as it does when run by hand here; a secret is never passed, whatever the list."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from costsched.config import PASS_ENV, load, passed_env
from costsched.model import InvalidInput, Offering
from launchers.base import LaunchSpec
from launchers.local import LocalLauncher, instance_environment
from tests.launchers.test_local import wait_for

OFFERING = Offering("aws", "us-east-1", "us-east-1a", "p3.2xlarge", "spot", "V100", 1)
# A few products of matrices: their last bits depend on the BLAS kernel chosen.
BLAS = ("import hashlib, numpy as np; r = np.random.default_rng(0); "
        "a = r.standard_normal((300, 300)); x = a\n"
        "for _ in range(5): x = np.tanh(x @ a / 17)\n"
        "print('digest', hashlib.sha256(x.tobytes()).hexdigest())")


def run_job(tmp_path: Path, command: str, envs: dict[str, str] | None = None,
            pass_env: list[str] | None = None) -> dict[str, str]:
    """The environment a local job sees (it prints it), and its other output lines."""
    launcher = LocalLauncher(tmp_path / "instances", grace_seconds=5, poll_seconds=0.1,
                             pass_env=pass_env)
    instance = launcher.launch(LaunchSpec(
        job_id=4, job_name="numeric", command=command, offering=OFFERING,
        checkpoint_uri=str(tmp_path / "store"), attempt="a0", envs=envs or {}))
    wait_for(lambda: launcher.status(instance.id).state in ("succeeded", "failed"))
    assert launcher.status(instance.id).state == "succeeded", launcher.logs(instance.id)
    output = launcher.logs(instance.id, tail=10_000)
    return dict(line.split("=", 1) for line in output.splitlines() if "=" in line)


def test_a_job_keeps_the_machines_numeric_and_device_settings_and_no_secret(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    machine = {"OPENBLAS_CORETYPE": "Haswell", "OPENBLAS_L2_SIZE": "1048576",
               "OMP_NUM_THREADS": "3", "MKL_CBWR": "AVX2", "CUDA_VISIBLE_DEVICES": "1,0",
               "NVIDIA_VISIBLE_DEVICES": "all", "NCCL_DEBUG": "WARN"}
    for name, value in machine.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("NVIDIA_API_KEY", "nvapi-s3cr3t")  # allowed by NVIDIA_*: a secret
    monkeypatch.setenv("OMP_AUTH_TOKEN", "omp-s3cr3t")
    monkeypatch.setenv("UNRELATED_SETTING", "x")
    job_env = run_job(tmp_path, "env", envs={"OMP_NUM_THREADS": "1"})
    assert {k: job_env.get(k) for k in machine} == {**machine, "OMP_NUM_THREADS": "1"}
    for name in ("NVIDIA_API_KEY", "OMP_AUTH_TOKEN", "UNRELATED_SETTING"):
        assert name not in job_env
    assert "s3cr3t" not in "".join(job_env.values())


@pytest.mark.results
def test_a_job_computes_the_same_bits_as_a_run_by_hand_with_blas_settings(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """On a machine that sets OPENBLAS_CORETYPE (some processors need it) a job that lost it
    would pick another kernel, and its last bits would differ from the run by hand."""
    monkeypatch.setenv("OPENBLAS_CORETYPE", "Haswell")
    script = tmp_path / "blas.py"
    script.write_text(BLAS + "\n")
    by_hand = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                             check=True, env=dict(os.environ)).stdout.split()[-1]
    job = run_job(tmp_path, f"{sys.executable} {script} | tr ' ' =")
    assert job["digest"] == by_hand


def test_the_list_is_the_config_s_and_secrets_are_never_passed(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MYLIB_THREADS", "2")
    monkeypatch.setenv("MYLIB_PASSWORD", "hunter22")
    monkeypatch.setenv("OPENBLAS_CORETYPE", "Haswell")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "aws-s3cr3t")
    monkeypatch.setenv("COSTSCHED_DB", "/somewhere/prices.sqlite")
    env = instance_environment({}, sys.executable, ["MYLIB_*", "AWS_*", "COSTSCHED_*"])
    assert env["MYLIB_THREADS"] == "2"
    assert "MYLIB_PASSWORD" not in env and "OPENBLAS_CORETYPE" not in env
    assert "COSTSCHED_DB" not in env
    # The agent gets the cloud's credentials to publish; the job is told to drop them.
    assert "AWS_SECRET_ACCESS_KEY" in env["COSTSCHED_AGENT_ONLY"].split(",")
    assert passed_env(PASS_ENV, {"OPENBLAS_CORETYPE": "Haswell", "GOTO_NUM_THREADS": "1",
                                 "LD_LIBRARY_PATH": "/usr/local/cuda/lib64",
                                 "CUDA_VISIBLE_DEVICES": "0", "HOME": "/h",
                                 "NVIDIA_API_KEY": "k"}) == {
        "OPENBLAS_CORETYPE": "Haswell", "GOTO_NUM_THREADS": "1",
        "LD_LIBRARY_PATH": "/usr/local/cuda/lib64", "CUDA_VISIBLE_DEVICES": "0"}


def test_pass_env_is_read_from_the_config_and_checked(tmp_path: Path) -> None:
    loaded = load(env={"COSTSCHED_CONFIG": str(_toml(tmp_path, 'pass_env = ["MY_*", "X"]')),
                       "COSTSCHED_LAUNCH_PASS_ENV": "OMP_*, CUDA_VISIBLE_DEVICES"})
    assert loaded.config.launch.pass_env == ["OMP_*", "CUDA_VISIBLE_DEVICES"]
    assert load(env={}).config.launch.pass_env == list(PASS_ENV)
    for bad, why in (('["AWS_SECRET_ACCESS_KEY"]', "never passed to a job"),
                     ('["GITHUB_TOKEN"]', "never passed to a job"),
                     ('["OMP *"]', "not a variable name")):
        with pytest.raises(InvalidInput, match=rf"launch.pass_env .*{why}") as err:
            load(env={"COSTSCHED_CONFIG": str(_toml(tmp_path, f"pass_env = {bad}"))})
        assert "\n" not in str(err.value)


def _toml(tmp_path: Path, line: str) -> Path:
    path = tmp_path / "config.toml"
    path.write_text(f"[launch]\n{line}\n")
    return path
