"""A price file of one's own: a misspelt instance type is refused (it would be stored as an
offering no cloud sells) with the close type, a misspelt market with the close market, and
the summary's counts agree with their nouns."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from costsched.cli import app

HEADER = ("cloud,region,zone,instance_type,market,os,gpu_model,gpu_count,vcpus,memory_gb,"
          "usd_per_hour,effective_at,source\n")


def _import(tmp_path: Path, rows: str) -> tuple[int, str, str]:
    path = tmp_path / "mine.csv"
    path.write_text(HEADER + rows)
    done = CliRunner().invoke(app, ["prices", "import", str(path), "--db",
                                    str(tmp_path / "p.sqlite"), "--new-store"])
    said = done.stderr[done.stderr.find("error: "):] if "error: " in done.stderr else ""
    return done.exit_code, done.stdout, said


def test_a_misspelt_instance_type_is_refused_with_the_close_one(tmp_path: Path) -> None:
    code, out, err = _import(tmp_path, "gcp,us-east5,us-east5-a,g2-standrad-4,spot,linux,"
                                       "L4,1,4,16,0.21,2026-11-28T10:00:00Z,mine\n")
    assert code == 2  # every file refused: bad input
    assert err.replace("\n", " ").startswith(
        f"error: {tmp_path / 'mine.csv'}: row 2: instance_type 'g2-standrad-4': not a gcp "
        "instance type of the catalog (`costsched catalog --cloud gcp` lists them; ")
    assert "did you mean 'g2-standard-4'" in err.replace("\n", " ")
    assert "Imported 0 files: 0 observations, 0 new rows, 0 unchanged; 1 file rejected." in out


def test_a_misspelt_market_gets_the_close_one(tmp_path: Path) -> None:
    code, _, err = _import(tmp_path, "gcp,us-east5,us-east5-a,g2-standard-4,spto,linux,"
                                     "L4,1,4,16,0.21,2026-11-28T10:00:00Z,mine\n")
    assert code == 2 and "market 'spto': expected one of on-demand, spot" in err
    assert err.replace("\n", " ").rstrip().endswith("did you mean 'spot'?")


def test_counts_agree_with_their_nouns(tmp_path: Path) -> None:
    row = ("gcp,us-east5,us-east5-a,g2-standard-4,spot,linux,L4,1,4,16,0.21,"
           "2026-11-28T10:00:00Z,mine\n")
    code, out, _ = _import(tmp_path, row)
    assert code == 0 and out.splitlines()[0] == ("Imported 1 file: 1 observation, 1 new row, "
                                                 "0 unchanged; 0 files rejected.")
    assert "note: gcp spot: read as a partial update, since the prices list 1 of gcp's " \
        in " ".join(out.split())
    code, out, _ = _import(tmp_path, row)
    assert out.strip() == ("Imported 1 file: 1 observation, 0 new rows, 1 unchanged; "
                           "0 files rejected.")
