"""A plan says where its checkpoint interval comes from, as it says where its preemption
rate and its work come from: `--explain` gives tau's value, whether it is costsched's
default, the key of the job's file that sets it and n (the full intervals in the work);
the table of a spot plan notes a default interval once; `--json` gives the interval with
`checkpoint_interval_assumed`. The key named is tried here: it sets the interval."""

from __future__ import annotations

import json
from pathlib import Path

SKY = """\
name: moons
resources:
  accelerators: {T4: 1}
  use_spot: true
run: python train.py
"""
OFFERING = "aws us-west-2 g4dn.xlarge spot"
KEY = "`costsched: {checkpoint: {interval_minutes: M}}`"


def said(text: str) -> str:
    return " ".join(text.split())


def sky(folder: Path, section: str = "") -> Path:
    path = folder / "sky.yaml"
    path.write_text(SKY + section)
    return path


def test_explain_says_the_interval_is_the_default_its_key_and_n(cli, tmp_path: Path) -> None:  # noqa: ANN001
    path = sky(tmp_path)
    result = cli("plan", path, "--explain", OFFERING)
    assert result.exit_code == 0, result.output
    out = said(result.stdout)
    assert "tau 0.50 h, n = floor(work / tau) = 2, rest " in out
    assert (f"tau 0.50 h: the checkpoint interval, costsched's default of 30 min, assumed: "
            f"nothing in {path} sets it; {KEY} in {path} gives the job's own (`auto`: "
            "costsched chooses it)") in out


def test_the_key_named_sets_the_interval_and_explain_says_so(cli, tmp_path: Path) -> None:  # noqa: ANN001
    path = sky(tmp_path, "costsched: {checkpoint: {interval_minutes: 10}}\n")
    result = cli("plan", path, "--explain", OFFERING)
    assert result.exit_code == 0, result.output
    out = said(result.stdout)
    assert "tau 0.17 h, n = floor(work / tau) = 6, rest " in out
    assert (f"tau 0.17 h: the checkpoint interval, 10 min as "
            f"costsched.checkpoint.interval_minutes in {path} gives it") in out
    assert "default" not in out.partition("tau 0.17 h:")[2].partition("\n")[0]


def test_a_job_file_s_interval_is_named_by_its_own_key(cli, tmp_path: Path) -> None:  # noqa: ANN001
    path = tmp_path / "job.yaml"
    path.write_text("name: j\nrun: 'true'\nsteps: 36000\nthroughputs: {T4: 10}\n"
                    "constraints: {markets: [spot], gpu_models: [T4]}\n")
    result = cli("plan", path, "--explain", OFFERING)
    assert result.exit_code == 0, result.output
    assert ("`checkpoint: {interval_minutes: M}` in " + str(path)
            + " gives the job's own") in said(result.stdout)
    table = said(cli("plan", path, "--top", "3").stdout)
    assert "checkpoint interval assumed: costsched's default of 30 min" in table


def test_the_table_of_a_spot_plan_notes_a_default_interval_once(cli, tmp_path: Path) -> None:  # noqa: ANN001
    result = cli("plan", sky(tmp_path), "--top", "3")
    assert result.exit_code == 0, result.output
    out = said(result.stdout)
    assert out.count("checkpoint interval assumed") == 1
    assert (f"checkpoint interval assumed: costsched's default of 30 min, nothing in "
            f"{tmp_path / 'sky.yaml'} sets it; a preemption loses the work since the last "
            f"checkpoint: {KEY}") in out

    given = cli("plan", sky(tmp_path, "costsched: {checkpoint: {interval_minutes: 10}}\n"),
                "--top", "3")
    assert "checkpoint interval assumed" not in said(given.stdout)


def test_no_note_where_nothing_is_preempted(cli, tmp_path: Path) -> None:  # noqa: ANN001
    path = tmp_path / "od.yaml"
    path.write_text(SKY.replace("use_spot: true", "use_spot: false"))
    result = cli("plan", path, "--top", "3")
    assert result.exit_code == 0, result.output
    assert "checkpoint interval" not in said(result.stdout)


def test_json_gives_the_interval_and_whether_it_is_assumed(cli, tmp_path: Path) -> None:  # noqa: ANN001
    out = cli("plan", sky(tmp_path), "--json", "--top", "1")
    assert out.exit_code == 0, out.output
    [job] = json.loads(out.stdout)["jobs"]
    assert job["checkpoint_interval_hours"] == 0.5
    assert job["checkpoint_interval_assumed"] is True

    given = cli("plan", sky(tmp_path, "costsched: {checkpoint: {interval_minutes: 10}}\n"),
                "--json", "--top", "1")
    [job] = json.loads(given.stdout)["jobs"]
    assert abs(job["checkpoint_interval_hours"] - 10 / 60) < 1e-12
    assert job["checkpoint_interval_assumed"] is False


def test_the_table_of_groups_notes_a_default_interval(cli, tmp_path: Path) -> None:  # noqa: ANN001
    path = tmp_path / "sweep.yaml"
    path.write_text("name: s\nrun: 'true'\nsteps: 3600\nthroughputs: {T4: 1}\n"
                    "sweep: {SEED: [" + ", ".join(map(str, range(21))) + "]}\n"
                    "constraints: {markets: [spot], gpu_models: [T4]}\n")
    result = cli("plan", path)
    assert result.exit_code == 0, result.output
    out = said(result.stdout)
    assert "21 jobs in 1 group of identical jobs" in out
    assert out.count("checkpoint interval assumed: costsched's default of 30 min") == 1
