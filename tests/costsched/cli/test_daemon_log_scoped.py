"""`daemon` run inside another program's process (a test's, a notebook's): its log goes
where it is told while it runs, and afterwards the daemon's logger is as it was, with no
handler left on a stream or file that has gone."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from costsched import daemon as scheduled
from costsched.daemon.events import log as daemon_log


@pytest.mark.parametrize("to_file", [True, False])
def test_a_daemon_run_leaves_the_log_as_it_found_it(
        cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, to_file: bool) -> None:  # noqa: ANN001
    before = (list(daemon_log.handlers), daemon_log.propagate, daemon_log.level)
    seen: list[list[logging.Handler]] = []

    def run_once(store, config):  # noqa: ANN001, ANN202 - the tasks are not what is tested
        seen.append(list(daemon_log.handlers))
        daemon_log.info("a line while it runs")
        return []

    monkeypatch.setattr(scheduled, "run_once", run_once)
    log = tmp_path / "daemon.log"
    result = cli("daemon", "--once", *(["--log", log] if to_file else []))
    assert result.exit_code == 0, result.output
    [during] = seen
    assert len(during) == len(before[0]) + 1  # its own handler, while it ran
    if to_file:
        assert log.read_text() == "a line while it runs\n"
    else:
        assert "a line while it runs" in result.stderr
    assert (list(daemon_log.handlers), daemon_log.propagate, daemon_log.level) == before
    daemon_log.info("a line after it ended")  # no handler of the run's left to write it
    if to_file:
        assert log.read_text() == "a line while it runs\n"
