"""`costsched risk import/show`: the three signal documents from files, history kept."""

from __future__ import annotations

import json
from pathlib import Path

FIXTURES = Path(__file__).resolve().parent.parent.parent / "fixtures" / "signals"


def test_import_each_kind_and_show_the_priors(cli) -> None:  # noqa: ANN001
    for name, kind, count in (("spot-advisor-data.json", "advisor", 5),
                              ("placement-scores.json", "placement", 3),
                              ("resource-graph-eviction.json", "eviction", 3)):
        result = cli("risk", "import", FIXTURES / name, "--kind", kind,
                     "--at", "2026-11-20T12:00Z", "--json")
        assert result.exit_code == 0, result.output
        assert json.loads(result.stdout) == {"file": str(FIXTURES / name), "read": count,
                                             "added": count}
    again = cli("risk", "import", FIXTURES / "placement-scores.json", "--kind", "placement",
                "--at", "2026-11-20T12:00Z", "--json")
    assert json.loads(again.stdout)["added"] == 0  # the same observations: stored once
    later = cli("risk", "import", FIXTURES / "placement-scores.json", "--kind", "placement",
                "--at", "2026-11-21T12:00Z", "--json")
    assert json.loads(later.stdout)["added"] == 3  # a new time: history kept

    shown = json.loads(cli("risk", "show", "--at", "2026-11-21T13:00Z", "--json").stdout)
    rows = {(r["kind"], r["region"], r["instance_type"], r["os"]): r
            for r in shown["signals"]}
    assert len(rows) == 11
    top = rows[("advisor", "us-east-1", "p3.2xlarge", "linux")]
    assert (top["label"], top["prior_per_hour"]) == (">20%", 0.0854)
    assert rows[("placement", "us-west-2", "p3.2xlarge", "linux")]["observed_at"].startswith(
        "2026-11-21")
    history = json.loads(cli("risk", "show", "--history", "--json").stdout)["signals"]
    assert len(history) == 14
    text = cli("risk", "show", "--at", "2026-11-21T13:00Z").stdout
    assert "eviction" in text and "20+" in text


def test_bad_documents_are_one_line(cli, tmp_path: Path) -> None:  # noqa: ANN001
    bad = tmp_path / "scores.json"
    bad.write_text(json.dumps([{"SpotPlacementScores": [{"Region": "us-east-1", "Score": 3}]}]))
    result = cli("risk", "import", bad, "--kind", "placement")
    assert result.exit_code == 2
    assert result.output.strip() == (f"error: {bad}: answer 0: field InstanceType: expected "
                                     "the instance type the scores are for")
    result = cli("risk", "import", bad, "--kind", "rumour")
    assert result.exit_code == 2
    assert "--kind 'rumour': expected one of advisor, placement, eviction" in result.output
    broken = tmp_path / "advisor.json"
    broken.write_text("{not json")
    result = cli("risk", "import", broken, "--kind", "advisor")
    assert result.exit_code == 2 and len(result.output.strip().splitlines()) == 1
    assert result.output.startswith(f"error: {broken}: not valid JSON (line 1, column 2): "
                                    "expected a saved JSON document")


def test_the_cloud_is_named_in_any_case_and_a_bogus_one_refused(cli) -> None:  # noqa: ANN001
    cli("risk", "import", FIXTURES / "placement-scores.json", "--kind", "placement",
        "--at", "2026-11-20T12:00Z")
    lower = json.loads(cli("risk", "show", "--cloud", "aws", "--history", "--json").stdout)
    upper = json.loads(cli("risk", "show", "--cloud", "AWS", "--history", "--json").stdout)
    assert len(lower["signals"]) == 3 and upper == lower
    assert json.loads(cli("risk", "show", "--cloud", "Aws", "--json", "--at",
                          "2026-11-20T13:00Z").stdout)["signals"]
    bogus = cli("risk", "show", "--cloud", "bogus")
    assert bogus.exit_code == 2
    assert bogus.output.strip() == ("error: --cloud 'bogus': expected one of aws, gcp, "
                                    "azure")
    assert "did you mean 'aws'" in cli("risk", "show", "--cloud", "awz").output


def test_no_signals_stored_says_so_and_how_to_store_them(cli) -> None:  # noqa: ANN001
    empty = cli("risk", "show", "--cloud", "gcp")
    assert empty.exit_code == 0
    assert " ".join(empty.stdout.split()) == (
        "No spot risk signals stored for gcp; `costsched risk import FILE --kind KIND` stores "
        "a saved document: advisor (Spot Instance Advisor), placement (spot placement "
        "scores) or eviction (Azure eviction rates).")
    assert json.loads(cli("risk", "show", "--json").stdout) == {"signals": []}
    cli("risk", "import", FIXTURES / "placement-scores.json", "--kind", "placement",
        "--at", "2026-11-20T12:00Z")  # the hint's command, as it says
    assert "placement" in cli("risk", "show").stdout
