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
}
_SHORT = {"-y": "yes", "-d": "detach-run", "-i": "idle-minutes-to-autostop",
          "-r": "retry-until-up", "-c": "cluster", "-n": "name", "-t": "instance-type"}
COMMANDS = ("plan", "launch")  # the commands that take a job file as `sky launch` takes one


def instead(option: str, command: str) -> str:
    """'--gpus is an option of `sky launch`; costsched reads the GPUs from ...' for an
    option of `sky launch` given to `command` (plan or launch); '' for any other."""
    name = option.partition("=")[0]
    name = _SHORT.get(name, name.removeprefix("--"))
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
    return f"{option} is an option of `sky launch`; {said}"
