"""A number option is echoed as the user typed it ('-3', not '-3.0') and computes as the
float it is."""

from __future__ import annotations

import json

import pytest

from costsched.cli.common import OptionValue, at_least, typed_number
from costsched.model import InvalidInput


@pytest.mark.parametrize("typed", ["-3", "0.05", "-0.50", "1e3", "nan", "1_000"])
def test_a_typed_number_prints_as_typed_and_computes_as_a_float(typed: str) -> None:
    number = typed_number(typed)
    assert f"{number}" == str(number) == repr(number) == typed
    twice = number * 2
    assert type(twice) is float and (twice == 2 * float(typed) or typed == "nan")
    assert json.dumps(number) == json.dumps(float(typed))  # JSON has the number itself


def test_a_default_prints_in_its_shortest_form() -> None:
    assert [str(typed_number(v)) for v in (4.0, 0.05, 1e-05, -3.0)] == [
        "4", "0.05", "1e-05", "-3"]


def test_text_that_is_not_a_number_is_refused_in_one_line() -> None:
    with pytest.raises(OptionValue, match=r"^'3h': expected a number$"):
        typed_number("3h")


def test_at_least_echoes_the_number_as_typed() -> None:
    with pytest.raises(InvalidInput, match=r"^--margin -3: expected a finite number >= 0$"):
        at_least("--margin", typed_number("-3"))
    with pytest.raises(InvalidInput, match=r"^--wait -1e-07: expected a finite number >= 0$"):
        at_least("--wait", typed_number("-1e-07"))


def test_a_typed_number_copies_and_pickles_with_its_text() -> None:
    import copy
    import pickle

    number = typed_number("-3")
    for again in (copy.copy(number), copy.deepcopy(number), pickle.loads(pickle.dumps(number))):
        assert again == -3.0 and str(again) == "-3"


@pytest.mark.parametrize("argv, said", [
    (["--job-hours", "-3"], "--job-hours -3: expected a positive number"),
    (["--checkpoint-gb", "-2"], "--checkpoint-gb -2: expected a number >= 0"),
    (["--restart-minutes", "3,-2"], "--restart-minutes -2: expected a number >= 0"),
    (["--spot-price", "-1"], "--spot-price -1: expected a positive USD per hour"),
    (["--on-demand-price", "0"], "--on-demand-price 0: expected a positive USD per hour"),
])
def test_backtest_deadline_refuses_a_bad_number_as_typed_before_reading_the_store(
        cli, argv: list[str], said: str) -> None:  # noqa: ANN001
    """Checked before the store is read: an empty store would otherwise answer first."""
    result = cli("backtest-deadline", "--deadline", "52", *argv)
    assert result.exit_code != 0 and result.output.strip() == f"error: {said}"
