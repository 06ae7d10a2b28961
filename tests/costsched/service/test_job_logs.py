"""A job's output followed as it comes: the lines after those already shown."""

from costsched.service.jobs.job_logs import _new_lines


def test_new_lines_after_a_scrolled_window() -> None:
    seen = ["a\n", "b\n", "c\n"]
    assert _new_lines(seen, ["b\n", "c\n", "d\n"]) == ["d\n"]
    assert _new_lines(seen, ["a\n", "b\n", "c\n", "d\n"]) == ["d\n"]
    assert _new_lines(seen, ["a\n", "b\n", "c\n"]) == []
    assert _new_lines([], ["x\n"]) == ["x\n"]
    assert _new_lines(seen, ["x\n", "y\n"]) == ["x\n", "y\n"]
