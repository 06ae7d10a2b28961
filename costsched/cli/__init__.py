"""The `costsched` command line. Each command group lives in a module of its own.

A command's module is imported when the command runs, not when the CLI starts: `--help`,
`--version` and the light commands do not pay for pandas, the solver or the report. The
root's help lists every command from COMMANDS without importing any of them.
"""

from __future__ import annotations

import gc
import re
from ast import literal_eval
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from importlib import import_module
from typing import Annotated, Any

import typer
from typer import _click as click
from typer._click.exceptions import NoArgsIsHelpError, NoSuchOption, UsageError
from typer.core import TyperCommand, TyperGroup, TyperOption

from costsched.lazy import arrowless_pandas

# The command's pandas keeps its strings without pyarrow (costsched.lazy), which it then
# does not load; the Python API (notebooks) leaves pandas as the user's process has it.
arrowless_pandas()


@dataclass(frozen=True)
class Entry:
    """A command by name: where it is (module and attribute: a function or a typer.Typer)
    and the first paragraph of its help, shown by `costsched --help`."""

    module: str
    attribute: str
    help: str

    def load(self, name: str) -> click.Command:
        target = getattr(import_module(self.module), self.attribute)
        if isinstance(target, typer.Typer):
            command = typer.main.get_group(target)
        else:
            single = typer.Typer(add_completion=False)  # the root's options, not each command's
            single.command(name)(target)
            command = typer.main.get_command(single)
        command.name = name
        return command


COMMANDS: dict[str, Entry] = {
    "plan": Entry("costsched.cli.plan", "plan",
                  "Rank offerings by expected cost and time for each job; for several jobs, "
                  "also place them all at once (min cost under deadlines, min makespan under "
                  "--budget, or throughput per dollar), within --quota."),
    "backtest": Entry("costsched.cli.backtest", "backtest_cmd",
                      "Replay stored prices: cost, hours and migrations of each policy, "
                      "relative to static and to cheapest-hourly."),
    "backtest-deadline": Entry("costsched.cli.deadline", "deadline_backtest_cmd",
                               "Replay jobs with a deadline over stored spot availability: "
                               "cost against on-demand, deadline misses and the share of the "
                               "greedy-to-optimum gap each policy closes."),
    "collect": Entry("costsched.cli.collect", "collect",
                     "Collect current on-demand and spot GPU prices and store what is new."),
    "launch": Entry("costsched.cli.jobs", "launch",
                    "Start jobs on the best offering now (trying the next ones if a cloud has "
                    "no capacity), with their checkpoints kept in their checkpoint store."),
    "status": Entry("costsched.cli.look", "status",
                    "Each job's state, placement, progress and cost so far (recovering "
                    "preempted jobs and closing finished ones first)."),
    "migrate": Entry("costsched.cli.migrate", "migrate",
                     "Ask the policy where each running job should be now, among every "
                     "offering its constraints allow, in dollars, and move the jobs whose "
                     "move pays (checkpoint, verify, launch the target, then end the source). "
                     "With --to, move one job where you say."),
    "stop": Entry("costsched.cli.jobs", "stop",
                  "Stop a job: its instance is terminated; its checkpoints are kept."),
    "start": Entry("costsched.cli.jobs", "start",
                   "Start a stopped or failed job again from its newest verified "
                   "checkpoint (from step 0 where it published none), with the spec it was "
                   "launched with and the code packed at its launch (--repack: its workdir "
                   "as it is now), on the best offering now."),
    "logs": Entry("costsched.cli.look", "logs",
                  "The job's output on its current (or last) instance."),
    "fetch": Entry("costsched.cli.fetch", "fetch",
                   "Copy a job's newest verified checkpoint, with the files the job wrote "
                   "beside it (a model, results, logs), to a new or empty folder."),
    "report": Entry("costsched.cli.report", "report",
                    "Spend per job, cloud and day from the stored placements, savings against "
                    "on-demand and against the job's launch-time choice kept to the end, "
                    "migrations and recoveries with their costs, and the jobs near, over or "
                    "stopped at their budget."),
    "bills": Entry("costsched.cli.bills", "app",
                   "The clouds' billing exports: import them and match them to the jobs "
                   "(`report --billed` sets them beside the estimates)."),
    "daemon": Entry("costsched.cli.daemon", "app",
                    "Run the scheduled optimizer: collect prices, re-plan running jobs and "
                    "migrate where the policy says so, refresh the on-demand catalog, on the "
                    "config's schedules, and watch the running jobs every "
                    "daemon.watch_seconds (recovering preempted ones). Stops on SIGTERM or "
                    "SIGINT once the step in progress is done. Logs one logfmt line per "
                    "event."),
    "catalog": Entry("costsched.cli.catalog", "app",
                     "The GPU instance types (bundled and discovered), with their regions and "
                     "on-demand list prices; `catalog refresh` discovers what each cloud "
                     "sells now."),
    "prices": Entry("costsched.cli.prices", "app",
                    "Price history: import recorded logs, show prices as of a time, export."),
    "throughput": Entry("costsched.cli.throughput", "app",
                        "Throughput (steps/s) of models on GPUs: bundled, measured, "
                        "estimated."),
    "config": Entry("costsched.cli.config", "app",
                    "The configuration file and its COSTSCHED_* overrides."),
    "risk": Entry("costsched.cli.risk", "app",
                  "Published spot risk signals: Spot Instance Advisor buckets, spot placement "
                  "scores, Azure eviction rates."),
    "check": Entry("costsched.cli.check", "check",
                   "For each cloud: one line saying what it can do, or what stops it and the "
                   "fix; then SDK installed, credentials found (environment, files, "
                   "credential helpers, instance role; never their values), one harmless "
                   "authenticated call (each bounded by calls.timeout_seconds, the whole check "
                   "by 20 s) and what that enables (collect prices, launch, checkpoints). Exit "
                   "0 when your launcher (launch.launcher) can launch: the local one always "
                   "can, a cloud's when that cloud can ('clouds': any); else 1."),
    "quotas": Entry("costsched.cli.quotas", "quotas",
                    "The accounts' quotas that GPU instances draw on, per region and market, "
                    "with their limit, use and age (as `collect` read them, or now with "
                    "--refresh); plans rank offerings over quota behind those that fit."),
    "dashboard": Entry("costsched.cli.dashboard", "dashboard",
                       "A live web view of the jobs, their spend and the prices under them, "
                       "at http://127.0.0.1:8765/ by default (Ctrl-C stops); with a JSON API "
                       "under /api/."),
    "gpus": Entry("costsched.cli.gpus", "gpus",
                  "GPU models and counts with the cheapest on-demand and spot price now, "
                  "where, and how old each price is (stored prices, else the bundled list "
                  "prices and spot snapshot)."),
}


# Commands users look for under another name (other tools' words, or what a command
# shows): the command that does it.
_BUDGETS = ("`costsched status` (its budgets table; --budget NAME: the jobs of one budget) "
            "or `costsched report`")
COMMAND_FOR = {
    **dict.fromkeys(("budget", "budgets", "caps", "limits"), _BUDGETS),
    **dict.fromkeys(("jobs", "job", "ps", "ls", "list", "queue"), "`costsched status`"),
    **dict.fromkeys(("cost", "costs", "spend", "spent", "usage"), "`costsched report`"),
    **dict.fromkeys(("run", "up", "submit", "exec"), "`costsched launch JOB.yaml`"),
    **dict.fromkeys(("down", "cancel", "kill", "terminate"), "`costsched stop JOB`"),
    **dict.fromkeys(("resume", "restart"), "`costsched start JOB`"),
    **dict.fromkeys(("move", "migration"), "`costsched migrate`"),
    **dict.fromkeys(("optimize", "estimate", "rank"), "`costsched plan JOB.yaml`"),
    **dict.fromkeys(("doctor",), "`costsched check`"),
}
# SkyPilot's managed jobs' commands (`sky jobs launch`): costsched's, by the word after it.
JOBS_COMMAND_FOR = {"launch": "`costsched launch JOB.yaml`", "queue": "`costsched status`",
                    "cancel": "`costsched stop JOB`", "logs": "`costsched logs JOB`"}
_JOBS_WORD = "costsched.jobs_word"  # the word after an unknown 'jobs', kept for the hint


class LazyGroup(TyperGroup):
    """The root group: commands registered on the app as usual, then COMMANDS, each
    imported on first use. While the root's help is written, COMMANDS are listed from their
    entries instead."""

    _listing = False

    def list_commands(self, ctx: click.Context) -> list[str]:
        # The registry's order, whichever commands this process has loaded already.
        loaded = super().list_commands(ctx)
        return [*COMMANDS, *(n for n in loaded if n not in COMMANDS)]

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        from costsched.cli.help_text import reflow_help  # its paragraphs at any width

        found = super().get_command(ctx, cmd_name)
        entry = COMMANDS.get(cmd_name)
        if found is not None or entry is None:
            return reflow_help(found)
        if self._listing:
            return TyperCommand(cmd_name, help=entry.help, short_help=entry.help)
        command = self.commands[cmd_name] = reflow_help(entry.load(cmd_name))
        return command

    def format_help(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        self._listing = True
        try:
            super().format_help(ctx, formatter)
        finally:
            self._listing = False

    def make_context(self, info_name: str | None, args: list[str],
                     parent: click.Context | None = None, **extra: Any) -> click.Context:
        with one_line_usage():
            return super().make_context(info_name, args, parent=parent, **extra)

    def invoke(self, ctx: click.Context) -> Any:
        with one_line_usage(ctx):  # every command's own options are parsed in here
            return super().invoke(ctx)

    def resolve_command(self, ctx: click.Context, args: list[str]) -> Any:
        # A command that is not there is said by one_line_usage (`_unknown_name`).
        if len(args) > 1:
            ctx.meta[_JOBS_WORD] = args[1]
        name, command, rest = super().resolve_command(ctx, args)
        if ctx.parent is None and not ctx.resilient_parsing and _reads_config(
                ctx, name, command, rest):
            _refuse_bad_config()
        return name, command, rest


def _reads_config(ctx: click.Context, name: str | None, command: click.Command | None,
                  rest: list[str]) -> bool:
    """Whether the command about to run starts by checking the configuration: every one
    does, but for its help, a group shown without its subcommand, and `config` (which
    reads the file it is given, and says what is wrong with it)."""
    if name == "config" or command is None:
        return False
    given = rest[:rest.index("--")] if "--" in rest else rest
    if any(h in given for h in ctx.help_option_names):
        return False
    return bool(given) or not getattr(command, "no_args_is_help", False)


def _refuse_bad_config() -> None:
    """A bad configuration (the file, or a COSTSCHED_* variable) ends any command in its
    one line, exit code 2, as the commands that read a setting of it refuse it: a typo in
    it is said by the next command, whichever that is."""
    from costsched.cli.common import fail
    from costsched.config import effective
    from costsched.model import InvalidInput

    try:
        effective()
    except InvalidInput as exc:
        fail(exc)


# The root's options that take a value, by the value's name: `costsched --config PATH plan`.
ROOT_OPTIONS = {"--config": "PATH"}


@contextmanager
def one_line_usage(parent: click.Context | None = None) -> Iterator[None]:
    """A mistyped command, option or value ends the command in one line on stderr, as every
    other bad input does ("error: costsched plan: no such option: --tpo; did you mean
    '--top'? `costsched plan --help` shows the usage"; the root's without a command's name:
    "error: --config 'x.toml': no such file: ..."), with click's exit code (2)."""
    try:
        yield
    except UsageError as exc:
        # An option's value missing is said without its command's context: the command
        # being started (`parent`'s) is the one whose usage helps.
        command = (parent.invoked_subcommand if exc.ctx is None and parent is not None
                   else None)
        root = (exc.ctx is None or exc.ctx.parent is None) and not command
        path = (exc.ctx.command_path if exc.ctx is not None else
                f"{parent.command_path} {command}" if command and parent is not None
                else "costsched")
        message = _lowered(_missing_command(exc) or _value_words(exc) or _unknown_name(exc)
                           or _as_ours(" ".join(exc.format_message().split()).rstrip(".")))
        if root and isinstance(exc, NoSuchOption):  # 'costsched --json plan ...'
            message += (f"; a command's options follow its name (`{path} COMMAND ... "
                        f"{exc.option_name}`)")
        elif isinstance(exc, NoSuchOption) and _sky_option(exc, path):
            message = _sky_option(exc, path)
        elif isinstance(exc, NoSuchOption) and exc.option_name in ROOT_OPTIONS:
            message += (f"; {exc.option_name} comes before the command (`costsched "
                        f"{exc.option_name} {ROOT_OPTIONS[exc.option_name]} "
                        f"{path.partition(' ')[2]} ...`)")
        message += _takes(exc, exc.ctx.command if exc.ctx is not None else
                          parent.command.get_command(parent, command)  # type: ignore[attr-defined]
                          if parent is not None and command else None)
        ends = " " if message.endswith("?") else "; "  # after a did-you-mean's question
        lead = "" if root else f"{path}: "  # the root's: 'error: --config ...', its name said once
        click.echo(f"error: {lead}{message}{ends}`{path} --help` shows the usage", err=True)
        raise SystemExit(exc.exit_code) from None


def _takes(exc: UsageError, command: click.Command | None) -> str:
    """What an option of `command` given without its value takes, its help's first
    sentence (" (An offering's row number in the plan's table (1) or its label as ranked
    (...))"), '' for any other mistake or an option without help."""
    name = getattr(exc, "option_name", None)
    if not name or command is None or "requires an argument" not in exc.format_message():
        return ""
    helps = [p.help for p in command.params
             if name in getattr(p, "opts", ()) and getattr(p, "help", None)]
    if not helps:
        return ""
    # Its first sentence (not cut at 'e.g.'), up to a colon's detail.
    first = re.split(r"\.\s+(?=[A-Z])", " ".join(helps[0].split()))[0]
    return f" ({first.split(': ')[0].split('; default')[0].rstrip('.')})"


def _sky_option(exc: NoSuchOption, path: str) -> str:
    """What `costsched plan` or `launch` reads instead of an option of `sky launch` given
    to it (costsched.cli.sky_options); '' for any other option or command."""
    from costsched.cli.sky_options import COMMANDS, instead

    command = path.partition(" ")[2]
    return instead(exc.option_name, command) if command in COMMANDS else ""


def _missing_command(exc: UsageError) -> str:
    """A group run without its command (`costsched prices`): its help is shown already (to
    stdout), then this names what was missing, as one line: 'missing a subcommand: one of
    import, show, ...'; '' for any other usage error."""
    if not isinstance(exc, NoArgsIsHelpError) or exc.ctx is None:
        return ""
    group = exc.ctx.command
    names = group.list_commands(exc.ctx) if isinstance(group, TyperGroup) else []
    return (f"missing a {'sub' if exc.ctx.parent else ''}command: one of "
            + ", ".join(names))


def _unknown_name(exc: UsageError) -> str:
    """A command or an option that is not there, with the close ones named as every other
    did-you-mean of costsched names them (`costsched.vocabulary.did_you_mean`): "no such
    option: --topp; did you mean '--top'?", "no such command 'jobs'; did you mean
    `costsched status`?" (COMMAND_FOR); '' for any other usage error."""
    from costsched.vocabulary import did_you_mean

    ctx = exc.ctx
    if ctx is None:
        return ""
    if isinstance(exc, NoSuchOption):
        params = ctx.command.get_params(ctx)
        number = _negative_number(exc.option_name, params)
        if number:
            return number
        typed = exc.option_name.partition("=")[0]
        names = [o for p in params if getattr(p, "param_type_name", "") == "option"
                 and not getattr(p, "hidden", False) for o in (*p.opts, *p.secondary_opts)
                 if o.startswith("--") == typed.startswith("--")]
        # Alike by their words, not by the dashes all share ('--model' is not '--help').
        bare = {o.lstrip("-"): o for o in names}
        close = did_you_mean(typed.lstrip("-"), list(bare))
        for word, option in bare.items():
            close = close.replace(repr(word), repr(option))
        argument = next((p.name for p in params
                         if getattr(p, "param_type_name", "") == "argument"
                         and p.name == typed.lstrip("-").replace("-", "_")), None)
        if argument and not close:  # 'throughput set --model X'
            close = f"; {argument} is an argument: give it without {typed}"
        return f"no such option: {exc.option_name}{close}"
    head = exc.message.partition(". Did you mean ")[0].rstrip(".")  # typer's, left out
    if not head.startswith("No such command ") or not isinstance(ctx.command, TyperGroup):
        return ""
    try:
        typed = str(literal_eval(head.removeprefix("No such command ")))
    except (ValueError, SyntaxError):
        return ""
    word = typed.strip().lower()
    meant = None if ctx.parent is not None else (
        JOBS_COMMAND_FOR.get(str(ctx.meta.get(_JOBS_WORD, "")).lower())
        if word in ("jobs", "job") else None) or COMMAND_FOR.get(word)
    hint = (f"; did you mean {meant}?" if meant
            else did_you_mean(typed, ctx.command.list_commands(ctx)))
    return f"no such command {typed!r}{hint}"


def _negative_number(given: str, params: list[Any]) -> str:
    """A number read as an option ('-1'), said of the command's argument that takes a
    number: "steps_per_second: expected a positive number ('-1'... reads as an option)";
    '' when `given` is no number or the command takes none as an argument."""
    try:
        float(given)
    except ValueError:
        return ""
    numeric = [p.name for p in params
               if getattr(p, "param_type_name", "") == "argument"
               and getattr(getattr(p, "type_descriptor", None), "annotation", None)
               in (int, float)]
    if not numeric:
        return ""
    # click reads '-1.5' as the option '-1': the number is not quoted, only its start.
    return (f"{' or '.join(numeric)}: expected a positive number ({given!r}... reads as "
            "an option)")


def _lowered(message: str) -> str:
    """click's words as costsched's lines start, in lower case ('missing argument 'jobs''),
    but for a name written in capitals."""
    return message[:1].lower() + message[1:] if message[1:2].islower() else message


def _as_ours(message: str) -> str:
    """click's "... 'x'. Did you mean 'a', 'b'?" as every other did-you-mean of costsched
    says it: "... 'x'; did you mean 'a' or 'b'?"."""
    head, sep, names = message.partition(". Did you mean ")
    if not sep or not names.endswith("?"):
        return message
    return f"{head}; did you mean {' or '.join(names[:-1].split(', '))}?"


def _value_words(exc: UsageError) -> str:
    """A value typer's checks refused, in costsched's words: the option, what was given and
    what is accepted ("--top '0': expected at least 1", "--wait 'abc': expected
    a number"), never pydantic's ("Input should be a valid number, unable to parse string
    as a number"); '' for any other usage error."""
    from pydantic import ValidationError

    from costsched.cli.common import OptionValue

    cause = exc.__cause__
    param = getattr(exc, "param", None)
    if param is None:
        return ""
    name = param.opts[0] if getattr(param, "opts", None) else param.human_readable_name
    if isinstance(exc, OptionValue):  # costsched's own parser said it
        return f"{name} {exc.message}"
    if not isinstance(cause, ValidationError) or not cause.errors():
        return ""
    from costsched.spec_errors import error_words

    error = cause.errors()[0]
    if not isinstance(error.get("input"), str):  # typer parses the text it was given
        return ""
    return f"{name} {error_words(error)}"


_typed = getattr(TyperOption, "display_type_rich", None)


def _flag_shows_no_type(self: TyperOption, ctx: click.Context) -> str | None:
    """A flag (--json, --wide, --help) takes no value: help shows no `<bool>` beside it."""
    return None if self.is_flag else _typed(self, ctx)  # type: ignore[misc]


# typer has no setting for it; every command's help is written through TyperOption (a
# typer without that method is left as it is: only the help's look depends on it).
if _typed is not None:
    TyperOption.display_type_rich = _flag_shows_no_type  # type: ignore[method-assign]

app = typer.Typer(
    cls=LazyGroup,
    help="costsched: train ML models cheaply on cloud GPUs (prices, plans, migration).",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
)


def _version(value: bool) -> None:
    if value:
        from importlib.metadata import version

        from costsched.catalog_version import CATALOG_VERSION

        typer.echo(f"costsched {version('costsched')} (catalog {CATALOG_VERSION})")
        raise typer.Exit()


def _config_file(value: str | None) -> None:
    """`costsched --config PATH COMMAND`: every command (and what it starts, the supervisor
    included) reads PATH, as with COSTSCHED_CONFIG=PATH."""
    if value:
        import os
        from pathlib import Path

        from costsched.cli.common import OptionValue
        from costsched.config.sections import ENV_CONFIG

        path = Path(value).expanduser().absolute()
        if not path.is_file():
            what = "a directory" if path.is_dir() else "no such file"
            raise OptionValue(f"{value!r}: {what}: expected a TOML config file")
        os.environ[ENV_CONFIG] = str(path)


@app.callback()
def root(
    show_version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Show the version.")
    ] = False,
    config: Annotated[
        str | None, typer.Option(
            "--config", callback=_config_file, metavar="PATH", show_default=False,
            help="The TOML config file for this command (default: $COSTSCHED_CONFIG, else "
                 "config.toml in the user config directory).")
    ] = None,
) -> None:
    """costsched: train ML models cheaply on cloud GPUs (prices, plans, migration)."""
    from typer._click.globals import get_current_context

    from costsched.cli.logged_warnings import print_logged_warnings

    # the launchers' warnings read as the command's own, while it runs
    get_current_context().call_on_close(print_logged_warnings())


# A command starts by importing its libraries (SQLAlchemy, pydantic's models, pandas):
# about 200,000 objects that live as long as the process. The collector's young passes
# walk each of them once, its middle passes once more, to free nothing (a twentieth of
# `plan`'s CPU). So its first pass waits until this many objects were made: an everyday
# command ends before it (status and report make about 125,000 on the demo's store, plan
# and launch about 240,000); a long run (the daemon, a plan of many jobs) has it, and then
# the usual passes (`_usual_passes`).
FIRST_PASS_AFTER = 500_000
# A full pass waits for this many middle passes (Python's default: 10): its walk over
# everything loaded frees nothing either; a long run still has them.
FULL_PASS_AFTER = 1000


def _usual_passes(young: int) -> Callable[[str, dict], None]:
    """A collector callback: once the first pass has run, young passes every `young`
    objects again (Python's default 700: a long run's garbage is freed as it goes)."""

    def after_a_pass(phase: str, info: dict) -> None:
        if phase == "stop":
            gc.set_threshold(young, *gc.get_threshold()[1:])

    return after_a_pass


def main() -> None:
    young, middle, _ = gc.get_threshold()
    gc.set_threshold(FIRST_PASS_AFTER, middle, FULL_PASS_AFTER)
    gc.callbacks.append(_usual_passes(young))
    try:
        app()
    finally:
        # What a command made lives until the process ends: the collector's passes over
        # it at exit (a tenth of a second of CPU once the store's libraries are loaded)
        # would free nothing the exit does not. Exit handlers still run.
        gc.freeze()
