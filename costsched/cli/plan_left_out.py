"""`plan`'s notes on what its tables leave out or do not show: the booked markets a job
asks for that were not weighed, none of them being known that fits it (and the `collect`
that gets them, as the "no plan" of a job asking for booked capacity alone says it), and a
launcher that cannot launch now or launches other clouds than a table's #1 (its reason and
fix, in the words `launch` refuses in: `launchers.make_launcher`), so that no one reads
#1 as where `launch` goes when it cannot go there. Each note is said once (a sweep's jobs
share their file's) on stderr, as the other notes on what `launch` needs."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from costsched.optimize.planner import JobPlan
    from costsched.service import PlanResult


def note_left_out(result: PlanResult, launcher: str, top: int, json_out: bool = False) -> None:
    """Print `left_out_lines` on stderr, each as a note (`top`: the rows a table shows;
    `json_out`: the start left out is a field of the JSON instead)."""
    from costsched.cli.common import err_console, user_text

    for line in left_out_lines(result, launcher, top, start=not json_out):
        err_console.print(f"note: {user_text(line)}", highlight=False, soft_wrap=True)


def left_out_lines(result: PlanResult, launcher: str, top: int = 10,
                   start: bool = True) -> list[str]:
    """The booked markets not weighed (`unweighed_line`, per job), a start the launcher
    leaves out (`start_left_out_line`), and what the launcher leaves of the tables
    (`launcher_line`), each line once."""
    shared: dict[int, list[int]] = {}  # a sweep's identical jobs share one ranking
    for i, p in enumerate(result.jobs):
        shared.setdefault(id(p.ranked), []).append(i)
    lines = [unweighed_line(result.jobs[m[0]], result.booked[m[0]] if result.booked else None,
                            _names([result.jobs[j].job.name for j in m]))
             for m in shared.values()]
    lines += [start_left_out_line(result.jobs[m[0]],
                                  _names([result.jobs[j].job.name for j in m]), launcher)
              for m in shared.values() if start]
    lines.append(launcher_line(result, launcher, top))
    return list(dict.fromkeys(line for line in lines if line))


def start_left_out_line(p: JobPlan, jobs: str, launcher: str) -> str:
    """'job w: hours and totals leave out the start of a cloud instance and its boot at each
    recovery, as `launch` on the local launcher does: ...; on a cloud launcher they count
    its first start 0.25 h: ...'
    (of a job whose work is not given, its $/work-h, which a cloud's start comes on top of):
    where the launcher `launch` uses boots no instance (the job's `start_left_out`), the
    start a cloud launcher would add; '' elsewhere, and for a job with no plan."""

    if not p.job.start_left_out or p.best is None:
        return ""
    cloud = p.job.launched_by("").start_said()
    if p.job.work_assumed:  # a rate per hour of work: no hours or totals to leave it out of
        return (f"{jobs}: no start comes on top of the $/work-h, as `launch` on the {launcher} "
                f"launcher (launch.launcher) counts none: {p.job.start_left_out}; on a cloud "
                f"launcher its {cloud} comes on top, once, at the offering's $/h")
    return (f"{jobs}: hours and totals leave out the start of a cloud instance and its boot "
            f"at each recovery, as `launch` on the {launcher} launcher (launch.launcher) "
            f"does: {p.job.start_left_out}; on a cloud launcher they count its {cloud}")


def _names(names: list[str]) -> str:
    """'job a', or of a sweep's identical jobs 'jobs a ... c'."""
    return f"job {names[0]}" if len(names) == 1 else f"jobs {names[0]} ... {names[-1]}"


def unweighed_line(p: JobPlan, booked: Any, jobs: str = "") -> str:
    """'booked.yaml: flex-start and reservation not weighed: none known fits job w2v-book;
    `costsched collect --cloud gcp --gpu L4 --booked` collects ...': the booked markets
    job `p` asks for of which its plan weighed no offering (`booked`: its `BookedPlans`,
    None where none fits it; `jobs`: the jobs named, by default `p`'s); '' where it
    weighed each, asks for none, or has no plan (whose line says why)."""
    from costsched.model import BOOKED_MARKETS
    from costsched.optimize.no_plan_keys import key
    from costsched.optimize.unmatched_booked import booked_line
    from costsched.vocabulary import word

    c = p.job.job.constraints
    asked = [m for m in dict.fromkeys(c.markets) if m in BOOKED_MARKETS]
    if not asked or p.reason:
        return ""
    # Weighed: booked capacity in its plans with booked capacity, or a flex-start price
    # ranked as an hourly one (in its table).
    weighed = {b.booked.offering.market for b in (booked.booked if booked else ())
               if b.booked is not None} | set(p.ranked.loc[p.ranked["excluded"] == "",
                                                           "market"])
    missing = [m for m in asked if m not in weighed]
    if not missing:
        return ""
    # Its `collect` line of the markets missing (those it weighed are not fetched again).
    narrowed = replace(c, markets=[m for m in c.markets if m not in asked or m in missing])
    fetch = booked_line(narrowed, key(p.job, "markets"))
    names = [word(m) for m in missing]
    said = " and ".join([", ".join(names[:-1]), names[-1]] if len(names) > 1 else names)
    where = f"{p.job.source}: " if p.job.source and not str(p.job.source).startswith("<") \
        else ""
    return (f"{where}{said} not weighed: none known fits {jobs or 'job ' + p.job.name}; "
            + (fetch or "no cloud it allows sells it (docs/booked-capacity.md says where it "
                        "is sold)"))


def launcher_line(result: PlanResult, launcher: str, top: int = 10) -> str:
    """'launch cannot launch now: your launcher (launch.launcher) is aws, and boto3 is not
    installed: pip install ...; it launches aws offerings only: #1 of job w2v-aws (gcp ...) is
    not one of them, #19 (aws ...) is where launch goes': the configured launcher where it
    cannot launch now (made and checked as `launch` makes and checks it, and refuses) or a
    job's #1 is of a cloud it does not launch on now, and where `launch` goes instead (its
    table's first row it launches); '' for the local launcher (it runs any offering) or
    where each #1 is launched. `top`: the rows a table shows (a row below them is said
    with the `--top` that shows it)."""
    from costsched.clouds import CLOUDS

    if launcher == "local":
        return ""
    several = launcher == "clouds"  # each cloud's launcher, where it is ready (as launch)
    clouds = tuple(CLOUDS) if several else (launcher,)
    unready: dict[str, str] = {}

    def launched(cloud: str) -> bool:
        if cloud not in clouds or not several:  # (one cloud's: asked once, below)
            return cloud in clouds
        if cloud not in unready:
            unready[cloud] = _unready(cloud)
        return not unready[cloud]

    elsewhere = []  # each job whose #1 launch does not go to (once per ranking shared)
    rankings: dict[int, tuple[list[str], Any]] = {}  # a sweep's identical jobs share one
    for i, p in enumerate(result.jobs):
        if p.best is not None:
            rankings.setdefault(id(p.ranked), ([], result.ranking(i)))[0].append(p.job.name)
    for names, ranked in rankings.values():
        if launched(str(ranked["cloud"].iloc[0])):
            continue
        goes = next((i for i, c in enumerate(ranked["cloud"], start=1) if launched(str(c))),
                    None)
        shown = "" if goes is None or goes <= top else f"; `--top {goes}` shows it"
        instead = ("nor is any of its ranked offerings" if goes is None else
                   f"#{goes} ({ranked['offering'].iloc[goes - 1]}{shown}) is where launch "
                   "goes")
        first = ranked["offering"].iloc[0]
        elsewhere.append(f"#1 of {_names(names)} ({first}) is not one of them, {instead}")
    if not several:
        unready = {launcher: _unready(launcher)}
    unready = {c: why for c, why in unready.items() if why}
    if not unready and not elsewhere:
        return ""
    if several:
        now = "; ".join(f"launch cannot launch on {c} now: {why}" for c, why in unready.items())
        these = ("your launcher (launch.launcher) is clouds: it launches on the clouds "
                 "ready now")
    else:
        now = (f"launch cannot launch now: your launcher (launch.launcher) is {launcher}, "
               f"and {unready[launcher]}" if unready else "")
        these = (f"it launches {launcher} offerings only" if unready else
                 f"your launcher (launch.launcher) is {launcher}: it launches {launcher} "
                 "offerings only")
    return "; ".join(filter(None, [now, these])) + (f": {'; '.join(elsewhere)}"
                                                    if elsewhere else "")


def _unready(name: str) -> str:
    """Why the launcher `name` cannot launch now, as `launch` refuses before it stores
    anything ('' when it can): made as `launch` makes it (its SDK, its set-up), then its
    `check_ready` (its credentials); without its name before the reason."""
    from costsched.model import InvalidInput
    from launchers import make_launcher

    try:
        make_launcher(name).check_ready()
    except InvalidInput as exc:
        return str(exc).removeprefix(f"{name}: ")
    return ""
