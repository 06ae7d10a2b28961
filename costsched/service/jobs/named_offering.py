"""The offering a user names at launch (`launch --offering`), found among a plan's."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from costsched.model import InvalidInput
from costsched.vocabulary import did_you_mean

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
        labels = [str(label) for label in ranked["offering"]]
        example = labels[0] if labels else "aws us-east-1a p3.2xlarge spot"
        raise InvalidInput(f"offering {offering!r}: not a priced offering now; expected "
                           "cloud, zone or region, instance type and market as `costsched "
                           f"plan` names them ({example!r})"
                           + did_you_mean(" ".join(_words(offering)), labels))
    return found


def _spelled(text: str) -> Callable[[str], bool]:
    """Matches an offering label ('aws us-east-1f p3.2xlarge spot') against the user's
    text: the label itself, or its words joined by ':' ('aws:us-east-1f:p3.2xlarge:spot',
    accepted as well)."""
    wanted = _words(text)
    return lambda text: text.split() == wanted


def _words(text: str) -> list[str]:
    """The words of an offering as typed, in either form, as labels spell them."""
    return [w.replace("_", "-") if i == 3 else w  # the market, as labels spell it
            for i, w in enumerate(text.strip().replace(":", " ").split())]
