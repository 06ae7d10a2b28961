"""`costsched check`: which clouds this machine can use, and the line that fixes each gap."""

from __future__ import annotations

import typer

from costsched.cli.common import (
    JsonOption,
    console,
    friendly_errors,
    print_json,
    refuse_url,
    user_text,
)
from costsched.redact import redact
from costsched.service.check import CloudCheck, can_launch_somewhere, check_all


@friendly_errors
def check(json_out: JsonOption = False) -> None:
    """For each cloud: one line saying what it can do, or what stops it and the fix; then
    SDK installed, credentials found (environment, files, credential helpers, instance
    role; never their values), one harmless authenticated call (each bounded by
    calls.timeout_seconds, the whole check by 20 s) and what that enables (collect
    prices, launch, checkpoints). Exit 0 when your launcher (launch.launcher) can launch:
    the local one always can, a cloud's when that cloud can ('clouds': any); else 1."""
    from costsched.config import effective

    checks = check_all()
    ok = can_launch_somewhere(checks)
    launcher = effective().launch.launcher
    ready = _launcher_ready(launcher, checks)
    if json_out:
        print_json({"clouds": [c.as_dict() for c in checks], "can_launch": ok,
                    "launcher": launcher, "launcher_ready": ready,
                    "quotas": _stored_quotas()})
    else:
        for c in checks:
            _print(c)
        _print_quotas()
        console.print(_ready_line(launcher, checks), highlight=False, markup=False)
    if not ready:
        raise typer.Exit(1)


def _launcher_ready(launcher: str, checks: list[CloudCheck]) -> bool:
    """Whether `launcher` (launch.launcher) can launch as `checks` found the clouds."""
    if launcher == "local":
        return True
    if launcher == "clouds":
        return can_launch_somewhere(checks)
    return any(c.launch for c in checks if c.cloud == launcher)


def _ready_line(launcher: str, checks: list[CloudCheck]) -> str:
    """The last line: where jobs can be launched now, and which is the user's launcher."""
    clouds = [c.cloud for c in checks if c.launch]
    if launcher == "local":
        return ("Ready to launch on: local (your launcher, launch.launcher)"
                + (f", {', '.join(clouds)}" if clouds
                   else "; no cloud yet: each one's fix is above"))
    if not _launcher_ready(launcher, checks):
        return (f"Ready to launch on: {', '.join(clouds) or 'none'}; your launcher "
                f"(launch.launcher) is {launcher}: each cloud's fix is above, or "
                'launch.launcher = "local" runs jobs on this machine')
    return f"Ready to launch on: {', '.join(clouds)} (your launcher: {launcher})"


def _facts() -> tuple[object, object] | None:
    """The default store's quotas (and now), or None when there is no store yet: `check`
    creates none."""
    from costsched.service.store_files import missing_store

    if missing_store(None) is not None:
        return None
    refuse_url(None, None)  # one line naming $COSTSCHED_DB, as every command says it
    from costsched.service.quotas import QuotaFacts
    from costsched.service.stores import using
    from costsched.service.values import as_time

    with using(None) as store:
        return QuotaFacts.of(store), as_time(None)


def _stored_quotas() -> dict:
    """The quotas `collect` last read, each with its age, and how each cloud's reading
    went (`costsched quotas --json`'s records)."""
    found = _facts()
    if found is None:
        return {"read": [], "reads": [], "note": no_quotas()}
    from costsched.cli.quotas import quota_records, read_records

    facts, now = found
    return {"read": quota_records(facts.table(now)), "reads": read_records(facts, []),
            "note": None}


def no_quotas() -> str:
    """What `check` says where no quotas were read yet."""
    from costsched.clouds.hints import quotas_read_hint

    return f"no quotas read yet: {quotas_read_hint()} reads them"


def _print_quotas() -> None:
    found = _facts()
    if found is None:
        console.print(f"quotas: {no_quotas()}", highlight=False, markup=False)
        return
    from costsched.cli.quotas import print_table

    facts, now = found
    if facts.quotas.empty and facts.reads.empty:
        console.print(f"quotas: {no_quotas()}", highlight=False, markup=False)
        return
    print_table(facts, now, title="GPU quotas (as last read; `costsched quotas` for all)")


def _yes(flag: bool) -> str:
    return "[green]yes[/green]" if flag else "[red]no[/red]"


def _summary(c: CloudCheck) -> str:
    """What the cloud can do, or what stops it and the fix, in one line."""
    if c.problem:
        fix = f"; fix: {c.fixes[0]}" if c.fixes else ""
        return f"{c.problem}{fix}"
    prices = "collect prices" + (" (not tried)" if c.prices_untried else "")
    can = [what for what, flag in ((prices, c.collect_prices), ("launch", c.launch),
                                   ("checkpoints", c.checkpoints)) if flag]
    return ("ready: " + ", ".join(can)) if can else "nothing possible"


def _print(c: CloudCheck) -> None:
    console.print(f"[bold]{c.cloud}[/bold]: {user_text(redact(_summary(c)))}", highlight=False,
                  soft_wrap=True)
    console.print(f"  SDK: {'installed' if c.extra_installed else 'not installed'}",
                  highlight=False, markup=False)
    if c.extra_installed:
        found = ", ".join(c.credentials) or "none"
        console.print(f"  credentials: {user_text(found)}", highlight=False)
    for call in c.calls:
        mark = "[green]ok[/green]" if call.ok else "[red]failed[/red]"
        console.print(f"  {user_text(call.name)}: {mark} {user_text(call.detail)}",
                      highlight=False, soft_wrap=True)
    untried = f" (not tried: {user_text(c.prices_untried)})" if c.prices_untried else ""
    console.print(f"  collect prices {_yes(c.collect_prices)}{untried}, launch "
                  f"{_yes(c.launch)}, checkpoints {_yes(c.checkpoints)}", highlight=False,
                  markup=True, soft_wrap=True)
    for note in c.notes:
        console.print(f"  {user_text(note)}", highlight=False, soft_wrap=True)
    for fix in c.fixes[1 if c.problem else 0:]:
        console.print(f"  fix: {user_text(fix)}", highlight=False, soft_wrap=True)
