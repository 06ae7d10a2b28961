"""A plan refused for its budget or deadline marks the cost or the hours that rest on an
estimated speed as the plan's table does (`*`), and says which key gives the measured figure;
one resting on given speeds is not marked. `--emit` suggests the closest value; `--emit sky`
of a job in costsched's own format says what the SkyPilot task leaves out; `--explain` says
what the work's hours are of and what a gang's nodes do to the price and the rate."""

from __future__ import annotations

import re
from pathlib import Path

import yaml

AT = "2026-11-01T00:00:00+00:00"


def _job(folder: Path, **fields: object) -> Path:
    path = folder / "job.yaml"
    path.write_text(yaml.safe_dump({"name": "fit", "run": "true", **fields}))
    return path


def _refusal(out) -> str:  # noqa: ANN001
    text = " ".join(out.stderr.split())
    [line] = re.findall(r"no plan: (.*?)(?=$| no plan:)", text)
    return line


def test_a_budget_refusal_on_an_estimated_speed_is_marked_and_names_the_key(
        cli, tmp_path: Path) -> None:  # noqa: ANN001
    """The A100's speed is estimated from the V100's: the cost and the shortfall rest on it."""
    job = _job(tmp_path, throughputs={"V100": 5.0}, steps=400_000,
               constraints={"gpu_models": ["A100"], "gpu_counts": [1], "budget": 1.0})
    out = cli("plan", job, "--at", AT)
    assert out.exit_code == 1, out.output
    line = _refusal(out)
    assert re.search(r"budget \$1\.00 is \$[\d.,]+\* short: .* costs \$[\d.,]+\* \([^;]+ h of work "
                     r"at \$[\d.]+/h; \* from an estimated speed on 1xA100", line), line
    assert "`throughputs: {A100: STEPS_PER_S}` in " in line and str(job.name) in line, line


def test_a_budget_refusal_on_given_speeds_is_not_marked(cli, tmp_path: Path) -> None:  # noqa: ANN001
    job = _job(tmp_path, throughputs={"V100": 5.0, "A100": 10.0}, steps=400_000,
               constraints={"gpu_models": ["A100"], "gpu_counts": [1], "budget": 1.0})
    out = cli("plan", job, "--at", AT)
    line = _refusal(out)
    assert "short:" in line and "*" not in line and "estimated" not in line, line


def test_estimated_steps_mark_the_refusal_and_name_the_reference(
        cli, tmp_path: Path) -> None:  # noqa: ANN001
    """2 h of work on a T4, whose speed is estimated: every figure rests on those steps."""
    job = _job(tmp_path, throughputs={"A100": 10.0, "V100": 5.0}, hours=200,
               reference_gpu="T4",
               constraints={"gpu_models": ["A100"], "gpu_counts": [1], "budget": 1.0})
    line = _refusal(cli("plan", job, "--at", AT))
    assert re.search(r"costs \$[\d.,]+\* \([^;]+ h of work at \$[\d.]+/h; \* from the "
                     r"steps of 200 h of work on 1xT4 at an estimated speed", line), line
    assert "`throughputs: {T4: STEPS_PER_S}`" in line, line


def test_a_deadline_refusal_on_an_estimated_speed_is_marked(cli, tmp_path: Path,
                                                            cloud_launcher: str) -> None:  # noqa: ANN001
    job = _job(tmp_path, throughputs={"V100": 5.0}, steps=2_000_000,
               constraints={"gpu_models": ["A100"], "gpu_counts": [1], "deadline": "10h"})
    line = _refusal(cli("plan", job, "--at", AT))
    assert re.search(r"needs [\d.,]+\* h \([\d.,]+\* h to run and [\d.]+ h to start\) \(\* "
                     r"from an estimated speed on 1xA100", line), line
    given = _job(tmp_path, throughputs={"V100": 5.0, "A100": 10.0}, steps=2_000_000,
                 constraints={"gpu_models": ["A100"], "gpu_counts": [1], "deadline": "10h"})
    # The fastest it allows rests on its given speed: unmarked. An offering its count
    # leaves out (8xA100, whose speed the file does not give) is marked, with its note.
    fastest, _, left_out = _refusal(cli("plan", given, "--at", AT)).partition(", or ")
    assert "*" not in fastest, fastest
    assert "*" not in left_out or "(* from an estimated speed on 8xA100" in left_out, left_out


def test_emit_suggests_the_closest_value(cli, tmp_path: Path) -> None:  # noqa: ANN001
    job = _job(tmp_path, model="ResNet-50 (batch size 64)", steps=2000)
    out = cli("plan", job, "--emit", "skypilot")
    assert out.exit_code != 0
    assert "did you mean 'sky'?" in out.output, out.output


def test_emit_sky_of_an_own_format_job_says_what_the_task_leaves_out(
        cli, tmp_path: Path) -> None:  # noqa: ANN001
    job = _job(tmp_path, model="ResNet-50 (batch size 64)", steps=2000,
               constraints={"deadline": "48h", "budget": 50, "gpu_models": ["V100"]})
    out = cli("plan", job, "--at", AT, "--emit", "sky")
    assert out.exit_code == 0, out.output
    said = " ".join(out.stderr.split())
    assert re.search(r"job fit's task leaves out its work \(2,000 steps\), deadline \(48 h\) "
                     r"and budget \(\$50\.00\)", said), said
    assert "deadline" not in yaml.safe_load(out.stdout)
    measured = _job(tmp_path, throughputs={"V100": 5.0}, steps=2000)
    out = cli("plan", measured, "--at", AT, "--emit", "sky")
    said = " ".join(out.stderr.split())
    assert "job fit's task leaves out its work (2,000 steps) and throughputs" in said, said


def test_emit_sky_says_a_secrets_written_value_is_left_out(cli, tmp_path: Path) -> None:  # noqa: ANN001
    task = tmp_path / "sky.yaml"
    task.write_text("name: fit\nresources: {accelerators: V100:1}\nrun: python train.py\n"
                    "secrets: {HF_TOKEN: hf_written_in_the_file_0123}\n")
    out = cli("plan", str(task), "--at", AT, "--emit", "sky")
    assert out.exit_code == 0, out.output
    assert "hf_written_in_the_file_0123" not in out.output
    assert yaml.safe_load(out.stdout)["secrets"] == {"HF_TOKEN": None}
    assert (f"# The value {task} writes for secret HF_TOKEN is left out: give it with "
            "`--secret HF_TOKEN` to `sky launch`.") in out.stdout, out.stdout


def test_explain_says_what_the_hours_of_work_are_and_what_the_nodes_do(
        cli, tmp_path: Path) -> None:  # noqa: ANN001
    job = _job(tmp_path, model="ResNet-50 (batch size 64)", hours=10, reference_gpu="V100",
               num_nodes=2, constraints={"gpu_models": ["T4"], "gpu_counts": [1],
                                         "clouds": ["aws"], "markets": ["spot"]})
    out = cli("plan", job, "--at", AT, "--explain", "1")
    assert out.exit_code == 0, out.output
    text = " ".join(out.stdout.split())
    assert re.search(r"work: 10 h of work on 1xV100, the job's reference GPU \([\d,]+ steps at "
                     r"[\d.]+ steps/s there\), take [\d.]+ h on this offering's 2 nodes x 1xT4 at "
                     r"[\d.]+ steps/s", text), text
    assert re.search(r"2 nodes: the gang's \$/h is 2 x one instance's \(2 x \$[\d.]+/h = "
                     r"\$[\d.]+/h\), and its preemption rate 2 x one instance's \(2 x "
                     r"[\d.]+/h = [\d.]+/h: the first of its instances preempted stops it\)",
                     text), text


def test_emit_sky_never_prints_an_envs_value_named_like_a_secret(cli, tmp_path: Path  # noqa: ANN001
                                                                  ) -> None:
    """An env named like a secret (the rule `plan` warns by) goes under secrets: with no
    value, as the warning asks; the other envs keep theirs."""
    task = tmp_path / "sky.yaml"
    task.write_text("name: fit\nresources: {accelerators: V100:1}\nrun: python train.py\n"
                    "envs: {WANDB_API_KEY: wandb-written-value-0123, EPOCHS: 3}\n")
    out = cli("plan", str(task), "--at", AT, "--emit", "sky")
    assert out.exit_code == 0, out.output
    assert "wandb-written-value-0123" not in out.output
    emitted = yaml.safe_load(out.stdout)
    assert emitted["envs"] == {"EPOCHS": 3}
    assert emitted["secrets"] == {"WANDB_API_KEY": None}
    assert (f"# The value {task} writes for env WANDB_API_KEY is left out (named like a "
            "secret's): give it with `--secret WANDB_API_KEY` to `sky launch`."
            ) in out.stdout, out.stdout


def test_no_plan_says_the_alternatives_dropped_too(cli, tmp_path: Path) -> None:  # noqa: ANN001
    """A task whose first alternative was dropped (no such type on that cloud) and whose
    other has no price: 'no plan' names the one left, and a note under it the one dropped,
    as a plan's table would (`--json` has it in `notes`)."""
    task = tmp_path / "sky.yaml"
    task.write_text("name: alt\nrun: python train.py\nresources:\n  ordered:\n"
                    "    - {accelerators: H100:1, use_spot: true, infra: azure}\n"
                    "    - {accelerators: A100:1, use_spot: true, infra: gcp}\n"
                    "costsched: {steps: 1500, throughputs: {H100: 30, A100: 20}}\n")
    for command in ("plan", "launch"):
        out = cli(command, str(task), *(["--at", AT] if command == "plan" else []))
        assert out.exit_code != 0, out.output
        said = " ".join(out.stderr.split())
        assert "no plan: job alt: no spot price known" in said or \
            "job alt: no spot price known" in said, said
        assert ("note: resources.ordered[0].accelerators: H100:1: no GPU instance type of "
                "the catalog on azure matches;") in said, said
        assert said.count("alternative dropped") == 1, said
