"""One rule for what a start costs: the decision model's start at the offering's price,
counted alike by the plan and a launch's line (its first start) and by a `start` after a
stop's check and hint (its restart); and a budget's stopped jobs are those its cap keeps
stopped now, not those started again since. In-memory launcher, SQLite store."""

from __future__ import annotations

import re
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
import yaml

from costsched import own_budget
from costsched.config import BudgetsConfig
from costsched.model import InvalidInput
from costsched.report.data import _stopped_at_budget
from costsched.service import jobs as service
from costsched.service.jobs import caps
from costsched.service.jobs.budget_launch import launch_fits
from costsched.store import PriceStore
from tests.costsched.migration.test_edges import FakeLauncher
from tests.costsched.service.test_jobs import set_prices

# The launcher these jobs launch on stands in for a cloud's: its instance boots, and a plan
# counts that start as `launch` there does.
pytestmark = pytest.mark.usefixtures("cloud_launcher")

HINT = re.compile(r"give it enough: `costsched start rule --budget ([0-9.]+)` \(\$([0-9.]+) "
                  r"spent \+ \$([0-9.]+)\* expected for its [0-9,]+ steps left \+ \$([0-9.]+) "
                  r"to start it \+ \$([0-9.]+) for the next watch interval"
                  r"(?:; their exact sum rounded up to the cent)?\)"
                  r"; its steps left: \$[0-9.]+\* \([^;]*\)"
                  r"(?:; that amount also holds its rest taking about [0-9]+ s longer than "
                  r"priced(?: \([0-9]+ s charged ahead \+ [0-9]+ s its rounding up adds, "
                  r"less [0-9]+ s of the watch's margins\))?)?; its start: "
                  r"0.2522 h to get an instance up and the job going again "
                  r"from its checkpoint = 10 min boot and set-up "
                  r"\(\[migration\] restart_minutes\) \+ 5 min warm-up \(\[migration\] "
                  r"warmup_minutes\) \+ [0-9.]+ min to copy the 1 GB checkpoint")


def _spec(tmp_path: Path, budget: float) -> Path:
    """An hour of work at $1/h; its restart 15 min and 8 s (the 1 GB checkpoint's copy)."""
    path = tmp_path / "rule.yaml"
    path.write_text(yaml.safe_dump({
        "name": "rule", "throughputs": {"V100": 1.0}, "steps": 3600, "run": "true",
        "constraints": {"regions": ["us-east-1"], "markets": ["spot"], "budget": budget},
        "checkpoint": {"interval_minutes": 30, "size_gb": 1.0}}))
    return path


@pytest.fixture()
def launched(store: PriceStore, tmp_path: Path) -> tuple[FakeLauncher, int, Path]:
    set_prices(store, {"us-east-1a": 1.0}, datetime.now(timezone.utc) - timedelta(hours=1))
    launcher = FakeLauncher()
    spec = _spec(tmp_path, 5)
    [job] = service.launch(store, [spec], launcher=launcher,
                           checkpoint_root=str(tmp_path / "ckpt"))
    return launcher, job.id, spec


def test_the_start_is_counted_alike_by_the_check_and_the_hint(
        store: PriceStore, launched) -> None:
    launcher, job, spec = launched
    service.stop(store, launcher, job)
    # The launch's line is the plan's figure, its first start in it (10 min boot + 5 min
    # warm-up, at $1/h: no checkpoint to copy); a start after a stop counts its restart:
    # those and the 1 GB copy.
    [fit] = launch_fits(store, [spec], BudgetsConfig(), datetime.now(timezone.utc))
    assert fit.start_usd == pytest.approx(0.25 * 1.0)
    assert "$0.25 for 0.25 h to start it, each at $1.0000/h; " in fit.line()
    assert ("its start: 0.25 h to get an instance up and the job started = 10 min boot"
            in fit.line())
    start_usd = (0.25 + 8 / 3600) * 1.0

    # Enough for what it spent, its rest and the next interval, not for its start (the
    # trial's `--budget 0.004`): refused, with the amount that is enough.
    with pytest.raises(InvalidInput) as refused:
        service.start(store, launcher, job, budget=1.1)
    found = HINT.search(str(refused.value))
    assert found, str(refused.value)
    amount, spent, rest, start, ahead = (float(found[i]) for i in range(1, 6))
    assert start == pytest.approx(start_usd, abs=1e-4)  # the restart the model prices
    assert 1.1 < spent + rest + start + ahead <= amount
    places = len(found[1].split(".")[1])
    # Just under the amount named: refused by the same rule, naming the same amount.
    with pytest.raises(InvalidInput, match=re.escape(f"--budget {found[1]}`")):
        service.start(store, launcher, job, budget=amount - 10 ** -places)
    assert store.jobs.get(job).state == "stopped"
    # The amount named: started.
    assert service.start(store, launcher, job, budget=amount).state == "running"


def stop_at_cap(store: PriceStore, launcher: FakeLauncher, job: int,
                monkeypatch: pytest.MonkeyPatch) -> list:
    """The watch's events once it stops the `launched` job at its own budget, lowered
    under its rest (an hour, $1)."""
    monkeypatch.setattr(caps, "CHECKPOINT_WAIT_SECONDS", 0.0)
    now = datetime.now(timezone.utc)
    own_budget.raise_budget(store, job, 0.5, at=now)  # less than its rest (an hour, $1)
    return caps.enforce(store, launcher, BudgetsConfig(), now, interval_seconds=6 * 3600)


def test_a_budget_says_stopped_at_its_cap_only_while_the_cap_keeps_the_job_stopped(
        store: PriceStore, launched, monkeypatch: pytest.MonkeyPatch) -> None:
    launcher, job, _ = launched
    events = stop_at_cap(store, launcher, job, monkeypatch)
    now = datetime.now(timezone.utc)
    # The daemon's log ('job 3: ...') names a job's own budget in words.
    assert [str(e).split(": ")[1] for e in events if e.kind == "budget"][-1:] == [
        "stopped at its own budget"]
    record = store.jobs.get(job)
    assert record.state == "stopped"
    [state] = caps.budget_states(store, BudgetsConfig(), now, 30)
    assert state.stopped == (job,)
    assert _stopped_at_budget(store, [record], {job: 5.0}) == {job}

    assert service.start(store, launcher, job, budget=10).state == "running"
    record = store.jobs.get(job)
    [state] = caps.budget_states(store, BudgetsConfig(), datetime.now(timezone.utc), 30)
    assert state.stopped == () and state.running == (job,)
    assert _stopped_at_budget(store, [record], {job: 10.0}) == set()
    # Stopped again by the user: not its cap's doing.
    service.stop(store, launcher, job)
    record = store.jobs.get(job)
    assert own_budget.capped_now(store, [record]) == {}
    [state] = caps.budget_states(store, BudgetsConfig(), datetime.now(timezone.utc), 30)
    assert state.stopped == ()


def test_a_stop_at_a_cap_reads_back_in_its_words_and_the_older_ones() -> None:
    assert own_budget.stopped_at("stopped at its own budget: $1 spent", 3) == ""
    assert own_budget.stopped_at("stopped at budget job 3 (kmeans-cap): $1 spent", 3) == ""
    assert own_budget.stopped_at("stopped at budget vision: $1 spent", 3) == "vision"
    assert own_budget.stopped_at("stopped by the user", 3) is None


def test_a_budget_reads_at_the_precision_of_the_line_that_stops_a_job_at_it() -> None:
    from costsched.service.jobs.decider import budget_verdict

    said = budget_verdict("job 3 (kmeans-cap)", 0.0035, 0.001, 0.004)
    assert said == ("$0.0035 spent + $0.0010 for the next watch interval would pass the "
                    "budget of $0.0040")  # one line, one precision
