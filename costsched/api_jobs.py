"""The Python API's job operations, for notebooks: `status`, `report`, `launch`, `stop`
and `start`, each the operations of `costsched status|report|launch|stop|start` in the
same order, over the same service functions (`costsched.service.jobs`), without the
printing. `db` is a `PriceStore`, a SQLAlchemy URL or a SQLite file path, or None for the
default store. Bad input raises `costsched.model.InvalidInput` with one line naming it.

A job's rows are those of `costsched status --json` (a row each, the same keys)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any

from costsched.lazy import pandas as pd

if TYPE_CHECKING:
    from costsched.report import Report
    from costsched.service.stores import StoreLike
    from costsched.store import PriceStore
    from costsched.store.jobs import JobRecord
    from costsched.taskfile import Jobs


def status(job: int | str | None = None, *, db: StoreLike = None, reconcile: bool = True,
           states: Sequence[str] = (), name: str | None = None, limit: int | None = None,
           ) -> pd.DataFrame:
    """Each job (or `job`, an id or a name; those in `states`, whose name matches the
    pattern `name`, the newest `limit`), a row each with the keys of `status --json`:
    state, placement, progress, cost so far, moves, failure. The jobs are reconciled first
    (recoveries start, finished jobs close), as `costsched status` does, unless not
    `reconcile`."""
    from costsched.service import jobs as service
    from costsched.service.api import existing
    from costsched.service.stores import using
    from costsched.service.views import job_launcher, status_document

    with using(existing(db)) as store:
        launcher = job_launcher(store, job)
        shown = service.status(store, launcher, job, at=datetime.now(timezone.utc),
                               reconcile_first=reconcile, states=list(states), name=name,
                               limit=limit)
        if reconcile:  # its jobs watched from now on, as `costsched status` arms it
            _rearm(store, launcher)
        return _rows(status_document(shown))


def report(since: datetime | str | None = None, until: datetime | str | None = None, *,
           job: int | str | None = None, db: StoreLike = None) -> Report:
    """The cost report of `costsched report` over [since, until] (default: from the first
    placement to now) of every job or of `job` (an id, a name, a sweep's name or a name
    pattern). `.jobs`, `.clouds`, `.days`, `.moves`, `.budgets` are its tables as frames,
    `.totals()` its totals, `.document()` what `report --json` prints of it."""
    from costsched.report import build
    from costsched.service.api import existing
    from costsched.service.stores import using

    with using(existing(db)) as store:
        return build(store, since=since, until=until, job=job)


def launch(jobs: Jobs, *, db: StoreLike = None, launcher: str | None = None,
           offering: str | None = None, wait: float = 30.0,
           envs: Mapping[str, str] | None = None, secrets: Mapping[str, str] | None = None,
           yes: bool = False) -> pd.DataFrame:
    """Launch job files (or `JobSpec`s) on the best offering now, as `costsched launch`
    does: bad input refused before the store is opened, each job's budgets checked (a job
    whose pessimistic cost may overrun one is refused unless `yes`), the jobs started and
    watched by a daemon (daemon.autostart), then up to `wait` seconds for them to run.
    `launcher`: local, aws, gcp, azure or clouds (default: config launch.launcher);
    `offering`: as plans name it; `envs` and `secrets`: a SkyPilot task's values (the
    secrets never stored). Returns the launched jobs' rows."""
    from costsched.config import effective
    from costsched.launch_secrets import refuse_given
    from costsched.model import InvalidInput
    from costsched.passes import one_pass
    from costsched.service import jobs as service
    from costsched.service.jobs.budget_launch import launch_fits, refused_fit
    from costsched.service.stores import open_store
    from costsched.service.values import as_time
    from costsched.service.views import status_document
    from costsched.store import PriceStore
    from costsched.taskfile import read_jobs
    from launchers import make_launcher

    envs, secrets = dict(envs or {}), dict(secrets or {})
    read = read_jobs(jobs, envs=envs, secrets=list(secrets), at=datetime.now(timezone.utc))
    refuse_given(secrets, launching=True)
    config = effective()
    settings = config.launch
    backend = make_launcher(launcher or settings.launcher)
    if isinstance(db, PriceStore):
        service.refuse_bad_input(read, backend, envs=envs, secrets=secrets,
                                 checkpoint_root=settings.checkpoint_root, offering=offering)
    else:  # before the store is opened: a refused launch makes none
        service.refuse_bad_input_at(db, read, backend, envs=envs, secrets=secrets,
                                    checkpoint_root=settings.checkpoint_root,
                                    offering=offering)
    store = db if isinstance(db, PriceStore) else open_store(db)
    try:
        with one_pass():
            when = as_time(None)
            fits = launch_fits(store, read, config.budgets, when, envs=envs,
                               interval_seconds=config.daemon.watch_seconds,
                               offering=offering, launcher=backend,
                               checkpoint_root=settings.checkpoint_root)
            refused = refused_fit(fits, yes)
            if refused is not None:
                raise InvalidInput(refused.line() + ("" if not refused.fits else
                                                     "; yes=True launches it anyway"))
            records = service.launch(store, read, launcher=backend, offering=offering,
                                     envs=envs, secrets=secrets, at=when,
                                     checkpoint_root=settings.checkpoint_root)
        _arm(store, backend, records)
        if wait > 0:
            service.settle(store, backend, wait)
        launched = {r.id for r in records}
        shown = [s for s in service.status(store, backend, None) if s.record.id in launched]
        return _rows(status_document(shown))
    finally:
        if store is not db:
            store.dispose()


def stop(job: int | str, *, db: StoreLike = None) -> JobRecord:
    """Stop a job, as `costsched stop` does: its instance is terminated, its checkpoints
    kept, and `start` takes it up again. Returns the job as stored (`.id`, `.name`,
    `.state`); a job that ended by itself meanwhile is closed as it ended (InvalidInput)."""
    from costsched.service.api import existing
    from costsched.service.jobs.stopping import stop_said
    from costsched.service.stores import using
    from costsched.service.views import job_launcher

    with using(existing(db)) as store:
        launcher = job_launcher(store, job)
        record, _ = stop_said(store, launcher, job)
        _rearm(store, launcher)  # the other jobs watched from now on
        return record


def start(job: int | str, *, db: StoreLike = None, wait: float = 30.0,
          budget: float | None = None, secrets: Mapping[str, str] | None = None,
          repack: bool = False) -> pd.DataFrame:
    """Start a stopped or failed job again from its newest verified checkpoint, as
    `costsched start` does (`budget`: its own budget from now on, USD; `secrets`: its
    secrets' values, else this process's environment gives them; `repack`: its workdir
    as it is now), then wait up to `wait` seconds for it to run. Returns its row."""
    from costsched.service import jobs as service
    from costsched.service.api import existing
    from costsched.service.stores import using
    from costsched.service.views import job_launcher, status_document

    with using(existing(db)) as store:
        launcher = job_launcher(store, job)
        record = service.start(store, launcher, job, secrets=dict(secrets or {}),
                               budget=budget, repack=repack)
        _arm(store, launcher, [record], command="`costsched.start`")
        if wait > 0:
            service.settle(store, launcher, wait)
        return _rows(status_document(service.status(store, launcher, record.id)))


def _rows(document: list[dict] | dict) -> pd.DataFrame:
    jobs = document["jobs"] if isinstance(document, dict) else document
    return pd.DataFrame(jobs)


def _arm(store: PriceStore, backend: Any, records: Sequence[Any],
         command: str = "launch") -> None:
    from costsched.config import effective
    from costsched.daemon.arming import arm

    arm(store, effective(), backend, records, command)


def _rearm(store: PriceStore, backend: Any) -> None:
    from costsched.config import effective
    from costsched.daemon.autostart import rearm

    rearm(store, effective(), env=getattr(backend, "environment", dict)())
