"""Where a job may run, as its spec says it: the place filters a job's constraints have
(clouds, regions, zones, markets, GPU models and counts, instance types), each checked in
one place for the constraints and for each of a SkyPilot task's alternatives
(`AlternativeSpec`: `any_of` / `ordered` alternatives whose union would allow more than
they do)."""

from __future__ import annotations

import typing
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationInfo, field_validator

from costsched import clouds
from costsched.catalog import gpu_model_name
from costsched.model import ALL_MARKETS, CLOUDS, Constraints
from costsched.vocabulary import choose

MAX_GPUS = 1024


def _kinds(annotation: Any) -> set[Any]:
    """Every type named in an annotation (float | None -> {float, NoneType})."""
    args = typing.get_args(annotation)
    return {annotation} if not args else set().union(*(_kinds(a) for a in args))


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    @field_validator("*", mode="before")
    @classmethod
    def _no_bools(cls, v: Any, info: ValidationInfo) -> Any:
        """true/false is never a number (pydantic would read true as 1)."""
        kinds = _kinds(cls.model_fields[info.field_name].annotation)  # type: ignore[index]
        if bool in kinds or not kinds & {int, float}:
            return v
        items = v.values() if isinstance(v, dict) else v if isinstance(v, list) else [v]
        if any(isinstance(x, bool) for x in items):
            raise ValueError("true/false: expected a number")
        return v


def _choices(values: list[str], accepted: tuple[str, ...]) -> list[str]:
    spelled, error = choose(values, accepted)
    if error is not None:
        raise ValueError(error)
    return spelled


def check_places(v: list[str], info: ValidationInfo) -> list[str]:
    """Regions of the clouds given (every cloud's when none), zones of the regions given."""
    names = tuple(info.data.get("clouds") or CLOUDS)  # all when clouds was refused
    for place in v:
        problem = (clouds.given_region_problem(place, names) if info.field_name == "regions"
                   else clouds.given_zone_problem(place, info.data.get("regions") or ()))
        if problem is not None:
            raise ValueError(problem)
    return v


def check_clouds(v: list[str]) -> list[str]:
    return _choices(v, CLOUDS)


def check_markets(v: list[str]) -> list[str]:
    return _choices(v, ALL_MARKETS)


def check_gpus(v: list[str]) -> list[str]:
    return [gpu_model_name(g) for g in v]


def check_counts(v: list[int]) -> list[int]:
    if any(n < 1 or n > MAX_GPUS for n in v):
        raise ValueError(f"expected whole numbers from 1 to {MAX_GPUS}")
    return v


class PlaceSpec(_Strict):
    """Where a job may run: its clouds, regions, zones, markets, GPUs and instance types
    (each checked; empty: any). A job's constraints and each of its alternatives."""

    clouds: list[str] = []
    regions: list[str] = []
    zones: list[str] = []
    markets: list[str] = []
    gpu_models: list[str] = []
    gpu_counts: list[int] = []
    instance_types: list[str] = []

    _clouds = field_validator("clouds")(classmethod(lambda cls, v: check_clouds(v)))
    _places = field_validator("regions", "zones")(
        classmethod(lambda cls, v, info: check_places(v, info)))
    _markets = field_validator("markets")(classmethod(lambda cls, v: check_markets(v)))
    _gpus = field_validator("gpu_models")(classmethod(lambda cls, v: check_gpus(v)))
    _counts = field_validator("gpu_counts")(classmethod(lambda cls, v: check_counts(v)))



class AlternativeSpec(PlaceSpec):
    """One alternative of a task's resources, as exact as the task wrote it; empty: any."""

    def constraints(self) -> Constraints:
        """The place filter the optimizer reads (`Constraints.alternatives`)."""
        return Constraints(clouds=tuple(self.clouds), regions=tuple(self.regions),
                           zones=tuple(self.zones), markets=tuple(self.markets),
                           gpu_models=tuple(self.gpu_models),
                           gpu_counts=tuple(self.gpu_counts),
                           instance_types=tuple(self.instance_types))
