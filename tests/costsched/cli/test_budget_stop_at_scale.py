"""A stop at a job's own budget's cap reads its spend at the decimals `status`'s cost
column reads the job's spend at beside it (four decimals, `amounts.CHARGED`), whatever
smaller charge another job settled: one figure, one precision, in one output.
In-memory launcher, SQLite store."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import yaml

from costsched.service import jobs as service
from costsched.store import PriceStore
from tests.costsched.cli.test_budget_stop_spent_alike import stopped_at_cap
from tests.costsched.service.test_budget_over_cap import _launched


def _short_job(store: PriceStore, tmp_path: Path, launcher: object, seconds: float) -> None:
    """A second job on the same offering, stopped after `seconds`: its charge, settled,
    is the store's smallest (`$0.00056` for 2 s at $1/h), which sets no precision."""
    spec = {"name": "short", "throughputs": {"V100": 0.5}, "steps": 2000, "run": "true",
            "constraints": {"regions": ["us-east-1"], "markets": ["spot"]},
            "checkpoint": {"interval_minutes": 30, "size_gb": 1.0}}
    path = tmp_path / "short.yaml"
    path.write_text(yaml.safe_dump(spec))
    [job] = service.launch(store, path, launcher=launcher,
                           checkpoint_root=str(tmp_path / "ckpt-short"))
    [placed] = store.jobs.placement_rows([job.id])
    service.stop(store, launcher, job.id, at=placed.start_at + timedelta(seconds=seconds))


def test_the_stop_line_reads_the_spend_at_the_cost_columns_scale(
        store: PriceStore, tmp_path: Path) -> None:
    from costsched.cli.status_lines import view_scale, written_costs

    job_id, launcher = _launched(store, tmp_path)
    _short_job(store, tmp_path, launcher, 2.0)
    # A spend of 19 s at $1/h ($0.005278) beside the store's smallest charge, $0.00056:
    # four decimals all the same. Its budget holds 18 s and a watch interval: it stops at 19 s.
    event, stopped, _ = stopped_at_cap(store, launcher, job_id, 18, 19)
    shown = service.status(store, launcher)
    scale = view_scale(shown)
    assert scale.usd == 4, scale
    spent = stopped.group(1)
    assert len(spent.split(".")[1]) == scale.usd, (event, scale)
    # ... and it is the figure the column writes for the job.
    written = written_costs(shown)[job_id][1]
    assert float(spent) == round(written, scale.usd), (event, written)
