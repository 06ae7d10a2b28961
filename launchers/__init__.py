"""Launchers: where jobs run. One module per backend behind one interface (`base.Launcher`,
defined by the core that drives it), the agent that runs a job on an instance, and the
checkpoint stores (`checkpoints`). Nothing outside a backend branches on a cloud's name.

    launcher = make_launcher("local")            # or "aws", "gcp", "azure", "clouds"
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

from costsched.model import InvalidInput
from costsched.vocabulary import did_you_mean

# Backend name -> (module, class); imported on demand (a backend may need its cloud's SDK).
BACKENDS = {"local": ("launchers.local", "LocalLauncher"),
            "aws": ("launchers.aws", "AwsLauncher"),
            "gcp": ("launchers.gcp", "GcpLauncher"),
            "azure": ("launchers.azure", "AzureLauncher"),
            "clouds": ("launchers.clouds", "CloudsLauncher")}
# Backends whose instances run on this machine and read every checkpoint store it can: a
# job's checkpoints are never carried between clouds for them.
HERE = ("local",)


def runs_here(name: str) -> bool:
    """Whether the launcher backend `name` runs its instances on this machine."""
    return name in HERE


def start_left_out(name: str) -> str:
    """What a job's start costs on backend `name`: '' where it is a cloud instance's boot,
    set-up and warm-up (the restart model's, `[migration]`), which a plan counts once at
    the offering's price; else why it costs nothing there, as a launch's budget check says
    it: a backend that runs its instances on this machine boots none (the job's setup is
    in its billed hours)."""
    if runs_here(name):
        return f"the {name} launcher boots no instance, and the job's setup is in its billed hours"
    return ""


def observed_as(name: str) -> str:
    """The source the availability observations of backend `name`'s instances are stored
    with: LOCAL for one whose instances run on this machine, standing in for a cloud's
    offering (what they meet is never counted as the cloud's), '' for a cloud's own."""
    from costsched.store.availability import LOCAL

    return LOCAL if runs_here(name) else ""


def make_launcher(name: str, **options: Any) -> Any:  # -> launchers.base.Launcher
    """The launcher backend `name` with its options (see each backend's constructor)."""
    try:
        module, cls = BACKENDS[name]
    except KeyError:
        raise InvalidInput(f"launcher {name!r}: expected one of {', '.join(BACKENDS)}"
                           + did_you_mean(name, BACKENDS)) from None
    from costsched.clouds.base import NotSetUp, SdkMissing

    try:
        return getattr(import_module(module), cls)(**options)
    except (SdkMissing, NotSetUp) as exc:  # one line saying what to install or set up
        raise InvalidInput(str(exc)) from None
