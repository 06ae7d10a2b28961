"""Two stores count their jobs from 1: their job 1s, launched under one checkpoint root,
keep their checkpoints in folders of their own (ROOT/job-ID-STORE), so that neither resumes
from the other's; a job launched before keeps ROOT/job-ID."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from pathlib import Path

import yaml

from costsched.service import jobs as service
from costsched.service.jobs.carry import JobStores, home_store, job_folder
from costsched.store import PriceStore
from costsched.store.scope import store_scope
from tests.costsched.migration.test_edges import FakeLauncher
from tests.costsched.service.test_jobs import set_prices


def _launched(db: Path, spec: Path, root: Path) -> tuple[str, str]:
    store = PriceStore(str(db))
    try:
        set_prices(store, {"us-east-1a": 1.0}, datetime.now(timezone.utc) - timedelta(hours=1))
        [job] = service.launch(store, spec, launcher=FakeLauncher(), checkpoint_root=str(root))
        assert job.id == 1
        return store.jobs.get(job.id).checkpoint_location, store_scope(store.engine)
    finally:
        store.dispose()


def test_the_job_1s_of_two_stores_never_share_a_checkpoint_folder(tmp_path: Path) -> None:
    spec = tmp_path / "train.yaml"
    spec.write_text(yaml.safe_dump({
        "name": "train", "throughputs": {"V100": 1.0}, "steps": 100, "run": "true",
        "constraints": {"regions": ["us-east-1"], "markets": ["spot"]}}))
    root = tmp_path / "ckpt"
    first, first_scope = _launched(tmp_path / "a.sqlite", spec, root)
    second, second_scope = _launched(tmp_path / "b.sqlite", spec, root)
    assert first_scope != second_scope
    assert first == f"{root}/job-1-{first_scope}"
    assert second == f"{root}/job-1-{second_scope}"


def test_a_job_launched_before_keeps_its_folder_and_roots_follow_the_rule() -> None:
    assert job_folder(7) == "job-7" and job_folder(7, "ab12") == "job-7-ab12"
    assert home_store(None, 7, "/data/ckpt") == "/data/ckpt/job-7"
    scoped = home_store(None, 7, "/data/ckpt", "ab12")
    assert scoped == "/data/ckpt/job-7-ab12"
    stores = JobStores(7, scoped, scoped, {"azure": "az://ckpt/jobs"}, scope="ab12")
    assert stores.on("azure") == "az://ckpt/jobs/job-7-ab12"  # carried: its own folder there
