"""The loopback Azure's fixtures, for `check` on Azure."""

from tests.launchers.conftest import azure, azure_tls  # noqa: F401 - fixtures by name
