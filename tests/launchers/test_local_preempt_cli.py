"""`python -m launchers.local preempt JOB`: the instances it looks in by default are
costsched's own (the local launcher's default), with no --base-dir to give; JOB is the
job's id or its name."""

from __future__ import annotations

from pathlib import Path

import pytest

from costsched.model import Offering
from launchers.base import LaunchSpec
from launchers.local import LocalLauncher, main


def test_preempt_looks_where_the_local_launcher_keeps_its_instances(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture) -> None:
    monkeypatch.setenv("COSTSCHED_INSTANCES", str(tmp_path / "instances"))
    assert main(["preempt", "7"]) == 1
    assert capsys.readouterr().err == (f"job 7: no running instance under "
                                       f"{tmp_path / 'instances'}\n")
    assert main(["notice", "7", "--base-dir", str(tmp_path / "other")]) == 1
    assert str(tmp_path / "other") in capsys.readouterr().err


def test_a_job_is_found_by_its_name_as_costsched_status_lists_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture) -> None:
    base = tmp_path / "instances"
    monkeypatch.setenv("COSTSCHED_INSTANCES", str(base))
    launcher = LocalLauncher(base, grace_seconds=5, poll_seconds=0.1)
    offering = Offering("aws", "us-east-1", "us-east-1a", "g4dn.xlarge", "spot", "T4", 1)
    first = launcher.launch(LaunchSpec(job_id=3, job_name="digits", command="sleep 30",
                                       offering=offering, checkpoint_uri=str(tmp_path / "s"),
                                       attempt="a1"))
    assert main(["preempt", "digitz"]) == 1  # a typo: one line, and the name meant
    assert capsys.readouterr().err == (f"job 'digitz': no running instance of a job of that "
                                       f"name under {base}; did you mean 'digits'?\n")
    assert main(["preempt", "digits"]) == 0
    assert capsys.readouterr().out == f"preempt: instance {first.id} of job 3\n"
    assert launcher.status(first.id).state == "preempted"


def test_a_job_with_no_running_instance_is_said_so_not_sent_to_another_job(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture) -> None:
    """A stopped job's name is no typo: no did-you-mean pointing at a running job that
    the user might then preempt by mistake."""
    base = tmp_path / "instances"
    monkeypatch.setenv("COSTSCHED_INSTANCES", str(base))
    launcher = LocalLauncher(base, grace_seconds=5, poll_seconds=0.1)
    offering = Offering("aws", "us-east-1", "us-east-1a", "g4dn.xlarge", "spot", "T4", 1)
    specs = [LaunchSpec(job_id=job_id, job_name=name, command="sleep 30", offering=offering,
                        checkpoint_uri=str(tmp_path / name), attempt="a1")
             for job_id, name in ((6, "sweep-3"), (7, "sweep-2"))]
    stopped, running = (launcher.launch(spec) for spec in specs)
    try:
        launcher.terminate(stopped.id)
        assert main(["preempt", "sweep-3"]) == 1
        err = capsys.readouterr().err
        assert err == (f"job 6 (sweep-3): no instance of it runs (its last is "
                       f"{launcher.status(stopped.id).state}): nothing to preempt; "
                       "`costsched status sweep-3` says where it stands\n")
        assert launcher.status(running.id).state == "running"
    finally:
        launcher.terminate(running.id)


def test_no_capacity_without_a_node_is_refused_in_one_line(
        tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    """--no-capacity leaves a gang's lost node no room where it ran (`preempt --node`): a
    whole instance preempted has no node to replace, so it is refused, not ignored."""
    base = tmp_path / "instances"
    launcher = LocalLauncher(base, grace_seconds=5, poll_seconds=0.1)
    offering = Offering("aws", "us-east-1", "us-east-1a", "g4dn.xlarge", "spot", "T4", 1)
    first = launcher.launch(LaunchSpec(job_id=3, job_name="digits", command="sleep 30",
                                       offering=offering, checkpoint_uri=str(tmp_path / "s"),
                                       attempt="a1"))
    try:
        for argv, said in ((["preempt", "3", "--no-capacity"], "preempt --no-capacity: "
                            "only with --node N"),
                           (["notice", "3", "--node", "1"], "notice --node: ")):
            assert main([*argv, "--base-dir", str(base)]) == 2
            out = capsys.readouterr()
            assert out.out == "" and out.err.startswith(said) and out.err.count("\n") == 1
            assert launcher.status(first.id).state == "running"  # nothing was taken
    finally:
        launcher.terminate(first.id)


def test_an_instance_is_found_by_its_name_as_its_folder_and_the_logs_name_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture) -> None:
    base = tmp_path / "instances"
    monkeypatch.setenv("COSTSCHED_INSTANCES", str(base))
    launcher = LocalLauncher(base, grace_seconds=5, poll_seconds=0.1)
    offering = Offering("aws", "us-east-1", "us-east-1a", "g4dn.xlarge", "spot", "T4", 1)
    first = launcher.launch(LaunchSpec(job_id=3, job_name="digits", command="sleep 30",
                                       offering=offering, checkpoint_uri=str(tmp_path / "s"),
                                       attempt="a1"))
    assert (base / first.id).is_dir()
    assert main(["preempt", first.id]) == 0
    assert capsys.readouterr().out == f"preempt: instance {first.id} of job 3\n"
    assert launcher.status(first.id).state == "preempted"
    assert main(["notice", first.id]) == 1  # taken already: said, not taken again
    assert capsys.readouterr().err == (f"instance {first.id} of job 3: it is preempted: "
                                       "nothing to take away\n")


def test_the_help_says_which_names_are_taken(capsys: pytest.CaptureFixture) -> None:
    with pytest.raises(SystemExit):
        main(["--help"])
    said = " ".join(capsys.readouterr().out.split())
    assert "the job's id or name, as `costsched status` lists it, or an instance's name" in said
