"""`start` of a job that has ended (it succeeded, or failed before it was placed) names the
way to run it again: a launch of the file it was launched from, a new job started afresh (a
start resumes a stopped or failed job, or one that ended short of its steps, only)."""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path

import pytest

from costsched.model import InvalidInput
from costsched.service import jobs as service
from costsched.service.jobs import launches
from costsched.store import PriceStore
from launchers import make_launcher
from tests.costsched.service.test_rest_priced import instances, store  # noqa: F401

NOW = datetime(2026, 11, 30, 16, tzinfo=timezone.utc)


def ended(store: PriceStore, state: str, source: str | None) -> int:  # noqa: F811
    spec = {"spec": {"name": "bigram-fail", "run": "python train.py", "steps": 100},
            "launcher": "local", **({"source": source} if source is not None else {})}
    job = store.jobs.create("bigram-fail", spec, 100, at=NOW)
    store.jobs.transition(job, "running", at=NOW)
    store.jobs.transition(job, state, at=NOW)
    return job


def test_start_of_an_ended_job_names_the_launch_of_its_file(
        store: PriceStore, instances: Path) -> None:  # noqa: F811
    job = ended(store, "succeeded", "fail.yaml")
    with pytest.raises(InvalidInput) as info:
        service.start(store, make_launcher("local"), job)
    said = str(info.value)
    assert said == (f"job {job} (bigram-fail) has succeeded: only a stopped or failed job, or "
                    "one that ended short of its steps, can be started again; `costsched "
                    "launch fail.yaml` (the file it was launched from) runs it again as a new "
                    "job, started afresh")


def test_a_job_that_failed_before_it_was_placed_names_the_launch_of_its_file(
        store: PriceStore, instances: Path) -> None:  # noqa: F811
    """A failed job that never had a checkpoint folder (its launch failed before it was
    placed) has nothing to start again from."""
    job = ended(store, "failed", "fail.yaml")
    with pytest.raises(InvalidInput) as info:
        service.start(store, make_launcher("local"), job)
    said = str(info.value)
    assert said == (f"job {job} (bigram-fail) failed before it was placed (`costsched status "
                    f"{job}` says why): nothing to start again; `costsched launch fail.yaml` "
                    "(the file it was launched from) runs it again as a new job, started "
                    "afresh")


def test_without_its_file_the_launch_is_named_alone(
        store: PriceStore, instances: Path) -> None:  # noqa: F811
    job = ended(store, "failed", None)
    with pytest.raises(InvalidInput, match=r"; `costsched launch FILE` with its job file runs "
                                           r"it again as a new job, started afresh$"):
        service.start(store, make_launcher("local"), job)


def test_a_path_with_spaces_is_quoted(store: PriceStore, instances: Path) -> None:  # noqa: F811
    job = ended(store, "failed", "my jobs/fail.yaml")
    with pytest.raises(InvalidInput, match=r"`costsched launch 'my jobs/fail.yaml'`"):
        service.start(store, make_launcher("local"), job)


def test_the_file_is_named_so_that_the_hint_works_from_another_folder(
        store: PriceStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: F811
    """A launch keeps the file's absolute path beside the path as typed; the hint names
    the file as typed from the folder it was typed in, by its absolute path elsewhere."""
    import yaml

    from tests.costsched.migration.test_edges import FakeLauncher
    from tests.costsched.service.test_jobs import set_prices

    project, elsewhere = tmp_path / "proj", tmp_path / "elsewhere"
    project.mkdir(), elsewhere.mkdir()
    (project / "fail.yaml").write_text(yaml.safe_dump({
        "name": "bigram-fail", "throughputs": {"V100": 0.5}, "steps": 100, "run": "true",
        "constraints": {"regions": ["us-east-1"], "markets": ["spot"]}}))
    set_prices(store, {"us-east-1a": 1.0}, NOW)
    monkeypatch.chdir(project)
    launcher = FakeLauncher()
    [job] = service.launch(store, "fail.yaml", launcher=launcher,
                           checkpoint_root=str(tmp_path / "ckpt"), at=NOW)
    store.jobs.transition(job.id, "failed", at=NOW)
    record = store.jobs.get(job.id)
    assert launches.launch_again(record).startswith("`costsched launch fail.yaml` ")
    monkeypatch.chdir(elsewhere)
    assert launches.launch_again(record).startswith(
        f"`costsched launch {project / 'fail.yaml'}` (the file it was launched from)")
