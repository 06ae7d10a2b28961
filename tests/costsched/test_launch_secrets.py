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


def test_a_secret_given_to_a_task_of_none_says_how_to_name_it_or_give_it_as_an_env() -> None:
    with pytest.raises(InvalidInput) as found:
        launch_secrets.check([], {"HF_TOKEN": "hf-value"}, "sky.yaml")
    assert str(found.value) == (
        "sky.yaml: field secrets: 'HF_TOKEN' is given at launch but the task names no "
        "secrets: name it under `secrets:` in the task, or give its value as an env "
        "(--env NAME=VALUE)")
    with pytest.raises(InvalidInput) as found:
        launch_secrets.check_given("job clf", [], {"HF_TOKEN": "hf-value"})
    assert str(found.value) == ("job clf has no secrets (its task names none under "
                                "`secrets:`), so --secret HF_TOKEN gives it nothing: give the "
                                "command without --secret")
    # As printed: masking (costsched.redact) leaves it whole.
    from costsched import redact
    assert redact.redact(str(found.value)) == str(found.value)


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


def test_a_daemon_thread_carrying_jobs_on_leaves_other_threads_as_they_were() -> None:
    """A daemon's watch and its scheduled passes run in threads of their own: one entering
    while the other leaves must leave neither carrying afterwards, and a thread that does
    not carry (a test's, a CLI's) never reads the daemon's words."""
    import threading

    entered = [threading.Event(), threading.Event()]
    leave = [threading.Event(), threading.Event()]
    seen: dict[str, object] = {}

    def passes(i: int, who: str) -> None:
        with launch_secrets.carried_by(who, "give {names}"):
            entered[i].set()
            leave[i].wait(10)
            seen[who] = launch_secrets.waits_line("recovery", ["KM_TOKEN"], ahead=True)
        seen[f"{who} after"] = launch_secrets.carrying()

    watch = threading.Thread(target=passes, args=(0, "the supervisor"))
    tasks = threading.Thread(target=passes, args=(1, "the daemon"))
    watch.start()
    entered[0].wait(10)
    tasks.start()
    entered[1].wait(10)
    assert not launch_secrets.carrying()  # this thread carries nothing meanwhile
    assert launch_secrets.waits_line("recovery", ["KM_TOKEN"], ahead=True) is None
    leave[0].set()  # the first in leaves first
    watch.join(10)
    leave[1].set()
    tasks.join(10)
    assert seen == {
        "the supervisor": "a recovery would wait for secret KM_TOKEN (the supervisor's "
                          "environment lacks it): give KM_TOKEN",
        "the supervisor after": False,
        "the daemon": "a recovery would wait for secret KM_TOKEN (the daemon's environment "
                      "lacks it): give KM_TOKEN",
        "the daemon after": False}
    assert not launch_secrets.carrying()
