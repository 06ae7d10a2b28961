"""`costsched daemon`: the scheduled optimizer (collect, re-plan, refresh the catalog) and
the watcher, in the foreground; `daemon start | stop | status`: the daemon that watches a
store's running jobs; `daemon install | uninstall`: what keeps one running across reboots."""

from __future__ import annotations

import os
import shlex
import signal
import socket
import time
from contextlib import ExitStack
from datetime import datetime, timezone
from pathlib import Path
from typing import Annotated, Any

import typer

from costsched import config as config_module
from costsched import daemon as scheduled
from costsched.cli.common import (
    DbOption,
    JsonOption,
    NewStoreOption,
    WritesDbOption,
    announce_new_store,
    console,
    friendly_errors,
    print_json,
    printable,
    refuse_url,
    writes_store,
)
from costsched.daemon import autostart, install
from costsched.daemon.logs import log_path, logging_to, rotate, shown_log, started_log
from costsched.daemon.records import live_jobs
from costsched.daemon.supervision import (
    START,
    Blocked,
    Watching,
    ago,
    recovery,
    said_blocked,
    shell_blocked,
    watching,
)
from costsched.daemon.supervisor import Installed, Supervisor
from costsched.model import InvalidInput
from costsched.redact import redact
from costsched.service.store_files import missing_store
from costsched.service.stores import open_store
from costsched.store.database import default_url, resolve_url
from costsched.store.leases import holder_name, process_gone
from costsched.vocabulary import counted

app = typer.Typer(invoke_without_command=True, no_args_is_help=False)  # help: `daemon`'s

KIND_WORDS = {"auto": "started in the background by a launch or `costsched daemon start` "
                      "(ends when no job is left)",
              "installed": "installed (`costsched daemon install`)",
              "service": "started by hand or by your service manager",
              "starting": "starting"}
STOP_WAIT = 30.0  # seconds `daemon stop` waits for each daemon to finish its step


@app.callback()
@friendly_errors
def daemon(
    ctx: typer.Context,
    config: Annotated[Path | None, typer.Option(
        "--config", help="The TOML config file (default: $COSTSCHED_CONFIG, else config.toml "
        "in the user config directory).", show_default=False)] = None,
    once: Annotated[bool, typer.Option(
        "--once", help="Run each task that is due one time, then exit (for cron). Exit code 0 "
        "when every task ran (one that partly failed, e.g. some regions, is logged as a "
        "warning); 1 when a task failed, e.g. every price source failed.")] = False,
    log: Annotated[Path | None, typer.Option(
        "--log", help="Append the log to this file instead of writing it to stderr.",
        show_default=False)] = None,
    installed: Annotated[bool, typer.Option(
        "--installed", hidden=True, help="Run as the daemon `daemon install` keeps running: "
        "one per store on this machine (exits at once while one runs).")] = False,
    json_out: JsonOption = False,
) -> None:
    """Run the scheduled optimizer: collect prices, re-plan running jobs and migrate where
    the policy says so, refresh the on-demand catalog, on the config's schedules, and watch
    the running jobs every daemon.watch_seconds (recovering preempted ones). Stops on SIGTERM
    or SIGINT once the step in progress is done. Logs one logfmt line per event.

    The subcommands look after the daemon that watches a store: `start`, `stop`, `status`,
    and `install` / `uninstall` (what keeps one running across reboots)."""
    if ctx.invoked_subcommand is not None:
        return
    loaded = config_module.load(config)
    path = None if log is None else log.expanduser().resolve()
    with ExitStack() as logged:
        try:
            if path is not None:
                path.parent.mkdir(parents=True, exist_ok=True)
                rotate(path)
            logged.enter_context(logging_to(path))
        except OSError as exc:  # a folder, a path under a file, no permission
            raise InvalidInput(f"--log {log}: cannot write it ({exc.strerror or exc}): "
                               "expected the path of a file to append the log to") from None
        _run(loaded.config, "" if path is None else str(path), installed, once, json_out)


def _run(config: config_module.Config, log: str, installed: bool, once: bool,
         json_out: bool) -> None:
    """`daemon`'s work once its log is set: serve, or run each task that is due once."""
    from costsched.service.store_files import ENV_DB

    # Named as given: $COSTSCHED_DB (which the configuration's db takes), or that db.
    from_env = bool(config.db) and config.db == os.environ.get(ENV_DB)
    refuse_url(None, None if from_env else config.db or None)
    store = open_store(config.db, config.store)
    if installed:
        Installed(store, config, log=log).serve()
        return
    if not once:
        scheduled.Daemon(store, config, log=log).serve()
        return
    runs = scheduled.run_once(store, config)
    if json_out:
        print_json([{"task": r.task, "status": r.status, "started_at": r.started_at,
                     "finished_at": r.finished_at, "detail": redact(r.detail or "") or r.detail}
                    for r in runs])
        return
    if not runs:
        console.print("Nothing due.")
    for r in runs:
        console.print(printable(f"{r.task}: {r.status}" + (f": {redact(r.detail)}" if r.detail
                                                           else "")),
                      highlight=False, markup=False)
    if any(r.status == "failed" for r in runs):
        raise typer.Exit(1)


@app.command("supervise", hidden=True)
@friendly_errors
def supervise(
    tag: Annotated[str, typer.Option(help="The tag of its holder name.")] = "",
    take_over: Annotated[str, typer.Option(help="The holder whose lease it takes.")] = "",
    log: Annotated[Path | None, typer.Option(help="Its log file.")] = None,
) -> None:
    """The supervisor a launch starts in the background (`costsched.daemon.autostart`)."""
    loaded = config_module.load()
    store = open_store(loaded.config.db, loaded.config.store)
    holder = f"{socket.gethostname()}:{os.getpid()}:{tag}" if tag else holder_name()
    with logging_to(log):
        Supervisor(store, loaded.config, holder=holder, log=str(log or ""),
                   take_over=take_over).serve()


@app.command("start")
@friendly_errors
def start(db: DbOption = None, json_out: JsonOption = False) -> None:
    """Make sure a daemon watches this store's running jobs: when none does, start a
    supervisor in the background, as a launch does (whatever daemon.autostart says). It
    recovers preempted jobs and moves jobs where the policy says so, and ends by itself once
    no job is left. A job whose secret this shell lacks (and so the supervisor started from
    it) is named, with the fix: its recovery is not armed, the other jobs are watched, and
    the exit code is 1 (done in part), as it is when no supervisor could be started."""
    store = open_store(db)
    armed = autostart.ensure(store, config_module.effective(), explicit=True)
    blocked = _not_armed(store, armed)
    fixes = [_not_armed_line(b, armed, db) for b in blocked]
    if json_out:
        print_json({**armed.document(), "not_armed": [
            {**b.document(), "line": line} for b, line in zip(blocked, fixes, strict=True)]})
    else:
        line = armed.line() or ("No job runs in this store: nothing to watch (a launch "
                                "starts the supervisor when it starts a job).")
        for said in (line, *fixes):
            console.print(printable(said), highlight=False, markup=False, soft_wrap=True)
    if armed.error or blocked:  # (a job's recovery not armed: done in part)
        raise typer.Exit(1)


def _not_armed(store: Any, armed: autostart.Arming) -> tuple[Blocked, ...]:
    """The live jobs whose recovery the daemon `daemon start` found or started cannot
    make for want of a secret: one it started has this shell's environment (it lacks what
    this shell lacks); one that ran before says itself, in the jobs' logs."""
    if armed.watcher is None or armed.sweep_only:
        return ()
    live = live_jobs(store)
    return shell_blocked(store, live) if armed.started else said_blocked(store, live)


def _not_armed_line(blocked: Blocked, armed: autostart.Arming, db: str | None) -> str:
    """'Recovery not armed for job 8 (mfrec-leak): this shell lacks WANDB_API_KEY, ...'
    and the fix (worded so that no word follows a secret's name after ':' or '=')."""
    names = " and ".join(blocked.secrets)
    it = "it" if len(blocked.secrets) == 1 else "them"
    who = armed.watcher.who() if armed.watcher is not None else "the daemon"
    lacks = (f"this shell lacks {names}, and so does the {who} started from it"
             if armed.started else f"the {who} that watches this store lacks {names}")
    start = START + _db_flag(db)
    return (f"Recovery not armed for job {blocked.job_id} ({blocked.name}): {lacks}, so a "
            f"preemption of the job would wait; `costsched daemon stop`, then `{start}` in "
            f"a shell that sets {names}, arms {it} (the other jobs are watched).")


def _lost_line(blocked: Blocked, db: str | None) -> str:
    """'Job 6 (km) needs KM_TOKEN for its recoveries and moves, ...' and how to arm them:
    a daemon started from a shell that sets it (the value itself is never printed)."""
    names = " and ".join(blocked.secrets)
    it = "it" if len(blocked.secrets) == 1 else "them"
    start = START + _db_flag(db)
    given = " ".join(f"{name}=..." for name in blocked.secrets)
    return (f"Job {blocked.job_id} ({blocked.name}) needs {names} for its recoveries and "
            f"moves, which no daemon holds now and this shell does not set: start the daemon "
            f"again in a shell that sets {it} (`{given} {start}`); started from this one, its "
            "recovery would wait.")


@app.command("stop")
@friendly_errors
def stop(db: DbOption = None, json_out: JsonOption = False) -> None:
    """Stop the daemons of this machine that watch this store (each finishes its step
    first). An installed daemon starts again at the next boot or keep-alive: `costsched
    daemon uninstall` removes it."""
    config = config_module.effective()
    store = open_store(db)
    found = watching(store, config, datetime.now(timezone.utc))
    lines, stopped = [], []
    for w in found:
        if not w.here:
            lines.append(f"{w.who()} runs on another machine: stop it there.")
            continue
        if w.pid is None:  # a launch is starting it this instant
            lines.append(f"A {w.who()} is being started by a launch: run `costsched daemon "
                         "stop` again in a few seconds.")
            continue
        try:
            os.kill(w.pid, signal.SIGTERM)
        except ProcessLookupError:
            continue
        deadline = time.monotonic() + STOP_WAIT
        while not process_gone(w.pid) and time.monotonic() < deadline:
            time.sleep(0.1)
        if process_gone(w.pid):
            stopped.append(w.pid)
            lines.append(f"Stopped {w.who()}.")
        else:
            lines.append(f"{w.who()} has not stopped after {STOP_WAIT:g} s (a step in "
                         f"progress); `kill -KILL {w.pid}` ends it.")
    left = recovery(store, config, datetime.now(timezone.utc), db=db)
    # The secrets a stopped supervisor held in its memory are gone with it: the jobs whose
    # recovery a daemon started from this shell would make wait are named.
    lost = shell_blocked(store, live_jobs(store)) if left.fix() else ()
    fixes = [_lost_line(b, db) for b in lost]
    if json_out:
        print_json({"stopped": stopped, "lines": lines, "armed": left.armed,
                    "fix": left.fix(), "not_armed": [
                        {**b.document(), "line": line} for b, line in zip(lost, fixes,
                                                                           strict=True)]})
        return
    if not found:
        lines.append("No daemon watches this store.")
    if left.fix():
        lines.append(f"Recovery is not armed now: `{left.fix()}` arms it again (a launch "
                     "does too, unless daemon.autostart is off).")
    for line in [*lines, *fixes]:
        console.print(printable(line), highlight=False, markup=False, soft_wrap=True)


@app.command("status")
@friendly_errors
def status(db: DbOption = None, json_out: JsonOption = False) -> None:
    """Whether a daemon watches this store: its process, since when, its last look at the
    running jobs and its result, its log, and whether it was installed or auto-started."""
    config = config_module.effective()
    store = open_store(db)
    now = datetime.now(timezone.utc)
    log = shown_log(store.url, config)
    armed = recovery(store, config, now, db=db, log=str(log))
    where, flags = install.installed(store.url), _db_flag(db)
    if where is not None:
        where = {**where, **install.runs(where, flags)}
    tasks = scheduled.status(store)
    if json_out:
        print_json({"store": store.where, "running": armed.armed,
                    "daemons": [w.document(now) for w in armed.watchers],
                    "installed": where, "log": str(log), "live_jobs": armed.live_jobs,
                    "fix": armed.fix(),
                    "tasks": [{"task": t.task, "next_run": t.next_run,
                               "last": None if t.last is None else {
                                   "at": t.last.started_at, "status": t.last.status,
                                   "detail": redact(t.last.detail)}} for t in tasks]})
        return
    lines = [f"Store: {store.where}"]
    lines += [_described(w, now) for w in armed.watchers]
    if not armed.watchers:
        lines.append("No daemon watches this store." + (
            f" {counted(armed.live_jobs, 'job')} {'runs' if armed.live_jobs == 1 else 'run'}"
            f" unwatched: `{armed.fix()}` starts one."
            if armed.fix() else " A launch starts one when it starts a job"
            + ("." if config.daemon.autostart else " (not now: daemon.autostart is off).")))
    if where is None:
        nowhere = install.Keepers.here().refusal(None, flags)
        lines.append(f"Installed: no; {nowhere}; {_meanwhile(db, config)}." if nowhere else
                     f"Installed: no (`costsched daemon install{flags}` keeps one running "
                     "across reboots).")
    elif where["kind"] == "systemd":
        lines.append(f"Installed: systemd user unit {where['unit']} ({where['path']}): "
                     + (where["note"] or "enabled, running") + ".")
    else:
        lines.append("Installed: crontab lines (`crontab -l` shows them)"
                     + (f": {where['note']}." if where["note"] else "."))
    for t in tasks:
        if t.last is not None:
            lines.append(f"Task {t.task}: last run {ago(now, t.last.started_at)}, "
                         f"{t.last.status}" + (f": {redact(t.last.detail)}"
                                               if t.last.detail else ""))
    for line in lines:
        console.print(printable(line), highlight=False, markup=False, soft_wrap=True)


def _described(w: Watching, now: datetime) -> str:
    since = "" if w.started_at is None else \
        f", since {w.started_at:%Y-%m-%d %H:%M:%S} UTC ({ago(now, w.started_at)})"
    result = "" if w.pass_at is None else f": {redact(w.pass_detail)}"
    log = f"; log: {w.log}" if w.log else "; log: its stderr"
    return (f"{w.who()}: {KIND_WORDS.get(w.kind, w.kind)}{since}; watches every "
            f"{w.watch_seconds:g} s; {w.last_pass(now)}{result}{log}")


KindOption = Annotated[str | None, typer.Option(
    "--kind", help="systemd or cron (default: systemd where a systemd user manager answers, "
    "else cron).", show_default=False)]


@app.command("install")
@friendly_errors
def install_cmd(
    db: WritesDbOption = None,
    new_store: NewStoreOption = False,
    print_only: Annotated[bool, typer.Option(
        "--print", help="Only show what would be written, and where.")] = False,
    now: Annotated[bool, typer.Option(
        "--now", help="And start it now (systemd: systemctl --user enable --now).")] = False,
    kind: KindOption = None,
) -> None:
    """Keep a daemon running for this store on this machine across reboots: a systemd
    user unit where systemd runs, else crontab lines (at reboot, and a keep-alive every 10
    minutes); the other lines of your crontab are kept."""
    kind, loaded = install.checked_kind(kind), config_module.load()
    # A --db naming no store is refused first (a --print too), and nothing is made before
    # a daemon can be kept here: the commands said carry --new-store while it is still new.
    given, db = db, writes_store(db, new_store)
    new = given is not None and missing_store(db) is not None  # (the default store: made)
    keepers, flags = install.Keepers.here(), _db_flag(db) + (" --new-store" if new else "")
    refused = keepers.refusal(kind, flags)
    if refused and not print_only:  # said before anything is made: no store, log or unit
        meanwhile = ("" if keepers.kind() or new  # (a new store has no job to watch)
                     else f"; {_meanwhile(db, loaded.config)}")
        raise typer.Exit(_error(refused + meanwhile))
    if print_only:  # what would be written makes nothing: not the store, nor its folder
        url = resolve_url(db, make_folder=False) if db else default_url(make_folder=False)
    else:
        announce_new_store(db)
        url = open_store(db).url
    # (where neither kind can keep one here: what cron's would be, shown by --print only)
    log = (log_path(url, loaded.config, make_folder=False) if print_only
           else started_log(url, loaded.config))  # (named in the unit or lines from now on)
    plan = install.plan(url, loaded, log,
                        kind or keepers.kind() or "cron")
    again = f"costsched daemon install --kind {plan.kind} --now{flags}"
    if print_only:
        if plan.kind == "systemd":
            enable = " && ".join(" ".join(c) for c in plan.enable())
            _say(f"Would write {plan.path}:", plan.text,
                 f"Then start it now and at every login: {enable}")
        else:
            _say("Would add to your crontab (its other lines kept):", plan.text.rstrip("\n"))
        if refused:
            _say(f"Not written as this machine is: {refused}.")
        return
    if plan.kind == "systemd":
        assert plan.path is not None
        plan.path.parent.mkdir(parents=True, exist_ok=True)
        plan.path.write_text(plan.text)
        _say(f"Wrote {plan.path} (the daemon for {plan.store}; log: {plan.log}).")
        if now:
            for command in plan.enable():
                code, said = install.run(command)
                if code != 0:
                    raise typer.Exit(_error(
                        f"{' '.join(command)}: {said or 'failed'}; the unit is left in place, "
                        f"not running (`costsched daemon uninstall{flags}` removes it)"))
            _say(f"Started: {plan.name}.service runs now and at every login "
                 "(`costsched daemon status` shows it).")
        else:
            enable = " && ".join(" ".join(c) for c in plan.enable())
            _say(f"Start it now and at every login: {enable}  (or: {again})")
        _say("To keep it running from boot without logging in: loginctl enable-linger")
        return
    install.write_crontab(install.with_block(install.read_crontab(), plan))
    _say(f"Added to your crontab: the daemon for {plan.store} starts at every boot, and a "
         f"keep-alive starts it again within 10 minutes should it stop (log: {plan.log}).")
    if install.cron_runs() is False:
        _say("But no cron daemon (cron or crond) runs on this machine now, so nothing runs "
             "these lines until one does (e.g. `sudo service cron start`).")
    if now:
        pid = install.start_now(plan)
        _say(f"Started: installed daemon pid {pid}.")
    else:
        _say(f"It starts within 10 minutes; `{again}` starts it now.")


@app.command("uninstall")
@friendly_errors
def uninstall_cmd(
    db: DbOption = None,
    print_only: Annotated[bool, typer.Option(
        "--print", help="Only show what would be removed.")] = False,
) -> None:
    """Remove what `costsched daemon install` wrote for this store (the systemd unit,
    stopped and disabled, or costsched's crontab lines; your other lines are kept)."""
    loaded = config_module.load()
    store = open_store(db)
    where = install.installed(store.url)
    if where is None:
        _say(f"No daemon is installed for {store.where} on this machine.")
        return
    plan = install.plan(store.url, loaded, log_path(store.url, loaded.config), where["kind"])
    if where["kind"] == "systemd":
        assert plan.path is not None
        commands = [*plan.disable(), ["systemctl", "--user", "daemon-reload"]]
        if print_only:
            _say(f"Would run {' && '.join(' '.join(c) for c in plan.disable())}, remove "
                 f"{plan.path}, and run systemctl --user daemon-reload.")
            return
        code, said = install.run(commands[0])  # a unit never enabled: nothing to stop
        plan.path.unlink(missing_ok=True)
        install.run(commands[1])
        _say(f"Removed {plan.path}." if code == 0 else
             f"Removed {plan.path}; `{' '.join(commands[0])}` failed "
             f"({said or 'exit ' + str(code)}): a daemon it started runs until `costsched "
             "daemon stop`.")
        return
    if print_only:
        _say("Would remove these lines from your crontab (its other lines kept):",
             plan.text.rstrip("\n"))
        return
    install.write_crontab(install.without_block(install.read_crontab(), plan.name))
    _say(f"Removed the daemon for {plan.store} from your crontab; a daemon it started runs "
         "until `costsched daemon stop`.")


def _say(*texts: str) -> None:
    """Each text, line by line (a unit file or crontab block shown as it is written)."""
    for text in texts:
        for line in text.splitlines() or [""]:
            console.print(printable(line), highlight=False, markup=False, soft_wrap=True)


def _error(text: str) -> int:
    """Say `text` as the command's error; its exit code (1)."""
    from costsched.cli.common import err_console

    err_console.print(printable(f"error: {text}"), highlight=False, markup=False,
                      soft_wrap=True)
    return 1


def _db_flag(db: str | None) -> str:
    """' --db URL' where the command was given one: the commands it names carry it."""
    return f" --db {shlex.quote(db)}" if db else ""


def _meanwhile(db: str | None, config: config_module.Config) -> str:
    """What watches this store's running jobs where nothing keeps a daemon across reboots."""
    start = START + _db_flag(db)
    if config.daemon.autostart:
        return ("meanwhile, until the machine restarts, the supervisor a launch starts "
                f"watches this store's running jobs (`{start}` starts one now)")
    return (f"meanwhile, until the machine restarts, `{start}` starts a supervisor that "
            "watches this store's running jobs (a launch starts none: daemon.autostart is "
            "off)")


__all__ = ["START", "app"]
