"""SkyPilot task fields as SkyPilot reads them: cpus and memory, older field names,
accelerator aliases, Docker images, alternatives on other clouds, services, and the close
names offered for a typo."""

from __future__ import annotations

import pytest
import yaml

from costsched import catalog
from costsched.model import InvalidInput
from costsched.skypilot import parse_task


def task(text: str):  # noqa: ANN201
    return parse_task(yaml.safe_load(text), "task.yaml", "t")


def rows(spec) -> list[dict]:  # noqa: ANN001
    found = [catalog.lookup(c, t) for t in spec.constraints.instance_types
             for c in ("aws", "gcp", "azure")]
    return [r for r in found if r is not None]


def refusal(text: str) -> str:
    with pytest.raises(InvalidInput) as info:
        task(text)
    message = str(info.value)
    assert "\n" not in message and message.startswith("task.yaml: field ")
    return message


def test_cpus_exactly_at_least_and_the_nearest_above() -> None:
    four = rows(task("resources: {cpus: 4}\nrun: x"))
    assert four and {r["vcpus"] for r in four} == {4}  # m6i.xlarge, n2-standard-4, D4s_v5...
    assert {"m6i.xlarge", "n2-standard-4", "Standard_D4s_v5"} <= {r["instance_type"]
                                                                   for r in four}
    more = rows(task("resources: {cpus: 4+}\nrun: x"))
    assert min(r["vcpus"] for r in more) == 4 and max(r["vcpus"] for r in more) > 4
    one = task("resources: {cpus: 1}\nrun: x")  # no machine of 1 vCPU: the nearest above
    assert {r["vcpus"] for r in rows(one)} == {2}
    assert ("resources.cpus: 1: no instance type of the catalog has exactly 1 vCPUs; the "
            "nearest above, 2 vCPUs, is planned") in one.task.notes


def test_a_cpu_task_gets_four_gb_per_vcpu_unless_it_says_its_memory() -> None:
    default = rows(task("resources: {cpus: 8}\nrun: x"))
    assert default and all(r["memory_gb"] >= 4 * r["vcpus"] for r in default)
    assert "c6i.2xlarge" not in {r["instance_type"] for r in default}  # 2 GB per vCPU
    lean = rows(task("resources: {cpus: 8, memory: 16}\nrun: x"))
    assert {r["instance_type"] for r in lean} >= {"c6i.2xlarge"}
    rich = rows(task("resources: {cpus: 4+, memory: 7x}\nrun: x"))
    assert rich and all(r["memory_gb"] >= 7 * r["vcpus"] for r in rich)
    assert "field resources.cpus: '4x': expected a number of vCPUs" in refusal(
        "resources: {cpus: 4x}\nrun: x")  # per vCPU is memory's form only


def test_a_cpu_type_named_directly_is_a_cpu_job() -> None:
    spec = task("resources: {instance_type: m5.8xlarge}\nrun: x")
    assert spec.reference_gpu == "CPU" and spec.constraints.instance_types == ["m5.8xlarge"]
    assert "did you mean 'm5.8xlarge'" in refusal(
        "resources: {instance_type: m5.8xlarg}\nrun: x")


def test_older_field_names_are_read_with_a_note() -> None:
    spec = task("resources: {accelerators: V100, spot_recovery: FAILOVER}\nrun: x")
    assert "resources.spot_recovery: read as job_recovery (its newer name)" in spec.task.notes
    refusal_text = refusal("resources: {spot_recovery: SOMETIMES}\nrun: x")
    assert "resources.job_recovery" in refusal_text and "FAILOVER" in refusal_text
    alts = task("resources:\n  candidates:\n  - {accelerators: T4}\n  - {accelerators: V100}"
                "\nrun: x")
    assert set(alts.constraints.gpu_models) == {"T4", "V100"}
    assert "resources.candidates: read as any_of (its newer name)" in alts.task.notes
    old = task("inputs: {s3://in: 10}\noutputs: {s3://out: 1}\n"
               "resources: {accelerators: V100}\nrun: x")
    assert any(n.startswith("inputs: not used") for n in old.task.notes)
    assert any(n.startswith("outputs: not used") for n in old.task.notes)


def test_a_service_task_is_one_job_as_sky_launch_runs_it() -> None:
    spec = task("service: {replicas: 2, readiness_probe: /}\n"
                "resources: {accelerators: L4:1, ports: 8000}\nrun: vllm serve m")
    assert spec.constraints.gpu_models == ["L4"] and spec.task.ports == ["8000"]
    assert spec.task.notes[0] == ("service: not used: costsched runs the task as one job, as "
                                  "`sky launch` does (`sky serve up` serves it with replicas)")


@pytest.mark.parametrize(("name", "model"), [
    ("A100-40GB", "A100"), ("a100-80gb", "A100-80GB"), ("nvidia-tesla-t4", "T4"),
    ("NVIDIA-H100-80GB-HBM3", "H100"), ("nvidia-l4", "L4"), ("A10g", "A10G")])
def test_accelerator_aliases(name: str, model: str) -> None:
    assert task(f"resources: {{accelerators: '{name}:1'}}\nrun: x").constraints.gpu_models == [
        model]


@pytest.mark.parametrize(("text", "close"), [
    ("resources: {accelerators: V10O}\nrun: x", "did you mean 'V100:1'"),
    ("resources: {accelerators: A100s:8}\nrun: x", "'A100:8'"),
    ("resources: {accelerators: T-4:1}\nrun: x", "; did you mean 'T4:1'? (`costsched gpus`"),
    ("resources: {accelerators: l4x2}\nrun: x", "; did you mean 'L4:2'? (a count is written "
                                                "MODEL:COUNT;"),
    ("resource: {accelerators: V100}\nrun: x", "did you mean 'resources'"),
    ("resources: {accelerators: V100, use-spot: true}\nrun: x", "did you mean 'use_spot'"),
    ("setpu: pip install x\nrun: x", "did you mean 'setup'"),
])
def test_a_typo_gets_the_close_names(text: str, close: str) -> None:
    assert close in refusal(text)


@pytest.mark.parametrize("text", [
    "resources: {accelerators: V100}\nimage_id: docker:python:3.11-slim\nrun: x",
    "accelerators: V100:1\nrun: x",
    "use_spot: true\nresources: {accelerators: V100}\nrun: x",
])
def test_a_resources_field_at_the_tasks_top_is_sent_under_resources(text: str) -> None:
    key = next(line.split(":")[0] for line in text.splitlines()
               if not line.startswith(("resources", "run")))
    assert (f"field {key}: a field of resources, not of the task: write it under "
            f"resources: (resources: {{{key}: ...}})") in refusal(text)


@pytest.mark.parametrize(("value", "said"), [("maybe", "'maybe'"), ("1", "1"), ("", "null")])
def test_a_use_spot_that_is_no_boolean_is_echoed(value: str, said: str) -> None:
    assert refusal(f"resources: {{accelerators: V100, use_spot: {value}}}\nrun: x").endswith(
        f"field resources.use_spot: {said}: expected true or false")


def test_a_docker_image_is_kept_for_the_launchers() -> None:
    spec = task("resources: {accelerators: V100, image_id: 'docker:nvcr.io/nvidia/pytorch:"
                "24.07-py3'}\nrun: x")
    assert spec.task.image_id == "docker:nvcr.io/nvidia/pytorch:24.07-py3"
    assert spec.task.docker_image == "nvcr.io/nvidia/pytorch:24.07-py3"
    assert task("resources: {accelerators: V100, image_id: ami-1}\nrun: x"
                ).task.docker_image == ""


def test_a_registry_password_is_a_secret() -> None:
    spec = task("resources: {accelerators: V100, image_id: 'docker:r.example.com/a:1'}\n"
                "envs: {SKYPILOT_DOCKER_USERNAME: robot, SKYPILOT_DOCKER_PASSWORD: null,"
                " SKYPILOT_DOCKER_SERVER: r.example.com}\nrun: x")
    assert spec.task.secrets == ["SKYPILOT_DOCKER_PASSWORD"]
    assert "SKYPILOT_DOCKER_PASSWORD" not in spec.task.launch_envs
    assert spec.envs == {"SKYPILOT_DOCKER_USERNAME": "robot",
                         "SKYPILOT_DOCKER_SERVER": "r.example.com"}
    assert any("taken as a secret" in n for n in spec.task.notes)


def test_alternatives_on_other_clouds_are_dropped_and_an_image_kept_per_cloud() -> None:
    spec = task("resources:\n  accelerators: A100:8\n  any_of:\n"
                "    - {cloud: gcp, image_id: projects/p/global/images/ubuntu}\n"
                "    - {cloud: aws}\n    - {cloud: lambda}\n    - {cloud: kubernetes}\n"
                "run: x")
    assert spec.constraints.clouds == ["aws", "gcp"]
    assert spec.task.image_id == {"gcp": "projects/p/global/images/ubuntu"}
    dropped = [n for n in spec.task.notes if "alternative dropped" in n]
    assert len(dropped) == 2 and "'lambda'" in dropped[0] and "`sky launch`" in dropped[0]
    from launchers.task_resources import image

    assert image(spec.task.model_dump(), "us-central1", "gcp") == \
        "projects/p/global/images/ubuntu"
    assert image(spec.task.model_dump(), "us-east-1", "aws") == ""  # the launcher's own
    assert image({"image_id": "docker:ubuntu:20.04"}, "us-east-1", "aws") == ""


def test_skypilots_own_image_tags_leave_the_launchers_image() -> None:
    spec = task("resources:\n  accelerators: T4:1\n  image_id:\n"
                "    us-east-1: skypilot:gpu-ubuntu-1804\n    us-west-2: ami-0abc\nrun: x")
    assert spec.task.image_id == {"us-west-2": "ami-0abc"}
    assert ("resources.image_id: skypilot:gpu-ubuntu-1804: SkyPilot's own image tag; the "
            "launcher's own image is used") in spec.task.notes
    assert task("resources: {accelerators: T4, image_id: 'skypilot:gpu-ubuntu-2004'}\n"
                "run: x").task.image_id is None


@pytest.mark.parametrize("text", [
    "resources: {accelerators: {A100: 1, H10O: 1}}",
    "resources: {accelerators: [A100:1, H10O:1]}",
    "resources: {accelerators: A100:1, any_of: [{cloud: aws}, {accelerators: H10O:1}]}"])
def test_a_misspelt_name_in_a_set_or_list_is_refused_with_the_close_one(text: str) -> None:
    """A typo is refused as it is alone, never dropped: one line, the close name."""
    said = refusal(text + "\nrun: x")
    assert "'H10O': not an accelerator costsched knows" in said
    assert "; did you mean 'H100:1'? (`costsched gpus` lists" in said and "\n" not in said
    assert "expected one of" not in said  # the name meant, not every name


def test_a_known_gpu_without_a_catalog_type_is_still_dropped_from_a_set_with_a_note() -> None:
    spec = task("resources: {accelerators: {A10G: 1, L40: 1}}\nrun: x")
    assert spec.constraints.gpu_models == ["A10G"]
    assert spec.task.notes == ["resources.accelerators: L40:1 dropped: the catalog has no "
                               "instance type with it; did you mean 'L40S:1'? (`costsched "
                               "gpus` lists them)"]


def test_emit_keeps_a_docker_image_and_pins_a_per_cloud_image() -> None:
    from costsched.skypilot_emit import emit_task

    offering = {"cloud": "gcp", "region": "us-central1", "zone": "", "market": "spot",
                "instance_type": "a2-highgpu-8g", "gpu_model": "A100", "gpu_count": 8}
    spec = task("resources:\n  accelerators: A100:8\n  any_of:\n"
                "    - {cloud: gcp, image_id: projects/p/global/images/ubuntu}\n"
                "    - {cloud: aws}\nrun: x")
    emitted = yaml.safe_load(emit_task(spec, offering))
    assert emitted["resources"]["image_id"] == "projects/p/global/images/ubuntu"
    docker = task("resources: {accelerators: A100:8, image_id: 'docker:ubuntu:22.04'}\n"
                  "run: x")
    assert yaml.safe_load(emit_task(docker, offering))["resources"]["image_id"] == \
        "docker:ubuntu:22.04"
    aws = {**offering, "cloud": "aws", "region": "us-east-1", "instance_type": "p4d.24xlarge"}
    assert "image_id" not in yaml.safe_load(emit_task(spec, aws))["resources"]


def test_a_gpu_of_a_set_none_of_the_tasks_clouds_has_is_named_with_the_cloud() -> None:
    """{H100: 1, A100-80GB: 1} on aws: the catalog has 1xA100-80GB on gcp only; the set
    keeps H100:1 and says why A100-80GB:1 left it, not that the catalog lacks it."""
    spec = task("resources: {accelerators: {H100: 1, A100-80GB: 1}, infra: aws}\nrun: x")
    assert {r["gpu_model"] for r in rows(spec)} == {"H100"}
    assert ("resources.accelerators: A100-80GB:1 dropped: no instance type of the catalog "
            "on aws has it (on aws A100-80GB comes as 8 GPUs (p4de.24xlarge); A100-80GB:1 "
            "is offered on azure (Standard_NC24ads_A100_v4) and gcp (a2-ultragpu-1g))"
            ) in spec.task.notes
    both = task("resources: {accelerators: {H100: 1, A100-80GB: 1}}\nrun: x")
    assert not any("dropped" in n for n in both.task.notes)


def test_a_gpu_count_of_a_set_no_cloud_has_is_named_with_the_counts_there_are() -> None:
    """{A100-80GB: 3, H100: 1} on every cloud: no cloud has 3xA100-80GB; the set keeps
    H100:1 and says why A100-80GB:3 left it, with the counts the catalog has it at."""
    spec = task("resources: {accelerators: {A100-80GB: 3, H100: 1}, use_spot: true}\nrun: x")
    assert {r["gpu_model"] for r in rows(spec)} == {"H100"}
    [note] = [n for n in spec.task.notes if "A100-80GB" in n]
    assert note.startswith("resources.accelerators: A100-80GB:3 dropped: no instance type of "
                           "the catalog on any cloud has it (on aws A100-80GB comes as 8 GPUs "
                           "(p4de.24xlarge); "), note
    assert note.endswith("; on gcp A100-80GB comes as 1, 2, 4 or 8 GPUs)"), note


def test_emit_keeps_a_gangs_nodes_and_writes_buckets_as_skypilot_reads_them() -> None:
    from costsched.skypilot_emit import emit_task

    offering = {"cloud": "azure", "region": "eastus", "zone": "", "market": "spot",
                "instance_type": "Standard_NC24ads_A100_v4", "gpu_model": "A100-80GB",
                "gpu_count": 1}
    spec = task("num_nodes: 2\nresources: {accelerators: A100-80GB:1}\nfile_mounts:\n"
                "  /data: {source: az://corpus/v2, mode: MOUNT}\n"
                "  /ro: {source: 'az://b/p', mode: COPY}\nrun: x")
    emitted = yaml.safe_load(emit_task(spec, offering, bucket_source=lambda u: u.upper()))
    assert emitted["num_nodes"] == 2  # a gang pinned as a gang, never as one node
    assert emitted["file_mounts"] == {"/data": {"source": "AZ://CORPUS/V2", "mode": "MOUNT"},
                                      "/ro": {"source": "AZ://B/P", "mode": "COPY"}}
    back = parse_task(emitted, "pinned.yaml")
    assert back.num_nodes == 2
    assert "num_nodes" not in yaml.safe_load(emit_task(task("run: x"), offering))


def test_plan_emit_writes_an_az_container_as_its_accounts_url(
        cli, tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: ANN001
    path = tmp_path / "task.yaml"
    path.write_text("resources: {accelerators: A100-80GB:1, infra: azure}\n"
                    "file_mounts: {/data: az://corpus/v2}\nrun: python train.py\n")
    monkeypatch.delenv("AZURE_STORAGE_ACCOUNT", raising=False)
    refused = cli("plan", path, "--emit", "sky", "--at", "2026-11-01")
    assert refused.exit_code == 2
    assert "bucket 'az://corpus/v2': no storage account: set azure.storage_account" in \
        " ".join(refused.output.split())
    monkeypatch.setenv("AZURE_STORAGE_ACCOUNT", "mydata")
    result = cli("plan", path, "--emit", "sky", "--at", "2026-11-01")
    assert result.exit_code == 0, result.output
    assert yaml.safe_load(result.stdout)["file_mounts"] == {  # copied, as written
        "/data": "https://mydata.blob.core.windows.net/corpus/v2"}


@pytest.mark.parametrize(("resources", "field", "close"), [
    ("{infra: aws/us-east-9, accelerators: T4}", "resources.infra", "'us-east-1'"),
    ("{region: us-east-9, accelerators: T4}", "resources.region", "'us-east-1'"),
    ("{infra: aws/us-east-1/us-west-2a, accelerators: T4}", "resources.infra", ""),
    ("{accelerators: T4, job_recovery: {strategy: FAILOVR}}", "resources.job_recovery",
     "'FAILOVER'"),
    ("{accelerators: T4, job_recovery: eager_next_regoin}", "resources.job_recovery",
     "'EAGER_NEXT_REGION'"),
])
def test_a_mistyped_location_or_strategy_names_the_field_written_and_the_close_one(
        resources: str, field: str, close: str) -> None:
    message = refusal(f"resources: {resources}\nrun: x")
    assert message.startswith(f"task.yaml: field {field}: ")
    said = message.partition("; did you mean ")[2]
    assert close in said if close else not said


def test_a_workdir_url_is_refused_as_a_url_not_looked_for_as_a_folder() -> None:
    for url in ("https://github.com/me/digits.git", "git@github.com:me/digits.git"):
        message = refusal(f"workdir: {url}\nrun: x")
        assert message.startswith("task.yaml: field workdir: ") and "a URL" in message
        assert "no such directory" not in message


def test_an_env_given_at_launch_under_a_mistyped_name_gets_the_close_one() -> None:
    with pytest.raises(InvalidInput, match=r"^task.yaml: field envs.DATA_BUCKET is given no "
                       r"value, and --env gives 'DATABUCKET', which the task has not; did you "
                       r"mean 'DATA_BUCKET'\? \(--env DATA_BUCKET=VALUE gives it\)$"):
        parse_task(yaml.safe_load("envs: {STEPS: 1, DATA_BUCKET: }\nrun: x"), "task.yaml",
                   "t", {"DATABUCKET": "x"})


@pytest.mark.parametrize(("text", "field", "close"), [
    ("resources: {accelerators: T4, disk_tier: meduim}", "resources.disk_tier", "'medium'"),
    ("resources: {accelerators: T4, network_tier: bets}", "resources.network_tier", "'best'"),
    ("file_mounts: {/data: {source: s3://b/x, mode: MOUNTT}}", "file_mounts./data.mode",
     "'MOUNT'"),
    ("file_mounts: {/data: {sorce: s3://b/x}}", "file_mounts./data.sorce", "'source'"),
])
def test_a_mistyped_value_or_key_of_a_kept_field_gets_the_close_one(
        text: str, field: str, close: str) -> None:
    message = refusal(f"{text}\nrun: x")
    assert message.startswith(f"task.yaml: field {field}: ")
    assert close in message.partition("; did you mean ")[2]


def test_a_job_files_constraints_in_a_tasks_section_say_where_their_keys_go() -> None:
    from costsched.skypilot import parse_task

    with pytest.raises(InvalidInput) as caught:
        parse_task({"run": "x", "resources": {"accelerators": "V100"},
                    "costsched": {"hours": 1, "constraints": {"deadline": "2d"}}}, "t.yaml")
    assert str(caught.value) == (
        "t.yaml: field costsched.constraints: a job file's section: in a task, write its "
        "keys directly under costsched: (deadline, budget, budget_name, at_cap, max_price, "
        "max_migrations, "
        "markets; where it may run: under resources, as infra and accelerators)")
    written = parse_task({"run": "x", "resources": {"accelerators": "V100"},
                          "costsched": {"hours": 1, "deadline": "2d"}}, "t.yaml")
    assert written.constraints.deadline == 48


def test_a_secret_given_at_launch_is_added_to_the_task_once() -> None:
    """--secret for a name the task lists nowhere is the task's secret, as `sky launch
    --secret` adds it; the registry password SkyPilot's envs form lists stays one."""
    spec = parse_task(yaml.safe_load("envs: {SKYPILOT_DOCKER_PASSWORD: }\n"
                                     "secrets: {HF_TOKEN: }\nrun: x"), "task.yaml", "t",
                      given_secrets=["WANDB_API_KEY", "SKYPILOT_DOCKER_PASSWORD"])
    assert spec.task.secrets == ["HF_TOKEN", "SKYPILOT_DOCKER_PASSWORD", "WANDB_API_KEY"]
