"""What every section of the configuration is made of: the section base, finite numbers,
cron expressions, and the errors that name one entry of a mapping key."""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any

from pydantic import AfterValidator, AllowInfNan, BaseModel, BeforeValidator, ConfigDict


class Section(BaseModel):
    # Validators built when a section is first validated: a run that reads a kept
    # configuration (`costsched.config._validated`) builds none.
    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)


class EntryError(ValueError):
    """What is wrong with one entry of a mapping key: the error names `KEY.ENTRY` and the
    entry's value, not the whole mapping."""

    def __init__(self, entry: str, value: Any, problem: str) -> None:
        super().__init__(problem)
        self.entry, self.value = entry, value


def checked(value: str | None, problem: Callable[[str], str | None]) -> str | None:
    """`value` when `problem(value)` finds nothing wrong (None passes: unset)."""
    if value is not None:
        found = problem(value)
        if found:
            raise ValueError(found)
    return value


def cron(value: str) -> str:
    from apscheduler.triggers.cron import CronTrigger

    try:
        CronTrigger.from_crontab(value)
    except (ValueError, TypeError):
        raise ValueError("expected a 5-field cron expression (minute hour day month "
                         "day-of-week), e.g. '0 * * * *'") from None
    return value


def not_bool(value: Any) -> Any:
    if isinstance(value, bool):  # pydantic would take true as 1.0
        raise ValueError("expected a number")
    return value


# Every number in the configuration is finite: inf and nan are refused.
Number = Annotated[float, BeforeValidator(not_bool), AllowInfNan(False)]

FRACTION = "expected a fraction from 0 to 1: 0.05 is 5 %"


def fraction_problem(value: float) -> str | None:
    """What is wrong with a share given as a fraction (5 meant as 5 % would be 500 %), or
    None: the one check of the configuration's fractions and of `migrate --margin`."""
    return None if 0 <= value <= 1 else FRACTION


def _fraction(value: float) -> float:
    problem = fraction_problem(value)
    if problem:
        raise ValueError(problem)
    return value


# A share from 0 to 1 (0.05 is 5 %).
Fraction = Annotated[float, BeforeValidator(not_bool), AllowInfNan(False),
                     AfterValidator(_fraction)]


# A duration key's unit, as `config show` says it, and how many of it make an hour.
PER_HOUR = {"h": 1.0, "min": 60.0, "s": 3600.0}
_UNIT_WORDS = {"h": "hours (168)", "min": "minutes (5)", "s": "seconds (30)"}


def _duration(unit: str) -> BeforeValidator:
    """Text with a unit ('7d', '168h', '30min', '45s': `durations.duration_hours`) as a
    number of `unit`; a number, or text that is one, is already in `unit`."""
    def read(value: Any) -> Any:
        if not isinstance(value, str):
            return value
        try:
            float(value)
            return value
        except ValueError:
            pass
        from costsched.durations import duration_hours

        try:
            return duration_hours(value) * PER_HOUR[unit]
        except ValueError:
            raise ValueError(f"expected a duration: a number of {_UNIT_WORDS[unit]}, or one "
                             "with its unit: '7d', '36h', '30min', '45s'") from None

    return BeforeValidator(read)


Hours = Annotated[Number, _duration("h")]
Minutes = Annotated[Number, _duration("min")]
Seconds = Annotated[Number, _duration("s")]


def duration_text(value: float, unit: str) -> str:
    """A duration as `config show` says it: '168 h (7 days)', '90 min (1.5 h)', '30 s'."""
    hours = value / PER_HOUR[unit]
    said = f"{value:g} {unit}"
    if hours >= 24 and unit != "s":
        days = hours / 24
        other = f"{days:g} day" + ("" if days == 1 else "s")
    elif hours >= 1 and unit != "h":
        other = f"{hours:g} h"
    elif unit == "s" and value >= 60:
        other = f"{value / 60:g} min"
    else:
        return said
    return f"{said} ({other})"
