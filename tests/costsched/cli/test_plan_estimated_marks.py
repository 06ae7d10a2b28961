"""A plan marks every figure that rests on an estimate as its table marks an estimated speed
(`*`): the steps of work said as hours on a GPU whose speed costsched estimated (in the
title, and every hours and cost figure from them, the baseline's too), the `ordered:` note's
costs and the header of `--emit sky`; and the table's hours and the baseline's are written
at one precision."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

AT = "2026-11-01T00:00:00+00:00"


def _job(folder: Path, **fields: object) -> Path:
    path = folder / "job.yaml"
    path.write_text(yaml.safe_dump({"name": "fit", "run": "true", **fields}))
    return path


def _rows(text: str) -> list[list[str]]:
    """The cells of the ranking's rows of a plan printed with --wide."""
    out = []
    for line in text.splitlines():
        cells = [c.strip() for c in line.split("\u2502")]
        if len(cells) > 3 and cells[1].isdigit():
            out.append(cells[1:-1])
    return out


def _note(text: str, start: str) -> str:
    [line] = [x.strip() for x in text.splitlines() if x.strip().startswith(start)]
    return line


def test_steps_from_an_estimated_speed_mark_the_title_every_figure_and_the_baseline(
        cli, tmp_path: Path) -> None:  # noqa: ANN001
    """2 h of work on a T4, whose speed is estimated from the A100's: the steps rest on that
    estimate, and so do the A100 rows' hours and cost though their speed is given."""
    job = _job(tmp_path, throughputs={"A100": 10.0, "V100": 5.0}, hours=2,
               reference_gpu="T4", constraints={"gpu_models": ["A100"], "gpu_counts": [1]})
    out = cli("plan", job, "--at", AT, "--top", "3", "--wide")
    assert out.exit_code == 0, out.output
    assert re.search(r"2 h of work on 1xT4 \([\d,]+\* steps\)", out.stdout), out.stdout
    rows = _rows(out.stdout)
    assert rows
    for cells in rows:  # speed, preempt/h, risk source, hours, total $, vs OD V100
        speed, hours, total, vs = cells[4], cells[-3], cells[-2], cells[-1]
        assert not speed.endswith("*")  # the A100's speed is given
        assert hours.endswith("*") and total.endswith("*") and vs.endswith("*")
    baseline = _note(out.stdout, "baseline:")  # the V100's speed is given: its hours are not
    assert re.search(r"[\d.]+\* h x \$[\d.]+/h = \$[\d.,]+\* "
                     r"\(\* from the estimated steps\)$", baseline)
    assert "steps too (2 h on 1xT4 at an estimated speed)" in _note(out.stdout, "* estimated speed")


def test_given_steps_mark_nothing_the_speeds_do_not(cli, tmp_path: Path) -> None:  # noqa: ANN001
    job = _job(tmp_path, throughputs={"A100": 10.0, "V100": 5.0}, hours=2,
               reference_gpu="A100", constraints={"gpu_models": ["A100"], "gpu_counts": [1]})
    out = cli("plan", job, "--at", AT, "--top", "3", "--wide")
    assert re.search(r"2 h of work on 1xA100 \([\d,]+ steps\)", out.stdout), out.stdout
    assert "*" not in "".join(c for cells in _rows(out.stdout) for c in cells)
    assert "*" not in _note(out.stdout, "baseline:")


def test_the_ordered_note_and_the_emitted_header_are_marked(cli, tmp_path: Path) -> None:  # noqa: ANN001
    task = tmp_path / "task.yaml"
    task.write_text(yaml.safe_dump({
        "name": "ordered", "run": "true",
        "resources": {"use_spot": True, "ordered": [
            {"accelerators": "V100:1", "infra": "aws/us-east-1"},
            {"accelerators": "T4:1", "infra": "aws/us-east-1"}]},
        "costsched": {"throughputs": {"V100": 1.0}, "steps": 3600}}))
    out = cli("plan", task, "--at", AT)
    note = _note(out.stdout, "ordered:")
    # The V100's speed is given, the T4's (the cheapest) estimated: its cost and the
    # difference marked, the V100's cost not.
    assert re.search(r"costs \$[\d.]+, \$[\d.]+\* more than the cheapest choice "
                     r"\(aws us-east-1\S* g4dn\.\S+ spot, \$[\d.]+\*\)$", note), note
    t4 = tmp_path / "t4.yaml"
    t4.write_text(task.read_text().replace("V100:1", "K80:1"))  # T4 first: estimated
    emitted = cli("plan", t4, "--at", AT, "--emit", "sky")
    assert emitted.exit_code == 0, emitted.output
    header = [x for x in emitted.stdout.splitlines() if "expected" in x and x.startswith("#")]
    assert header and re.search(r"expected [\d.]+\* h x \$[\d.]+/h = \$[\d.]+\* \(\* from an "
                                r"estimated speed: `costsched plan ", header[0]), header


def test_the_tables_hours_and_the_baseline_read_at_one_precision(
        cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: ANN001
    """3,000 steps at 80 steps/s on a T4 (0.0104 h) beside the V100 baseline's 0.0064 h
    (instances that start at once: no boot, no warm-up): the table's hours read at the
    baseline's four decimals at least, not '0.01' (more where a row's $/h times its hours
    would not read as its total: `test_plan_rows_multiply`)."""
    config = tmp_path / "config.toml"
    config.write_text("[migration]\nrestart_minutes = 0\nwarmup_minutes = 0\n")
    monkeypatch.setenv("COSTSCHED_CONFIG", str(config))
    job = _job(tmp_path, throughputs={"T4": 80.0, "V100": 130.0}, steps=3000,
               constraints={"gpu_models": ["T4"], "markets": ["spot"]})
    out = cli("plan", job, "--at", AT, "--top", "3", "--wide")
    hours = [cells[-3] for cells in _rows(out.stdout)]
    spent = re.search(r", ([\d.]+) h x \$", _note(out.stdout, "baseline:"))[1]
    places = {len(h.split(".")[1]) for h in hours}
    # the baseline's hours at no fewer: at those its product with its price reads as its
    # total does, at the totals' decimals (five here, where $0.00189 and $0.00195 differ)
    assert hours and len(places) == 1 and min(places) >= 4, (hours, spent)
    assert len(spent.split(".")[1]) >= 4, (hours, spent)
