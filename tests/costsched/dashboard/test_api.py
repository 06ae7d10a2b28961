"""The JSON API answers what the CLI's `--json` prints, byte for byte once parsed: the same
functions build both. The pages render the same documents, escaped, with nothing secret."""

from __future__ import annotations

import json
from datetime import datetime, timezone
from pathlib import Path

import pytest
from starlette.testclient import TestClient

from costsched.dashboard.app import create_app
from costsched.store import PriceStore
from tests.costsched.dashboard.conftest import SECRET, ended, fill, running
from tests.costsched.report.scenario import BETA, EAST, NOW, at


def cli_json(cli, *args: str):  # noqa: ANN001 - the CLI fixture
    result = cli(*args, "--json")
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_jobs_are_the_status_commands_json(store: PriceStore, client: TestClient, cli,
                                           instances: Path) -> None:
    ended(store, instances)
    api = client.get("/api/jobs")
    assert api.status_code == 200 and api.headers["content-type"] == "application/json"
    assert api.json() == cli_json(cli, "status", "--no-reconcile")
    assert [j["name"] for j in api.json()["jobs"]] == ["done", "stopped"]
    only = client.get("/api/jobs", params={"state": "stopped"}).json()
    assert only == cli_json(cli, "status", "--no-reconcile", "--state", "stopped")
    assert [j["name"] for j in only["jobs"]] == ["stopped"]
    named = client.get("/api/jobs", params={"name": "do*"}).json()
    assert [j["name"] for j in named["jobs"]] == ["done"]


def test_spend_is_the_report_commands_json(store: PriceStore, client: TestClient, cli) -> None:
    fill(store)
    until = at(NOW).isoformat()
    api = client.get("/api/spend", params={"until": until}).json()
    assert api == cli_json(cli, "report", "--until", until)
    assert api["totals"]["usd"] > 0 and {j["name"] for j in api["jobs"]} >= {"alpha", BETA}
    one = client.get("/api/spend", params={"until": until, "job": "alpha"}).json()
    assert one == cli_json(cli, "report", "--until", until, "--job", "alpha")


def test_a_job_is_its_status_report_and_output(store: PriceStore, client: TestClient, cli,
                                               instances: Path) -> None:
    ids = ended(store, instances)
    doc = client.get(f"/api/jobs/{ids['done']}").json()
    [status] = cli_json(cli, "status", str(ids["done"]), "--no-reconcile")["jobs"]
    assert doc["job"] == status
    report = cli_json(cli, "report", "--job", "done")
    assert {k: v for k, v in doc["report"].items() if k != "until"} == {
        k: v for k, v in report.items() if k != "until"}
    assert [p["reason"] for p in doc["job"]["placements"]] == ["launch", "migration"]
    assert doc["budget_usd"] == 3.0 and doc["forecast_usd"] is None  # ended: nothing to go
    assert doc["advice"] == []
    assert "step 100" in doc["log_tail"] and "bye" in doc["log_tail"]
    assert SECRET not in json.dumps(doc)  # its output printed a key: masked
    assert [e["to_state"] for e in doc["events"] if e["kind"] == "state"][-1] == "succeeded"
    assert client.get("/api/jobs/done").json()["job"]["id"] == ids["done"]  # by name too


def test_an_unknown_job_is_one_line(client: TestClient) -> None:
    api = client.get("/api/jobs/nope")
    assert api.status_code == 404
    assert list(api.json()) == ["error"] and "\n" not in api.json()["error"]
    assert "nope" in api.json()["error"]
    page = client.get("/jobs/nope")
    assert page.status_code == 404 and "nope" in page.text and "Traceback" not in page.text


def test_a_job_not_there_is_404_by_id_and_by_name_on_pages_and_api(client: TestClient
                                                                    ) -> None:
    for path in ("/api/jobs/99", "/jobs/99", "/api/jobs/nope", "/jobs/nope",
                 "/api/spend?job=nope"):
        assert client.get(path).status_code == 404, path
    assert client.get("/api/jobs/99").json() == {
        "error": "job 99: no such job in the store; it holds no job yet"}


def test_a_misspelt_state_gets_the_close_one(client: TestClient) -> None:
    api = client.get("/api/jobs?state=runing")
    assert api.status_code == 400
    assert api.json()["error"].startswith("state 'runing': expected one of pending, ")
    assert api.json()["error"].endswith("; did you mean 'running'?")
    assert client.get("/api/jobs?state=Running").status_code == 200  # any case, as the CLI


def test_the_jobs_page_and_status_refuse_a_misspelt_state_as_the_api_does(
        client: TestClient, cli) -> None:  # noqa: ANN001
    """One helper for the three: the same line, its close state included."""
    import html

    said = client.get("/api/jobs?state=stoped").json()["error"]
    assert said.endswith("; did you mean 'stopped'?"), said
    page = client.get("/?state=stoped")
    assert page.status_code == 400 and said in html.unescape(page.text), page.text
    status = cli("status", "--no-reconcile", "--state", "stoped")
    assert status.exit_code == 2 and said in " ".join(status.output.split())
    assert client.get("/?state=Stopped").status_code == 200  # any case, as the CLI


def test_an_address_the_api_does_not_serve_is_json(client: TestClient) -> None:
    api = client.get("/api/status")
    assert api.status_code == 404 and api.json()["error"].startswith(
        "/api/status: no such address: the API serves /api/jobs, ")
    # (the stream is said to be one: a plain fetch of it never ends)
    assert api.json()["error"].endswith("/api/events (server-sent events: a stream that "
                                        "stays open until you close it)")
    assert client.get("/nope").status_code == 404


def test_prices_show_the_running_jobs_offerings_and_alternatives(
        store: PriceStore, client: TestClient, cli) -> None:
    fill(store)  # alpha runs on WEST, beta on EAST (V100), gamma on GCP (A100)
    doc = client.get("/api/prices").json()
    used = {(j["job_id"], j["region"], j["instance_type"]) for j in doc["jobs"]}
    assert used == {(1, "us-west-2", "p3.2xlarge"), (2, "us-east-1", "p3.2xlarge"),
                    (3, "us-central1", "a2-highgpu-1g")}
    shown = cli_json(cli, "prices", "show", "--gpu", "V100,A100", "--top", "0")
    rows = {(r["cloud"], r["region"], r["zone"], r["instance_type"], r["market"]): r for r in shown}
    for row in doc["prices"]:  # the alternatives are `prices show` rows, as it prints them
        key = (row["cloud"], row["region"], row["zone"], row["instance_type"], row["market"])
        now = ("effective_at", "age_days")  # as of each call's own now
        assert {k: v for k, v in row.items() if k not in now} == {
            k: v for k, v in rows[key].items() if k not in now}
    assert {r["gpu_model"] for r in doc["prices"]} == {"V100", "A100"}
    history = doc["history"]["p3.2xlarge"]
    assert {r["region"] for r in history} == {"us-west-2", "us-east-1"}  # where they run
    every = cli_json(cli, "prices", "history", "--instance", "p3.2xlarge",
                     "--region", "us-west-2,us-east-1")
    # Every price is older than the chart's 30 days: the one in effect then, per offering.
    newest = {(r["region"], r["zone"], r["market"]): r for r in every}
    assert sorted(history, key=str) == sorted(newest.values(), key=str)
    assert any(r["usd_per_hour"] == 1.5 for r in history)  # EAST's from hour 2
    assert doc["signals"] == {"signals": []}


def test_prices_show_every_gpus_two_prices_each_with_its_age(client: TestClient, cli) -> None:
    """The GPU summary beside the jobs' prices: `costsched gpus --json`'s rows, each price
    with its own age, even with no job running."""
    doc = client.get("/api/prices").json()
    shown = cli_json(cli, "gpus")["rows"]
    assert len(doc["gpus"]) == len(shown) > 20
    now = ("on_demand_age_days", "spot_age_days")  # as of each call's own now
    for page, printed in zip(doc["gpus"], shown, strict=True):
        assert {k: v for k, v in page.items() if k not in now} == {
            k: v for k, v in printed.items() if k not in now}
        for market in ("on_demand", "spot"):
            assert (page[f"{market}_age_days"] is None) == (page[f"{market}_usd_per_hour"]
                                                            is None)
    html = client.get("/prices").text
    assert "Cheapest per GPU model and count" in html and "H100:8" in html
    assert html.count("<th>age</th>") >= 2


def test_pages_render_the_documents_escaped(store: PriceStore, client: TestClient,
                                            instances: Path) -> None:
    ids = ended(store, instances)
    beta = running(store, BETA, budget=2.0)
    for path in ("/", f"/jobs/{beta}", f"/jobs/{ids['done']}", "/spend", "/prices"):
        page = client.get(path)
        assert page.status_code == 200, path
        assert "<b>[red]" not in page.text, path  # the job named with markup
        assert page.headers["content-security-policy"].startswith("default-src 'self'")
        assert "<script>" not in page.text  # nothing inline: the CSP allows none
    jobs = client.get("/").text
    assert "beta &lt;b&gt;[red]x&lt;/b&gt;" in jobs and f'href="/jobs/{beta}"' in jobs
    assert 'data-chart="bars"' in jobs and 'id="chart-jobs"' in jobs
    assert "$2.00" in jobs  # beta's budget
    job = client.get(f"/jobs/{ids['done']}").text
    assert 'data-chart="timeline"' in job and "migration" in job and "step 100" in job
    assert "$1.0000/h → $0.5000/h (saves $0.5000/h)" in job  # its move, at the stored prices
    assert SECRET not in job
    spend = client.get("/spend").text
    assert spend.count("<canvas") == 3 and "saved against on-demand" in spend
    part = client.get("/", params={"fragment": "1"}).text
    assert "<html" not in part and "stopped" in part


def test_chart_data_cannot_close_its_block(store: PriceStore, client: TestClient) -> None:
    running(store, "</script><script>alert(1)</script>")
    page = client.get("/").text
    assert "<script>alert(1)" not in page
    assert "\\u003c/script\\u003e" in page  # the name, inside the chart's JSON


def test_live_fingerprint_changes_with_the_jobs(any_store: PriceStore, instances: Path
                                                ) -> None:
    from costsched.dashboard.live import fingerprint

    store = any_store  # SQLite and PostgreSQL
    empty = fingerprint(store)
    ids = ended(store, instances)
    before = fingerprint(store)
    assert before != empty and fingerprint(store) == before
    store.jobs.note(ids["done"], "budget", "near: $2.50 of $3.00", at=at(3))
    after = fingerprint(store)
    assert after != before
    store.jobs.record_step(ids["stopped"], 50, at=at(3))
    assert fingerprint(store) != after
    api = TestClient(create_app(store)).get("/api/jobs").json()
    assert [j["state"] for j in api["jobs"]] == ["succeeded", "stopped"]


def test_the_stream_says_change_only_when_the_store_changed() -> None:
    import asyncio

    from costsched.dashboard.live import stream

    seen = iter(["a", "a", "b", "b"])
    looks = []

    async def gone() -> bool:
        return len(looks) >= 4

    def read() -> str:
        looks.append(1)
        return next(seen)

    async def events() -> list[str]:
        return [e async for e in stream(read, gone, poll=0.01)]

    got = asyncio.run(events())
    assert got == ['event: change\nid: a\ndata: "a"\n\n', 'event: change\nid: b\ndata: "b"\n\n']


def test_a_failed_jobs_output_is_masked() -> None:
    from costsched.dashboard.data import masked

    job = {"id": 1, "name": "x", "checkpoint_error": f"s3: denied (secret_key={SECRET})",
           "failure": {"exit_code": 1, "phase": None, "detail": f"token={SECRET}",
                       "log_tail": ["ok", f"AWS_SECRET_ACCESS_KEY={SECRET}"]}}
    shown = masked(job)
    assert SECRET not in json.dumps(shown)
    assert shown["failure"]["log_tail"][0] == "ok" and shown["failure"]["exit_code"] == 1
    assert SECRET in json.dumps(job)  # the status document itself is left as it was



def team_jobs(store: PriceStore) -> None:
    """Three ended jobs: 'seg' labelled team=vision, 'det' in budget 'vision' by name and
    labelled team=vision and tier=gold, 'lm' labelled team=nlp."""
    for name, labels, budget_name in (("seg", {"team": "vision"}, None),
                                      ("det", {"team": "vision", "tier": "gold"}, "vision"),
                                      ("lm", {"team": "nlp"}, None)):
        spec = {"spec": {"name": name, "throughputs": {"V100": 2.0}, "steps": 100,
                         "task": {"labels": labels},
                         "constraints": {"budget_name": budget_name}}, "launcher": "local"}
        job = store.jobs.create(name, spec, 100, at=at(0))
        store.jobs.transition(job, "stopped", at=at(1))


def names(doc: dict) -> list[str]:
    return [j["name"] for j in doc["jobs"]]


def test_jobs_filter_by_label_and_budget_as_the_status_command_does(
        store: PriceStore, client: TestClient, cli, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    team_jobs(store)
    # Budget 'nlp' is joined by a label; 'vision' by constraints.budget_name alone.
    config = tmp_path / "config.toml"
    config.write_text('[budgets.named.nlp]\nusd = 100\nlabels = {team = "nlp"}\n')
    monkeypatch.setenv("COSTSCHED_CONFIG", str(config))
    cases = [({"label": "team=vision"}, ["--label", "team=vision"], ["seg", "det"]),
             ({"label": ["team=vision", "tier=gold"]},
              ["--label", "team=vision", "--label", "tier=gold"], ["det"]),
             ({"label": "team=vision,tier=gold"}, ["--label", "team=vision", "--label",
                                                   "tier=gold"], ["det"]),
             ({"budget": "vision"}, ["--budget", "vision"], ["det"]),
             ({"budget": "nlp"}, ["--budget", "nlp"], ["lm"]),
             ({"budget": "nlp", "label": "team=vision"},
              ["--budget", "nlp", "--label", "team=vision"], []),
             ({"label": "team="}, ["--label", "team="], [])]
    for params, options, expected in cases:
        api = client.get("/api/jobs", params=params)
        assert api.status_code == 200, api.text
        assert names(api.json()) == expected, params
        assert api.json() == cli_json(cli, "status", "--no-reconcile", *options)
    assert names(client.get("/api/jobs").json()) == ["seg", "det", "lm"]
    # The page: the filtered jobs, its fields holding the filter (a URL to share).
    page = client.get("/", params={"label": "team=vision", "budget": "vision"})
    assert page.status_code == 200
    assert ">det</a>" in page.text and ">seg</a>" not in page.text
    assert 'name="label" value="team=vision"' in page.text
    assert 'name="budget" value="vision"' in page.text


def test_a_malformed_label_filter_is_one_line(client: TestClient, cli) -> None:
    api = client.get("/api/jobs", params={"label": "team"})
    assert api.status_code == 400
    assert "LABEL=VALUE" in api.json()["error"] and "\n" not in api.json()["error"]
    page = client.get("/", params={"label": "team"})
    assert page.status_code == 400 and "LABEL=VALUE" in page.text
    result = cli("status", "--no-reconcile", "--label", "team")
    assert result.exit_code != 0 and "--label 'team': expected LABEL=VALUE" in result.output
    assert "Traceback" not in result.output


def test_a_job_that_failed_before_any_step_shows_no_guessed_progress(
        store: PriceStore, client: TestClient, instances: Path) -> None:
    """It ran an hour without reporting a step and failed: the API says its progress is
    not known (never an estimate for a job that ended), and the pages write '-'."""
    job = running(store, "early")
    store.jobs.end_placement(job, at(1))
    store.jobs.transition(job, "failed", at=at(1))
    still = running(store, "going")  # no step yet: no share of its hours stands in
    doc = client.get(f"/api/jobs/{job}").json()["job"]
    assert doc["progress"] is None and doc["progress_source"] is None
    page = client.get("/").text
    row = page[page.index(">early<"):]
    row = row[:row.index("</tr>")]
    assert "%" not in row and "<td>-</td>" in row
    going = page[page.index(">going<"):]
    assert "<td>no step yet</td>" in going[:going.index("</tr>")]
    assert client.get(f"/api/jobs/{still}").json()["job"]["progress_source"] is None
    assert '<span class="figure">-</span><span>progress (no step reported)' in \
        client.get(f"/jobs/{job}").text


def test_a_task_without_work_shows_its_step_not_a_share(
        store: PriceStore, client: TestClient, instances: Path) -> None:
    """A SkyPilot task that gives no work, at its step 1,595 of work whose total nobody
    gave: the pages write the step, never 'of 3,600' (the assumed hour's count)."""
    spec = {"spec": {"name": "clf", "hours": 1.0, "reference_gpu": "V100", "run": "true",
                     "task": {"work_assumed": True}}, "source": "sky.yaml"}
    job = store.jobs.create("clf", spec, 3600, at=at(0))
    store.jobs.place(job, EAST, gpu_model="V100", gpu_count=1, at=at(0), usd_per_hour=1.0,
                     reason="launch", instance=f"{job}-1", keep_open=True)
    store.jobs.transition(job, "running", at=at(0))
    store.jobs.record_step(job, 1595, at=at(0.5))
    store.jobs.record_progress(job, 1595, at=at(0.5), checkpoint_step=1500)
    doc = client.get(f"/api/jobs/{job}").json()["job"]
    assert doc["step"] == 1595 and doc["progress"] is None
    assert doc["steps_left"] is None and doc["steps_total"] is None  # not known
    page = client.get(f"/jobs/{job}").text
    assert '<span class="figure">step 1,595</span><span>progress</span>' in page
    assert "<dd>1,595 (the work is not given, so its total is not known)</dd>" in page
    assert "step 1,595; checkpoint at step 1,500" in page  # its log, in words
    row = client.get("/").text
    row = row[row.index(">clf<"):]
    assert "<td>step 1,595</td>" in row[:row.index("</tr>")]


def test_the_cards_are_written_at_the_precision_of_the_rows_below_them(
        store: PriceStore, client: TestClient) -> None:
    """Two jobs of $0.00417 and $0.01583 (15 s and 57 s at $1/h): at four decimals the
    rows read $0.0042 and $0.0158 and the cards over them their sum as written, $0.0200,
    not $0.02. A smaller charge settled ($0.00056: 2 s at $1/h) reads at four decimals
    too, and moves no other figure to five, on every page alike."""
    from tests.costsched.report.scenario import observe

    observe(store, EAST, [(-10, 1.0)])
    for name, seconds in (("small", 15), ("large", 57)):
        job = store.jobs.create(name, {"spec": {"name": name}}, 10, at=at(0))
        store.jobs.place(job, EAST, gpu_model="V100", gpu_count=1, at=at(0),
                         usd_per_hour=1.0, reason="launch", instance=f"{job}-1")
        store.jobs.end_placement(job, at(seconds / 3600))
        store.jobs.transition(job, "succeeded", at=at(seconds / 3600))
    until = at(1).isoformat()
    spend = client.get("/spend", params={"until": until}).text
    assert '<span class="figure">$0.0200</span><span>spent</span>' in spend
    assert "$0.0042" in spend and "$0.0158" in spend and "$0.00417" not in spend
    jobs = client.get("/").text
    assert '<span class="figure">$0.0200</span><span>spent so far</span>' in jobs
    tiny = store.jobs.create("tiny", {"spec": {"name": "tiny"}}, 10, at=at(0))
    store.jobs.place(tiny, EAST, gpu_model="V100", gpu_count=1, at=at(0), usd_per_hour=1.0,
                     reason="launch", instance=f"{tiny}-1")
    store.jobs.end_placement(tiny, at(2 / 3600))
    store.jobs.transition(tiny, "succeeded", at=at(2 / 3600))
    page = client.get(f"/jobs/{tiny}").text
    assert '<span class="figure">$0.0006</span><span>spent so far</span>' in page
    assert '<td class="num">$0.0006</td>' in page and "$0.00056" not in page
    spend = client.get("/spend", params={"until": until}).text
    assert '<span class="figure">$0.0206</span><span>spent</span>' in spend
    assert "$0.0042" in spend and "$0.0158" in spend and "$0.00417" not in spend
    assert '<span class="figure">$0.0206</span><span>spent so far</span>' in \
        client.get("/").text


def test_the_jobs_page_says_whether_recovery_is_armed_as_status_does(
        store: PriceStore, client: TestClient, cli) -> None:  # noqa: ANN001
    """The words of `status`: nothing watches (and the fix), then a supervisor watches and
    re-plans, never "never run, start a daemon" beside it."""
    import html

    from costsched.daemon.supervisor import SUPERVISOR_LEASE
    from costsched.store.leases import holder_name

    running(store, "alpha")
    page = html.unescape(client.get("/").text)
    status = cli("status", "--no-reconcile").stdout
    [line] = [x for x in status.splitlines() if x.startswith("Recovery not armed")]
    assert line in page and "`costsched daemon start" in page
    now = datetime.now(timezone.utc)
    holder = holder_name()
    store.leases.acquire(SUPERVISOR_LEASE, holder, 60, now)
    store.daemons.register(holder, kind="auto", tasks=("replan",), watch_seconds=5, log="/l",
                           at=now)
    page = html.unescape(client.get("/").text)
    assert "Recovery armed: supervisor pid" in page and "Recovery not armed" not in page
    assert "Scheduled optimizer: the supervisor re-plans the running jobs" in page
    # and the table beside it gives the re-plan's next run, as `status --json` does
    [replan] = [t for t in cli_json(cli, "status", "--no-reconcile")["daemon"]
                if t["task"] == "replan"]
    due = datetime.fromisoformat(replan["next_run"].replace("Z", "+00:00"))
    assert f"<td>replan</td><td>{due:%Y-%m-%d %H:%M}" in page


def test_a_jobs_deadline_is_said_on_its_pages_as_status_says_it(
        store: PriceStore, client: TestClient, instances: Path) -> None:
    """Due in 36 h from its creation: the Jobs page and the job's page say when, in the
    words of `status`."""
    spec = {"spec": {"name": "due", "throughputs": {"V100": 2.0}, "steps": 1e6,
                     "constraints": {"deadline": 36.0}}}
    now = datetime.now(timezone.utc)
    job = store.jobs.create("due", spec, 1e6, at=now)
    store.jobs.place(job, EAST, gpu_model="V100", gpu_count=1, at=now, usd_per_hour=1.0,
                     reason="launch", instance=f"{job}-1", keep_open=True)
    store.jobs.transition(job, "running", at=now)
    from datetime import timedelta

    from costsched.service.views import due_words

    created = store.jobs.get(job).created_at
    words = due_words(created + timedelta(hours=36), datetime.now(timezone.utc), False)
    said = words.split(" (in ")[0] + " (in "  # the hours left move on
    assert said.startswith("due ") and said in client.get("/").text
    assert f"<dt>deadline</dt><dd>{said}" in client.get(f"/jobs/{job}").text


def test_a_jobs_placement_hours_read_at_one_precision(store: PriceStore,
                                                      client: TestClient) -> None:
    """A short placement and a longer one: the hours column reads at one precision, and
    the report's line under it at no fewer decimals (0.0072 beside 0.0442, not 0.02)."""
    import re

    from tests.costsched.report.scenario import EAST, WEST, at, observe

    observe(store, EAST, [(-10, 1.0)])
    observe(store, WEST, [(-10, 0.5)])
    job = store.jobs.create("short", {"spec": {"name": "short"}}, 100, at=at(0))
    store.jobs.place(job, EAST, gpu_model="V100", gpu_count=1, at=at(0), usd_per_hour=1.0,
                     reason="launch", instance=f"{job}-1")
    store.jobs.transition(job, "running", at=at(0))
    store.jobs.place(job, WEST, gpu_model="V100", gpu_count=1, at=at(26 / 3600),
                     usd_per_hour=0.5, reason="migration", instance=f"{job}-2")
    store.jobs.end_placement(job, at(185 / 3600))  # whole seconds: 26 s and 159 s
    store.jobs.transition(job, "succeeded", at=at(185 / 3600))
    page = client.get(f"/jobs/{job}").text
    table = page[page.index("<h2>Placements</h2>"):page.index("<h2>Migrations")]
    cells = re.findall(r'<td class="num">([\d.]+)</td><td class="num">\$', table)
    assert cells == ["0.0072", "0.0442"], cells
    [line] = re.findall(r"In the report: (.*?)\.</p>", page, re.S)
    assert "over 0.0514 billed hours" in line, line


def test_the_jobs_card_counts_in_words(store: PriceStore, client: TestClient) -> None:
    """'1 job shown', never '1 jobs shown'."""
    job = store.jobs.create("one", {"spec": {"name": "one"}}, 10, at=at(0))
    store.jobs.transition(job, "succeeded", at=at(0.1))
    page = client.get("/").text
    assert '<span class="figure">1</span><span>job shown</span>' in page, page


def _running_hours_job(store: PriceStore) -> int:
    """A job whose work is 1 h on a V100 (no model, no throughputs), running since at(0)."""
    spec = {"spec": {"name": "fit", "hours": 1.0, "reference_gpu": "V100", "run": "true"},
            "source": "fit.yaml"}
    job = store.jobs.create("fit", spec, 3600, at=at(0))
    store.jobs.place(job, EAST, gpu_model="V100", gpu_count=1, at=at(0), usd_per_hour=1.0,
                     reason="launch", instance=f"{job}-1", keep_open=True)
    store.jobs.transition(job, "running", at=at(0))
    return job


def test_hours_of_work_show_the_step_its_pace_and_the_key_that_gives_a_share(
        store: PriceStore, client: TestClient, instances: Path) -> None:
    """A job whose work is 1 h on a V100 (no model, no throughputs) at its own step 2,900:
    never 'of 3,600' (the hour in V100 seconds) nor a share of it; its measured pace and
    the key that gives a share instead."""
    job = _running_hours_job(store)
    store.jobs.record_step(job, 2700, at=at(0.1))
    store.jobs.record_step(job, 2900, at=at(0.1) + (at(1) - at(0)) / 36)  # 100 s on
    doc = client.get(f"/api/jobs/{job}").json()["job"]
    assert doc["progress"] is None and doc["steps_total"] is None and doc["step"] == 2900
    page = client.get(f"/jobs/{job}").text
    assert '<span class="figure">step 2,900</span>' in page
    assert "<dd>2,900 at 2 steps/s measured (its work is given as 1 h of work on 1xV100" in page
    assert "of 3,600" not in page and "`steps: N`" in page


def test_hours_of_work_that_succeeded_still_show_the_step(
        store: PriceStore, client: TestClient, instances: Path) -> None:
    """Succeeded, its progress card reads its step, never '100%' beside its own note that
    its progress is never a share."""
    job = _running_hours_job(store)
    store.jobs.record_step(job, 2000, at=at(0.1))
    store.jobs.end_placement(job, at(0.2))
    store.jobs.transition(job, "succeeded", at=at(0.2))
    doc = client.get(f"/api/jobs/{job}").json()["job"]
    assert doc["progress"] is None and doc["step"] == 2000
    page = client.get(f"/jobs/{job}").text
    assert '<span class="figure">step 2,000</span>' in page and "100%" not in page


def test_spend_of_an_unknown_job_names_the_jobs(store: PriceStore, client: TestClient) -> None:
    store.jobs.create("fit", {"spec": {"name": "fit"}}, 10.0, at=at(0))
    found = client.get("/api/spend?job=nope")
    assert "the jobs: fit" in found.text


def test_the_supervisors_next_replan_is_the_status_commands(
        store: PriceStore, client: TestClient, cli) -> None:  # noqa: ANN001
    """A supervisor re-plans on schedule.replan, which the store's schedule does not hold:
    the API gives its next re-plan as `status --json` does, never "never"."""
    from costsched.daemon.supervision import SUPERVISOR_LEASE
    from costsched.store.leases import holder_name

    running(store, "fit")
    now = datetime.now(timezone.utc)
    store.daemons.register(holder_name(), kind="auto", tasks=("watch", "replan"),
                           watch_seconds=30, log="", at=now)
    assert store.leases.acquire(SUPERVISOR_LEASE, holder_name(), 600, now)  # it watches
    api = client.get("/api/jobs").json()
    replan = [t for t in api["daemon"] if t["task"] == "replan"]
    assert replan and replan[0]["next_run"] is not None, api["daemon"]
    assert api["daemon"] == cli_json(cli, "status", "--no-reconcile")["daemon"]
