"""What an agent restored, and the newer versions it skipped: `checkpoint_dir.restore`
says it, a real agent writes it in its status file and in its heartbeat beside the
checkpoints (with the step kept beside each version skipped), and the local and cloud
launchers' instances carry it (`Instance.restored`)."""

from __future__ import annotations

from pathlib import Path

from costsched import restored
from costsched.migration.launcher import Instance
from costsched.restored import DAMAGED, Restored, Skipped
from launchers import heartbeats, version_steps
from launchers.checkpoint_dir import restore
from launchers.checkpoints import open_store
from launchers.checkpoints.layout import version_dir
from launchers.cloud_steps import Place, with_steps
from tests.launchers.test_agent import finish, start_agent, wait_for

ATTEMPT = "j7-m1-0"


def _three_versions(tmp_path: Path) -> str:
    """A store of versions 1..3 (steps 10, 20, 30 kept beside them), version 3 damaged."""
    uri = str(tmp_path / "store")
    store = open_store(uri)
    for step in (10, 20, 30):
        (tmp_path / "state.txt").write_text(f"at {step}")
        version = store.publish(tmp_path / "state.txt").version
        version_steps.keep(uri, version, step, False)
    data = Path(uri) / version_dir(3) / "state.txt"
    data.write_text("X" * len(data.read_text()))  # the same size, other bytes
    return uri


def test_restore_says_the_version_restored_and_those_skipped(tmp_path: Path) -> None:
    store = open_store(_three_versions(tmp_path))
    assert restore(store, tmp_path / "dest") == Restored(2, (Skipped(3, DAMAGED),))
    assert (tmp_path / "dest" / "state.txt").read_text() == "at 20"
    assert restore(store, tmp_path / "older", at_most=1) == Restored(1)  # none skipped
    assert restore(open_store(str(tmp_path / "empty")), tmp_path / "none") == Restored(None)


def test_the_agent_says_what_it_restored_in_its_status_and_heartbeat(tmp_path: Path) -> None:
    uri = _three_versions(tmp_path)
    proc = start_agent(tmp_path, "sleep 0.5", "--attempt", ATTEMPT,
                       "--heartbeat-seconds", "0.1")
    wait_for(lambda: (heartbeats.read(uri, ATTEMPT) or {}).get("restored"))
    status, out = finish(proc, tmp_path)
    said = Restored(2, (Skipped(3, DAMAGED, 30),), 20)
    assert restored.read(status["restored"]) == said, status
    assert "version 3 does not verify" in out
    beat = heartbeats.steps(heartbeats.read(uri, ATTEMPT))
    assert beat.restored == said
    # ... and a cloud's running instance carries it, read off that heartbeat.
    bare = Instance(id="i-1", job_id=7, attempt=ATTEMPT, offering_key=("aws",) * 6,
                    state="running")
    [seen] = with_steps([bare], [Place(7, ATTEMPT, uri)])
    assert seen.restored == said


def test_a_status_that_says_it_wrongly_or_not_at_all_says_nothing() -> None:
    assert restored.read(None) is None  # an older agent's
    assert restored.read({"version": 2}) is None
    assert restored.read({"version": 2, "skipped": [{"version": "3"}]}) is None
    doc = Restored(None, (Skipped(4, DAMAGED, 1700),)).document()
    assert restored.read(doc) == Restored(None, (Skipped(4, DAMAGED, 1700),))
