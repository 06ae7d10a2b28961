"""Bundled multi-GPU figures are capped at linear scaling; measured ones never are."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from costsched import throughput as tp

LM = "LM (batch size 80)"


@pytest.fixture()
def user_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "throughputs.csv"
    monkeypatch.setenv(tp.ENV_USER_FILE, str(path))
    return path


def published(model: str, gpu: str, count: int) -> float:
    b = tp.bundled()
    row = b[(b["model"] == model) & (b["gpu_model"] == gpu) & (b["gpu_count"] == count)]
    assert len(row) == 1
    return float(row["steps_per_second"].iloc[0])


def test_superlinear_bundled_lm_rows_are_capped_at_linear_scaling() -> None:
    table = tp.ThroughputTable()
    one = published(LM, "V100", 1)
    for n in (2, 8):
        assert published(LM, "V100", n) > n * one  # the premise: the table is superlinear
        t = table.get(LM, "V100", n)
        assert not t.estimated and t.capped
        assert t.steps_per_second <= n * one
        assert t.steps_per_second == pytest.approx(n * one)
        assert t.published == published(LM, "V100", n)
        ratio = published(LM, "V100", n) / one
        assert f"capped at linear scaling: published {t.published:.4g} steps/s is " \
               f"{ratio:.3g}x" in t.basis
    # A sublinear row of the same model stays as published.
    four = table.get(LM, "V100", 4)
    assert not four.capped and four.steps_per_second == published(LM, "V100", 4)


def test_no_bundled_figure_is_looked_up_above_linear_scaling() -> None:
    table = tp.ThroughputTable()
    b = tp.bundled()
    one = b[b["gpu_count"] == 1].set_index(["model", "gpu_model"])["steps_per_second"]
    capped = []
    for r in b[b["gpu_count"] > 1].itertuples():
        t = table.get(r.model, r.gpu_model, r.gpu_count)
        linear = r.gpu_count * one[(r.model, r.gpu_model)]
        assert t.steps_per_second <= linear + 1e-9
        assert t.capped == (r.steps_per_second > linear)
        assert t.steps_per_second == (linear if t.capped else r.steps_per_second)
        if t.capped:
            capped.append((r.model, r.gpu_model, r.gpu_count))
    assert (LM, "V100", 8) in capped
    # measured_rows flags the same rows, with the published figure and the cap beside it.
    rows = table.measured_rows()
    flagged = rows[rows["capped"]]
    assert sorted(zip(flagged["model"], flagged["gpu_model"], flagged["gpu_count"],
                      strict=True)) == sorted(capped)
    lm8 = flagged[(flagged["model"] == LM) & (flagged["gpu_count"] == 8)].iloc[0]
    assert lm8["steps_per_second"] == published(LM, "V100", 8)
    assert lm8["capped_steps_per_second"] == pytest.approx(8 * published(LM, "V100", 1))
    assert rows.loc[~rows["capped"], "capped_steps_per_second"].isna().all()


def test_lookup_and_estimates_use_the_capped_figure() -> None:
    table = tp.ThroughputTable()
    linear8 = 8 * published(LM, "V100", 1)
    sps, est = table.lookup(LM, ["V100", "V100"], [8, 16])
    assert sps[0] == pytest.approx(linear8) and not est[0]
    assert sps[1] == pytest.approx(linear8 * 2 * tp.SCALING_EFFICIENCY) and est[1]
    a100 = table.get(LM, "A100", 8)
    ratio = tp.GPU_SPECS["A100"].speed_index() / tp.GPU_SPECS["V100"].speed_index()
    assert a100.steps_per_second == pytest.approx(linear8 * ratio)
    assert "capped at linear scaling" in a100.basis


def test_a_user_measurement_of_a_superlinear_figure_is_kept(user_file: Path) -> None:
    one = published(LM, "V100", 1)
    tp.save_user(pd.DataFrame([(LM, "V100", 8, 9 * one, "my bench")], columns=tp.COLUMNS))
    table = tp.ThroughputTable.load()
    t = table.get(LM, "V100", 8)
    assert (t.steps_per_second, t.capped, t.basis) == (9 * one, False, "my bench")
    # Still kept when the table is rebuilt from its frame (as a job spec's precision does).
    again = tp.ThroughputTable(table.frame, precision="fp16").get(LM, "V100", 8)
    assert again.steps_per_second == 9 * one and not again.capped
    # The bundled 2-GPU row is still capped.
    assert table.get(LM, "V100", 2).capped


def test_a_job_specs_superlinear_figure_is_kept() -> None:
    one = published(LM, "V100", 1)
    spec_rows = pd.DataFrame([(LM, "V100", 2, 2.5 * one, "job spec x.yaml")],
                             columns=tp.COLUMNS)
    table = tp.ThroughputTable().overlay(spec_rows)
    assert table.get(LM, "V100", 2).steps_per_second == 2.5 * one
    assert not table.get(LM, "V100", 2).capped


def test_the_cap_follows_the_users_own_one_gpu_figure(user_file: Path) -> None:
    mine = 0.9 * published(LM, "V100", 4) / 4  # the published 4-GPU figure is 4.44x this
    tp.save_user(pd.DataFrame([(LM, "V100", 1, mine, "my bench")], columns=tp.COLUMNS))
    table = tp.ThroughputTable.load()
    four = table.get(LM, "V100", 4)
    assert four.capped and four.steps_per_second == pytest.approx(4 * mine)
    assert four.published == published(LM, "V100", 4)


def test_show_lists_capped_rows_as_published_with_a_note(cli, user_file: Path) -> None:
    result = cli("throughput", "show", "--gpu", "V100", "--count", "8")
    assert result.exit_code == 0, result.output
    assert f"{published(LM, 'V100', 8):.4g}^" in result.stdout
    assert "^ capped at linear scaling" in result.stdout
    rows = json.loads(cli("throughput", "show", "--gpu", "V100", "--count", "8",
                          "--json").stdout)["throughputs"]
    lm = next(r for r in rows if r["model"] == LM)
    assert lm["capped"] is True
    assert lm["steps_per_second"] == lm["published_steps_per_second"] == \
        published(LM, "V100", 8)
    assert lm["capped_steps_per_second"] == pytest.approx(8 * published(LM, "V100", 1))
    assert f"{published(LM, 'V100', 8) / published(LM, 'V100', 1):.3g}x" in lm["source"]
    sublinear = [r for r in rows if not r["capped"]]
    assert sublinear and all(r["published_steps_per_second"] is None for r in sublinear)


def test_show_model_gives_the_figure_used_and_no_note_without_caps(cli, user_file: Path) -> None:
    rows = json.loads(cli("throughput", "show", "--model", LM, "--gpu", "V100", "--count", "2",
                          "--count", "4", "--json").stdout)["throughputs"]
    by = {r["gpu_count"]: r for r in rows}
    assert by[2]["capped"] and by[2]["published_steps_per_second"] == published(LM, "V100", 2)
    assert by[2]["steps_per_second"] == pytest.approx(2 * published(LM, "V100", 1))
    assert not by[4]["capped"] and by[4]["steps_per_second"] == published(LM, "V100", 4)
    plain = cli("throughput", "show", "--model", LM, "--gpu", "V100", "--count", "4")
    assert plain.exit_code == 0 and "capped at linear scaling" not in plain.stdout
    # A user's superlinear measurement is shown as is, without the mark or the note.
    one = published(LM, "V100", 1)
    assert cli("throughput", "set", LM, "V100:2", str(3 * one)).exit_code == 0
    mine = cli("throughput", "show", "--model", LM, "--gpu", "V100", "--count", "2")
    assert f"{3 * one:.4g} " in mine.stdout and "capped" not in mine.stdout
