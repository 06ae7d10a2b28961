"""Secrets given at launch: each the task names, each with a value."""

from __future__ import annotations

import pytest

from costsched import launch_secrets
from costsched.model import InvalidInput


def test_a_secret_given_empty_is_refused_naming_it_and_how_to_give_it() -> None:
    with pytest.raises(InvalidInput) as caught:
        launch_secrets.check(["WANDB_KEY"], {"WANDB_KEY": ""}, "sky.yaml")
    assert str(caught.value) == (
        "sky.yaml: field secrets.WANDB_KEY is given empty: give its value (--secret "
        "NAME=VALUE), or set WANDB_KEY in your environment and give --secret WANDB_KEY")
    # As printed: masking (costsched.redact) leaves the hint whole.
    from costsched import redact
    assert redact.redact(str(caught.value)) == str(caught.value)


def test_a_secret_given_with_a_value_is_kept() -> None:
    assert launch_secrets.check(["A"], {"A": "v-12"}, "t.yaml") == {"A": "v-12"}


def test_a_secret_too_short_to_be_masked_in_the_jobs_log_is_refused() -> None:
    with pytest.raises(InvalidInput) as caught:
        launch_secrets.check(["MF_API_TOKEN"], {"MF_API_TOKEN": "tok"}, "mf.yaml")
    assert str(caught.value) == (
        "mf.yaml: field secrets.MF_API_TOKEN is given a value shorter than 4 characters; a "
        "job's output is masked of secrets from 4 characters (a shorter one would mask "
        "ordinary words), so its log could show this one: give the real secret, or give the "
        "value with --env if it need not be secret")  # (said by `launch`, which takes --env)
    assert "tok" not in str(caught.value)


def test_a_secret_given_under_a_mistyped_name_gets_the_close_one() -> None:
    with pytest.raises(InvalidInput) as found:
        launch_secrets.check(["WANDB_API_KEY"], {"WANDB_API_KEYS": "x"}, "sky.yaml")
    assert str(found.value) == (
        "sky.yaml: field secrets: 'WANDB_API_KEYS' is given at launch but the task names no "
        "such secret; expected one of WANDB_API_KEY; did you mean 'WANDB_API_KEY'?")


def test_every_env_and_secret_not_given_is_named_at_once() -> None:
    with pytest.raises(InvalidInput) as caught:
        launch_secrets.check(["HF_TOKEN", "WANDB_KEY"], {"WANDB_KEY": "w-1"}, "sky.yaml",
                             envs=["EPOCHS", "LR"])
    assert str(caught.value) == (
        "sky.yaml: fields envs.EPOCHS, envs.LR, secrets.HF_TOKEN are not given: give them "
        "at launch with --env EPOCHS=VALUE --env LR=VALUE --secret HF_TOKEN (NAME=VALUE "
        "gives a value, NAME alone takes it from your environment)")
    from costsched import redact
    assert redact.redact(str(caught.value)) == str(caught.value)


@pytest.mark.parametrize("given", [{"KM_TOKEN": "k1"}, {"KM_TOKEN": "k1-long", "B": "ab"}])
def test_a_value_given_by_option_too_short_to_be_masked_is_said_of_the_option(
        given: dict[str, str]) -> None:
    """`costsched start` and `migrate` (`check_given`) as `launch`: the value came from
    --secret (or the environment it names), not from the job's file; neither takes --env,
    which only `launch`'s line offers."""
    short = next(n for n, v in given.items() if len(v) < 4)
    with pytest.raises(InvalidInput) as caught:
        launch_secrets.check_given("job sec", ["KM_TOKEN", "B"], given)
    assert str(caught.value) == (
        f"--secret {short} is given a value shorter than 4 characters; a job's output is "
        "masked of secrets from 4 characters (a shorter one would mask ordinary words), so "
        "its log could show this one: give the real secret")
    assert "k1" not in str(caught.value)
