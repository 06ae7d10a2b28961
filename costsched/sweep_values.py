"""One name's values in a job spec's sweep, as the job file writes them (`SweepValues`:
the type of a spec's `sweep` values, each checked by `sweep_values`)."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BeforeValidator


def sweep_values(values: Any) -> list[str | int | float]:
    """One name's values in a sweep, as the job file writes them: a non-empty list of text
    and numbers (true and false as YAML writes them, for the env's value), each once (as
    its env reads it); a one-line refusal, naming the item, of any other."""
    if not isinstance(values, list):
        raise ValueError(f"{_yaml(values)}: expected a list of values, such as [0.1, 0.01]")
    if not values:
        raise ValueError("an empty list: expected at least one value")
    for i, item in enumerate(values, start=1):
        if item is None or isinstance(item, (list, dict)):
            raise ValueError(f"item {i}, {_yaml(item)}: expected text or a number")
    out = [_yaml(v) if isinstance(v, bool) else v for v in values]
    first: dict[str, int] = {}  # each value as its env reads it -> its item
    for i, value in enumerate(out, start=1):
        seen = first.setdefault(str(value), i)
        if seen != i:  # the same env twice: the same run, paid twice
            raise ValueError(f"item {i}, {_yaml(values[i - 1])}: repeats item {seen}, so two "
                             "jobs would be the same run: expected each value once")
    return out


# A job spec's sweep values of one name, read by `sweep_values`.
SweepValues = Annotated[list[str | int | float], BeforeValidator(sweep_values)]


def _yaml(value: Any) -> str:
    """A parsed value as YAML writes it (true, null), for messages and envs."""
    import yaml

    return yaml.safe_dump(value, default_flow_style=True, width=1_000).removesuffix(
        "\n...\n").strip()
