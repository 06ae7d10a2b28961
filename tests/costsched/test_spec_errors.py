"""pydantic's errors as costsched says bad input: the value and what is accepted, in
costsched's words, for every kind of constraint a job file, the config or an option has
(never "String should have at least 1 character" or "Input should be ...")."""

from __future__ import annotations

from typing import Literal

import pytest
from pydantic import BaseModel, Field, ValidationError

from costsched.jobspec import parse
from costsched.model import InvalidInput
from costsched.spec_errors import error_words

PYDANTIC_WORDS = ("should", "Input", "String", "Field required", "Value error", "List ")


class _Every(BaseModel):
    short: str = Field("x", min_length=2)
    long: str = Field("x", max_length=3)
    both: str = Field("x", min_length=1, max_length=10)
    items: list[int] = Field([1], min_length=1, max_length=2)
    form: str = Field("a", pattern=r"^[a-z]+$")
    choice: Literal["stop", "move"] = "stop"
    whole: int = Field(1, ge=1, le=5, multiple_of=1)
    number: float = Field(1.0, gt=0, allow_inf_nan=False)
    flag: bool = True
    mapping: dict[str, int] = {}
    needed: int


@pytest.mark.parametrize(("field", "value", "says"), [
    ("short", "a", "'a': expected text of at least 2 characters"),
    ("long", "abcd", "'abcd': expected text of at most 3 characters"),
    ("both", "", "'': expected non-empty text"),
    ("items", [], "[]: expected a non-empty list"),
    ("items", [1, 2, 3], "[1, 2, 3]: expected a list of at most 2 items"),
    ("form", "A1", "'A1': expected text of the form ^[a-z]+$"),
    ("choice", "mvoe", "'mvoe': expected one of stop, move; did you mean 'move'?"),
    ("whole", 0, "0: expected at least 1"),
    ("whole", "x", "'x': expected a whole number"),
    ("number", float("inf"), "inf: expected a finite number"),
    ("flag", "maybe", "'maybe': expected true or false"),
    ("mapping", [1], "[1]: expected a mapping"),
])
def test_each_constraint_is_said_in_costscheds_words(field: str, value: object,
                                                     says: str) -> None:
    with pytest.raises(ValidationError) as caught:
        _Every.model_validate({"needed": 1, field: value})
    [error] = caught.value.errors()
    words = error_words(error)
    assert words == says
    assert not any(w in words for w in PYDANTIC_WORDS), words


def test_a_missing_field_is_not_said_in_pydantics_words() -> None:
    with pytest.raises(ValidationError) as caught:
        _Every.model_validate({})
    words = error_words(caught.value.errors()[0])
    assert words == "missing: give it a value"


def test_an_empty_job_name_names_the_field_and_what_a_name_is() -> None:
    with pytest.raises(InvalidInput) as caught:
        parse({"name": "", "model": "ResNet-50", "steps": 10}, "x.yaml")
    assert str(caught.value) == "x.yaml: field name: '': expected text of 1 to 100 characters"


BAD10 = """\
name: bad10
resources:
  accelerators: T4:1
run: python ae.py
costsched:
  steps: 3000
  throughputs: {T4: 30}
  budget: -5
  checkpoint: {interval_minutes: 0}
"""


def test_every_error_of_a_file_is_shown_each_naming_its_field(cli, tmp_path) -> None:  # noqa: ANN001
    path = tmp_path / "bad10.yaml"
    path.write_text(BAD10)
    result = cli("plan", path)
    said = result.output.strip().splitlines()[-1]
    assert result.exit_code == 2 and "more)" not in said, result.output
    assert said.startswith(f"error: {path}: job 'bad10': "), said
    assert "field costsched.checkpoint.interval_minutes: 0: expected minutes > 0" in said
    assert "; field costsched.budget: -5: expected a positive amount" in said  # as typed


def test_a_rule_across_a_tasks_keys_says_they_go_in_its_costsched_section(
        cli, tmp_path) -> None:  # noqa: ANN001
    """A SkyPilot task with a speed but no work: the keys that give it are named where they
    go, with an example (steps without a speed are planned per hour of work instead:
    tests/costsched/cli/test_plan_steps_no_speed.py); a job file's own error names no
    section."""
    sky = tmp_path / "t.yaml"
    sky.write_text("name: t\nresources: {accelerators: V100:1}\nrun: python train.py\n"
                   "costsched: {throughputs: {V100: 5}}\n")
    said = " ".join(cli("plan", sky).output.split())
    assert (f"error: {sky}: job 't': field costsched.throughputs: throughputs gives the "
            "job's speed, not its work: give its work beside, as steps (`costsched: {steps: "
            "N, ...}`)") in said
    own = tmp_path / "j.yaml"
    own.write_text("name: j\nrun: python train.py\nsteps: 2000\n")
    said = " ".join(cli("plan", own).output.split())
    assert f"error: {own}: job 'j': give model" in said and "costsched:" not in said


def test_an_env_name_a_shell_cannot_read_is_refused(cli, tmp_path) -> None:  # noqa: ANN001
    """`STEP SLEEP` could never be read as $STEP SLEEP: refused in one line, in a task and in
    a job file alike."""
    for text in ("name: t\nresources: {accelerators: V100:1}\nenvs: {STEP SLEEP: 1}\n"
                 "run: x\ncostsched: {steps: 20, throughputs: {V100: 5}}\n",
                 "name: t\nrun: x\nsteps: 20\nthroughputs: {V100: 5}\nenvs: {2FAST: 1}\n"):
        path = tmp_path / "t.yaml"
        path.write_text(text)
        said = " ".join(cli("plan", path).output.split())
        assert f"error: {path}: job 't': field envs: '" in said
        assert ("expected an environment variable name (letters, digits and _, not starting "
                "with a digit)") in said


@pytest.mark.parametrize("key", ["\n", "a\tb", "\x1b[31m"])
def test_a_key_with_a_control_character_is_named_on_one_line(key: str) -> None:
    """A sweep key '\\n' (found by the fuzz test) is named quoted with its escapes: the
    refusal stays one line."""
    with pytest.raises(InvalidInput) as caught:
        parse({"name": "j", "model": "ResNet-50 (batch size 64)", "steps": 10,
               "run": "x", "sweep": {key: None}}, "job.yaml")
    text = str(caught.value)
    assert "\n" not in text and "\t" not in text and "\x1b" not in text, text
    assert f"field sweep.{key!r}: " in text, text
