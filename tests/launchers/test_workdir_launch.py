"""`costsched launch` (the real CLI, in a process of its own, HOME a temporary folder) with
the project folders a user's machine holds: a FIFO and a socket in the folder, a .gitignore
pattern that is no regular expression, `workdir: ~` with cloud credentials and an SSH key
in it, `workdir: /`, a credential file in the project, an ignore file that excludes
everything. Each launch either runs the job or is refused in one line with exit code 2 and
nothing stored; never a traceback, never a hang."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from costsched.service import import_prices
from costsched.store import PriceStore

ROOT = Path(__file__).resolve().parents[2]
PRICES = ROOT / "examples" / "demo" / "prices-before.csv"
COSTSCHED = Path(sys.executable).parent / "costsched"
PEM = "-----BEGIN RSA PRIVATE KEY-----\nMIIEow\n-----END RSA PRIVATE KEY-----\n"


@pytest.fixture()
def user(tmp_path: Path) -> tuple[dict[str, str], Path]:
    """A user's environment: a home of their own with credentials in it, costsched's
    folders in the temporary directory, a store with prices."""
    home = tmp_path / "home"
    for name, text in {".aws/credentials": "[default]\naws_access_key_id = AKIAEXAMPLE\n",
                       ".ssh/id_rsa": PEM, "proj/train.py": "print('trained')\n"}.items():
        (home / name).parent.mkdir(parents=True, exist_ok=True)
        (home / name).write_text(text)
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("COSTSCHED_", "XDG_", "AWS_", "GOOGLE_"))}
    env.update({"HOME": str(home), "COSTSCHED_DB": str(tmp_path / "store.sqlite"),
                "COSTSCHED_INSTANCES": str(tmp_path / "instances"),
                "XDG_DATA_HOME": str(tmp_path / "xdg" / "data"),
                "XDG_CACHE_HOME": str(tmp_path / "xdg" / "cache"),
                "XDG_CONFIG_HOME": str(tmp_path / "xdg" / "config")})
    import_prices(str(tmp_path / "store.sqlite"), [PRICES], partial=False)
    return env, home


def spec(folder: Path, workdir: str) -> Path:
    path = folder / "job.yaml"
    path.write_text(yaml.safe_dump({
        "name": "j", "workdir": workdir, "run": f"{sys.executable} train.py",
        "throughputs": {"V100": 0.01}, "steps": 10,
        "constraints": {"regions": ["us-east-1"], "markets": ["spot"]}}))
    return path


def launch(env: dict[str, str], job: Path) -> subprocess.CompletedProcess:
    return subprocess.run([str(COSTSCHED), "launch", str(job), "--wait", "30"], env=env,
                          cwd=job.parent, capture_output=True, text=True, timeout=240)


def unpacked(instances: Path) -> Path:
    """The job's code folder once the agent has unpacked both links in it (a generous
    bound: a hang fails, a slow machine does not)."""
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        for code in instances.glob("*/code"):
            if (code / "a").is_symlink() and (code / "b").is_symlink():
                return code
        time.sleep(0.2)
    raise AssertionError(f"no unpacked code under {instances}: {list(instances.rglob('*'))}")


def jobs_stored(env: dict[str, str]) -> int:
    store = PriceStore(env["COSTSCHED_DB"])
    try:
        return len(store.jobs.list())
    finally:
        store.dispose()


def refused(done: subprocess.CompletedProcess, *words: str) -> str:
    assert done.returncode == 2, done.stdout + done.stderr
    assert "Traceback" not in done.stderr
    line = " ".join(done.stderr.split())  # the console may wrap the one line
    for word in words:
        assert word in line, line
    return line


def test_a_folder_with_a_fifo_a_socket_and_a_bad_pattern_launches(
        user: tuple[dict[str, str], Path]) -> None:
    env, home = user
    proj = home / "proj"
    os.mkfifo(proj / "pipe")
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(proj / "control.sock"))
    (proj / ".gitignore").write_text("[z-a]\n(\n*.log\n")
    try:
        done = launch(env, spec(proj, "."))
    finally:
        server.close()
    assert done.returncode == 0, done.stdout + done.stderr
    assert "left out" in done.stderr and "pipe (FIFO)" in done.stderr
    assert "control.sock (socket)" in done.stderr
    store = PriceStore(env["COSTSCHED_DB"])
    try:
        [job] = store.jobs.records()
        assert job.spec["code"]["files"] == 3  # train.py, .gitignore and job.yaml
    finally:
        store.dispose()


def test_a_loop_of_links_is_packed_as_links_and_the_job_runs(
        user: tuple[dict[str, str], Path]) -> None:
    env, home = user
    proj = home / "proj"
    (proj / "a").symlink_to("b")
    (proj / "b").symlink_to("a")
    done = launch(env, spec(proj, "."))
    assert done.returncode == 0, done.stdout + done.stderr
    warning = " ".join(done.stderr.split())
    assert "a, b are in a loop of links (a -> b -> a; b -> a -> b)" in warning, warning
    assert "points outside" not in warning
    store = PriceStore(env["COSTSCHED_DB"])
    try:
        [job] = store.jobs.records()
        assert job.spec["code"]["files"] == 4  # train.py, job.yaml and the two links
    finally:
        store.dispose()
    # The agent unpacked them as the links they are, next to the job's code. `--wait`
    # bounds launch's own wait, so on a loaded machine the agent may unpack after it.
    code = unpacked(Path(env["COSTSCHED_INSTANCES"]))
    assert os.readlink(code / "a") == "b" and os.readlink(code / "b") == "a"


@pytest.mark.parametrize(("workdir", "words"), [
    ("~", ("is a home folder",)),
    ("/", ("is the root of the file system",)),
])
def test_a_home_or_the_root_as_workdir_is_refused(user: tuple[dict[str, str], Path],
                                                   workdir: str, words: tuple) -> None:
    env, home = user
    line = refused(launch(env, spec(home / "proj", workdir)), "field workdir", *words)
    assert "AKIAEXAMPLE" not in line
    assert jobs_stored(env) == 0
    assert not (Path(env["XDG_CACHE_HOME"]) / "costsched" / "code").exists() or not list(
        (Path(env["XDG_CACHE_HOME"]) / "costsched" / "code").glob("*.tar.gz"))


def test_credentials_in_the_project_are_refused_until_allowed(
        user: tuple[dict[str, str], Path]) -> None:
    env, home = user
    proj = home / "proj"
    (proj / ".env").write_text("WANDB_API_KEY=secret-value\n")
    (proj / "deploy.key").write_text(PEM)
    line = refused(launch(env, spec(proj, ".")), "holds credential files", ".env (",
                   "deploy.key (a private key)", ".costschedallow")
    assert "secret-value" not in line
    assert jobs_stored(env) == 0
    (proj / ".costschedignore").write_text("deploy.key\n")
    (proj / ".costschedallow").write_text(".env\n")
    done = launch(env, spec(proj, "."))
    assert done.returncode == 0, done.stdout + done.stderr


def test_an_ignore_file_that_excludes_everything_is_refused_at_launch(
        user: tuple[dict[str, str], Path]) -> None:
    env, home = user
    proj = home / "proj"
    (proj / ".costschedignore").write_text("*\n")
    refused(launch(env, spec(proj, ".")), "nothing to pack: every file is excluded")
    assert jobs_stored(env) == 0
