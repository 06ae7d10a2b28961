"""Throughput: training steps per second of a model on a GPU model at a GPU count.

Four layers, most trusted first:
1. user measurements (`costsched throughput set/import`, kept in a CSV file, see
   `user_path`) and a job spec's own throughputs, which override
2. throughputs measured by costsched (`throughput_learned.learned_rows`): the median
   steps/s of the newest RECENT_RUNS placements of the same model on the same GPU model
   and count, from the jobs' progress records (`costsched.service.throughputs`); their
   source starts with MEASURED_BY_COSTSCHED. They override
3. the bundled table (`costsched/data/throughputs.csv`: Gavel, OSDI 2020: 26 model
   configurations on K80, P100 and V100 and its multi-GPU table; MLPerf Training results
   of A100, A100-80GB, H100 and H200 nodes, each benchmark its own model). A bundled
   multi-GPU figure faster than linear scaling (n x the 1-GPU figure of the same model and
   GPU model, e.g. LM (batch size 80) on 8 V100s at 8.19x) is looked up capped at n x that
   1-GPU figure: a planner should not count on superlinear scaling not measured by the user.
   User measurements and a job spec's own throughputs are never capped.
   `ThroughputTable.measured_rows` lists the published figure beside the cap; and
4. estimates for what neither measured, by two stated rules (`Throughput.estimated` is
   True and `basis` names the rule and the measurement it started from):

   - GPU count rule (data-parallel scaling): from the nearest measured count m of the same
     GPU model, T(n) = T(m) * (n/m) * SCALING_EFFICIENCY ** log2(n/m), i.e. each doubling
     of GPUs gives SCALING_EFFICIENCY x 2 the throughput (and each halving the inverse).
   - GPU model rule: a roofline-style blend of compute and memory. A GPU's speed index is
     the geometric mean of its peak FP32 TFLOPS and its memory bandwidth (vendors' data
     sheets, `GPU_SPECS`); from the V100 (`REFERENCE_GPU`), or where the model was not
     measured on it from the measured GPU model whose index is nearest (by ratio),
     T(target) = T(reference) * index(target) / index(reference). Training mixes
     compute-bound and memory-bound kernels, and peak FP32 alone overrates the GA10x/AD10x
     parts (A10G, L4: the data sheet counts a second FP32 datapath; 300-600 GB/s of
     memory): for ResNet-50 it would put an L4 at 1.9x a V100, the blend at 0.8x.
     `precision="fp16"` uses tensor-core FP16 peaks instead, for mixed-precision jobs.
     The ratio is then multiplied by RULE_SCALE (fitted so that the rule errs on the
     slow side, `costsched.throughput_check`). Checked on the bundled data (every model,
     one measured GPU predicted from another, `tests/costsched/test_throughput.py`): the
     ratio alone has a geometric-mean error of x1.31 between P100 and V100 and x1.6 to or
       from the K80 (peak FP32 alone: x1.20 and x1.64). Measure (`throughput set`) when it
     matters. The factor cuts estimates made from a speed someone saw: from the unit of an
     assumed hour of work (a task that gives none, `ASSUMED_WORK`) the ratio stands alone,
     so every GPU of a set is estimated alike, whichever is listed first."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from costsched.amounts import ratio
from costsched.catalog import gpu_model_name
from costsched.lazy import numpy as np
from costsched.lazy import pandas as pd
from costsched.model import InvalidInput
from costsched.throughput_rows import (  # noqa: F401 - also the table's names
    COLUMNS,
    ENV_USER_FILE,
    _overlay,
    _overlay_rows,
    bundled,
    bundled_rows,
    frame_rows,
    load_user,
    measured_today,
    measurement_rows,
    model_key,
    read_measurements,
    save_user,
    user_path,
    user_rows,
    valid_rows,
    validate_measurements,
)
from costsched.vocabulary import counted, did_you_mean

SCALING_EFFICIENCY = 0.9  # per doubling of GPUs; a common data-parallel figure, stated not fit
PRECISIONS = ("fp32", "fp16")
MEASURED_BY_COSTSCHED = "measured by costsched"
RECENT_RUNS = 5  # a learned figure is the median of this many newest runs
# The newest measured architecture (tensor cores, HBM2): the closest in kind to every GPU
# since, so estimates scale from it whenever the model was measured on it.
REFERENCE_GPU = "V100"
# The GPU model rule's speed-index ratio is multiplied by this factor, fitted so that the
# rule errs on the slow side: the RULE_QUANTILE-th quantile of published / estimated over
# the leave-one-out check of the bundled published rows (`costsched.throughput_check`,
# which refits it; a test keeps the two equal), never above 1. With it, about three in
# four held-out estimates are below the published figure instead of about half (fp32).
RULE_QUANTILE = 0.25
RULE_SCALE = {"fp32": 0.695, "fp16": 0.765}


@dataclass(frozen=True, slots=True)
class GpuSpec:
    fp32_tflops: float  # peak, non-tensor
    fp16_tflops: float  # peak dense FP16 (tensor cores where present, no sparsity)
    memory_gb_per_s: float  # peak memory bandwidth
    source: str

    def speed_index(self, precision: str = "fp32") -> float:
        """Geometric mean of peak compute (TFLOPS) and memory bandwidth (GB/s)."""
        compute = self.fp32_tflops if precision == "fp32" else self.fp16_tflops
        return math.sqrt(compute * self.memory_gb_per_s)


# Peak figures per GPU from NVIDIA's public data sheets (cloud form factors: SXM where the
# clouds rent SXM parts, PCIe otherwise). One K80 "GPU" is half a K80 board.
GPU_SPECS: dict[str, GpuSpec] = {
    "K80": GpuSpec(4.37, 4.37, 240, "NVIDIA Tesla K80 data sheet (2014): 8.73 TFLOPS FP32 "
                   "and 480 GB/s per 2-GPU board with boost; no faster FP16 path"),
    "P4": GpuSpec(5.5, 5.5, 192, "NVIDIA Tesla P4 data sheet (2016): 5.5 TFLOPS FP32, "
                  "192 GB/s, 8 GB; no faster FP16 path"),
    "P100": GpuSpec(9.3, 18.7, 732, "NVIDIA Tesla P100 PCIe data sheet (2016), 16 GB"),
    "V100": GpuSpec(15.7, 125.0, 900, "NVIDIA Tesla V100 SXM2 data sheet (2017)"),
    "T4": GpuSpec(8.1, 65.0, 320, "NVIDIA T4 data sheet (2019)"),
    "A10G": GpuSpec(31.2, 125.0, 600, "NVIDIA A10 data sheet (2021); AWS publishes no "
                    "separate A10G sheet, so the A10's figures stand in"),
    "L4": GpuSpec(30.3, 121.0, 300, "NVIDIA L4 data sheet (2023), dense FP16"),
    "A100": GpuSpec(19.5, 312.0, 1555, "NVIDIA A100 40GB SXM data sheet (2020), dense FP16"),
    "A100-80GB": GpuSpec(19.5, 312.0, 2039, "NVIDIA A100 80GB SXM data sheet (2021), dense "
                         "FP16"),
    "H100": GpuSpec(67.0, 989.0, 3350, "NVIDIA H100 SXM data sheet (2023), dense FP16"),
    # GCP's A3 Mega: the same H100 SXM part, with more network per GPU.
    "H100-MEGA": GpuSpec(67.0, 989.0, 3350, "NVIDIA H100 SXM data sheet (2023), dense FP16 "
                         "(A3 Mega machines carry H100 SXM GPUs)"),
    "A10": GpuSpec(31.2, 125.0, 600, "NVIDIA A10 data sheet (2021)"),
    "A40": GpuSpec(37.4, 149.7, 696, "NVIDIA A40 data sheet (2020), dense FP16"),
    "L40": GpuSpec(90.5, 181.0, 864, "NVIDIA L40 data sheet (2022), dense FP16"),
    "L40S": GpuSpec(91.6, 362.0, 864, "NVIDIA L40S data sheet (2023), dense FP16 "
                    "(733 TFLOPS with sparsity)"),
    "H200": GpuSpec(67.0, 989.0, 4800, "NVIDIA H200 SXM data sheet (2024), dense FP16 "
                    "(as summarized at itkb.uw.cz, 'NVIDIA H200 vs B300', 2026-06-22)"),
    "GH200": GpuSpec(67.0, 989.0, 4000, "NVIDIA GH200 Grace Hopper data sheet (2023): the "
                     "H100 GPU with 96 GB HBM3 at 4 TB/s, dense FP16"),
    "B200": GpuSpec(80.0, 2250.0, 8000, "NVIDIA HGX B200 data sheet figures at 1,000 W "
                    "(FP32 80, dense FP16 2,250 TFLOPS, 8 TB/s), as tabulated at "
                    "glennklockwood.com/garden/processors/B200"),
    "MI300X": GpuSpec(163.4, 1307.4, 5300, "AMD Instinct MI300X data sheet (2023), dense "
                      "FP16"),
}


@dataclass(frozen=True, slots=True)
class Throughput:
    steps_per_second: float
    estimated: bool
    basis: str  # where the figure comes from, or the rule that estimated it
    # A bundled multi-GPU figure capped at linear scaling: the published figure.
    published: float | None = None

    @property
    def capped(self) -> bool:
        return self.published is not None


_Key = tuple[str, str, int]  # (model key, GPU model, GPU count)


@cache
def _bundled_rows() -> frozenset[tuple[_Key, float, str]]:
    """The bundled rows, whole: a table's row is bundled when it is one of these (a row
    from the user or a job spec differs at least in its source)."""
    return frozenset(((model_key(model), gpu, int(count)), float(sps), source)
                     for model, gpu, count, sps, source in bundled_rows())


def _capped_basis(source: str, published: float, count: int, one: float) -> str:
    return (f"{source}; capped at linear scaling: published {published:.4g} steps/s is "
            f"{ratio(published / one)} the 1-GPU figure, used as {count}x {one:.4g}")


def _check_precision(precision: str) -> None:
    if precision not in PRECISIONS:
        raise InvalidInput(f"precision {precision!r}: expected one of {', '.join(PRECISIONS)}")


class ThroughputTable:
    """Measured rows, looked up by model, GPU model and GPU count; estimates otherwise."""

    def __init__(self, frame: pd.DataFrame | None = None, precision: str = "fp32", *,
                 rule_scale: float | None = None) -> None:
        """`rule_scale`: the GPU model rule's factor (default RULE_SCALE of the precision;
        1 for the rule unfitted)."""
        _check_precision(precision)
        self.precision = precision
        self.rule_scale = RULE_SCALE[precision] if rule_scale is None else rule_scale
        self._frame: pd.DataFrame | None = None if frame is None else \
            frame[COLUMNS].reset_index(drop=True)
        self._layers: tuple[ThroughputTable, list[tuple]] | None = None
        self._table_rows: list[tuple] | None = list(bundled_rows()) if frame is None else \
            frame_rows(self._frame)  # type: ignore[arg-type]
        rows: dict[_Key, tuple[float, str]] = {
            (model_key(m), g, int(c)): (float(sps), source)
            for m, g, c, sps, source in self._table_rows}
        self._index_rows(rows, {model_key(r[0]): r[0] for r in self._table_rows})

    @classmethod
    def of_rows(cls, rows: Iterable[tuple], precision: str = "fp32") -> ThroughputTable:
        """A table of `rows` (COLUMNS), its frame built only when asked for."""
        table = cls.__new__(cls)
        _check_precision(precision)
        table.precision = precision
        table.rule_scale = RULE_SCALE[precision]
        table._frame, table._layers = None, None
        table._table_rows = list(rows)
        table._index_rows({(model_key(m), g, int(c)): (float(sps), source)
                           for m, g, c, sps, source in table._table_rows},
                          {model_key(r[0]): r[0] for r in table._table_rows})
        return table

    def rows(self) -> list[tuple]:
        """The table's rows (COLUMNS), an overlay's put together when first asked for."""
        if self._table_rows is None:
            base, top = self._layers  # type: ignore[misc]
            self._table_rows = _overlay_rows(base.rows(), top)
        return self._table_rows

    def _index_rows(self, rows: dict[_Key, tuple[float, str]], names: dict[str, str]) -> None:
        """The lookups from the table's rows (by key, the last of a key winning)."""
        self._rows, self._names = rows, names
        self._index: dict[_Key, tuple[float, str]] = {}
        self._published: dict[_Key, float] = {}
        self._counts: dict[tuple[str, str], list[int]] = {}
        self._derive(list(rows))

    def _derive(self, keys: list[_Key]) -> None:
        """The lookup, linear cap and GPU counts of each of `keys` (whole (model, GPU)
        groups): a bundled multi-GPU row faster than n x the table's 1-GPU figure is
        looked up as n x that figure."""
        bundled_rows = _bundled_rows()
        for key in keys:
            sps, source = self._rows[key]
            one = self._rows.get((key[0], key[1], 1))
            if (key[2] > 1 and one is not None and sps > key[2] * one[0]
                    and (key, sps, source) in bundled_rows):
                self._published[key] = sps
                self._index[key] = (key[2] * one[0], _capped_basis(source, sps, key[2], one[0]))
            else:
                self._index[key] = (sps, source)
            self._counts.setdefault((key[0], key[1]), []).append(key[2])
        for group in {(k[0], k[1]) for k in keys}:
            self._counts[group].sort()

    @property
    def frame(self) -> pd.DataFrame:
        """The table's rows (model, gpu_model, gpu_count, steps_per_second, source)."""
        if self._frame is None:  # built from its rows when first asked for
            self._frame = pd.DataFrame(self.rows(), columns=COLUMNS)
        return self._frame

    @staticmethod
    def _superlinear_bundled(rows: dict[_Key, tuple[float, str]]) -> dict[_Key, float]:
        """Bundled multi-GPU rows faster than n x the table's 1-GPU figure: their figures."""
        bundled_rows = _bundled_rows()
        out = {}
        for (key, gpu, count), (sps, source) in rows.items():
            one = rows.get((key, gpu, 1))
            if (count > 1 and one is not None and sps > count * one[0]
                    and ((key, gpu, count), sps, source) in bundled_rows):
                out[(key, gpu, count)] = sps
        return out

    @classmethod
    def load(cls, user_file: Path | None = None, precision: str = "fp32",
             learned: pd.DataFrame | None = None) -> ThroughputTable:
        """The bundled table, with what costsched measured (`learned_rows`) on top of it
        and the user's measurements on top of both."""
        base = bundled_rows() if learned is None else \
            _overlay_rows(bundled_rows(), frame_rows(learned))
        return cls.of_rows(_overlay_rows(base, user_rows(user_file)), precision=precision)

    def overlay(self, rows: pd.DataFrame | Sequence[Mapping],
                precision: str | None = None) -> ThroughputTable:
        """A new table with `rows` (e.g. a job spec's own measurements: a frame, or records
        with the frame's columns) on top of this one."""
        top = (list(validate_measurements(rows).itertuples(index=False, name=None))
               if hasattr(rows, "columns") else valid_rows(rows))  # type: ignore[arg-type]
        precision = precision or self.precision
        _check_precision(precision)
        # From this table's lookups, not its frame: a job spec's few rows cost what they
        # are, not a rebuild of the whole table (a pass resolves every job's spec).
        table = ThroughputTable.__new__(ThroughputTable)
        table.precision = precision
        table.rule_scale = (self.rule_scale if precision == self.precision
                            else RULE_SCALE[precision])
        table._frame, table._table_rows = None, None
        table._layers = (self, top)
        table._rows, table._names = dict(self._rows), dict(self._names)
        for model, gpu, count, sps, source in top:
            key = (model_key(model), gpu, int(count))
            table._rows.pop(key, None)  # a replaced row goes to the end, as in the frame
            table._rows[key] = (float(sps), source)
            table._names[key[0]] = model
        # Only the (model, GPU) groups the rows touch are derived again.
        touched = {(model_key(model), gpu) for model, gpu, *_ in top}
        table._index = {k: v for k, v in self._index.items() if (k[0], k[1]) not in touched}
        table._published = {k: v for k, v in self._published.items()
                            if (k[0], k[1]) not in touched}
        table._counts = {g: c for g, c in self._counts.items() if g not in touched}
        table._derive([k for k in table._rows if (k[0], k[1]) in touched])
        return table

    def speeds_key(self, model: str) -> tuple | None:
        """What `get(model, ...)`'s steps per second on every GPU depend on: the precision
        and the model's own rows. Two tables whose keys are equal answer alike, so a pass
        makes one market view per key rather than per job (a sweep's jobs, each its own
        name). None for a kind of table whose answers this does not describe."""
        if type(self) is not ThroughputTable:
            return None
        keys = self.__dict__.setdefault("_speeds_keys", {})
        if model not in keys:
            key = model_key(model)
            rows = tuple(sorted((gpu, count, value[0]) for (k, gpu, count), value
                                in self._index.items() if k == key))
            keys[model] = (self.precision, key in self._names, rows)
        return keys[model]

    def models(self) -> list[str]:
        return sorted({str(r[0]) for r in self.rows()})

    def model_keys(self) -> set[str]:
        """The keys (`model_key`) of the table's models."""
        return set(self._names)

    def canonical(self, model: str) -> str:
        """The table's name of a model; InvalidInput listing the known ones if absent."""
        try:
            return self._names[model_key(model)]
        except KeyError:
            raise InvalidInput(
                f"unknown model {model!r}: expected one of {', '.join(self.models())} "
                "(or give measured throughputs)" + did_you_mean(model, self.models())
            ) from None

    def measured_rows(self) -> pd.DataFrame:
        """The measured rows with their figures as given (published), and `capped` and
        `capped_steps_per_second` (the linear cap lookups use; NaN where not capped)."""
        keys = zip(self.frame["model"].map(model_key), self.frame["gpu_model"],
                   self.frame["gpu_count"].astype(int), strict=True)
        caps = [self._index[k][0] if k in self._published else math.nan for k in keys]
        return self.frame.assign(capped=[not math.isnan(c) for c in caps],
                                 capped_steps_per_second=caps)

    def measured(self, model: str, gpu_model: str, gpu_count: int = 1) -> Throughput | None:
        """The measured figure (a superlinear bundled one capped at linear), or None."""
        key = (model_key(model), gpu_model, int(gpu_count))
        found = self._index.get(key)
        if found is None:
            return None
        return Throughput(found[0], estimated=False, basis=found[1],
                          published=self._published.get(key))

    def get(self, model: str, gpu_model: str, gpu_count: int = 1, *,
            estimate: bool = True) -> Throughput:
        """The measured throughput, else (with `estimate`) the stated estimate.

        InvalidInput when the model is unknown, or when nothing is measured and `estimate`
        is False. Answers are kept (a table does not change once built): a pass asks the
        same few (GPU, count) pairs for every job.
        """
        asked = (model, gpu_model, gpu_count, estimate)
        answers = self.__dict__.setdefault("_answers", {})
        if asked not in answers:
            try:
                answers[asked] = self._get(model, gpu_model, gpu_count, estimate)
            except InvalidInput as exc:
                answers[asked] = str(exc)
        answer = answers[asked]
        if isinstance(answer, str):
            raise InvalidInput(answer)
        return answer

    def _get(self, model: str, gpu_model: str, gpu_count: int, estimate: bool) -> Throughput:
        self.canonical(model)
        gpu = gpu_model_name(gpu_model)
        count = int(gpu_count)
        if count < 1:
            raise InvalidInput(f"gpu_count {gpu_count}: expected a whole number >= 1")
        found = self.measured(model, gpu, count)
        if found is not None:
            return found
        if not estimate:
            raise InvalidInput(f"no measured throughput for {model!r} on {count}x{gpu}")
        key = model_key(model)
        if (key, gpu) in self._counts:
            return self._scale_count(model, gpu, count)
        return self._scale_gpu(model, gpu, count)

    def sources(self, model: str, gpu_models: np.ndarray | pd.Series,
                gpu_counts: np.ndarray | pd.Series) -> np.ndarray:
        """Where each (GPU model, count) row's figure comes from (`get`'s basis); "" where
        the GPU model is not in the spec table."""
        gpus = np.asarray(gpu_models, dtype=object)
        counts = np.asarray(gpu_counts, dtype=int)
        codes, uniques = pd.factorize(pd.MultiIndex.from_arrays([gpus, counts]))
        known = {g.upper() for g in GPU_SPECS}
        out = np.array([self.get(model, g, c).basis if str(g).upper() in known else ""
                        for g, c in uniques] or [""], dtype=object)
        return out[codes] if len(codes) else np.array([], dtype=object)

    def lookup(self, model: str, gpu_models: np.ndarray | pd.Series,
               gpu_counts: np.ndarray | pd.Series) -> tuple[np.ndarray, np.ndarray]:
        """Vectorized `get`: steps/s and an `estimated` flag per (GPU model, count) row.

        GPU models outside the spec table get NaN (the optimizer treats them as unusable).
        """
        gpus = np.asarray(gpu_models, dtype=object)
        counts = np.asarray(gpu_counts, dtype=int)
        pairs = pd.MultiIndex.from_arrays([gpus, counts])
        codes, uniques = pd.factorize(pairs)
        sps = np.full(len(uniques), np.nan)
        est = np.zeros(len(uniques), dtype=bool)
        for i, (gpu, count) in enumerate(uniques):
            if str(gpu).upper() not in {g.upper() for g in GPU_SPECS}:
                continue
            t = self.get(model, gpu, count)
            sps[i], est[i] = t.steps_per_second, t.estimated
        return sps[codes], est[codes]

    # --- estimation rules ---------------------------------------------------------------

    def _scale_count(self, model: str, gpu: str, count: int) -> Throughput:
        counts = self._counts[(model_key(model), gpu)]
        below = [c for c in counts if c <= count]
        ref = below[-1] if below else counts[0]
        base = self.measured(model, gpu, ref)
        assert base is not None
        doublings = math.log2(count / ref)
        sps = base.steps_per_second * (count / ref) * SCALING_EFFICIENCY**doublings
        capped = ", capped at linear scaling" if base.capped else ""
        basis = (f"estimate: {count}x{gpu} from measured {ref}x{gpu} "
                 f"({base.steps_per_second:.4g} steps/s{capped}) by data-parallel scaling, "
                 f"{SCALING_EFFICIENCY:.0%} efficiency per doubling")
        return Throughput(sps, estimated=True, basis=basis)

    def _scale_gpu(self, model: str, gpu: str, count: int) -> Throughput:
        key = model_key(model)
        measured_gpus = sorted({g for k, g in self._counts if k == key})
        if not measured_gpus:
            raise InvalidInput(f"no throughput measured for {model!r} on any GPU model")
        target = self._peak(gpu)
        if REFERENCE_GPU in measured_gpus:
            ref_gpu = REFERENCE_GPU
        else:
            ref_gpu = min(measured_gpus,
                          key=lambda g: (abs(math.log(self._peak(g) / target)), g))
        ref = self.get(model, ref_gpu, count)
        ratio = target / self._peak(ref_gpu)
        rule = f"the ratio of sqrt(peak {self.precision.upper()} TFLOPS x memory GB/s) " \
               "(vendor data sheets)"
        unit = self._unit_only(key, ref_gpu)
        if unit:
            # Hours (assumed, or given without a reference_gpu) on the unit GPU of a task's
            # set (the slowest, `work.unit_gpu`): that GPU is a name for the unit, not a
            # speed anyone saw. The haircut would make every GPU but the unit slower: all
            # are estimated alike, whether the hours are given or not.
            return Throughput(ref.steps_per_second * ratio, estimated=True, basis=(
                f"estimate: {gpu} against {ref_gpu} (the unit of {unit}) x "
                f"{ratio:.3g}, {rule}, not cut to the slow side since no GPU's speed is "
                "known"))
        sps = ref.steps_per_second * ratio * self.rule_scale
        fitted = (f" x {self.rule_scale:.3g} (fitted to err on the slow side)"
                  if self.rule_scale != 1 else "")
        basis = (f"estimate: {gpu} from {ref_gpu} ({ref.steps_per_second:.4g} steps/s at "
                 f"{counted(count, 'GPU')}, {_kind(ref)}) x {ratio:.3g}, {rule}{fitted}")
        return Throughput(sps, estimated=True, basis=basis)

    def _unit_only(self, key: str, gpu: str) -> str:
        """What the model's figures on `gpu` are the unit of, where they are only a unit:
        an assumed hour of work, or a task's hours given on the GPU costsched chose;
        '' where one is a speed (measured, or hours on a reference_gpu written)."""
        bases = [self._index[(key, gpu, c)][1] for c in self._counts[(key, gpu)]]
        if any(assumed_basis(b) for b in bases):
            return ASSUMED_WORDS
        if any(UNIT_CHOSEN in b for b in bases):
            return "the task's hours of work"
        return ""

    def _peak(self, gpu: str) -> float:
        return GPU_SPECS[gpu].speed_index(self.precision)


# A job file that gives no work is planned on an hour of it at one step per second: its
# figure's basis says so with these words, and no view calls that figure measured.
ASSUMED_WORK = "assumed (no work given)"


def assumed_basis(basis: str) -> bool:
    """Whether a throughput's basis is an assumed hour of work (not a speed anyone saw)."""
    return ASSUMED_WORK in basis or basis == ASSUMED_WORDS


ASSUMED_WORDS = "an assumed hour of work"
# A task's hours given on no reference_gpu are on its slowest GPU, which costsched chose:
# that GPU is the unit, as of an assumed hour (`_unit_only`), not a speed anyone saw.
UNIT_CHOSEN = "given on the task's slowest GPU, its unit"


def _kind(t: Throughput) -> str:
    if t.estimated:
        return "estimated"
    if assumed_basis(t.basis):
        return ASSUMED_WORDS
    if " h on " in t.basis:  # hours of work given: a unit speed, not a measured one
        return "from the hours of work given"
    return "measured, capped at linear scaling" if t.capped else "measured"
