"""The start times of a price replay (`backtest`, `backtest --collection`): a default window
that fits the stored prices, and a window asked for that they must cover.

A replay reads what was known at each start, so every start lies within the stored prices:
from the first price to the newest one, and never after now (a price dated later is not
known yet). A window the prices do not cover is refused in one line that says what they
cover and how to get more, rather than replayed on prices that were never seen.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import Protocol

from costsched.model import InvalidInput
from costsched.service.values import at_least

# Without a first start, the window ends this many job lengths (V100-days) before the
# trace's last observation: runs on cheaper, slower GPUs take up to ~3.3x as long.
FIT_LENGTHS = 3.5
def more_prices() -> str:
    """What stores more prices to replay: a collect (after the install it needs here) or
    an import of recorded history."""
    from costsched.clouds.hints import collect_hint

    return (f"{collect_hint()} stores the prices of the moment (run it regularly, or "
            "`costsched daemon`, to gather a history); `costsched prices import FILE` "
            "imports recorded history (AWS spot price history JSON, Azure daily CSV, "
            "`prices export` files)")


class Spanned(Protocol):
    """Anything with the first and last observation times (epoch seconds) of a trace."""

    @property
    def start(self) -> int: ...

    @property
    def end(self) -> int: ...


@dataclass(frozen=True)
class Span:
    """A trace's first and last observation times (epoch seconds), without its prices."""

    start: int
    end: int


def known_span(trace: Spanned, now: datetime | None = None) -> tuple[datetime, datetime]:
    """The first price's time and the newest known at `now` (default now): the trace's
    last observation, or now where the store holds prices dated later."""
    now = now or datetime.now(timezone.utc)
    return _utc(trace.start), min(_utc(trace.end), now)


def default_first_start(trace: Spanned, starts: int, every_hours: float, days: float,
                        now: datetime | None = None) -> datetime:
    """The latest midnight (UTC) from which `starts` starts `every_hours` apart end
    FIT_LENGTHS x `days` before the newest price known; where the prices are too few for
    that, the earliest start (their first whole day, else their first price) whose last
    start still has a price. InvalidInput (saying what the prices cover) when even that
    does not fit."""
    at_least("starts", starts, 1, "a whole number")
    begin, end = known_span(trace, now)
    spread = timedelta(hours=every_hours * (starts - 1))
    first = _midnight(end - timedelta(days=FIT_LENGTHS * days) - spread)
    if first >= begin:
        return first
    day_after = _midnight(begin) + (timedelta(days=1) if _midnight(begin) < begin else
                                    timedelta(0))
    for first in (day_after, begin):
        if first + spread <= end:
            return first
    raise InvalidInput(f"{_covered(begin, end)}: too short for {starts} start"
                       f"{'s' if starts != 1 else ''} {every_hours:g} h apart; give fewer "
                       f"starts or fewer hours between them, or store more prices: "
                       f"{more_prices()}")


def replay_starts(trace: Spanned, first_start: datetime | None, starts: int,
                  every_hours: float, days: float,
                  now: datetime | None = None) -> list[datetime]:
    """`starts` start times `every_hours` apart from `first_start` (default:
    `default_first_start`), each within the prices known (InvalidInput otherwise)."""
    if first_start is None:
        first_start = default_first_start(trace, starts, every_hours, days, now)
    from costsched.backtest.engine import regular_starts

    times = regular_starts(first_start, starts, every_hours)
    begin, end = known_span(trace, now)
    if times[0] < begin or times[-1] > end:
        raise InvalidInput(
            f"first_start {times[0]:%Y-%m-%d %H:%M}: the starts asked ({_window(times)}) are "
            f"not all within the prices known: {_covered(begin, end)}; start within them, "
            f"or store more prices: {more_prices()}")
    return times


def _covered(begin: datetime, end: datetime) -> str:
    return f"the stored prices cover {begin:%Y-%m-%d %H:%M} to {end:%Y-%m-%d %H:%M} UTC"


def _window(times: list[datetime]) -> str:
    if len(times) == 1:
        return f"{times[0]:%Y-%m-%d %H:%M} UTC"
    return f"{times[0]:%Y-%m-%d %H:%M} to {times[-1]:%Y-%m-%d %H:%M} UTC"


def _midnight(at: datetime) -> datetime:
    return at.replace(hour=0, minute=0, second=0, microsecond=0)


def _utc(epoch_seconds: int) -> datetime:
    return datetime.fromtimestamp(epoch_seconds, timezone.utc)
