"""What every section of the configuration is made of: the section base, finite numbers,
cron expressions, and the errors that name one entry of a mapping key."""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any

from pydantic import AllowInfNan, BaseModel, BeforeValidator, ConfigDict


class Section(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


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
