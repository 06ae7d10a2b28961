"""Messages say each thing once and in grammar: no prefix wrapped twice on its way up ("exit
code 2: exit code 2", "aws: aws: boto3 ...", "myclf: myclf"), no "is succeeded". The
messages are produced by the paths that produced such lines (a failed job's status, a cloud
without its SDK through `collect`, the daemon and `launch`, a task named after itself,
stopping and starting a job that ended) and scanned."""

from __future__ import annotations

import importlib.abc
import json
import re
import sys
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
import yaml

from costsched.cli import jobs as cli_jobs
from costsched.daemon.tasks import _collected
from costsched.migration.launcher import Instance
from costsched.model import failure_words
from costsched.service import jobs as service
from costsched.service.collect import collect_prices
from costsched.store import PriceStore
from costsched.vocabulary import prefixed
from tests.costsched.migration.test_edges import FakeLauncher
from tests.costsched.service.test_jobs import set_prices

EXAMPLES = Path(__file__).parents[3] / "examples"
# "X: X" where X is the same words ("aws: aws: boto3", "exit code 2: exit code 2").
REPEATED = re.compile(r"(?<![\w-])(\w[\w .'-]*?): \1(?=[\s:,.;)]|$)")
UNGRAMMATICAL = re.compile(r"\bis (succeeded|failed)\b")


def wrong(text: str) -> list[str]:
    """The repeated prefixes and ungrammatical states in `text`."""
    return ([m.group(0) for m in REPEATED.finditer(text)]
            + [m.group(0) for m in UNGRAMMATICAL.finditer(text)])


def test_the_scan_sees_the_mistakes() -> None:
    assert wrong("failed with exit code 2: exit code 2: exit code 2") == [
        "exit code 2: exit code 2"]
    assert wrong("error: aws: aws: boto3 is not installed") == ["aws: aws"]
    assert wrong("myclf: myclf, 3,600 steps") == ["myclf: myclf"]
    assert wrong("job 1 (x) is succeeded already") == ["is succeeded"]
    assert wrong("job 1 (x) has succeeded already; aws: boto3 is missing: pip") == []


def test_prefixes_are_added_once() -> None:
    assert prefixed("aws", "aws: boto3 is not installed") == "aws: boto3 is not installed"
    assert prefixed("aws", "boto3 is not installed") == "aws: boto3 is not installed"
    assert prefixed("myclf", "myclf") == "myclf"
    assert prefixed("myclf", "myclf, 3,000 steps") == "myclf, 3,000 steps"
    assert prefixed("resnet", "resnet50") == "resnet: resnet50"
    assert failure_words(2, "exit code 2") == "exit code 2"
    assert failure_words(2, "exit code 2: exit code 2") == "exit code 2"  # older stores
    assert failure_words(2, "exit code 2 (ValueError)") == "exit code 2 (ValueError)"
    assert failure_words(137, "killed") == "exit code 137: killed"
    assert failure_words(None, "") == ""


@pytest.fixture()
def world(store: PriceStore, tmp_path: Path) -> tuple[PriceStore, FakeLauncher, Path]:
    set_prices(store, {"us-east-1a": 1.0}, datetime.now(timezone.utc) - timedelta(hours=1))
    spec = {"name": "myclf", "throughputs": {"V100": 0.5}, "steps": 3600, "run": "true",
            "constraints": {"regions": ["us-east-1"], "markets": ["spot"]}}
    path = tmp_path / "myclf.yaml"
    path.write_text(yaml.safe_dump(spec))
    return store, FakeLauncher(), path


def test_a_failed_job_says_its_exit_code_once(world, tmp_path: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    store, launcher, spec = world
    [job] = service.launch(store, spec, launcher=launcher,
                           checkpoint_root=str(tmp_path / "ckpt"))
    [instance] = launcher.instances(job.id)
    # As the agent ends a job whose command exited 2: its detail names the exit code.
    launcher.states[instance.id] = Instance(
        instance.id, job.id, instance.attempt, instance.offering_key, "failed",
        exit_code=2, detail="exit code 2 (ValueError: bad batch size)")
    events = service.reconcile(store, launcher)
    [shown] = service.status(store, launcher, job.id, reconcile_first=False)
    cli_jobs._print_status([shown], json_out=False)
    text = capsys.readouterr().out
    assert "failed with exit code 2 (ValueError: bad batch size)" in text
    log = store.jobs.events(job.id)
    said = [*events, *log["detail"], text]
    assert [w for line in said for w in wrong(str(line))] == []
    # Stopping a job that ended says so in grammar; a start takes it up again.
    with pytest.raises(Exception, match=r"\(myclf\) has failed") as refused:
        service.stop(store, launcher, job.id)
    assert wrong(str(refused.value)) == []
    assert service.start(store, launcher, job.id).state == "running"


def test_a_cloud_without_its_sdk_is_named_once(world, monkeypatch: pytest.MonkeyPatch,
                                                cli, tmp_path: Path) -> None:
    store, _, spec = world
    not_installed(monkeypatch, "boto3", "botocore")
    summary = collect_prices(store, clouds=["aws"], gpus=["V100"], regions=["us-east-1"])
    assert summary.clouds["aws"].error == "aws: boto3 is not installed: pip install " \
                                          "'costsched[aws]'"
    daemon_line = _collected(summary) if summary.inserted else str(_raised(summary))
    collected = cli("collect", "--cloud", "aws", "--region", "us-east-1", "--json")
    launched = cli("launch", str(spec), "--launcher", "aws")
    assert launched.exit_code == 2 and launched.output.count("\n") == 1  # one line
    assert "Traceback" not in launched.output
    assert not store.jobs.records()  # nothing stored for a launch that cannot run
    said = [daemon_line, collected.output, launched.output,
            json.loads(collected.stdout)["clouds"]["aws"]["error"]]
    assert [w for line in said for w in wrong(line)] == []
    assert all("boto3 is not installed" in line for line in said)


@pytest.mark.parametrize(("root", "packages", "said"), [
    ("az://ckpt/jobs", ("azure",), "azure blob: azure-storage-blob is not installed: pip "
     "install 'costsched[azure]'"),
    ("s3://ckpt-bucket/jobs", ("boto3", "botocore"), "aws: boto3 is not installed: pip "
     "install 'costsched[aws]'")])
def test_a_checkpoint_store_without_its_sdk_is_one_line(
        world, monkeypatch: pytest.MonkeyPatch, cli, root: str, packages: tuple[str, ...],
        said: str) -> None:
    """A local launch whose checkpoints go to a cloud's store, that cloud's extra not
    installed: refused in one line naming the location and the extra; nothing stored."""
    store, _, spec = world
    not_installed(monkeypatch, *packages)
    monkeypatch.setenv("COSTSCHED_LAUNCH_CHECKPOINT_ROOT", root)
    launched = cli("launch", str(spec), "--launcher", "local", "--wait", "0")
    assert launched.exit_code == 2 and launched.output.count("\n") == 1, launched.output
    assert "Traceback" not in launched.output and wrong(launched.output) == []
    assert f"checkpoint location {root}: {said}" in " ".join(launched.output.split())
    assert not store.jobs.records()


class _Absent(importlib.abc.MetaPathFinder):
    """Packages this machine does not have, as an import sees them."""

    def __init__(self, names: tuple[str, ...]) -> None:
        self.names = names

    def find_spec(self, name: str, path: object = None, target: object = None) -> None:
        if name.split(".")[0] in self.names:
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)


def not_installed(monkeypatch: pytest.MonkeyPatch, *names: str) -> None:
    for loaded in [m for m in sys.modules if m.split(".")[0] in names]:
        monkeypatch.delitem(sys.modules, loaded)
    monkeypatch.setattr(sys, "meta_path", [_Absent(names), *sys.meta_path])


def _raised(summary: object) -> Exception:
    try:
        _collected(summary)
    except Exception as exc:  # NothingCollected: every cloud failed
        return exc
    raise AssertionError("expected NothingCollected")


def test_a_task_named_after_its_model_is_named_once(cli, tmp_path: Path) -> None:
    task = tmp_path / "sky.yaml"
    task.write_text("name: myclf\nresources:\n  accelerators: V100:1\n  use_spot: true\n"
                    "run: python train.py\n")
    assert cli("prices", "import", str(EXAMPLES / "demo" / "prices-before.csv")).exit_code == 0
    planned = cli("plan", str(task))
    assert planned.exit_code == 0, planned.output
    assert "myclf" in planned.output and wrong(planned.output) == []


def test_the_on_demand_market_is_written_one_way(store: PriceStore, cli) -> None:  # noqa: ANN001
    """'on-demand' in every line a user reads (it is stored as on_demand): a job's
    placements under `status`, and the markets a refusal lists."""
    at = datetime(2026, 1, 1, tzinfo=timezone.utc)
    job = store.jobs.create("odjob", {"spec": {"name": "odjob"}, "source": "t"}, 10, at=at)
    store.jobs.place(job, ("gcp", "us-central1", "", "a2-highgpu-1g", "on_demand", "linux"),
                     gpu_model="A100", gpu_count=1, at=at, usd_per_hour=3.67,
                     reason="launch", instance="i-1")
    store.jobs.end_placement(job, at + timedelta(hours=1))
    store.jobs.transition(job, "failed", at=at + timedelta(hours=1))
    shown = cli("status", "--no-reconcile").output
    assert "launch on gcp us-central1 a2-highgpu-1g on-demand: billed 1.0000 h" in shown, shown
    refused = cli("migrate", "odjob", "--to", "gcp us-central1 a2-highgpu-1g ondemand")
    assert refused.exit_code == 2
    assert "expected one of on-demand, spot; did you mean 'on-demand'?" in refused.output
    assert "on_demand" not in shown + refused.output


def test_no_count_is_written_with_a_noun_in_parentheses() -> None:
    """'1 file', '0 jobs watched', never '1 file(s)' (`vocabulary.counted`): no message of
    the product writes a counted noun with '(s)'."""
    counted_maybe = re.compile(r"\{[^}]*\} [a-zA-Z ]*\w\(s\)")
    roots = [Path(__file__).parents[3] / name
             for name in ("costsched", "launchers", "price_collectors")]
    found = [f"{path.name}:{n}" for root in roots for path in sorted(root.rglob("*.py"))
             for n, line in enumerate(path.read_text().splitlines(), 1)
             if counted_maybe.search(line)]
    assert found == []
