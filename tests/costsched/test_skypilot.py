"""SkyPilot task files read as they are, refused field by field, and written pinned to a
decision (read back to the same placement)."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
import yaml

from costsched import service
from costsched.default_hosts import OTHER_HOST, other_hosts
from costsched.model import InvalidInput
from costsched.optimize.rank import allowed_offerings
from costsched.prices import prices_at
from costsched.skypilot import DEFAULT_HOURS, parse_task
from costsched.skypilot_emit import emit_task
from costsched.taskfile import load

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "sky"
NOW = datetime(2026, 11, 1, tzinfo=timezone.utc)


def task(text: str, name: str = "t"):  # noqa: ANN201
    return parse_task(yaml.safe_load(text), "task.yaml", name)


def refusal(text: str) -> str:
    with pytest.raises(InvalidInput) as info:
        task(text)
    message = str(info.value)
    assert "\n" not in message and message.startswith("task.yaml: ")
    return message


def test_a_skypilot_task_file_loads_as_a_job() -> None:
    (spec,) = load(EXAMPLES / "finetune.yaml")
    assert spec.name == "resnet50-finetune" and spec.workdir == str(EXAMPLES.resolve())
    assert spec.setup == "pip install -r requirements.txt\n"
    assert spec.run.startswith("python train.py") and spec.envs == {"EPOCHS": "3"}
    c = spec.constraints
    assert c.markets == ["spot"] and c.gpu_models == ["T4", "V100"] and c.gpu_counts == [1]
    assert {"p3.2xlarge", "g4dn.xlarge", "n1-standard-8+1xnvidia-tesla-v100"} <= set(
        c.instance_types)
    assert "p3.8xlarge" not in c.instance_types  # V100:4 was not asked for
    assert c.deadline == 24 and c.budget == 40
    assert spec.model == "ResNet-50 (batch size 64)" and spec.steps == 20000
    assert spec.checkpoint.interval_minutes == 20


def test_costscheds_own_specs_are_not_taken_for_tasks() -> None:
    (spec,) = load(EXAMPLES.parent / "resnet50.yaml")
    assert spec.constraints.regions == ["us-east-1"] and spec.epochs == 10


@pytest.mark.parametrize("accelerators", [
    "V100:1, A100:8", "{V100:1, A100:8}", "{V100: 1, A100: 8}", "[V100:1, A100:8]",
    "{'V100:1', 'A100:8'}"])
def test_accelerators_as_a_string_set_mapping_or_list(accelerators: str) -> None:
    if accelerators == "V100:1, A100:8":  # a plain string names one accelerator
        message = refusal(f"resources: {{accelerators: '{accelerators}'}}\nrun: x")
        assert "resources.accelerators" in message
        return
    if accelerators.startswith("{'"):  # a YAML set: keys with null values
        text = "resources:\n  accelerators: !!set {V100:1, A100:8}\nrun: x"
        spec = parse_task(yaml.safe_load(text), "task.yaml", "t")
    else:
        spec = task(f"resources: {{accelerators: {accelerators}}}\nrun: x")
    types = set(spec.constraints.instance_types)
    assert {"p3.2xlarge", "p4d.24xlarge", "a2-highgpu-8g"} <= types
    assert not {"p3.16xlarge", "a2-highgpu-1g"} & types  # V100:8 and A100:1 were not asked
    assert spec.hours == DEFAULT_HOURS  # the default work: an hour on the slowest GPU named
    assert spec.reference_gpu == "V100:1"  # whatever the order (a YAML set has none)


def test_location_by_infra_or_by_cloud_region_zone() -> None:
    a = task("resources: {infra: aws/us-east-1/us-east-1b, accelerators: V100}\nrun: x")
    b = task("resources: {cloud: AWS, region: us-east-1, zone: us-east-1b, "
             "accelerators: V100}\nrun: x")
    assert a.constraints == b.constraints
    assert a.constraints.zones == ["us-east-1b"] and a.constraints.clouds == ["aws"]
    assert a.constraints.markets == ["on_demand"]  # SkyPilot's default without use_spot


@pytest.mark.parametrize(("resources", "field", "says"), [
    ("{infra: aws/us-east-1/us-east-1z}", "resources.infra",
     "'us-east-1z': not a zone of us-east-1; its zones are us-east-1a, "),
    ("{cloud: aws, region: us-east-1, zone: us-east-1z}", "resources.zone",
     "'us-east-1z': not a zone of us-east-1"),
    ("{cloud: aws, zone: us-east-1z}", "resources.zone", "'us-east-1z': not a zone of "
     "us-east-1"),
    ("{cloud: aws, region: us-east-1, zone: us-west-2a}", "resources.zone",
     "'us-west-2a': a zone of us-west-2, not of us-east-1"),
    ("{cloud: gcp, zone: us-east-1a}", "resources.zone", "'us-east-1a': a zone of aws, not "
     "of gcp"),
    ("{cloud: azure, region: eastus, zone: '1'}", "resources.zone",
     "'1': expected a zone named after its region"),
])
def test_a_zone_that_does_not_exist_is_refused_like_a_region(resources: str, field: str,
                                                             says: str) -> None:
    message = refusal(f"resources: {resources}\nrun: x")
    assert f"field {field}: {says}" in message


@pytest.mark.parametrize(("resources", "field", "says"), [
    ("{region: useast1}", "resources.region",
     "'useast1': not a region of aws, gcp or azure; did you mean 'us-east-1' or 'us-east1'"),
    ("{infra: aws/useast1}", "resources.infra",
     "'useast1': not a region of aws; did you mean 'us-east-1'?"),
    ("{infra: azure/useast1}", "resources.infra", "'useast1': not a region of azure"),
    ("{infra: azure/taiwannorth}", "resources.infra", "'taiwannorth': not a region of azure"),
    ("{accelerators: V100, any_of: [{region: useast1}, {region: us-west-2}]}",
     "resources.any_of[0].region",
     "'useast1': not a region of aws, gcp or azure; did you mean 'us-east-1'"),
])
def test_a_region_of_no_listed_series_is_refused_where_the_task_wrote_it(
        resources: str, field: str, says: str) -> None:
    message = refusal(f"resources: {resources}\nrun: x")
    assert f"field {field}: {says}" in message, message


@pytest.mark.parametrize("infra", ["aws/us-east-3", "azure/eastus3", "gcp/us-east6",
                                   "azure/westeurope", "gcp/us-central1"])
def test_a_listed_region_or_one_numbered_next_is_taken(infra: str) -> None:
    spec = task(f"resources: {{infra: {infra}, accelerators: V100}}\nrun: x")
    assert spec.constraints.regions == [infra.split("/")[1]]


def test_any_of_alternatives_that_differ_in_place() -> None:
    (spec,) = load(EXAMPLES / "anywhere.yaml")
    c = spec.constraints
    assert c.clouds == ["aws", "gcp"] and c.regions == ["us-central1", "us-east-1"]
    assert "g2-standard-4" in c.instance_types and "g5.xlarge" in c.instance_types


def test_a_bucket_mount_is_the_checkpoint_location() -> None:
    (spec,) = load(EXAMPLES / "pinned.yaml")
    assert spec.checkpoint.location == "s3://my-team-checkpoints/llm-eval"
    assert spec.constraints.instance_types == ["g5.12xlarge"]
    spec = task("file_mounts:\n  /ckpt: {name: my-bucket, store: gcs}\n"
                "resources: {accelerators: V100}\nrun: x")
    assert spec.checkpoint.location == "gs://my-bucket"


@pytest.mark.parametrize(("text", "field", "says"), [
    ("num_nodes: 65\nrun: x", "num_nodes", "expected a whole number of nodes, 1 to 64"),
    ("num_nodes: true\nrun: x", "num_nodes", "true: expected a whole number"),  # as written
    ("resources: {accelerators: V100, use_spot: true, disk_tier: null}\nrun: x",
     "resources.disk_tier", "null: expected one of"),
    ("pool: {workers: 2}\nrun: x", "pool", "`sky jobs pool`"),
    ("volumes: {/data: vol}\nrun: x", "volumes", "not supported yet"),
    ("resources: []\nrun: x", "resources", "expected a mapping"),
    ("resources: {infra: aws/}\nrun: x", "resources.infra", "expected CLOUD"),
    ("resources: {ports: 70000, accelerators: V100}\nrun: x", "resources.ports", "65535"),
    ("resources: {accelerators: V100, disk_size: -5}\nrun: x", "resources.disk_size",
     "whole GB"),
    ("resources: {accelerators: V100, disk_tier: fast}\nrun: x", "resources.disk_tier",
     "low, medium"),
    ("file_mounts: {/a: r2://bucket}\nresources: {accelerators: V100}\nrun: x",
     "file_mounts./a", "`sky launch`"),
    ("file_mounts: {/data/../etc: ./configs}\nresources: {accelerators: V100}\nrun: x",
     "file_mounts./data/../etc", "expected a path on the instance without '..'"),
    ("resources: {job_recovery: {strategy: FAILOVER, max_restarts_on_errors: -1}}\nrun: x",
     "resources.job_recovery.max_restarts_on_errors", "expected a whole number of restarts"),
    ("resources: {job_recovery: {max_restarts_on_errors: two}}\nrun: x",
     "resources.job_recovery.max_restarts_on_errors", "0 to 1000"),
    ("resources: {job_recovery: {max_restarts_on_errors: true}}\nrun: x",
     "resources.job_recovery.max_restarts_on_errors", "0 to 1000"),
    ("resources: {job_recovery: SOMETIMES}\nrun: x", "resources.job_recovery", "FAILOVER"),
    ("resources: {accelerators: tpu-v4-8}\nrun: x", "resources.accelerators",
     "TPUs are not supported yet"),
    ("resources: {accelerator_args: {runtime_version: x}}\nrun: x",
     "resources.accelerator_args", "TPUs are not supported yet"),
    ("resources: {accelerators: T4:0.5}\nrun: x", "resources.accelerators",
     "fractional GPUs are not supported yet"),
    ("resources: {accelerators: Z9000}\nrun: x", "resources.accelerators",
     "not an accelerator costsched knows"),
    ("resources: {accelerators: GH200:1}\nrun: x", "resources.accelerators",
     "the catalog has no instance type"),
    ("resources: {accelerators: MI300X:8}\nrun: x", "resources.accelerators",
     "the catalog has no instance type"),
    ("resources: {accelerators: V100, gpus: V100}\nrun: x", "resources.gpus", "not both"),
    ("resources: {infra: lambda}\nrun: x", "resources.infra", "`sky launch`"),
    # A typo of a cloud is refused with the name meant, never dropped as another cloud's.
    ("resources: {any_of: [{cloud: gpc, accelerators: L4}, {cloud: aws, accelerators: T4}]}"
     "\nrun: x", "resources.any_of[0].cloud",
     "'gpc': not a cloud; expected one of aws, gcp, azure (or one `sky launch` runs on: "),
    ("resources: {infra: azrue/eastus}\nrun: x", "resources.infra", "did you mean 'azure'?"),
    ("resources: {cloud: aws, region: us-central1}\nrun: x", "resources.region", "region"),
    ("resources: {infra: aws/us-esat-1}\nrun: x", "resources.infra",
     "'us-esat-1': not a region of aws; did you mean"),
    ("resources: {cloud: gcp, region: us-east1x}\nrun: x", "resources.region",
     "did you mean 'us-east1'"),
    ("resources: {cloud: aws, instance_type: m5.huge}\nrun: x", "resources.instance_type",
     "not an instance type of costsched's catalog"),
    ("resources: {accelerators: V100, image_id: 'docker:'}\nrun: x", "resources.image_id",
     "expected docker:IMAGE"),
    ("resources: {accelerators: V100, image_id: 'docker:a b'}\nrun: x",
     "resources.image_id", "expected docker:IMAGE"),
    ("resources: {accelerators: V100, image_id: 'python:3.11'}\nrun: x",
     "resources.image_id", "'python:3.11' is written as a Docker image: give it as "
     "docker:python:3.11"),
    ("resources: {accelerators: V100, image_id: {us-east-9: ami-1}}\nrun: x",
     "resources.image_id.us-east-9", "its series has us-east-1, us-east-2"),
    ("resources: {accelerators: V100, image_id: {gpc: projects/p/global/images/x}}\nrun: x",
     "resources.image_id.gpc", "(or a cloud: aws, gcp, azure)"),
    ("resources: {accelerators: V100, image_id: {us-east-1: 'docker:a/b:1'}}\nrun: x",
     "resources.image_id.us-east-1", "give it as image_id: docker:IMAGE"),
    ("envs: {SKYPILOT_DOCKER_PASSWORD: hunter2}\nresources: {accelerators: V100}\nrun: x",
     "envs.SKYPILOT_DOCKER_PASSWORD", "--secret"),
    ("workdir: {url: 'https://github.com/a/b.git', ref: main}\nrun: x", "workdir",
     "`sky launch`"),
    ("resources: {spot_recovery: FAILOVER, job_recovery: FAILOVER}\nrun: x",
     "resources.spot_recovery", "one of the two"),
    ("resources: {accelerators: V100, any_of: [{image_id: ami-1}]}\nrun: x",
     "resources.any_of[0].image_id", "name its cloud"),
    ("resources: {accelerators: V100, any_of: [{infra: lambda}]}\nrun: x",
     "resources.any_of", "no alternative"),
    ("resources: {accelerators: V100, cpus: lots}\nrun: x", "resources.cpus",
     "expected a number"),
    ("costsched: {steps: 10, gpu: V100}\nrun: x", "costsched.gpu", "unknown field"),
    # What the job's own checks refuse is named where the task wrote it.
    ("costsched: {epochs: -3, steps_per_epoch: 1}\nresources: {accelerators: V100}\nrun: x",
     "costsched.epochs", "expected a positive number"),
    ("costsched: {steps: 9, budget: -5}\nresources: {accelerators: V100}\nrun: x",
     "costsched.budget", "expected a positive amount of USD"),
    ("costsched: {steps: 9, checkpoint: {size_gb: lots}}\nresources: {accelerators: V100}"
     "\nrun: x", "costsched.checkpoint.size_gb", "expected a number"),
    ("costsched: {max_migrations: 1.5}\nrun: x", "costsched.max_migrations",
     "1.5: expected a whole number"),
    ("resources: {use_spot: true, accelerators: V100}\ncostsched: {markets: [spot]}\nrun: x",
     "costsched.markets", "one of the two"),
    ("name: " + "n" * 101 + "\nresources: {accelerators: V100}\nrun: x", "name",
     "at most 100 characters"),
    ("envs: {BIG: " + "x" * 200_000 + "}\nresources: {accelerators: V100}\nrun: x",
     "envs", "put larger data in a file"),
])
def test_what_costsched_does_not_do_is_refused_in_one_line(text: str, field: str,
                                                           says: str) -> None:
    message = refusal(text)
    assert message.startswith("task.yaml: ") and f"field {field}" in message, message
    assert says in message, message


def test_a_refused_task_file_is_one_line_naming_the_file(tmp_path: Path) -> None:
    path = tmp_path / "multi.yaml"
    path.write_text("name: big\nnum_nodes: 400\nresources: {accelerators: A100:8}\nrun: x\n")
    with pytest.raises(InvalidInput, match=rf"^{path}: field num_nodes: 400: expected"):
        load(path)


def placements(spec, at: datetime = NOW):  # noqa: ANN001, ANN201
    """The (cloud, region, zone, instance type, market) a spec's constraints allow among
    the priced offerings."""
    from costsched.jobspec import resolve
    from costsched.throughput import ThroughputTable

    job = resolve(spec, ThroughputTable.load(), at).job
    frame = prices_at(None, at)
    allowed = frame[allowed_offerings(frame, job.constraints) == ""]
    return sorted(set(map(tuple, allowed[["cloud", "region", "zone", "instance_type",
                                          "market"]].values.tolist())))


def test_emit_then_read_back_gives_the_decided_placement(tmp_path: Path) -> None:
    result = service.plan(str(tmp_path / "empty.sqlite"), EXAMPLES / "finetune.yaml", at=NOW)
    best = result.jobs[0].best
    assert best is not None and best["market"] == "spot"  # a fresh install plans spot
    (spec,) = load(EXAMPLES / "finetune.yaml")
    text = emit_task(spec, best, "pinned")
    assert text.startswith("# pinned\n")
    emitted = yaml.safe_load(text)
    assert emitted["resources"]["use_spot"] is True
    assert emitted["run"] == spec.run and emitted["setup"] == spec.setup
    assert emitted["envs"] == spec.envs and emitted["workdir"] == "."  # as the file says
    back = parse_task(emitted, "pinned.yaml")
    assert placements(back) == [(best["cloud"], best["region"], best["zone"],
                                 best["instance_type"], best["market"])]


def test_a_machine_type_with_guest_gpus_round_trips() -> None:
    (spec,) = load(EXAMPLES / "finetune.yaml")
    offering = {"cloud": "gcp", "region": "us-central1", "zone": "us-central1-a",
                "instance_type": "n1-standard-8+1xnvidia-tesla-v100", "market": "on_demand",
                "gpu_model": "V100", "gpu_count": 1}
    emitted = yaml.safe_load(emit_task(spec, offering))
    assert emitted["resources"] == {"infra": "gcp/us-central1/us-central1-a",
                                    "instance_type": "n1-standard-8", "accelerators": "V100:1",
                                    "use_spot": False}
    back = parse_task(emitted, "pinned.yaml")
    assert back.constraints.instance_types == ["n1-standard-8+1xnvidia-tesla-v100"]
    assert back.constraints.zones == ["us-central1-a"]
    # GCP prices are regional: the pinned zone allows its region's regional price
    assert placements(back) == [("gcp", "us-central1", "", "n1-standard-8+1xnvidia-tesla-v100",
                                 "on_demand")]


def test_plan_emit_sky_on_a_fresh_install(cli, tmp_path: Path) -> None:  # noqa: ANN001
    result = cli("plan", EXAMPLES / "finetune.yaml", "--emit", "sky", "--at", "2026-11-01")
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith("# Pinned by costsched plan")
    emitted = yaml.safe_load(result.stdout)
    assert emitted["resources"]["use_spot"] is True and emitted["name"] == "resnet50-finetune"
    pinned = tmp_path / "pinned.yaml"
    pinned.write_text(result.stdout)
    again = cli("plan", pinned, "--emit", "sky", "--at", "2026-11-01")
    assert yaml.safe_load(again.stdout)["resources"] == emitted["resources"]
    bad = cli("plan", EXAMPLES / "finetune.yaml", "--emit", "terraform")
    assert bad.exit_code == 2 and "--emit 'terraform': expected sky" in bad.output


def test_emit_keeps_the_paths_the_task_wrote_from_any_folder(
        cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: ANN001
    project = tmp_path / "project"
    (project / "configs").mkdir(parents=True)
    (project / "task.yaml").write_text(
        "name: rel\nworkdir: .\nfile_mounts: {/cfg: ./configs}\n"
        "resources: {accelerators: V100:1, use_spot: true}\nrun: python train.py\n")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    result = cli("plan", "../project/task.yaml", "--emit", "sky", "--at", "2026-11-01")
    assert result.exit_code == 0, result.output
    emitted = yaml.safe_load(result.stdout)
    assert emitted["workdir"] == "." and emitted["file_mounts"] == {"/cfg": "./configs"}
    assert (f"# Relative paths as ../project/task.yaml wrote them: from {project.resolve()}."
            in result.stdout)
    # Saved beside the task, it reads back to the same folders.
    pinned = project / "pinned.yaml"
    pinned.write_text(result.stdout)
    [back], [first] = load(pinned), load(project / "task.yaml")
    assert back.workdir == first.workdir == str(project.resolve())
    assert [m.source for m in back.task.mounts] == [str((project / "configs").resolve())]


def test_a_fresh_install_plans_a_spot_job_and_says_how_old_its_prices_are(cli) -> None:  # noqa: ANN001
    # (--top 5: the bundled L40S spot offerings, estimated faster, now rank above the V100)
    result = cli("plan", EXAMPLES.parent / "resnet50.yaml", "--top", "5", "--at", "2026-11-01")
    assert result.exit_code == 0, result.output  # was: no offering has market spot
    assert "aws us-east-1 g5.xlarge spot" in result.stdout  # the catalog's spot snapshot
    assert "prices are older than 7 days (the oldest from 2025-05-01" in " ".join(
        result.stdout.split())


RESOURCE_KEYS = ["infra", "cloud", "region", "zone", "accelerators", "instance_type",
                 "use_spot", "job_recovery", "any_of", "ordered", "ports"]
TASK_KEYS = ["name", "workdir", "setup", "run", "envs", "num_nodes", "file_mounts",
             "costsched"]


def _fuzzed_tasks():  # noqa: ANN202
    from hypothesis import strategies as st

    from tests.reliability.fuzz import values

    resources = st.dictionaries(st.sampled_from(RESOURCE_KEYS), st.one_of(
        values, st.sampled_from(["V100:1", "aws/us-east-1", "us-east-1a", "p3.2xlarge"])),
        max_size=4)
    return st.fixed_dictionaries({"run": st.just("x"), "resources": resources},
                                 optional={k: values for k in TASK_KEYS if k != "run"})


def test_fuzzed_tasks_load_or_fail_in_one_line(tmp_path: Path) -> None:
    from hypothesis import given

    from tests.reliability.fuzz import FUZZ, one_line_error

    @FUZZ
    @given(doc=_fuzzed_tasks())
    def run(doc: dict) -> None:
        path = tmp_path / "task.yaml"
        path.write_text(yaml.safe_dump(doc, allow_unicode=True))
        one_line_error(lambda: load(path))

    run()


CORPUS = Path(__file__).resolve().parents[1] / "fixtures" / "skypilot" / "corpus"
# Files of the corpus that are not one task (a pipeline): refused, and not counted in the
# share of tasks planned. A task of several nodes is planned as a gang; a service's task
# as one job (as `sky launch` runs it).
NOT_BATCH = {"42-pipeline.yaml"}
MULTINODE = "38-multinode.yaml"


def _asked(doc: dict) -> dict:
    """What a task file asks for, read from the YAML alone (not by costsched's reader)."""
    res = doc.get("resources") or {}
    accel = res.get("accelerators", res.get("gpus"))
    names = set()
    if isinstance(accel, str):
        names = {accel.split(":")[0]}
    elif isinstance(accel, dict):
        names = set(accel)
    elif isinstance(accel, list):
        names = {a.split(":")[0] for a in accel}
    for alt in res.get("ordered", res.get("any_of", res.get("candidates", []))):
        a = alt.get("accelerators")
        if a:
            names.add(a.split(":")[0])
    infra = str(res.get("infra", res.get("cloud", "")) or "").split("/")[0].lower()
    return {"gpus": names, "cloud": infra, "spot": bool(res.get("use_spot")),
            "cpus": res.get("cpus"), "memory": res.get("memory"),
            "instance_type": res.get("instance_type")}


def _spelled(name: str) -> str:
    from costsched.catalog import gpu_model_name

    try:
        return gpu_model_name(name)
    except InvalidInput:
        return name


def _enough(have: float, asked: object, vcpus: float = 0) -> bool:
    """`have` is what `asked` asks: at least N (N+), at least N per vCPU (Nx), or exactly N
    or, where the catalog has no machine of exactly N, the nearest above."""
    if asked is None:
        return True
    text = str(asked)
    if text.endswith("x"):
        return have >= float(text[:-1]) * vcpus
    return have >= float(text.rstrip("+"))


def test_a_corpus_of_task_files_plans_with_what_each_asks(tmp_path: Path) -> None:
    from costsched import catalog

    planned, refused = [], {}
    files = sorted(CORPUS.glob("*.yaml"))
    assert len(files) >= 40
    for path in files:
        try:
            result = service.plan(str(tmp_path / "empty.sqlite"), path, at=NOW)
        except InvalidInput as exc:
            message = str(exc)
            assert "\n" not in message and message.startswith(str(path)), message
            refused[path.name] = message
            continue
        best = result.jobs[0].best
        assert best is not None, (path.name, result.jobs[0].reason)
        asked = _asked(yaml.safe_load(path.read_text()))
        row = catalog.lookup(best["cloud"], best["instance_type"])
        if asked["gpus"]:
            named = {_spelled(g) for g in asked["gpus"]}  # the clouds' names, as the catalog's
            assert best["gpu_model"] in named and best["gpu_count"] >= 1, path.name
        elif not asked["instance_type"]:
            assert best["gpu_count"] == 0, f"{path.name}: a CPU task planned on a GPU"
        if asked["instance_type"]:
            assert best["instance_type"].split("+")[0] == asked["instance_type"], path.name
        assert not asked["cloud"] or best["cloud"] == asked["cloud"], path.name
        assert (best["market"] == "spot") == asked["spot"], path.name
        assert _enough(row["vcpus"], asked["cpus"]), path.name
        assert _enough(row["memory_gb"], asked["memory"], row["vcpus"]), path.name
        planned.append(path.name)
    batch = [f.name for f in files if f.name not in NOT_BATCH]
    share = len([p for p in planned if p in batch]) / len(batch)
    # Exact sizes the catalog's few CPU families lack (cpus: 8 on GCP, 2 vCPUs with 8 GB)
    # are the catalog's coverage, not the reading's: counted apart, and said.
    gaps = [n for n, m in refused.items() if "instance type of the catalog" in m]
    print(f"corpus: {len(planned)} of {len(batch)} batch tasks planned "
          f"({share:.0%}), {len(gaps)} more refused for a size the catalog lacks "
          f"({sorted(gaps)}); refused: {sorted(refused)}")
    assert share >= 0.8 and (len(planned) + len(gaps)) / len(batch) >= 0.9
    assert set(refused) >= NOT_BATCH
    assert MULTINODE in planned
    for name in refused:  # each refusal names the SkyPilot feature
        assert any(w in refused[name] for w in ("not supported yet", "`sky", "costsched runs",
                                                 "instance type of the catalog")), refused[name]


def test_a_task_without_accelerators_is_planned_on_a_cpu_instance(tmp_path: Path) -> None:
    from costsched import catalog

    spec = task("resources: {infra: aws}\nrun: python prep.py")
    assert spec.reference_gpu == "CPU" and spec.hours == DEFAULT_HOURS
    types = [catalog.lookup("aws", t) for t in spec.constraints.instance_types]
    assert types and all(t["gpu_count"] == 0 and t["vcpus"] >= 8 for t in types)  # 8+ vCPUs
    result = service.plan(str(tmp_path / "empty.sqlite"), spec, at=NOW)
    ranking = result.jobs[0].choices
    assert len(ranking) and (ranking["gpu_count"] == 0).all()
    best = result.jobs[0].best
    assert best["instance_type"] in spec.constraints.instance_types
    assert best["expected_hours"] == pytest.approx(1)
    # the work is an hour on any CPU type: the cheapest hour wins
    assert best["expected_cost"] == pytest.approx(ranking["usd_per_hour"].min())
    wide = task("resources: {cpus: 16+, memory: 100+}\ncostsched: {hours: 2}\nrun: x")
    for cloud_type in wide.constraints.instance_types:
        row = next(r for r in (catalog.lookup(c, cloud_type) for c in ("aws", "gcp", "azure"))
                   if r is not None)
        assert row["gpu_count"] == 0 and row["vcpus"] >= 16 and row["memory_gb"] >= 100
    assert wide.constraints.instance_types


def test_a_cpu_job_is_never_ranked_on_a_gpu_even_without_type_limits() -> None:
    from costsched.jobspec import resolve
    from costsched.optimize.planner import plan_job, prepare
    from costsched.throughput import ThroughputTable

    spec = task("resources: {cpus: 8}\nrun: x")
    spec = spec.model_copy(update={"constraints": spec.constraints.model_copy(
        update={"instance_types": []})})  # the throughput alone keeps it off GPUs
    job = resolve(spec, ThroughputTable.load(), NOW)
    plan = plan_job(job, prepare(prices_at(None, NOW, include_cpu=True)))
    assert len(plan.choices) and (plan.choices["gpu_count"] == 0).all()
    gpu_rows = plan.ranked[(plan.ranked["gpu_count"] > 0)
                           & (plan.ranked["market"] == "on_demand")]
    # (GCP's other N1 sizes than a GPU's default host are left out before its speed is read)
    hosts = gpu_rows["excluded"] == OTHER_HOST
    assert (hosts == other_hosts(gpu_rows["instance_type"])).all()
    assert (gpu_rows["excluded"][~hosts] == "no throughput").all()
    assert plan.baseline is None  # no V100 yardstick for CPU work


def test_placement_neutral_fields_are_kept_and_emitted() -> None:
    text = (CORPUS / "09-mounts.yaml").read_text().replace(
        "  use_spot: true\n", "  use_spot: true\n  ports: [8080, '9000-9005']\n"
        "  disk_size: 200\n  disk_tier: high\n  image_id: ami-0abc\n  labels: {team: a}\n"
        "  network_tier: best\n  autostop: 10\n")
    spec = task(text)
    t = spec.task
    assert t.ports == ["8080", "9000-9005"] and t.disk_size == 200 and t.disk_tier == "high"
    assert t.image_id == "ami-0abc" and t.labels == {"team": "a"} and t.autostop == 10
    assert spec.checkpoint.location == "s3://team-ckpts"  # ${BUCKET} filled from envs
    assert t.checkpoint_mount == "/checkpoint"
    assert [(m.path, m.source, m.mode) for m in t.mounts][:1] == [
        ("/dataset", "s3://public-datasets/imagenet", "COPY")]
    assert any("checkpoints go to s3://team-ckpts (the one writable bucket mount" in n
               for n in t.notes)
    offering = {"cloud": "aws", "region": "us-east-1", "zone": "", "market": "spot",
                "instance_type": "p3.2xlarge", "gpu_model": "V100", "gpu_count": 1}
    emitted = yaml.safe_load(emit_task(spec, offering))
    r = emitted["resources"]
    assert (r["ports"], r["disk_size"], r["image_id"], r["labels"]) == (
        ["8080", "9000-9005"], 200, "ami-0abc", {"team": "a"})
    assert emitted["file_mounts"]["/checkpoint"] == {"source": "s3://team-ckpts",
                                                     "mode": "MOUNT"}
    back = parse_task(emitted, "pinned.yaml")
    # pinned to aws, its data bucket limits nothing more: no note, no limit (and its place
    # is written as infra, where the task wrote nothing)
    kept = {"notes", "mounts", "limits", "filter_keys"}
    assert back.task.model_dump(exclude=kept) == t.model_dump(exclude=kept)
    assert back.task.filter_keys["regions"] == "resources.infra"
    assert back.checkpoint.location == spec.checkpoint.location


def test_secrets_and_value_less_envs_are_names_until_launch() -> None:
    spec = task((CORPUS / "08-secret-envs.yaml").read_text())
    assert spec.task.secrets == ["HF_TOKEN"] and spec.task.launch_envs == ["WANDB_PROJECT"]
    assert "HF_TOKEN" not in spec.envs and "WANDB_PROJECT" not in spec.envs
    given = parse_task(yaml.safe_load((CORPUS / "08-secret-envs.yaml").read_text()),
                       "task.yaml", "t", {"WANDB_PROJECT": "p1", "MODEL_NAME": "gpt2"})
    assert given.envs == {"MODEL_NAME": "gpt2", "WANDB_PROJECT": "p1"}
    assert given.task.launch_envs == []



def test_an_env_given_at_launch_that_the_task_has_not_is_added_as_sky_launch_does() -> None:
    task_doc = {"envs": {"EPOCHS": 1}, "run": "x", "resources": {"accelerators": "V100"}}
    spec = parse_task(task_doc, "task.yaml", "t", {"KM_DELAY": "0.1", "EPOCHS": "3"})
    assert spec.envs == {"EPOCHS": "3", "KM_DELAY": "0.1"}


def test_a_launch_env_close_to_a_tasks_env_is_refused_only_where_that_one_has_no_value(
        ) -> None:
    """EPOCS beside an EPOCHS left without a value: the launch cannot go on without it, and
    the line names it; beside an EPOCHS of the file's, EPOCS is added with a note (as
    `sky launch` adds it), EPOCHS keeping its value."""
    task = {"envs": {"EPOCHS": None}, "run": "x", "resources": {"accelerators": "V100"}}
    with pytest.raises(InvalidInput) as caught:
        parse_task(task, "task.yaml", "t", {"EPOCS": "3"})
    assert str(caught.value) == (
        "task.yaml: field envs.EPOCHS is given no value, and --env gives 'EPOCS', which the "
        "task has not; did you mean 'EPOCHS'? (--env EPOCHS=VALUE gives it)")
    spec = parse_task({**task, "envs": {"EPOCHS": 1}}, "task.yaml", "t", {"EPOCS": "3"})
    assert spec.envs == {"EPOCHS": "1", "EPOCS": "3"}
    assert ("--env EPOCS adds an env the task has not, beside its env EPOCHS, which keeps "
            "its own value (--env EPOCHS=VALUE gives that one)" in spec.task.notes)


@pytest.mark.parametrize("value, held", [("hf_written_in_the_file", "hf_written_in_the_file"),
                                         (12345, "12345")])
def test_a_secrets_value_written_in_the_file_is_its_default_never_stored(
        value: object, held: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """As SkyPilot: a value the file writes is the secret's where --secret gives none
    (--secret first); it is held in memory for the launch, never in the stored spec."""
    from costsched import launch_secrets
    from costsched.service import jobs as job_service
    from costsched.store import PriceStore
    from tests.costsched.migration.test_edges import FakeLauncher
    from tests.costsched.service.test_jobs import set_prices

    parsed = parse_task({"run": "x", "resources": {"accelerators": "V100"},
                         "secrets": {"TOKEN": value, "HF_TOKEN": None}}, "task.yaml")
    assert parsed.task.secrets == ["TOKEN", "HF_TOKEN"]
    assert parsed.task.written_secrets == {"TOKEN": held}
    assert "written_secrets" not in json.dumps(parsed.model_dump(mode="json"))
    assert "at launch, give --secret HF_TOKEN" in parsed.task.notes  # TOKEN has its value

    store = PriceStore(str(tmp_path / "store.sqlite"))
    set_prices(store, {"us-east-1a": 1.0}, NOW - timedelta(hours=1))
    monkeypatch.setattr(launch_secrets, "_GIVEN", {})
    path = tmp_path / "task.yaml"
    path.write_text(yaml.safe_dump({
        "name": "written", "run": "true", "secrets": {"TOKEN": value, "HF_TOKEN": None},
        "resources": {"infra": "aws/us-east-1", "accelerators": "V100:1", "use_spot": True},
        "costsched": {"hours": 1}}))
    launcher = FakeLauncher()
    [job] = job_service.launch(store, path, launcher=launcher, at=NOW,
                               checkpoint_root=str(tmp_path / "ckpt"),
                               secrets={"HF_TOKEN": "hf_given"})
    assert launch_secrets._GIVEN[job.id] == {"TOKEN": held, "HF_TOKEN": "hf_given"}
    second = tmp_path / "other.yaml"
    second.write_text(path.read_text().replace("name: written", "name: other"))
    [other] = job_service.launch(store, second, launcher=launcher, at=NOW,
                                 checkpoint_root=str(tmp_path / "ckpt"),
                                 secrets={"HF_TOKEN": "hf_given", "TOKEN": "tok_given"})
    assert launch_secrets._GIVEN[other.id]["TOKEN"] == "tok_given"  # --secret first
    store.dispose()
    stored = b"".join(f.read_bytes() for f in tmp_path.glob("store.sqlite*"))
    assert held.encode() not in stored and b"written_secrets" not in stored


def test_an_unknown_member_of_a_set_is_dropped_with_a_note() -> None:
    spec = task((CORPUS / "04-any-gpu.yaml").read_text())
    assert set(spec.constraints.gpu_models) == {"A10G", "L4"}
    assert spec.task.notes == ["resources.accelerators: L40:1 dropped: the catalog has no "
                               "instance type with it; did you mean 'L40S:1'? (`costsched "
                               "gpus` lists them)"]


def test_ordered_is_honoured_and_plan_says_what_the_order_costs(tmp_path: Path) -> None:
    from costsched.optimize.planner import order_cost

    result = service.plan(str(tmp_path / "empty.sqlite"), CORPUS / "07-ordered.yaml", at=NOW)
    plan = result.jobs[0]
    assert plan.best["gpu_model"] == "V100"  # the first alternative, though T4 is cheaper
    cheapest = plan.choices.loc[plan.choices["expected_cost"].idxmin()]
    assert cheapest["gpu_model"] == "T4"
    note = order_cost(plan)
    assert note.startswith("ordered: alternative 1 (aws us-east-1") and "more than the " \
        "cheapest choice (aws us-east-1" in note
    from costsched.cli.plan_json import job_notes

    # What the text and --json list alike, its figures marked where they rest on an
    # estimated speed (the V100's here: the unit is the slower T4), as the table's are.
    marked = order_cost(plan, lambda row: "*" if row["throughput_estimated"] else "")
    assert marked in job_notes(plan) and marked.endswith(", $0.1909)")
    assert "costs $0.3023* per hour of work on 1xT4" in marked
    unordered = service.plan(str(tmp_path / "empty.sqlite"), task(
        (CORPUS / "07-ordered.yaml").read_text().replace("ordered:", "any_of:")), at=NOW)
    assert unordered.jobs[0].best["gpu_model"] == "T4"


def test_plan_json_says_what_the_order_costs_as_the_text_does(cli) -> None:  # noqa: ANN001
    text = cli("plan", str(CORPUS / "07-ordered.yaml"), "--at", NOW.isoformat())
    shown = cli("plan", str(CORPUS / "07-ordered.yaml"), "--at", NOW.isoformat(), "--json")
    assert text.exit_code == shown.exit_code == 0, (text.output, shown.output)
    [note] = [n for n in json.loads(shown.stdout)["jobs"][0]["notes"]
              if n.startswith("ordered: ")]
    assert "more than the cheapest choice" in note
    assert note in " ".join(text.output.split())


def test_a_skypilot_pipeline_is_refused_in_one_line() -> None:
    with pytest.raises(InvalidInput, match=r"3 YAML documents: a SkyPilot pipeline; costsched "
                                           r"runs one task per file \(`sky jobs launch`"):
        load(CORPUS / "42-pipeline.yaml")


def test_twenty_thousand_nested_brackets_are_one_line(tmp_path: Path) -> None:
    path = tmp_path / "deep.yaml"
    path.write_text("run: x\nresources: " + "[" * 20_000 + "]" * 20_000 + "\n")
    with pytest.raises(InvalidInput) as info:
        load(path)
    assert str(info.value).startswith(f"{path}") and "nested" in str(info.value)


def test_a_list_of_accelerators_is_tried_in_its_order_as_skypilot_does(tmp_path: Path) -> None:
    listed = service.plan(str(tmp_path / "empty.sqlite"), task(
        "resources:\n  accelerators: [V100:1, T4:1]\n  use_spot: true\n"
        "  infra: aws/us-east-1\nrun: x"), at=NOW).jobs[0]
    assert listed.best["gpu_model"] == "V100"  # the first item, though T4 is cheaper
    assert listed.choices.loc[listed.choices["expected_cost"].idxmin()]["gpu_model"] == "T4"
    spec = task("resources:\n  accelerators: [V100:1, T4:1]\nrun: x")
    assert [o["instance_types"][:1] for o in spec.task.order][0] == ["aws/p3.2xlarge"]
    assert any("tried in its order, as SkyPilot does" in n for n in spec.task.notes)
    as_set = service.plan(str(tmp_path / "empty.sqlite"), task(
        "resources:\n  accelerators: {V100: 1, T4: 1}\n  use_spot: true\n"
        "  infra: aws/us-east-1\nrun: x"), at=NOW).jobs[0]
    assert as_set.best["gpu_model"] == "T4" and not task(
        "resources:\n  accelerators: {V100: 1, T4: 1}\nrun: x").task.order
    beside = task("resources:\n  accelerators: [A10G:1, L4:1]\n  any_of:\n"
                  "    - infra: aws/us-east-1\n    - infra: gcp/us-central1\nrun: x")
    assert not beside.task.order and any("not tried in the list's order" in n
                                         for n in beside.task.notes)


def test_a_mistyped_item_of_an_accelerator_list_is_named_as_written() -> None:
    message = refusal("resources:\n  accelerators: [V100:1, V10O:1]\nrun: x")
    assert message.startswith("task.yaml: field resources.accelerators: 'V10O'")
    assert "did you mean 'V100:1'" in message


def test_a_tasks_section_names_a_budget_as_a_job_file_does(tmp_path: Path) -> None:
    """`costsched: {budget_name: vision}` joins the named budget, as a job file's
    `constraints.budget_name` does (it was refused with "did you mean 'budget'?")."""
    doc = {"name": "t", "resources": {"accelerators": "V100:1"}, "run": "python x.py",
           "costsched": {"budget_name": "vision", "budget": 5, "at_cap": "move"}}
    spec = parse_task(doc, str(tmp_path / "sky.yaml"), "t")
    assert spec.constraints.budget_name == "vision"
    assert (spec.constraints.budget, spec.constraints.at_cap) == (5, "move")
