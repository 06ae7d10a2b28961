"""SkyPilot task files read as they are, refused field by field, and written pinned to a
decision (read back to the same placement)."""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path

import pytest
import yaml

from costsched import service
from costsched.jobspec import load
from costsched.model import InvalidInput
from costsched.optimize.rank import allowed_offerings
from costsched.prices import prices_at
from costsched.skypilot import DEFAULT_HOURS, emit_task, parse_task

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "sky"
NOW = datetime(2026, 11, 1, tzinfo=timezone.utc)


def task(text: str, name: str = "t"):  # noqa: ANN201
    return parse_task(yaml.safe_load(text), "task.yaml", name)


def refusal(text: str) -> str:
    with pytest.raises(InvalidInput) as info:
        task(text)
    message = str(info.value)
    assert "\n" not in message and message.startswith("task.yaml: field ")
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
    assert spec.hours == DEFAULT_HOURS  # the default work: an hour on the first GPU named
    assert spec.reference_gpu == ("A100:8" if "!!set" in accelerators or "{'" in accelerators
                                  else "V100:1")


def test_location_by_infra_or_by_cloud_region_zone() -> None:
    a = task("resources: {infra: aws/us-east-1/us-east-1b, accelerators: V100}\nrun: x")
    b = task("resources: {cloud: AWS, region: us-east-1, zone: us-east-1b, "
             "accelerators: V100}\nrun: x")
    assert a.constraints == b.constraints
    assert a.constraints.zones == ["us-east-1b"] and a.constraints.clouds == ["aws"]
    assert a.constraints.markets == ["on_demand"]  # SkyPilot's default without use_spot


def test_any_of_alternatives_that_differ_in_place() -> None:
    (spec,) = load(EXAMPLES / "anywhere.yaml")
    c = spec.constraints
    assert c.clouds == ["aws", "gcp"] and c.regions == ["us-central1", "us-east-1"]
    assert "g2-standard-4" in c.instance_types and "g5.xlarge" in c.instance_types


def test_alternatives_whose_union_would_allow_more_are_refused() -> None:
    message = refusal("resources:\n  ordered:\n"
                      "    - {infra: aws/us-east-1, accelerators: V100:1, use_spot: true}\n"
                      "    - {infra: aws/us-west-2, accelerators: T4:1}\nrun: x")
    assert "resources.ordered" in message and "none of them names" in message


def test_a_bucket_mount_is_the_checkpoint_location() -> None:
    (spec,) = load(EXAMPLES / "pinned.yaml")
    assert spec.checkpoint.location == "s3://my-team-checkpoints/llm-eval"
    assert spec.constraints.instance_types == ["g5.12xlarge"]
    spec = task("file_mounts:\n  /ckpt: {name: my-bucket, store: gcs}\nrun: x")
    assert spec.checkpoint.location == "gs://my-bucket"


@pytest.mark.parametrize(("text", "field"), [
    ("num_nodes: 2\nrun: x", "num_nodes"),
    ("resources: {ports: 8080}\nrun: x", "resources.ports"),
    ("resources: {accelerators: V100, disk_size: 512}\nrun: x", "resources.disk_size"),
    ("service: {replicas: 2}\nrun: x", "service"),
    ("secrets: {HF_TOKEN: null}\nrun: x", "secrets"),
    ("file_mounts: {/data: ./data}\nrun: x", "file_mounts./data"),
    ("file_mounts: {/a: s3://a, /b: s3://b}\nrun: x", "file_mounts"),
    ("resources: {job_recovery: {strategy: FAILOVER, max_restarts_on_errors: 3}}\nrun: x",
     "resources.job_recovery.max_restarts_on_errors"),
    ("resources: {job_recovery: SOMETIMES}\nrun: x", "resources.job_recovery"),
    ("resources: {accelerators: TPU-v4:8}\nrun: x", "resources.accelerators"),
    ("resources: {infra: lambda}\nrun: x", "resources.infra"),
    ("resources: {cloud: aws, region: us-central1}\nrun: x", "resources.region"),
    ("resources: {cloud: aws, instance_type: m5.large}\nrun: x", "resources.instance_type"),
    ("envs: {HF_TOKEN: null}\nrun: x", "envs.HF_TOKEN"),
    ("costsched: {steps: 10, gpu: V100}\nrun: x", "costsched.gpu"),
    ("resources: {use_spot: true}\ncostsched: {markets: [spot]}\nrun: x", "costsched.markets"),
])
def test_what_costsched_cannot_honour_is_refused_naming_the_field(text: str, field: str) -> None:
    assert refusal(text).startswith(f"task.yaml: field {field}: ")


def test_a_refused_task_file_is_one_line_naming_the_file(tmp_path: Path) -> None:
    path = tmp_path / "multi.yaml"
    path.write_text("name: big\nnum_nodes: 4\nresources: {accelerators: A100:8}\nrun: x\n")
    with pytest.raises(InvalidInput, match=rf"^{path}: field num_nodes: 4: costsched runs"):
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
    assert emitted["envs"] == spec.envs and emitted["workdir"] == spec.workdir
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


def test_a_fresh_install_plans_a_spot_job_and_says_how_old_its_prices_are(cli) -> None:  # noqa: ANN001
    # (--top 5: the bundled L40S spot offerings, estimated faster, now rank above the V100)
    result = cli("plan", EXAMPLES.parent / "resnet50.yaml", "--top", "5", "--at", "2026-11-01")
    assert result.exit_code == 0, result.output  # was: no offering has market spot
    assert "us-east-1 p3.2xlarge spot" in result.stdout
    assert "prices are older than 7.0 days (the oldest from 2025-05-01" in " ".join(
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
