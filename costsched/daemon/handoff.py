"""Handing a job's secrets to the supervisor that already watches its store, in memory.

A supervisor started before a launch has only its own environment's values for the job's
secrets: without the launch's, a recovery or move of the job would wait for them. So the
supervisor listens on a Unix socket in a private folder of its own (0700, the socket 0600,
in the temporary directory) and writes where, beside its log (`<log>.<pid>.handoff`: the
socket's path and its pid, nothing secret; a supervisor killed before its end leaves them,
removed by the next supervisor or launch that finds it dead: `handoff_sweep`); a launch or
`costsched start` that finds it watching gives it {job id: {name: value}} there, and it
keeps them in its memory only (`launch_secrets.keep`), never written or logged, until it
ends.

Each end checks the other (SO_PEERCRED): the supervisor answers only a process of its own
user; the launch gives only to the process that holds the store's supervisor lease, of its
own user. One JSON line each way: {"secrets": {"12": {"HF_TOKEN": "..."}}}, then
{"held": [12]}. Where SO_PEERCRED is not offered (not Linux), nothing listens and nothing
is given: the launch says what the supervisor lacks, as for any daemon it cannot reach.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import struct
import tempfile
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from costsched import launch_secrets
from costsched.daemon.events import _emit, _one_line
from costsched.daemon.handoff_sweep import ADVERT_SUFFIX, FOLDER_PREFIX, sweep_dead
from costsched.daemon.supervision import KIND_WORDS, Watching
from costsched.store import PriceStore
from costsched.store.leases import process_gone

PEERCRED = getattr(socket, "SO_PEERCRED", None)  # Linux: the peer's struct ucred
_UCRED = struct.Struct("3i")  # pid, uid, gid
MAX_MESSAGE = 1 << 20  # bytes of one message: far more than any job's secrets
REPLY_SECONDS = 10.0  # a supervisor's answer (it reads the store) comes within this
ADVERT_WAIT = 20.0  # seconds a launch waits for a supervisor still starting to listen
_ACCEPT_POLL = 0.5  # between the listener's looks at whether it is closing

Take = Callable[[dict[int, dict[str, str]]], list[int]]


def advert_path(log: str, pid: int) -> Path:
    """Where the supervisor `pid` that logs to `log` says which socket it listens on."""
    return Path(f"{log}.{pid}{ADVERT_SUFFIX}")


def peer_refusal(credentials: bytes, uid: int | None = None) -> str | None:
    """Why the supervisor does not answer the process at the other end of a connection,
    from its SO_PEERCRED `credentials`: None for a process of this user (`uid`, default
    this process's)."""
    pid, peer_uid, _ = _UCRED.unpack(credentials)
    mine = os.getuid() if uid is None else uid
    if peer_uid != mine:
        return f"process {pid} runs as user id {peer_uid}, not the supervisor's ({mine})"
    return None


def listener_refusal(credentials: bytes, pid: int) -> str | None:
    """Why a launch gives nothing to the process listening on an advertised socket: None
    only for the supervisor `pid` (which holds the store's lease), of this user."""
    peer_pid, peer_uid, _ = _UCRED.unpack(credentials)
    if peer_uid != os.getuid():
        return f"the listener runs as user id {peer_uid}"
    if peer_pid != pid:
        return f"the listener is process {peer_pid}, not the supervisor (pid {pid})"
    return None


class Listening:
    """The supervisor's end: a thread answering launches until `close`."""

    def __init__(self, sock: socket.socket, folder: Path, advert: Path, take: Take) -> None:
        self._sock, self._folder, self._advert, self._take = sock, folder, advert, take
        self._closing = threading.Event()
        self._thread = threading.Thread(target=self._serve, name="secret-handoff",
                                        daemon=True)

    @classmethod
    def open(cls, log: str, take: Take) -> Listening | None:
        """Listen for launches' secrets, advertised beside `log`; `take` keeps those given
        and says which jobs it holds them for. None where nothing can listen (no log to
        advertise beside, no SO_PEERCRED, a folder that cannot be made): a launch then says
        the supervisor could not be given them."""
        if not log or PEERCRED is None:
            return None
        sweep_dead(log)  # what supervisors killed before their end left
        folder = Path(tempfile.mkdtemp(prefix=FOLDER_PREFIX))  # mode 0700
        path = folder / "socket"
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        advert = advert_path(log, os.getpid())
        try:
            sock.bind(str(path))
            os.chmod(path, 0o600)
            sock.listen(8)
            sock.settimeout(_ACCEPT_POLL)
            _write_private(advert, json.dumps({"pid": os.getpid(), "socket": str(path)}))
        except OSError as exc:
            sock.close()
            shutil.rmtree(folder, ignore_errors=True)
            _emit("warning", event="handoff_unavailable", error=_one_line(exc))
            return None
        listening = cls(sock, folder, advert, take)
        listening._thread.start()
        return listening

    def close(self) -> None:
        """Stop answering; remove the socket, its folder and the advert."""
        self._closing.set()
        self._thread.join()
        self._sock.close()
        shutil.rmtree(self._folder, ignore_errors=True)
        self._advert.unlink(missing_ok=True)

    def _serve(self) -> None:
        while not self._closing.is_set():
            try:
                conn, _ = self._sock.accept()
            except TimeoutError:
                continue
            except OSError as exc:
                _emit("warning", event="handoff_failed", error=_one_line(exc))
                return
            with conn:
                self._answer(conn)

    def _answer(self, conn: socket.socket) -> None:
        """One launch's message: its secrets kept, unless it is not of this user. What is
        logged names the jobs and secrets, never a value."""
        try:
            conn.settimeout(REPLY_SECONDS)
            refusal = peer_refusal(conn.getsockopt(socket.SOL_SOCKET, PEERCRED, _UCRED.size))
            if refusal is not None:
                _emit("warning", event="handoff_refused", reason=refusal)
                _send(conn, {"refused": "not this supervisor's user"})
                return
            given = _secrets_of(_read_line(conn))
            held = self._take(given) if not self._closing.is_set() else []
            # Said before the answer: a launch that has its answer finds it in the log.
            names = sorted({n for j in held for n in given[j]})
            _emit("info", event="secrets_given", jobs=",".join(map(str, held)) or "none",
                  names=",".join(names) or "none")
            _send(conn, {"held": held})
        except (OSError, ValueError) as exc:  # its own words: never a value
            _emit("warning", event="handoff_failed", error=_one_line(exc))


def give(store: PriceStore, watcher: Watching, secrets: Mapping[int, Mapping[str, str]],
         wait: float = ADVERT_WAIT) -> list[int]:
    """Give the supervisor `watcher` the values of the jobs' `secrets`; the jobs it holds
    them for now (none: it could not be reached: another machine, another kind of daemon,
    one that does not listen for them, of another user)."""
    if not secrets or PEERCRED is None or watcher.pid is None or not watcher.here \
            or watcher.kind not in ("auto", "starting"):
        return []
    where = _advertised(store, watcher, wait)
    if where is None:
        return []
    message = {"secrets": {str(job): dict(values) for job, values in secrets.items()}}
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
            sock.settimeout(REPLY_SECONDS)
            sock.connect(where)
            if listener_refusal(sock.getsockopt(socket.SOL_SOCKET, PEERCRED, _UCRED.size),
                                watcher.pid) is not None:
                return []
            sock.sendall(json.dumps(message).encode() + b"\n")
            reply = json.loads(_read_line(sock))
    except (OSError, ValueError):
        return []
    held = reply.get("held") if isinstance(reply, dict) else None
    if not isinstance(held, list):
        return []
    return [job for job in secrets if job in held]


def given_line(watcher: Watching, names: Sequence[str], jobs: int, held: bool,
               command: str = "launch") -> str:
    """What a launch (or `command`) says of the secrets `names` of its `jobs` jobs when a
    daemon started before it watches: held by the supervisor now, or, not `held`, taken
    from the daemon's own environment, and how to make it take the ones given. Worded so
    that nothing in it reads as a value to mask (costsched.redact)."""
    who = f"The {KIND_WORDS.get(watcher.kind, 'daemon')} ({_where(watcher)})"
    job = "the job" if jobs == 1 else "the jobs"
    said = launch_secrets.listed(names)
    if held:
        return (f"{who} was given {said} for the recoveries and moves of {job}: held in its "
                "memory, never stored")
    it = "it" if len(names) == 1 else "them"
    fix = ("`costsched daemon stop`, then `costsched daemon start` in a shell that sets "
           f"{it}, makes it take yours" if watcher.kind in ("auto", "starting") else
           f"restarting that daemon with {said} set in its environment makes it take "
           "yours")
    return (f"{who} was started before this {command} and could not be given {said}, so a "
            f"recovery or move of {job} takes {it} from its environment, not from this "
            f"command ({fix})")


def _where(watcher: Watching) -> str:
    if watcher.pid is None:
        return "starting"
    return f"pid {watcher.pid}" + ("" if watcher.here else f" on host {watcher.host}")


def _advertised(store: PriceStore, watcher: Watching, wait: float) -> str | None:
    """The socket the supervisor `watcher` listens on, as it advertises it; a supervisor
    still starting (its row not in the store yet) is waited for up to `wait` seconds. It
    advertises before it registers: a registered one without an advert does not listen."""
    pid, log = watcher.pid, watcher.log
    assert pid is not None
    deadline = time.monotonic() + wait
    while True:
        row = next((r for r in store.daemons.rows() if r.pid == pid and r.here), None)
        log = row.log if row is not None else log
        found = _read_advert(advert_path(log, pid), pid) if log else None
        if log and not found and process_gone(pid):
            sweep_dead(log)  # its advert and folder, where it died before its end
        if found or row is not None or process_gone(pid) or time.monotonic() > deadline:
            return found
        time.sleep(0.05)


def _read_advert(path: Path, pid: int) -> str | None:
    try:
        said = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    if not isinstance(said, dict) or said.get("pid") != pid:
        return None
    where = said.get("socket")
    return where if isinstance(where, str) and where else None


def _write_private(path: Path, text: str) -> None:
    """Write `text` to `path` (mode 0600), replacing it whole."""
    part = path.with_name(f"{path.name}.{os.getpid()}.part")
    fd = os.open(part, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as out:
        out.write(text)
    os.replace(part, path)


def _read_line(sock: socket.socket) -> bytes:
    """One message: the bytes up to a newline (ValueError past MAX_MESSAGE or at an end
    before it)."""
    data = b""
    while b"\n" not in data:
        chunk = sock.recv(65536)
        if not chunk:
            raise ValueError("the message ended before its end of line")
        data += chunk
        if len(data) > MAX_MESSAGE:
            raise ValueError(f"a message longer than {MAX_MESSAGE} bytes")
    return data.split(b"\n", 1)[0]


def _send(sock: socket.socket, message: dict) -> None:
    sock.sendall(json.dumps(message).encode() + b"\n")


def _secrets_of(line: bytes) -> dict[int, dict[str, str]]:
    """{job id: {name: value}} from a launch's message; ValueError in words of its own
    (never quoting the message: it holds values)."""
    try:
        message = json.loads(line)
    except ValueError:
        raise ValueError("a message that is not JSON") from None
    given = message.get("secrets") if isinstance(message, dict) else None
    if not isinstance(given, dict):
        raise ValueError("a message without its secrets")
    out: dict[int, dict[str, str]] = {}
    for job, values in given.items():
        if not (isinstance(job, str) and job.isdigit() and isinstance(values, dict)
                and all(isinstance(k, str) and isinstance(v, str)
                        for k, v in values.items())):
            raise ValueError("a message whose secrets are not {job id: {name: value}}")
        out[int(job)] = dict(values)
    return out
