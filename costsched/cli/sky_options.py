"""What `costsched plan` and `costsched launch` read instead of an option of `sky launch`
typed to them (`--gpus A10G:1`, `--use-spot`, `-y`): said in place of "No such option"."""

from __future__ import annotations

_OFFERING = ("; `costsched launch JOB.yaml --offering LABEL` runs it on one offering of its "
             "plan (`costsched plan JOB.yaml` lists their labels)")
_WHERE = ("reads where the job may run from the job file: resources.infra (aws/us-east-1) or "
          "cloud, region and zone in a SkyPilot task, constraints.clouds, regions and zones "
          "in a costsched job")
_MARKET = ("reads the market from the job file: resources.use_spot in a SkyPilot task, "
           "constraints.markets in a costsched job ([spot], [on-demand] or both)")
_ENDS = ("costsched terminates a job's instances once the job ends (as its supervisor or the next "
         "`costsched status` sees it), so none is left to idle; `costsched stop JOB` ends "
         "it sooner")
_NAMED = ("`costsched status`, `costsched logs` and `costsched stop` take the job's name (the "
          "job file's name field) or its id")

# An option of `sky launch`, by its long name less its dashes (its short ones: _SHORT):
# what costsched does instead, and whether `costsched launch` can name one offering
# (`_OFFERING`) to stand for it.
_READS: dict[str, tuple[str, bool]] = {
    "gpus": ("reads the GPUs from the job file: resources.accelerators in a SkyPilot task "
               "(accelerators: A10G:1), constraints.gpu_models and gpu_counts in a costsched "
               "job", False),
    "use-spot": (_MARKET, False),
    "no-use-spot": (_MARKET, False),
    "infra": (_WHERE, True),
    "cloud": (_WHERE, True),
    "region": (_WHERE, True),
    "zone": (_WHERE, True),
    "instance-type": ("reads the instance types from the job file: "
                        "resources.instance_type in a SkyPilot task, "
                        "constraints.instance_types in a costsched job", True),
    "num-nodes": ("reads the number of nodes from the job file's num_nodes", False),
    "cpus": ("reads them from the SkyPilot task's resources.cpus", False),
    "memory": ("reads it from the SkyPilot task's resources.memory", False),
    "disk-size": ("reads it from the SkyPilot task's resources.disk_size", False),
    "disk-tier": ("reads it from the SkyPilot task's resources.disk_tier", False),
    "network-tier": ("reads it from the SkyPilot task's resources.network_tier", False),
    "image-id": ("reads it from the SkyPilot task's resources.image_id", False),
    "ports": ("reads them from the SkyPilot task's resources.ports", False),
    "workdir": ("reads the job file's workdir", False),
    "name": ("names the job from the job file's name field; " + _NAMED, False),
    "cluster": ("runs each job on instances of its own, with no cluster to name or "
                  "reuse; " + _NAMED, False),
    "job-recovery": ("reads it from the SkyPilot task's resources.job_recovery (its "
                     "max_restarts_on_errors: the restarts after the job's own errors); a "
                     "preempted job is always recovered, from its newest checkpoint", False),
}
# What `costsched launch` does where `sky launch` has a flag for it.
_DOES: dict[str, str] = {
    "yes": ("costsched launch asks nothing before it launches (its --yes launches past "
              "a budget's pessimistic cost, and buys booked capacity without asking)"),
    "detach-run": ("costsched launch returns once the job runs, or after --wait seconds, "
                     "and the job goes on; `costsched logs JOB --follow` shows its output"),
    "down": _ENDS,
    "idle-minutes-to-autostop": _ENDS,
    "retry-until-up": ("costsched launch tries the plan's next offering when a cloud has no "
                         "capacity, and a job left waiting is tried again at each pass of "
                         "its supervisor"),
    "dryrun": "`costsched plan JOB.yaml` shows where a job would run and at what cost",
    "async": ("costsched launch returns once the job runs, or after --wait seconds (--wait 0: "
              "at once), and the job goes on; `costsched status` shows it"),
    "detach-setup": ("costsched runs the task's setup on each instance before its run, as "
                     "part of the job; `costsched logs JOB --follow` shows the setup's output"),
    "no-setup": ("costsched runs the task's setup on every new instance, a recovery's and a "
                 "move's too, as the run needs it there"),
    "fast": "costsched launch starts instances of the job's own, with no cluster to reuse",
    "env-file": ("costsched reads no env file: give each env with --env NAME=VALUE, or "
                 "--env NAME to take its value from your shell (`set -a; . ./.env; set +a` "
                 "sets a file's there), and each secret with --secret NAME"),
}
_JOBS_ONLY = {"job-recovery"}  # of `sky jobs launch` alone
# Options of costsched's other commands spelt as `sky launch` spells another of its own
# (`migrate --dry-run`): said as that one.
_SPELT = {"dry-run": "dryrun"}
_SHORT = {"-y": "yes", "-d": "detach-run", "-i": "idle-minutes-to-autostop",
          "-r": "retry-until-up", "-c": "cluster", "-n": "name", "-t": "instance-type",
          "-s": "detach-setup"}
COMMANDS = ("plan", "launch")  # the commands that take a job file as `sky launch` takes one


def instead(option: str, command: str) -> str:
    """'--gpus is an option of `sky launch`; costsched reads the GPUs from ...' for an
    option of `sky launch` given to `command` (plan or launch); '' for any other."""
    name = option.partition("=")[0]
    name = _SHORT.get(name, name.removeprefix("--"))
    if name in _SPELT:  # '--dry-run': `sky launch --dryrun`
        if command != "launch":
            return (f"{option}: costsched {command} launches nothing: it shows where a job "
                    "would run and at what cost")
        return (f"{option}: `sky launch` calls it --{_SPELT[name]}, and costsched launch has "
                f"none; {_DOES[_SPELT[name]]}")
    if name in _READS:
        said, offering = _READS[name]
        said = "costsched " + said + (_OFFERING if offering else "")
    elif name in _DOES:
        said = _DOES[name]
        if command != "launch":
            said = "costsched plan launches nothing" + (
                ": it shows where a job would run and at what cost" if name == "dryrun"
                else "; " + said)
    else:
        return ""
    whose = "sky jobs launch" if name in _JOBS_ONLY else "sky launch"
    return f"{option} is an option of `{whose}`; {said}"
