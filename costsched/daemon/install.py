"""What keeps a daemon running for a store on this machine across reboots: a systemd user
unit where a systemd user manager answers (`systemctl --user`), else two crontab lines (at
reboot, and a keep-alive every 10 minutes that exits at once while one runs); where neither
can (`Keepers`), nothing is written. The other
lines of the user's crontab are kept as they are: costsched's own are between two marker
comments naming the store, and only those are replaced or removed.

The daemon installed is `costsched daemon --installed`: every task on the config's
schedules and the watcher, one per store on this machine (`supervisor.Installed`), logging
to the store's daemon log. Its environment names the store, the config and the local
instances as this process sees them; a store URL with a password is never written down
(it belongs in the config file, which the daemon reads).
"""

from __future__ import annotations

import hashlib
import os
import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import platformdirs

from costsched.config import ENV_CONFIG, Loaded
from costsched.model import InvalidInput
from costsched.redact import redact_url
from costsched.store.database import ENV_DB, describe
from costsched.vocabulary import did_you_mean

KINDS = ("systemd", "cron")
KEEP_ALIVE = "*/10 * * * *"
CALL_SECONDS = 10  # how long systemctl or crontab may take to answer
CRON_DAEMONS = ("cron", "crond", "fcron")  # the processes that run users' crontabs
# What the daemon needs of this process's environment to see what it sees (beside the store).
CARRIED = (ENV_CONFIG, "COSTSCHED_INSTANCES", "XDG_CONFIG_HOME", "XDG_DATA_HOME",
           "XDG_STATE_HOME", "XDG_CACHE_HOME")


@dataclass(frozen=True)
class Install:
    """What `daemon install` writes for one store, and how it is switched on."""

    kind: str  # systemd | cron
    name: str  # the unit's name, or the cron block's marker
    store: str  # the store, as messages show it
    text: str  # the unit file, or the crontab block
    path: Path | None  # the unit file (None: the crontab)
    argv: list[str]  # the daemon's command line
    env: dict[str, str]  # its environment beyond the machine's
    log: Path

    def enable(self) -> list[list[str]]:
        """The commands that switch the unit on now and at every boot (systemd)."""
        unit = f"{self.name}.service"
        return [["systemctl", "--user", "daemon-reload"],
                ["systemctl", "--user", "enable", "--now", unit]]

    def disable(self) -> list[list[str]]:
        return [["systemctl", "--user", "disable", "--now", f"{self.name}.service"]]


@dataclass(frozen=True)
class Keepers:
    """What on this machine can keep a daemon running across reboots: a systemd user
    manager that answers (`systemd`: None where one does, else why none does), a crontab
    command on PATH (`cron`)."""

    systemd: str | None
    cron: bool

    @classmethod
    def here(cls) -> Keepers:
        if shutil.which("systemctl") is None:
            return cls("systemctl: not found on PATH", shutil.which("crontab") is not None)
        code, said = run(["systemctl", "--user", "show-environment"])
        return cls(None if code == 0 else f"systemctl --user: {said or 'no answer'}",
                   shutil.which("crontab") is not None)

    def kind(self) -> str | None:
        """"systemd" where a user manager answers, else "cron" where crontab is; None:
        neither keeps one here."""
        return "systemd" if self.systemd is None else "cron" if self.cron else None

    def refusal(self, kind: str | None, flags: str = "") -> str | None:
        """Why `kind` (None: either) keeps no daemon here, what would, and the other kind
        where it can (its command with `flags`, ' --db URL'); None where `kind` can."""
        why = {"systemd": None if self.systemd is None else (
                   f"{self.systemd}: no systemd user manager answers here, so nothing would "
                   "run a unit (a login session starts one, `loginctl enable-linger` one "
                   f"from boot; then `costsched daemon install --kind systemd{flags}`)"),
               "cron": None if self.cron else (
                   "crontab: not found on PATH, so nothing would read crontab lines (install "
                   "cron, e.g. the cron or cronie package; then `costsched daemon install "
                   f"--kind cron{flags}`)")}
        asked, other = kind or self.kind(), self.kind()
        if asked is not None and why[asked] is None:
            return None
        if asked is not None and other is not None:
            return (f"{why[asked]}; `costsched daemon install --kind {other}{flags}` keeps one "
                    f"from {other} instead")
        return ("nothing on this machine keeps a daemon running across reboots: "
                + "; ".join(filter(None, why.values())))


def checked_kind(kind: str | None) -> str | None:
    """`kind` (None: not given) when it is one of KINDS; else the one line naming them."""
    if kind is not None and kind not in KINDS:
        raise InvalidInput(f"--kind {kind!r}: expected one of {', '.join(KINDS)}"
                           + did_you_mean(kind, KINDS))
    return kind


def plan(url: str, loaded: Loaded, log: Path, kind: str) -> Install:
    """What to write for the store at `url`, for `kind` (systemd or cron)."""
    checked_kind(kind)
    env = _environment(url, loaded)
    argv = [*_costsched(), "daemon", "--installed", "--log", str(log)]
    name = unit_name(url)
    where = describe(url)
    if kind == "systemd":
        path = unit_dir() / f"{name}.service"
        return Install(kind, name, where, _unit(where, argv, env), path, argv, env, log)
    return Install(kind, name, where, _cron_block(name, where, argv, env, log), None, argv,
                   env, log)


def unit_name(url: str) -> str:
    """costsched-daemon for the default store, costsched-daemon-<hash> for another."""
    platform_default = Path(platformdirs.user_data_dir("costsched")) / "prices.sqlite"
    if url == f"sqlite:///{platform_default.resolve()}":
        return "costsched-daemon"
    return "costsched-daemon-" + hashlib.sha256(describe(url).encode()).hexdigest()[:8]


def unit_dir() -> Path:
    """Where systemd looks for the user's own units."""
    return Path(platformdirs.user_config_dir("systemd")) / "user"


def _costsched() -> list[str]:
    """This costsched's command, by absolute path (cron and systemd have a short PATH)."""
    script = Path(sys.executable).parent / "costsched"
    return [str(script)] if script.is_file() else [sys.executable, "-m", "costsched.cli"]


def _environment(url: str, loaded: Loaded) -> dict[str, str]:
    env = {}
    if redact_url(url) == url:
        env[ENV_DB] = url
    elif not (loaded.config.db and loaded.sources.get("db", "").startswith("file ")):
        raise InvalidInput(f"store {describe(url)}: its URL holds a password, which is never "
                           "written into a unit or crontab; put it in the config file "
                           f"(db = ...; `costsched config show` names the file) or in "
                           "~/.pgpass, then install again")
    for name in CARRIED:  # each a path
        if os.environ.get(name):
            env[name] = str(Path(os.environ[name]).expanduser().resolve())
    return env


def _unit(where: str, argv: list[str], env: dict[str, str]) -> str:
    lines = ["# Written by `costsched daemon install`; removed by `costsched daemon "
             "uninstall`.", "[Unit]", f"Description=costsched daemon for {_sd(where)}",
             "After=network-online.target", "", "[Service]", "Type=simple"]
    lines += [f"Environment={_sd_quote(f'{k}={v}')}" for k, v in sorted(env.items())]
    lines += [f"ExecStart={' '.join(_sd_quote(a) for a in argv)}",
              "Restart=on-failure", "RestartSec=30", "", "[Install]",
              "WantedBy=default.target", ""]
    return "\n".join(lines)


def _sd(text: str) -> str:
    return text.replace("%", "%%").replace("\n", " ")


def _sd_quote(arg: str) -> str:
    """One word of a unit's command line or Environment=, quoted as systemd reads it."""
    arg = _sd(arg).replace("$", "$$")
    if arg and not any(c in arg for c in " \t\"'\\;"):
        return arg
    return '"' + arg.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _begin(name: str) -> str:
    return f"# {name} begin"


def _end(name: str) -> str:
    return f"# {name} end"


def _cron_block(name: str, where: str, argv: list[str], env: dict[str, str], log: Path
                ) -> str:
    words = [f"{k}={shlex.quote(v)}" for k, v in sorted(env.items())] + \
        [shlex.quote(a) for a in argv] + [">>", shlex.quote(str(log)), "2>&1"]
    command = " ".join(words).replace("%", "\\%")  # cron reads % as a newline
    return "\n".join([
        f"{_begin(name)}: written by `costsched daemon install` for {where.replace('%', '')}",
        f"@reboot {command}",
        f"{KEEP_ALIVE} {command}",
        _end(name), ""])


# --- the crontab ----------------------------------------------------------------------------


def read_crontab() -> str:
    """The user's crontab ('' when they have none)."""
    if shutil.which("crontab") is None:
        raise InvalidInput(Keepers.here().refusal("cron") or "crontab: not found on PATH")
    done = subprocess.run(["crontab", "-l"], capture_output=True, text=True,
                          timeout=CALL_SECONDS)
    if done.returncode == 0:
        return done.stdout
    if "no crontab" in (done.stderr or "").lower():
        return ""
    raise InvalidInput(f"crontab -l: {(done.stderr or '').strip() or 'failed'}")


def write_crontab(text: str) -> None:
    done = subprocess.run(["crontab", "-"], input=text, capture_output=True, text=True,
                          timeout=CALL_SECONDS)
    if done.returncode != 0:
        raise InvalidInput(f"crontab -: {(done.stderr or '').strip() or 'failed'}")


def without_block(crontab: str, name: str) -> str:
    """The crontab without costsched's block `name` (every other line as it was)."""
    out, inside = [], False
    for line in crontab.splitlines(keepends=True):
        if line.startswith(_begin(name)):
            inside = True
            continue
        if inside:
            inside = not line.startswith(_end(name))
            continue
        out.append(line)
    return "".join(out)


def has_block(crontab: str, name: str) -> bool:
    return any(line.startswith(_begin(name)) for line in crontab.splitlines())


def with_block(crontab: str, install: Install) -> str:
    """The crontab with `install`'s block in place of an older one, others kept."""
    kept = without_block(crontab, install.name)
    if kept and not kept.endswith("\n"):
        kept += "\n"
    return kept + install.text


def installed(url: str) -> dict | None:
    """How a daemon is installed for this store on this machine: {"kind", "path" or
    "crontab"}; None when it is not."""
    name = unit_name(url)
    unit = unit_dir() / f"{name}.service"
    if unit.is_file():
        return {"kind": "systemd", "unit": f"{name}.service", "path": str(unit)}
    try:
        crontab = read_crontab()
    except (InvalidInput, OSError, subprocess.TimeoutExpired):
        return None
    return {"kind": "cron", "marker": name} if has_block(crontab, name) else None


def runs(where: dict, flags: str = "") -> dict:
    """Whether what `installed` found runs the daemon: {"enabled", "running": True, False
    or None (not known), "note": the words `daemon status` shows ('' when it runs; the
    commands it names with `flags`, ' --db URL')}. A unit no systemd user manager answers
    for, or crontab lines no cron daemon reads, is written but runs nothing."""
    if where["kind"] == "cron":
        cron = cron_runs()
        return {"enabled": cron, "running": None, "note": "" if cron is not False else (
            "written, not run: no cron daemon (cron or crond) runs on this machine, so "
            "nothing runs the lines until one does")}
    unit, again = where["unit"], f"costsched daemon install --kind systemd --now{flags}"
    code, _ = run(["systemctl", "--user", "show-environment"])
    if code != 0:
        return {"enabled": False, "running": False, "note": (
            "written, not enabled: no systemd user manager answers, so nothing runs it (a "
            f"login session or `loginctl enable-linger` starts one; then `{again}`; "
            f"`costsched daemon uninstall{flags}` removes it)")}
    enabled = run(["systemctl", "--user", "is-enabled", unit])[0] == 0
    running = run(["systemctl", "--user", "is-active", unit])[0] == 0
    note = (f"written, not enabled: `{again}` enables and starts it"
            if not enabled else "" if running else
            f"enabled, not running now (`systemctl --user status {unit}` says why)")
    return {"enabled": enabled, "running": running, "note": note}


def cron_runs() -> bool | None:
    """Whether a cron daemon runs on this machine (None: its processes cannot be read)."""
    proc = Path("/proc")
    if not (proc / "self" / "comm").is_file():
        return None
    for comm in proc.glob("[0-9]*/comm"):
        try:
            if comm.read_text().strip() in CRON_DAEMONS:
                return True
        except OSError:  # a process that ended meanwhile
            continue
    return False


def run(argv: list[str]) -> tuple[int, str]:
    """Run a systemctl command; its exit code and its one-line complaint."""
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=CALL_SECONDS * 3)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return 1, str(exc)
    return done.returncode, " ".join((done.stderr or done.stdout or "").split())


def start_now(install: Install) -> int:
    """Start the installed daemon now, as its crontab line would (a session of its own,
    its output appended to its log); its pid."""
    import threading

    with install.log.open("ab") as out:
        child = subprocess.Popen(install.argv, env={**os.environ, **install.env},
                                 stdin=subprocess.DEVNULL, stdout=out, stderr=out,
                                 start_new_session=True, close_fds=True)
    threading.Thread(target=child.wait, daemon=True).start()  # collected when it ends
    return child.pid
