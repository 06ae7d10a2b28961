"""Strategies and checks shared by the fuzz tests."""

from __future__ import annotations

import math

import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

from costsched.model import InvalidInput

# Modest and deterministic: each fuzz test stays within seconds and fails the same way
# every run.
FUZZ = settings(max_examples=40, deadline=None, derandomize=True,
                suppress_health_check=[HealthCheck.function_scoped_fixture,
                                       HealthCheck.too_slow])

scalars = st.one_of(
    st.none(), st.booleans(), st.integers(-10**12, 10**12),
    st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=20),
    st.sampled_from(["", "0", "-1", "nan", "inf", "1e309", "V100", "V100:8", "aws", "spot",
                     "2020-02-18T00:00:00Z", "03/04/2020", "[bold red]x", "[/]", "\x1b[2J",
                     "tomorrow", "48h", "-2d", "k80", "us-east-1"]),
)
values = st.recursive(scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=8), inner, max_size=3)),
    max_leaves=6)


def one_line_error(call: object) -> InvalidInput | None:
    """Run `call`; any exception other than a one-line InvalidInput fails the test."""
    try:
        call()  # type: ignore[operator]
    except InvalidInput as exc:
        text = str(exc)
        assert text and "\n" not in text, f"not one line: {text!r}"
        return exc
    return None


def finite(value: object) -> bool:
    return not isinstance(value, float) or math.isfinite(value)


__all__ = ["FUZZ", "assert_all_valid", "finite", "one_line_error", "pytest", "scalars",
           "stored", "values"]


def stored(store: object) -> list[tuple]:
    """The store's observations as sorted tuples, to compare before and after."""
    frame = store.observations()  # type: ignore[attr-defined]
    return sorted(map(tuple, frame.astype(str).to_numpy().tolist()))


def assert_all_valid(store: object) -> None:
    """Every stored observation meets the rules the importers apply."""
    from price_collectors.base import problems

    frame = store.observations()  # type: ignore[attr-defined]
    bad = problems(frame).dropna()
    assert bad.empty, f"stored rows break the rules: {bad.head(3).tolist()}"
