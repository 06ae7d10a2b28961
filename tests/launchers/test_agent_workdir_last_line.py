"""The last line of a job's log that a failure's status quotes: whole when short, cut and
marked '...' when long, '' for no log."""

from __future__ import annotations

from pathlib import Path

from launchers.agent_workdir import last_line


def test_a_long_last_line_is_cut_and_says_so_a_short_one_is_whole(tmp_path: Path) -> None:
    log = tmp_path / "job.log"
    assert last_line(log) == ""
    log.write_text("step 1\nValueError: bad batch size\n\n")
    assert last_line(log) == "ValueError: bad batch size"
    long = "OSError: " + "x" * 300
    log.write_text(f"step 1\n{long}\n")
    cut = last_line(log)
    assert len(cut) == 200 and cut.endswith("...") and long.startswith(cut[:-3])
    log.write_text("y" * 200 + "\n")
    assert last_line(log) == "y" * 200  # exactly the limit: whole
