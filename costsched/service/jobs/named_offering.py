"""The offering a user names at launch (`launch --offering`), found among a plan's."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from costsched.model import InvalidInput

if TYPE_CHECKING:
    import pandas as pd


def picked(choices: pd.DataFrame, ranked: pd.DataFrame, offering: str | None
           ) -> pd.DataFrame:
    """A plan's `choices`, or the offering the user named alone (of its `ranked` ones):
    what a launch runs on, and what its budget is checked against."""
    if offering is None:
        return choices
    found = ranked[ranked["offering"].map(_spelled(offering))]
    if found.empty:
        raise InvalidInput(f"offering {offering!r}: not a priced offering now; "
                           "expected cloud:zone-or-region:instance_type:market as "
                           "`costsched prices show` lists them")
    return found


def _spelled(text: str) -> Callable[[str], bool]:
    """Matches an offering label ('aws us-east-1f p3.2xlarge spot') against the user's
    'aws:us-east-1f:p3.2xlarge:spot' (or the label itself)."""
    wanted = [w.replace("_", "-") if i == 3 else w  # the market, as labels spell it
              for i, w in enumerate(text.strip().replace(":", " ").split())]
    return lambda text: text.split() == wanted
