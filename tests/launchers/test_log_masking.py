"""launchers/log_masking.py: a job's secrets kept off its log, whole or split between
writes; and the agent, as a real subprocess, writing a job's log with them masked."""

from __future__ import annotations

import sys
from pathlib import Path

from launchers.log_masking import MASK, MaskedOutput
from tests.launchers.test_agent import finish, start_agent

TOKEN = b"hf_live_8c1d2e3f"


def fed(masked: MaskedOutput, *chunks: bytes) -> bytes:
    return b"".join(masked.feed(c) for c in chunks) + masked.flush()


def test_a_value_is_masked_whole_in_one_write_and_split_between_writes() -> None:
    masked = MaskedOutput([TOKEN])
    assert fed(masked, b"token " + TOKEN + b" ok\n") == b"token *** ok\n"
    for cut in range(1, len(TOKEN)):
        assert fed(MaskedOutput([TOKEN]), b"a " + TOKEN[:cut], TOKEN[cut:] + b"\n") == \
            b"a ***\n", cut


def test_only_what_could_begin_a_value_is_held_back_and_a_flush_writes_it() -> None:
    masked = MaskedOutput([TOKEN])
    assert masked.feed(b"step 10\n") == b"step 10\n"  # nothing held: the log stays live
    assert masked.feed(b"say hf_li") == b"say "
    assert masked.flush() == b"hf_li"  # the job went quiet: it was not a secret after all
    assert fed(MaskedOutput([TOKEN]), b"hf_li", b"ne\n") == b"hf_line\n"


def test_a_value_inside_another_is_masked_with_it_and_short_values_are_left() -> None:
    masked = MaskedOutput([b"abcd", b"xxabcdxx", b"abc"])
    assert fed(masked, b"1 xxabcdxx 2 abcd 3 abc\n") == b"1 *** 2 *** 3 abc\n"
    assert MASK == b"***"


def test_the_agent_writes_no_secret_the_job_prints_whole_or_in_pieces(tmp_path: Path) -> None:
    secret = TOKEN.decode()
    job = (f"echo start $HF_TOKEN end; printf 'x {secret[:5]}'; sleep 0.2; "
           f"printf '{secret[5:]} y\\n'; {sys.executable} -c "
           "\"import os, sys; sys.stderr.write(os.environ['HF_TOKEN'] + '\\n')\"")
    status, _ = finish(start_agent(tmp_path, job, "--mask-env", "HF_TOKEN", "--setup",
                                   "echo setup sees $HF_TOKEN",
                                   env={"HF_TOKEN": secret}), tmp_path)
    log = (tmp_path / "work" / "job.log").read_text()
    assert status["state"] == "succeeded", status
    assert secret not in log
    assert log.splitlines() == ["costsched: setup", "setup sees ***", "costsched: setup done",
                                "start *** end", "x *** y", "***"]


def test_a_failed_jobs_last_line_in_its_status_holds_no_secret(tmp_path: Path) -> None:
    secret = TOKEN.decode()
    status, _ = finish(start_agent(tmp_path, "echo bad token $HF_TOKEN; exit 3",
                                   "--mask-env", "HF_TOKEN", env={"HF_TOKEN": secret}),
                       tmp_path)
    assert status["state"] == "failed" and status["exit_code"] == 3
    assert secret not in status["detail"] and "bad token ***" in status["detail"]


def test_without_secrets_the_job_writes_its_log_itself(tmp_path: Path) -> None:
    secret = TOKEN.decode()
    status, _ = finish(start_agent(tmp_path, "echo plain $HF_TOKEN",
                                   env={"HF_TOKEN": secret}), tmp_path)
    assert status["state"] == "succeeded"
    assert (tmp_path / "work" / "job.log").read_text() == f"plain {secret}\n"
