"""`status`'s 'next: not decided yet' line of a deadline job: a re-plan due after its
deadline is never named as its next decision without saying so, and what decides it until
then (a watch, should its instance be lost) is said with its interval."""

from __future__ import annotations

from datetime import datetime, timezone

from costsched.daemon.supervision import Recovery, Watching

AT = datetime(2026, 12, 2, 1, 11, tzinfo=timezone.utc)


def _recovery() -> Recovery:
    supervisor = Watching(123, "host", True, "auto", 30.0, "", AT, AT, "ok", "")
    return Recovery([supervisor], live_jobs=1, autostart=True, replan="30 * * * *")


def test_a_re_plan_after_the_deadline_is_said_to_come_after_it() -> None:
    due = datetime(2026, 12, 2, 1, 26, tzinfo=timezone.utc)
    said = _recovery().undecided(3, AT, due=due)
    assert said == (
        "not decided yet: the supervisor's next re-plan, 01:30 UTC (schedule.replan "
        "30 * * * *) comes after its deadline, 01:26 UTC, so until then it stays where it "
        "runs unless its instance is lost (a watch, every 30 s, then places it again by its "
        "deadline policy); `costsched migrate 3 --dry-run` shows what it would decide now")


def test_a_re_plan_before_the_deadline_is_its_next_decision() -> None:
    due = datetime(2026, 12, 2, 3, 0, tzinfo=timezone.utc)
    for deadline in (due, None):
        said = _recovery().undecided(3, AT, due=deadline)
        assert said.startswith("not decided yet: the supervisor decides it at its next "
                               "re-plan, 01:30 UTC (schedule.replan 30 * * * *); "), said
        assert "deadline" not in said
