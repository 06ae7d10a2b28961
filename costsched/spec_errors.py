"""A job file's errors as costsched says bad input: the field as the file wrote it (a
SkyPilot task's `costsched:` keys as such), the value and what is accepted, never pydantic's
own words."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ValidationError

from costsched.vocabulary import did_you_mean

# Where a SkyPilot task writes what its JobSpec holds elsewhere (its `costsched:` section):
# an error names the field as the file has it.
TASK_FIELDS = {
    **{f"constraints.{k}": f"costsched.{k}"
       for k in ("deadline", "budget", "max_price", "max_migrations", "markets")},
    **{k: f"costsched.{k}" for k in ("model", "throughputs", "precision", "steps", "epochs",
                                      "steps_per_epoch", "hours", "reference_gpu", "sweep",
                                      "checkpoint")},
}


def as_written(field: str, sky: bool) -> str:
    """`field` of a JobSpec as its file wrote it: in a SkyPilot task (`sky`), the
    `costsched:` section's key ('constraints.deadline' -> 'costsched.deadline')."""
    if not sky:
        return field
    for held, written in TASK_FIELDS.items():  # keys are distinct paths: one matches
        if field == held or field.startswith(held + "."):
            return written + field[len(held):]
    return field


def yaml_kind(value: Any) -> str:
    """The YAML name of a parsed value's type, for messages."""
    if isinstance(value, dict):
        return "mapping"
    if isinstance(value, (list, tuple)):
        return "list"
    return type(value).__name__


# pydantic's kinds of wrong type, as a job file's reader says what is accepted.
_EXPECTED = {
    "float_parsing": "a number", "float_type": "a number", "int_parsing": "a whole number",
    "int_type": "a whole number", "int_from_float": "a whole number",
    "bool_parsing": "true or false", "bool_type": "true or false", "string_type": "text",
    "list_type": "a list", "dict_type": "a mapping", "model_type": "a mapping",
    "model_attributes_type": "a mapping",
}


# pydantic's bounds, said as costsched says them (with the bound from the error's context).
_BOUNDS = {"greater_than_equal": ("ge", "at least"), "greater_than": ("gt", "more than"),
           "less_than_equal": ("le", "at most"), "less_than": ("lt", "less than")}


def error_words(error: Mapping[str, Any]) -> str:
    """One pydantic error as costsched says bad input: the value and what is accepted
    ("'ten': expected a number", "0: expected at least 1"), or the validator's own words."""
    given = repr(error.get("input"))
    given = given if len(given) <= 60 else given[:57] + "..."
    if error["type"] in _EXPECTED:
        return f"{given}: expected {_EXPECTED[error['type']]}"
    if error["type"] in _BOUNDS and "ctx" in error:
        key, words = _BOUNDS[error["type"]]
        return f"{given}: expected {words} {error['ctx'].get(key)}"
    return str(error["msg"]).removeprefix("Value error, ")


def first_error(source: str, exc: ValidationError, sky: bool, root: type[BaseModel]) -> str:
    """The first of `exc`'s errors of a `root` model (the job spec) in one line."""
    errors = exc.errors()
    first = errors[0]
    field = ".".join(str(p) for p in first["loc"])
    msg = error_words(first)
    if not field:  # a rule across fields: named by the field its words begin with
        head = msg.split(" ", 1)[0].rstrip(":")
        field = head if head in root.model_fields else ""
    if first["type"] == "extra_forbidden":
        known = _known_fields(first["loc"], root)
        msg = (f"unknown field: expected one of {', '.join(known)}"
               + did_you_mean(str(first["loc"][-1]), known))
    more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
    named = f"field {as_written(field, sky)}: " if field else ""
    return f"{source}: {named}{msg}{more}"


def _known_fields(loc: tuple, root: type[BaseModel]) -> list[str]:
    model = root
    for part in loc[:-1]:
        annotation = model.model_fields[str(part)].annotation
        if isinstance(annotation, type) and issubclass(annotation, BaseModel):
            model = annotation
    return list(model.model_fields)
