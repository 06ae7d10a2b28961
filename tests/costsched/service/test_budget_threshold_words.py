"""A budget's threshold line writes its spend at the precision at which the share it says
and the amounts agree, its budget at it too (one line, one precision): $0.0775 of $0.1000
is past 50%, not yet 80%, and never reads as '$0.08 of $0.10' (80%) under a 50% line; a
pass whose spend crossed two thresholds at once says the highest of them, once; a notice
said before at other decimals is not said again."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from costsched.service.jobs import caps
from costsched.store import PriceStore

AT = pd.Timestamp("2026-01-01T00:00:00Z").to_pydatetime()


@pytest.fixture
def store(db_path: Path) -> PriceStore:
    return PriceStore(f"sqlite:///{db_path}")


def _said(store: PriceStore, spent: float, usd: float = 0.10) -> list[str]:
    job = store.jobs.create("t", {"spec": {"name": "t", "run": "true"}}, 10, at=AT)
    state = caps.BudgetState(f"job {job} (t)", "job", usd, "total", spent, 0.0, spent,
                             jobs=(job,), running=(job,))
    return [e.partition(": ")[2] for e in caps._thresholds(store, state, [0.5, 0.8, 1.0], AT)]  # noqa: SLF001


def test_a_threshold_line_s_spend_reads_within_the_share_it_says(store: PriceStore) -> None:
    assert _said(store, 0.0775) == ["its budget reached 50% of $0.1000 (total): $0.0775 of "
                                    "$0.1000 spent"]


def test_a_spend_just_under_the_next_threshold_never_reads_as_it(store: PriceStore) -> None:
    # $79.996 of $100 at cents would read $80.00: 80%, which it has not reached.
    [line] = _said(store, 79.996, usd=100)
    assert line.endswith(": $79.996 of $100.000 spent"), line


def test_a_pass_that_crosses_two_thresholds_says_the_highest_once(store: PriceStore) -> None:
    # (No earlier check foresaw the 80% warning: it says it comes late.)
    assert _said(store, 0.085) == [
        "its budget reached 80% of $0.1000 (total): $0.0850 of $0.1000 spent; late: no "
        "earlier check foresaw it"]


def test_a_spend_past_every_threshold_at_once_is_one_notice(store: PriceStore) -> None:
    # 107% of the budget at the first pass that saw it (one watch interval's overrun).
    assert _said(store, 0.0096, usd=0.009) == [
        "its budget reached 100% of $0.0090 (total): $0.0096 of $0.0090 spent"]


def test_a_threshold_below_one_said_is_not_said_after_it(store: PriceStore) -> None:
    job = store.jobs.create("t", {"spec": {"name": "t", "run": "true"}}, 10, at=AT)

    def said(spent: float) -> list[str]:
        state = caps.BudgetState(f"job {job} (t)", "job", 0.10, "total", spent, 0.0, spent,
                                 jobs=(job,), running=(job,))
        return [e.partition(": ")[2].split(":")[0]
                for e in caps._thresholds(store, state, [0.5, 0.8, 1.0], AT)]  # noqa: SLF001

    assert said(0.085) == ["its budget reached 80% of $0.1000 (total)"]
    assert said(0.09) == []
    assert said(0.10) == ["its budget reached 100% of $0.10 (total)"]


def test_a_round_spend_reads_at_cents(store: PriceStore) -> None:
    assert _said(store, 3.0, usd=4.0) == ["its budget reached 50% of $4.00 (total): $3.00 of "
                                          "$4.00 spent"]


def test_a_notice_said_before_at_other_decimals_is_not_said_again(store: PriceStore) -> None:
    job = store.jobs.create("t", {"spec": {"name": "t", "run": "true"}}, 10, at=AT)
    store.jobs.note(job, "budget", "its budget reached 50% of $0.10 (total): $0.0775 of "
                    "$0.10 spent", at=AT)  # (as an older costsched wrote it)
    state = caps.BudgetState(f"job {job} (t)", "job", 0.10, "total", 0.0776, 0.0, 0.0776,
                             jobs=(job,), running=(job,))
    assert caps._thresholds(store, state, [0.5, 0.8, 1.0], AT) == []  # noqa: SLF001
    other = caps.BudgetState(f"job {job} (t)", "job", 0.12, "total", 0.0776, 0.0, 0.0776,
                             jobs=(job,), running=(job,))  # a raised budget: said anew
    assert len(caps._thresholds(store, other, [0.5, 0.8, 1.0], AT)) == 1  # noqa: SLF001
