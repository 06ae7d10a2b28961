"""A job that asks for booked capacity (capacity blocks, reservations, flex-start) with no
such offering stored is told, as a spot "no price" is told its `collect` line, how to get
such offerings, with the markets spelled as its file and the docs spell them."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from tests.costsched.optimize.test_no_plan_keys import NATIVE, why

BOOKED = "constraints: {markets: [capacity-block, flex-start, reservation], gpu_models: [A100]}\n"


def test_the_markets_are_spelled_as_the_file_writes_them(tmp_path: Path) -> None:
    line, path = why(tmp_path, NATIVE + BOOKED)
    assert "has market capacity-block, flex-start, reservation; priced: on-demand, spot" \
        in line, line
    assert "_" not in line.replace(path, ""), line
    assert line.endswith(f"change constraints.markets in {path}"), line


def test_a_market_typo_is_answered_in_the_users_words(tmp_path: Path) -> None:
    line, _ = why(tmp_path, NATIVE + "constraints: {markets: [flex-start], clouds: [aws]}\n")
    assert "has market flex-start; priced: on-demand, spot" in line, line


def test_booked_markets_say_how_their_offerings_are_got(tmp_path: Path) -> None:
    line, path = why(tmp_path, NATIVE + BOOKED)
    assert ("; `costsched collect --cloud aws --cloud gcp --booked --gpu A100` collects "
            "the capacity blocks on sale, GCP's prices (flex-start's among them) and the "
            "reservations held "
            "(`costsched prices import FILE` reads a saved `aws ec2 "
            "describe-capacity-block-offerings` answer); plan weighs capacity blocks and "
            "reservations beside spot or on-demand, which constraints.markets leaves out; "
            f"change constraints.markets in {path}") in line, line


def test_only_the_clouds_the_job_allows_are_asked(tmp_path: Path) -> None:
    line, _ = why(tmp_path, NATIVE + "constraints: {markets: [capacity-block, reservation], "
                  "clouds: [aws], regions: [us-east-1], gpu_models: [A100]}\n")
    assert "; `costsched collect --cloud aws --region us-east-1 --booked --gpu A100` collects " \
        "the capacity blocks on sale and the reservations held (`costsched prices import " \
        "FILE`" in line, line
    assert "gcp" not in line and "flex-start" not in line, line


def test_flex_start_alone_is_a_gcp_collect(tmp_path: Path) -> None:
    line, _ = why(tmp_path, NATIVE + "constraints: {markets: [flex-start], gpu_models: [A100]}\n")
    assert ("`costsched collect --cloud gcp --gpu A100` collects GCP's prices (flex-start's "
            "among them)") in line, \
        line
    assert "--booked" not in line and "prices import" not in line, line


def test_the_line_installs_what_the_collectors_lack_first(tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "boto3", None)  # not installed, as imports go
    monkeypatch.setitem(sys.modules, "google.auth", None)
    line, _ = why(tmp_path, NATIVE + BOOKED)
    assert "; `pip install 'costsched[aws,gcp]'`, then `costsched collect --cloud aws --cloud " \
        "gcp --booked --gpu A100` collects" in line, line
