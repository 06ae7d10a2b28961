"""A job file's errors as costsched says bad input: the field as the file wrote it (a
SkyPilot task's `costsched:` keys as such), the value and what is accepted, never pydantic's
own words."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, get_args

from pydantic import BaseModel, ValidationError

from costsched.vocabulary import did_you_mean

# A SkyPilot task's `costsched:` keys its JobSpec holds under `constraints`: a job file's
# constraints the section has under their own names (where the job runs is the task's
# resources).
SECTION_CONSTRAINTS = ("deadline", "budget", "budget_name", "at_cap", "max_price",
                       "max_migrations", "markets")
# Where a SkyPilot task writes what its JobSpec holds elsewhere (its `costsched:` section):
# an error names the field as the file has it.
TASK_FIELDS = {
    **{f"constraints.{k}": f"costsched.{k}" for k in SECTION_CONSTRAINTS},
    **{k: f"costsched.{k}" for k in ("model", "throughputs", "precision", "steps", "epochs",
                                      "steps_per_epoch", "hours", "reference_gpu", "sweep",
                                      "checkpoint")},
    # a task's own fields, kept under the spec's task
    "task.secrets": "secrets", "task.written_secrets": "secrets", "task.launch_envs": "envs",
}


# A command's options that job files do not take, as the command takes them.
OPTIONS_ONLY = {
    "objective": "costsched plan --objective cost|time|tradeoff|throughput-per-dollar",
    "weight": "costsched plan --objective tradeoff --weight W",
    "quota": "costsched plan --quota N",
    "offering": "costsched launch --offering CLOUD:ZONE:TYPE:MARKET",
}


def unknown_field(name: str, known: list[str]) -> str:
    """Why a job file's key `name` is refused: the fields `known` there and the close one,
    or, for a command's option, the option that gives it."""
    if name in OPTIONS_ONLY:
        return (f"unknown field: {name} is a command's option, not a job file's: "
                f"`{OPTIONS_ONLY[name]}`")
    return f"unknown field: expected one of {', '.join(known)}" + did_you_mean(name, known)


def as_written(field: str, sky: bool) -> str:
    """`field` of a JobSpec as its file wrote it: in a SkyPilot task (`sky`), the
    `costsched:` section's key ('constraints.deadline' -> 'costsched.deadline')."""
    if not sky:
        return field
    for held, written in TASK_FIELDS.items():  # keys are distinct paths: one matches
        if field == held or field.startswith(held + "."):
            return written + field[len(held):]
    return field


def whole(value: float | None, what: str) -> float | None:
    """`value` when it is a whole number (or None); else ValueError in the words of a
    field: '2500.5: expected a whole number of steps' (a count is never cut short
    without a word)."""
    if value is not None and not float(value).is_integer():
        raise ValueError(f"{value!r}: expected a whole number of {what}")
    return value


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
    "decimal_parsing": "a number", "decimal_type": "a number",
    "finite_number": "a finite number", "int_parsing_size": "a whole number",
    "bool_parsing": "true or false", "bool_type": "true or false", "string_type": "text",
    "string_unicode": "text", "bytes_type": "text",
    "list_type": "a list", "tuple_type": "a list", "set_type": "a list",
    "iterable_type": "a list", "dict_type": "a mapping", "model_type": "a mapping",
    "model_attributes_type": "a mapping", "dataclass_type": "a mapping",
    "datetime_parsing": "an ISO 8601 time", "datetime_type": "an ISO 8601 time",
    "datetime_from_date_parsing": "an ISO 8601 time", "date_parsing": "an ISO 8601 date",
    "date_type": "an ISO 8601 date", "time_delta_parsing": "a duration",
    "url_parsing": "a URL", "url_type": "a URL", "url_scheme": "a URL",
    "none_required": "nothing (null)",
}


# pydantic's bounds, said as costsched says them (with the bound from the error's context).
_BOUNDS = {"greater_than_equal": ("ge", "at least"), "greater_than": ("gt", "more than"),
           "less_than_equal": ("le", "at most"), "less_than": ("lt", "less than")}

# pydantic's own words before a validator's message.
_VALIDATOR_PREFIXES = ("Value error, ", "Assertion failed, ")


def expected_words(error: Mapping[str, Any], longest: int | None = None) -> str:
    """What `error`'s field accepts, as costsched says it ("expected a number", "expected at
    least 1", "expected text of 1 to 100 characters", "expected one of 'stop' or 'move'",
    with the close one); a validator's own words as they are. Never pydantic's phrasing
    ("String should have at least 1 character"). `longest`: the field's max_length, named
    with its shortest."""
    kind, ctx = str(error["type"]), error.get("ctx") or {}
    given = error.get("input")
    if kind in _EXPECTED:
        return f"expected {_EXPECTED[kind]}"
    if kind in _BOUNDS and _BOUNDS[kind][0] in ctx:
        key, words = _BOUNDS[kind]
        return f"expected {words} {ctx[key]}"
    if kind == "multiple_of":
        return f"expected a multiple of {ctx.get('multiple_of')}"
    if kind in ("string_too_short", "string_too_long"):
        low = ctx.get("min_length", 1) if kind == "string_too_short" else None
        high = ctx.get("max_length") if kind == "string_too_long" else longest
        return f"expected {_length(low, high, 'character')}"
    if kind in ("too_short", "too_long"):
        low = ctx.get("min_length") if kind == "too_short" else None
        return f"expected {_length(low, ctx.get('max_length'), 'item')}"
    if kind == "string_pattern_mismatch":
        return f"expected text of the form {ctx.get('pattern')}"
    if kind in ("literal_error", "enum"):
        choices = re.findall(r"'([^']*)'", str(ctx.get("expected", "")))
        return (f"expected one of {', '.join(choices)}"
                + (did_you_mean(given, choices) if isinstance(given, str) else ""))
    if kind == "missing":
        return "missing: give it a value"
    if kind in ("value_error", "assertion_error") or str(error["msg"]).startswith(
            _VALIDATOR_PREFIXES):
        text = str(error["msg"])
        for prefix in _VALIDATOR_PREFIXES:
            text = text.removeprefix(prefix)
        return text
    # A kind no job file, config or option has met yet: its words, costsched's way round.
    msg = str(error["msg"])
    return "expected " + msg.replace("Input should be ", "").replace("should be ", "")


def _length(low: int | None, high: int | None, unit: str) -> str:
    """'non-empty text', 'text of 1 to 100 characters', 'a list of at least 2 items'."""
    noun = "text" if unit == "character" else "a list"
    if low and high:
        return f"{noun} of {low} to {high} {unit}s"
    if low == 1:
        return "non-empty text" if unit == "character" else "a non-empty list"
    if low:
        return f"{noun} of at least {low} {unit}s"
    return f"{noun} of at most {high} {unit}{'s' if high != 1 else ''}"


def error_words(error: Mapping[str, Any], longest: int | None = None) -> str:
    """One pydantic error as costsched says bad input: the value and what is accepted
    ("'ten': expected a number", "0: expected at least 1"), or the validator's own words."""
    words = expected_words(error, longest)
    kind = str(error["type"])
    if kind in ("value_error", "assertion_error", "missing") or not words.startswith(
            "expected"):
        return words
    given = repr(error.get("input"))
    given = given if len(given) <= 60 else given[:57] + "..."
    return f"{given}: {words}"


def all_errors(source: str, exc: ValidationError, sky: bool, root: type[BaseModel]) -> str:
    """Every one of `exc`'s errors of a `root` model (the job spec) in one line, each
    naming its field, so that one run shows all that needs fixing."""
    return f"{source}: " + "; ".join(_one_error(e, sky, root) for e in exc.errors())


def _one_error(error: Mapping[str, Any], sky: bool, root: type[BaseModel]) -> str:
    field = ".".join(_key(p) for p in error["loc"])
    msg = error_words(error, _max_length(error["loc"], root))
    if not field:  # a rule across fields: named by the field its words begin with
        head = msg.split(" ", 1)[0].rstrip(":")
        field = head if head in root.model_fields else ""
    if error["type"] == "extra_forbidden":
        known = _known_fields(error["loc"], root)
        msg = unknown_field(str(error["loc"][-1]), known)
        section = _section_of(str(error["loc"][-1]), root) if len(error["loc"]) == 1 else ""
        if section and not sky:  # a section's key written at the top: where it goes
            msg += (f"; {error['loc'][-1]} belongs under {section}: "
                    f"`{section}: {{{error['loc'][-1]}: ...}}`")
    named = f"field {as_written(field, sky)}: " if field else ""
    if not field and sky:  # a rule across a task's keys: they go in its costsched: section
        named = "its `costsched:` section: "
    return f"{named}{msg}"


def _key(part: object) -> str:
    """A part of a field's path as the file wrote it, quoted with escapes where it holds
    a character that is not printable (a key '\n' is "'\\n'"): the line stays one line."""
    text = str(part)
    return text if text.isprintable() else repr(text)


def _section_of(name: str, root: type[BaseModel]) -> str:
    """The section of `root` whose model has the key `name` ('constraints' for deadline),
    or ''."""
    for section, info in root.model_fields.items():
        for model in (info.annotation, *get_args(info.annotation)):
            if isinstance(model, type) and issubclass(model, BaseModel) \
                    and name in model.model_fields:
                return section
    return ""


def _max_length(loc: tuple, root: type[BaseModel]) -> int | None:
    """The max_length of the field at `loc` (None where it has none or is not a field)."""
    model: Any = root
    for part in loc:
        field = getattr(model, "model_fields", {}).get(str(part))
        if field is None:
            return None
        model = field.annotation
    for meta in getattr(field, "metadata", []) if loc else []:
        if getattr(meta, "max_length", None) is not None:
            return int(meta.max_length)
    return None


def _known_fields(loc: tuple, root: type[BaseModel]) -> list[str]:
    model = root
    for part in loc[:-1]:
        annotation = model.model_fields[str(part)].annotation
        if isinstance(annotation, type) and issubclass(annotation, BaseModel):
            model = annotation
    return list(model.model_fields)
