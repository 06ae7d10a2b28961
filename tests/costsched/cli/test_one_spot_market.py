"""plan, launch and gpus read one spot market. One aws spot price (a T4 in us-west-2a)
imported as the whole market (`--whole`) makes the store aws's whole spot market: the
bundled aws spot prices it does not list are gone for every reader alike, whichever GPU a
task or command asks about (they were read as the store's market only when the question
happened to include the imported row)."""

from __future__ import annotations

import json
import re
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from costsched.service import gpus as service

IMPORTED = datetime.now(timezone.utc) - timedelta(days=1)
V100_AWS = ("name: mf\nresources: {accelerators: V100:1, use_spot: true, infra: aws/us-east-1}"
            "\nrun: 'true'\ncostsched: {throughputs: {V100: 50}, steps: 4000}\n")
TIME = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\dZ")


@pytest.fixture()
def imported(cli, tmp_path: Path) -> Path:  # noqa: ANN001
    """A store holding one aws spot price, imported from a file (a day old) as aws's whole
    spot market."""
    path = tmp_path / "one.csv"
    path.write_text("cloud,region,zone,instance_type,market,os,gpu_model,gpu_count,vcpus,"
                    "memory_gb,usd_per_hour,effective_at,source\n"
                    f"aws,us-west-2,us-west-2a,g4dn.xlarge,spot,linux,T4,1,4,16,0.15,"
                    f"{IMPORTED:%Y-%m-%dT%H:%M:%SZ},me\n")
    done = cli("prices", "import", path, "--whole")
    assert done.exit_code == 0, done.output
    return tmp_path


def _reason(text: str, prefix: str) -> str:
    line = " ".join(text.split()).split(prefix, 1)[1]
    return TIME.sub("TIME", line)


def test_plan_and_launch_refuse_the_same_hidden_spot_price(
        cli, imported: Path, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: ANN001
    monkeypatch.setenv("COSTSCHED_INSTANCES", str(imported / "instances"))
    task = imported / "mf.yaml"
    task.write_text(V100_AWS)
    planned = cli("plan", task)
    assert planned.exit_code == 1, planned.output  # was: ranked the bundled $0.6929
    reason = _reason(planned.stderr, "no plan: ")
    assert reason.startswith("job mf: no spot price known as of TIME for V100:1 in aws, "
                             "us-east-1"), reason
    # the cause: the import made the store aws's spot market, which hides the bundled V100
    assert "aws's spot prices are the store's (collected or imported, newest " \
        f"{IMPORTED:%Y-%m-%d}), which leave out its bundled spot prices; `costsched prices " \
        "import --partial FILE` imports quotes without that (a file imported before, " \
        "imported again with it, stops standing for the whole market)" in reason, reason
    launched = cli("launch", task, "--wait", "0")
    assert launched.exit_code == 2, launched.output
    assert _reason(launched.output, "error: ") == reason
    # the hint, followed: the same file again with --partial, and the bundled V100 is back
    again = cli("prices", "import", imported / "one.csv", "--partial")
    assert again.exit_code == 0, again.output
    replanned = cli("plan", task, "--json")
    assert replanned.exit_code == 0, replanned.output
    best = json.loads(replanned.stdout)["rankings"][0]["ranking"][0]
    assert (best["cloud"], best["market"], best["gpu_model"]) == ("aws", "spot", "V100")


def test_gpus_lists_no_spot_price_plan_hides(cli, imported: Path) -> None:  # noqa: ANN001
    shown = json.loads(cli("gpus", "V100", "--json").stdout)["rows"]  # the quick path
    assert shown and not [r for r in shown if r["cloud"] == "aws" and r["market"] == "spot"]
    full = service.gpu_offerings(None, "V100")  # the service's, through pandas
    assert not full[(full["cloud"] == "aws") & (full["market"] == "spot")].shape[0]
    summary = {(r["gpu_model"], r["gpu_count"]): r
               for r in json.loads(cli("gpus", "--json").stdout)["rows"]}
    assert summary[("T4", 1)]["spot_where"] == "aws us-west-2a g4dn.xlarge"
    assert not (summary[("V100", 1)]["spot_where"] or "").startswith("aws")


def test_a_sets_left_out_check_reads_the_planners_market(cli, imported: Path) -> None:  # noqa: ANN001
    """V100 in a set with T4 (priced in the store) and in a set with K80 (not): both plans
    take the same V100 spot market."""
    ranked, said = {}, {}
    for other in ("T4", "K80"):
        task = imported / f"{other}.yaml"
        task.write_text(f"name: s\nresources:\n  accelerators: {{V100: 1, {other}: 1}}\n"
                        "  infra: aws\n  use_spot: true\nrun: 'true'\n")
        planned = cli("plan", task, "--json")
        doc = json.loads(planned.stdout or "{}")
        ranked[other] = {r["gpu_model"] for p in doc.get("rankings", []) for r in p["ranking"]}
        said[other] = " ".join([*(n for j in doc.get("jobs", []) for n in j.get("notes", [])),
                                planned.stderr])
    assert ranked["T4"] == {"T4"} and "V100" not in ranked["K80"], ranked  # was: V100 with K80
    assert "V100:1 left out: no spot price known" in said["T4"]
    assert "no spot price known" in said["K80"] and "V100:1" in said["K80"]
