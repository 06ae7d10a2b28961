"""How `prices import` reads a cloud's spot prices: a file of a few quotes is a partial
update by default (it replaces the bundled prices of its own places and hides none of the
others), a file that lists most of a cloud's bundled spot offerings is its whole spot
market, and `--partial` / `--whole` ask for either reading."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone
from pathlib import Path

from costsched.prices import SPOT_PLACE, prices_at
from costsched.service.prices import spot_readings
from costsched.spot_market import taken_whole

HEADER = ("cloud,region,zone,instance_type,market,os,gpu_model,gpu_count,vcpus,memory_gb,"
          "usd_per_hour,effective_at,source\n")
ORDERED = ("name: sl\nresources:\n  accelerators: [A10G:1, L4:1]\n  use_spot: true\n"
           "run: 'true'\ncostsched:\n  steps: 1000\n  throughputs: {T4: 20}\n")


def _two_rows(tmp_path: Path) -> Path:
    """The trial's hand-made file: one aws and one gcp spot quote, an hour old."""
    when = (datetime.now(timezone.utc) - timedelta(hours=1)).strftime("%Y-%m-%dT%H:%M:%SZ")
    path = tmp_path / "myprices.csv"
    path.write_text(HEADER
                    + f"aws,us-west-2,us-west-2a,g4dn.xlarge,spot,linux,T4,1,4,16,0.15,{when},me\n"
                    + f"gcp,us-east5,us-east5-a,g2-standard-4,spot,linux,L4,1,4,16,0.09,{when},"
                    "me\n")
    return path


def _planned_models(cli, task: Path) -> tuple[set[str], str]:  # noqa: ANN001
    planned = cli("plan", task, "--json")
    doc = json.loads(planned.stdout or "{}")
    models = {r["gpu_model"] for p in doc.get("rankings", []) for r in p["ranking"]}
    notes = " ".join([*(n for j in doc.get("jobs", []) for n in j.get("notes", [])),
                      planned.stderr])
    return models, notes


def test_a_file_of_a_few_quotes_is_a_partial_update_by_default(cli, tmp_path: Path) -> None:  # noqa: ANN001
    path = _two_rows(tmp_path)
    done = cli("prices", "import", path)
    assert done.exit_code == 0, done.output
    said = " ".join(done.stdout.split())
    # One line per cloud: what was decided, and the flag for the other reading.
    for cloud in ("aws", "gcp"):
        assert (f"note: {cloud} spot: read as a partial update, since the prices list 1 of "
                f"{cloud}'s ") in said, said
        assert (f"bundled spot offerings: they replace the bundled prices of their own places "
                f"(a zone's: not its region's) and hide none of the rest; `costsched prices "
                f"import --whole FILE` takes "
                f"them as {cloud}'s whole spot market") in said, said
    assert "whole spot market: " not in said  # nothing hidden
    # The ordered task keeps its first choice, the bundled A10G spot offerings.
    task = tmp_path / "sky-list.yaml"
    task.write_text(ORDERED)
    models, notes = _planned_models(cli, task)
    assert models == {"A10G", "L4"}, (models, notes)
    assert "A10G:1 left out" not in notes, notes
    # The file's own quotes are planned at their places.
    again = json.loads(cli("prices", "import", path, "--json").stdout)
    assert [(r["cloud"], r["listed"], r["partial"], r["asked"])
            for r in again["spot_readings"]] == [("aws", 1, True, False),
                                                 ("gcp", 1, True, False)]
    assert again["bundled_spot_left_out"] == []


def test_whole_takes_a_small_file_as_the_clouds_whole_spot_market(
        cli, tmp_path: Path) -> None:  # noqa: ANN001
    path = _two_rows(tmp_path)
    assert cli("prices", "import", path).exit_code == 0  # partial, by default
    whole = cli("prices", "import", path, "--whole")
    assert whole.exit_code == 0, whole.output
    said = " ".join(whole.stdout.split())
    assert ("2 unchanged (2 of them, stored as a partial update, now stand for their "
            "cloud's whole spot market)") in said, said
    assert "plans take them as aws's whole spot market" in said, said
    assert "read as a partial update" not in said  # asked for: nothing to decide
    task = tmp_path / "sky-list.yaml"
    task.write_text(ORDERED)
    models, notes = _planned_models(cli, task)
    assert "A10G" not in models, notes  # its reason said once, as the order passes it over
    assert "ordered: alternative 1 (A10G:1 spot): no spot price known" in notes, notes
    assert "A10G:1 left out" not in notes, notes
    # and back, with --partial
    assert cli("prices", "import", path, "--partial").exit_code == 0
    assert _planned_models(cli, task)[0] == {"A10G", "L4"}


def test_partial_and_whole_together_are_refused(cli, tmp_path: Path) -> None:  # noqa: ANN001
    done = cli("prices", "import", _two_rows(tmp_path), "--partial", "--whole")
    assert done.exit_code == 2, done.output
    assert "--partial and --whole ask for opposite readings" in " ".join(done.output.split())
    assert "Traceback" not in done.output


def test_a_file_listing_most_of_a_clouds_bundled_spot_offerings_is_its_whole_market() -> None:
    now = datetime.now(timezone.utc)
    bundled = prices_at(None, now, markets=["spot"], clouds=["gcp"])
    places = bundled.drop_duplicates(SPOT_PLACE)
    most = places.head(len(places) // 2 + 1).assign(source="me")
    half = places.head(len(places) // 2).assign(source="me")
    read = spot_readings(most, None)
    assert [(r.cloud, r.listed, r.bundled, r.partial) for r in read] == [
        ("gcp", len(most), len(places), False)]
    assert read[0].note() is None  # whole: the import's note of what it hides says so
    assert spot_readings(half, None)[0].partial
    # asked for: as asked, whatever it lists
    assert not spot_readings(half, False)[0].partial
    assert spot_readings(most, True)[0].partial and spot_readings(most, True)[0].asked
    assert spot_readings(most.assign(market="on_demand"), None) == []
    assert taken_whole(3, 4) and not taken_whole(2, 4) and taken_whole(1, 0)
