"""The steps and seconds a job trained, read once for the report's estimates (its
measured speed is `costsched.measured`'s)."""

from pytest import approx

from costsched.report.sums import column_sum
from costsched.work import trained_seconds, trained_span

# placement, job, first step, its time, last step, its time (seconds)
READINGS = [(1, 7, 0, 100.0, 50, 150.0), (2, 7, 50, 400.0, 200, 500.0)]


def test_trained_span_sums_steps_and_seconds_over_placements():
    assert trained_span(READINGS) == (200.0, 150.0)


def test_report_hours_read_one_span():
    steps, seconds = trained_span(READINGS, column_sum)
    # The report's training seconds: the steps it did at that pace.
    assert trained_seconds(READINGS, 200, None, False, column_sum) == approx(
        200 * seconds / steps)


def test_training_time_is_the_steps_done_at_the_measured_pace() -> None:
    """Readings that saw 200 steps in 150 s of a job that went on before and after them:
    its time is that of the steps it did at that pace, its last reported step (past its
    total too, all of its total once it succeeded), not the 150 s the readings span."""
    pace = 200 / 150
    assert trained_seconds(READINGS, 260, None, False) == approx(260 / pace)  # hours of work
    # past its total: the steps it reported are those it did (never cut to its total)
    assert trained_seconds(READINGS, 260, 240, False) == approx(260 / pace)
    assert trained_seconds(READINGS, 260, 240, True) == approx(260 / pace)
    assert trained_seconds(READINGS, 240, 240, True) == approx(240 / pace)  # succeeded
    # exited 0 short of its total: the steps it reported are those it did
    assert trained_seconds(READINGS, 230, 240, True) == approx(230 / pace)
    assert trained_seconds(READINGS, 230, 240, False) == approx(230 / pace)


def test_no_span_without_a_step_and_a_second():
    assert trained_span([]) is None
    assert trained_span([(1, 7, 5, 100.0, 5, 160.0)]) is None  # no step made
    assert trained_seconds([(1, 7, 0, 100.0, 9, 100.0)], 9, None, True) is None  # no time
    assert trained_span([(1, 7, 9, 100.0, 3, 90.0)]) is None  # a reset reads as none
