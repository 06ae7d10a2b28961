"""Where the local launcher keeps its instances, and the environment it gives an instance's
agent (and through it, the job)."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from costsched import clouds

ENV_INSTANCES = "COSTSCHED_INSTANCES"


def default_base_dir() -> Path:
    """$COSTSCHED_INSTANCES, else `instances` in the user data directory."""
    import platformdirs

    return Path(os.environ.get(ENV_INSTANCES)
                or Path(platformdirs.user_data_dir("costsched")) / "instances")


# What a local instance's agent gets from costsched's environment: a clean base and the
# machine's numeric and device settings allowed by config launch.pass_env, never
# costsched's own settings or secrets (COSTSCHED_*, tokens, cloud credentials).
_BASE_ENV = ("HOME", "LANG", "LC_ALL", "LC_CTYPE", "TZ", "TMPDIR", "USER", "LOGNAME")
# The agent needs these to import costsched and launchers (and credentials, below, and the
# stores' endpoints where they are not the clouds' own, to reach a bucket); the job does
# not see them.
# The names of what an instance's environment holds for its agent alone (`_AGENT_ENV`,
# credentials), which the agent does not pass on to the job (`agent_loop.job_environment`).
ENV_AGENT_ONLY = "COSTSCHED_AGENT_ONLY"
_AGENT_ENV = ("PYTHONPATH", "VIRTUAL_ENV", "AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_S3",
              "STORAGE_EMULATOR_HOST")


def instance_environment(envs: dict[str, str], python: str,
                         pass_env: Sequence[str] = ()) -> dict[str, str]:
    """The environment of a local instance's agent: PATH (with `python`'s directory first,
    so that the job's `python` is the one costsched runs on), the base variables above,
    the machine's variables `pass_env` allows (`costsched.config.passed_env`: never a
    secret), the job's own `envs` over them; and, for the agent alone, what it needs to
    import its code."""
    from costsched.config import passed_env

    bin_dir = str(Path(python).parent)
    env = {k: os.environ[k] for k in _BASE_ENV if k in os.environ}
    env.update(passed_env(tuple(pass_env), os.environ))
    env["PATH"] = os.pathsep.join([bin_dir, os.environ.get("PATH", os.defpath)])
    # Cloud credentials too: the agent may publish to a bucket; the job uses none.
    private = (*_AGENT_ENV, *sorted(clouds.credential_envs()))
    agent_only = [k for k in private if k in os.environ and k not in envs]
    env.update({k: os.environ[k] for k in agent_only})
    env.update(envs)
    if agent_only:
        env[ENV_AGENT_ONLY] = ",".join(agent_only)
    return env

