"""A name typed with a trailing 's' is most likely its plural: the did-you-mean names the
name without it first ('L4:1' for 'L4s', never 'L40S:1' first), then the others by how
close they are."""

from __future__ import annotations

import pytest

from costsched.skypilot_fields import _meant
from costsched.vocabulary import closest


@pytest.mark.parametrize(("typed", "first"), [("L4s", "L4"), ("l4s", "L4"), ("A100s", "A100"),
                                              ("V100s", "V100"), ("T4s", "T4"),
                                              ("H100s", "H100"), ("A10Gs", "A10G")])
def test_the_singular_comes_first(typed: str, first: str) -> None:
    said = _meant(typed, 1, False)
    assert said.startswith(f"did you mean '{first}:1'"), said
    assert said.count(":1'") <= 3


def test_the_others_follow_by_closeness() -> None:
    assert closest("L4s", ["L40S", "L4", "L40", "T4"]) == ["L4", "L40S", "L40"]
    assert closest("running", ["running"]) == ["running"]  # (no 's': as before)
    assert closest("runnings", ["pending", "running", "stopped"]) == ["running"]
