"""A stand-in `docker` for tests: records each call it is given (one JSON line to
$FAKE_DOCKER_LOG) and does what the call means on this machine, without a daemon:

    [--config DIR] login --username U --password-stdin SERVER   reads the password, keeps
                                        its SHA-256 (never the password) and DIR
    [--config DIR] pull IMAGE           fails for an image named no-such-*
    run [--rm] --name N ... IMAGE ARGS  runs ARGS (after --entrypoint) on this machine: in
                                        the -w folder, with only the -e names' values from
                                        its own environment (and PATH, HOME), as a process
                                        group of its own (a container's isolation); a
                                        SIGTERM it gets goes to that first process, as
                                        docker's signal proxy sends it to PID 1
                                        (exit 125 while a container of that name runs)
    stop -t SECONDS NAME                SIGTERM to the container's first process, its group
                                        SIGKILLed after SECONDS; recorded with whether it
                                        ended in time ("graceful")
    commit NAME TAG, rm -f NAME         recorded; rm ends a running "container" of that name
    version --format {{.Server.Version}}    the daemon's version

`install(folder, log)` writes the `docker` executable into `folder` (put it first on PATH);
`install(folder, log, stopped=True)` one whose daemon is stopped: every call fails as the
real client does then (its message on stderr, exit code 1); `install(folder, log,
hung=True)` one whose daemon never answers: every call is recorded with its pid and the
pid of a child it starts (a client's helper), and then waits for ever.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

STOPPED = ("Cannot connect to the Docker daemon at unix:///var/run/docker.sock. Is the "
           "docker daemon running?")  # what docker 24-27 says, its daemon stopped


def install(folder: Path, log: Path, stopped: bool = False, hung: bool = False) -> Path:
    """A `docker` in `folder` that runs this stand-in, logging to `log`; with `stopped`,
    its daemon is stopped; with `hung`, it never answers."""
    folder.mkdir(parents=True, exist_ok=True)
    exe = folder / "docker"
    down = "FAKE_DOCKER_STOPPED=1 " if stopped else "FAKE_DOCKER_HUNG=1 " if hung else ""
    exe.write_text(f"#!/bin/sh\n{down}FAKE_DOCKER_LOG='{log}' exec '{sys.executable}' "
                   f"'{Path(__file__).resolve()}' \"$@\"\n")
    exe.chmod(exe.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return exe


def calls(log: Path) -> list[dict]:
    """The calls recorded so far, oldest first."""
    if not log.exists():
        return []
    return [json.loads(line) for line in log.read_text().splitlines() if line.strip()]


def _record(entry: dict) -> None:
    with open(os.environ["FAKE_DOCKER_LOG"], "a") as out:
        out.write(json.dumps(entry) + "\n")


def _state(name: str) -> Path:
    folder = Path(os.environ["FAKE_DOCKER_LOG"]).with_suffix(".containers")
    folder.mkdir(exist_ok=True)
    return folder / f"{name}.pid"


def _run(argv: list[str]) -> int:
    opts: dict = {"rm": False, "name": "", "env": [], "volumes": [], "workdir": "",
                  "entrypoint": "", "flags": []}
    i = 0
    with_value = {"--name": "name", "-e": "env", "--env": "env", "-v": "volumes",
                  "--volume": "volumes", "-w": "workdir", "--workdir": "workdir",
                  "--entrypoint": "entrypoint", "--network": "flags", "--ipc": "flags",
                  "--gpus": "flags", "--user": "flags", "--shm-size": "flags"}
    while i < len(argv) and argv[i].startswith("-"):
        arg = argv[i]
        if arg == "--rm":
            opts["rm"] = True
            i += 1
            continue
        key = with_value[arg]  # an option the agent does not use is a test failure
        value = argv[i + 1]
        if isinstance(opts[key], list):
            opts[key].append(value if key != "flags" else f"{arg} {value}")
        else:
            opts[key] = value
        i += 2
    image, args = argv[i], argv[i + 1:]
    command = ([opts["entrypoint"]] if opts["entrypoint"] else []) + args
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": os.environ.get("HOME", "/")}
    for name in opts["env"]:
        if name in os.environ:
            env[name] = os.environ[name]
    if opts["name"] and _running(opts["name"]):
        _record({"cmd": "run", "conflict": opts["name"], "argv": ["docker", "run", *argv]})
        print(f"docker: Error response from daemon: Conflict. The container name "
              f"\"/{opts['name']}\" is already in use.", file=sys.stderr)
        return 125
    _record({"cmd": "run", "image": image, "name": opts["name"], "rm": opts["rm"],
             "argv": ["docker", "run", *argv],
             "env": {k: hashlib.sha256(v.encode()).hexdigest() for k, v in env.items()
                     if k not in ("PATH", "HOME")}})
    child = subprocess.Popen(command, env=env, cwd=opts["workdir"] or None,
                             start_new_session=True)
    if opts["name"]:
        _state(opts["name"]).write_text(str(child.pid))

    def forward(signum: int, _frame: object) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.kill(child.pid, signum)

    signal.signal(signal.SIGTERM, forward)
    signal.signal(signal.SIGINT, forward)
    code = child.wait()
    if opts["name"]:
        _state(opts["name"]).unlink(missing_ok=True)
    return 128 - code if code < 0 else code


def _group_alive(pgid: int) -> bool:
    """Whether a live (not zombie) process of group `pgid` remains."""
    for entry in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = entry.read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if fields[0] != "Z" and int(fields[2]) == pgid:
            return True
    return False


def _running(name: str) -> int:
    """The first process of the running "container" `name` (0: none runs)."""
    try:
        pid = int(_state(name).read_text())
    except (OSError, ValueError):
        return 0
    return pid if _group_alive(pid) else 0


def _stop(argv: list[str]) -> int:
    name, seconds = argv[-1], float(argv[argv.index("-t") + 1]) if "-t" in argv else 10.0
    pid = _running(name)
    if not pid:
        _record({"cmd": "stop", "argv": ["docker", "stop", *argv], "running": False})
        print(f"Error response from daemon: No such container: {name}", file=sys.stderr)
        return 1
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + seconds
    while _group_alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    graceful = not _group_alive(pid)
    if not graceful:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(pid, signal.SIGKILL)
        while _group_alive(pid):
            time.sleep(0.05)
    _record({"cmd": "stop", "argv": ["docker", "stop", *argv], "running": True,
             "graceful": graceful})
    print(name)
    return 0


def main(argv: list[str]) -> int:
    config = ""
    if argv[:1] == ["--config"]:
        config, argv = argv[1], argv[2:]
    cmd = argv[0] if argv else ""
    if os.environ.get("FAKE_DOCKER_HUNG"):
        helper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(3600)"])
        _record({"cmd": cmd, "argv": ["docker", *argv], "daemon": "hung",
                 "pid": os.getpid(), "helper": helper.pid})
        time.sleep(3600)
        return 1
    if os.environ.get("FAKE_DOCKER_STOPPED"):
        _record({"cmd": cmd, "argv": ["docker", *argv], "daemon": "stopped"})
        if cmd == "version":
            print()  # the client's part of --format, empty
        print(STOPPED, file=sys.stderr)
        return 1
    if cmd == "version":
        _record({"cmd": "version", "argv": ["docker", *argv]})
        print("27.3.1")
        return 0
    if cmd == "login":
        password = sys.stdin.read()
        _record({"cmd": "login", "argv": ["docker", *argv], "config": config,
                 "config_exists": bool(config) and Path(config).is_dir(),
                 "password_sha256": hashlib.sha256(password.encode()).hexdigest()})
        if config:
            (Path(config) / "config.json").write_text('{"auths": {"x": {"auth": "kept"}}}')
        print("Login Succeeded")
        return 0
    if cmd == "pull":
        _record({"cmd": "pull", "argv": ["docker", *argv], "config": config,
                 "logged_in": bool(config) and (Path(config) / "config.json").exists()})
        if argv[1].rsplit("/", 1)[-1].startswith("no-such"):
            print(f"Error response from daemon: manifest for {argv[1]} not found",
                  file=sys.stderr)
            return 1
        return 0
    if cmd == "run":
        return _run(argv[1:])
    if cmd == "stop":
        return _stop(argv[1:])
    if cmd == "rm":
        name = argv[-1]
        _record({"cmd": "rm", "argv": ["docker", *argv]})
        pid_file = _state(name)
        if not pid_file.exists():
            print(f"Error response from daemon: No such container: {name}", file=sys.stderr)
            return 1
        with contextlib.suppress(ProcessLookupError, ValueError):
            os.killpg(int(pid_file.read_text()), signal.SIGKILL)
        pid_file.unlink(missing_ok=True)
        return 0
    if cmd == "commit":
        _record({"cmd": "commit", "argv": ["docker", *argv]})
        return 0
    print(f"fake docker: {cmd!r} is not something the agent should ask", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
