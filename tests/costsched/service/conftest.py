"""The loopback Azure's fixtures, for `check` on Azure; `world`, for the tests that run a real
job on the local launcher (tests/real_jobs.py)."""

from tests.launchers.conftest import azure, azure_tls  # noqa: F401 - fixtures by name
from tests.real_jobs import world  # noqa: F401 - a fixture by name
