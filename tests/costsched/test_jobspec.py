"""Job spec YAML: the examples load; bad specs fail naming the file and the field."""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path

import pytest

from costsched.jobspec import parse, resolve
from costsched.model import InvalidInput
from costsched.taskfile import load
from costsched.throughput import ThroughputTable

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
AT = datetime(2020, 3, 1, tzinfo=timezone.utc)


def test_every_example_loads_and_resolves() -> None:
    table = ThroughputTable()
    files = sorted(EXAMPLES.glob("*.yaml"))
    assert {f.name for f in files} >= {"resnet50.yaml", "recommendation.yaml", "sweep.yaml"}
    for path in files:
        for spec in load(path):
            job = resolve(spec, table, AT, source=str(path)).job
            assert job.steps > 0 and job.name


def test_work_forms() -> None:
    table = ThroughputTable()
    base = {"name": "j", "model": "ResNet-50 (batch size 64)"}
    epochs = resolve(parse({**base, "epochs": 3, "steps_per_epoch": 100}), table, AT).job
    assert epochs.steps == 300
    hours = resolve(parse({**base, "hours": 2, "reference_gpu": "V100"}), table, AT).job
    assert hours.steps == pytest.approx(2 * 3600 * 5.458)
    only_hours = resolve(parse({"name": "x", "hours": 2, "reference_gpu": "k80:1"}), table, AT)
    t = only_hours.table.get(only_hours.job.model, "K80", 1)
    assert only_hours.job.steps / t.steps_per_second / 3600 == pytest.approx(2)
    assert only_hours.table.get(only_hours.job.model, "V100", 1).estimated


def test_measured_throughputs_and_deadlines() -> None:
    spec = parse({"name": "bert", "throughputs": {"v100": 3.0, "V100:8": 20}, "steps": 10,
                  "constraints": {"deadline": "2020-03-02T12:00Z", "budget": "$1,200",
                                  "markets": ["on-demand"]}})
    job = resolve(spec, ThroughputTable(), AT)
    assert job.job.constraints.deadline_hours == pytest.approx(36)
    assert job.job.constraints.budget_usd == 1200
    assert job.job.constraints.markets == ("on_demand",)
    assert job.table.get("bert", "V100", 8).steps_per_second == 20
    assert parse({"name": "a", "model": "A3C", "steps": 1,
                  "constraints": {"deadline": "1d12h"}}).constraints.deadline == 36


def test_sweep_expands_to_one_job_per_combination(tmp_path: Path) -> None:
    specs = load(EXAMPLES / "sweep.yaml")
    assert len(specs) == 6
    assert len({s.name for s in specs}) == 6
    assert {(s.envs["LR"], s.envs["SEED"]) for s in specs} == {
        (lr, seed) for lr in ("0.001", "0.0003", "0.0001") for seed in ("1", "2")}


@pytest.mark.parametrize(("text", "message"), [
    ("name: a\nmodel: A3C\nstpes: 10\n", r"field stpes: unknown field: expected one of name,"
     r".*; did you mean 'steps'\?$"),
    ("name: a\nmodel: A3C\nsteps: 5\nconstraint: {clouds: [aws]}\n",
     r"field constraint: unknown field: .*; did you mean 'constraints'\?$"),
    ("name: a\nmodel: A3C\nsteps: 5\ndeadline: 3h\n",
     r"field deadline: unknown field: .*; deadline belongs under constraints: "
     r"`constraints: \{deadline: \.\.\.\}`$"),
    ("name: a\nthroughputs: {V10O: 3}\nsteps: 5\n",
     r"field throughputs: unknown GPU model 'V10O': .*; did you mean 'V100'\?$"),
    ("name: a\nmodel: A3C\nsteps: -5\n", r"field steps: -5: expected a positive number"),
    ("name: a\nmodel: A3C\nsteps: -2.5\n", r"field steps: -2\.5: expected a positive number"),
    ("name: a\nmodel: A3C\n", r"job 'a': give exactly one of: steps"),
    ("name: a\nsteps: 5\n", r"give model .* or throughputs"),
    ("name: a\nmodel: A3C\nsteps: 5\nconstraints: {gpu_models: [TPU]}\n",
     r"field constraints\.gpu_models: unknown GPU model 'TPU': expected one of K80"),
    ("name: a\nmodel: A3C\nsteps: 5\nconstraints: {clouds: [ibm]}\n",
     r"field constraints\.clouds: 'ibm': expected one of aws, gcp, azure"),
    ("name: a\nmodel: A3C\nsteps: 5\nconstraints: {zones: [us-east-1z]}\n",
     r"field constraints\.zones: 'us-east-1z': not a zone of us-east-1; its zones are "
     r"us-east-1a, .*, us-east-1f$"),
    ("name: a\nmodel: A3C\nsteps: 5\nconstraints: {regions: [us-east-1], "
     "zones: [us-west-2a]}\n",
     r"field constraints\.zones: 'us-west-2a': a zone of us-west-2, not of us-east-1$"),
    # A region no cloud lists, nor numbered next in a listed series: a misspelling.
    ("name: a\nmodel: A3C\nsteps: 5\nconstraints: {regions: [us-east-1, useast1]}\n",
     r"field constraints\.regions: 'useast1': not a region of aws, gcp or azure; did you "
     r"mean 'us-east-1' or 'us-east1'"),
    ("name: a\nmodel: A3C\nsteps: 5\nconstraints: {clouds: [aws], regions: [useast1]}\n",
     r"field constraints\.regions: 'useast1': not a region of aws; did you mean "
     r"'us-east-1'\?$"),
    ("name: a\nmodel: A3C\nsteps: 5\nconstraints: {deadline: soon}\n",
     r"field constraints\.deadline: 'soon': expected hours"),
    # A date YAML cannot make is the field's to refuse, not a traceback of the loader's.
    ("name: a\nmodel: A3C\nsteps: 5\nconstraints: {deadline: 2026-13-45}\n",
     r"field constraints\.deadline: '2026-13-45': expected hours"),
    ("name: a\nmodel: A3C\nsteps: 5\nconstraints: {deadline: 1s}\n",
     r"field constraints\.deadline: '1s': expected hours"),
    ("name: a\nmodel: A3C\nsteps: 5\ncheckpoint: {size: 3}\n",
     r"field checkpoint\.size: unknown field: expected one of location, size_gb"),
    ("name: a\nmodel: A3C\nsteps: 5: 6\n", r"line 3: invalid YAML \(mapping values"),
    ("name: a\nmodel: A3C\nsteps: 5\nconstraints: {budget: ten dollars}\n",
     r"field constraints\.budget: 'ten dollars': expected an amount of USD, such as 50 or '\$50'$"),
    ("name: a\nmodel: A3C\nsteps: 5\nconstraints: {max_migrations: 1.5}\n",
     r"field constraints\.max_migrations: 1\.5: expected a whole number$"),
    ("name: a\nmodel: A3C\nsteps: 5\nconstraints: {markets: spot}\n",
     r"field constraints\.markets: 'spot': expected a list$"),
    ("name: a\nmodel: A3C\nsteps: 5\ncheckpoint: 5\n", r"field checkpoint: 5: expected a mapping$"),
    ("- just\n- a list\n", r"expected a mapping of job fields"),
    ("", r"no job in the file"),
])
def test_bad_specs_name_file_and_field(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "job.yaml"
    path.write_text(text)
    with pytest.raises(InvalidInput, match=message) as info:
        load(path)
    assert str(info.value).startswith(str(path))
    assert "\n" not in str(info.value)


def test_a_listed_region_or_one_numbered_next_loads(tmp_path: Path) -> None:
    path = tmp_path / "job.yaml"
    regions = ["us-east-1", "westeurope", "us-central1", "us-east-3", "eastus3"]
    path.write_text(f"name: a\nmodel: A3C\nsteps: 5\nconstraints: {{regions: {regions}}}\n")
    assert load(path)[0].constraints.regions == regions


def test_unknown_model_names_the_field(tmp_path: Path) -> None:
    path = tmp_path / "job.yaml"
    path.write_text("name: a\nmodel: GPT-5\nsteps: 5\n")
    (spec,) = load(path)
    with pytest.raises(InvalidInput, match=r"job.yaml: job 'a': field model: unknown model"):
        resolve(spec, ThroughputTable(), AT, source=str(path))


def test_deadline_in_the_past_is_refused() -> None:
    spec = parse({"name": "a", "model": "A3C", "steps": 5,
                  "constraints": {"deadline": "2020-02-01"}})
    with pytest.raises(InvalidInput, match="is not after the planning time"):
        resolve(spec, ThroughputTable(), AT)


def test_workdir_is_taken_from_the_spec_files_folder(tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    folder = tmp_path / "proj" / "jobs"
    folder.mkdir(parents=True)
    (folder / "job.yaml").write_text("name: a\nworkdir: ..\nsetup: pip install -r r.txt\n"
                                     "run: python t.py\nthroughputs: {V100: 1}\nsteps: 10\n"
                                     "---\nname: b\nrun: 'true'\nthroughputs: {V100: 1}\n"
                                     "steps: 10\n")
    monkeypatch.chdir(tmp_path)
    a, b = load("proj/jobs/job.yaml")
    assert a.workdir == str(tmp_path / "proj") and a.setup == "pip install -r r.txt"
    assert b.workdir is None and b.setup == ""


@pytest.mark.parametrize(("field", "value"), [
    ("constraints.max_migrations", True), ("constraints.budget", True),
    ("constraints.max_price", False), ("constraints.gpu_counts", [True]), ("steps", True),
    ("checkpoint.size_gb", True)])
def test_true_or_false_is_never_taken_for_a_number(field: str, value: object) -> None:
    data: dict = {"name": "j", "model": "ResNet-50", "steps": 10}
    outer, _, inner = field.partition(".")
    if inner:
        data[outer] = {inner: value}
    else:
        data[outer] = value
    with pytest.raises(InvalidInput, match=rf"^x.yaml: job 'j': field {field}: true/false: "
                                           "expected a number$"):
        parse(data, "x.yaml")


def test_a_name_over_the_limit_names_the_file_and_field() -> None:
    with pytest.raises(InvalidInput, match=r"^x.yaml: field name: 'n{56}\.\.\.: expected "
                                           r"text of at most 100 characters$"):
        parse({"name": "n" * 101, "model": "ResNet-50", "steps": 10}, "x.yaml")


def test_a_directory_given_as_the_job_file_is_named_with_the_yaml_files_it_holds(
        tmp_path: Path) -> None:
    (tmp_path / "sky.yaml").write_text("name: t\nrun: echo\n")
    with pytest.raises(InvalidInput) as caught:
        load(tmp_path)
    message = str(caught.value)
    assert message == (f"{tmp_path}: a directory, not a job file: give its job's YAML file "
                       "(here: sky.yaml)")
    assert "Errno" not in message


def test_a_directory_suggests_only_the_yaml_files_that_are_tasks(tmp_path: Path) -> None:
    """Only files that read as a SkyPilot task or a costsched job are suggested (not a
    project's other YAML: CI, environment, docs, a broken file)."""
    (tmp_path / "train.yaml").write_text("resources:\n  accelerators: V100:1\nrun: python t.py\n")
    (tmp_path / "job.yml").write_text("name: j\nmodel: ResNet-50\nsteps: 10\n")
    (tmp_path / "environment.yml").write_text("name: env\ndependencies: [numpy]\n")
    (tmp_path / "mkdocs.yml").write_text("site_name: docs\n")
    (tmp_path / "ci.yaml").write_text("jobs:\n  test:\n    runs-on: ubuntu\n")
    (tmp_path / "broken.yaml").write_text("run: [unclosed\n")
    (tmp_path / "list.yaml").write_text("- run\n- resources\n")
    with pytest.raises(InvalidInput) as caught:
        load(tmp_path)
    assert str(caught.value) == (f"{tmp_path}: a directory, not a job file: give its job's "
                                 "YAML file (here: job.yml, train.yaml)")


def test_a_directory_without_a_task_file_says_so_and_how_to_name_one(tmp_path: Path) -> None:
    (tmp_path / "mkdocs.yml").write_text("site_name: docs\n")
    (tmp_path / "environment.yml").write_text("name: env\ndependencies: [numpy]\n")
    with pytest.raises(InvalidInput) as caught:
        load(tmp_path)
    assert str(caught.value) == (
        f"{tmp_path}: a directory with no task file in it (no YAML file there has run:, "
        f"resources: or a costsched: section): write the task in a file such as "
        f"{tmp_path / 'task.yaml'} and give that file")


def test_a_workdir_that_is_not_there_is_refused_as_written_for_plan_and_launch(
        tmp_path: Path) -> None:
    """One check, as the file is read: `plan` refuses it as `launch` does."""
    task = tmp_path / "sky.yaml"
    task.write_text("name: t\nworkdir: ./nothere\nresources: {accelerators: V100:1}\n"
                    "run: echo\n")
    with pytest.raises(InvalidInput) as caught:
        load(task)
    assert str(caught.value) == (f"{task}: field workdir './nothere': no such directory "
                                 f"(relative to the file's folder, {tmp_path})")
    (tmp_path / "nothere").mkdir()
    [spec] = load(task)
    assert spec.task.needs == [] and spec.workdir == str(tmp_path / "nothere")


def test_a_local_mount_that_is_not_there_is_refused_as_written_for_plan_and_launch(
        tmp_path: Path) -> None:
    """As a workdir: refused as the file is read, every missing one in the line."""
    task = tmp_path / "sky.yaml"
    task.write_text("name: t\nfile_mounts: {/ratings: ./dta, /cfg: /no/such/dir}\n"
                    "resources: {accelerators: V100:1}\nrun: echo\n")
    with pytest.raises(InvalidInput) as caught:
        load(task)
    assert str(caught.value) == (
        f"{task}: field file_mounts./ratings: local path './dta': no such file or folder "
        f"(relative to the file's folder, {tmp_path}); field file_mounts./cfg: local path "
        "'/no/such/dir': no such file or folder")
    (tmp_path / "dta").mkdir()
    task.write_text("name: t\nfile_mounts: {/ratings: ./dta}\n"
                    "resources: {accelerators: V100:1}\nrun: echo\n")
    [spec] = load(task)
    assert spec.task.needs == []


def test_an_error_names_the_field_as_the_file_wrote_it_never_a_placeholder() -> None:
    import yaml

    from costsched.skypilot import parse_task

    def said(text: str, sky: bool = True) -> str:
        with pytest.raises(InvalidInput) as info:
            data = yaml.safe_load(text)
            spec = parse_task(data, "f.yaml", "t") if sky else parse(data, "f.yaml")
            resolve(spec, ThroughputTable(), AT, source="f.yaml")
        assert "(job)" not in str(info.value)
        return str(info.value)

    task = "resources: {accelerators: T4}\nrun: x\ncostsched: "
    assert said(task + "{model: resnet-5O, steps: 5}").startswith(
        "f.yaml: job 't': field costsched.model: unknown model")
    assert said(task + "{epochs: 3, model: A3C}").startswith(
        "f.yaml: job 't': field costsched.epochs: epochs needs steps_per_epoch")
    assert said(task + "{steps: 5, throughputs: {T4: 1}, deadline: 2020-01-01T00:00Z}"
                ).startswith("f.yaml: job 't': field costsched.deadline: 2020-01-01T00:00Z "
                             "is not after")
    assert said(task + "{steps: 5, hours: 2, throughputs: {T4: 1}}").startswith(
        "f.yaml: job 't': its `costsched:` section: give exactly one of: steps;")
    own = "name: own\nrun: x\n"  # costsched's own format: its own keys
    assert said(own + "model: nope\nsteps: 5", sky=False).startswith(
        "f.yaml: job 'own': field model: unknown model")
    assert said(own + "model: A3C\nepochs: 5", sky=False).startswith(
        "f.yaml: job 'own': field epochs: epochs needs steps_per_epoch")


@pytest.mark.parametrize(("sweep", "said"), [
    ("{LR: []}", "field sweep.LR: an empty list: expected at least one value"),
    ("{LR: 0.1}", "field sweep.LR: 0.1: expected a list of values, such as [0.1, 0.01]"),
    ("{LR: [0.1, [1]]}", "field sweep.LR: item 2, [1]: expected text or a number"),
    ("{LR: [null]}", "field sweep.LR: item 1, null: expected text or a number"),
    ("{LR: [0.1, 0.01, 0.1]}", "field sweep.LR: item 3, 0.1: repeats item 1, so two jobs "
     "would be the same run: expected each value once"),
    ("{SEED: [1, '1']}", "field sweep.SEED: item 2, '1': repeats item 1, so two jobs "
     "would be the same run: expected each value once"),  # the env reads 1 either way
])
def test_a_bad_sweep_names_the_file_and_the_value(tmp_path: Path, sweep: str,
                                                  said: str) -> None:
    """A sweep that would make no job, or values no env can take, is refused in one line
    naming the file and the name's values, never as a file with no job in it."""
    path = tmp_path / "o8.yaml"
    path.write_text(f"name: own\nmodel: A3C\nsteps: 5\nsweep: {sweep}\n")
    with pytest.raises(InvalidInput) as caught:
        load(path)
    assert str(caught.value) == f"{path}: job 'own': {said}"


def test_a_sweeps_true_and_false_reach_the_env_as_written(tmp_path: Path) -> None:
    path = tmp_path / "flags.yaml"
    path.write_text("name: own\nmodel: A3C\nsteps: 5\nsweep: {AMP: [true, false]}\n")
    assert [s.envs["AMP"] for s in load(path)] == ["true", "false"]


@pytest.mark.parametrize("written", ["workdir: ~", "workdir:", "workdir: null"])
@pytest.mark.parametrize("body", [
    "name: a\nrun: python train.py\nthroughputs: {V100: 1}\nsteps: 10\n",  # costsched's own
    "name: a\nresources: {accelerators: V100:1}\nrun: python train.py\n",  # a SkyPilot task
], ids=["own", "skypilot"])
def test_a_workdir_with_no_value_is_refused_not_read_as_no_code(
        tmp_path: Path, written: str, body: str) -> None:
    """YAML reads `~` as null: taken as no workdir, the job launched without its code."""
    (tmp_path / "job.yaml").write_text(body + written + "\n")
    with pytest.raises(InvalidInput) as refused:
        load(tmp_path / "job.yaml")
    assert str(refused.value).startswith(f"{tmp_path / 'job.yaml'}: field workdir: empty")
    assert "`workdir: .`" in str(refused.value)


@pytest.mark.parametrize(("work", "said"), [
    ("steps: 5\nsteps_per_epoch: 100", "give exactly one of: steps; epochs and "
     "steps_per_epoch; hours and reference_gpu (got steps, steps_per_epoch)"),
    ("epochs: 3\nreference_gpu: V100", "(got epochs, reference_gpu)"),
    ("steps: 5\nhours: 2", "(got steps, hours)"),
    ("steps_per_epoch: 100", "field steps_per_epoch: steps_per_epoch needs epochs"),
    ("epochs: 3", "field epochs: epochs needs steps_per_epoch"),
    ("reference_gpu: V100", "field reference_gpu: reference_gpu needs hours"),
    ("hours: 2", "field hours: hours needs reference_gpu"),
])
def test_a_work_error_names_the_keys_the_file_has(work: str, said: str) -> None:
    import yaml

    with pytest.raises(InvalidInput) as info:
        parse(yaml.safe_load(f"name: a\nmodel: A3C\n{work}\n"), "f.yaml")
    assert said in str(info.value)
