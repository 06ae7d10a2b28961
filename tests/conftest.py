"""Shared fixtures: the recorded data beside the checkout, fresh stores, the CLI runner.

A new SQLite store of the suite's process starts as a copy of one migrated once per process
(tests/store_template.py), but in the store's own tests, which migrate from scratch.

The whole suite runs away from the user's world: before anything else, the home, XDG and
platform directories point at a temporary folder, and costsched's, the clouds' and the
proxies' variables of the machine are dropped (`isolate_environment`)."""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

import pytest

# The machine's settings the suite keeps: how to reach the test database and the shared data.
KEPT_COSTSCHED = ("COSTSCHED_TEST_PG_URL", "COSTSCHED_REQUIRE_PG", "COSTSCHED_REQUIRE_CHROMIUM",
                  "COSTSCHED_SHARED_DATA")
# Dropped from the machine's environment: whatever would make a test read the user's
# credentials or reach a network, or shape output (the width, colours).
DROPPED_PREFIXES = ("AWS_", "AZURE_", "GOOGLE_", "GCLOUD_", "CLOUDSDK_", "GCE_", "BOTO_")
DROPPED = ("COLUMNS", "LINES", "NO_COLOR", "FORCE_COLOR", "CLICOLOR_FORCE", "HTTP_PROXY",
           "HTTPS_PROXY", "ALL_PROXY", "FTP_PROXY", "NO_PROXY", "PYTHONSTARTUP")
REAL_HOME = os.path.expanduser("~")


def isolate_environment(environ: dict[str, str] | os._Environ = os.environ) -> Path:
    """Point HOME, the XDG directories, and the clouds' config and credential files at a new
    temporary folder (removed at exit); drop the machine's COSTSCHED_* settings (those
    KEPT_COSTSCHED aside), cloud variables, proxies and terminal settings. The numeric
    libraries' settings (OPENBLAS_*, OMP_*...) stay: the suite must pass with and without
    them (CI runs the result-comparing tests both ways)."""
    root = Path(tempfile.mkdtemp(prefix="costsched-tests-"))
    atexit.register(shutil.rmtree, root, True)
    home = root / "home"
    home.mkdir()
    for name in list(environ):
        upper = name.upper()
        if ((upper.startswith("COSTSCHED_") and name not in KEPT_COSTSCHED)
                or upper.startswith(DROPPED_PREFIXES) or upper in DROPPED):
            del environ[name]
    environ.update({
        "HOME": str(home), "USERPROFILE": str(home),
        "XDG_DATA_HOME": str(home / ".local" / "share"),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_CACHE_HOME": str(home / ".cache"),
        "XDG_STATE_HOME": str(home / ".local" / "state"),
        "XDG_DATA_DIRS": str(root / "share"), "XDG_CONFIG_DIRS": str(root / "etc"),
        "AWS_CONFIG_FILE": str(home / ".aws" / "config"),
        "AWS_SHARED_CREDENTIALS_FILE": str(home / ".aws" / "credentials"),
        "AWS_EC2_METADATA_DISABLED": "true",
        "CLOUDSDK_CONFIG": str(home / ".config" / "gcloud"),
        "NO_GCE_CHECK": "True",
        "GIT_CONFIG_GLOBAL": str(home / ".gitconfig"), "GIT_CONFIG_NOSYSTEM": "1",
        "NO_PROXY": "*", "no_proxy": "*",
    })
    (home / ".gitconfig").write_text("[user]\n\tname = costsched tests\n"
                                     "\temail = tests@localhost\n")
    return root


def moto_bundled_images(root: Path, environ: dict[str, str] | os._Environ = os.environ) -> None:
    """moto's EC2 gives every region backend it makes its few dozen bundled images and, unless
    MOTO_AMIS_PATH names the image list, about a thousand more "latest" ones of that region:
    1.5 s a region, and a launcher that looks for a job's instances makes all 38 (then a
    reset makes them again). The list named here is moto's bundled one (its own file,
    decompressed), so every image a test names (tests/launchers/moto_images) exists in
    every region, as before; read when moto is imported, hence before any test module."""
    import gzip
    from importlib.util import find_spec

    spec = find_spec("moto")
    if spec is None or not spec.submodule_search_locations:
        return  # no moto: the tests that need it are skipped
    bundled = Path(next(iter(spec.submodule_search_locations))) / "ec2/resources/amis.json.gz"
    images = root / "moto-amis.json"
    images.write_bytes(gzip.decompress(bundled.read_bytes()))
    environ["MOTO_AMIS_PATH"] = str(images)


class _ListedOnce(list):
    """A search path list that appends a folder it lists already no second time."""

    def append(self, item: object) -> None:
        if item not in self:
            super().append(item)


def one_botocore_loader() -> None:
    """The suite's boto3 and botocore sessions read botocore's bundled data (endpoints,
    service models: read-only files of the installed package) through one loader per data
    path, each file parsed once per process, as the clients of one session share them: a
    new session (every checkpoint store and launcher opens one) otherwise parses them
    again, a third of a second of CPU each. boto3 adds its own folder to a session's loader
    at each session: listed once."""
    try:
        import botocore.session
    except ImportError:
        return
    made: dict[str | None, object] = {}
    create = botocore.session.create_loader

    def create_loader(search_path_string: str | None = None) -> object:
        if search_path_string not in made:
            loader = create(search_path_string)
            loader._search_paths = _ListedOnce(loader.search_paths)
            made[search_path_string] = loader
        return made[search_path_string]

    botocore.session.create_loader = create_loader


TEST_ROOT = isolate_environment()
moto_bundled_images(TEST_ROOT)
one_botocore_loader()

from sqlalchemy import create_engine, text  # noqa: E402 - after the isolation above
from typer.testing import CliRunner  # noqa: E402

from costsched.store import PriceStore  # noqa: E402
from costsched.throughput import ENV_USER_FILE  # noqa: E402
from tests import store_template  # noqa: E402
from tests.pg_stores import StorePool  # noqa: E402
from tests.shared_data import shared_data  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
SHARED = shared_data()
store_template.install(TEST_ROOT)
DISPA = SHARED / "dispa2020"


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "results: compares a job's result bytes with a run made in the test's own "
        "environment (make test runs these again with BLAS kernel settings)")


# The files that take longest, longest first (per-file sums of a full run's durations on a
# quiet machine: those of 10 s or more). With `-n 3 --dist loadfile` a file runs whole on one
# worker; xdist by default starts the files of most tests first, which leaves these (few,
# long tests) to the end, where one of them holds a worker long after the others are done.
# Run first instead (make test passes --no-loadscope-reorder, so that xdist keeps this
# order); the rest follow, most tests first.
LONG_FILES = (
    "tests/reliability/test_plan_scale.py",  # 42 s of CPU in one test (the CLI's 2,500-job plan)
    "tests/costsched/test_daemon_processes.py", "tests/costsched/test_daemon.py",
    "tests/costsched/service/test_budget_caps.py", "tests/costsched/dashboard/test_browser.py",
    "tests/costsched/migration/test_machine.py",
    "tests/costsched/migration/test_machine_late.py",
    "tests/costsched/service/test_deadline_decider_replay.py",
    "tests/costsched/service/test_gang.py", "tests/launchers/test_boot_path.py",
    "tests/price_collectors/test_aws.py", "tests/reliability/test_killed_writer_postgresql.py",
    "tests/price_collectors/test_recorded.py",
    "tests/reliability/test_killed_writer_sqlite.py", "tests/reliability/test_db_hang.py",
    "tests/examples/test_tinyproject.py", "tests/costsched/test_skypilot.py",
    "tests/reliability/test_moves_race.py", "tests/reliability/test_launch_race.py",
    "tests/reliability/test_daemon_race.py", "tests/costsched/service/test_budget_moves.py",
    "tests/costsched/cli/test_json_outputs.py", "tests/costsched/service/test_jobs.py",
    "tests/reliability/test_pass_batched.py", "tests/costsched/service/test_speeds.py",
    "tests/costsched/service/test_migrate_batched.py",
    "tests/reliability/test_concurrent_writers.py", "tests/reliability/test_fuzz_recorded.py",
    "tests/costsched/report/test_data.py", "tests/launchers/test_userdata_supervisor.py",
    "tests/costsched/service/test_stop_during_move.py",
    "tests/costsched/migration/test_stop.py", "tests/costsched/test_bundled_prices.py",
    "tests/reliability/test_db_outage.py", "tests/launchers/test_gang.py",
    "tests/reliability/test_bad_values.py", "tests/costsched/report/test_one_pass.py",
    "tests/costsched/service/test_job_status.py", "tests/reliability/test_store_faults.py",
    "tests/launchers/test_azure_boot.py", "tests/costsched/store/test_jobs.py",
    "tests/reliability/test_store_open.py", "tests/costsched/store/test_prices.py",
    "tests/notebooks/test_notebooks.py", "tests/launchers/test_boot_path_docker.py",
    "tests/costsched/service/test_migrate_many.py", "tests/launchers/test_aws_gang.py",
    "tests/costsched/service/test_budget_start.py", "tests/costsched/cli/test_long_table.py",
    "tests/reliability/test_launch_crash.py", "tests/launchers/checkpoints/test_base.py",
    "tests/costsched/dashboard/test_browser_pages.py", "tests/costsched/daemon/test_walkaway.py",
    "tests/costsched/cli/test_launch_cloud_failures.py",
)


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    """The store's own tests migrate their new stores from scratch; the others copy a
    migrated one (tests/store_template.py). Set before the test's fixtures, of any scope."""
    store_template.state.from_scratch = item.nodeid.startswith(store_template.FROM_SCRATCH)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The long files first (LONG_FILES), then the others, most tests first; each file's
    tests stay together and in their order."""
    files = [item.nodeid.split("::", 1)[0] for item in items]
    counts: dict[str, int] = {}
    first: dict[str, int] = {}
    for i, name in enumerate(files):
        counts[name] = counts.get(name, 0) + 1
        first.setdefault(name, i)
    rank = {name: i for i, name in enumerate(LONG_FILES)}
    order = sorted(range(len(items)), key=lambda i: (
        rank.get(files[i], len(rank)), -counts[files[i]], first[files[i]], i))
    items[:] = [items[i] for i in order]


@pytest.fixture(scope="session")
def dispa() -> Path:
    """../shared/data/dispa2020: CI has it beside the checkout; its absence is an error."""
    assert DISPA.is_dir(), f"recorded data not found at {DISPA} (set COSTSCHED_SHARED_DATA)"
    return DISPA


@pytest.fixture(scope="session")
def spot_traces() -> Path:
    path = SHARED / "spot-traces"
    assert path.is_dir(), f"spot traces not found at {path} (set COSTSCHED_SHARED_DATA)"
    return path


def hermetic_aws_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                     endpoints: tuple[str, ...] = ()) -> None:
    """Fake AWS credentials, and no profile, config, endpoint or instance metadata from the
    machine (for moto and botocore's Stubber)."""
    for name in ("AWS_PROFILE", "AWS_DEFAULT_PROFILE", "AWS_ENDPOINT_URL",
                 "AWS_SESSION_TOKEN", *endpoints):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "no-aws-config"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "no-aws-credentials"))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")


def moto_regions(monkeypatch: pytest.MonkeyPatch,
                 names: tuple[str, ...] = ("us-east-1", "us-west-2")) -> None:
    """moto's EC2 as an account with only `names` enabled: describe_regions lists those.
    moto lists its 38 regions, and a launcher that looks for a job's instances in every
    region makes a client and a moto backend for each (seconds a launch on a busy
    machine); two regions keep that look a loop over the account's regions."""
    from moto.ec2.models.availability_zones_and_regions import RegionsAndZonesBackend

    listed = [r for r in RegionsAndZonesBackend.regions if r.name in names]
    assert {r.name for r in listed} == set(names), names
    monkeypatch.setattr(RegionsAndZonesBackend, "regions", listed)


def atomic_s3_puts(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make moto decide a put as S3 does: atomically. moto answers a conditional put
    (If-None-Match: *) by looking for the key, then writing it; another thread's put of the
    same key can come between the two, and both succeed, the second overwriting the first
    (on a busy machine, one run in three of six concurrent publishers). S3 decides it in one
    step: of concurrent conditional puts of a key one succeeds, the others are refused (412
    PreconditionFailed or 409 ConditionalRequestConflict; docs.aws.amazon.com/AmazonS3/
    latest/userguide/conditional-writes.html). Here, one put at a time: in-process and in
    a moto server of this process alike."""
    import threading

    from moto.s3.responses import S3Response

    one_at_a_time = threading.Lock()
    original = S3Response.put_object

    def put_object(self: S3Response) -> object:
        with one_at_a_time:
            return original(self)

    monkeypatch.setattr(S3Response, "put_object", put_object)


@pytest.fixture(autouse=True)
def _own_user_dirs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test its own user data, config, cache and state directories: what one test
    leaves in the default store or config is not another's."""
    for name in ("XDG_DATA_HOME", "XDG_CONFIG_HOME", "XDG_CACHE_HOME", "XDG_STATE_HOME"):
        monkeypatch.setenv(name, str(tmp_path / "user-dirs" / name.lower()))


@pytest.fixture(autouse=True)
def _no_earlier_reads(monkeypatch: pytest.MonkeyPatch) -> None:
    """No test sees what an earlier one of its process left in the service's per-process
    memory: the heartbeats read per instance id (ids recur: fakes name instances by job),
    the secrets held per job id (every test's store numbers its jobs from 1)."""
    import sys

    for name, memory in (("costsched.service.jobs.agents", "_read"),
                         ("costsched.launch_secrets", "_GIVEN")):
        module = sys.modules.get(name)
        if module is not None:  # not loaded yet: nothing left in it
            monkeypatch.setattr(module, memory, {})


@pytest.fixture(autouse=True)
def _no_supervisor(monkeypatch: pytest.MonkeyPatch) -> None:
    """A launch starts no supervisor in the background unless a test asks for one
    (tests/costsched/daemon turn daemon.autostart on, and end what they start)."""
    monkeypatch.setenv("COSTSCHED_DAEMON_AUTOSTART", "false")


@pytest.fixture
def cloud_launcher(monkeypatch: pytest.MonkeyPatch) -> str:
    """A cloud's launcher configured (gcp): plans count the start of an instance, as
    `launch` there does (the local launcher boots none, and its plans leave it out)."""
    monkeypatch.setenv("COSTSCHED_LAUNCH_LAUNCHER", "gcp")
    return "gcp"


@pytest.fixture(autouse=True)
def _isolated_throughputs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Keep the user's own throughput measurements out of every test (plans and replays
    read them)."""
    monkeypatch.setenv(ENV_USER_FILE, str(tmp_path / "user-throughputs.csv"))
    # Nor the instance types a refresh discovered on this machine; and a refresh (the
    # daemon's weekly catalog task) reads no cloud unless a test hands it stubbed clients.
    monkeypatch.setenv("COSTSCHED_DISCOVERED_TYPES", str(tmp_path / "discovered-types.csv"))
    monkeypatch.setattr("price_collectors.discovery._aws_clients", _no_cloud)
    monkeypatch.setattr("price_collectors.discovery._gcp_client", _no_cloud)
    monkeypatch.setattr("price_collectors.discovery._azure_session", _no_cloud)
    # Nor do the quota readers that `collect` runs after the prices.
    monkeypatch.setattr("price_collectors.quotas_aws._default_session", _no_quota_cloud)
    monkeypatch.setattr("price_collectors.quotas_gcp.GcpQuotaReader._default_clients",
                        _no_quota_cloud)
    monkeypatch.setattr("price_collectors.quotas_azure._default_clients", _no_quota_cloud)


def _no_cloud(*_args: object) -> None:
    from price_collectors.base import CollectorUnavailable

    raise CollectorUnavailable("tests read no cloud")


def _no_quota_cloud(*_args: object) -> None:
    from price_collectors.quota_reading import QuotasUnreadable

    raise QuotasUnreadable("tests read no cloud")


@pytest.fixture(autouse=True)
def wide_console(monkeypatch: pytest.MonkeyPatch) -> None:
    """CLI output width must not depend on the runner's terminal (xdist sets COLUMNS=80)."""
    from costsched.cli.common import console, err_console

    monkeypatch.setattr(console, "width", 200)
    monkeypatch.setattr(err_console, "width", 200)


def _pg_url() -> str | None:
    url = os.environ.get("COSTSCHED_TEST_PG_URL")
    if not url and os.environ.get("COSTSCHED_REQUIRE_PG"):
        pytest.fail("COSTSCHED_REQUIRE_PG is set but COSTSCHED_TEST_PG_URL is not")
    return url


@pytest.fixture(params=["sqlite", "postgresql"])
def empty_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """The URL of an empty database: a SQLite file, and a PostgreSQL schema of its own."""
    if request.param == "sqlite":
        yield str(tmp_path / "p.sqlite")
        return
    url = _pg_url()
    if not url:
        pytest.skip("no PostgreSQL server: set COSTSCHED_TEST_PG_URL (scripts/start-postgres.sh)")
    schema = f"t_{uuid.uuid4().hex[:12]}"
    admin = create_engine(url)
    with admin.begin() as conn:
        conn.execute(text(f"CREATE SCHEMA {schema}"))
    sep = "&" if "?" in url else "?"
    yield f"{url}{sep}options={quote(f'-csearch_path={schema}')}"
    with admin.begin() as conn:
        conn.execute(text(f"DROP SCHEMA {schema} CASCADE"))
    admin.dispose()


_PG_STORES: StorePool | None = None


@pytest.fixture(params=["sqlite", "postgresql"])
def any_store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[PriceStore]:
    """A fresh store on SQLite, and on PostgreSQL in a schema of its own: one migrated
    for an earlier test of the process and emptied since (tests/pg_stores.py), but in the
    store's own tests, which migrate a new one."""
    global _PG_STORES
    if request.param == "sqlite":
        s = PriceStore(str(tmp_path / "p.sqlite"))
        yield s
        s.dispose()
        return
    url = _pg_url()
    if not url:
        pytest.skip("no PostgreSQL server: set COSTSCHED_TEST_PG_URL (scripts/start-postgres.sh)")
    if _PG_STORES is None or _PG_STORES.server != url:
        _PG_STORES = StorePool(url)
    pool = _PG_STORES
    if store_template.state.from_scratch:
        schema = pool.new_schema()
        s = PriceStore(pool.url(schema))
        yield s
        s.dispose()
        pool.drop(schema)
        return
    made, schema = pool.take()
    s = PriceStore(pool.url(schema))
    if made is None:
        made = pool.describe(schema)
    yield s
    s.dispose()
    pool.give_back(made)


@pytest.fixture()
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "prices.sqlite"


@pytest.fixture()
def store(db_path: Path) -> PriceStore:
    s = PriceStore(str(db_path))
    yield s
    s.dispose()


@pytest.fixture(scope="session")
def recorded_store(tmp_path_factory: pytest.TempPathFactory, dispa: Path) -> PriceStore:
    """A SQLite store holding all of dispa2020 (AWS and Azure), shared read-only by tests:
    each worker's copy of the store the run imports once (_recorded_once)."""
    import sqlite3

    path = tmp_path_factory.mktemp("recorded") / "prices.sqlite"
    source, copy = sqlite3.connect(_recorded_once(tmp_path_factory, dispa)), sqlite3.connect(path)
    with source, copy:
        source.backup(copy)
    source.close()
    copy.close()
    return PriceStore(str(path))


def _recorded_once(tmp_path_factory: pytest.TempPathFactory, dispa: Path) -> Path:
    """The store of all of dispa2020, imported by the first of the run's workers to need it
    (the others wait for it): a few seconds of CPU each time otherwise."""
    import fcntl

    from price_collectors import recorded

    root = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        root = root.parent  # the run's folder, shared by its workers
    built = root / "recorded-dispa2020.sqlite"
    with open(root / "recorded-dispa2020.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not built.exists():
            partial = root / "recorded-dispa2020.partial.sqlite"
            s = PriceStore(str(partial))
            parsed = recorded.read_paths([dispa / "aws" / "cost", dispa / "azure"])
            assert not parsed.errors, parsed.errors
            s.ingest(parsed.observations())
            s.dispose()
            partial.rename(built)
    return built


@pytest.fixture()
def cli(monkeypatch: pytest.MonkeyPatch, db_path: Path):
    """Invoke the CLI with COSTSCHED_DB pointing at a fresh SQLite store (made here:
    reading commands refuse a store that does not exist)."""
    from costsched.cli import app

    monkeypatch.setenv("COSTSCHED_DB", str(db_path))
    PriceStore(str(db_path)).dispose()
    runner = CliRunner()

    def invoke(*args: str):
        return runner.invoke(app, [str(a) for a in args], catch_exceptions=False)

    return invoke
