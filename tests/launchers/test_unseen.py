"""One rule for a file of the job contract not seen a while into a job's run
(`launchers.unseen`): its checkpoints (`nothing_published`) and its step (the agent's
"no_step_after"), said at the same time in the same words."""

from __future__ import annotations

from launchers import agent_loop, nothing_published
from launchers.unseen import AFTER_SECONDS, INTERVAL_ENV, overdue, took, wait_seconds


def test_a_file_not_seen_is_overdue_once_the_wait_has_passed_not_before() -> None:
    assert not overdue(None, False, 60, now=1e9)  # its command has not begun (setup)
    assert not overdue(100.0, False, 60, now=159.9)
    assert overdue(100.0, False, 60, now=160.0)
    assert not overdue(100.0, True, 60, now=1e9)  # written: never said


def test_the_step_and_the_checkpoints_follow_the_same_rule(monkeypatch) -> None:  # noqa: ANN001
    monkeypatch.setattr("time.monotonic", lambda: 1000.0)
    monkeypatch.delenv(INTERVAL_ENV, raising=False)
    began_late = 1000.0 - AFTER_SECONDS + 1
    began = 1000.0 - AFTER_SECONDS
    assert agent_loop.no_step(began_late, None) == {}
    assert not nothing_published.note(began_late, False)
    assert agent_loop.no_step(began, None) == {"no_step_after": AFTER_SECONDS}
    assert f"in the first {took(AFTER_SECONDS)} of its run" in nothing_published.note(began,
                                                                                      False)
    assert agent_loop.no_step(began, 0) == {}  # step 0 is a step reported
    assert took(60) == "1 min" and took(9) == "9 s"


def test_a_job_given_a_short_checkpoint_interval_is_told_sooner_of_both(
        monkeypatch) -> None:  # noqa: ANN001
    """Three of its checkpoint intervals when they are shorter than a minute, for its step
    as for its checkpoints; a minute otherwise, and when the interval is unreadable."""
    assert wait_seconds({INTERVAL_ENV: "0.1"}) == 18.0
    assert wait_seconds({INTERVAL_ENV: "30"}) == AFTER_SECONDS
    for odd in ("", "soon", "0", "-1", "nan", "inf"):
        assert wait_seconds({INTERVAL_ENV: odd}) == AFTER_SECONDS, odd
    monkeypatch.setenv(INTERVAL_ENV, "0.1")
    monkeypatch.setattr("time.monotonic", lambda: 1000.0)
    assert agent_loop.no_step(1000.0 - 17.9, None) == {}
    assert agent_loop.no_step(1000.0 - 18.0, None) == {"no_step_after": 18.0}
    assert "in the first 18 s of its run" in nothing_published.note(1000.0 - 18.0, False)
