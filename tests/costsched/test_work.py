"""The steps and seconds a job trained, read once for status's pace and the report's
estimates."""

from costsched.report.estimates import _trained
from costsched.report.sums import column_sum
from costsched.work import measured_pace, trained_span

# placement, job, first step, its time, last step, its time (seconds)
READINGS = [(1, 7, 0, 100.0, 50, 150.0), (2, 7, 50, 400.0, 200, 500.0)]


def test_trained_span_sums_steps_and_seconds_over_placements():
    assert trained_span(READINGS) == (200.0, 150.0)


def test_status_pace_and_report_hours_read_one_span():
    steps, seconds = trained_span(READINGS, column_sum)
    assert measured_pace(READINGS) == steps / seconds
    assert _trained(READINGS) == (seconds / 3600, steps)


def test_no_span_without_a_step_and_a_second():
    assert trained_span([]) is None
    assert measured_pace([(1, 7, 5, 100.0, 5, 160.0)]) is None  # no step made
    assert _trained([(1, 7, 0, 100.0, 9, 100.0)]) is None  # no time passed
    assert measured_pace([(1, 7, 9, 100.0, 3, 90.0)]) is None  # a reset reads as none
