"""`report --json` writes every amount of money as the other JSON outputs do: the exact
figure at 12 significant digits (`amounts.exact`), with no float noise, in every table,
the totals and the budgets now (an older output: `"used": 0.00046444999999999993`,
`"spent_by_job": {"2": 0.0023222499999999997}`)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

from costsched.store import PriceStore
from tests.costsched.test_costs import EAST_A, at, observe

# Keys whose numbers are money, or made of money alone (a budget's share used), besides
# those that name dollars ('usd', '..._usd', 'usd_per...').
MONEY_MAPS = {"spent_by_job"}
SHARES = {"used"}


def _money(document: object, key: str = "") -> Iterator[tuple[str, float]]:
    if isinstance(document, dict):
        for k, v in document.items():
            if k in MONEY_MAPS and isinstance(v, dict):
                yield from ((f"{k}.{j}", u) for j, u in v.items())
            else:
                yield from _money(v, str(k))
    elif isinstance(document, list):
        for v in document:
            yield from _money(v, key)
    elif isinstance(document, float) and (key == "usd" or key.endswith("_usd")
                                          or key.startswith("usd_per") or key in SHARES):
        yield key, document


def _noisy(value: float) -> bool:
    return float(f"{value:.12g}") != value


def test_no_amount_in_the_report_json_has_float_noise(db_path: Path, cli) -> None:  # noqa: ANN001
    store = PriceStore(str(db_path))
    observe(store, EAST_A, [(0, 0.07962)])
    for n, seconds in enumerate((105, 50, 99, 3)):  # $0.0023222499999999997 and others
        spec = {"name": f"moons-{n}", "run": "true", "steps": 10,
                "constraints": {"budget": 5.0}}
        job = store.jobs.create(f"moons-{n}", {"spec": spec, "source": "t",
                                               "launcher": "local"}, 10, at=at(1))
        store.jobs.transition(job, "running", at=at(1))
        store.jobs.place(job, EAST_A, gpu_model="V100", gpu_count=1, at=at(1),
                         usd_per_hour=0.07962, reason="launch", instance=f"i-{n}")
        store.jobs.end_placement(job, at(1) + timedelta(seconds=seconds))
        store.jobs.transition(job, "succeeded", at=at(1) + timedelta(seconds=seconds))
    store.dispose()
    out = cli("report", "--until", at(2).isoformat(), "--json")
    assert out.exit_code == 0, out.output
    document = json.loads(out.stdout)
    found = list(_money(document))
    assert any(k.startswith("spent_by_job") for k, _ in found), document["budgets_now"]
    assert any(k == "used" for k, _ in found), document["budgets_now"]
    noisy = [(k, v) for k, v in found if _noisy(v)]
    assert not noisy, noisy
