"""Every option of every command that takes a value checks it, as `plan` does: a bogus
value (a word no filter knows, a negative count or wait, a typo of a name the store holds)
exits 2 naming the option, with the accepted values or the close ones, before anything is
changed; never a traceback, never an answer to a question nobody asked (exit 0 on
`throughput show --gpu bogus`, a launch with `--wait -3`).

One store serves every case: the demo prices, a spot availability trace and a finished
job named resnet50 in budget 'vision'."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from costsched.cli import app
from costsched.service import import_prices
from costsched.store import PriceStore

ROOT = Path(__file__).resolve().parents[3]
JOB = str(ROOT / "examples" / "resnet50.yaml")
AT = "2026-01-02T00:00:00Z"

# argv (JOB: the example job; FILE: a file that exists), then what the refusal must say.
CASES = [
    (["plan", JOB, "--objective", "bogus"], "--objective 'bogus': expected one of cost"),
    (["plan", JOB, "--deadline", "-3"], "--deadline: '-3': expected a positive duration"),
    (["plan", JOB, "--budget", "-3"], "--budget -3: expected a positive amount"),
    (["plan", JOB, "--at", "bogus"], "--at 'bogus': expected an ISO 8601 time"),
    (["plan", JOB, "--top", "0"], "--top"),
    (["plan", JOB, "--weight", "-3"], "--weight"),
    (["plan", JOB, "--quota", "bogus"], "--quota"),
    (["plan", JOB, "--emit", "bogus"], "--emit 'bogus': expected sky"),
    (["plan", JOB, "--availability", "missing.out"], "missing.out: cannot read"),
    (["plan", JOB, "--explain", "bogus"], "offering 'bogus': not in resnet50's ranking"),
    (["plan", JOB, "--from", "aws us-east-1a p3.2xlarge spot"], "--from 'aws us-east-1a "
     "p3.2xlarge spot': prices a move to the offering --explain names"),
    (["backtest", "--models", "bogus"], "unknown model 'bogus': expected one of"),
    (["backtest", "--days", "-3"], "--days -3: expected a positive number"),
    (["backtest", "--region", "us-east-9", "--days", "1"], "region 'us-east-9'"),
    (["backtest", "--policies", "bogus"], "unknown policy 'bogus': expected one of"),
    (["backtest", "--starts", "0"], "--starts 0: expected a whole number >= 1"),
    (["backtest", "--first-start", "bogus"], "--first-start 'bogus': expected an ISO 8601"),
    (["backtest", "--margin", "-3"], "--margin -3: expected a finite number >= 0"),
    (["backtest", "--every-hours", "-3"], "--every-hours -3: expected a positive number"),
    (["backtest", "--period-hours", "-3"], "--period-hours -3: expected a positive number"),
    (["backtest", "--restart-minutes", "-3"], "--restart-minutes -3: expected a finite"),
    (["backtest", "--warmup-minutes", "-3"], "--warmup-minutes -3: expected a finite"),
    (["backtest", "--lost-work-minutes", "-3"], "--lost-work-minutes -3: expected"),
    (["backtest", "--overlap-minutes", "-3"], "--overlap-minutes -3: expected a finite"),
    (["backtest", "--checkpoint-gb", "-3"], "--checkpoint-gb -3: expected a finite"),
    (["backtest", "--jobs", "missing.yaml"], "missing.yaml: no such file"),
    (["backtest-deadline", "--deadline", "-3"], "--deadline '-3': expected a positive"),
    (["backtest-deadline", "--deadline", "5x"],
     "--deadline '5x': expected hours (48, '36h', '2d', '90m')"),
    (["backtest-deadline", "--deadline", "2026-12-01"],
     "--deadline '2026-12-01': expected durations after each start such as 52,70"),
    (["backtest-deadline", "--deadline", "52", "--job-hours", "-3"], "--job-hours -3"),
    (["backtest-deadline", "--deadline", "52", "--policies", "bogus"],
     "deadline policy 'bogus': expected one of"),
    (["backtest-deadline", "--deadline", "52", "--zones", "us-east-1q"],
     "stored zones: us-east-1a; did you mean 'us-east-1a'?"),
    (["backtest-deadline", "--deadline", "52", "--instance-type", "p3.2xlarg"],
     "expected an instance type of the stored traces: p3.2xlarge; did you mean"),
    (["backtest-deadline", "--deadline", "52", "--windows", "bogus"], "--windows 'bogus'"),
    (["backtest-deadline", "--deadline", "52", "--history", "bogus"], "history 'bogus'"),
    (["quotas", "--cloud", "bogus"], "--cloud 'bogus': expected one of aws, gcp, azure"),
    (["quotas", "--region", "us-east-9"], "--region 'us-east-9': not a region of aws"),
    (["backtest-deadline", "--deadline", "52", "--block", "bogus"], "--block 'bogus'"),
    (["backtest-deadline", "--deadline", "52", "--starts", "0"], "--starts 0: expected a "
     "whole number >= 1"),
    (["backtest-deadline", "--deadline", "52", "--spot-price", "-3"], "--spot-price -3"),
    (["backtest-deadline", "--deadline", "52", "--on-demand-price", "-3"],
     "--on-demand-price -3: expected a positive USD per hour"),
    (["backtest-deadline", "--deadline", "52", "--restart-minutes", "-3"],
     "--restart-minutes -3: expected a number >= 0"),
    (["backtest-deadline", "--deadline", "52", "--checkpoint-minutes", "-3"],
     "--checkpoint-minutes '-3': expected minutes > 0 or 'auto'"),
    (["backtest-deadline", "--deadline", "52", "--checkpoint-gb", "-3"],
     "--checkpoint-gb -3: expected a number >= 0"),
    (["backtest-deadline", "--deadline", "52", "--optimum-step", "-3"],
     "--optimum-step '-3': expected exact or seconds dividing"),
    (["backtest-deadline", "--deadline", "52", "--egress-rates", "missing.csv"],
     "--egress-rates missing.csv"),
    (["collect", "--cloud", "bogus"], "--cloud 'bogus': expected one of aws, gcp, azure"),
    (["collect", "--region", "us-east-9"], "--region 'us-east-9': not a region of aws: its "
     "series has us-east-1, us-east-2, and a new one would be us-east-3"),
    (["collect", "--gpu", "bogus"], "unknown GPU model 'bogus': expected one of"),
    (["collect", "--since", "bogus"], "--since 'bogus': expected an ISO 8601 time"),
    (["collect", "--workers", "0"], "--workers 0: expected a whole number >= 1"),
    (["launch", JOB, "--launcher", "bogus"], "launcher 'bogus': expected one of local"),
    (["launch", JOB, "--wait", "-3"], "--wait -3: expected a finite number >= 0"),
    (["launch", JOB, "--wait", "nan"], "--wait nan: expected a finite number >= 0"),
    (["launch", JOB, "--offering", "bogus"], "offering 'bogus': expected 'CLOUD ZONE-OR-REGION"),
    (["launch", JOB, "--secret", "NOT_SET_ANYWHERE"], "not set in your environment: "
     "--secret NOT_SET_ANYWHERE; give it as NAME=VALUE"),
    (["launch", JOB, "--env", "NOT_SET_ANYWHERE"], "envs given at launch are for SkyPilot "
     "tasks; put a job spec's envs in its file"),
    (["status", "--state", "runing"], "--state 'runing': expected one of pending"),
    (["status", "--wait", "-3"], "--wait -3: expected a finite number >= 0"),
    (["status", "--limit", "0"], "--limit"),
    (["status", "--label", "bogus"], "--label 'bogus': expected LABEL=VALUE"),
    (["status", "--name", "resnet5O"], "--name 'resnet5O': no job's name matches it; did "
     "you mean 'resnet50'?"),
    (["status", "--budget", "vison"], "--budget 'vison': no job is in a budget of that name: "
     "expected one of vision; did you mean 'vision'?"),
    (["status", "bogus"], "job 'bogus': no job of that name in the store"),
    (["migrate", "--margin", "-3"], "--margin -3: expected a fraction from 0 to 1: 0.05 is 5 %"),
    (["migrate", "--wait", "-3"], "--wait -3: expected a finite number >= 0"),
    (["migrate", "--to", "bogus"], "offering 'bogus': expected 'CLOUD ZONE-OR-REGION"),
    (["stop", "bogus"], "job 'bogus': no job of that name in the store; the jobs: "),
    (["stop", "resnet5O"], "job 'resnet5O': no job of that name in the store; did you mean "
     "'resnet50'?"),
    (["logs", "resnet-50"], "job 'resnet-50': no job of that name in the store; did you "
     "mean 'resnet50'?"),
    (["start", "resnet50", "--wait", "-3"], "--wait -3: expected a finite number >= 0"),
    (["start", "resnet50", "--budget", "0"], "--budget 0: expected a finite number > 0"),
    (["migrate", "resnet50", "--secret", "NOT_SET_ANYWHERE"], "only a running job is moved"),
    (["start", "resnet50", "--secret", "NOT_SET_ANYWHERE"], "job resnet50 has no secrets (its "
     "task names none under `secrets:`), so --secret NOT_SET_ANYWHERE gives it nothing: give "
     "the command without --secret"),
    (["logs", "resnet50", "--tail", "0"], "--tail"),
    (["logs", "resnet50", "--node", "-1"], "--node"),
    (["report", "--since", "bogus"], "--since 'bogus': expected an ISO 8601 time"),
    (["report", "--until", "bogus"], "--until 'bogus': expected an ISO 8601 time"),
    (["--config", "nope.toml", "status"], "--config 'nope.toml': no such file: expected a "
     "TOML config file"),
    (["report", "--job", "bogus"], "--job 'bogus': no job of that name in the store; the "
     "jobs: "),
    (["report", "--job", "resnet5O"], "--job 'resnet5O': no job of that name in the store; "
     "did you mean 'resnet50'?"),
    (["report", "--billed", "--job", "resnet5O"], "--job 'resnet5O': no job of that name in "
     "the store; did you mean 'resnet50'?"),
    (["bills", "import", "bogus"], "export 'bogus': expected s3://BUCKET/PREFIX"),
    (["bills", "import", "s3://bucket/prefix", "--since", "bogus"], "--since 'bogus': "
     "expected an ISO 8601 time"),
    (["bills", "lines", "--since", "bogus"], "--since 'bogus': expected an ISO 8601 time"),
    (["bills", "lines", "--limit", "-1"], "--limit"),
    (["bills", "lines", "--until", "bogus"], "--until 'bogus': expected an ISO 8601 time"),
    (["bills", "import", "s3://bucket/prefix", "--until", "bogus"], "--until 'bogus'"),
    (["catalog", "--gpu", "bogus"], "unknown GPU model 'bogus'"),
    (["catalog", "--cloud", "bogus"], "--cloud 'bogus': expected one of aws, gcp, azure"),
    (["catalog", "refresh", "--cloud", "bogus"], "--cloud 'bogus': expected one of aws"),
    (["catalog", "refresh", "--region", "bogus"], "--region 'bogus': not a region of aws, "
     "gcp or azure"),
    (["catalog", "refresh", "--cloud", "aws", "--region", "eastus"],
     "--region 'eastus': not a region of aws"),
    (["prices", "show", "--gpu", "bogus"], "unknown GPU model 'bogus'"),
    (["prices", "show", "--cloud", "bogus"], "--cloud 'bogus': expected one of aws"),
    (["prices", "show", "--region", "us-east-9"], "--region 'us-east-9': not a region of aws"),
    (["prices", "show", "--region", "bogus"], "--region 'bogus': not a region of aws, gcp "
     "or azure"),
    (["prices", "show", "--market", "bogus"], "--market 'bogus': expected one of on-demand"),
    (["prices", "show", "--at", "bogus"], "--at 'bogus': expected an ISO 8601 time"),
    (["prices", "show", "--top", "-3"], "--top"),
    (["prices", "history", "--instance", "p3.2xlarg"], "no known prices for instance type "
     "'p3.2xlarg'; did you mean 'p3.2xlarge'?"),
    (["prices", "history", "--instance", "p3.2xlarge", "--region", "bogus"],
     "--region 'bogus': not a region of aws, gcp or azure"),
    (["prices", "history", "--instance", "p3.2xlarge", "--region", "us-west-2",
      "--stored-only"],
     "no stored prices for instance type 'p3.2xlarge' in us-west-2; it has prices in "
     "us-east-1"),
    (["prices", "history", "--instance", "p3.2xlarge", "--market", "bogus"],
     "--market 'bogus'"),
    (["prices", "history", "--instance", "p3.2xlarge", "--since", "bogus"], "--since 'bogus'"),
    (["prices", "history", "--instance", "p3.2xlarge", "--until", "bogus"], "--until 'bogus'"),
    (["prices", "export", "out.bogus"], "unknown export format: expected a .csv or .parquet"),
    (["prices", "import", "FILE", "--trace-start", "bogus"], "--trace-start 'bogus'"),
    (["throughput", "show", "--model", "bogus"], "unknown model 'bogus': expected one of"),
    (["throughput", "show", "--gpu", "bogus"], "unknown GPU model 'bogus'"),
    (["throughput", "show", "--count", "-3"], "--count -3: expected a whole number from 1 "
     "to 16"),
    (["throughput", "show", "--precision", "fp8"], "precision 'fp8': expected one of fp32, "
     "fp16"),
    (["throughput", "show", "--file", "missing.csv"], "--file missing.csv: no such file"),
    (["throughput", "forget", "resnet5O"], "unknown model 'resnet5O': expected one of"),
    (["throughput", "forget", "--gpu", "bogus"], "--gpu 'bogus': unknown GPU model"),
    (["throughput", "set", "ResNet-50 (batch size 64)", "bogus", "3"], "GPU 'bogus'"),
    (["throughput", "import", "missing.csv"], "missing.csv: no such file"),
    (["risk", "import", "FILE", "--kind", "bogus"], "--kind 'bogus': expected one of advisor"),
    (["risk", "import", "FILE", "--kind", "placement", "--at", "bogus"], "--at 'bogus'"),
    (["risk", "show", "--at", "bogus"], "--at 'bogus': expected an ISO 8601 time"),
    (["risk", "show", "--cloud", "bogus"], "--cloud 'bogus': expected one of aws"),
    (["dashboard", "--port", "-3"], "--port"),
    (["dashboard", "--poll", "-3"], "--poll"),
    (["dashboard", "--token-file", "missing"], "--token-file missing: cannot be read"),
    (["dashboard", "--host", "0.0.0.0"], "--host 0.0.0.0: serving another address than "
     "loopback needs a token"),
    (["gpus", "bogus"], "unknown GPU model 'bogus'"),
    (["gpus", "--cloud", "bogus"], "--cloud 'bogus': expected one of aws"),
    (["gpus", "--at", "bogus"], "--at 'bogus': expected an ISO 8601 time"),
    (["gpus", "--top", "-3"], "--top"),
    (["config", "show", "--config", "missing.toml"],
     "missing.toml: no such file: expected a TOML config file"),
    (["daemon", "--config", "missing.toml"],
     "missing.toml: no such file: expected a TOML config file"),
    (["daemon", "install", "--kind", "bogus", "--print"], "--kind 'bogus': expected one of "
     "systemd, cron"),
]


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A store with the demo prices, a one-zone availability trace and a finished job
    (resnet50, in budget 'vision'), and a file that exists for the commands that read one."""
    from datetime import datetime, timezone

    folder = tmp_path_factory.mktemp("world")
    trace = folder / "availability" / "aws-02-15-2023" / "us-east-1a_v100_1.json"
    trace.parent.mkdir(parents=True)
    trace.write_text(json.dumps({"metadata": {"gap_seconds": 195}, "data": [1] * 2000}))
    db = str(folder / "store.sqlite")
    import_prices(db, [ROOT / "examples" / "demo" / "prices-before.csv", trace], partial=False)
    store = PriceStore(db)
    try:
        at = datetime(2026, 1, 1, tzinfo=timezone.utc)
        spec = {"spec": {"name": "resnet50", "constraints": {"budget_name": "vision"}},
                "launcher": "local"}
        job = store.jobs.create("resnet50", spec, 10.0, at=at)
        store.jobs.transition(job, "succeeded", at=at)
    finally:
        store.dispose()
    (folder / "FILE").write_text("{}")
    return folder


@pytest.mark.parametrize(("argv", "says"), CASES, ids=[" ".join(a[:3]) for a, _ in CASES])
def test_a_bogus_value_of_any_option_is_refused_naming_it(
        world: Path, monkeypatch: pytest.MonkeyPatch, argv: list[str], says: str) -> None:
    monkeypatch.setenv("COSTSCHED_DB", str(world / "store.sqlite"))
    monkeypatch.setenv("COSTSCHED_INSTANCES", str(world / "instances"))
    monkeypatch.chdir(world)
    before = (world / "store.sqlite").stat().st_mtime_ns
    result = CliRunner().invoke(app, argv)
    assert result.exit_code == 2, (result.exit_code, result.output)
    assert result.exception is None or isinstance(result.exception, SystemExit), \
        result.exception
    text = " ".join(result.output.replace("│", " ").split())  # typer's box, unwrapped
    assert says in text, text
    assert "Traceback" not in result.output
    assert (world / "store.sqlite").stat().st_mtime_ns == before  # nothing was written


# Options any value of which is taken as given: where output goes, free text, and stores
# and configurations (their own tests refuse what cannot be opened).
ANY_VALUE = {
    "--db": "a store: tests/costsched/cli/test_store_option.py",
    "--html": "where a report is written", "--csv": "where rows are written",
    "--plot": "where a figure is written", "--source": "free text: where a figure comes from",
    "daemon --log": "where the daemon's log is written (made when missing)",
    "daemon supervise --log": "the background supervisor's log (a launch names it)",
    "daemon supervise --tag": "free text: the background supervisor's holder name",
    "daemon supervise --take-over": "a holder name: the lease says whether one holds it",
    "--gcp-project": "a GCP project id: the cloud says whether it is one",
    "throughput set --file": "where a measurement is written (made when missing)",
    "throughput import --file": "where measurements are written (made when missing)",
}


def test_every_option_that_takes_a_value_is_driven_above() -> None:
    """A new option gets a bogus value above, or a reason in ANY_VALUE."""
    import typer
    from typer import _click as click

    root = typer.main.get_command(app)
    context = click.Context(root)
    options: dict[tuple[str, ...], list[str]] = {}

    def walk(command, path: tuple[str, ...]) -> None:  # noqa: ANN001
        if hasattr(command, "list_commands"):
            for name in command.list_commands(context):
                walk(command.get_command(context, name), (*path, name))
        options[path] = [max(p.opts, key=len) for p in command.params
                         if p.param_type_name == "option" and not getattr(p, "is_flag", False)]

    walk(root, ())
    driven = set()
    for argv, _ in CASES:
        path = max((p for p in options if tuple(argv[:len(p)]) == p), key=len)
        driven.update((path, a) for a in argv if a.startswith("--"))
    missing = [f"{' '.join(path)} {option}" for path, names in options.items()
               for option in names
               if option != "--help" and (path, option) not in driven
               and option not in ANY_VALUE and f"{' '.join(path)} {option}" not in ANY_VALUE]
    assert missing == [], missing
