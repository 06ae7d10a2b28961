"""`plan` and `migrate` say when a price they use is older than `prices.stale_after`, with
its age, in a note and in --json."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from costsched.service import jobs as service
from costsched.store import PriceStore
from launchers.local import LocalLauncher
from tests.costsched.service.test_jobs import set_prices, write_spec

EXAMPLES = Path(__file__).resolve().parents[3] / "examples"
JOB = str(EXAMPLES / "demo" / "train.yaml")  # us-east-1 spot: the demo's prices only


@pytest.fixture()
def db(cli, tmp_path: Path) -> str:  # noqa: ANN001
    path = str(tmp_path / "p.sqlite")  # spot prices effective 2026-01-01
    assert cli("prices", "import", EXAMPLES / "demo" / "prices-before.csv", "--whole",
               "--new-store", "--db", path).exit_code == 0
    return path


def test_fresh_prices_get_no_note(cli, db: str) -> None:  # noqa: ANN001
    result = cli("plan", JOB, "--at", "2026-01-03", "--top", "3", "--db", db)
    assert result.exit_code == 0, result.output
    assert "older than" not in result.output
    document = json.loads(cli("plan", JOB, "--at", "2026-01-03", "--top", "3", "--db", db,
                              "--json").stdout)
    assert document["rankings"][0]["stale_prices"] == 0


def test_old_prices_are_named_with_their_age(cli, db: str) -> None:  # noqa: ANN001
    result = cli("plan", JOB, "--at", "2026-03-02", "--top", "3", "--db", db)
    assert result.exit_code == 0, result.output
    assert ("all 3 prices are older than 7 days (the oldest from 2026-01-01, "
            "2 mo old)") in result.output
    document = json.loads(cli("plan", JOB, "--at", "2026-03-02", "--top", "3", "--db", db,
                              "--json").stdout)
    assert document["stale_after_hours"] == 168
    job = document["rankings"][0]
    assert job["stale_prices"] == 3
    assert [r["price_age_hours"] for r in job["ranking"]] == [60 * 24] * 3


def test_the_limit_is_the_configurations(cli, db: str,  # noqa: ANN001
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COSTSCHED_PRICES_STALE_AFTER", "90d")
    result = cli("plan", JOB, "--at", "2026-03-02", "--top", "3", "--db", db)
    assert result.exit_code == 0 and "older than" not in result.output


def test_migrate_names_old_prices(cli, tmp_path: Path,  # noqa: ANN001
                                  monkeypatch: pytest.MonkeyPatch) -> None:
    instances = tmp_path / "instances"
    monkeypatch.setenv("COSTSCHED_INSTANCES", str(instances))
    store = PriceStore(str(tmp_path / "store.sqlite"))
    launcher = LocalLauncher(instances, grace_seconds=5)
    set_prices(store, {"us-east-1a": 0.9, "us-east-1b": 1.0},
               datetime.now(timezone.utc) - timedelta(days=30))
    service.launch(store, write_spec(tmp_path), launcher=launcher, wait_seconds=20,
                   checkpoint_root=str(tmp_path / "checkpoints"))
    try:
        argv = ["migrate", "--dry-run", "--db", store.url]
        [advice] = json.loads(cli(*argv, "--json").stdout)
        assert advice["price_age_hours"]["current"] == pytest.approx(30 * 24, abs=1)
        text = cli(*argv).stdout
        assert "note: a price compared is 30 days old" in text
    finally:
        for instance in launcher.instances():
            launcher.terminate(instance.id)
        store.dispose()


def test_the_stale_note_counts_in_words_that_agree() -> None:
    from datetime import datetime, timezone

    from costsched.price_ages import Stale

    at = datetime(2026, 1, 1, tzinfo=timezone.utc)
    assert Stale(2, 5, at, 2094 * 24, 168).note() == (
        "2 of the 5 prices are older than 7 days (the oldest from 2026-01-01, 69 mo old)")
    assert Stale(1, 5, at, 60, 36).note().startswith("1 of the 5 prices is older than 36 h")
    assert Stale(3, 3, at, 60, 168).note().startswith("all 3 prices are older than 7 days")
    assert Stale(2, 2, at, 60, 168).note().startswith("both prices are older than 7 days")
    assert Stale(1, 1, at, 84, 12.5).note() == (
        "the price is older than 12.5 h (from 2026-01-01, 4 days old)")  # one: no 'oldest'


def test_explain_says_the_age_of_the_price_it_multiplies_by(cli, db: str) -> None:  # noqa: ANN001
    """`plan --explain` names the price's age where it uses the price, as the table's note
    does, by the same rule; a fresh price gets no word."""
    argv = ["plan", JOB, "--top", "3", "--db", db, "--explain", "1"]
    old = cli(*argv, "--at", "2026-03-02")
    assert old.exit_code == 0, old.output
    [line] = [x for x in old.stdout.splitlines() if x.startswith("expected cost = ")]
    assert line.endswith(
        "; the price is older than 7 days (from 2026-01-01, 2 mo old): `costsched collect "
        "--cloud aws` or `costsched prices import` brings newer ones (prices.stale_after in "
        "the configuration)"), line
    explained = json.loads(cli(*argv, "--at", "2026-03-02", "--json").stdout)["explain"]
    assert line in explained
    fresh = cli(*argv, "--at", "2026-01-03")
    assert fresh.exit_code == 0, fresh.output
    [line] = [x for x in fresh.stdout.splitlines() if x.startswith("expected cost = ")]
    assert "older than" not in fresh.stdout and line.endswith("/h = " + line.rsplit(" = ", 1)[1])
