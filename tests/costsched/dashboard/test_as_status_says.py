"""The dashboard says what `status` and `report` say, by the same rules, as a user reads it
in a real headless Chromium: a job's placement rows multiply out (hours x $/h, as
written, read as the cost) with the figures `status` prints; a baseline on an estimated
speed is marked `*` on the Spend page with the report's own line saying what `*` means;
job names and states are never broken at a hyphen; a job's env value named like a secret
is masked, as `status` masks it."""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import timedelta
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path

import pandas as pd
import pytest
from starlette.testclient import TestClient

from costsched.store import OBSERVATION_COLUMNS, PriceStore
from tests.costsched.dashboard.test_browser import (  # noqa: F401 - fixtures
    WIDTHS,
    Server,
    _chromium,
    browser,
)
from tests.costsched.dashboard.test_short_exit_listed import ended_job
from tests.costsched.report.scenario import EAST, WEST, at, observe

# status's line of a placement: 'billed 0.0189 h x $0.07962/h = $0.0015'
BILLED = re.compile(r"billed ([\d.,]+) h(?: so far)? x (\$[\d.,]+)/h = (\$[\d.,]+)")
# The cells of the job page's placements table, as a user reads them.
PLACEMENT_CELLS = """
(() => {
  const head = Array.from(document.querySelectorAll('h2')).find(
    (h) => h.innerText === 'Placements');
  let table = head.nextElementSibling;
  while (!table.querySelector('table')) table = table.nextElementSibling;
  return Array.from(table.querySelectorAll('tbody tr')).map(
    (row) => Array.from(row.cells).map((c) => c.innerText));
})()"""


def _decimal(text: str) -> Decimal:
    return Decimal(text.replace("$", "").replace(",", ""))


def _reads_as(hours: str, rate: str, cost: str) -> bool:
    """Whether hours x $/h as written, rounded half up at the cost's decimals, read as the
    cost."""
    places = Decimal(1).scaleb(-len(cost.partition(".")[2]))
    return (_decimal(hours) * _decimal(rate)).quantize(places, ROUND_HALF_UP) == \
        _decimal(cost)


def two_legs(store: PriceStore) -> int:
    """68 s on EAST at $0.07962/h, then 62 s on WEST at $0.0412/h: 0.0189 h and 0.0172 h,
    where hours at two decimals would read 0.02 h both."""
    observe(store, EAST, [(-10, 0.07962)])
    observe(store, WEST, [(-10, 0.0412)])
    spec = {"spec": {"name": "two-legs", "throughputs": {"V100": 2.0}, "steps": 100},
            "launcher": "local"}
    job = store.jobs.create("two-legs", spec, 100, at=at(0))
    store.jobs.transition(job, "running", at=at(0))
    t = at(0)
    for i, (key, price, seconds) in enumerate([(EAST, 0.07962, 68), (WEST, 0.0412, 62)]):
        store.jobs.place(job, key, gpu_model="V100", gpu_count=1, at=t, usd_per_hour=price,
                         reason="launch" if i == 0 else "migration", instance=f"t-{i}")
        t += timedelta(seconds=seconds)
    store.jobs.end_placement(job, t)
    store.jobs.transition(job, "succeeded", at=t)
    return job


def test_placement_rows_read_as_status_writes_them(store: PriceStore, db_path: Path,
                                                   cli, browser, tmp_path: Path  # noqa: ANN001, F811
                                                   ) -> None:
    job = two_legs(store)
    said = BILLED.findall(cli("status", str(job), "--no-reconcile").output)
    assert said == [("0.0189", "$0.07962", "$0.0015"), ("0.0172", "$0.0412", "$0.0007")]
    server = Server(str(db_path), tmp_path / "instances")
    try:
        browser.open(f"{server.url}jobs/{job}", *WIDTHS["desktop"])
        rows = browser.js(PLACEMENT_CELLS)
        # reason, offering, from, to, $/h charged, hours, cost
        assert [(r[5], r[4], r[6]) for r in rows] == [(h, rate, cost)
                                                      for h, rate, cost in said]
        assert all(_reads_as(r[5], r[4], r[6]) for r in rows), rows
        # The same prices read alike in the note of its move (never '$0.0796/h' there).
        text = browser.js("document.querySelector('main').innerText")
        assert "$0.07962/h → $0.0412/h (saves $0.03842/h)" in text
        assert browser.problems == []
    finally:
        browser.leave()
        server.stop()


def test_a_running_placement_multiplies_out(store: PriceStore, client: TestClient) -> None:
    """A job placed at $0.07962/h 0.9 h before now: its open row's hours x $/h read as its
    cost so far, at the decimals `status` writes a running placement at."""
    observe(store, EAST, [(-10, 0.07962)])
    spec = {"spec": {"name": "going", "throughputs": {"V100": 2.0}, "steps": 1e6}}
    job = store.jobs.create("going", spec, 1e6, at=at(0))
    since = pd.Timestamp.now(tz="UTC").to_pydatetime() - timedelta(hours=0.9)
    store.jobs.place(job, EAST, gpu_model="V100", gpu_count=1, at=since,
                     usd_per_hour=0.07962, reason="launch", instance="g-1", keep_open=True)
    store.jobs.transition(job, "running", at=since)
    page = client.get(f"/jobs/{job}").text
    table = page[page.index("<h2>Placements</h2>"):page.index("<h2>Migrations")]
    [row] = re.findall(r"<tr><td>launch</td>.*?</tr>", table)
    cells = re.findall(r'<td class="num[^"]*">([^<]*)</td>', row)
    rate, hours, cost = cells
    assert rate == "$0.07962" and _reads_as(hours, rate, cost), cells
    assert "spot at $0.07962/h since" in page  # where it runs now, at the same price


def moved(store: PriceStore) -> int:
    """A job whose placements were stored without their steps, launched on a V100 and
    moved to an L4: its launch choice kept rests on an estimated speed (`report.paces`)."""
    v100 = ("aws", "us-east-1", "us-east-1a", "p3.2xlarge", "spot", "linux")
    l4 = ("gcp", "us-central1", "us-central1-a", "g2-standard-4", "spot", "linux")
    rows = [(*v100, "V100", 1, 8, 61.0, 1.0, pd.Timestamp(at(-10)), "test"),
            (*l4, "L4", 1, 4, 16.0, 2.0, pd.Timestamp(at(-10)), "test")]
    store.ingest(pd.DataFrame(rows, columns=OBSERVATION_COLUMNS))
    spec = {"name": "char-moved", "throughputs": {"V100": 5.0, "L4": 12.5}, "steps": 1e6}
    job = store.jobs.create("char-moved", {"spec": spec, "source": "test"}, 1e6, at=at(-1))
    for key, gpu, hours, reason in ((v100, "V100", 0, "launch"), (l4, "L4", 1, "migration")):
        store.jobs.place(job, key, gpu_model=gpu, gpu_count=1, at=at(hours),
                         usd_per_hour=1.0, reason=reason, instance=f"i-{reason}")
        store.jobs.end_placement(job, at(hours + 1))
    store.jobs.record_progress(job, 79200.0, at=at(2))
    return job


# The "launch choice kept $" cells of the Spend page's per-job table, by job name.
KEPT = """
(() => {
  const table = document.querySelector('table.report');
  const heads = Array.from(table.tHead.rows[0].cells).map((c) => c.innerText);
  const kept = heads.indexOf('launch choice kept $');
  const name = heads.indexOf('name');
  return Object.fromEntries(Array.from(table.tBodies[0].rows).map(
    (r) => [r.cells[name].innerText, r.cells[kept].innerText]));
})()"""


def test_the_spend_page_marks_an_estimated_baseline_as_the_report_does(
        store: PriceStore, db_path: Path, cli, browser, tmp_path: Path  # noqa: ANN001, F811
        ) -> None:
    import json

    moved(store)
    [line] = [r["line"] for r in json.loads(cli("report", "--json").output)
              ["estimated_baselines"]]
    assert line.startswith("* job 1 (char-moved): its launch choice kept rests on an estimated")
    said = " ".join(cli("report").output.split())
    assert line in said and "$3.50" in said  # the report's line, and its figure
    server = Server(str(db_path), tmp_path / "instances")
    try:
        browser.open(server.url + "spend", *WIDTHS["desktop"])
        text = browser.js("document.querySelector('main').innerText")
        assert line in text  # the report's own words
        assert browser.js(KEPT) == {"char-moved": "$3.5000*"}  # the figure it speaks of
        assert browser.problems == []
    finally:
        browser.leave()
        server.stop()


def test_the_job_page_says_its_baseline_is_estimated_as_report_job_does(
        store: PriceStore, client: TestClient, cli) -> None:  # noqa: ANN001
    from html import unescape

    job = moved(store)
    said = " ".join(cli("report", "--job", str(job)).output.split())
    [line] = [r["line"] for r in client.get(f"/api/jobs/{job}").json()["report"]
              ["estimated_baselines"]]
    assert line in said
    assert line in unescape(client.get(f"/jobs/{job}").text)


# Each table cell of the page that is one of `words` (a job's name, a state) whose
# rendered boxes stand on more than one line: a word broken at its hyphen.
BROKEN_AT_HYPHEN = """
((words) => Array.from(document.querySelectorAll('main table td')).filter((cell) => {
  if (!words.includes(cell.textContent.trim())) return false;
  const walk = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT);
  for (let node = walk.nextNode(); node; node = walk.nextNode()) {
    const range = document.createRange();
    range.selectNodeContents(node);
    if (new Set(Array.from(range.getClientRects()).map((r) => Math.round(r.top))).size > 1) {
      return true;
    }
  }
  return false;
}).map((cell) => cell.textContent.trim()))(%s)"""


HYPHENATED = "charlm-native-long-run"


@pytest.fixture(scope="module")
def hyphenated(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Server, int]]:
    """The dashboard of a store whose job named HYPHENATED exited 0 short of its steps
    (ended-short): one process, which both widths' tests read."""
    tmp_path = tmp_path_factory.mktemp("hyphenated")
    store = PriceStore(str(tmp_path / "store.sqlite"))
    observe(store, EAST, [(-10, 1.0)])
    job = ended_job(store, HYPHENATED, "succeeded")
    store.dispose()
    server = Server(str(tmp_path / "store.sqlite"), tmp_path / "instances")
    yield server, job
    server.stop()


@pytest.mark.parametrize("width", ["desktop", "phone"])
def test_names_and_states_never_break_at_a_hyphen(hyphenated, browser,  # noqa: ANN001, F811
                                                  width: str) -> None:
    """As the report's HTML keeps them (`report.html.WHOLE`): a job's name and its state
    read whole in every table of the dashboard, at a laptop's width and a phone's."""
    import json

    server, job = hyphenated
    name = HYPHENATED
    words = [name, "ended-short"]
    try:
        for page in ("", f"jobs/{job}", "spend"):
            browser.open(server.url + page, *WIDTHS[width])
            text = browser.js("document.querySelector('main').innerText")
            assert name in text, page
            assert browser.js(BROKEN_AT_HYPHEN % json.dumps(words)) == [], page
        assert browser.problems == []
    finally:
        browser.leave()


def test_a_secret_named_envs_value_is_masked_as_status_masks_it(
        store: PriceStore, client: TestClient, instances: Path, cli) -> None:  # noqa: ANN001
    """A job whose file gives WANDB_API_KEY a value (stored with it, as `launch` warns)
    failed saying it: the job's page, the first thing this process shows, masks it where
    `status` does, and its log alike."""
    import json

    from costsched.redact import MASK

    value = "wb7fQ2xLp9Zk3mNaVd"  # no credential pattern: only the env's value masks it
    observe(store, EAST, [(-10, 1.0)])
    spec = {"spec": {"name": "envy", "throughputs": {"V100": 2.0}, "steps": 100,
                     "envs": {"WANDB_API_KEY": value, "MODE": "fast"}}, "launcher": "local"}
    job = store.jobs.create("envy", spec, 100, at=at(0))
    store.jobs.place(job, EAST, gpu_model="V100", gpu_count=1, at=at(0), usd_per_hour=1.0,
                     reason="launch", instance=f"{job}-1")
    store.jobs.transition(job, "running", at=at(0))
    store.jobs.end_placement(job, at(1))
    store.jobs.transition(job, "failed", at=at(1), detail=f"exit 1: cannot log in as {value}")
    folder = instances / f"{job}-1"
    folder.mkdir(parents=True)
    (folder / "instance.json").write_text(json.dumps({"job_id": job}))
    (folder / "job.log").write_text(f"step 10\nwandb: logging in with {value}\nbye\n")
    page = client.get(f"/jobs/{job}").text  # before anything else has read the job
    assert value not in page
    assert f"exit 1: cannot log in as {MASK}" in page
    assert value not in client.get("/").text
    said = cli("status", str(job), "--no-reconcile").output
    assert f"exit 1: cannot log in as {MASK}" in said and value not in said
