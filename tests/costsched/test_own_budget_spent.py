"""A job's whole-life spend against its budget is its bill (`costs.job_costs`), the same
figure to the last bit: the cap's check and `status` never read two sums of one job."""

from __future__ import annotations

from costsched import costs, own_budget
from costsched.store import PriceStore
from tests.costsched.test_costs import EAST_A, EAST_B, at, new_job, observe, place


def test_whole_life_spend_is_the_bill(store: PriceStore) -> None:
    # Three placements billed $0.1, $0.2 and $0.3 (an hour each at those prices): a sum
    # of them compensated for rounding reads 0.6, the bill's 0.6000000000000001.
    observe(store, EAST_A, [(-2, 0.1)])
    observe(store, EAST_B, [(-2, 0.2)])
    job = new_job(store)
    for n, key in enumerate([EAST_A, EAST_B]):
        place(store, job, key, n, usd_per_hour=0.1)
        store.jobs.end_placement(job, at(n + 1))
    observe(store, EAST_A, [(1.5, 0.3)])
    place(store, job, EAST_A, 2, usd_per_hour=0.3)
    store.jobs.end_placement(job, at(3))
    placed = store.jobs.placement_rows([job])
    bill = costs.job_costs(store, [job], now=at(5), checkpoint_gb={job: 0.0},
                           placements=placed)[job]
    assert [round(c.usd, 9) for c in bill.charged] == [0.1, 0.2, 0.3]
    spent = own_budget.spent(store, placed, None, at(5), {job: 0.0}, {job: 1})
    assert spent[job] == bill.total_usd
