"""`costsched check` on what a user's machine really holds: broken credential files, half
set variables, missing profiles, credential helpers that fail (their output holding a
token) or never return, an endpoint that accepts and never answers, no network, a FIFO
where a credentials file should be. Each is one line naming the cause and the fix; no
traceback, no secret, no call waited on past its bound, no failed call taken for a
capability. Real files, real helper processes, a loopback server; no cloud is called."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from costsched.service import check as checks
from tests.conftest import hermetic_aws_env

TOKEN = "ghp_9f3Kq2LmZx8Rt4Vb7Nc1Wd6Ys0Pa5Je"
SECONDS = 0.5  # each call's bound in these tests (config calls.timeout_seconds)


@pytest.fixture()
def aws_home(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """No AWS credentials from anywhere; the files live in the returned folder."""
    hermetic_aws_env(monkeypatch, tmp_path)
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"):
        monkeypatch.delenv(name)
    return tmp_path


def no_secret_and_nothing_possible(result: checks.CloudCheck) -> None:
    text = json.dumps(result.as_dict())
    assert TOKEN not in text
    assert "Traceback" not in text
    assert not (result.collect_prices or result.launch or result.checkpoints)
    assert result.problem and "\n" not in result.problem
    assert result.fixes and all("\n" not in f for f in result.fixes)


def aws_config(home: Path, monkeypatch: pytest.MonkeyPatch, text: str) -> None:
    (home / "aws-config").write_text(text)
    monkeypatch.setenv("AWS_CONFIG_FILE", str(home / "aws-config"))


def test_a_malformed_credentials_file_is_named(aws_home: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    bad = aws_home / "credentials"
    bad.write_text("[default]\naws_access_key_id = AKIAEXAMPLE\naws_secret_access_key\n"
                   "[broken\n")
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(bad))
    result = checks.check_aws(seconds=SECONDS)
    no_secret_and_nothing_possible(result)
    assert str(bad) in result.problem and "cannot be parsed" in result.problem


@pytest.mark.parametrize("given", ["AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"])
def test_only_one_of_the_two_keys(aws_home: Path, monkeypatch: pytest.MonkeyPatch,
                                  given: str) -> None:
    monkeypatch.setenv(given, TOKEN)
    result = checks.check_aws(seconds=SECONDS)
    no_secret_and_nothing_possible(result)
    other = ({"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"} - {given}).pop()
    assert result.problem == f"only {given} is set, not {other}"
    assert other in result.fixes[0]


def test_aws_profile_naming_a_missing_profile(aws_home: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    aws_config(aws_home, monkeypatch, "[profile work]\nregion = us-east-1\n")
    monkeypatch.setenv("AWS_PROFILE", "wrok")
    result = checks.check_aws(seconds=SECONDS)
    no_secret_and_nothing_possible(result)
    assert "AWS_PROFILE" in result.problem and "'wrok'" in result.problem
    assert "list-profiles" in result.fixes[0]


def test_a_source_profile_naming_a_missing_profile(aws_home: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    aws_config(aws_home, monkeypatch, "[profile ci]\nrole_arn = arn:aws:iam::123456789012:"
               "role/ci\nsource_profile = gone\n")
    monkeypatch.setenv("AWS_PROFILE", "ci")
    result = checks.check_aws(seconds=SECONDS)
    no_secret_and_nothing_possible(result)
    assert "gone" in result.problem and "source_profile" in result.problem


def helper(home: Path, body: str) -> Path:
    script = home / "helper.sh"
    script.write_text(f"#!/bin/sh\necho $$ > {home / 'helper.pid'}\n{body}\n")
    script.chmod(0o755)
    return script


def test_a_failing_credential_process_never_shows_its_output(
        aws_home: Path, monkeypatch: pytest.MonkeyPatch, cli) -> None:  # noqa: ANN001
    script = helper(aws_home, f"echo 'refresh failed: token={TOKEN}' >&2\n"
                              f"echo '{{\"Version\": 9, \"SecretAccessKey\": \"{TOKEN}\"}}'\n"
                              "exit 3")
    aws_config(aws_home, monkeypatch, f"[default]\ncredential_process = {script}\n")
    result = checks.check_aws(seconds=SECONDS)
    no_secret_and_nothing_possible(result)
    assert "credential_process" in result.problem and "exited with code 3" in result.problem
    # The whole command, as a user runs it: one line per cloud, no traceback, no token.
    monkeypatch.setattr(checks, "call_seconds", lambda: SECONDS)
    monkeypatch.setattr(checks, "check_gcp", lambda: checks.CloudCheck("gcp", False))
    shown = cli("check")
    assert shown.exit_code == 0  # (the local launcher still launches)
    assert TOKEN not in shown.output and "Traceback" not in shown.output
    assert "aws: the credential_process of profile 'default' failed" in shown.stdout


def test_a_credential_process_that_never_returns_is_stopped(
        aws_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    script = helper(aws_home, "sleep 300 &\nwait")  # a child keeps the pipes open too
    aws_config(aws_home, monkeypatch, f"[default]\ncredential_process = {script}\n")
    result = checks.check_aws(seconds=SECONDS)
    no_secret_and_nothing_possible(result)
    assert f"did not return within {SECONDS:g} s" in result.problem
    pid = int((aws_home / "helper.pid").read_text())
    with pytest.raises(ProcessLookupError):  # the helper's group was killed and reaped
        os.kill(pid, 0)


@pytest.fixture()
def silent_server() -> Iterator[str]:
    """A loopback server that accepts every connection and never answers."""
    server = socket.create_server(("127.0.0.1", 0))
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        server.settimeout(0.1)
        while not stop.is_set():
            try:
                held.append(server.accept()[0])
            except OSError:
                continue

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.getsockname()[1]}"
    stop.set()
    thread.join()
    for conn in held:
        conn.close()
    server.close()


def test_an_endpoint_that_never_answers_is_given_its_bound_once(
        aws_home: Path, monkeypatch: pytest.MonkeyPatch, silent_server: str) -> None:
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIAEXAMPLEEXAMPLE")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", TOKEN)
    monkeypatch.setenv("AWS_ENDPOINT_URL", silent_server)
    result = checks.check_aws(seconds=SECONDS)
    no_secret_and_nothing_possible(result)
    assert f"no answer within {SECONDS:g} s" in result.problem
    assert f"AWS_ENDPOINT_URL {silent_server}" in result.problem
    assert [(c.name, c.ok) for c in result.calls] == [("sts GetCallerIdentity", False)]
    assert "unset AWS_ENDPOINT_URL" in result.fixes[0]


@pytest.fixture()
def no_network(monkeypatch: pytest.MonkeyPatch) -> None:
    """No name resolves, as on a machine with no network at all."""
    def fail(*args: object, **kwargs: object) -> None:
        raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")

    monkeypatch.setattr(socket, "getaddrinfo", fail)


def test_aws_with_no_network_says_so(aws_home: Path, monkeypatch: pytest.MonkeyPatch,
                                     no_network: None) -> None:
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIAEXAMPLEEXAMPLE")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", TOKEN)
    result = checks.check_aws(seconds=SECONDS)
    no_secret_and_nothing_possible(result)
    assert "DNS" in result.problem and result.fixes == [checks.NETWORK_FIX]


@pytest.fixture()
def gcp_home(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    monkeypatch.setenv("CLOUDSDK_CONFIG", str(tmp_path / "gcloud"))
    monkeypatch.delenv("GOOGLE_APPLICATION_CREDENTIALS", raising=False)
    monkeypatch.setenv("GOOGLE_CLOUD_PROJECT", "my-project")
    return tmp_path


def test_gcp_user_credentials_with_no_network_is_not_an_iam_problem(
        gcp_home: Path, monkeypatch: pytest.MonkeyPatch, no_network: None) -> None:
    key = gcp_home / "adc.json"
    key.write_text(json.dumps({"type": "authorized_user", "client_id": "1.apps.example",
                               "client_secret": TOKEN, "refresh_token": f"1//{TOKEN}"}))
    monkeypatch.setenv("GOOGLE_APPLICATION_CREDENTIALS", str(key))
    result = checks.check_gcp(seconds=SECONDS)
    no_secret_and_nothing_possible(result)
    assert "DNS" in result.problem
    assert not any("iam" in f for f in result.fixes)
    assert result.fixes == [checks.NETWORK_FIX]


@pytest.mark.parametrize("variable", [True, False], ids=["GOOGLE_APPLICATION_CREDENTIALS",
                                                         "gcloud file"])
def test_a_gcp_credentials_fifo_does_not_block(gcp_home: Path, monkeypatch: pytest.MonkeyPatch,
                                               variable: bool) -> None:
    fifo = (gcp_home / "key.json" if variable else
            gcp_home / "gcloud" / "application_default_credentials.json")
    fifo.parent.mkdir(exist_ok=True)
    os.mkfifo(fifo)
    if variable:
        monkeypatch.setenv("GOOGLE_APPLICATION_CREDENTIALS", str(fifo))
    done: list[checks.CloudCheck] = []
    thread = threading.Thread(target=lambda: done.append(checks.check_gcp(seconds=SECONDS)),
                              daemon=True)
    thread.start()
    thread.join(60)  # a guard against a hang, not a speed limit
    assert done, "check_gcp blocked on the FIFO"
    no_secret_and_nothing_possible(done[0])
    assert str(fifo) in done[0].problem and "FIFO" in done[0].problem


def test_a_fifo_as_the_aws_credentials_file_does_not_block(
        aws_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fifo = aws_home / "credentials-fifo"
    os.mkfifo(fifo)
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(fifo))
    result = checks.check_aws(seconds=SECONDS)
    no_secret_and_nothing_possible(result)
    assert "FIFO" in result.problem and "AWS_SHARED_CREDENTIALS_FILE" in result.problem


def test_a_cloud_check_that_hangs_or_breaks_is_one_line_and_the_others_are_reported() -> None:
    never = threading.Event()
    secret_error = RuntimeError(f"boom\nAuthorization: Bearer {TOKEN}")

    def hangs() -> checks.CloudCheck:
        never.wait()
        raise AssertionError("unreachable")

    def breaks() -> checks.CloudCheck:
        raise secret_error

    try:
        results = checks.check_all(aws=hangs, gcp=breaks, total_seconds=0.5)
    finally:
        never.set()
    assert [r.cloud for r in results] == ["aws", "gcp", "azure"]
    assert "did not end within 0.5 s" in results[0].problem
    assert results[1].problem == "the check failed: RuntimeError: boom"
    assert results[2].collect_prices  # Azure's public prices, checked as usual
    for r in results[:2]:
        no_secret_and_nothing_possible(r)


def test_with_no_network_at_all_the_command_says_so_per_cloud(tmp_path: Path) -> None:
    """The real command in a network namespace of its own (no interface but loopback)."""
    probe = subprocess.run(["unshare", "-n", "true"], capture_output=True)
    if probe.returncode != 0:
        pytest.skip("cannot make a network namespace here (unshare -n)")
    home = tmp_path / "home"
    home.mkdir()
    key = tmp_path / "adc.json"
    key.write_text(json.dumps({"type": "authorized_user", "client_id": "1.apps.example",
                               "client_secret": TOKEN, "refresh_token": f"1//{TOKEN}"}))
    env = {"PATH": os.environ["PATH"], "HOME": str(home), "AWS_ACCESS_KEY_ID": "AKIAEXAMPLE",
           "AWS_SECRET_ACCESS_KEY": TOKEN, "AWS_EC2_METADATA_DISABLED": "true",
           "GOOGLE_APPLICATION_CREDENTIALS": str(key), "GOOGLE_CLOUD_PROJECT": "my-project",
           "COSTSCHED_CALLS_TIMEOUT_SECONDS": "2"}
    done = subprocess.run(["unshare", "-n", sys.executable, "-m", "costsched.cli", "check"],
                          env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0  # (the local launcher still launches)
    assert "Traceback" not in done.stdout + done.stderr and TOKEN not in done.stdout
    lines = {line.split(":", 1)[0]: line for line in done.stdout.splitlines()
             if line and not line.startswith(" ")}
    assert "DNS" in lines["aws"] and "DNS" in lines["gcp"], done.stdout
    assert "iam" not in done.stdout.lower()
    assert "collect prices yes" not in done.stdout.split("\nazure")[0]
