"""The lines `status` says of a running job's files of the contract not written, on a
cloud instance as on a local one: the agent's heartbeat beside the checkpoints carries its
status file's "no_step_after" (`launchers.unseen`) and "checkpoint_error" (why its
checkpoints are not published), written at once when either begins to be said, and the
cloud launchers fill them into a running instance (`launchers.cloud_steps`)."""

from __future__ import annotations

import json
import os
import signal
from pathlib import Path

from costsched.migration.launcher import Instance
from launchers import heartbeats, nothing_published
from launchers.cloud_steps import Place, with_steps
from launchers.unseen import AFTER_SECONDS, INTERVAL_ENV, wait_seconds
from tests.launchers.test_agent import finish, start_agent, wait_for

AT = 1767225600.0  # 2026-01-01 00:00 UTC
ATTEMPT = "j7-m1-0"
NOTE = nothing_published.note(0.0, False, now=AFTER_SECONDS, wait=AFTER_SECONDS)


def instance(state: str = "running") -> Instance:
    return Instance(id="i-1", job_id=7, attempt=ATTEMPT, offering_key=("aws",) * 6,
                    state=state)


def test_a_heartbeat_says_what_the_status_file_says_of_files_not_written() -> None:
    said = heartbeats.steps(heartbeats.document(None, None, None, None, no_step=60.0,
                                                checkpoint_error=NOTE))
    assert (said.no_step_after, said.checkpoint_error) == (60.0, NOTE)
    quiet = heartbeats.steps(heartbeats.document(5, AT, None, None))
    assert (quiet.no_step_after, quiet.checkpoint_error) == (None, "")
    odd = heartbeats.steps({"pid": 1, "at": AT, "no_step_after": "60",
                            "checkpoint_error": ["x"]})
    assert (odd.no_step_after, odd.checkpoint_error) == (None, "")
    assert heartbeats.steps({"at": AT, "no_step_after": True}).no_step_after is None


def test_the_beat_is_due_at_once_when_a_line_begins_or_ceases_not_as_its_words_change(
        tmp_path: Path) -> None:
    beat = heartbeats.StoreBeat(str(tmp_path / "store"), ATTEMPT, 3600)
    beat.write(None, None, None, None)
    assert not beat.due(None)
    assert beat.due(None, no_step=60.0)
    assert beat.due(None, checkpoint_error="nothing published for 130 s: ...")
    beat.write(None, None, None, None, checkpoint_error="nothing published for 130 s: ...")
    assert not beat.due(None, checkpoint_error="nothing published for 135 s: ...")
    assert beat.due(None)  # published since: said at once


def test_a_running_cloud_instance_carries_them_an_ended_one_does_not(tmp_path: Path) -> None:
    uri = str(tmp_path / "ckpt")
    heartbeats.publish(uri, ATTEMPT, heartbeats.document(
        None, None, None, None, no_step=AFTER_SECONDS, checkpoint_error=NOTE))
    place = [Place(7, ATTEMPT, uri)]
    [running] = with_steps([instance()], place)
    assert (running.no_step_after, running.checkpoint_error) == (AFTER_SECONDS, NOTE)
    [ended] = with_steps([instance("succeeded")], place)
    assert (ended.no_step_after, ended.checkpoint_error) == (None, "")


def test_the_agent_s_heartbeat_says_them_as_its_status_file_does(tmp_path: Path) -> None:
    """A real agent whose job writes neither its step nor a checkpoint: its heartbeat
    (due once an hour) is written at once as each line begins, with its status file's
    words, and a running instance read through it says them."""
    proc = start_agent(tmp_path, "sleep 300", "--attempt", ATTEMPT,
                       "--heartbeat-seconds", "3600",
                       env={INTERVAL_ENV: "0.01"})  # both said after 1.8 s
    uri, status = str(tmp_path / "store"), tmp_path / "work" / "status.json"
    said = lambda: heartbeats.steps(heartbeats.read(uri, ATTEMPT))  # noqa: E731
    try:
        wait_for(lambda: said().checkpoint_error, timeout=120)
        assert said().checkpoint_error.startswith("nothing published from $CHECKPOINT_DIR")
        wait_for(lambda: said().no_step_after, timeout=120)
        [seen] = with_steps([instance()], [Place(7, ATTEMPT, uri)])
        assert seen.no_step_after == wait_seconds({INTERVAL_ENV: "0.01"}) == 1.8
        assert seen.checkpoint_error == said().checkpoint_error
        local = json.loads(status.read_text())
        assert (local["no_step_after"], local["checkpoint_error"]) == (
            seen.no_step_after, seen.checkpoint_error)
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        finish(proc, tmp_path)
