"""The throughput table: bundled measurements (multi-GPU ones capped at linear scaling),
user overrides, stated estimates."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pandas as pd
import pytest

from costsched import throughput as tp
from costsched.model import InvalidInput


@pytest.fixture()
def user_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "throughputs.csv"
    monkeypatch.setenv(tp.ENV_USER_FILE, str(path))
    return path


def test_bundled_measurements_are_returned_as_measured() -> None:
    table = tp.ThroughputTable()
    t = table.get("resnet50 bs64", "v100", 1)
    assert (t.steps_per_second, t.estimated) == (5.458, False)
    assert "Gavel" in t.basis
    # Why throughput-aware placement pays, in the bundled data: ResNet-50 ~7x faster on a
    # V100 than a K80, recommendation ~2x.
    k80 = table.get("ResNet-50 (batch size 64)", "K80").steps_per_second
    assert 6 < t.steps_per_second / k80 < 8
    rec = [table.get("Recommendation (batch size 2048)", g).steps_per_second
           for g in ("K80", "V100")]
    assert rec[1] / rec[0] < 2.5


def test_unmeasured_count_is_estimated_by_the_stated_scaling_rule() -> None:
    table = tp.ThroughputTable()
    base = table.get("Recommendation (batch size 2048)", "K80", 1).steps_per_second
    t = table.get("Recommendation (batch size 2048)", "K80", 8)
    assert t.estimated
    assert t.steps_per_second == pytest.approx(base * 8 * tp.SCALING_EFFICIENCY**3)
    assert "data-parallel" in t.basis and "1xK80" in t.basis
    sixteen = table.get("ResNet-50 (batch size 64)", "V100", 16)
    eight = table.get("ResNet-50 (batch size 64)", "V100", 8).steps_per_second
    assert sixteen.steps_per_second == pytest.approx(eight * 2 * tp.SCALING_EFFICIENCY)


def test_unmeasured_gpu_model_scales_from_the_nearest_measured_one_by_speed_index() -> None:
    table = tp.ThroughputTable()
    t = table.get("ResNet-50 (batch size 64)", "A100", 1)
    assert t.estimated
    a100, v100 = tp.GPU_SPECS["A100"], tp.GPU_SPECS["V100"]
    ratio = math.sqrt(a100.fp32_tflops * a100.memory_gb_per_s
                      / (v100.fp32_tflops * v100.memory_gb_per_s))
    assert t.steps_per_second == pytest.approx(5.458 * ratio * tp.RULE_SCALE["fp32"])
    assert "from V100" in t.basis and "FP32 TFLOPS x memory GB/s" in t.basis
    assert "x 0.695 (fitted to err on the slow side)" in t.basis
    unfitted = tp.ThroughputTable(rule_scale=1.0).get("ResNet-50 (batch size 64)", "A100", 1)
    assert unfitted.steps_per_second == pytest.approx(5.458 * ratio)
    assert "fitted" not in unfitted.basis
    # The blend keeps bandwidth-poor parts well below their peak-FP32 ratio (1.9x V100).
    l4 = table.get("ResNet-50 (batch size 64)", "L4", 1)
    assert 0 < l4.steps_per_second < 5.458
    t4 = table.get("ResNet-50 (batch size 64)", "T4", 1)  # the V100 is the reference
    assert "from V100" in t4.basis
    # Without a V100 measurement, the nearest measured speed index: K80 (32) for a T4 (51).
    no_v100 = tp.ThroughputTable(tp.bundled()[tp.bundled()["gpu_model"] != "V100"])
    assert "from K80" in no_v100.get("ResNet-50 (batch size 64)", "T4", 1).basis
    fp16 = tp.ThroughputTable(precision="fp16").get("ResNet-50 (batch size 64)", "H100", 1)
    assert fp16.steps_per_second == pytest.approx(
        5.458 * tp.GPU_SPECS["H100"].speed_index("fp16") / v100.speed_index("fp16")
        * tp.RULE_SCALE["fp16"])


def test_every_catalog_gpu_has_a_sourced_spec() -> None:
    from costsched import catalog

    assert set(catalog.GPU_MODELS) <= set(tp.GPU_SPECS)
    for spec in tp.GPU_SPECS.values():
        assert spec.fp32_tflops > 0 and spec.fp16_tflops >= spec.fp32_tflops
        assert "data sheet" in spec.source


def test_never_silent_and_errors_say_what_is_known() -> None:
    table = tp.ThroughputTable()
    with pytest.raises(InvalidInput, match="no measured throughput"):
        table.get("A3C", "A100", 1, estimate=False)
    with pytest.raises(InvalidInput, match="unknown model 'bert'.*ResNet-50"):
        table.get("bert", "V100")
    with pytest.raises(InvalidInput, match="unknown GPU model 'TPU'"):
        table.get("A3C", "TPU")


def test_user_measurements_override_bundled_ones(user_file: Path) -> None:
    tp.save_user(pd.DataFrame([("resnet50 bs64", "v100", 1, 6.1, "my bench")],
                              columns=tp.COLUMNS))
    table = tp.ThroughputTable.load()
    t = table.get("ResNet-50 (batch size 64)", "V100", 1)
    assert (t.steps_per_second, t.estimated, t.basis) == (6.1, False, "my bench")
    # ... and feed the estimates built on them.
    assert "6.1 steps/s" in table.get("ResNet-50 (batch size 64)", "A100").basis
    # Saving again replaces, never duplicates.
    tp.save_user(pd.DataFrame([("ResNet-50 (batch size 64)", "V100", 1, 6.2, "again")],
                              columns=tp.COLUMNS))
    assert len(tp.load_user()) == 1


def test_lookup_is_get_per_row() -> None:
    table = tp.ThroughputTable()
    sps, est = table.lookup("A3C", ["K80", "V100", "V100", "A100", "Gaudi"], [1, 1, 8, 1, 1])
    assert sps[0] == table.get("A3C", "K80").steps_per_second
    assert est.tolist() == [False, False, True, True, False]
    assert math.isnan(sps[4])


def test_bad_measurement_files_name_row_and_field(tmp_path: Path) -> None:
    path = tmp_path / "m.csv"
    path.write_text("model,gpu_model,gpu_count,steps_per_second\nA3C,V100,1,2\nA3C,V100,0,2\n")
    with pytest.raises(InvalidInput, match=r"m.csv: row 3: field gpu_count 0"):
        tp.read_measurements(path)
    path.write_text("model,gpu\nA3C,V100\n")
    with pytest.raises(InvalidInput, match="missing column"):
        tp.read_measurements(path)


def test_cli_set_import_show(cli, user_file: Path, tmp_path: Path) -> None:
    result = cli("throughput", "set", "my-model", "V100:2", "12.5", "--source", "lab run")
    assert result.exit_code == 0, result.output
    csv = tmp_path / "more.csv"
    csv.write_text("model,gpu_model,gpu_count,steps_per_second\nmy-model,k80,1,1.5\n")
    assert cli("throughput", "import", str(csv)).exit_code == 0
    shown = json.loads(cli("throughput", "show", "--model", "my-model", "--gpu", "V100,K80,A100",
                           "--count", "1", "--count", "2", "--json").stdout)["throughputs"]
    by = {(r["gpu_model"], r["gpu_count"]): r for r in shown}
    assert by[("V100", 2)]["steps_per_second"] == 12.5 and not by[("V100", 2)]["estimated"]
    assert by[("K80", 1)]["steps_per_second"] == 1.5
    assert by[("V100", 1)]["estimated"] and "data-parallel" in by[("V100", 1)]["source"]
    assert by[("A100", 2)]["estimated"]
    listed = json.loads(cli("throughput", "show", "--json").stdout)["throughputs"]
    assert {"my-model", "A3C"} <= {r["model"] for r in listed}


def test_cli_bad_input_exits_2(cli, user_file: Path) -> None:
    result = cli("throughput", "set", "A3C", "V100:x", "2")
    assert result.exit_code == 2
    assert "V100:x" in result.output and "Traceback" not in result.output
    assert cli("throughput", "set", "A3C", "V100", "-1").exit_code == 2
    assert not user_file.exists()


def test_gpu_rule_accuracy_on_the_bundled_measurements() -> None:
    """Predict each measured GPU from another with the GPU rule's speed-index ratio (its
    fitted factor left out: test_throughput_check checks the rule with it); the stated
    accuracy holds."""
    bundled = tp.bundled()
    one = bundled[bundled["gpu_count"] == 1].pivot(index="model", columns="gpu_model",
                                                   values="steps_per_second")
    stated = {("P100", "V100"): 1.35, ("V100", "P100"): 1.35, ("K80", "V100"): 1.7,
              ("V100", "K80"): 1.7, ("K80", "P100"): 1.7, ("P100", "K80"): 1.7}
    for (ref, target), bound in stated.items():
        only_ref = bundled[(bundled["gpu_model"] == ref) & (bundled["gpu_count"] == 1)]
        table = tp.ThroughputTable(only_ref, rule_scale=1.0)
        predicted = pd.Series({m: table.get(m, target).steps_per_second for m in one.index})
        log_err = (predicted / one[target]).map(math.log).abs()
        assert math.exp(log_err.mean()) < bound, (ref, target, math.exp(log_err.mean()))


LM = "LM (batch size 80)"


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
        if (r.model, r.gpu_model) not in one.index:  # published at this count only: as is
            assert not t.capped and t.steps_per_second == r.steps_per_second
            continue
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
    assert a100.steps_per_second == pytest.approx(linear8 * ratio * tp.RULE_SCALE["fp32"])
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


@pytest.mark.parametrize("start", range(0, 240, 24))
def test_an_overlay_looks_up_what_the_table_rebuilt_with_its_rows_does(start: int) -> None:
    """A spec's rows on top of the table (derived for the groups they touch only) give the
    lookups, caps and rows of a table built whole from the merged rows, twice over."""
    table = tp.ThroughputTable()
    for scale in (0.3, 1.0, 3.0):
        top = table.frame.iloc[start:start + 4].assign(
            steps_per_second=lambda f: f["steps_per_second"] * scale)  # noqa: B023
        top.loc[top.index[0], "model"] = top["model"].iloc[0].upper()  # another spelling
        fast = table.overlay(top.to_dict("records")).overlay(top.iloc[:1])
        whole = tp.ThroughputTable(tp._overlay(tp._overlay(
            table.frame, tp.validate_measurements(top)), tp.validate_measurements(top.iloc[:1])))
        pd.testing.assert_frame_equal(fast.frame, whole.frame)
        for model, gpu, count in zip(whole.frame["model"], whole.frame["gpu_model"],
                                     whole.frame["gpu_count"], strict=True):
            for n in sorted({1, int(count), 2 * int(count)}):
                assert fast.get(model, gpu, n) == whole.get(model, gpu, n)
        assert fast.measured_rows().equals(whole.measured_rows())


def test_tables_of_equal_speeds_keys_answer_alike_on_every_gpu(tmp_path: Path) -> None:
    """Two jobs named apart with the same figures (a sweep): equal keys, and equal answers
    wherever they are asked; a different figure or precision is a different key."""
    base = tp.ThroughputTable.load(user_file=tmp_path / "none.csv")  # no user file

    def table(model: str, sps: float, precision: str = "fp32") -> tp.ThroughputTable:
        return base.overlay([{"model": model, "gpu_model": "V100", "gpu_count": 1,
                              "steps_per_second": sps, "source": "spec"}], precision)

    one, two = table("sweep-1", 0.025), table("sweep-2", 0.025)
    assert one.speeds_key("sweep-1") == two.speeds_key("sweep-2")
    for gpu in sorted(tp.GPU_SPECS):
        for count in (1, 2, 8):
            assert one.get("sweep-1", gpu, count).steps_per_second == \
                two.get("sweep-2", gpu, count).steps_per_second
    assert table("sweep-3", 0.05).speeds_key("sweep-3") != one.speeds_key("sweep-1")
    assert table("sweep-4", 0.025, "fp16").speeds_key("sweep-4") != one.speeds_key("sweep-1")
    assert one.speeds_key("unknown-model") != one.speeds_key("sweep-1")
    assert base.speeds_key("resnet50") != one.speeds_key("sweep-1")


def test_a_progress_record_reads_in_words() -> None:
    """The store keeps progress records as NAME=VALUE data (read back to learn speeds);
    the dashboard's events show them in words."""
    from costsched.throughput_learned import progress_record_words, progress_steps

    record = "steps_done=400.0 checkpoint_location=s3://b/ck-400 checkpoint_step=400.0"
    assert progress_steps(record) == 400.0
    assert progress_record_words(record) == (
        "step 400; checkpoint at step 400; checkpoints in s3://b/ck-400")
    assert progress_record_words("steps_done=0.0 checkpoint_location=/x/job-2") == (
        "step 0; checkpoints in /x/job-2")
    assert progress_record_words("not a record") == "not a record"
