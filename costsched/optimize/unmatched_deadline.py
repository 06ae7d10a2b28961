"""Why a job has no plan when even its fastest offering misses its deadline, in one line
whose figures agree: the deadline as a user writes it, and what the fastest needs, which is
the deadline it would meet."""

from __future__ import annotations

import math

from costsched.amounts import hours

__all__ = ["deadline_missed", "deadline_said"]


def deadline_missed(name: str, deadline_hours: float, fastest: str, needs_hours: float,
                    start_hours: float = 0.0, estimate: tuple[str, str] = ("", ""),
                    left_out: str = "") -> str:
    """Why a job has no plan when even its fastest offering finishes too late: the deadline
    as the job gives it, in a readable unit (`deadline_said`: '2 h', '0.5 h', '5 min'), the
    need (its expected hours and its first start, `start_hours`) with the places it takes
    to read above the deadline and to be the deadline it would meet, one figure for both
    ('2.413 h', not '2.41 h' then 'at least 2.42 h'). `estimate`: the mark of hours that
    rest on an estimated speed and the words that say which
    (`unmatched_estimates.estimate_said`); the start's hours rest on none. Then the fix:
    that deadline, and `left_out` (`faster_left_out`): an offering its filters leave out
    that would meet this one."""
    total = needs_hours + start_hours
    places = _places_needed(total, deadline_hours)
    need = math.ceil(total * 10 ** places - 1e-7) / 10 ** places  # met at that
    needs = hours(need, places)
    boot = hours(start_hours, places)
    run = hours(need - float(boot.replace(",", "")), places)  # the parts add up to the need
    mark, said = estimate
    start = f" ({run}{mark} h to run and {boot} h to start)" if start_hours else ""
    fix = f"; it would meet a deadline at least {needs}{mark} h from now" + (
        f", or this one {left_out}" if left_out else "")
    return (f"job {name} cannot meet its deadline of {deadline_said(deadline_hours, places)} "
            f"on any allowed offering: the fastest, {fastest}, needs {needs}{mark} h"
            f"{start}{said}{fix}")


MOST_PLACES = 6  # of hours a missed deadline's need takes to read above it
AGREED_PLACES = 4  # the most it takes to read, rounded, as the deadline it would meet


def _places_needed(total: float, deadline_hours: float) -> int:
    """The places (2 at least) at which `total` hours read above the deadline (up to
    MOST_PLACES) and, rounded to the nearest, as the deadline it would meet, rounded up
    (up to AGREED_PLACES: 1.3334 h, not 1.33 h then 1.34 h, for 4/3 h)."""
    places = 2
    while places < MOST_PLACES and round(total, places) <= deadline_hours:
        places += 1
    while places < AGREED_PLACES and round(total, places) < total - 1e-9:
        places += 1
    return places


def deadline_said(deadline_hours: float, places: int = 2) -> str:
    """A deadline in hours as a user would write it: '2 h', '0.5 h', '1.25 h' where two
    decimals give it, else whole minutes ('5 min', '80 min'), else as written where a few
    digits write it ('0.001 h'), else the hours at `places` decimals (more where those
    read as zero) rounded down, so that it never reads above a need shown at `places`."""
    if abs(deadline_hours * 100 - round(deadline_hours * 100)) < 1e-6:
        return f"{round(deadline_hours, 2):,g} h"
    minutes = deadline_hours * 60
    if abs(minutes - round(minutes)) < 1e-6:
        return f"{round(minutes):,} min"
    typed = f"{deadline_hours:,.4g}"
    if "e" not in typed and float(typed.replace(",", "")) == deadline_hours:  # 0.001, 1.125
        return f"{typed} h"
    while places < MOST_PLACES and math.floor(deadline_hours * 10 ** places) == 0:
        places += 1  # never '0.00 h' for a deadline of a few seconds
    if math.floor(deadline_hours * 10 ** places) == 0:
        return f"{deadline_hours * 3600:.2g} s"
    return f"{hours(math.floor(deadline_hours * 10 ** places) / 10 ** places, places)} h"
